"""The pinned baseline and the current figures against it: the retrieval controller's collaborator
for pinning, forgetting and restoring a baseline, comparing each new report with it (`compare_shared`
on the questions both scored, and each metric's paired difference with its interval and verdict),
and telling whether a document shown later still belongs to the corpus it was pinned over.

`RetrievalController` owns one and keeps its public names (`baseline`, `comparison`, `paired`,
`pin_baseline`, ...): the window's panels read them there and hear `baselineChanged` and
`comparisonChanged` from it, forwarded from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

if TYPE_CHECKING:
    from inspector.core.api import Document, EvalConfig, Mode, RetrievalResult


@dataclass(frozen=True, slots=True)
class Baseline:
    """A pinned report and the configuration it came from."""

    config: EvalConfig | None
    """The configuration of the pinned figures."""
    report: Any
    """evaluate.Report."""
    mode: Mode
    """EXACT, POOLED or FALLBACK: what the pinned figures were."""
    chunks: tuple = ()
    """The shown document's chunks when pinned (spans: the baseline lane beside the text)."""
    documents: tuple = ()
    """The corpus it was pinned over (empty: one document). Showing another document of it keeps
    the baseline: the report covers every document (a fixed or broken question's answer may lie in
    another one, and selecting it shows that document)."""


class BaselineComparison(QObject):
    """A baseline (or none) and the latest report's comparison with it."""

    baselineChanged = Signal(object)
    """Baseline | None."""
    comparisonChanged = Signal(object)
    """compare.Comparison of the current report against the baseline, or None."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.baseline: Baseline | None = None
        self.comparison: Any = None
        self.paired: dict[str, Any] = {}
        """Against the baseline: each metric's paired difference with interval and verdict
        (`uncertainty.PairedDelta` by metric name); empty without a baseline."""

    def pin(self, result: RetrievalResult | None) -> Baseline | None:
        """Pin the result's report (None without one)."""
        if result is None or result.report is None:
            return None
        self.baseline = Baseline(result.config, result.report, result.mode, result.request.chunks,
                                 result.request.documents)
        self.baselineChanged.emit(self.baseline)
        self.compare(result)
        return self.baseline

    def clear(self, result: RetrievalResult | None) -> None:
        if self.baseline is not None:
            self.baseline = None
            self.baselineChanged.emit(None)
        self.compare(result)

    def restore(self, baseline: Baseline | None, result: RetrievalResult | None) -> None:
        """Put a baseline back as it was pinned (Edit ▸ Undo)."""
        if baseline is not self.baseline:
            self.baseline = baseline
            self.baselineChanged.emit(baseline)
        self.compare(result)

    def covers(self, doc: Document | None, corpus: tuple[Document, ...]) -> bool:
        """The baseline was pinned over `corpus` (the one open now), which `doc` belongs to."""
        pinned = self.baseline.documents if self.baseline is not None else ()
        return bool(pinned) and len(pinned) == len(corpus) \
            and all(a is b for a, b in zip(pinned, corpus, strict=True)) and any(d is doc for d in corpus)

    def compare(self, result: RetrievalResult | None) -> None:
        """Compare the result's report with the baseline (on the questions both scored)."""
        from inspector.core.api import compare_shared

        cmp = None
        if self.baseline is not None and result is not None and result.report is not None:
            cmp = compare_shared(self.baseline.report, result.report, before_config=self.baseline.config,
                                 after_config=result.config)
        self.paired = {}
        if cmp is not None:
            from inspector.core.api import INTERVAL_SEED, paired_deltas

            try:  # on the questions both reports scored (compare_shared restricts both to them)
                self.paired = dict(paired_deltas(cmp.before, cmp.after, seed=INTERVAL_SEED))
            except ValueError:
                self.paired = {}
        self.comparison = cmp
        self.comparisonChanged.emit(cmp)

    def results(self, result: RetrievalResult | None) -> tuple | None:
        """The baseline's outcome for each question of the result's report, in its order (None for
        a question the baseline never scored); None without a baseline or a report."""
        if self.baseline is None or result is None or result.report is None:
            return None
        from inspector.core.api import aligned

        return aligned(self.baseline.report, result.report)


__all__ = ["Baseline", "BaselineComparison"]
