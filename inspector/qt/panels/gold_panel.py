"""The gold set panel: load a gold file, see hit rate@k, MRR and span metrics for the current chunks,
which questions miss and why, and what changed against a pinned baseline.

Figures come from `inspector.core.evaluation.metrics` on the retrieval worker (see `RetrievalController`);
this module formats them. It says which embeddings they were computed with ("exact", "pooled
preview", "BM25 until the model is ready") and greys them out while a re-chunk is being scored.
Selecting a question runs it in the question bar and marks where its answer lies in the text.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from inspector.core.api import change_interval, num, pct, pts, spread
from inspector.core.viewmodel.settings_schema import Setting
from inspector.qt import theme
from inspector.qt.controllers.retrieval import (
    FALLBACK,
    POOLED,
    Baseline,
    RetrievalController,
)
from inspector.qt.panels.elided_label import ElidedLabel
from inspector.qt.panels.gold_model import (
    COL_ANSWER,
    COL_BASELINE,
    COL_DIAGNOSIS,
    COL_HIT,
    COL_LINE,
    COL_QUESTION,
    COL_RANK,
    HIT_COLOR,
    MISS_COLOR,
    ROW_ROLE,
    GoldFilterProxy,
    GoldTableModel,
)
from inspector.qt.panels.question_bar import mode_text
from inspector.qt.panels.table_model import row_table
from inspector.qt.settings import Settings

if TYPE_CHECKING:
    from inspector.core.api import Document, GoldQuestion, RetrievalResult
    from inspector.qt.panels.bill_view import BillView

#: The question table keeps at least this width beside the baseline's box; a narrower panel puts
#: the box (at least COMPARE_MIN wide beside the table) under the figures instead.
TABLE_MIN, COMPARE_MIN = 600, 260
#: The figures' column takes at most this share of the panel's width; the intervals get a column
#: of their own when it can hold them (else they are in the figures' tooltips).
SUMMARY_SHARE = 0.45
#: A question table narrower than this hides its Answer column.
NARROW_TABLE = 560

GOLD_FILTER = "Gold sets (*.jsonl *.ndjson *.csv);;All files (*)"
GOLD_SUFFIXES = frozenset({".jsonl", ".ndjson", ".csv"})

GOLD_FILES = Setting("gold/by_document", dict, {},
                     "Gold file last used with each document: {resolved document path: gold file path}.")


# -- plain helpers (no widgets) ------------------------------------------------------------------------

def is_gold_path(path: str | os.PathLike[str]) -> bool:
    return Path(path).suffix.lower() in GOLD_SUFFIXES


def sibling_gold(doc: Document) -> Path | None:
    """`<stem>.gold.jsonl` (or .csv) beside the document, as the bundled handbook has."""
    if not doc.path:
        return None
    p = Path(doc.path)
    for suffix in (".gold.jsonl", ".gold.ndjson", ".gold.csv"):
        cand = p.with_name(p.stem + suffix)
        if cand.is_file():
            return cand
    return None


def _context_change(baseline: Any, report: Any) -> float | None:
    """The change of context tokens per question against the baseline (issue 29: "better" at
    four times the context showed no delta of it)."""
    a = baseline.report.context_tokens_mean if baseline is not None else None
    b = report.context_tokens_mean if report is not None else None
    return None if a is None or b is None else b - a


def context_delta(before: Any, after: Any, budget: int | None = None) -> str:
    """ "Context per question: 859 → 3,302 tokens (+2,443)": what the LLM is handed per question by
    the baseline and by the current settings (within the budget, when one is set); "" when either
    is unknown (issue 29: "better" at four times the context said nothing of it)."""
    def tokens(report: Any) -> float | None:
        if report is None:
            return None
        return report.tokens_sent_mean if budget is not None else report.context_tokens_mean
    a, b = tokens(before), tokens(after)
    if a is None or b is None:
        return ""
    within = f" within the {budget:,}-token budget" if budget is not None else ""
    return f"Context per question{within}: {a:,.0f} → {b:,.0f} tokens ({b - a:+,.0f})"

class GoldFiles:
    """Which gold file goes with which document, remembered in the settings store."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    @staticmethod
    def _key(doc: Document) -> str | None:
        return str(Path(doc.path).resolve()) if doc.path else None

    def remembered(self, doc: Document) -> Path | None:
        key = self._key(doc)
        if key is None:
            return None
        path = self.settings.get(GOLD_FILES).get(key)
        return Path(path) if isinstance(path, str) and Path(path).is_file() else None

    def remember(self, doc: Document, path: str | os.PathLike[str]) -> None:
        key = self._key(doc)
        if key is None:
            return
        table = self.settings.get(GOLD_FILES)
        table[key] = str(Path(path).resolve())
        self.settings.set(GOLD_FILES, table)

    def for_document(self, doc: Document) -> Path | None:
        """The remembered gold file, else a sibling one."""
        return self.remembered(doc) or sibling_gold(doc)


def delta_text(name: str, d: float | None) -> str:
    """A metric's change against the baseline, in the metric's own unit."""
    if d is None:
        return ""
    if name == "hit_rate":
        return pts(d)
    if name in ("chunks", "embedded_tokens", "context_tokens_mean"):
        return f"{d:+,.0f}"
    if name == "inflation":
        return f"{d:+.2f}×"
    return f"{d:+.3f}"


def mode_label(result: RetrievalResult | None, controller: RetrievalController) -> str:
    return mode_text(result, controller)[0]


# -- the panel ------------------------------------------------------------------------------------------

METRICS = (("hit_rate", "Hit rate@k"), ("mrr", "MRR"), ("recall", "Recall@k"), ("precision", "Precision@k"),
           ("iou", "IoU"), ("hit_at_budget", "Hit@budget"), ("context_tokens_mean", "Context tokens"),
           ("chunks", "Chunks indexed"), ("embedded_tokens", "Embedded tokens"), ("inflation", "Token inflation"))
"""What the summary shows (the span metrics only when the gold set has reference spans, hit@budget
only with a budget)."""
HIGHER_IS_BETTER = {"hit_rate", "mrr", "recall", "precision", "iou", "hit_at_budget"}
#: Metrics whose change against the baseline gets a paired interval and a verdict.
PAIRED = {"hit_rate", "mrr", "recall", "precision", "iou", "hit_at_budget"}
RETRIEVER_NAMES = {"dense": "Dense", "bm25": "BM25", "hybrid": "Hybrid"}
#: Metrics that are shares (written as percentages, their intervals in points).
SHARES = {"hit_rate", "hit_at_budget"}


def ci_text(key: str, ci: Any) -> str:
    """"[89–99 %]" for rates, "[0.81–0.93]" for the rest; "" without an interval."""
    if ci is None:
        return ""
    lo, hi = ci
    return spread(lo, hi, share=key in SHARES)


def _span_metric(key: str) -> bool:
    """Whether a metric is measured on the questions with reference spans alone (the core's
    SPAN_METRICS, read when figures are shown: the evaluation module is not the window's to import
    at start-up)."""
    from inspector.core.api import SPAN_METRICS

    return key in SPAN_METRICS


def verdict_text(key: str, d: Any) -> tuple[str, str]:
    """(short verdict for the delta column, tooltip) of a `PairedDelta`."""
    lo, hi = d.ci
    share = key in SHARES
    tip = f"Paired 95 % interval of the change: {change_interval(lo, hi, share=share)}{' pts' if share else ''}"
    if d.p_value is not None:
        tip += f"; McNemar p = {d.p_value:.2g} ({d.fixed} fixed, {d.broke} broken)"
    if d.verdict == "within noise":
        if d.questions_needed:
            which = f"questions with reference spans would (it has {d.n})" if _span_metric(key) \
                else "questions would"
            tip += (f". This gold set cannot tell the two apart; about {d.questions_needed:,} {which}, "
                    "at this difference")
        return "within noise", tip
    return d.verdict, tip


class GoldPanel(QWidget):
    """A head row (the gold file, what answered, Load/Pin/Clear) over the figures, the question
    table and, with a baseline pinned, the questions fixed and broken; laid out for the panel's
    width (`_place_compare`) so a short, narrow dock keeps its buttons, list and columns in view."""

    questionSelected = Signal(object)
    """GoldQuestion the user selected (the window asks it and marks its answer)."""
    goldLoaded = Signal(str)
    """Path of a gold file loaded from this panel (the window remembers it for the document)."""
    loadFailed = Signal(str)

    def __init__(self, controller: RetrievalController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.model = GoldTableModel(self)
        self.proxy = GoldFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.result: RetrievalResult | None = None
        self.last_dir = ""
        self.bill_view: BillView | None = None
        """The bill of the gold report (`set_bill`): index cost, context per question, time."""
        self._compare_wide: bool | None = None
        self._show_ci = True
        self._user_split = False
        """True once the user dragged the splitter: the panel stops sizing its columns."""

        head = self._build_head()
        self._build_summary()
        self._build_compare()
        self._build_table()
        self._build_splitters()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addLayout(head)
        lay.addWidget(self.splitter, 1)
        self._connect()
        self._on_gold(controller.gold)
        self._on_baseline(controller.baseline)

    def _build_head(self) -> QHBoxLayout:
        """The head row spans the panel: what is loaded, what answered, and the buttons, always in
        view however short the dock is. Its texts shorten with "…" (whole in their tooltips)
        rather than being cut mid-word ("60 questi")."""
        self.file_label = ElidedLabel("No gold set")
        self.file_label.set_elide(True)
        self.file_label.setStyleSheet("font-weight: 600;")
        self.file_label.setMinimumWidth(60)
        self.load_button = QPushButton("Load…")
        self.load_button.setToolTip("Load a gold set: JSONL, CSV (question,answer[,source]) or Chroma's CSV")
        self.mode = ElidedLabel()
        self.mode.set_elide(True)
        self.mode.setMinimumWidth(40)
        self.stale_label = QLabel("recomputing…")
        self.stale_label.setStyleSheet(f"color: {theme.WARNING};")
        self.stale_label.setToolTip("The figures belong to the previous chunks until the new ones are scored")
        self.stale_label.hide()
        self.pin_button = QPushButton("Pin as Baseline")
        self.pin_button.setToolTip("Keep this configuration's report: later settings show each figure's change "
                                   "against it, and the questions they fix and break")
        self.clear_button = QPushButton("Clear")
        self.clear_button.setToolTip("Forget the baseline")
        head = QHBoxLayout()
        head.setContentsMargins(6, 3, 6, 1)
        head.setSpacing(6)
        head.addWidget(self.file_label, 3)
        head.addWidget(self.mode, 2)
        head.addWidget(self.stale_label)
        head.addWidget(self.load_button)
        head.addWidget(self.pin_button)
        head.addWidget(self.clear_button)
        return head

    def _build_figures(self) -> QGridLayout:
        """A row per metric: its name, its value, its interval and its change against the baseline.
        The name gives way (elided, whole in its tooltip); the figures beside it never do: their
        minimum widths are their texts' (`_fit_summary`)."""
        self.metric_labels: dict[str, tuple[ElidedLabel, QLabel, QLabel]] = {}
        self.ci_labels: dict[str, QLabel] = {}
        grid = QGridLayout()
        grid.setContentsMargins(0, 2, 0, 2)
        grid.setHorizontalSpacing(8)
        grid.setVerticalSpacing(2)
        for row, (key, title) in enumerate(METRICS):
            name, value, delta, ci = ElidedLabel(title), QLabel("–"), QLabel(""), QLabel("")
            name.set_elide(True)
            name.setMinimumWidth(name.fontMetrics().averageCharWidth() * 5)
            value.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            delta.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            ci.setStyleSheet(f"color: {theme.QUIET};")
            small = ci.font()
            small.setPointSizeF(small.pointSizeF() * 0.85)
            ci.setFont(small)
            ci.setToolTip("95 % bootstrap interval (questions resampled): where the figure would land "
                          "on other questions like these")
            if key == "hit_rate":
                f = value.font()
                f.setBold(True)
                f.setPointSizeF(f.pointSizeF() * 1.25)
                value.setFont(f)
            grid.addWidget(name, row, 0)
            grid.addWidget(value, row, 1)
            grid.addWidget(ci, row, 2)
            grid.addWidget(delta, row, 3)
            self.metric_labels[key] = (name, value, delta)
            self.ci_labels[key] = ci
        grid.setColumnStretch(0, 1)
        return grid

    def _build_budget(self) -> QHBoxLayout:
        self.budget_spin = QSpinBox()
        self.budget_spin.setRange(0, 32_000)
        self.budget_spin.setSingleStep(100)
        self.budget_spin.setSpecialValueText("off")
        self.budget_spin.setSuffix(" tokens")
        self.budget_spin.setValue(self.controller.budget or 0)
        self.budget_spin.setToolTip("Context budget: the top-k chunks packed in rank order into this many "
                                    "cl100k tokens (the chunk that crosses it is cut); Hit@budget says how "
                                    "often the answer is in what the LLM is handed")
        self.budget_spin.setKeyboardTracking(False)
        row = QHBoxLayout()
        row.addWidget(QLabel("Context budget"))
        row.addWidget(self.budget_spin)
        row.addStretch(1)
        return row

    def _build_summary(self) -> None:
        """The figures' column: the metrics, the context budget, the retrievers side by side and
        the notes (pooled and exact disagree, the gold file's warnings), in a scroll area."""
        grid = self._build_figures()
        budget_row = self._build_budget()
        self.retrievers = QLabel()
        self.retrievers.setWordWrap(True)
        self.retrievers.setTextFormat(Qt.TextFormat.RichText)
        self.retrievers.setToolTip("The same chunks scored by each retriever (exact figures): choose the "
                                   "retriever by evidence, not by habit")
        self.retrievers.hide()
        self.disagreement = QLabel()
        self.disagreement.setWordWrap(True)
        self.disagreement.setStyleSheet(f"color: {theme.WARNING};")
        self.disagreement.hide()
        self.warnings = QLabel()
        self.warnings.setWordWrap(True)
        self.warnings.setStyleSheet(f"color: {theme.WARNING};")
        self.warnings.hide()
        summary = QWidget()
        side = QVBoxLayout(summary)
        side.setContentsMargins(6, 2, 6, 4)
        side.setSpacing(4)
        side.addLayout(grid)
        side.addLayout(budget_row)
        side.addWidget(self.retrievers)
        side.addWidget(self.disagreement)
        side.addWidget(self.warnings)
        side.addStretch(1)
        self._grid, self._budget_row, self._side = grid, budget_row, side
        summary_scroll = QScrollArea()
        summary_scroll.setWidget(summary)
        summary_scroll.setWidgetResizable(True)
        summary_scroll.setFrameShape(QFrame.Shape.NoFrame)
        summary_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        summary_scroll.setMinimumWidth(190)
        # Labels wrap to the column instead of widening it past what is visible; the column is
        # never narrower than its figures (`_fit_summary`).
        summary.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.summary = summary
        self.summary_scroll = summary_scroll

    def _build_compare(self) -> None:
        """Against the baseline: what it was, the boundary counts, the questions fixed and broken
        (shown while one is pinned; beside the table when the panel is wide, under the figures
        when it is not, never below the fold of the figures: `_place_compare`)."""
        self.baseline_label = ElidedLabel("No baseline pinned.")
        self.baseline_label.setWordWrap(True)
        self.baseline_label.setEnabled(False)
        self.boundary_label = QLabel()
        """Boundary counts against the baseline (set by the window's `CompareLanes`)."""
        self.boundary_label.setWordWrap(True)
        self.boundary_label.hide()
        self.changes = QListWidget()
        self.changes.setToolTip("Questions the current settings fixed or broke against the baseline")
        self.changes.hide()
        self.changes.setMinimumHeight(40)
        self.changes.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.changes.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.changes.setUniformItemSizes(True)
        compare = QWidget()
        cv = QVBoxLayout(compare)
        cv.setContentsMargins(6, 2, 6, 2)
        cv.setSpacing(2)
        cv.addWidget(self.baseline_label)
        cv.addWidget(self.boundary_label)
        cv.addWidget(self.changes, 1)
        self.baseline_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.boundary_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        compare.hide()
        self.compare_box = compare

    def _build_table(self) -> None:
        """The question table, with the count of questions and misses and "Misses only" above it."""
        self.view = row_table(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(COL_LINE, Qt.SortOrder.AscendingOrder)
        self.view.setAlternatingRowColors(True)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        fm = self.view.fontMetrics()
        for col, sample in ((COL_LINE, "99"), (COL_ANSWER, "every 36 months"), (COL_HIT, "miss"),
                            (COL_RANK, "Rank"), (COL_BASELINE, "Baseline")):
            self.view.setColumnWidth(col, fm.horizontalAdvance(sample) + 18)
        # Question and diagnosis share what is left; the short columns keep their widths. Below
        # MIN_TEXT_COLUMN each, the table scrolls sideways instead of cutting them to nothing.
        header.setSectionResizeMode(COL_QUESTION, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(COL_DIAGNOSIS, QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(fm.horizontalAdvance("Rank") + 14)
        self.view.setColumnHidden(COL_BASELINE, True)
        self.misses_only = QCheckBox("Misses only")
        self.count_label = ElidedLabel()
        self.count_label.set_elide(True)
        table_box = QWidget()
        tv = QVBoxLayout(table_box)
        tv.setContentsMargins(0, 0, 0, 0)
        tv.setSpacing(2)
        bar = QHBoxLayout()
        bar.setContentsMargins(6, 2, 6, 0)
        bar.addWidget(self.count_label, 1)
        bar.addWidget(self.misses_only)
        tv.addLayout(bar)
        tv.addWidget(self.view, 1)
        self.table_box = table_box

    def _build_splitters(self) -> None:
        """The figures (over the baseline's box when the panel is narrow) beside the table."""
        self.left_split = QSplitter(Qt.Orientation.Vertical)
        self.left_split.setChildrenCollapsible(False)
        self.left_split.addWidget(self.summary_scroll)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.left_split)
        self.splitter.addWidget(self.table_box)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([320, 810])

    def _connect(self) -> None:
        controller = self.controller
        self.model.appearanceChanged.connect(self.view.viewport().update)
        self.misses_only.toggled.connect(self.proxy.set_misses_only)
        self.splitter.splitterMoved.connect(self._on_splitter_moved)
        self.load_button.clicked.connect(self.load_dialog)
        self.pin_button.clicked.connect(controller.pin_baseline)
        self.budget_spin.valueChanged.connect(lambda v: controller.set_budget(v or None))
        self.clear_button.clicked.connect(controller.clear_baseline)
        self.view.selectionModel().currentRowChanged.connect(self._on_current)
        self.view.activated.connect(lambda idx: self._on_current(idx, QModelIndex()))
        self.changes.itemActivated.connect(self._on_change_item)
        self.changes.itemClicked.connect(self._on_change_item)
        controller.goldChanged.connect(self._on_gold)
        controller.resultReady.connect(self._on_result)
        controller.cleared.connect(lambda: self._on_result(None))
        controller.staleChanged.connect(self._on_stale)
        controller.baselineChanged.connect(self._on_baseline)
        controller.comparisonChanged.connect(self._on_comparison)
        controller.disagreementChanged.connect(self._on_disagreement)
        controller.modelStateChanged.connect(lambda _s: self._show_mode())

    # -- loading -----------------------------------------------------------------------------------
    def load_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Load gold set", self.last_dir, GOLD_FILTER)
        if path:
            self.open_gold(path)

    def open_gold(self, path: str | os.PathLike[str]) -> bool:
        """Load a gold file; a problem is shown (file, line, field) and the old set stays."""
        from inspector.core.api import InputError

        try:
            self.controller.load_gold(path)
        except InputError as exc:
            self.loadFailed.emit(exc.one_line())
            return False
        except OSError as exc:
            self.loadFailed.emit(str(exc))
            return False
        self.last_dir = str(Path(path).parent)
        self.goldLoaded.emit(str(path))
        return True

    # -- reactions -----------------------------------------------------------------------------------
    def _on_gold(self, gold: Any) -> None:
        questions = self.controller.gold_questions
        if questions != self.model.questions:
            self.model.set_questions(questions)
        if gold is None:
            self.file_label.setText("No gold set")
            self.file_label.setToolTip("Load one, or select an answer in the text and add a question for it "
                                       "(Edit ▸ Add to Gold Set…)")
            self.warnings.hide()
        else:
            name = Path(gold.path).name
            fmt = {"jsonl": "JSONL", "csv": "CSV", "chroma": "Chroma CSV"}.get(gold.format, gold.format)
            others = len(gold.questions) - len(questions)
            more = f", {others} about other documents" if others else ""
            self.file_label.setText(f"{name} · {len(questions)} questions{more}")
            self.file_label.setToolTip(f"{gold.path} ({fmt})")
            if gold.warnings:
                self.warnings.setText(f"⚠ {len(gold.warnings)} warning(s) in the gold file (hover)")
                self.warnings.setToolTip("\n".join(w.one_line() for w in gold.warnings[:30]))
                self.warnings.show()
            else:
                self.warnings.hide()
        self._show_metrics()
        self._update_count()

    def _on_result(self, result: RetrievalResult | None) -> None:
        self.result = result
        report = result.report if result is not None else None
        # The baseline's outcome per question, matched by question (its gold set may differ).
        self.model.set_results(report.questions if report is not None else None,
                               self.controller.baseline_results())
        self.model.set_stale(self.controller.stale)
        self._show_metrics()
        self._show_retrievers()
        self._show_mode()
        self._update_count()
        if self.bill_view is not None:
            self.bill_view.set_report(report) if report is not None else self.bill_view.clear()

    def set_bill(self, bill) -> None:
        """Show the bill (`inspector.qt.controllers.bill.BillState`) under the figures, with the prices."""
        from inspector.qt.panels.bill_view import BillView

        view = self.bill_view = BillView(bill, editable=True)
        self._side.insertWidget(self._side.indexOf(self.retrievers), view)
        report = self.result.report if self.result is not None else None
        if report is not None:
            view.set_report(report)

    def _show_retrievers(self) -> None:
        """Dense, BM25 and hybrid side by side on the same chunks (exact stages only); the one in use
        bold. Kept from the last exact stage while a preview is shown."""
        r = self.result
        if r is None or r.report is None:
            self.retrievers.hide()
            return
        if not r.alternatives:
            return
        parts = []
        for name in ("dense", "bm25", "hybrid"):
            rep = r.alternatives.get(name)
            if rep is None:
                continue
            text = f"{RETRIEVER_NAMES[name]} {pct(rep.hit_rate)}"
            parts.append(f"<b>{text}</b>" if name == r.retriever else text)
        self.retrievers.setText(f"Hit rate@{r.request.k} by retriever: " + " · ".join(parts))
        self.retrievers.setVisible(len(parts) > 1)

    def _on_stale(self, stale: bool) -> None:
        self.model.set_stale(stale)
        self.stale_label.setVisible(stale)
        for _n, value, delta in self.metric_labels.values():
            value.setEnabled(not stale)
            delta.setEnabled(not stale)

    def _on_baseline(self, baseline: Baseline | None) -> None:
        self.clear_button.setEnabled(baseline is not None)
        self.view.setColumnHidden(COL_BASELINE, baseline is None)
        self.compare_box.setVisible(baseline is not None)
        self._place_compare(force=True)
        if baseline is None:
            self.baseline_label.setText("No baseline pinned: pin one, change the settings, and see what they fix "
                                        "and break.")
            self.changes.hide()
        else:
            self._show_baseline_label()
        r = self.result
        self.model.set_results(r.report.questions if r is not None and r.report is not None else None,
                               self.controller.baseline_results())
        self._update_pin()

    def _show_baseline_label(self) -> None:
        baseline = self.controller.baseline
        if baseline is None:
            return
        label = baseline.config.label() if baseline.config is not None else "?"
        mode = {POOLED: " (pooled preview)", FALLBACK: " (BM25 stand-in)"}.get(baseline.mode, "")
        text = f"Baseline: {label}{mode} · hit rate {pct(baseline.report.hit_rate)}"
        cmp = self.controller.comparison
        r = self.result
        if cmp is not None and cmp.note():
            text += f"\nThe gold set changed since it was pinned: {cmp.note()}."
        elif cmp is None and r is not None and r.report is not None:
            text += "\nThe baseline's gold set has no question in common with this one: nothing to compare."
        key = "hit_at_budget" if self.controller.budget is not None else "hit_rate"
        d = self.controller.paired.get(key)
        cost = context_delta(baseline.report, r.report if r is not None else None, self.controller.budget)
        if d is not None and d.delta != 0:
            if d.verdict == "within noise":
                need = (f"; about {d.questions_needed:,} questions would tell them apart"
                        if d.questions_needed else "")
                text += f"\nThe change is within noise on these {d.n} questions{need}."
            else:
                text += (f"\nThe current settings are {d.verdict}, {d.delta * 100:+.1f} points "
                         "(paired interval excludes zero).")
        if cost:
            text += f"\n{cost}"
        self.baseline_label.setText(text)

    def _on_comparison(self, cmp: Any) -> None:
        self._show_baseline_label()
        self._show_metrics()
        self.changes.clear()
        if cmp is None:
            self.changes.setVisible(False)
            return
        if cmp.left_out:
            note = QListWidgetItem(f"{cmp.left_out} new question(s) not in the baseline: compared on the "
                                   f"{len(cmp.after.questions)} both scored")
            note.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.changes.addItem(note)
        for title, items, color in (("Broke", cmp.broke, MISS_COLOR), ("Fixed", cmp.fixed, HIT_COLOR)):
            head = QListWidgetItem(f"{title}: {len(items)}")
            font = head.font()
            font.setBold(True)
            head.setFont(font)
            head.setForeground(color)
            head.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.changes.addItem(head)
            for ch in items:
                item = QListWidgetItem(f"   {ch.question.question}")
                why = ch.after.diagnosis if title == "Broke" else ch.before.diagnosis
                item.setToolTip((why.message + "\n" if why is not None else "")
                                + "Click: select it and show its answer in the text")
                item.setData(Qt.ItemDataRole.UserRole, ch.question)
                self.changes.addItem(item)
        self.changes.setVisible(True)

    def _on_disagreement(self, text: str) -> None:
        self.disagreement.setText(text)
        self.disagreement.setVisible(bool(text))

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid():
            return
        row = self.proxy.data(current, ROW_ROLE)
        if row is not None and 0 <= row < len(self.model.questions):
            self.questionSelected.emit(self.model.questions[row])

    def _on_change_item(self, item: QListWidgetItem) -> None:
        q = item.data(Qt.ItemDataRole.UserRole)
        if q is None:
            return
        row = self.proxy.data(self.view.currentIndex(), ROW_ROLE) if self.view.currentIndex().isValid() else None
        if row is not None and 0 <= row < len(self.model.questions) and self.model.questions[row] == q:
            self.questionSelected.emit(q)  # selected already: show its answer again
        else:
            self.select_question(q)

    # -- geometry ----------------------------------------------------------------------------------
    def resizeEvent(self, e) -> None:
        super().resizeEvent(e)
        self._place_compare()

    def _on_splitter_moved(self, *_args) -> None:
        self._user_split = True

    def _place_compare(self, force: bool = False) -> None:
        """Fit the panel to its width (until the user drags the splitter): the baseline's box
        beside the table when the table keeps TABLE_MIN beside it, else under the figures; the
        intervals in a column of their own when there is room, else in the figures' tooltips; the
        Answer column only in a table wider than NARROW_TABLE."""
        width = self.width()
        pinned = self.compare_box.isVisibleTo(self)
        wide = width - self._summary_width(False, True) - COMPARE_MIN >= TABLE_MIN
        if wide != self._compare_wide:
            self._compare_wide = wide
            (self.splitter if wide else self.left_split).addWidget(self.compare_box)
            # Under the figures the baseline's sentence takes one line (whole in its tooltip).
            self.baseline_label.set_elide(not wide)
            force = True
        beside = COMPARE_MIN if wide and pinned else 0
        ci_need = self._summary_width(True, pinned)
        show_ci = ci_need <= width * SUMMARY_SHARE and width - ci_need - beside >= TABLE_MIN
        if show_ci != self._show_ci:
            self._show_ci = show_ci
            self._show_metrics()
        if self._user_split and not force:
            return
        summary = max(240, min(self._summary_width(show_ci, pinned), int(width * SUMMARY_SHARE)))
        if pinned and not wide:
            summary = max(summary, min(int(width * 0.4), 460))  # the fixed/broke list shares it
        compare = max(COMPARE_MIN, min(380, int(width * 0.22), width - summary - TABLE_MIN)) if wide and pinned \
            else 0
        sizes = [summary, max(1, width - summary - compare)]
        if wide:
            sizes.append(compare)
        self.splitter.setSizes(sizes)
        # A narrow table drops the answers (the question's tooltip and the marks in the text show
        # them) so the questions and diagnoses stay readable.
        self.view.setColumnHidden(COL_ANSWER, self.splitter.sizes()[1] < NARROW_TABLE)
        if not wide and pinned:
            h = max(1, self.left_split.height())
            self.left_split.setSizes([h * 9 // 20, h - h * 9 // 20])

    def _fit_summary(self) -> None:
        """Keep the figures' column at least as wide as its figures need, whatever the dock gives
        the panel. The column ignores its contents' widths (so that sentences wrap to it), and the
        scroll area had let a narrow dock squeeze the grid: a right-aligned "88.3 %  (53/60)" lost
        its first digit and read "8.3 %". Only the metric names (elided) and the wrapping sentences
        give way; a panel too narrow for the rest is the dock's minimum, not a clipped figure."""
        need = max(self._grid.minimumSize().width(), self._budget_row.minimumSize().width())
        margins = self._side.contentsMargins()
        need += margins.left() + margins.right()
        if self.summary.minimumWidth() != need:
            self.summary.setMinimumWidth(need)
        bar = self.summary_scroll.style().pixelMetric(self.summary_scroll.style().PixelMetric.PM_ScrollBarExtent)
        scroll = max(190, need + bar + 2 * self.summary_scroll.frameWidth())
        if self.summary_scroll.minimumWidth() != scroll:
            self.summary_scroll.setMinimumWidth(scroll)

    def _summary_width(self, ci: bool, deltas: bool) -> int:
        """What the figures' column needs for its widest texts (name, value, and the interval and
        the change against a baseline when shown)."""
        name = max(n.fontMetrics().horizontalAdvance(t) for (n, _v, _d), (_k, t) in
                   zip(self.metric_labels.values(), METRICS, strict=True))
        value_label = self.metric_labels["hit_rate"][1]
        value = value_label.fontMetrics().horizontalAdvance("100.0 %  (99/99)")
        delta = self.metric_labels["hit_rate"][2].fontMetrics().horizontalAdvance("+10.0 pts · noise") \
            if deltas else 0
        interval = self.ci_labels["hit_rate"].fontMetrics().horizontalAdvance("[100–100 %]") if ci else 0
        spacing = 8 * (1 + bool(deltas) + bool(ci))
        return name + value + delta + interval + spacing + 12 + 16  # margins, scroll bar

    # -- presentation ------------------------------------------------------------------------------
    def _show_mode(self) -> None:
        r = self.result
        if self.controller.gold is None:
            self.mode.setText("")
            return
        label = mode_label(r, self.controller)
        if r is not None and r.report is not None:
            text = f"k = {r.request.k} · {r.retriever} · {label}"
            view = r.config.embed_view if r.config is not None else "raw"
            if view != "raw":  # the embedding view these figures were computed under (issue 29)
                text += f" · {view} view"
        else:
            text = label or "waiting for chunks"
        warn = r is not None and r.mode == FALLBACK
        pooled = r is not None and r.mode == POOLED
        self.mode.setText(text)
        self.mode.setToolTip(mode_text(r, self.controller)[1])
        self.mode.setStyleSheet(f"color: {theme.WARNING if warn else theme.POOLED if pooled else theme.GOOD};")
        self._update_pin()

    def _show_metrics(self) -> None:
        r = self.result
        report = r.report if r is not None else None
        cmp = self.controller.comparison
        spans = report is not None and report.recall is not None
        intervals = (r.intervals or {}) if r is not None else {}
        paired = self.controller.paired if cmp is not None else {}
        for key, (name, value, delta) in self.metric_labels.items():
            span_metric = _span_metric(key)
            shown = (not span_metric or spans) and (key != "hit_at_budget" or self.controller.budget is not None)
            ci = self.ci_labels[key]
            for w in (name, value, delta):
                w.setVisible(shown)
            ci.setVisible(shown and self._show_ci)
            ci.setText(ci_text(key, intervals.get(f"{key}_ci")))
            if key == "context_tokens_mean":
                name.setToolTip("cl100k tokens of the top-k chunks handed to the LLM per question (mean): "
                                "hit rate rewards big chunks, this is what they cost")
            if key == "hit_rate":
                name.setText(f"Hit rate@{report.k}" if report is not None else "Hit rate@k")
            elif key == "recall":
                name.setText(f"Recall@{report.k}" if report is not None else "Recall@k")
            elif key == "precision":
                name.setText(f"Precision@{report.k}" if report is not None else "Precision@k")
            value.setText(self._value(key, report))
            tip = f"{report.hits} of {len(report.questions)} questions" if key == "hit_rate" and report is not None \
                else ""
            if span_metric and report is not None and report.span_scope():
                tip = (f"The mean over the {report.span_scope()} that carry reference spans; the other "
                       f"{len(report.questions) - report.span_questions} have an answer string only and count "
                       "in the hit rate and MRR alone")
            if span_metric:
                name.setToolTip(tip)
            if not self._show_ci and ci.text():
                tip = (tip + "\n" if tip else "") + f"95 % bootstrap interval: {ci.text()}"
            value.setToolTip(tip)
            d = cmp.delta(key) if cmp is not None and key in {m.name for m in cmp.deltas} else None
            if key == "context_tokens_mean" and d is None and cmp is not None:
                d = _context_change(self.controller.baseline, report)
            delta.setText(delta_text(key, d))
            delta.setToolTip("")
            pd = paired.get(key) if key in PAIRED else None
            if pd is not None and d is not None and abs(d) >= 1e-12:
                verdict, tip = verdict_text(key, pd)
                if verdict == "within noise":
                    delta.setText(f"{delta_text(key, d)} · noise")
                    delta.setStyleSheet(f"color: {theme.QUIET};")
                    delta.setToolTip(tip)
                    continue
                delta.setToolTip(tip)
            if d is None or abs(d) < 1e-12:
                delta.setStyleSheet("")
            else:
                good = (d > 0) == (key in HIGHER_IS_BETTER)
                neutral = key not in HIGHER_IS_BETTER
                color = theme.QUIET if neutral else (theme.GOOD if good else theme.BAD)
                delta.setStyleSheet(f"color: {color};")
        self._fit_summary()

    @staticmethod
    def _value(key: str, report: Any) -> str:
        if report is None:
            return "–"
        if key == "hit_rate":
            return f"{pct(report.hit_rate)}  ({report.hits}/{len(report.questions)})"
        if key == "mrr":
            return num(report.mrr)
        if _span_metric(key):
            # Over the questions with spans alone: how many, beside the figure ("11 of 64 q"), as
            # the hit rate says its own (`Report.span_scope`).
            m, n = report.span_questions, len(report.questions)
            return num(getattr(report, key)) + (f"  ({m} of {n} q)" if report.span_scope() else "")
        if key == "hit_at_budget":
            return pct(report.hit_at_budget)
        if key == "context_tokens_mean":
            return "–" if report.context_tokens_mean is None else f"{report.context_tokens_mean:,.0f}"
        c = report.cost
        if key == "chunks":
            return f"{c.chunks:,}"
        if key == "embedded_tokens":
            return f"{c.embedded_tokens:,}"
        return f"{c.inflation:.2f}×"

    def _update_pin(self) -> None:
        r = self.result
        self.pin_button.setEnabled(r is not None and r.report is not None)

    def _update_count(self) -> None:
        n = len(self.model.questions)
        res = self.model.results
        if not n:
            self.count_label.setText("")
        elif res:
            misses = sum(1 for x in res if not x.hit)
            self.count_label.setText(f"{n} questions · {misses} missed · select one to ask it and see its answer")
        else:
            self.count_label.setText(f"{n} questions")

    # -- queries (tests, the window) ---------------------------------------------------------------
    def select_question(self, q: GoldQuestion) -> None:
        """Select the question's row (which runs it as the query)."""
        if q not in self.model.questions:
            return
        row = self.model.questions.index(q)
        idx = self.proxy.mapFromSource(self.model.index(row, COL_QUESTION))
        if not idx.isValid():
            self.misses_only.setChecked(False)
            idx = self.proxy.mapFromSource(self.model.index(row, COL_QUESTION))
        self.view.selectionModel().setCurrentIndex(
            idx, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
        self.view.scrollTo(idx)

    def set_boundary_summary(self, text: str, tooltip: str = "") -> None:
        """How the current boundaries differ from the baseline's (rich text; "" hides the line)."""
        self.boundary_label.setText(text)
        self.boundary_label.setToolTip(tooltip)
        self.boundary_label.setVisible(bool(text))

    def fixed_questions(self) -> list[str]:
        cmp = self.controller.comparison
        return [c.question.question for c in cmp.fixed] if cmp is not None else []

    def broke_questions(self) -> list[str]:
        cmp = self.controller.comparison
        return [c.question.question for c in cmp.broke] if cmp is not None else []

    def metric_text(self, key: str) -> tuple[str, str]:
        """(value, delta) as shown."""
        _n, value, delta = self.metric_labels[key]
        return value.text(), delta.text()


__all__ = ["GoldPanel", "GoldFiles", "GOLD_FILES", "is_gold_path", "sibling_gold", "GOLD_FILTER",
           "delta_text"]
