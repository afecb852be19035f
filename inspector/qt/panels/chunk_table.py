"""The chunk table: a model over the immutable tuple of chunks, a filter proxy, and the view.

The model is reset in one step per result (no per-row inserts). Sorting is done by the model on
precomputed keys (one argsort, not a Python comparison per pair, which would take seconds on
20,000 rows), so the proxy only filters ("only flagged", a flag, or text in the heading path).

Nothing here walks every row in Python when a result arrives: the chunk id -> row map is a numpy
inverse permutation, and the proxy maps rows with two integer arrays (none at all while no filter
is set), where Qt's QSortFilterProxyModel would call a Python `filterAcceptsRow` for each of the
50,000 rows of a 20 MB document at every re-chunk (a quarter of a second on the GUI thread).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from PySide6.QtCore import (
    QAbstractProxyModel,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QStyledItemDelegate,
    QVBoxLayout,
    QWidget,
)

from inspector.core import api
from inspector.qt.controllers.state import InspectorState
from inspector.qt.panels.table_model import TableModel, row_table
from inspector.qt.theme import FLAG_ORDER, Theme

if TYPE_CHECKING:
    import numpy as np

    from inspector.core.api import Chunk
else:
    from inspector.core.api import lazy_numpy as np

COLUMNS = ("#", "Start–End", "Tokens", "Word pieces", "Chars", "Heading path", "Flags", "Page")
COL_ID, COL_SPAN, COL_TOKENS, COL_PIECES, COL_CHARS, COL_PATH, COL_FLAGS, COL_PAGE = range(len(COLUMNS))
SORT_ROLE = Qt.ItemDataRole.UserRole
#: The index arrays of a model that has had no chunks yet (see `ChunkTableModel.__init__`).
_NO_ROWS = cast("np.ndarray", ())
CHUNK_ID_ROLE = Qt.ItemDataRole.UserRole + 1

_HEADER_TIPS = (
    "Chunk id (position in the strategy's output)",
    "Code-point offsets of the span in the document",
    "Exact cl100k tokens of the span text",
    "Word pieces the embedder sees (prefix + text, with [CLS]/[SEP]) / its limit",
    "Characters in the span",
    "Headings enclosing the chunk",
    "Problems that hurt retrieval",
    "Page of the source PDF where the chunk starts (–end page, if it runs on)",
)


class ChunkTableModel(TableModel):
    """Rows are chunks (in the model's sort order); columns as in COLUMNS."""

    columns = COLUMNS
    header_tips = _HEADER_TIPS

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._chunks: tuple[Chunk, ...] = ()
        # Int64 arrays once chunks are set. Until then empty tuples stand in (no numpy before the
        # window's first paint, issue 31): with no rows nothing indexes them but the filter's
        # `mask[_order]`, where an empty tuple selects the whole (empty) mask as well.
        self._order: np.ndarray = _NO_ROWS  # row -> index into _chunks
        self._row_of_index: np.ndarray = _NO_ROWS  # index into _chunks -> row
        self._id_of_index: np.ndarray = _NO_ROWS  # index into _chunks -> chunk id
        self._ids_are_positions = True  # chunk id == index into _chunks (every built-in strategy)
        self._index_of_id: dict[int, int] | None = None  # otherwise, made on first use
        self._limit: int = 256
        self._theme: Theme | None = None
        self._sort: tuple[int, Qt.SortOrder] = (-1, Qt.SortOrder.AscendingOrder)

    # -- data ------------------------------------------------------------------------------
    def set_chunks(self, chunks: Sequence[Chunk], limit: int = 256, ids: np.ndarray | None = None) -> None:
        """`ids`: each chunk's id in order when the caller has them (a worker made them)."""
        self.beginResetModel()
        self._chunks = tuple(chunks)
        self._limit = limit
        self._index_ids(ids)
        self._order = self._sorted_order(*self._sort)
        self._reindex()
        self.endResetModel()

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        self.all_changed()

    @property
    def chunks(self) -> tuple[Chunk, ...]:
        return self._chunks

    def chunk_at(self, row: int) -> Chunk:
        return self._chunks[int(self._order[row])]

    def row_of(self, chunk_id: int) -> int:
        """The row showing chunk `chunk_id` (-1 when there is none)."""
        n = len(self._chunks)
        if self._ids_are_positions:
            k = chunk_id if 0 <= chunk_id < n else -1
        else:
            if self._index_of_id is None:
                self._index_of_id = {int(c): k for k, c in enumerate(self._id_of_index.tolist())}
            k = self._index_of_id.get(chunk_id, -1)
        return int(self._row_of_index[k]) if k >= 0 else -1

    def index_rows(self) -> np.ndarray:
        """Row of each chunk, by its index in `chunks` (the inverse of the sort order)."""
        return self._row_of_index

    def _reindex(self) -> None:
        n = len(self._chunks)
        self._row_of_index = np.empty(n, dtype=np.int64)
        self._row_of_index[self._order] = np.arange(n, dtype=np.int64)

    def _index_ids(self, ids: np.ndarray | None = None) -> None:
        n = len(self._chunks)
        if ids is None or len(ids) != n:
            ids = np.fromiter((c.id for c in self._chunks), dtype=np.int64, count=n)
        self._id_of_index = ids
        self._ids_are_positions = bool(np.array_equal(self._id_of_index, np.arange(n, dtype=np.int64)))
        self._index_of_id = None

    # -- Qt model API ------------------------------------------------------------------------
    def row_count(self) -> int:
        return len(self._chunks)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # Views ask for a dozen roles per cell on every repaint; most are answered here at once.
        if role not in _ROLES or not self.is_row(index):
            return None
        c = self.chunk_at(index.row())
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(c, col)
        elif role == SORT_ROLE:
            return _sort_key(c, col)
        elif role == CHUNK_ID_ROLE:
            return c.id
        elif role == Qt.ItemDataRole.TextAlignmentRole:
            if col in (COL_ID, COL_SPAN, COL_TOKENS, COL_PIECES, COL_CHARS, COL_PAGE):
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        elif role == Qt.ItemDataRole.ForegroundRole and self._theme is not None:
            if col == COL_PIECES and c.embed_dropped:
                return QBrush(self._theme.flag("truncated_by_embedder"))
            if col == COL_FLAGS and c.flags:
                first = next((f for f in FLAG_ORDER if f in c.flags), None)
                return QBrush(self._theme.flag(first)) if first else None
        elif role == Qt.ItemDataRole.ToolTipRole:
            if col == COL_PATH:
                return _plain_tip(c.prefix) if c.prefix else None
            if col == COL_PIECES and c.embed_dropped:
                return f"{c.embed_dropped} word pieces beyond the embedder's {self._limit} are dropped"
        return None

    def _display(self, c: Chunk, col: int) -> str | int | None:
        if col == COL_ID:
            return f"{c.id}" if c.role == "chunk" else f"{c.id} {c.role}"
        if col == COL_SPAN:
            return f"{c.start:,}–{c.end:,}"
        if col == COL_TOKENS:
            return c.token_count
        if col == COL_PIECES:
            return "" if c.embed_tokens is None else f"{c.embed_tokens}/{self._limit}"
        if col == COL_CHARS:
            return c.end - c.start
        if col == COL_PATH:
            return " › ".join(c.heading_path)
        if col == COL_FLAGS:
            return ", ".join(_flag_label(f) for f in FLAG_ORDER if f in c.flags)
        if col == COL_PAGE:
            return page_label(c)
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort by precomputed keys (stable), keeping persistent indexes (the selection) valid."""
        self._sort = (column, order)
        if not self._chunks:
            return
        self.layoutAboutToBeChanged.emit()
        old_order = self._order
        persistent = self.persistentIndexList()
        self._order = self._sorted_order(column, order)
        self._reindex()
        new = [self.index(int(self._row_of_index[old_order[i.row()]]), i.column()) for i in persistent]
        self.changePersistentIndexList(persistent, new)
        self.layoutChanged.emit()

    def _sorted_order(self, column: int, order: Qt.SortOrder) -> np.ndarray:
        n = len(self._chunks)
        if column < 0 or n == 0:
            return np.arange(n, dtype=np.int64)
        keys = [_sort_key(c, column) for c in self._chunks]
        if column in (COL_PATH, COL_FLAGS):
            idx = sorted(range(n), key=lambda k: keys[k])
            out = np.asarray(idx, dtype=np.int64)
        else:
            out = np.argsort(np.asarray(keys, dtype=np.float64), kind="stable")
        if order == Qt.SortOrder.DescendingOrder:
            # Reverse while keeping equal keys in their original order.
            if column in (COL_PATH, COL_FLAGS):
                out = np.asarray(sorted(range(n), key=lambda k: keys[k], reverse=True), dtype=np.int64)
            else:
                out = np.argsort(-np.asarray(keys, dtype=np.float64), kind="stable")
        return out


_ROLES = frozenset({Qt.ItemDataRole.DisplayRole, SORT_ROLE, CHUNK_ID_ROLE, Qt.ItemDataRole.TextAlignmentRole,
                    Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.ToolTipRole})


def page_label(c: Chunk) -> str:
    """"3", or "3–4" for a chunk that runs onto the next page; "" without page metadata."""
    page = c.meta.get("page") if c.meta else None
    if page is None:
        return ""
    end = c.meta.get("page_end", page)
    return f"{page}–{end}" if end != page else f"{page}"


def _plain_tip(text: str) -> str:
    """A tooltip showing `text` literally: headings may hold HTML (`<img src=...>`), which Qt
    would otherwise render (and a rendered image is a fetched image)."""
    import html

    return "<p style='white-space:pre-wrap'>" + html.escape(text) + "</p>"


def _flag_label(flag: str) -> str:
    from inspector.qt.theme import FLAG_STYLE

    return FLAG_STYLE.get(flag, (flag.replace("_", " "), 0))[0]


def _sort_key(c: Chunk, col: int) -> Any:
    if col == COL_ID:
        return c.id
    if col == COL_SPAN:
        return c.start
    if col == COL_TOKENS:
        return c.token_count
    if col == COL_PIECES:
        return -1 if c.embed_tokens is None else c.embed_tokens
    if col == COL_CHARS:
        return c.end - c.start
    if col == COL_PATH:
        return " › ".join(c.heading_path).lower()
    if col == COL_FLAGS:
        return (-len(c.flags), ",".join(sorted(c.flags)))
    if col == COL_PAGE:
        return (c.meta.get("page") or 0) if c.meta else 0
    return c.id


class _ElideLeft(QStyledItemDelegate):
    """Heading paths lose their (shared) beginning, not their specific end, when elided."""

    def initStyleOption(self, option, index) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideLeft


class ChunkFilterProxy(QAbstractProxyModel):
    """Filters rows: only flagged, one flag, and/or text in the heading path. Sorting is passed to
    the source model (see module docstring). Rows map through two integer arrays (the accepted
    source rows and their inverse), identity while no filter is set; only the rows a view asks
    for ever reach Python."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._only_flagged = False
        self._flag = ""
        self._text = ""
        self._rows: np.ndarray | None = None
        """Accepted source rows in order (None: every row, no filter)."""
        self._inverse: np.ndarray | None = None
        """Source row -> proxy row (-1: filtered out); None with `_rows`."""
        self._saved: list[tuple[QPersistentModelIndex, int, int]] = []

    # -- filters ---------------------------------------------------------------------------------
    def set_only_flagged(self, on: bool) -> None:
        self._only_flagged = on
        self._refilter()

    def set_flag(self, flag: str) -> None:
        """Only chunks with this flag ('' for any)."""
        self._flag = flag
        self._refilter()

    def set_text(self, text: str) -> None:
        self._text = text.strip().lower()
        self._refilter()

    @property
    def only_flagged(self) -> bool:
        return self._only_flagged

    @property
    def filtering(self) -> bool:
        return bool(self._only_flagged or self._flag or self._text)

    def invalidate_cache(self) -> None:
        """Kept for callers of the former QSortFilterProxyModel; the mapping is rebuilt on reset."""

    def _mask(self) -> np.ndarray:
        """Accepted chunks, by index into the source's chunks (a Python pass, only with a filter)."""
        src = self.sourceModel()
        chunks = src.chunks if isinstance(src, ChunkTableModel) else ()
        ok = np.ones(len(chunks), dtype=bool)
        for k, c in enumerate(chunks):
            if self._only_flagged and not c.flags:
                ok[k] = False
            elif self._flag and self._flag not in c.flags:
                ok[k] = False
            elif self._text and self._text not in " › ".join(c.heading_path).lower() \
                    and self._text not in str(c.id):
                ok[k] = False
        return ok

    def _remap(self) -> None:
        src = self.sourceModel()
        if not self.filtering or not isinstance(src, ChunkTableModel):
            self._rows = self._inverse = None
            return
        accepted_by_row = self._mask()[src._order]
        self._rows = np.flatnonzero(accepted_by_row).astype(np.int64)
        self._inverse = np.full(len(accepted_by_row), -1, dtype=np.int64)
        self._inverse[self._rows] = np.arange(len(self._rows), dtype=np.int64)

    def _refilter(self) -> None:
        self.beginResetModel()
        self._remap()
        self.endResetModel()

    # -- the source ------------------------------------------------------------------------------
    def setSourceModel(self, model) -> None:  # noqa: N802 (Qt's name)
        old = self.sourceModel()
        if old is not None:
            for sig, slot in self._connections(old):
                sig.disconnect(slot)
        self.beginResetModel()
        super().setSourceModel(model)
        if model is not None:
            for sig, slot in self._connections(model):
                sig.connect(slot)
        self._remap()
        self.endResetModel()

    def _connections(self, model) -> list:
        return [(model.modelAboutToBeReset, self._source_about_to_reset), (model.modelReset, self._source_reset),
                (model.layoutAboutToBeChanged, self._source_layout_about), (model.layoutChanged, self._source_layout),
                (model.dataChanged, self._source_data)]

    def _source_about_to_reset(self) -> None:
        self.beginResetModel()

    def _source_reset(self) -> None:
        self._remap()
        self.endResetModel()

    def _source_layout_about(self, *_args) -> None:
        self.layoutAboutToBeChanged.emit()
        src = self.sourceModel()
        # Remember each persistent index (the view's selection) by the chunk it shows.
        self._saved = []
        if not isinstance(src, ChunkTableModel):  # connected to a ChunkTableModel's signals only
            return
        for pidx in self.persistentIndexList():
            if pidx.isValid():
                k = int(src._order[self._to_source_row(pidx.row())])
                self._saved.append((QPersistentModelIndex(pidx), k, pidx.column()))

    def _source_layout(self, *_args) -> None:
        self._remap()
        src = self.sourceModel()
        # PySide6 converts a QPersistentModelIndex to the QModelIndex it stands for; its stubs
        # know no such constructor.
        old = [QModelIndex(p) for p, _k, _c in self._saved]  # type: ignore[call-overload]
        new = []
        if isinstance(src, ChunkTableModel):  # else nothing was saved
            for _p, k, col in self._saved:
                row = self._from_source_row(int(src.index_rows()[k]))
                new.append(self.index(row, col) if row >= 0 else QModelIndex())
        self.changePersistentIndexList(old, new)
        self._saved = []
        self.layoutChanged.emit()

    def _source_data(self, top_left: QModelIndex, bottom_right: QModelIndex, roles=()) -> None:
        if self.rowCount():
            self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, self.columnCount() - 1))

    # -- mapping -----------------------------------------------------------------------------------
    def _to_source_row(self, row: int) -> int:
        return row if self._rows is None else int(self._rows[row])

    def _from_source_row(self, row: int) -> int:
        return row if self._inverse is None else int(self._inverse[row])

    def mapToSource(self, proxy_index: QModelIndex | QPersistentModelIndex) -> QModelIndex:  # noqa: N802
        src = self.sourceModel()
        if src is None or not proxy_index.isValid() or not 0 <= proxy_index.row() < self.rowCount():
            return QModelIndex()
        return src.index(self._to_source_row(proxy_index.row()), proxy_index.column())

    def mapFromSource(self, source_index: QModelIndex | QPersistentModelIndex) -> QModelIndex:  # noqa: N802
        if not source_index.isValid():
            return QModelIndex()
        src = self.sourceModel()
        if src is None or not 0 <= source_index.row() < src.rowCount():
            return QModelIndex()
        row = self._from_source_row(source_index.row())
        return self.index(row, source_index.column()) if row >= 0 else QModelIndex()

    def index(self, row: int, column: int, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> QModelIndex:
        if parent.isValid() or not (0 <= row < self.rowCount()) or not (0 <= column < self.columnCount()):
            return QModelIndex()
        return self.createIndex(row, column)

    def parent(self, *args):
        if args:  # parent(index): a table has no parents
            return QModelIndex()
        return super().parent()  # QObject.parent()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802
        src = self.sourceModel()
        if parent.isValid() or src is None:
            return 0
        return src.rowCount() if self._rows is None else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802
        src = self.sourceModel()
        return 0 if parent.isValid() or src is None else src.columnCount()

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        src = self.sourceModel()
        if src is None:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return src.headerData(section, orientation, role)
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        src = self.sourceModel()
        if isinstance(src, ChunkTableModel):
            src.sort(column, order)


class ChunkTable(QWidget):
    """Filter controls over a table of the current chunks; selection shared with the text."""

    onlyFlaggedChanged = Signal(bool)

    def __init__(self, state: InspectorState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.model = ChunkTableModel(self)
        self.proxy = ChunkFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.model.set_theme(Theme.for_palette(self.palette()))

        self.only_flagged = QCheckBox("Only flagged")
        self.flag_combo = QComboBox()
        self.flag_combo.addItem("Any flag", "")
        for f in FLAG_ORDER:
            if f in api.FLAGS:
                self.flag_combo.addItem(_flag_label(f).capitalize(), f)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Filter by heading or id…")
        self.search.setClearButtonEnabled(True)
        self.count = QLabel()
        self.count.setEnabled(False)
        bar = QHBoxLayout()
        bar.setContentsMargins(4, 2, 4, 2)
        bar.addWidget(self.only_flagged)
        bar.addWidget(self.flag_combo)
        bar.addWidget(self.search, 1)
        bar.addWidget(self.count)

        self.view = row_table(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.view.setAlternatingRowColors(True)
        self.view.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header = self.view.horizontalHeader()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(COL_PATH, QHeaderView.ResizeMode.Stretch)
        self._elide_left = _ElideLeft(self.view)
        self.view.setItemDelegateForColumn(COL_PATH, self._elide_left)
        fm = self.fontMetrics()
        for col, sample in ((COL_ID, "99999 child"), (COL_SPAN, "1,000,000–1,000,000"), (COL_TOKENS, "Tokens  "),
                            (COL_PIECES, "Word pieces "), (COL_CHARS, "100000 "),
                            (COL_FLAGS, "cut mid-sentence, split table")):
            header.resizeSection(col, fm.horizontalAdvance(sample) + 24)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addLayout(bar)
        lay.addWidget(self.view)

        self.only_flagged.toggled.connect(self.set_only_flagged)
        self.flag_combo.currentIndexChanged.connect(lambda _i: self._apply_flag())
        self.search.textChanged.connect(self._on_search)
        self.view.selectionModel().selectionChanged.connect(self._on_row_selected)
        state.chunksChanged.connect(self.set_result)
        state.selectionChanged.connect(self.show_selection)

    # -- updates -----------------------------------------------------------------------------
    def set_result(self, result) -> None:
        chunks = result.chunks if result is not None else ()
        from inspector.core.api import word_piece_limit

        limit = word_piece_limit()  # the embedding model's (Settings ▸ Embedding Model…)
        self.model.set_chunks(chunks, limit, getattr(result, "ids", None))
        # The page column only for converted PDFs (their chunks carry meta["page"]).
        doc = result.document if result is not None else None
        paged = bool(doc is not None and doc.meta and doc.meta.get("page_starts")) and any(
            c.meta and "page" in c.meta for c in chunks)
        self.view.setColumnHidden(COL_PAGE, not paged)
        self._update_count()
        self.show_selection(self.state.selection)

    def set_only_flagged(self, on: bool) -> None:
        if self.only_flagged.isChecked() != on:
            self.only_flagged.setChecked(on)
            return
        self.proxy.set_only_flagged(on)
        self._update_count()
        self.show_selection(self.state.selection)
        self.onlyFlaggedChanged.emit(on)

    def _apply_flag(self) -> None:
        self.proxy.set_flag(self.flag_combo.currentData() or "")
        self._update_count()
        self.show_selection(self.state.selection)

    def _on_search(self, text: str) -> None:
        self.proxy.set_text(text)
        self._update_count()

    def _update_count(self) -> None:
        shown, total = self.proxy.rowCount(), self.model.rowCount()  # the proxy filters, the model has all
        self.count.setText(f"{shown:,} of {total:,}" if shown != total else f"{total:,} chunks")

    def show_selection(self, chunk_id: int) -> None:
        """Select and scroll to the row of `chunk_id` (or clear the selection)."""
        sm = self.view.selectionModel()
        row = self.model.row_of(chunk_id) if chunk_id != -1 else -1
        pidx = self.proxy.mapFromSource(self.model.index(row, 0)) if row >= 0 else QModelIndex()
        current = sm.selectedRows()
        if pidx.isValid():
            if len(current) == 1 and current[0].row() == pidx.row():
                return
            sm.blockSignals(True)
            sm.select(pidx, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
            sm.setCurrentIndex(pidx, QItemSelectionModel.SelectionFlag.NoUpdate)
            sm.blockSignals(False)
            self.view.viewport().update()
            self.view.scrollTo(pidx, QAbstractItemView.ScrollHint.PositionAtCenter)
        elif current:
            sm.blockSignals(True)
            sm.clearSelection()
            sm.blockSignals(False)
            self.view.viewport().update()

    def _on_row_selected(self, *_args) -> None:
        rows = self.view.selectionModel().selectedRows()
        if rows:
            self.state.select(int(rows[0].data(CHUNK_ID_ROLE)))

    def changeEvent(self, e) -> None:
        from PySide6.QtCore import QEvent

        if e.type() == QEvent.Type.PaletteChange:
            self.model.set_theme(Theme.for_palette(self.palette()))
        super().changeEvent(e)

