"""The corpus: loading files and folders together, and the document list beside the text.

`load_corpus` is the window's open path. It loads each path on its own, so one bad file among
several opens the rest, and turns every failure into the one line the CLI prints
(`InputError.one_line()`); a loader bug (an exception that is not an InputError) becomes one such
line too, with its traceback kept as details, instead of taking the window down.

`CorpusPanel` lists the documents (name, size, chunk count under the current strategy, the
question's hits in it, problems) and the files that could not be opened; selecting a document
shows it, at its best hit when the question has hits there. The counts of the
documents not shown are computed in the background on a latest-wins `JobRunner`, only while the
chunk runner is idle (the shown document goes first) and never for strategies that need the
embedding model (those are counted when shown).
"""

from __future__ import annotations

import dataclasses
import traceback
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QLabel,
    QVBoxLayout,
    QWidget,
)

from inspector.core.api import Cancelled, InputError
from inspector.qt import theme
from inspector.qt.controllers.state import InspectorState
from inspector.qt.panels.table_model import TableModel, bold_font, row_table

if TYPE_CHECKING:
    from inspector.core.api import Document, LoadResult

#: Counts remembered per (document, strategy, parameters).
COUNT_CACHE = 4096
#: Quiet time after a change before the background counts start.
COUNT_DELAY_MS = 250


# -- loading ----------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class CorpusLoad:
    """What `load_corpus` made of the paths."""

    documents: tuple[Document, ...]
    problems: tuple[str, ...] = ()
    """One line per file or folder that could not be opened, exactly as the CLI prints it."""
    details: str = ""
    """Tracebacks of unexpected failures (loader bugs), for the Details… button."""
    opened: tuple[str, ...] = ()
    """The paths that gave at least one document (for the recent-files list)."""


def load_corpus(paths: Sequence[str], *, max_bytes: int | None = None) -> CorpusLoad:
    """Load files and folders as one corpus; nothing raises, every failure is a problem line
    (`max_bytes`: the loader's limit per file; None: `DEFAULT_MAX_BYTES`)."""
    from inspector.core.api import DEFAULT_MAX_BYTES, load_paths

    max_bytes = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    docs: list[Document] = []
    problems: list[str] = []
    details: list[str] = []
    seen: set[str] = set()
    opened: list[str] = []
    for raw in paths:
        try:
            part: LoadResult = load_paths([raw], max_bytes=max_bytes)
        except InputError as exc:
            problems.append(exc.one_line())
            continue
        except Cancelled:  # a newer opening replaced this one (a long PDF stops between pages)
            raise
        except OSError as exc:
            problems.append(InputError(f"cannot read: {exc.strerror or exc}", path=str(raw)).one_line())
            continue
        except Exception as exc:  # noqa: BLE001  (a converter bug must not close the window)
            problems.append(InputError(f"could not be opened ({type(exc).__name__}: {exc})",
                                       path=str(raw)).one_line())
            details.append(traceback.format_exc())
            continue
        for doc in part.documents:
            if doc.doc_id in seen:  # the same name from two folders: tell them apart by path
                doc = dataclasses.replace(doc, doc_id=doc.path or f"{raw}/{doc.doc_id}")
            seen.add(doc.doc_id)
            docs.append(doc)
        if part.documents:
            opened.append(str(raw))
        problems.extend(p.one_line() for p in part.problems)
    return CorpusLoad(tuple(docs), tuple(problems), "\n".join(details), tuple(opened))


def problem_file_name(line: str) -> str:
    """The file name a problem line ("path[:line]: problem") is about, for the list."""
    import os
    import re

    where = line.partition(": ")[0]
    where = re.sub(r":\d+$", "", where)
    return os.path.basename(where.rstrip("/\\")) or where


def document_warnings(doc: Document) -> tuple[str, ...]:
    """The converter's notes on a document (a damaged PDF page ...), as the CLI prints them."""
    return tuple(f"{doc.doc_id}: {note}" for note in (doc.meta or {}).get("warnings", ()))


# -- the table --------------------------------------------------------------------------------------

COLUMNS = ("Document", "Size", "Chunks", "Hits", "Problems")
COL_NAME, COL_SIZE, COL_CHUNKS, COL_HITS, COL_PROBLEMS = range(len(COLUMNS))
DOCUMENT_ROLE = Qt.ItemDataRole.UserRole + 1


@dataclass(frozen=True, slots=True)
class CorpusRow:
    """One line of the list: a document, or a file that could not be opened."""

    name: str
    document: Document | None
    """None for a file that could not be opened."""
    chars: int = 0
    chunks: int | None = None
    """Chunks (parents not counted) under the current strategy; None while unknown."""
    problems: tuple[str, ...] = ()
    hits: tuple[int, int] | None = None
    """The question's hits in this document: (how many, best rank); (0, 0) for none; None while
    no question is asked."""


def human_size(chars: int) -> str:
    if chars < 1000:
        return f"{chars} chars"
    if chars < 1_000_000:
        return f"{chars / 1000:.1f} k chars"
    return f"{chars / 1_000_000:.1f} M chars"


class CorpusModel(TableModel):
    """Documents first (in corpus order), then the files that could not be opened."""

    columns = COLUMNS

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: list[CorpusRow] = []
        self.pending_note = "counting…"

    def set_rows(self, rows: Sequence[CorpusRow]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def update_row(self, i: int, **changes: Any) -> None:
        self.rows[i] = dataclasses.replace(self.rows[i], **changes)
        self.row_changed(i)

    def row_count(self) -> int:
        return len(self.rows)

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        row = self.rows[index.row()]
        if row.document is None:
            return Qt.ItemFlag.ItemIsEnabled  # a problem: readable, not selectable
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not self.is_row(index):
            return None
        row = self.rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return _display_text(row, col)
        elif role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(row, col)
        elif role == Qt.ItemDataRole.ForegroundRole:
            return _foreground(row, col)
        elif role == Qt.ItemDataRole.FontRole and col == COL_HITS and row.hits and row.hits[0]:
            return bold_font()
        elif role == Qt.ItemDataRole.TextAlignmentRole and col in (COL_SIZE, COL_CHUNKS, COL_HITS):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        elif role == DOCUMENT_ROLE:
            return row.document
        return None


    def _tooltip(self, row: CorpusRow, col: int) -> str:
        lines = [row.document.path or row.name] if row.document is not None else [row.name]
        lines += list(row.problems)
        if col == COL_CHUNKS and row.document is not None and row.chunks is None:
            lines.append(self.pending_note)
        if col == COL_HITS and row.hits:
            lines.append(f"{row.hits[0]} of the question's top-k chunks are in this document, the best at "
                         f"rank {row.hits[1]}; select the row to show it")
        return _plain("\n".join(lines))


def _display_text(row: CorpusRow, col: int) -> str | None:
    if col == COL_NAME:
        return row.name
    if row.document is None:
        return "" if col != COL_PROBLEMS else _problem_text(row.problems)
    if col == COL_SIZE:
        return human_size(row.chars)
    if col == COL_CHUNKS:
        return "" if row.chunks is None else f"{row.chunks:,}"
    if col == COL_HITS:
        return hits_text(row.hits)
    if col == COL_PROBLEMS:
        return _problem_text(row.problems)
    return None


def _foreground(row: CorpusRow, col: int) -> QBrush | None:
    if row.document is None:
        return QBrush(QColor(theme.BAD))
    if col == COL_PROBLEMS and row.problems:
        return QBrush(QColor(theme.WARNING))
    if col == COL_HITS and row.hits and row.hits[1] == 1:
        return QBrush(QColor(theme.BEST_HIT_DOCUMENT))  # the best hit of all is here
    return None


def hits_text(hits: tuple[int, int] | None) -> str:
    """"2 · #1" (two hits, the best at rank 1), "–" for none, "" without a question."""
    if hits is None:
        return ""
    n, best = hits
    return f"{n} · #{best}" if n else "–"


def _problem_text(problems: tuple[str, ...]) -> str:
    """The first problem without the file it names (the row names it; the tooltip has it all)."""
    if not problems:
        return ""
    first = problems[0].partition(": ")[2] or problems[0]
    return first if len(problems) == 1 else f"{first} (+{len(problems) - 1} more)"


def _plain(text: str) -> str:
    import html

    return "<p style='white-space:pre-wrap'>" + html.escape(text) + "</p>"


# -- background counts ------------------------------------------------------------------------------

def count_job(docs: Sequence[tuple[int, Document]], strategy: str, params: dict, store: Any = None):
    """The background job: for each (row, document), (row, count, problems), one stage each, in the
    order they are done, then (-1, None, ()) once all are. The documents are chunked through
    `store` (a `ChunkStore`: the retrieval's, so a question over the corpus finds them chunked),
    in the corpus pool's processes when the window runs a helper and the corpus is worth it
    (`ChunkStore.chunk_each`, issue 31: 0.6-2.0x the serial speed on 2 shared cores for a 20 MB
    folder, benchmarks/parallel_corpus.py)."""
    from inspector.core.api import ChunkStore, is_external, last_alignment_report, offload
    from inspector.qt.runner import describe_error

    chunk_store = store if store is not None else ChunkStore()

    def job(cancelled, _progress):
        from inspector.core.api import get_strategy

        try:
            get_strategy(strategy).validate(params)
        except ValueError as exc:  # no document can be chunked so: each row says why
            for row, doc in docs:
                yield row, None, (f"{doc.doc_id}: {describe_error(exc)}",)
            yield -1, None, ()
            return
        rows = [row for row, _doc in docs]
        parallel = None if offload.default().enabled else False
        for n, chunks, error in chunk_store.chunk_each([d for _r, d in docs], strategy, params, parallel=parallel):
            row, doc = rows[n], docs[n][1]
            if error is not None:  # one bad document is a problem of its row
                yield row, None, (f"{doc.doc_id}: {describe_error(error)}",)
                continue
            lines: tuple[str, ...] = ()
            if is_external(strategy):
                report = last_alignment_report(strategy, doc.doc_id)
                lines = tuple(report.lines()) if report is not None else ()
            yield row, sum(1 for c in chunks if c.role != "parent"), lines
        yield -1, None, ()
        _make_catalogs(docs, cancelled)

    return job


def catalog_job(docs: Sequence[tuple[int, Document]]):
    """The background job under a strategy that needs the embedding model (the documents are not
    counted then): (-1, None, ()) at once, then the documents' heading catalogs made, as
    `count_job` makes them after its counts."""
    def job(cancelled, _progress):
        yield -1, None, ()
        _make_catalogs(docs, cancelled)

    return job


def _make_catalogs(docs: Sequence[tuple[int, Document]], cancelled: Callable[[], bool]) -> None:
    """The heading filter's completer offers every document's paths: their catalogs made on the
    counts' thread, once per document, not at the first keystroke on the GUI thread (a 20 MB
    folder: 0.2 s, most of it the outlines, which the corpus pool's processes made for themselves;
    issue 31)."""
    from inspector.core.api import heading_catalog_of

    for _row, doc in docs:
        if cancelled():
            return
        heading_catalog_of(doc)


class CorpusPanel(QWidget):
    """The document list: selecting a document shows it; problems are listed once each."""

    wantsVisible = Signal(bool)
    """True when the corpus has more than one document or a file that could not be opened."""
    countsDone = Signal()
    """All background counts of the current strategy are in (tests wait on it)."""

    def __init__(self, state: InspectorState, parent: QWidget | None = None, *, synchronous: bool = False) -> None:
        super().__init__(parent)
        from inspector.qt.runner import JobRunner

        self.state = state
        self.model = CorpusModel(self)
        self.summary = QLabel()
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setContentsMargins(6, 2, 6, 2)
        self.view = row_table(self.model)
        header = self.view.horizontalHeader()
        header.setStretchLastSection(True)  # problems: as much room as the dock gives
        fm = self.fontMetrics()
        for col, sample in ((COL_NAME, "handbook-2024.md"), (COL_SIZE, "999.9 k chars"), (COL_CHUNKS, "99,999"),
                            (COL_HITS, "Hits 99")):
            header.resizeSection(col, fm.horizontalAdvance(sample) + 16)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.summary)
        lay.addWidget(self.view, 1)

        self.chunk_store: Any = None
        """The `ChunkStore` the background counts chunk through, or a function giving it when a
        count starts (the window sets the retrieval's, so that the corpus's chunks are made once,
        without making the workbench before the window shows); None: a store of the job's own."""
        self.hit_jump: Callable[[str], bool] | None = None
        """Called with a document id when the user selects a row whose document holds hits of the
        question: shows that document at its best hit (returns False to switch plainly)."""
        self._hits: dict[str, tuple[int, int]] | None = None
        self._counts: OrderedDict[tuple, tuple[int | None, tuple[str, ...]]] = OrderedDict()
        self._pending: dict[int, tuple] = {}  # row -> count key of the running job
        self.runner = JobRunner(self, synchronous=synchronous, name="corpus counts")
        self.runner.stageReady.connect(self._on_count)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0 if synchronous else COUNT_DELAY_MS)
        self._timer.timeout.connect(self.start_counts)

        self.view.selectionModel().selectionChanged.connect(self._on_row_selected)
        state.documentsChanged.connect(self._on_documents)
        state.documentChanged.connect(self._on_document)
        state.chunksChanged.connect(self._on_chunks)
        state.strategyChanged.connect(lambda _n: self._on_config())
        state.paramsChanged.connect(lambda _p: self._on_config())
        state.busyChanged.connect(self._on_busy)

    # -- public --------------------------------------------------------------------------------
    def documents(self) -> list[Document]:
        return [r.document for r in self.model.rows if r.document is not None]

    def problem_rows(self) -> list[CorpusRow]:
        return [r for r in self.model.rows if r.document is None]

    def select_document(self, doc: Document) -> None:
        """Select a document's row, as a click would (shows it)."""
        for i, r in enumerate(self.model.rows):
            if r.document is doc:
                self.view.selectRow(i)
                return

    def set_hits(self, counts: dict[str, tuple[int, int]] | None) -> None:
        """The question's hits per document (doc_id -> (how many, best rank)); None: no question."""
        self._hits = dict(counts) if counts is not None else None
        for i, r in enumerate(self.model.rows):
            if r.document is None:
                continue
            hits = None if counts is None else counts.get(r.document.doc_id, (0, 0))
            if hits != r.hits:
                self.model.update_row(i, hits=hits)

    def forget_strategy(self, name: str) -> None:
        """Drop the counts made with `name` (its file was loaded again: the function changed)."""
        for key in [k for k in self._counts if k[2] == name]:
            del self._counts[key]
        if self.state.strategy == name:
            self._on_config()

    def shutdown(self) -> None:
        self._timer.stop()
        self.runner.shutdown()

    # -- rows ----------------------------------------------------------------------------------
    def _key(self, doc: Document, strategy: str | None = None, params: dict | None = None) -> tuple:
        s = self.state
        params = s.params if params is None else params
        return (doc.doc_id, doc.sha256, strategy or s.strategy, tuple(sorted(params.items())))

    def _on_documents(self, docs: tuple[Document, ...]) -> None:
        self.runner.cancel()
        rows = []
        for d in docs:
            hit = self._counts.get(self._key(d))
            rows.append(CorpusRow(d.doc_id, d, len(d.text), hit[0] if hit else None,
                                  document_warnings(d) + (hit[1] if hit else ()),
                                  None if self._hits is None else self._hits.get(d.doc_id, (0, 0))))
        for line in self.state.load_problems:
            rows.append(CorpusRow(problem_file_name(line), None, problems=(line,)))
        self.model.set_rows(rows)
        n_bad = len(self.state.load_problems)
        self.summary.setText(f"{len(docs)} document{'s' if len(docs) != 1 else ''}"
                             + (f" · {n_bad} could not be opened" if n_bad else ""))
        self.wantsVisible.emit(len(docs) > 1 or n_bad > 0)
        self._schedule()

    def _on_document(self, doc: Document | None) -> None:
        for i, r in enumerate(self.model.rows):
            if r.document is doc and doc is not None:
                sm = self.view.selectionModel()
                if not (sm.isRowSelected(i, QModelIndex()) and len(sm.selectedRows()) == 1):
                    sm.blockSignals(True)
                    self.view.selectRow(i)
                    sm.blockSignals(False)
                    self.view.viewport().update()
                return

    def _row_of(self, doc: Document) -> int:
        for i, r in enumerate(self.model.rows):
            if r.document is doc:
                return i
        return -1

    def _set_count(self, i: int, key: tuple, count: int | None, problems: tuple[str, ...]) -> None:
        """Remember a count under `key`; show it if `key` is the row's current configuration."""
        doc = self.model.rows[i].document
        if doc is None:
            return
        self._counts[key] = (count, problems)
        self._counts.move_to_end(key)
        while len(self._counts) > COUNT_CACHE:
            self._counts.popitem(last=False)
        if key == self._key(doc):
            self.model.update_row(i, chunks=count, problems=document_warnings(doc) + problems)

    def _on_chunks(self, result) -> None:
        """The shown document's count comes from its own result (exact, and first)."""
        if result is None:
            return
        i = self._row_of(result.document)
        if i < 0:
            return
        from inspector.core.api import is_external, last_alignment_report

        lines: tuple[str, ...] = ()
        if is_external(result.request.strategy):
            report = last_alignment_report(result.request.strategy, result.document.doc_id)
            lines = tuple(report.lines()) if report is not None else ()
        key = self._key(result.document, result.request.strategy, dict(result.request.params))
        self._set_count(i, key, result.stats.count, lines)

    def _on_config(self) -> None:
        self.runner.cancel()
        for i, r in enumerate(self.model.rows):
            if r.document is not None:
                hit = self._counts.get(self._key(r.document))
                self.model.update_row(i, chunks=hit[0] if hit else None,
                                      problems=document_warnings(r.document) + (hit[1] if hit else ()))
        self._schedule()

    def _on_busy(self, busy: bool) -> None:
        if busy:
            self.runner.cancel()  # the shown document goes first
            self._timer.stop()
        else:
            self._schedule()

    def _schedule(self) -> None:
        if len(self.state.documents) > 1 and not self.runner.closed:
            self._timer.start()

    # -- background counts ----------------------------------------------------------------------
    def start_counts(self) -> None:
        """Count the documents whose count is unknown (not while the shown one is being chunked)."""
        from inspector.core.api import get_strategy

        if self.state.busy or self.runner.closed:
            return
        try:
            strat = get_strategy(self.state.strategy)
        except ValueError:
            return
        others = [(i, r.document) for i, r in enumerate(self.model.rows)
                  if r.document is not None and r.document is not self.state.document]
        if strat.needs_embedder:
            self.model.pending_note = "counted when shown (this strategy needs the embedding model)"
            self._pending = {}
            self.runner.submit(catalog_job(others))  # countsDone once it says so (at once)
            return
        self.model.pending_note = "counting…"
        todo = [(i, d) for i, d in others if self._key(d) not in self._counts]
        if not todo:
            self.countsDone.emit()
            return
        self._pending = {i: self._key(d) for i, d in todo}
        store = self.chunk_store() if callable(self.chunk_store) else self.chunk_store
        self.runner.submit(count_job(todo, self.state.strategy, dict(self.state.params), store))

    def _on_count(self, _rid: int, stage) -> None:
        i, count, problems = stage
        if i < 0:
            self.countsDone.emit()
        elif i in self._pending and i < len(self.model.rows):
            self._set_count(i, self._pending[i], count, problems)

    def _on_row_selected(self, *_args) -> None:
        rows = self.view.selectionModel().selectedRows()
        if rows:
            doc = rows[0].data(DOCUMENT_ROLE)
            row = self.model.rows[rows[0].row()]
            if doc is not None and row.hits and row.hits[0] and self.hit_jump is not None \
                    and self.hit_jump(doc.doc_id):
                return  # shown at its best hit
            if doc is not None and doc is not self.state.document:
                self.state.set_document(doc)
