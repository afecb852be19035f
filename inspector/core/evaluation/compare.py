"""Two reports on one gold set side by side: every metric's change, the questions fixed and broken."""

from __future__ import annotations

from dataclasses import dataclass, replace

from inspector.core.evaluation.config import EvalConfig
from inspector.core.evaluation.gold import GoldQuestion
from inspector.core.evaluation.metrics import (
    QuestionResult,
    Report,
    aggregate,
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
    left_out: int = 0
    """Questions of the current report that the baseline never scored (added to the gold set, or
    changed, since it was pinned): left out of `before`/`after` and of every delta."""

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


def question_key(q: GoldQuestion) -> tuple:
    """What a question is scored on: its text, answers, document and reference spans. Two reports
    agree on a question only when all of these are equal (an answer edited since a baseline was
    pinned makes it a different question)."""
    return (q.question, q.answers, q.source, q.references)


def aligned(before: Report, after: Report) -> tuple[QuestionResult | None, ...]:
    """`before`'s outcome for each of `after`'s questions, in `after`'s order (None where
    `before` never scored that question)."""
    by_key: dict[tuple, QuestionResult] = {}
    for r in before.questions:
        by_key.setdefault(question_key(r.question), r)
    return tuple(by_key.get(question_key(r.question)) for r in after.questions)


def compare_shared(before: Report, after: Report, *, before_config: EvalConfig | None = None,
                   after_config: EvalConfig | None = None) -> Comparison | None:
    """`compare_reports` on the questions both reports share, their figures recomputed on those
    alone (so a baseline survives a question added to the gold set); `left_out` counts the current
    report's questions the baseline lacks. None when they share no question."""
    if len(before.questions) == len(after.questions) and all(
            question_key(b.question) == question_key(a.question)
            for b, a in zip(before.questions, after.questions)):
        return compare_reports(before, after, before_config=before_config, after_config=after_config)
    pairs = [(b, a) for b, a in zip(aligned(before, after), after.questions) if b is not None]
    if not pairs:
        return None
    b_report = aggregate([b for b, _a in pairs], before.k, before.cost, seconds=before.seconds,
                         budget=before.budget)
    a_report = aggregate([a for _b, a in pairs], after.k, after.cost, seconds=after.seconds,
                         budget=after.budget)
    cmp = compare_reports(b_report, a_report, before_config=before_config, after_config=after_config)
    return replace(cmp, left_out=len(after.questions) - len(pairs))
