"""Edit ▸ Undo and Redo for the actions that replace what the user had.

Opening a file replaces the open document and its gold set; loading a gold set replaces the
previous one; saving a question rewrites the gold file; importing chunks switches the strategy;
pinning replaces the previous baseline. Each of these can be taken back: the window's state before
it (documents, gold set, baseline, strategy and parameters) is kept as plain data, and undoing
re-applies it through the same setters the user's actions call. A gold file a question was
appended to is put back too, when nobody changed it since.

Steps are recorded two ways, so that no path is missed:

* explicitly: an action calls `begin(label)` before it replaces anything (opening, adding a
  question, importing chunks); if nothing changes (a refused file, a cancelled dialog) no step is
  kept;
* by observation: a new gold set, a new corpus or another baseline that arrives outside such an
  action (the gold panel's Load… and Pin buttons, a dropped gold file) records a step on its own.

Changes that follow from one action within the same turn of the event loop (a document opens,
then its gold set loads, the old baseline goes) form one step. After each step `recorded` carries
one sentence saying what was replaced and that Edit ▸ Undo brings it back.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal

from inspector.qt.controllers.retrieval import RetrievalController
from inspector.qt.controllers.state import InspectorState

if TYPE_CHECKING:
    from inspector.core.api import Document

#: Steps kept for undo (the oldest go first).
MAX_STEPS = 30
#: Characters of distinct documents the steps may hold alive in all (the latest step is always
#: kept, whatever its size: a 50 MB document can still be put back).
MAX_CHARS = 64_000_000
#: Gold files larger than this are not kept for undo (the in-memory gold set still is).
MAX_FILE_BYTES = 8_000_000


@dataclass(frozen=True, slots=True)
class WindowState:
    """What an undo puts back: plain data, re-applied through the state's setters."""

    documents: tuple[Document, ...]
    shown: int
    """Index of the shown document in `documents` (-1: none)."""
    problems: tuple[str, ...]
    strategy: str
    params: Mapping[str, Mapping[str, Any]]
    """Every strategy's parameters as the user set them (`InspectorState.all_params`)."""
    prefix: Mapping[str, bool]
    gold: Any
    """GoldSet | None."""
    baseline: Any
    """retrieval.Baseline | None."""

    @property
    def document(self) -> Document | None:
        return self.documents[self.shown] if 0 <= self.shown < len(self.documents) else None


@dataclass(frozen=True, slots=True)
class FileEdit:
    """A file an action wrote: its bytes before (None: it did not exist) and after."""

    path: str
    before: bytes | None
    after: bytes


@dataclass(slots=True)
class Step:
    """One undoable action: its label and the state on the other side of it."""

    label: str
    state: WindowState
    files: list[FileEdit] = field(default_factory=list)
    replaced: str = ""
    """What the action replaced, as told to the user ('' when it replaced nothing of note)."""


def _digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _read(path: str) -> bytes | None:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        return None


def _gold_key(gold: Any) -> tuple | None:
    if gold is None:
        return None
    return (str(gold.path), tuple((q.question, q.answers, q.source) for q in gold.questions))


def _same_path(path: Any, paths: frozenset[str]) -> bool:
    if not paths:
        return False
    p = os.path.realpath(str(path))
    return any(os.path.realpath(q) == p for q in paths)


def _names(docs: tuple[Document, ...]) -> str:
    if len(docs) == 1:
        return docs[0].name
    return f"{len(docs)} documents"


def _doc_keys(docs: tuple[Document, ...]) -> list[tuple]:
    return [(d.doc_id, d.path, d.sha256) for d in docs]


def differs(a: WindowState, b: WindowState) -> bool:
    """True when putting `a` back would change anything of `b`."""
    return ([id(d) for d in a.documents] != [id(d) for d in b.documents] or a.shown != b.shown
            or a.gold is not b.gold or a.baseline is not b.baseline or a.strategy != b.strategy
            or dict(a.params) != dict(b.params) or dict(a.prefix) != dict(b.prefix))


def describe_replaced(before: WindowState, after: WindowState, written: frozenset[str] = frozenset()) -> str:
    """What going from `before` to `after` lost, in words ('' when nothing the user had is gone):
    'handbook.md, its gold set (64 questions) and the pinned baseline'. `written`: files the step
    itself wrote; a gold set reloaded from one of them changed by that write (a question added or
    taken out, which the action says itself), it was not replaced."""
    parts: list[str] = []
    docs_changed = _doc_keys(before.documents) != _doc_keys(after.documents)
    if docs_changed and before.documents:
        parts.append(_names(before.documents))
    g0, g1 = before.gold, after.gold
    rewritten = g0 is not None and _same_path(g0.path, written) and (g1 is None or str(g1.path) == str(g0.path))
    if g0 is not None and _gold_key(g1) != _gold_key(g0) and not rewritten:
        same_file = g1 is not None and str(g1.path) == str(g0.path)
        kept = same_file and set(_gold_key(g0)[1]) <= set(_gold_key(g1)[1])  # type: ignore[index]
        if not kept:  # a question added to the same file replaces nothing
            n = len(g0.questions)
            what = f"gold set {Path(g0.path).name} ({n} question{'s' if n != 1 else ''})"
            parts.append(("its " if parts else "the ") + what)
    if before.baseline is not None and after.baseline is not before.baseline:
        cfg = getattr(before.baseline, "config", None)
        label = cfg.label() if cfg is not None and hasattr(cfg, "label") else ""
        parts.append("the pinned baseline" + (f" ({label})" if label else ""))
    if before.strategy != after.strategy and not docs_changed:
        parts.append(f"strategy {before.strategy}")
    if not parts:
        return ""
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


class History(QObject):
    """The undo and redo stacks of window states, fed by explicit and observed replacements."""

    changed = Signal()
    """The stacks changed (labels and availability of Undo/Redo)."""
    recorded = Signal(object)
    """A Step just completed (its `replaced` says what it replaced)."""
    applied = Signal(str, object)
    """("undo" | "redo", WindowState put back) after an undo or a redo."""

    def __init__(self, state: InspectorState, retrieval: RetrievalController, *, max_steps: int = MAX_STEPS,
                 max_chars: int = MAX_CHARS, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.retrieval = retrieval
        self.max_steps = max_steps
        self.max_chars = max_chars
        self.undo_steps: list[Step] = []
        self.redo_steps: list[Step] = []
        self._last = self.snapshot()
        """The state as of the end of the last step (or setting change): what an observed
        replacement replaced."""
        self._open: Step | None = None
        """The step in progress (this turn of the event loop)."""
        self._open_pushed = False
        self._applying = False
        self._close_timer = QTimer(self)
        self._close_timer.setSingleShot(True)
        self._close_timer.setInterval(0)
        self._close_timer.timeout.connect(self._close)
        state.documentsChanged.connect(lambda _docs: self._observed("documents"))
        retrieval.goldChanged.connect(lambda _gold: self._observed("gold"))
        retrieval.baselineChanged.connect(lambda _b: self._observed("baseline"))
        for sig in (state.strategyChanged, state.paramsChanged, state.withPrefixChanged, state.documentChanged):
            sig.connect(lambda *_a: self._touch())

    # -- snapshots -------------------------------------------------------------------------------
    def snapshot(self) -> WindowState:
        st, rt = self.state, self.retrieval
        docs = st.documents
        shown = next((i for i, d in enumerate(docs) if d is st.document), -1)
        if shown < 0 and st.document is not None:
            docs, shown = (st.document,), 0
        return WindowState(docs, shown, st.load_problems, st.strategy, st.all_params(), st.prefix_choices(),
                           rt.gold, rt.baseline)

    # -- recording -------------------------------------------------------------------------------
    def begin(self, label: str) -> None:
        """An action is about to replace state: what is there now is what Undo puts back. Kept
        only if something changes before the event loop turns (or a file is written)."""
        if self._applying:
            return
        self._close()
        self._open = Step(label, self.snapshot())
        self._open_pushed = False
        self._close_timer.start()

    def note_file_edit(self, path: str, before: bytes | None, after: bytes | None = None) -> None:
        """The action in progress wrote `path` (bytes `before` it; `after`: read now if None)."""
        if self._applying:
            return
        if after is None:
            after = _read(path) or b""
        if (before is not None and len(before) > MAX_FILE_BYTES) or len(after) > MAX_FILE_BYTES:
            return
        if self._open is None:
            self.begin(f"Write {Path(path).name}")
        assert self._open is not None
        self._open.files.append(FileEdit(str(path), before, after))
        self._push_open()

    def _observed(self, kind: str) -> None:
        """A replacing signal: part of the step in progress, or a step of its own."""
        if self._applying:
            return
        now = self.snapshot()
        base = self._open.state if self._open is not None else self._last
        if kind == "gold" and now.gold is base.gold:
            return  # the same gold set announced again (a document switch inside the corpus)
        if kind == "baseline" and now.baseline is base.baseline:
            return
        if kind == "documents" and [id(d) for d in now.documents] == [id(d) for d in base.documents]:
            return
        if self._open is None:
            self._open = Step(self._label_for(kind, base, now), base)
            self._open_pushed = False
            self._close_timer.start()
        self._push_open()

    def _label_for(self, kind: str, before: WindowState, now: WindowState) -> str:
        if kind == "documents":
            return f"Open {_names(now.documents)}" if now.documents else "Close documents"
        if kind == "gold":
            if now.gold is None:
                return "Unload gold set"
            return f"Load gold set {Path(now.gold.path).name}"
        return "Pin baseline" if now.baseline is not None else "Clear baseline"

    def _push_open(self) -> None:
        if self._open is None or self._open_pushed:
            return
        self._open_pushed = True
        s = self._open.state
        if not s.documents and s.gold is None and s.baseline is None and not self._open.files:
            return  # the first document of a session replaced nothing: no step to go back to
        self.undo_steps.append(self._open)
        self.redo_steps.clear()
        self._trim()
        self.changed.emit()

    def _touch(self) -> None:
        """A setting changed outside any step: the state to put back moves along with it."""
        if not self._applying and self._open is None:
            self._last = self.snapshot()

    def _close(self) -> None:
        """End the step in progress: remember the state reached, and say what was replaced."""
        self._close_timer.stop()
        step, pushed = self._open, self._open_pushed
        self._open, self._open_pushed = None, False
        self._last = self.snapshot()
        if step is not None and not pushed and differs(step.state, self._last):
            # Nothing observed replaced anything, but settings moved (imported chunks switch the
            # strategy): still a step.
            self._open = step
            self._push_open()
            self._open, pushed = None, True
        if step is not None and pushed:
            step.replaced = describe_replaced(step.state, self._last, frozenset(f.path for f in step.files))
            self.recorded.emit(step)

    def flush(self) -> None:
        """Close the step in progress now (tests; before reading the stacks synchronously)."""
        self._close()

    def _trim(self) -> None:
        while len(self.undo_steps) > self.max_steps:
            self.undo_steps.pop(0)
        while len(self.undo_steps) > 1 and self._chars_held() > self.max_chars:
            self.undo_steps.pop(0)

    def _chars_held(self) -> int:
        seen: dict[int, int] = {}
        for step in self.undo_steps + self.redo_steps:
            for d in step.state.documents:
                seen[id(d)] = len(d.text)
        return sum(seen.values())

    # -- undo and redo ----------------------------------------------------------------------------
    @property
    def can_undo(self) -> bool:
        self._close_if_idle()
        return bool(self.undo_steps)

    @property
    def can_redo(self) -> bool:
        return bool(self.redo_steps)

    def undo_label(self) -> str:
        return self.undo_steps[-1].label if self.undo_steps else ""

    def redo_label(self) -> str:
        return self.redo_steps[-1].label if self.redo_steps else ""

    def _close_if_idle(self) -> None:
        if self._open is not None and not self._close_timer.isActive():
            self._close()

    def undo(self) -> str:
        """Put back the state before the last step; returns what the user is told ('' if there
        was nothing to undo)."""
        self._close()
        if not self.undo_steps:
            return ""
        step = self.undo_steps.pop()
        current = self.snapshot()
        notes = self._apply(step.state)
        notes += self._revert_files(step.files)
        self.redo_steps.append(Step(step.label, current, step.files, step.replaced))
        self.changed.emit()
        self.applied.emit("undo", step.state)
        return " ".join([f"Undid {step.label}."] + notes)

    def redo(self) -> str:
        self._close()
        if not self.redo_steps:
            return ""
        step = self.redo_steps.pop()
        current = self.snapshot()
        notes = self._apply(step.state)
        notes += self._reapply_files(step.files)
        self.undo_steps.append(Step(step.label, current, step.files, step.replaced))
        self._trim()
        self.changed.emit()
        self.applied.emit("redo", step.state)
        return " ".join([f"Redid {step.label}."] + notes)

    def _apply(self, s: WindowState) -> list[str]:
        """Re-apply a state through the setters (what the user's own actions call)."""
        notes: list[str] = []
        st, rt = self.state, self.retrieval
        self._applying = True
        try:
            try:
                st.restore_choices(s.strategy, s.params, s.prefix)
            except ValueError:
                notes.append(f"Strategy {s.strategy} is no longer registered; {st.strategy} stays.")
            if [id(d) for d in st.documents] != [id(d) for d in s.documents]:
                st.set_documents(s.documents, current=max(0, s.shown), problems=s.problems)
            elif s.document is not st.document:
                st.set_document(s.document)
            if rt.gold is not s.gold:
                rt.set_gold(s.gold)
            rt.restore_baseline(s.baseline)
        finally:
            self._applying = False
        self._last = self.snapshot()
        return notes

    def _revert_files(self, files: list[FileEdit]) -> list[str]:
        return self._move_files(files, forward=False)

    def _reapply_files(self, files: list[FileEdit]) -> list[str]:
        return self._move_files(files, forward=True)

    @staticmethod
    def _move_files(files: list[FileEdit], *, forward: bool) -> list[str]:
        """Write each file back to the other side of the step, if it is still as the step left it
        (a file changed since is left alone, and the user is told)."""
        from inspector.core.api import atomic_write_bytes

        notes: list[str] = []
        for f in reversed(files) if not forward else files:
            expect, target = (f.before, f.after) if forward else (f.after, f.before)
            name = Path(f.path).name
            if _digest(_read(f.path)) != _digest(expect):
                notes.append(f"{name} changed on disk since, so it was left as it is.")
                continue
            try:
                if target is None:
                    os.remove(f.path)  # the step created it, and it is exactly as the step wrote it
                    notes.append(f"{name} was removed (the step had created it).")
                else:
                    atomic_write_bytes(f.path, target)
                    notes.append(f"{name} was put back.")
            except OSError as exc:
                notes.append(f"{name} could not be put back: {exc.strerror or exc}.")
        return notes


__all__ = ["History", "WindowState", "Step", "FileEdit", "describe_replaced", "differs", "MAX_STEPS", "MAX_CHARS"]
