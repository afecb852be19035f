"""The gold panel's "Compare with model…": a second embedding model's hit@k and MRR beside the
first's on the same chunks, with the paired interval and verdict, as BM25 and hybrid stand beside
dense in the line above.

The model is chosen in the Embedding Model dialog (any spec: minilm, st:, openai:; the choice is
remembered, never a key). Scoring embeds every chunk with it, which takes a while on a CPU, so it
runs when asked, on a worker thread with progress and Cancel, on the index the panel's figures
were computed on (`api.model_figures`). Figures for other settings (new chunks, another k,
retriever or model) stay readable but are marked as such. Under BM25 there are no vectors to
compare: the button says to choose dense or hybrid.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from inspector.core.api import change_interval, num, pct, pts
from inspector.core.viewmodel.settings_schema import Setting
from inspector.qt import theme
from inspector.qt.runner import JobRunner

COMPARE_EMBEDDER = Setting("embedder/compare", dict, {"spec": "minilm"},
                           "The gold panel's Compare with model: the second model's spec and options (never a key).")
VERDICT_COLORS = {"better": theme.GOOD, "worse": theme.BAD}
TITLE = "<b>Another embedding model</b>"
TIP = ("Embed the same chunks with a second model and give hit@k and MRR of both, with the paired "
       "interval and verdict (every chunk is embedded again: slow on a CPU)")


def model_name(info: Any) -> str:
    """Short name of a model from its `embedder_info`: "MiniLM", "two-layer-minilm", "openai:M";
    "store vectors" where the figures are a vector store's (`stored_in`)."""
    from inspector.core.api import InputError, parse_embedder_spec

    if info.get("stored_in"):
        return "store vectors"

    spec = info.get("spec")
    if spec:
        try:
            return parse_embedder_spec(str(spec)).short_name
        except InputError:
            pass
    return str(info.get("model_id") or "model")


def figures_html(fig: Any) -> str:
    """The two models' hit@k and MRR, each change with its paired interval and verdict on a line of
    its own (the figures' column is narrow), then what was embedded."""
    a, b = model_name(fig.first_model), model_name(fig.second_model)
    rows = [f"{html.escape(a)} → <b>{html.escape(b)}</b>"]
    for key, name, share in (("hit_rate", f"hit@{fig.k}", True), ("mrr", "MRR", False)):
        shown = pct if share else num
        rows.append(f"{name} {shown(getattr(fig.first, key))} → <b>{shown(getattr(fig.second, key))}</b>")
        d = fig.paired.get(key)
        if d is not None:
            change = pts(d.delta) if share else f"{d.delta:+.3f}"
            color = VERDICT_COLORS.get(d.verdict, "")
            verdict = f"<span style='color:{color}'>{html.escape(d.verdict)}</span>" if color else d.verdict
            rows.append(f"&nbsp;&nbsp;{change} {change_interval(*d.ci, share=share)}, {verdict}")
    fixed, broke = len(fig.comparison.fixed), len(fig.comparison.broke)
    found = f"{fixed} question{'s' * (fixed != 1)}"
    rows.append(f"{found} found only by {html.escape(b)}, {broke} only by {html.escape(a)}")
    n = len(fig.first.questions)
    rows.append(f"{n:,} questions · {fig.retriever} · {fig.chunks:,} chunks, {fig.seconds:.1f} s")
    return "<br>".join(rows)


class ModelCompareBox(QWidget):
    """Button, progress and Cancel, and the two models' figures; inserted under the retrievers'
    line of the gold panel's figures column."""

    scored = Signal(object)
    """The ModelFigures just computed."""

    def __init__(self, controller: Any, gold_panel: Any, settings: Any, *, device: Callable[[], str] = lambda: "auto",
                 synchronous: bool = False) -> None:
        super().__init__()
        self.controller = controller
        self.settings = settings
        self.device = device
        self.figures: Any = None
        self.scoring = False
        """True from `score` until its figures, its failure or Cancel."""
        self.dialog: Any = None
        self._scored_key: tuple | None = None
        self._pending_key: tuple | None = None
        self.runner = JobRunner(self, synchronous=synchronous, name="model-figures")
        self.title = QLabel(TITLE)
        self.button = QPushButton("Compare with model…")
        self.button.setToolTip(TIP)
        self.cancel = QPushButton("Cancel")
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
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
        self.button.clicked.connect(self.choose)
        self.cancel.clicked.connect(self.stop)
        self.runner.stageReady.connect(lambda _rid, fig: self._on_scored(fig))
        self.runner.progressed.connect(lambda _rid, d, t, label: self._on_progress(d, t, label))
        self.runner.errored.connect(lambda _rid, msg: self._on_error(msg))
        controller.settingsChanged.connect(self._update)
        controller.resultReady.connect(lambda _r: self._update())
        controller.cleared.connect(self._update)
        controller.modelStateChanged.connect(lambda _s: self._update())
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
        return (r.request.chunk_request_id, r.request.k, r.retriever, id(self.controller.embedder),
                len(r.request.gold))

    def _update(self) -> None:
        r = self.controller.result
        self.setVisible(r is not None and r.report is not None or self.figures is not None)
        ready = r is not None and r.report is not None and r.mode == "exact"
        vectors = ready and r is not None and r.retriever != "bm25"
        self.button.setEnabled(vectors and not self.scoring)
        self.button.setToolTip(TIP if vectors else "Choose dense or hybrid retrieval: BM25 reads no vectors"
                               if ready else "Waits for the exact figures of the gold set")
        if self.figures is not None:
            stale = self._key() != self._scored_key
            self.text.setEnabled(not stale)
            self.title.setText(TITLE + (" (for earlier settings)" if stale else ""))

    def _idle(self) -> None:
        self.scoring = False
        self.progress.hide()
        self.cancel.hide()
        self.button.show()

    # -- scoring ---------------------------------------------------------------------------------
    def choose(self) -> Any:
        """The Embedding Model dialog for the second model; accepting it scores (the dialog)."""
        from inspector.qt.dialogs.embedder_dialog import EmbedderDialog

        dialog = EmbedderDialog(self.window(), choice=self.settings.get(COMPARE_EMBEDDER),
                                title="Compare with Model",
                                intro="A second model embeds the same chunks and the gold questions; its hit@k "
                                      "and MRR stand beside the current model's, with the paired interval and "
                                      "verdict. The current model stays in use.")
        dialog.accepted.connect(lambda: self.score(dialog.spec()))
        self.dialog = dialog
        dialog.open()
        return dialog

    def score(self, spec: Any) -> int:
        """Score the gold set with the model `spec` names beside the current one, on the worker
        (request id; 0 when there is nothing to score)."""
        from inspector.core.api import EmbedderSpec, InputError
        from inspector.qt.controllers.model_jobs import model_figures_job

        try:
            spec = spec if isinstance(spec, EmbedderSpec) else EmbedderSpec.from_dict(spec)
        except InputError as exc:
            self._on_error(exc.one_line())
            return 0
        c = self.controller
        r = c.result
        if r is None or r.report is None or r.retriever == "bm25":
            return 0
        self.settings.set(COMPARE_EMBEDDER, spec.to_dict())
        self._pending_key = self._key()
        self.progress.setRange(0, 0)
        self.progress.setFormat(f"loading {spec.text}")
        self.progress.show()
        self.cancel.show()
        self.button.setEnabled(False)
        self.button.hide()  # the progress gets the narrow column's width
        self.scoring = True
        return self.runner.submit(model_figures_job(r, spec, self.device(), c.cache))

    def stop(self) -> None:
        self.runner.cancel()
        self._idle()
        self._update()

    def _on_progress(self, done: int, total: int, label: str) -> None:
        if total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(done)
            self.progress.setFormat("%v/%m chunks")
        elif label:
            self.progress.setRange(0, 0)
            self.progress.setFormat(label)

    def _on_scored(self, fig: Any) -> None:
        self.figures = fig
        self._scored_key = self._pending_key
        self.text.setEnabled(True)
        self.text.setText(figures_html(fig))
        self._idle()
        self._update()
        QTimer.singleShot(0, self._reveal)  # once the layout has taken the label's new height
        self.scored.emit(fig)

    def _reveal(self) -> None:
        """Scroll the figures' column to the new figures: once its layout has taken their height,
        and once more after the scroll area has resized its content to it (the first alone left
        the figures below the fold in the 1400x900 shot)."""
        self.gold_panel.summary.layout().activate()
        scroll = self.gold_panel.summary_scroll
        scroll.ensureWidgetVisible(self.text, 0, 8)
        QTimer.singleShot(0, lambda: scroll.ensureWidgetVisible(self.text, 0, 8))

    def _on_error(self, message: str) -> None:
        self._idle()
        self.figures = None
        self.title.setText(TITLE)
        self.text.setEnabled(True)
        self.text.setText(f"<span style='color:{theme.BAD}'>{html.escape(message)}</span>")
        self._update()

    def shutdown(self) -> None:
        self.runner.shutdown(5_000)


__all__ = ["COMPARE_EMBEDDER", "ModelCompareBox", "figures_html", "model_name"]
