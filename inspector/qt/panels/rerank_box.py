"""The gold panel's "Score with reranker": hit@k and MRR of the gold set before and after the
reranker (Settings ▸ Reranker…), with the paired verdict, and the ceiling hit@depth that no
reranking can pass.

Shown only while a reranker is set. Scoring reranks `depth` hits for every gold question, which
takes minutes on a CPU, so it runs when asked, on a worker thread with progress and Cancel, on the
index the panel's figures were computed on. Figures for other settings (new chunks, another k,
retriever or reranker) stay readable but are marked as such.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from inspector.core.api import change_interval, num, pct, pts
from inspector.qt import theme
from inspector.qt.runner import JobRunner

VERDICT_COLORS = {"better": theme.GOOD, "worse": theme.BAD}
TIP = ("Rerank the gold set's hits and give hit@k and MRR before and after (slow on a CPU: every "
       "question's top hits are read by the reranker)")


def figures_html(fig: Any) -> str:
    """Before → after of hit@k and MRR, each with its paired change and verdict on a line of its
    own, then the ceiling: short lines, so the narrow figures' column never wraps a figure."""
    k = fig.k
    rows = []
    for key, name, share in (("hit_rate", f"hit@{k}", True), ("mrr", "MRR", False)):
        d = fig.paired.get(key)
        before, after = getattr(fig.before, key), getattr(fig.after, key)
        shown = pct if share else num
        rows.append(f"{name} {shown(before)} → <b>{shown(after)}</b>")
        if d is not None:
            change = pts(d.delta) if share else f"{d.delta:+.3f}"
            color = VERDICT_COLORS.get(d.verdict, "")
            verdict = f"<span style='color:{color}'>{html.escape(d.verdict)}</span>" if color else d.verdict
            rows.append(f"&nbsp;&nbsp;{change} {change_interval(*d.ci, share=share)}, {verdict}")
    rows.append(f"ceiling hit@{fig.depth}: {pct(fig.ceiling)}")
    rows.append(f"{fig.pairs:,} pairs reranked in {fig.seconds:.1f} s")
    return "<br>".join(rows)


class RerankBox(QWidget):
    """Button, progress and Cancel, and the before/after figures; inserted under the retrievers'
    line of the gold panel's figures column."""

    scored = Signal(object)
    """The RerankFigures just computed."""

    def __init__(self, controller: Any, gold_panel: Any, *, synchronous: bool = False) -> None:
        super().__init__()
        self.controller = controller
        self.figures: Any = None
        self.scoring = False
        """True from `score` until its figures, its failure or Cancel."""
        self._scored_key: tuple | None = None
        self.runner = JobRunner(self, synchronous=synchronous, name="rerank-figures")
        self.title = QLabel("<b>With the reranker</b>")
        self.button = QPushButton("Score with reranker")
        self.button.setToolTip(TIP)
        self.cancel = QPushButton("Cancel")
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.progress.setFormat("%v/%m questions")
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 4, 0, 0)
        lay.setSpacing(2)
        lay.addWidget(self.title)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.button)
        row.addWidget(self.progress, 1)
        row.addWidget(self.cancel)
        row.addStretch(0)
        lay.addLayout(row)
        lay.addWidget(self.text)
        self._idle()
        self.button.clicked.connect(self.score)
        self.cancel.clicked.connect(self.stop)
        self.runner.stageReady.connect(lambda _rid, fig: self._on_scored(fig))
        self.runner.progressed.connect(lambda _rid, d, t, _l: self._on_progress(d, t))
        self.runner.errored.connect(lambda _rid, msg: self._on_error(msg))
        controller.settingsChanged.connect(self._update)
        controller.resultReady.connect(lambda _r: self._update())
        controller.cleared.connect(self._update)
        self._insert(gold_panel)
        self._update()

    def _insert(self, gold_panel: Any) -> None:
        self.gold_panel = gold_panel
        side = gold_panel.summary.layout()
        at = side.indexOf(gold_panel.retrievers)
        side.insertWidget(at + 1 if at >= 0 else side.count(), self)

    # -- state -----------------------------------------------------------------------------------
    def _key(self) -> tuple | None:
        r = self.controller.result
        if r is None or r.report is None:
            return None
        return (r.request.chunk_request_id, r.request.k, r.retriever, id(self.controller.reranker),
                self.controller.rerank_depth, len(r.request.gold))

    def _update(self) -> None:
        c = self.controller
        self.setVisible(c.reranker is not None)
        r = c.result
        ready = r is not None and r.report is not None and r.mode == "exact"
        self.button.setEnabled(ready and not self.scoring)
        self.button.setToolTip(TIP if ready else "Waits for the exact figures of the gold set")
        if self.figures is not None:
            stale = self._key() != self._scored_key
            self.text.setEnabled(not stale)
            self.title.setText("<b>With the reranker</b>" + (" (for earlier settings)" if stale else ""))

    def _idle(self) -> None:
        self.scoring = False
        self.progress.hide()
        self.cancel.hide()

    # -- scoring ---------------------------------------------------------------------------------
    def score(self) -> int:
        """Score the gold set with the reranker on the worker (request id; 0 when nothing to score)."""
        from inspector.qt.controllers.rerank_jobs import rerank_figures_job

        c = self.controller
        r = c.result
        if c.reranker is None or r is None or r.report is None:
            return 0
        self._pending_key = self._key()
        self.progress.setRange(0, max(1, len(r.request.gold)))
        self.progress.setValue(0)
        self.progress.show()
        self.cancel.show()
        self.button.setEnabled(False)
        self.scoring = True
        return self.runner.submit(rerank_figures_job(r, c.reranker, c.rerank_depth))

    def stop(self) -> None:
        self.runner.cancel()
        self._idle()
        self._update()

    def _on_progress(self, done: int, total: int) -> None:
        if total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(done)

    def _on_scored(self, fig: Any) -> None:
        self.figures = fig
        self._scored_key = self._pending_key
        self.text.setText(figures_html(fig))
        self._idle()
        self._update()
        # The figures' column scrolls: bring the new figures into view.
        # (after the layout has taken the label's new height)
        QTimer.singleShot(0, self._reveal)
        self.scored.emit(fig)

    def _reveal(self) -> None:
        self.gold_panel.summary.layout().activate()
        self.gold_panel.summary_scroll.ensureWidgetVisible(self.text, 0, 8)

    def _on_error(self, message: str) -> None:
        self._idle()
        self.text.setEnabled(True)
        self.text.setText(f"<span style='color:{theme.BAD}'>{html.escape(message)}</span>")
        self._update()

    def shutdown(self) -> None:
        self.runner.shutdown(5_000)


__all__ = ["RerankBox", "figures_html"]
