"""The sweep dialog: score a size × overlap grid (for one or more strategies) on the current document
and gold set, in the background, and pick a configuration from a heatmap of hit rate.

The grid runs `inspector.core.evaluation.sweep.sweep` on a worker thread with progress and cancel: pooled
vectors score every cell fast, then the best cells are confirmed with exact embeddings (what a
pipeline would see); BM25 needs no vectors at all. Clicking a cell applies its configuration to the
strategy panel.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from inspector.core.api import (
    Embedding,
    EmbedView,
    Retriever,
    change_interval,
    num,
    pct,
    pts,
    settle_text,
    units_sentence,
)
from inspector.qt.controllers.retrieval import RETRIEVERS, RetrievalController
from inspector.qt.controllers.retrieval_jobs import sweep_job
from inspector.qt.controllers.state import InspectorState
from inspector.qt.dialogs.heatmap import LAYERS, Cell, Heatmap
from inspector.qt.panels.question_bar import RETRIEVER_LABELS
from inspector.qt.runner import JobRunner
from inspector.qt.theme import BAD, WARNING

POOLED_THEN_EXACT, EXACT_ONLY = "pooled", "exact"


def parse_ints(text: str) -> list[int]:
    """'200, 400 800' -> [200, 400, 800]; ValueError naming the bad item."""
    out: list[int] = []
    for item in text.replace(",", " ").split():
        try:
            out.append(int(item))
        except ValueError:
            raise ValueError(f"'{item}' is not a whole number") from None
    return sorted(dict.fromkeys(out))


def suggest_grid(strategy: str, params: dict) -> tuple[list[int], list[int]]:
    """Sizes around the current one and a few overlaps, within the strategy's declared ranges (its
    "size" and "overlap" roles; sentence overlaps against token sizes get small counts)."""
    from inspector.core.api import get_strategy

    strat = get_strategy(strategy)
    p = strat.param_for_role("size")
    if p is None:
        return [], [0]
    s = int(params.get(p.name, p.default))
    sizes = sorted({int(min(p.maximum, max(p.minimum, round(s * f)))) for f in (0.5, 1.0, 1.5, 2.0)})
    ov = strat.param_for_role("overlap")
    if ov is None:
        return sizes, [0]
    if ov.unit != p.unit:
        return sizes, [0, 1, 2]
    base = min(sizes)
    return sizes, sorted({0, int(round(base * 0.1)), int(round(base * 0.2))})


def build_cells(strategies: Sequence[str], sizes: Sequence[int | None], overlaps: Sequence[int | None], *, k: int,
                retriever: Retriever, embedding: Embedding, embed_view: EmbedView = "raw"
                ) -> tuple[dict, list, list]:
    """(cells by (strategy, size, overlap), distinct configs to run, skipped points)."""
    from inspector.core.api import EvalConfig, get_strategy, sized_params

    cells: dict[tuple[str, int | None, int | None], Cell] = {}
    configs: list = []
    skipped: list[tuple[str, str]] = []
    seen: set = set()
    for strategy in strategies:
        # Without a size role, every size is the same configuration (as in `sweep.grid`).
        try:
            sized = get_strategy(strategy).param_for_role("size") is not None
        except ValueError:  # unregistered meanwhile: each cell reports the unknown name
            sized = True
        for size in sizes or [None]:
            for overlap in overlaps or [None]:
                try:
                    params = sized_params(strategy, size if sized else None, overlap)
                    cfg = EvalConfig(strategy, params, k, retriever, None, embedding, embed_view=embed_view)
                except ValueError as exc:
                    point = f"{strategy} size={size} overlap={overlap}"
                    skipped.append((point, str(exc)))
                    cells[(strategy, size, overlap)] = Cell(strategy, size, overlap, None, None, str(exc))
                    continue
                cells[(strategy, size, overlap)] = Cell(strategy, size, overlap, cfg)
                if cfg not in seen:
                    seen.add(cfg)
                    configs.append(cfg)
    return cells, configs, skipped


def _tokens(x: float | None) -> str:
    return "–" if x is None else f"{x:,.0f}"


def _delta(a: float | None, b: float | None) -> str:
    return "" if a is None or b is None else f", {a - b:+,.0f} against yours"


def recommendation_sentence(rec: Any) -> str:
    """What the cross-validated recommendation says, in two or three sentences, each choice with
    the context tokens per question it hands the LLM, P(better) and what would settle a kept one."""
    lo, hi = rec.gain_ci
    gain = f"{pts(rec.gain)} {change_interval(lo, hi, share=True)}"
    folds = f"{rec.folds}-fold cross-validation over {rec.questions} questions"
    p = "" if rec.p_better is None else f", P(better) {rec.p_better:.2f}"
    cur = f"{_tokens(rec.current_context_tokens)} context tokens per question"
    cand = (f"{_tokens(rec.candidate_context_tokens)} context tokens per question"
            f"{_delta(rec.candidate_context_tokens, rec.current_context_tokens)}")
    fixes = f" It fixes: {', '.join(k.replace('_', ' ') for k in rec.fixes)}." if rec.fixes else ""
    if rec.keep_current:
        if rec.config == rec.current:
            return (f"Recommendation: keep your current settings ({folds}: they are the best-looking; "
                    f"{cur}).")
        return (f"Recommendation: keep your current settings ({cur}). Switching to the best-looking one "
                f"({rec.config.label()}, {cand}) gains {gain}{p} on questions it was not chosen by ({folds}): "
                f"within noise.{fixes} What would settle it: {settle_text(rec)}.")
    fixes_why = (f"it fixes a fault that only partly affects {rec.current.retriever} and is likely better"
                 if rec.fixes_partly else "it fixes a fault of your chunks and is not estimated worse")
    why = {"confirmed": "confirmed", "fixes": fixes_why, "likely": "likely better"}.get(rec.reason, "")
    return (f"Recommendation: switch to {rec.config.label()} ({cand}): it gains {gain}{p} over your current "
            f"settings on questions it was not chosen by ({folds}); {why}.{fixes}")


def findings_sentences(rec: Any) -> str:
    """What is wrong with the current settings, found without the gold set: one line per finding
    with its share and the setting that removes it; "" without a recommendation."""
    if rec is None:
        return ""
    if not rec.findings:
        return ("Findings on your current settings: none (no chunk cut by the embedder; stubs, split "
                "tables, overlap and copies are rare).")
    lines = ["Findings on your current settings (measured without the gold set; its figures in brackets):"]
    lines += [f"• {f.kind.replace('_', ' ')} ({f.share:.0%}): {f.detail}{_finding_note(f)}. Fix: {f.fix}."
              for f in rec.findings]
    return "\n".join(lines)


def _finding_note(f: Any) -> str:
    """How much the fault touches the retriever and what the gold set shows of it, in brackets;
    "" when it touches everything the retriever reads and the gold set has no figure on it."""
    if not f.note:
        return ""
    return f" ({f.note}, so it is no reason to switch)" if not f.counts else f" ({f.note})"


class SweepDialog(QDialog):
    """Grid settings, Run/Cancel with progress, and the heatmap."""

    configChosen = Signal(object)
    """EvalConfig of the clicked cell (exact embeddings: what the window then computes)."""
    finished_sweep = Signal(object)
    """SweepResult of a completed run."""

    def __init__(self, state: InspectorState, controller: RetrievalController, parent: QWidget | None = None, *,
                 synchronous: bool = False) -> None:
        super().__init__(parent)
        self.setWindowTitle("Sweep chunk size and overlap")
        self.state = state
        self.controller = controller
        self.runner = JobRunner(self, synchronous=synchronous, name="sweep")
        self.result: Any = None
        self.cells: dict = {}
        self._grid: tuple[tuple[str, ...], tuple[int | None, ...], tuple[int | None, ...]] = ((), (), ())

        left = self._build_settings()
        right = self._build_results()
        lay = QHBoxLayout(self)
        lay.addLayout(left, 0)
        lay.addLayout(right, 1)
        self.resize(1000, 540)
        self._connect(parent)
        self.reset_from_window()

    def _build_grid_form(self) -> QFormLayout:
        """What to sweep: strategies, sizes, overlaps, k, the retriever, which vectors."""
        from inspector.core.api import strategies

        self.strategy_list = QListWidget()
        self.strategy_list.setMaximumHeight(130)
        for name, strat in strategies().items():
            if getattr(strat, "needs_embedder", False):
                continue  # chunking itself would run the model for every cell
            item = QListWidgetItem(name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked)
            item.setToolTip(strat.description)
            self.strategy_list.addItem(item)
        self.sizes = QLineEdit()
        self.sizes.setToolTip("Chunk sizes, in the strategy's own unit (comma or space separated)")
        self.overlaps = QLineEdit()
        self.overlaps.setToolTip("Overlaps, in the strategy's own unit")
        self.k_spin = QSpinBox()
        self.k_spin.setRange(1, 50)
        self.retriever = QComboBox()
        for name in RETRIEVERS:
            self.retriever.addItem(RETRIEVER_LABELS[name], name)
        self.vectors = QComboBox()
        self.vectors.addItem("Pooled, then confirm the best exactly", POOLED_THEN_EXACT)
        self.vectors.addItem("Exact embeddings for every cell (slow)", EXACT_ONLY)
        self.confirm = QSpinBox()
        self.confirm.setRange(0, 20)
        self.confirm.setValue(3)
        self.confirm.setSuffix(" best cells")
        self.confirm.setToolTip("How many of the best pooled cells are scored again with exact embeddings")
        form = QFormLayout()
        form.addRow("Strategies", self.strategy_list)
        form.addRow("Sizes", self.sizes)
        form.addRow("Overlaps", self.overlaps)
        form.addRow("k", self.k_spin)
        form.addRow("Retriever", self.retriever)
        form.addRow("Vectors", self.vectors)
        form.addRow("Confirm", self.confirm)
        return form

    def _build_settings(self) -> QVBoxLayout:
        """The left column: the grid's form, Run/Cancel/Close, progress and status."""
        form = self._build_grid_form()
        self.run_button = QPushButton("Run Sweep")
        self.run_button.setDefault(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.close_button = QPushButton("Close")
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.progress.hide()
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.units = QLabel()
        self.units.setWordWrap(True)
        self.units.setStyleSheet(f"color: {WARNING};")
        self.units.hide()
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        buttons.addStretch(1)
        buttons.addWidget(self.close_button)
        left = QVBoxLayout()
        left.addLayout(form)
        left.addWidget(self.units)
        left.addLayout(buttons)
        left.addWidget(self.progress)
        left.addWidget(self.status)
        left.addStretch(1)
        return left

    def _build_results(self) -> QVBoxLayout:
        """The right column: what the cells show (hit rate or the bill), the heatmap, the summary."""
        self.heatmap = Heatmap()
        self.layer = QComboBox()
        for key, name in LAYERS.items():
            self.layer.addItem(name.capitalize(), key)
        self.layer.setToolTip("Colour the cells by hit rate or by the bill: indexing cost and context cost "
                              "(prices set in the gold panel), embedding time at this machine's measured speed")
        self.findings = QLabel()
        self.findings.setWordWrap(True)
        self.findings.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.findings.hide()
        self.summary = QLabel("Click a cell to apply its settings to the strategy panel.")
        self.summary.setWordWrap(True)
        self.summary.setEnabled(False)
        right = QVBoxLayout()
        layer_row = QHBoxLayout()
        layer_row.addWidget(QLabel("Show"))
        layer_row.addWidget(self.layer)
        layer_row.addStretch(1)
        right.addLayout(layer_row)
        right.addWidget(self.heatmap, 1)
        right.addWidget(self.findings)
        right.addWidget(self.summary)
        return right

    def _connect(self, parent: QWidget | None) -> None:
        self.layer.currentIndexChanged.connect(lambda _i: self._show_layer())
        self.run_button.clicked.connect(self.run)
        self.cancel_button.clicked.connect(self.cancel)
        self.close_button.clicked.connect(self.close)
        self.runner.stageReady.connect(self._on_result)
        self.runner.progressed.connect(self._on_progress)
        self.runner.errored.connect(self._on_error)
        self.runner.busyChanged.connect(self._on_busy)
        self.heatmap.cellClicked.connect(self._on_cell)
        self.strategy_list.itemChanged.connect(lambda _item: self._show_units())
        self.sizes.textChanged.connect(lambda _t: self._show_units())
        self.state.embedViewChanged.connect(self._on_view)
        bill = getattr(parent, "bill", None)
        if bill is not None:
            bill.changed.connect(self._show_layer)  # a price typed in the gold panel

    # -- settings ------------------------------------------------------------------------------------
    def reset_from_window(self) -> None:
        """Start from the window's strategy, sizes around its size, its k and retriever."""
        strategy = self.state.strategy
        sizes, overlaps = suggest_grid(strategy, self.state.params)
        self.set_strategies([strategy])
        self.sizes.setText(", ".join(map(str, sizes)))
        self.overlaps.setText(", ".join(map(str, overlaps)))
        self.k_spin.setValue(self.controller.k)
        self.retriever.setCurrentIndex(RETRIEVERS.index(self.controller.retriever))
        self.heatmap.set_current(self._current_config())

    def _show_units(self) -> None:
        """Say so under the form when the ticked strategies' sizes are in different units."""
        try:
            sizes: list[int | None] = list(parse_ints(self.sizes.text()))
        except ValueError:
            sizes = []
        doc, result = self.state.document, self.state.result
        tokens = getattr(getattr(result, "stats", None), "document_tokens", 0) if result is not None else 0
        ratio = len(doc.text) / tokens if doc is not None and tokens else None
        text = units_sentence(self.strategies(), sizes, ratio)
        self.units.setText(text)
        self.units.setVisible(bool(text))

    def set_strategies(self, names: Sequence[str]) -> None:
        for i in range(self.strategy_list.count()):
            item = self.strategy_list.item(i)
            item.setCheckState(Qt.CheckState.Checked if item.text() in names else Qt.CheckState.Unchecked)

    def strategies(self) -> list[str]:
        return [self.strategy_list.item(i).text() for i in range(self.strategy_list.count())
                if self.strategy_list.item(i).checkState() == Qt.CheckState.Checked]

    def _current_config(self) -> Any:
        from inspector.core.api import EvalConfig

        try:
            return EvalConfig(self.state.strategy, dict(self.state.params), self.controller.k,
                              self.controller.retriever, self.state.with_prefix, embed_view=self.state.embed_view)
        except ValueError:
            return None

    def _against(self, retriever: Retriever, embedding: Embedding) -> Any:
        """The window's current settings with the grid's k, retriever and vectors: what the
        recommendation is measured against (scored too when the grid lacks it)."""
        from inspector.core.api import EvalConfig

        try:
            return EvalConfig(self.state.strategy, dict(self.state.params), self.k_spin.value(), retriever,
                              self.state.with_prefix, embedding, embed_view=self.state.embed_view)
        except ValueError:
            return None

    # -- running -------------------------------------------------------------------------------------
    def run(self) -> int:
        """Start the sweep; returns the request id (0 when the settings are unusable)."""
        doc = self.state.document
        gold = self.controller.gold_questions
        if doc is None or not gold:
            self._say("Open a document and load a gold set with questions about it first.", error=True)
            return 0
        strategies = self.strategies()
        if not strategies:
            self._say("Tick at least one strategy.", error=True)
            return 0
        try:
            sizes: list[int | None] = list(parse_ints(self.sizes.text())) or [None]
            overlaps: list[int | None] = list(parse_ints(self.overlaps.text())) or [None]
        except ValueError as exc:
            self._say(str(exc), error=True)
            return 0
        retriever = self.retriever.currentData()
        embedder = self.controller.embedder
        if retriever != "bm25" and embedder is None:
            self._say("The embedding model is not ready yet: wait for it, or sweep with BM25.", error=True)
            return 0
        pooled = self.vectors.currentData() == POOLED_THEN_EXACT and retriever != "bm25"
        cells, configs, skipped = build_cells(strategies, sizes, overlaps, k=self.k_spin.value(),
                                              retriever=retriever, embedding="pooled" if pooled else "exact",
                                              embed_view=self.state.embed_view)
        if not configs:
            self._say("No valid configuration in this grid: " + "; ".join(r for _p, r in skipped[:2]), error=True)
            return 0
        self.cells = cells
        self._grid = (tuple(strategies), tuple(sizes), tuple(overlaps))
        self.heatmap.set_grid(*self._grid, cells)
        self.progress.setRange(0, len(configs))
        self.progress.setValue(0)
        self.progress.show()
        n = len(configs)
        self._say(f"Scoring {n} configuration{'s' if n != 1 else ''} on {len(gold)} questions"
                  + (" with pooled vectors…" if pooled else "…"))
        against = self._against(retriever, "pooled" if pooled else "exact")
        job = sweep_job(self.controller.workbench, configs, skipped=skipped,  # the whole corpus, as the gold panel
                        confirm=self.confirm.value() if pooled else 0, against=against,
                        budget=self.controller.budget)
        return self.runner.submit(job)

    def cancel(self) -> None:
        if self.runner.busy:
            self.runner.cancel()
            self.progress.hide()
            self._say("Cancelled.")

    def _on_progress(self, _rid: int, done: int, total: int, label: str) -> None:
        if total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(done)
            self.progress.setFormat(f"%v / %m  {label[:60]}" if label else "%v / %m")

    def bill_rates(self) -> Any:
        """The window's bill rates (prices and measured speed), None outside a window with a bill."""
        bill = getattr(self.parent(), "bill", None)
        return bill.rates() if bill is not None else None

    def _show_layer(self) -> None:
        self.heatmap.set_layer(self.layer.currentData(), self.bill_rates())

    def _on_result(self, _rid: int, result: Any) -> None:
        self.result = result
        self._show_layer()  # the sweep may have measured the embedder's speed
        rows = {row.config: row for row in result.rows}
        self.cells = {key: Cell(c.strategy, c.size, c.overlap, c.config, rows.get(c.config), c.reason)
                      for key, c in self.cells.items()}
        self.heatmap.set_grid(*self._grid, self.cells)
        self.heatmap.set_current(self._current_config())
        self.progress.hide()
        rec = result.recommendation
        self.findings.setText(findings_sentences(rec))
        self.findings.setVisible(rec is not None)
        if result.rows:
            best = result.rows[0]
            r = best.report
            tied = sum(1 for row in result.rows if row.tied_with_best)
            if result.budget is not None and r.hit_at_budget is not None:
                text = (f"Best: {best.config.label()} · hit rate within {result.budget:,} tokens "
                        f"{pct(r.hit_at_budget, unit='%')} · {_tokens(r.tokens_sent_mean)} tokens sent per question")
            else:
                text = (f"Best: {best.config.label()} · hit rate {pct(r.hit_rate, unit='%')} · MRR {num(r.mrr)} · "
                        f"{_tokens(r.context_tokens_mean)} context tokens per question")
            if best.exact is not None:
                text += f" (exact: {pct(best.exact.hit_rate, unit='%')})"
            cur = next((row for row in result.rows if row.current), None)
            if cur is not None and cur is not best:
                key = "hit_at_budget" if result.budget is not None else "hit_rate"
                a, b = getattr(r, key), getattr(cur.report, key)
                ctx = "tokens_sent_mean" if result.budget is not None else "context_tokens_mean"
                ca, cb = getattr(r, ctx), getattr(cur.report, ctx)
                text += (f" · against yours {pts(a - b) if a is not None and b is not None else '–'}, "
                         f"context {'–' if ca is None or cb is None else f'{ca - cb:+,.0f} tokens'}")
            if rec is not None and rec.top == best.config and rec.top_findings:
                text += " · but " + "; ".join(f"{f.kind.replace('_', ' ')} ({f.share:.0%})"
                                              for f in rec.top_findings)
            if tied > 1:
                text += f" · {tied} configurations tied with it (within noise)"
            if result.skipped:
                text += f" · {len(result.skipped)} grid point(s) skipped"
            if rec is not None:
                text += "\n" + recommendation_sentence(rec)
            self._say(text)
        else:
            self._say("The sweep produced no rows.")
        self.summary.setText("Click a cell to apply its settings. Framed: tied with the best (the differences "
                             "between them are within noise); dashed: the window's current settings.")
        self.finished_sweep.emit(result)

    def _on_error(self, _rid: int, message: str) -> None:
        self.progress.hide()
        self._say(message, error=True)

    def _on_busy(self, busy: bool) -> None:
        self.run_button.setEnabled(not busy)
        self.cancel_button.setEnabled(busy)

    def _on_cell(self, cell: Cell) -> None:
        from dataclasses import replace

        if cell.config is None:
            return
        cfg = replace(cell.config, embedding="exact")
        self.configChosen.emit(cfg)
        self.heatmap.set_current(cfg)
        self._say(f"Applied {cfg.label()}.")

    def _on_view(self, view: str) -> None:
        """Settings ▸ Embedding View changed: figures scored under the other view say so (issue 29)."""
        rows = getattr(self.result, "rows", None)
        if rows:
            ran = rows[0].config.embed_view
            if ran != view:
                self._say(f"These figures were scored with the {ran} embedding view; the window now embeds "
                          f"{view}: run the sweep again to score it.", error=True)

    def _say(self, text: str, error: bool = False) -> None:
        self.status.setText(text)
        self.status.setStyleSheet(f"color: {BAD};" if error else "")

    # -- lifetime ------------------------------------------------------------------------------------
    def closeEvent(self, e) -> None:
        self.cancel()
        super().closeEvent(e)

    def shutdown(self) -> None:
        self.runner.shutdown()
