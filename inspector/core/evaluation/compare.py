"""Two reports on one gold set side by side: every metric's change, the questions fixed and broken."""

from __future__ import annotations

from dataclasses import dataclass

from inspector.core.evaluation.config import EvalConfig
from inspector.core.evaluation.gold import GoldQuestion
from inspector.core.evaluation.metrics import (
    QuestionResult,
    Report,
)


@dataclass(frozen=True, slots=True)
class MetricDelta:
    name: str
    before: float | None
    after: float | None

    @property
    def delta(self) -> float | None:
        if self.before is None or self.after is None:
            return None
        return self.after - self.before


@dataclass(frozen=True, slots=True)
class QuestionChange:
    """A question whose outcome differs between two configurations."""

    question: GoldQuestion
    before: QuestionResult
    after: QuestionResult


@dataclass(frozen=True, slots=True)
class Comparison:
    """Configuration B against A on one gold set."""

    before: Report
    after: Report
    deltas: tuple[MetricDelta, ...]
    fixed: tuple[QuestionChange, ...]
    """Missed by A, hit by B."""
    broke: tuple[QuestionChange, ...]
    """Hit by A, missed by B."""
    before_config: EvalConfig | None = None
    after_config: EvalConfig | None = None

    def delta(self, name: str) -> float | None:
        return next(d.delta for d in self.deltas if d.name == name)


def _metrics(r: Report) -> dict[str, float | None]:
    return {"hit_rate": r.hit_rate, "mrr": r.mrr, "recall": r.recall, "precision": r.precision,
            "iou": r.iou, "chunks": float(r.cost.chunks),
            "embedded_tokens": float(r.cost.embedded_tokens), "inflation": r.cost.inflation}


def compare_reports(before: Report, after: Report, *, before_config: EvalConfig | None = None,
                    after_config: EvalConfig | None = None) -> Comparison:
    """Every metric's change and the questions fixed or broken (the same gold set in both)."""
    if len(before.questions) != len(after.questions):
        raise ValueError("the two reports are on different gold sets")
    mb, ma = _metrics(before), _metrics(after)
    deltas = tuple(MetricDelta(name, mb[name], ma[name]) for name in mb)
    fixed, broke = [], []
    for b, a in zip(before.questions, after.questions):
        if not b.hit and a.hit:
            fixed.append(QuestionChange(a.question, b, a))
        elif b.hit and not a.hit:
            broke.append(QuestionChange(a.question, b, a))
    return Comparison(before, after, deltas, tuple(fixed), tuple(broke), before_config, after_config)
