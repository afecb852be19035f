"""The window's one state object: plain data in, typed signals out.

Widgets receive the state in their constructor, call its setters, and repaint from its signals
(napari's `QtDims(dims)`, glue's viewer `State`). Setters emit only on a real change, so two
widgets showing the same value (table row and text selection, say) cannot ping-pong.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from inspector.qt.controllers.chunk_jobs import ChunkResult

if TYPE_CHECKING:
    from inspector.core.api import Document, EmbedView


class InspectorState(QObject):
    """Current documents, strategy, parameters, chunks and selection."""

    documentsChanged = Signal(object)
    """tuple[Document, ...]: the opened corpus (one file, or the files of a folder). This is the
    corpus signal: `documents` holds every document opened together (what retrieval searches
    across), `load_problems` the files that could not be opened with them; both are set before
    it is emitted, and `documentChanged` (the shown one) follows."""
    documentChanged = Signal(object)
    """Document | None: the document shown."""
    strategyChanged = Signal(str)
    paramsChanged = Signal(object)
    """dict: parameters of the current strategy, as the controls hold them."""
    withPrefixChanged = Signal(bool)
    embedViewChanged = Signal(str)
    """The embedding view (raw or clean, issue 29): what the model reads of each chunk changes."""
    chunksChanged = Signal(object)
    """ChunkResult | None: chunks of the current document under the current strategy."""
    selectionChanged = Signal(int)
    """Id of the selected chunk, -1 for none."""
    busyChanged = Signal(bool)
    draggingChanged = Signal(bool)
    """True while the user holds a parameter slider down (re-chunking is throttled, not debounced,
    and background work that could wait does)."""
    errorChanged = Signal(str)
    """One-line problem to show the user ('' once resolved)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.documents: tuple[Document, ...] = ()
        """The corpus: every document opened together, in the order they were found."""
        self.load_problems: tuple[str, ...] = ()
        """One line per file of the corpus that could not be opened (as the CLI prints it)."""
        self.document: Document | None = None
        self.strategy: str = "markdown"
        self._params: dict[str, dict[str, Any]] = {}
        self._prefix: dict[str, bool] = {}
        self.embed_view: EmbedView = "raw"
        """What is embedded of each chunk's span: "raw" or "clean" (`with_view`; Settings ▸ Embedding View)."""
        self.result: ChunkResult | None = None
        self.selection: int = -1
        self.busy: bool = False
        self.dragging: bool = False
        self.error: str = ""

    # -- documents -------------------------------------------------------------------------
    def set_documents(self, documents: tuple[Document, ...] | list[Document], current: int = 0,
                      problems: tuple[str, ...] | list[str] = ()) -> None:
        self.documents = tuple(documents)
        self.load_problems = tuple(problems)
        self.documentsChanged.emit(self.documents)
        self.set_document(self.documents[current] if self.documents else None)

    def set_document(self, document: Document | None) -> None:
        if document is self.document:
            return
        # The old chunks go first, so that a result for the new document (which a synchronous
        # runner delivers from inside documentChanged) is never followed by a stale "no chunks".
        self.document = document
        self.result = None
        if self.selection != -1:
            self.selection = -1
            self.selectionChanged.emit(-1)
        self.chunksChanged.emit(None)
        self.documentChanged.emit(document)

    # -- strategy and parameters -----------------------------------------------------------
    @property
    def params(self) -> dict[str, Any]:
        """Parameters of the current strategy (defaults for any not set)."""
        return self.params_for(self.strategy)

    def params_for(self, strategy: str) -> dict[str, Any]:
        from inspector.core.api import get_strategy

        merged = get_strategy(strategy).defaults()
        merged.update(self._params.get(strategy, {}))
        return merged

    def all_params(self) -> dict[str, dict[str, Any]]:
        """Parameters remembered per strategy (for the settings store)."""
        return {k: dict(v) for k, v in self._params.items()}

    def restore_params(self, by_strategy: Mapping[str, Mapping[str, Any]]) -> None:
        """Remembered parameters (from settings); unknown strategies and names are ignored."""
        from inspector.core.api import strategies

        known = strategies()
        for name, params in by_strategy.items():
            if name in known and isinstance(params, Mapping):
                names = {p.name for p in known[name].params}
                clean = {k: v for k, v in params.items() if k in names}
                try:
                    known[name].validate(clean)
                except ValueError:
                    continue
                self._params[name] = clean

    def set_strategy(self, name: str) -> None:
        from inspector.core.api import get_strategy

        get_strategy(name)  # ValueError for unknown names
        if name == self.strategy:
            return
        prefix = self.with_prefix
        self.strategy = name
        self.strategyChanged.emit(name)
        self.paramsChanged.emit(self.params)
        if self.with_prefix != prefix:
            self.withPrefixChanged.emit(self.with_prefix)

    def restore_choices(self, strategy: str, params: Mapping[str, Mapping[str, Any]],
                        prefix: Mapping[str, bool]) -> None:
        """Put back every remembered setting at once (Edit ▸ Undo): the strategy, each strategy's
        parameters and prefix choices, as `all_params` and `prefix_choices` gave them. Emits what
        changed for the current strategy, once. ValueError (nothing changed) when `strategy` is
        no longer registered."""
        from inspector.core.api import get_strategy

        get_strategy(strategy)
        before = (self.strategy, self.params, self.with_prefix)
        self._params = {k: dict(v) for k, v in params.items()}
        self._prefix = dict(prefix)
        self.strategy = strategy
        if strategy != before[0]:
            self.strategyChanged.emit(strategy)
        if strategy != before[0] or self.params != before[1]:
            self.paramsChanged.emit(self.params)
        if self.with_prefix != before[2]:
            self.withPrefixChanged.emit(self.with_prefix)

    def set_params(self, params: Mapping[str, Any]) -> None:
        """New parameters for the current strategy (all or some of them)."""
        merged = {**self.params, **params}
        if merged == self.params:
            return
        self._params[self.strategy] = merged
        self.paramsChanged.emit(dict(merged))

    @property
    def with_prefix(self) -> bool:
        """Embed the context prefix with the current strategy: the user's choice for it, else the
        strategy's own default (off for the naive strategies, which stand for raw-text pipelines)."""
        if self.strategy in self._prefix:
            return self._prefix[self.strategy]
        from inspector.core.api import get_strategy

        return bool(getattr(get_strategy(self.strategy), "prefix_default", True))

    def prefix_choices(self) -> dict[str, bool]:
        """The user's prefix choices per strategy (for the settings store)."""
        return dict(self._prefix)

    def restore_prefix_choices(self, choices: Mapping[str, Any]) -> None:
        self._prefix.update({k: bool(v) for k, v in choices.items() if isinstance(k, str)})

    def set_with_prefix(self, on: bool) -> None:
        if on != self.with_prefix:
            self._prefix[self.strategy] = bool(on)
            self.withPrefixChanged.emit(bool(on))

    def set_embed_view(self, view: EmbedView) -> None:
        if view != self.embed_view:
            self.embed_view = view
            self.embedViewChanged.emit(view)

    # -- results ---------------------------------------------------------------------------
    def set_result(self, result: ChunkResult | None) -> None:
        """New chunks. The selection follows the text: after a parameter change the chunk that now
        covers the old selection's middle is selected."""
        previous = self.result
        old = self.selected_chunk()
        self.result = result
        new_sel = -1
        if old is not None and result is not None:
            if previous is not None and previous.request_id == result.request_id:
                new_sel = old.id  # a later stage of the same request: same chunks
            else:
                ids = result.index.ids_at((old.start + old.end) // 2) or result.index.ids_at(old.start)
                new_sel = ids[0] if ids else -1
        self.chunksChanged.emit(result)
        if new_sel != self.selection:
            self.selection = new_sel
            self.selectionChanged.emit(new_sel)

    def select(self, chunk_id: int) -> None:
        if chunk_id != -1 and (self.result is None or self.result.chunk(chunk_id) is None):
            chunk_id = -1
        if chunk_id != self.selection:
            self.selection = chunk_id
            self.selectionChanged.emit(chunk_id)

    def selected_chunk(self):
        return self.result.chunk(self.selection) if self.result is not None and self.selection != -1 else None

    def set_busy(self, busy: bool) -> None:
        if busy != self.busy:
            self.busy = busy
            self.busyChanged.emit(busy)

    def set_dragging(self, on: bool) -> None:
        if bool(on) != self.dragging:
            self.dragging = bool(on)
            self.draggingChanged.emit(self.dragging)

    def set_error(self, message: str) -> None:
        if message != self.error:
            self.error = message
            self.errorChanged.emit(message)
