"""The gold set's file side in the window: File ▸ Load Gold Set…, Edit ▸ Add to Gold Set…, and which
gold file goes with which document.

* After a document opens, the gold file used with it last time loads, else one beside it
  (`<stem>.gold.jsonl`); a gold file loaded by hand is remembered for the document.
* Add to Gold Set… turns the text selected in the document into the answer of a new question,
  appended to the open gold file when it is JSON Lines, else to a file the user names; the file
  is written atomically by the core and loaded again.

The panel that shows and scores the questions is `panels.gold_panel`; this module only moves
questions between files, the document and the retrieval state.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog, QInputDialog, QWidget

from inspector.core import api
from inspector.core.api import InputError, write_failure
from inspector.core.viewmodel import settings_schema as keys
from inspector.qt.actions.make_action import make_action
from inspector.qt.controllers.retrieval import RetrievalController
from inspector.qt.controllers.state import InspectorState
from inspector.qt.messages import MessageCenter
from inspector.qt.panels.gold_panel import GoldFiles, GoldPanel
from inspector.qt.settings import Settings

if TYPE_CHECKING:
    from inspector.core.api import GoldQuestion


class GoldActions(QObject):
    """Load Gold Set… and Add to Gold Set…, and the document -> gold file memory."""

    aboutToReplace = Signal(str)
    """A question is about to be written to a gold file and the gold set reloaded (the window's
    undo history keeps what is there now)."""
    fileWritten = Signal(str, object)
    """(path, its bytes before the write or None when it did not exist): a gold file was written."""

    def __init__(self, state: InspectorState, retrieval: RetrievalController, panel: GoldPanel, files: GoldFiles,
                 messages: MessageCenter, settings: Settings, *, selected_text: Callable[[], str],
                 parent: QWidget) -> None:
        """`selected_text()`: the text selected in the document (the answer of a new question).
        `parent` owns the actions (their shortcuts work window-wide) and the dialogs."""
        super().__init__(parent)
        self.state = state
        self.retrieval = retrieval
        self.panel = panel
        self.files = files
        self.messages = messages
        self.settings = settings
        self._selected_text = selected_text
        self._parent = parent
        self.last_outcomes: tuple[str, ...] = ()
        """What the last `add_questions` did with each question ("added", "updated", "unchanged")."""
        self.load_gold_action = make_action(parent, "Load &Gold Set…", panel.load_dialog, "Ctrl+Shift+L",
                                            "Load a gold set (JSONL, CSV or Chroma's CSV) for this document")
        self.add_question_action = make_action(parent, "&Add to Gold Set…", lambda: self.add_question(),
                                               "Ctrl+Shift+G",
                                               "Select the answer in the text, then add a question for it")

    # -- which gold file ----------------------------------------------------------------------------
    def remember(self, path: str) -> None:
        """A gold file was loaded: it goes with the current document from now on."""
        doc = self.state.document
        if doc is not None:
            self.files.remember(doc, path)

    def load_for_document(self) -> None:
        """After opening: the gold file used with this document last time, else one beside it."""
        doc = self.state.document
        found = self.files.for_document(doc) if doc is not None else None
        if found is None:
            if self.retrieval.gold is not None:
                self.retrieval.set_gold(None)
            return
        try:
            self.retrieval.load_gold(found)
        except (InputError, OSError) as exc:
            self.retrieval.set_gold(None)
            msg = exc.one_line() if isinstance(exc, InputError) else str(exc)
            self.messages.error(f"gold set not loaded: {msg}")

    # -- adding questions -------------------------------------------------------------------------
    def add_question(self, question: str | None = None, answer: str | None = None,
                     path: str | os.PathLike[str] | None = None) -> bool:
        """Add a question whose answer is the text selected in the document (Edit ▸ Add to Gold Set…).
        Missing pieces are asked for in dialogs."""
        doc = self.state.document
        if doc is None:
            self.messages.error("open a document first")
            return False
        if answer is None:
            answer = self._selected_text()
        answer = " ".join(answer.split())
        if not answer:
            self.messages.error("select the answer in the text first, then add a question for it")
            return False
        if question is None:
            shown = answer if len(answer) <= 80 else answer[:79] + "…"
            question, ok = QInputDialog.getText(self._parent, "Add to gold set",
                                                f"Question whose answer is “{shown}”:")
            if not ok:
                return False
        question = question.strip()
        if not question:
            self.messages.error("a question cannot be empty")
            return False
        return self.append_question(api.GoldQuestion(question, answers=(answer,), source=doc.doc_id), path)

    def append_question(self, q: GoldQuestion, path: str | os.PathLike[str] | None = None) -> bool:
        """Add to the open gold file (a JSONL one), else to a file the user names; reload it. A
        question already in the file is updated in its line, never written twice."""
        return self.add_questions((q,), path)

    def add_questions(self, qs: Sequence[GoldQuestion], path: str | os.PathLike[str] | None = None) -> bool:
        """Add questions in one atomic write (`gold.add_questions`: no duplicate lines) to the open
        gold file when it is JSON Lines, else to a file the user names; reload it once."""
        if not qs:
            return False
        gold = self.retrieval.gold
        if path is None and gold is not None and Path(gold.path).suffix.lower() in (".jsonl", ".ndjson"):
            path = gold.path
        if path is None:
            doc = self.state.document
            suggestion = Path(doc.path).with_name(Path(doc.path).stem + ".gold.jsonl") if doc is not None and doc.path \
                else Path(self.settings.get(keys.LAST_DIR) or ".") / "gold.jsonl"
            path, _ = QFileDialog.getSaveFileName(self._parent, "Add to gold set", str(suggestion),
                                                  "JSON Lines (*.jsonl)")
            if not path:
                return False
        first = qs[0].question
        self.aboutToReplace.emit(f"Add question “{first if len(first) <= 40 else first[:39] + '…'}”" if len(qs) == 1
                                 else f"Add {len(qs)} questions")
        try:
            before = Path(path).read_bytes() if Path(path).is_file() else None
        except OSError:
            before = None
        self.last_outcomes = ()
        try:
            outcomes = api.add_questions(path, qs)
        except (InputError, OSError) as exc:
            self.messages.error(write_failure(path, exc))
            return False
        self.last_outcomes = tuple(outcomes)
        self.fileWritten.emit(str(path), before)
        ok = self.panel.open_gold(path)
        if ok:
            name = Path(path).name
            if len(qs) == 1:
                q = qs[0].question
                self.messages.info({"added": f"Added “{q}” to {name}", "updated": f"Updated “{q}” in {name}",
                                    "unchanged": f"“{q}” is already in {name}"}[outcomes[0]])
            else:
                counts = {o: outcomes.count(o) for o in ("added", "updated", "unchanged")}
                self.messages.info(f"{name}: {counts['added']} added, {counts['updated']} updated, "
                                   f"{counts['unchanged']} already there")
        return ok
