"""The embedding map: every chunk vector on a plane, with the question, its hits and the answers.

Where do the question and the chunk holding its answer sit among all the chunks? A map of the
index's vectors answers at a glance why a question missed: its answer lies in a crowd of look-alike
chunks, or far from the question altogether. Points are the index's rows (`RetrievalResult.index`:
`vectors` rows follow `entries`), projected by `inspector.core.viewmodel.projection` (PCA; UMAP when
the optional `umap-learn` is installed) on a worker thread of the app's latest-wins runner, oriented
like the map shown before so re-chunking moves points rather than mirroring the map. The map follows
every retrieval stage: a re-chunk, the pooled preview and the exact index that replaces it.

Under BM25 the index has no vectors. The panel then offers Compute vectors: the chunks of the
current retrieval are embedded by the embedding model on the map's worker thread
(`Staging.exact_index`, the index a dense request would build, found again if dense is chosen
later) and mapped; the retriever stays BM25, so the hits drawn are BM25's. Questions asked on the
same chunks reuse those vectors; new chunks offer the button again rather than embed a whole
corpus on every slider step.

Drawn with pyqtgraph: one `ScatterPlotItem` with a brush per point (a few shared brushes, so
20,000 points redraw in ~10 ms; benchmarks/map_redraw.py), the question and the rank labels on top.
Hover shows a chunk (its heading path and the start of its text), a click selects it in the text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QColor, QStandardItemModel
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from inspector.core import api
from inspector.core.api import pct
from inspector.core.viewmodel.projection import METHODS, Projection, project, umap_available
from inspector.qt.controllers.retrieval import MODEL_FAILED, MODEL_LOADING, MODEL_READY, RetrievalController
from inspector.qt.controllers.state import InspectorState
from inspector.qt.document.hits import answer_color, hit_color
from inspector.qt.runner import JobRunner, Progress
from inspector.qt.theme import BAD, Theme

if TYPE_CHECKING:
    import numpy as np
else:
    from inspector.core.api import lazy_numpy as np

#: Point categories, drawn in this order of precedence (a hit that holds the answer is a hit).
OTHER, CHUNK, MISSED, ANSWER, HIT = range(5)
CATEGORY_NAMES = {OTHER: "other document", CHUNK: "chunk", MISSED: "answer of a missed question",
                  ANSWER: "holds the answer", HIT: "retrieved"}
PREVIEW_CHARS = 220
MISS_COLOR = QColor(BAD)


@dataclass(frozen=True, slots=True, eq=False)
class MapData:
    """What the worker hands the map: the index, its projection and the question's place."""

    index: Any
    projection: Projection
    question_point: np.ndarray | None
    """(2,) position of the question's vector, None without a question (or a vector for it)."""
    result: Any
    """The RetrievalResult drawn."""


def map_job(result: Any, method: str, previous: Projection | None, reuse: Projection | None, *,
            index: Any = None, make_index: Callable[[Callable[[], bool], Progress], Any] | None = None) -> Callable:
    """The projection job: the index's vectors on a plane (reused when only the question changed),
    and the question placed on it. Runs on the map's runner thread. `index`: the index to map
    (default: the result's); `make_index(cancelled, progress)`: builds it first, on the same thread
    (the vectors computed for a BM25 result)."""
    question = result.request.question

    def job(cancelled: Callable[[], bool], progress: Progress) -> Iterator[MapData]:
        idx = index if index is not None else result.index
        if make_index is not None:
            idx = make_index(cancelled, progress)
        proj = reuse if reuse is not None else project(idx.vectors, method, previous=previous)
        point = None
        if question.strip() and getattr(idx, "embedder", None) is not None and not cancelled():
            try:
                point = proj.place(idx.embed_query(question))[0]  # cached by the search already
            except ValueError:
                point = None
        yield MapData(idx, proj, point, result)

    return job


class EmbeddingMap(QWidget):
    """The map panel: a method choice, the plot, a legend and the hovered chunk."""

    mapDrawn = Signal()
    """A projection (or a new marking of it) is on screen."""
    pointHovered = Signal(int)
    """Row of the hovered point (-1: none)."""

    def __init__(self, state: InspectorState, retrieval: RetrievalController, parent: QWidget | None = None, *,
                 synchronous: bool = False) -> None:
        super().__init__(parent)
        self.state = state
        self.retrieval = retrieval
        self.runner = JobRunner(self, synchronous=synchronous, name="map")
        self.data: MapData | None = None
        # Each point's category (int8) once a map is made; until then an empty tuple stands in,
        # read only through len() (no numpy before the window's first paint, issue 31).
        self.categories: np.ndarray = cast("np.ndarray", ())
        self.rows: dict[tuple[str, int, str], int] = {}
        self.answer_rows: list[int] = []
        """Rows of the chunks holding the current gold question's answer (hits among them too)."""
        self._pending: Any = None
        """The latest retrieval result not yet drawn (the panel was hidden, or work is running)."""
        self._hover_row = -1
        self.computed: tuple[Any, Any] | None = None
        """(a BM25 index, the exact index computed for its chunks by Compute vectors): questions
        on the same chunks are mapped with those vectors without asking again."""
        self._compute_waits = False
        """Compute vectors was pressed while the model loads: it runs once the model is ready."""

        self.method = QComboBox()
        for m in METHODS:
            self.method.addItem("PCA" if m == "pca" else "UMAP", m)
        if not umap_available():
            # A QComboBox's own model is a QStandardItemModel (Qt's documentation); its stubs say
            # QAbstractItemModel.
            item = cast(QStandardItemModel, self.method.model()).item(METHODS.index("umap"))
            item.setEnabled(False)
            item.setToolTip("UMAP needs the optional package umap-learn: pip install 'chunk-inspector[map]'")
        self.method.setToolTip("How the vectors are laid on the plane: PCA (linear, fast) or UMAP (neighbourhoods)")
        # The labels change with every stage and hover: fixed heights and an ignored width, so new
        # text never asks the window to lay its docks out again (which resizes the other panels).
        # Two lines for the status and legend: in a map beside the gold set, one line cut their
        # counts off mid-sentence ("242 from other documen").
        line = self.fontMetrics().lineSpacing()
        self.status = QLabel("Ask a question or load a gold set: the map shows the index's chunk vectors")
        self.compute_button = QPushButton("Compute vectors")
        self.compute_button.setToolTip("BM25 has no vectors: embed the current chunks with the embedding model "
                                       "(in the background) and map them; the retriever stays BM25")
        self.compute_button.hide()
        self.compute_button.clicked.connect(lambda: self.compute_vectors())
        self.legend = QLabel()
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.hover = QLabel(" ")
        self.hover.setTextFormat(Qt.TextFormat.PlainText)
        for label, lines in ((self.status, 2), (self.legend, 2), (self.hover, 3)):
            label.setWordWrap(lines > 1)
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
            label.setFixedHeight(line * lines + 4)
            label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)

        # The plot (pyqtgraph: 0.25-0.55 s of imports) is made when the panel is first shown or
        # asked for it (`plot`), not with the window: the map starts hidden (issue 31).
        self._plot: Any = None
        self._scatter: Any = None
        self._overlay: Any = None
        self._labels: list[Any] = []
        self._plot_slot = QVBoxLayout()
        self._plot_slot.setContentsMargins(0, 0, 0, 0)

        top = QHBoxLayout()
        top.addWidget(QLabel("Layout"))
        top.addWidget(self.method)
        top.addStretch(1)
        top.addWidget(self.compute_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(self.status)
        lay.addLayout(self._plot_slot, 1)
        lay.addWidget(self.legend)
        lay.addWidget(self.hover)

        self.method.currentIndexChanged.connect(lambda _i: self.refresh(new_layout=True))
        self.runner.stageReady.connect(self._on_data)
        self.runner.errored.connect(self._on_error)
        self.runner.progressed.connect(self._on_progress)
        retrieval.modelStateChanged.connect(self._on_model_state)
        retrieval.resultReady.connect(self._on_result)
        retrieval.cleared.connect(self.clear)
        state.selectionChanged.connect(lambda _id: self._draw_overlay())
        state.documentChanged.connect(lambda _doc: self._draw_overlay())

    # -- the plot, made on first use -------------------------------------------------------------------
    @property
    def plot(self) -> Any:
        """The pyqtgraph plot (made now if it was not yet)."""
        if self._plot is None:
            self._make_plot()
        return self._plot

    @property
    def scatter(self) -> Any:
        """The chunks' points."""
        if self._plot is None:
            self._make_plot()
        return self._scatter

    @property
    def overlay(self) -> Any:
        """The question's star and the selected chunk's ring, on top of the points."""
        if self._plot is None:
            self._make_plot()
        return self._overlay

    def _make_plot(self) -> None:
        import pyqtgraph as pg

        pg.setConfigOptions(antialias=True)
        plot = pg.PlotWidget()
        plot.setMenuEnabled(False)
        plot.hideButtons()
        plot.setAspectLocked(True)
        plot.showGrid(x=False, y=False)
        self._scatter = pg.ScatterPlotItem(size=7, pxMode=True, hoverable=True)
        plot.addItem(self._scatter)
        self._overlay = pg.ScatterPlotItem(pxMode=True)
        plot.addItem(self._overlay)
        self._scatter.sigClicked.connect(self._on_clicked)
        self._scatter.sigHovered.connect(self._on_hovered)
        self._plot = plot
        self._plot_slot.addWidget(plot)
        self._apply_theme()

    # -- inputs --------------------------------------------------------------------------------------
    @property
    def method_name(self) -> str:
        return str(self.method.currentData())

    def _on_result(self, result: Any) -> None:
        self._pending = result
        if self.isVisible():
            self.refresh()

    def showEvent(self, e) -> None:
        super().showEvent(e)
        if self._plot is None:
            self._make_plot()
        if self._pending is not None:
            self.refresh()

    def refresh(self, *, new_layout: bool = False) -> int:
        """Draw the latest retrieval result (project it on the worker unless only the question or
        the marks changed); returns the runner's request id (0: nothing to do)."""
        result = self._pending if self._pending is not None else (self.data.result if self.data else None)
        if result is None:
            return 0
        index = self._index_for(result)
        vectors = getattr(index, "vectors", None)
        if vectors is None or len(vectors) == 0:
            self._pending = None
            self.clear()
            if vectors is not None or not len(getattr(index, "entries", ())):
                self.status.setText("No chunks to map")
            elif result.mode == api.FALLBACK:  # dense was chosen: its vectors come on their own
                self.status.setText("No vectors to map yet: BM25 answers until the chunks are embedded "
                                    f"({self.retrieval.model_error or result.note or 'the model is loading'})")
            else:
                self._offer_compute(result)
            return 0
        self._pending = None
        self.compute_button.hide()
        same = self.data is not None and self.data.index is index and not new_layout \
            and self.data.projection.method == self.method_name
        previous = self.data.projection if self.data is not None else None
        if not same:
            n = len(vectors)
            self.status.setText(f"Laying out {n:,} chunk vectors ({self.method.currentText()})…")
        return self.runner.submit(map_job(result, self.method_name, previous, previous if same else None,
                                          index=index))

    def _index_for(self, result: Any) -> Any:
        """The index to map for a result: its own, or the vectors computed for its BM25 index."""
        index = result.index
        if getattr(index, "vectors", None) is None and self.computed is not None and self.computed[0] is index:
            return self.computed[1]
        return index

    # -- vectors under BM25 ------------------------------------------------------------------------
    def _offer_compute(self, result: Any) -> None:
        self._pending = result  # what Compute vectors embeds
        failed = self.retrieval.model_state == MODEL_FAILED
        self.compute_button.setEnabled(not failed)
        self.compute_button.show()
        if failed:
            self.status.setText("No vectors to map: BM25 has none, and the embedding model could not be loaded")
        else:
            self.status.setText("No vectors to map: BM25 has none. Compute vectors embeds the chunks to map them")

    def compute_vectors(self) -> int:
        """Compute vectors: embed the current result's chunks with the embedding model on the map's
        worker (the model is loaded first if need be) and map them; returns the runner's request
        id (0: waiting for the model, or nothing to embed)."""
        result = self._pending if self._pending is not None else (self.data.result if self.data else None)
        if result is None:
            return 0
        self._pending = result
        r = self.retrieval
        if r.embedder is None:
            if r.model_state == MODEL_FAILED:
                self.status.setText(f"No vectors: the embedding model could not be loaded ({r.model_error})")
                return 0
            self._compute_waits = True
            self.compute_button.setEnabled(False)
            self.status.setText("Loading the embedding model to compute the vectors…")
            if r.model_state != MODEL_LOADING:
                r.start_model()
            return 0 if r.embedder is None else self._submit_compute(result)
        return self._submit_compute(result)

    def _submit_compute(self, result: Any) -> int:
        self._compute_waits = False
        self._pending = None
        self.compute_button.setEnabled(False)
        staging = self.retrieval.staging
        n = len(result.index.entries)
        self.status.setText(f"Embedding {n:,} chunks to map them…")

        def make_index(cancelled: Callable[[], bool], progress: Progress) -> Any:
            return staging.exact_index(result.request, cancel=cancelled,
                                       progress=lambda done, total: progress(done, total, ""))

        previous = self.data.projection if self.data is not None else None
        return self.runner.submit(map_job(result, self.method_name, previous, None, make_index=make_index))

    def _on_model_state(self, state: str) -> None:
        if not self._compute_waits:
            return
        if state == MODEL_READY and self._pending is not None:
            self._submit_compute(self._pending)
        elif state == MODEL_FAILED:
            self._compute_waits = False
            self.compute_button.setEnabled(False)
            self.status.setText(f"No vectors: the embedding model could not be loaded ({self.retrieval.model_error})")

    def _on_progress(self, _rid: int, done: int, total: int, _label: str) -> None:
        if total:
            self.status.setText(f"Embedding {total:,} chunks to map them: {done:,} done…")

    def _on_error(self, _rid: int, msg: str) -> None:
        self.status.setText(f"The map could not be drawn: {msg}")
        self.compute_button.setEnabled(True)

    def clear(self) -> None:
        self.runner.cancel()
        self.data = None
        self.answer_rows = []
        self.categories = np.zeros(0, dtype=np.int8)
        self.rows = {}
        if self._plot is not None:
            self._scatter.clear()
            self._overlay.clear()
            self._clear_labels()
        self.hover.setText(" ")
        self.status.setText("Ask a question or load a gold set: the map shows the index's chunk vectors")
        self.legend.setText("")
        self.compute_button.hide()

    # -- drawing -------------------------------------------------------------------------------------
    def _on_data(self, _rid: int, data: MapData) -> None:
        if self._plot is None:  # drawn before the panel was ever shown (a test, a screenshot)
            self._make_plot()
        own = data.result.index
        if data.index is not own and getattr(own, "vectors", None) is None:
            self.computed = (own, data.index)  # Compute vectors' index: kept for the next questions
        self.compute_button.hide()
        self.compute_button.setEnabled(True)
        first = self.data is None or self.data.projection is not data.projection
        if self.data is None or self.data.index is not data.index:
            self.rows = {(c.doc_id, c.id, c.role): i for i, c in enumerate(data.index.entries)}
        self.data = data
        self.categories = self._categorize(data)
        self._draw_points()
        self._draw_overlay()
        if first:
            self.plot.getPlotItem().enableAutoRange()
            self.plot.autoRange(padding=0.05)
        self._describe(data)
        self.mapDrawn.emit()

    def _categorize(self, data: MapData) -> np.ndarray:
        index, result = data.index, data.result
        doc = self.state.document
        doc_id = doc.doc_id if doc is not None else None
        cats = np.full(len(index.entries), CHUNK, dtype=np.int8)
        if len(index.docs) > 1:
            cats[[i for i, c in enumerate(index.entries) if c.doc_id != doc_id]] = OTHER
        # Answers of the gold questions that missed (their chunks, as the diagnosis names them).
        report = getattr(result, "report", None)
        if report is not None:
            for qr in report.questions:
                if not qr.hit and qr.diagnosis is not None:
                    for key in qr.diagnosis.chunks:
                        row = self._row_of_key(index, key)
                        if row is not None:
                            cats[row] = MISSED
        # The current question's answer, when it is a gold question about the shown document.
        self.answer_rows = self._answer_rows(index, result)
        for row in self.answer_rows:
            cats[row] = ANSWER
        for h in result.hits:
            row = self.rows.get((h.matched.doc_id, h.matched.id, h.matched.role))
            if row is not None:
                cats[row] = HIT
        return cats

    def _row_of_key(self, index: Any, key: str) -> int | None:
        doc_id, _, cid = key.rpartition("#")
        try:
            chunk_id = int(cid)
        except ValueError:
            return None
        for role in ("chunk", "child"):
            row = self.rows.get((doc_id, chunk_id, role))
            if row is not None:
                return row
        return None

    def _answer_rows(self, index: Any, result: Any) -> list[int]:
        from inspector.core.api import answer_spans

        doc = self.state.document
        question = result.request.question
        if doc is None or not question:
            return []
        gold = next((q for q in self.retrieval.gold_questions if q.question == question), None)
        if gold is None:
            return []
        rows = []
        for a, b in answer_spans(doc, gold):
            for i, c in enumerate(index.entries):
                if c.doc_id == doc.doc_id and c.start <= a and b <= c.end:
                    rows.append(i)
        return rows

    def _brushes(self) -> dict[int, Any]:
        import pyqtgraph as pg

        theme = Theme.for_palette(self.palette())
        base = QColor(theme.bar(0))
        base.setAlphaF(0.55)
        other = QColor(theme.text)
        other.setAlphaF(0.18)
        return {OTHER: pg.mkBrush(other), CHUNK: pg.mkBrush(base), MISSED: pg.mkBrush(MISS_COLOR),
                ANSWER: pg.mkBrush(answer_color(theme)), HIT: pg.mkBrush(hit_color(theme))}

    def _draw_points(self) -> None:
        if self.data is None or self._plot is None:  # a plot made later draws what there is then
            return
        import pyqtgraph as pg

        pts = self.data.projection.points
        brushes = self._brushes()
        sizes = np.where(self.categories >= MISSED, 11, 7)
        symbols = np.where(self.categories == MISSED, "x", "o")
        theme = Theme.for_palette(self.palette())
        rim = QColor(theme.text)
        rim.setAlphaF(0.85)
        # One pen object per category, never None: pyqtgraph caches a symbol's picture by the
        # identity of its pen and brush, and a None pen becomes a new QPen per point (20,000
        # pictures drawn: 2.9 s a draw instead of tens of milliseconds).
        no_pen = pg.mkPen(None)
        pens = {c: (pg.mkPen(rim, width=1.2) if c >= ANSWER else no_pen) for c in brushes}
        # Drawn by category, the important ones last: pyqtgraph paints in order, so hits and answers
        # sit on top of the crowd. Each spot's data is its index row.
        order = np.argsort(self.categories, kind="stable")
        cats = self.categories[order].tolist()
        self.scatter.setData(pos=pts[order], brush=[brushes[c] for c in cats], pen=[pens[c] for c in cats],
                             size=sizes[order], symbol=symbols[order].tolist(), data=order)

    def _draw_overlay(self) -> None:
        """The question's star, the selected chunk's ring and the hits' rank labels."""
        if self._plot is None:
            return
        import pyqtgraph as pg

        self.overlay.clear()
        self._clear_labels()
        if self.data is None:
            return
        theme = Theme.for_palette(self.palette())
        spots = []
        q = self.data.question_point
        if q is not None:
            spots.append({"pos": (float(q[0]), float(q[1])), "symbol": "star", "size": 20,
                          "brush": pg.mkBrush(hit_color(theme)), "pen": pg.mkPen(theme.text, width=1.5)})
        pts = self.data.projection.points
        for row in self.answer_rows:  # ringed, so an answer that was retrieved still shows as one
            spots.append({"pos": (float(pts[row, 0]), float(pts[row, 1])), "symbol": "o", "size": 19,
                          "brush": None, "pen": pg.mkPen(answer_color(theme), width=3)})
        sel = self.state.selected_chunk()
        doc = self.state.document
        if sel is not None and doc is not None:
            sel_row = self.rows.get((doc.doc_id, sel.id, sel.role))
            if sel_row is not None:
                x, y = self.data.projection.points[sel_row]
                spots.append({"pos": (float(x), float(y)), "symbol": "o", "size": 18, "brush": None,
                              "pen": pg.mkPen(theme.selection, width=2.5)})
        if spots:
            self.overlay.addPoints(spots)
        for h in self.data.result.hits:
            hit_row = self.rows.get((h.matched.doc_id, h.matched.id, h.matched.role))
            if hit_row is None:
                continue
            label = pg.TextItem(str(h.rank), color=theme.text, anchor=(-0.3, 1.1))
            label.setPos(float(pts[hit_row, 0]), float(pts[hit_row, 1]))
            self.plot.addItem(label)
            self._labels.append(label)

    def _clear_labels(self) -> None:
        for label in self._labels:
            self.plot.removeItem(label)
        self._labels = []

    def _describe(self, data: MapData) -> None:
        from inspector.qt.panels.question_bar import mode_text

        p = data.projection
        n = len(p.points)
        how = "PCA" if p.method == "pca" else "UMAP"
        mode = mode_text(data.result, self.retrieval)[0]
        if data.index is not data.result.index:  # Compute vectors under BM25
            mode = f"computed by the model; the hits are {mode}'s"
        text = f"{n:,} chunk vectors · {mode} · {how}"
        if p.method == "pca":
            text += f" · the axes hold {pct(p.explained[0], 0, '%')} and {pct(p.explained[1], 0, '%')} of the variance"
        self.status.setText(text)
        theme = Theme.for_palette(self.palette())
        counts = np.bincount(self.categories, minlength=5) if len(self.categories) else np.zeros(5, int)
        parts = []
        if data.question_point is not None:
            parts.append(f"<span style='color:{hit_color(theme).name()}'>★</span> question")
        if self.answer_rows:
            parts.append(f"<span style='color:{answer_color(theme).name()}'>◯</span> holds the answer "
                         f"({len(self.answer_rows)})")
        for cat, symbol in ((HIT, "●"), (MISSED, "✕")):
            if counts[cat]:
                color = {HIT: hit_color(theme), ANSWER: answer_color(theme), MISSED: MISS_COLOR}[cat]
                parts.append(f"<span style='color:{color.name()}'>{symbol}</span> {CATEGORY_NAMES[cat]} "
                             f"({int(counts[cat])})")
        if counts[OTHER]:
            parts.append(f"{int(counts[OTHER]):,} from other documents (faint)")
        self.legend.setText(" &nbsp; ".join(parts))

    def changeEvent(self, e) -> None:
        super().changeEvent(e)
        if e.type() == e.Type.PaletteChange and self._plot is not None:
            self._apply_theme()
            self._draw_points()
            self._draw_overlay()

    def _apply_theme(self) -> None:
        pal = self.palette()
        self.plot.setBackground(pal.color(pal.ColorRole.Base))
        axis_color = Theme.for_palette(pal).muted
        for name in ("left", "bottom"):
            axis = self.plot.getPlotItem().getAxis(name)
            axis.setPen(axis_color)
            axis.setTextPen(axis_color)

    # -- reading the map -----------------------------------------------------------------------------
    @property
    def points(self) -> np.ndarray:
        """(n, 2) positions of the chunks, in index row order (empty before a map is drawn)."""
        return self.data.projection.points if self.data is not None else np.zeros((0, 2), dtype=np.float32)

    def chunk_at_row(self, row: int) -> Any:
        return self.data.index.entries[row] if self.data is not None and 0 <= row < len(self.data.index.entries) \
            else None

    def hover_text(self, row: int) -> str:
        """What hovering a point shows: rank or role, document and heading path, tokens, the text's start."""
        c = self.chunk_at_row(row)
        if c is None or self.data is None:
            return ""
        index = self.data.index
        head = f"#{c.id}"
        if len(index.docs) > 1:
            head += f" · {c.doc_id}"
        if c.heading_path:
            head += " · " + " > ".join(c.heading_path)
        cat = int(self.categories[row]) if row < len(self.categories) else CHUNK
        rank = next((h.rank for h in self.data.result.hits if h.matched.id == c.id and h.matched.doc_id == c.doc_id
                     and h.matched.role == c.role), None)
        if rank is not None:
            head += f" · rank {rank}"
        elif cat in (ANSWER, MISSED):
            head += f" · {CATEGORY_NAMES[cat]}"
        if c.token_count:
            head += f" · {c.token_count:,} tokens"
        text = " ".join(index.text(c).split())
        if len(text) > PREVIEW_CHARS:
            text = text[:PREVIEW_CHARS].rstrip() + "…"
        return f"{head}\n{text}"

    def scene_pos_of_row(self, row: int) -> QPointF:
        """Where point `row` is drawn, in the plot's scene (tests hover and click there)."""
        x, y = self.points[row]
        return self.plot.getPlotItem().vb.mapViewToScene(QPointF(float(x), float(y)))

    def _on_hovered(self, _item: Any, points: Any, ev: Any) -> None:
        row = int(points[0].data()) if len(points) else -1
        if row == self._hover_row:
            return
        self._hover_row = row
        text = self.hover_text(row) if row >= 0 else ""
        self.hover.setText(text or " ")
        if text and ev is not None and hasattr(ev, "screenPos"):
            QToolTip.showText(ev.screenPos().toPoint(), text, self.plot)
        elif not text:
            QToolTip.hideText()
        self.pointHovered.emit(row)

    def _on_clicked(self, _item: Any, points: Any, _ev: Any = None) -> None:
        if len(points):
            self.select_row(int(points[0].data()))

    def select_row(self, row: int) -> bool:
        """Select the chunk of point `row` in the text (True when it is the shown document's)."""
        c = self.chunk_at_row(row)
        doc = self.state.document
        if c is None or doc is None:
            return False
        if c.doc_id != doc.doc_id:
            self.hover.setText(f"#{c.id} is in {c.doc_id}: choose that document to see it in the text")
            return False
        self.state.select(c.id)
        return self.state.selection == c.id

    # -- lifetime ------------------------------------------------------------------------------------
    def shutdown(self, timeout_ms: int = 30_000) -> None:
        self.runner.shutdown(timeout_ms)


def install_embedding_map(window: Any) -> EmbeddingMap:
    """View ▸ Embedding Map: the panel in a dock (hidden until asked for; it computes only while
    shown), its toggle in the View menu and in View ▸ Panels."""
    panel = EmbeddingMap(window.state, window.retrieval, window,
                         synchronous=bool(getattr(window.retrieval.runner, "synchronous", False)))
    dock = window.add_panel(panel, "Embedding Map", Qt.DockWidgetArea.BottomDockWidgetArea)
    dock.hide()
    action = dock.toggleViewAction()
    action.setText("&Embedding Map")
    action.setShortcut("Ctrl+Shift+M")
    action.setToolTip("Every chunk vector on a plane, with the question, its hits and the answers")
    menu = getattr(window, "view_menu", None)
    if menu is not None:
        menu.addSeparator()
        menu.addAction(action)
    window.embedding_map_dock = dock
    return panel


__all__ = ["EmbeddingMap", "MapData", "map_job", "install_embedding_map", "OTHER", "CHUNK", "MISSED", "ANSWER",
           "HIT"]
