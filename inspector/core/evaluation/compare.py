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
    before_total: int = 0
    """Questions in the first report before restricting to the shared ones (0: not restricted)."""
    after_total: int = 0
    """Questions in the second report before restricting (0: not restricted)."""

    @property
    def compared(self) -> int:
        """Questions compared (the ones both reports share)."""
        return len(self.after.questions)

    @property
    def restricted(self) -> bool:
        """True when either report held questions the other lacks (they are left out)."""
        return max(self.before_total, self.after_total) > self.compared

    def note(self) -> str:
        """'compared on 40 of 41 questions (the ones both gold sets share)', '' when all are."""
        if not self.restricted:
            return ""
        total = max(self.before_total, self.after_total)
        return f"compared on {self.compared} of {total} questions (the ones both gold sets share)"

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
    for b, a in zip(before.questions, after.questions, strict=True):
        if not b.hit and a.hit:
            fixed.append(QuestionChange(a.question, b, a))
        elif b.hit and not a.hit:
            broke.append(QuestionChange(a.question, b, a))
    return Comparison(before, after, deltas, tuple(fixed), tuple(broke), before_config, after_config)


def question_key(q: GoldQuestion) -> tuple:
    """What makes two gold questions the same question: its text and its answers (and reference
    spans, and document), whatever line of the file it sits on; an answer edited since a baseline
    was pinned makes it a different question."""
    return (q.question.strip(), tuple(a.strip() for a in q.answers), tuple(q.references), q.source)


def aligned(before: Report, after: Report) -> tuple[QuestionResult | None, ...]:
    """`before`'s outcome for each of `after`'s questions, in `after`'s order (None where `before`
    never scored that question; a question asked twice pairs with its twin in order, once each)."""
    pool: dict[tuple, list[QuestionResult]] = {}
    for r in before.questions:
        pool.setdefault(question_key(r.question), []).append(r)
    out: list[QuestionResult | None] = []
    for r in after.questions:
        twins = pool.get(question_key(r.question))
        out.append(twins.pop(0) if twins else None)
    return tuple(out)


def shared_reports(before: Report, after: Report) -> tuple[Report, Report]:
    """Both reports restricted to the questions they share (matched by `question_key`, in the
    second report's order), figures recomputed on those. Each report is returned as it is when
    nothing needs leaving out."""
    pairs = [(b, a) for b, a in zip(aligned(before, after), after.questions, strict=True) if b is not None]
    if len(pairs) == len(before.questions) == len(after.questions) and all(
            b is x for (b, _a), x in zip(pairs, before.questions, strict=True)):
        return before, after
    b_sub = aggregate([b for b, _a in pairs], before.k, before.cost, seconds=before.seconds, budget=before.budget)
    a_sub = aggregate([a for _b, a in pairs], after.k, after.cost, seconds=after.seconds, budget=after.budget)
    return b_sub, a_sub


def compare_shared(before: Report, after: Report, *, before_config: EvalConfig | None = None,
                   after_config: EvalConfig | None = None) -> Comparison | None:
    """`compare_reports` on the questions both reports share, their figures recomputed on those
    alone: a baseline pinned before the gold set grew (a question saved from the Reader) or shrank
    stays comparable. `left_out` counts the current report's questions the baseline lacks and
    `note()` says how many were compared; None when they share no question."""
    b, a = shared_reports(before, after)
    if b is before and a is after:
        return compare_reports(before, after, before_config=before_config, after_config=after_config)
    if not a.questions:
        return None
    cmp = compare_reports(b, a, before_config=before_config, after_config=after_config)
    return replace(cmp, left_out=len(after.questions) - len(a.questions), before_total=len(before.questions),
                   after_total=len(after.questions))
