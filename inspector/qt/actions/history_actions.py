"""Edit ▸ Undo and Edit ▸ Redo in the window, and the sentence that says what an action replaced.

The history itself (`controllers.history.History`) keeps window states as plain data; this group
makes its two actions, feeds it the explicit "about to replace" signals of the other groups of
actions (opening, adding a question, importing chunks) and the files they wrote, and tells the
user after each replacing step what went and how to get it back.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QMenu, QWidget

from inspector.qt.actions.make_action import make_action
from inspector.qt.controllers.history import History, Step, WindowState
from inspector.qt.controllers.retrieval import RetrievalController
from inspector.qt.controllers.state import InspectorState
from inspector.qt.messages import ERROR, INFO, MessageCenter

#: Status-bar tag of the messages posted here.
HISTORY_TAG = "history"


def undo_hint() -> str:
    keys = QKeySequence(QKeySequence.StandardKey.Undo).toString(QKeySequence.SequenceFormat.NativeText)
    return f"Edit ▸ Undo{f' ({keys})' if keys else ''} brings {{}} back"


class HistoryActions(QObject):
    """Undo/Redo actions over a `History`, and the messages after each replacing step."""

    def __init__(self, state: InspectorState, retrieval: RetrievalController, messages: MessageCenter, *,
                 gold_files: Any = None, parent: QWidget) -> None:
        """`gold_files` (panels.gold_panel.GoldFiles): after an undo the restored gold file is what
        the document opens with next time, as if the user had loaded it."""
        super().__init__(parent)
        self.state = state
        self.messages = messages
        self.gold_files = gold_files
        self.history = History(state, retrieval, parent=self)
        self.undo_action = make_action(parent, "&Undo", self.undo, QKeySequence.StandardKey.Undo,
                                       "Put back what the last open, gold set, question, import or pin replaced")
        self.redo_action = make_action(parent, "&Redo", self.redo, QKeySequence.StandardKey.Redo,
                                       "Do again what Undo took back")
        self.history.changed.connect(self._update_actions)
        self.history.recorded.connect(self._on_recorded)
        self.history.applied.connect(self._on_applied)
        self._update_actions()

    def add_to(self, menu: QMenu) -> None:
        menu.addAction(self.undo_action)
        menu.addAction(self.redo_action)

    def connect_sources(self, *groups: Any) -> None:
        """Listen to each group's `aboutToReplace(label)` and, where it has one, `fileWritten`."""
        for g in groups:
            sig = getattr(g, "aboutToReplace", None)
            if sig is not None:
                sig.connect(self.history.begin)
            written = getattr(g, "fileWritten", None)
            if written is not None:
                written.connect(lambda path, before: self.history.note_file_edit(path, before))

    # -- actions ---------------------------------------------------------------------------------
    def undo(self) -> str:
        text = self.history.undo()
        if text:
            self.messages.info(text, tag=HISTORY_TAG)
        return text

    def redo(self) -> str:
        text = self.history.redo()
        if text:
            self.messages.info(text, tag=HISTORY_TAG)
        return text

    def _update_actions(self) -> None:
        u, r = self.history.undo_label(), self.history.redo_label()
        self.undo_action.setText(f"&Undo {u}" if u else "&Undo")
        self.undo_action.setEnabled(bool(u))
        self.redo_action.setText(f"&Redo {r}" if r else "&Redo")
        self.redo_action.setEnabled(bool(r))

    # -- telling the user -------------------------------------------------------------------------
    def _on_recorded(self, step: Step) -> None:
        """After a step: say what it replaced, next to whatever the action itself said."""
        if not step.replaced:
            return
        sentence = f"Replaced {step.replaced}: " + undo_hint().format("it" if " and " not in step.replaced
                                                                      and ", " not in step.replaced else "them")
        m = self.messages
        if m.kind == INFO:
            m.info(f"{m.text} · {sentence}" if m.text else sentence, m.details, tag=HISTORY_TAG)
        else:
            # A warning or problem about the new documents (a guessed encoding, a skipped file)
            # stays the line; the replacement goes behind Details… and in the tooltip.
            post = m.error if m.kind == ERROR else m.warning
            post(m.text, "\n".join(x for x in (m.details or m.text, sentence) if x), tag=m.tag)

    def _on_applied(self, _direction: str, s: WindowState) -> None:
        doc = s.document
        if self.gold_files is not None and doc is not None and s.gold is not None:
            self.gold_files.remember(doc, s.gold.path)


__all__ = ["HistoryActions", "HISTORY_TAG"]
