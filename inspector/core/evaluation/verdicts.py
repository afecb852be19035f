"""A person's judgement of a retrieved span: the three judgements and `Verdict`, without the audit's
machinery (`evaluation.audit` re-exports them), and the form a judged question is kept in. Light
on purpose: the window's audit card and Reader read them while they are built, before the window
shows, and the audit module brings numpy with the gold set's text matching (issue 31: the first
paint imports what it needs only)."""

from __future__ import annotations

from dataclasses import dataclass

RELEVANT, PARTLY, NOT = "relevant", "partly", "not"


def question_text(question: str) -> str:
    """The form questions are kept and compared in: surrounding spaces dropped."""
    return question.strip()


@dataclass(frozen=True, slots=True)
class Verdict:
    """A span's judgement for a question, and where it comes from."""

    judgement: str | None
    """RELEVANT, PARTLY, NOT, or None (unjudged: it needs a person)."""
    how: str = ""
    """"judged" (this very span was marked), "inherited" (from marks on other spans), "" (unjudged)."""
    reason: str = ""
    """For people: which marks decided it, or what an unjudged span overlaps."""

    @property
    def judged(self) -> bool:
        return self.judgement is not None


__all__ = ["NOT", "PARTLY", "RELEVANT", "Verdict", "question_text"]
