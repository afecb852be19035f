"""File ▸ Open Vector Store…: the user's own chunks, read from their Chroma, LanceDB or Qdrant
collection, drawn on their documents and scored on their own vectors.

Reading runs on a worker thread (`Workbench.open_store`: read only, every record placed on the
open documents by its source metadata and text). The store's chunks become the strategy
"store:SPEC", chosen in the strategy box ("store: langchain (chroma, chroma_db)") and drawn like
any strategy's; the gold set is scored against the store's vectors, the question embedded by the
current model (`Staging`'s store branch). Records that could not be placed are said in the status
bar, counted by reason, their list behind Details…; a store whose vectors are not the model's
size is an error that says so, as is a missing client package (the `stores` extra).
Recent stores (spec and source key) are remembered in the settings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMenu

from inspector.core.viewmodel.settings_schema import MAX_RECENT, Setting
from inspector.qt.actions.make_action import make_action
from inspector.qt.messages import MessageCenter
from inspector.qt.runner import JobRunner
from inspector.qt.settings import Settings

if TYPE_CHECKING:
    from inspector.qt.dialogs.store_dialog import StoreDialog

RECENT_STORES = Setting("stores/recent", dict, {},
                        f"Vector stores opened, newest first (at most {MAX_RECENT}): "
                        '{"recent": [[spec, source_key], ...]}.')
#: Unplaced records listed one a line under Details… (the rest are counted).
DETAILS_LINES = 500


def unplaced_details(source: Any) -> str:
    """The records not placed, one a line: id, reason, what was looked for, the text's start."""
    placement = source.placement
    lines = [f"{source.collection.label}: {placement.summary()}", ""]
    for u in placement.unplaced[:DETAILS_LINES]:
        lines.append(f"{u.id} · {u.reason}: {u.detail} · “{u.preview}”")
    more = len(placement.unplaced) - DETAILS_LINES
    if more > 0:
        lines.append(f"… and {more:,} more")
    if placement.warnings:
        lines += ["", *placement.warnings]
    return "\n".join(lines)


class StoreActions(QObject):
    """The Open Vector Store action, its recent menu and the reader on a worker thread."""

    opened = Signal(object)
    """The StoreSource read and placed (its strategy is registered and shown)."""
    failed = Signal(str)

    def __init__(self, window: Any, messages: MessageCenter, settings: Settings, *,
                 strategies_registered: Callable[[tuple[str, ...]], None], show_strategy: Callable[[str], None],
                 synchronous: bool = False) -> None:
        super().__init__(window)
        self.window = window
        self.retrieval = window.retrieval
        self.state = window.state
        self.messages = messages
        self.settings = settings
        self._registered = strategies_registered
        self._show = show_strategy
        self.synchronous = synchronous
        self.source: Any = None
        """The store opened last (a `StoreSource`), None before."""
        self.dialog: Any = None
        self.runner = JobRunner(self, synchronous=synchronous, name="store")
        self.runner.stageReady.connect(lambda _rid, src: self._on_opened(src))
        self.runner.errored.connect(lambda _rid, msg: self._on_failed(msg))
        self.open_action = make_action(window, "Open &Vector Store…", self.open_dialog, None,
                                       "Read the chunks and vectors of a Chroma, LanceDB or Qdrant collection "
                                       "and score them on their own vectors")
        self.recent_menu = QMenu("Recent Vector S&tores", window)
        self._fill_recent()

    def add_to(self, menu: QMenu, before: Any = None) -> None:
        if before is not None:
            menu.insertAction(before, self.open_action)
            menu.insertMenu(before, self.recent_menu)
        else:
            menu.addAction(self.open_action)
            menu.addMenu(self.recent_menu)

    # -- recent stores ---------------------------------------------------------------------------
    def recent(self) -> list[tuple[str, str]]:
        raw = self.settings.get(RECENT_STORES).get("recent", [])
        out = []
        for item in raw if isinstance(raw, list) else []:
            if isinstance(item, (list, tuple)) and len(item) == 2 and all(isinstance(x, str) for x in item):
                out.append((item[0], item[1]))
        return out

    def _remember(self, spec: str, source_key: str) -> None:
        items = [(spec, source_key)] + [r for r in self.recent() if r != (spec, source_key)]
        self.settings.set(RECENT_STORES, {"recent": [list(r) for r in items[:MAX_RECENT]]})
        self._fill_recent()

    def _fill_recent(self) -> None:
        from inspector.qt.dialogs.store_dialog import recent_label

        self.recent_menu.clear()
        items = self.recent()
        for spec, key in items:
            a = self.recent_menu.addAction(recent_label(spec, key))
            a.triggered.connect(lambda _c=False, s=spec, k=key: self.open_store(s, k))
        self.recent_menu.setEnabled(bool(items))

    # -- the dialog ------------------------------------------------------------------------------
    def make_dialog(self) -> StoreDialog:
        from inspector.qt.dialogs.store_dialog import StoreDialog

        emb = self.retrieval.embedder or self.retrieval.model
        name = getattr(emb, "model_id", None) or "the embedding model"
        dim = getattr(emb, "dim", None)
        note = (f"Read only. Questions are embedded by {name}" + (f" ({dim} dimensions)" if dim else "")
                + ": it must be the model that filled the store.")
        dialog = StoreDialog(self.window, recent=self.recent(), embedder_note=note, synchronous=self.synchronous)
        dialog.accepted.connect(lambda: self.open_store(dialog.spec(), dialog.source_key_text()))
        self.dialog = dialog
        return dialog

    def open_dialog(self) -> None:
        dialog = self.make_dialog()
        dialog.open()  # window-modal, no nested event loop

    # -- reading -----------------------------------------------------------------------------------
    def open_store(self, spec: str, source_key: str = "") -> int:
        """Read `spec` (with `source_key` naming the source metadata) on the worker; 0 when
        nothing is open to place the chunks on."""
        from inspector.core.api import InputError, parse_store_spec

        if self.state.document is None:
            self._on_failed("open a document (or folder) first: a store's chunks are placed on the open documents")
            return 0
        try:
            parse_store_spec(spec)
        except InputError as exc:
            self._on_failed(exc.one_line())
            return 0
        workbench = self.retrieval.workbench
        key = source_key or None

        def job(cancelled: Callable[[], bool], progress: Any) -> Iterator[Any]:
            progress(0, 0, f"Reading {spec}")
            yield workbench.open_store(spec, source_key=key)

        self._pending = (spec, source_key)
        self.messages.info(f"Reading {spec} …", tag="store")
        return self.runner.submit(job)

    def _on_opened(self, source: Any) -> None:
        self.source = source
        spec, key = getattr(self, "_pending", (source.collection.spec, ""))
        self._remember(spec, key)
        self._registered((source.strategy,))
        # The store is opened to measure its own vectors: BM25 would never read them.
        switched = self.retrieval.retriever == "bm25" and source.collection.vectors is not None
        if switched:
            self.retrieval.set_retriever("dense")
        self._show(source.strategy)
        self._report(source, "; dense retrieval on its own vectors" if switched else "")
        self.opened.emit(source)

    def _report(self, source: Any, said: str = "") -> None:
        placement = source.placement
        line = f"{source.collection.label}: {placement.summary()}{said}"
        problem = self.dimension_problem(source)
        if problem:
            self.messages.error(f"{line}. {problem}", unplaced_details(source), popup=True, tag="store")
        elif placement.unplaced or placement.warnings:
            self.messages.warning(line + (" (Details… lists them)" if placement.unplaced else ""),
                                  unplaced_details(source), tag="store")
        else:
            note = source.note
            self.messages.info(line + (f". {note}" if note else ""), tag="store")

    def dimension_problem(self, source: Any) -> str:
        """The error when the loaded model's vectors are not the store's size ("" when they are,
        or no model is loaded yet)."""
        emb = self.retrieval.embedder
        if emb is None:
            return ""
        from inspector.core.api import InputError, check_store_dimensions

        try:
            check_store_dimensions(source.collection, emb)
        except InputError as exc:
            return exc.problem.replace("with --embedder", "in Settings")
        return ""

    def _on_failed(self, message: str) -> None:
        self.messages.error(message, popup=True, tag="store")
        self.failed.emit(message)

    def shutdown(self) -> None:
        self.runner.shutdown(5_000)


__all__ = ["StoreActions", "RECENT_STORES", "unplaced_details"]
