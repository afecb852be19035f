"""The bill: a configuration's exact token counts turned into money and time.

Three figures, each from counts the report already holds exactly:

- indexing cost: the embedded tokens (cl100k, every chunk the index embeds) x the embedding
  price per million tokens the user sets;
- context per question: the cl100k tokens of the top-k chunks handed to the LLM, on average over
  the gold questions (under a context budget, what is actually sent within it), x the LLM's input
  price per million (the question and the prompt around it are not counted: they do not change
  with the chunking);
- embedding time on this machine: the embedded tokens at the loaded embedder's measured speed
  (`inspector.core.embedding.throughput`, the last measurement persisted).

A figure whose price or measurement is missing is None, never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspector.core.embedding.rate import TokenRate as Throughput

MILLION = 1_000_000


@dataclass(frozen=True, slots=True)
class Rates:
    """What the bill charges: prices the user sets and the measured embedding speed."""

    embed_usd_per_million: float | None = None
    """Embedding price, US dollars per million embedded tokens (None: not set)."""
    llm_usd_per_million: float | None = None
    """The LLM's input price, US dollars per million tokens (None: not set)."""
    throughput: Throughput | None = None
    """The loaded embedder's measured speed on this machine (None: not measured yet)."""

    def __post_init__(self) -> None:
        for name in ("embed_usd_per_million", "llm_usd_per_million"):
            v = getattr(self, name)
            if v is not None and not v >= 0:  # also refuses NaN
                raise ValueError(f"{name.replace('_', ' ')} must be a price of at least 0, got {v}")


@dataclass(frozen=True, slots=True)
class Bill:
    """Money and time of one configuration."""

    chunks: int
    embedded_tokens: int
    embed_usd: float | None
    """Indexing cost: embedded_tokens x embedding price / 1e6."""
    context_tokens_per_question: float | None
    """Mean cl100k tokens handed to the LLM per question (None without a gold set)."""
    context_usd_per_question: float | None
    """context_tokens_per_question x LLM input price / 1e6."""
    embed_seconds_estimate: float | None
    """embedded_tokens at the measured tokens per second."""
    within_budget: bool = False
    """True when the context figure is what a context budget lets through."""
    rates: Rates = Rates()


def usd(tokens: float, usd_per_million: float | None) -> float | None:
    """What `tokens` cost at a price per million tokens (None without a price)."""
    if usd_per_million is None:
        return None
    return tokens * usd_per_million / MILLION


def make_bill(chunks: int, embedded_tokens: int, rates: Rates, *,
              context_tokens_per_question: float | None = None, within_budget: bool = False) -> Bill:
    """The bill of counts given directly (the statistics panel has no report, only chunks)."""
    seconds = rates.throughput.seconds_for(embedded_tokens) if rates.throughput is not None else None
    ctx_usd = (usd(context_tokens_per_question, rates.llm_usd_per_million)
               if context_tokens_per_question is not None else None)
    return Bill(chunks, embedded_tokens, usd(embedded_tokens, rates.embed_usd_per_million),
                context_tokens_per_question, ctx_usd, seconds, within_budget, rates)


def bill_for(report: Any, rates: Rates | None = None) -> Bill:
    """The bill of an evaluation `Report`: its index cost and its context tokens per question
    (tokens sent within the budget when the report was scored at one)."""
    rates = rates or Rates()
    budgeted = report.budget is not None and report.tokens_sent_mean is not None
    ctx = report.tokens_sent_mean if budgeted else report.context_tokens_mean
    if not report.questions:
        ctx = None
    return make_bill(report.cost.chunks, report.cost.embedded_tokens, rates,
                     context_tokens_per_question=ctx, within_budget=budgeted)


def _round(v: float | None, digits: int) -> float | None:
    return None if v is None else round(v, digits)


def bill_dict(bill: Bill) -> dict[str, Any]:
    """The bill's fields for a report's JSON `cost` object."""
    t = bill.rates.throughput
    return {
        "embed_usd": _round(bill.embed_usd, 8),
        "context_tokens_per_question": _round(bill.context_tokens_per_question, 2),
        "context_usd_per_question": _round(bill.context_usd_per_question, 8),
        "embed_seconds_estimate": _round(bill.embed_seconds_estimate, 2),
        "context_within_budget": bill.within_budget,
        "embed_usd_per_million": bill.rates.embed_usd_per_million,
        "llm_usd_per_million": bill.rates.llm_usd_per_million,
        "embed_tokens_per_second": None if t is None else round(t.tokens_per_second, 1),
    }


def format_usd(v: float | None) -> str:
    """"$12.34", "$0.0123", "$0.000012": cents for a dollar or more, three significant digits below."""
    if v is None:
        return "–"
    if v == 0:
        return "$0"
    if v >= 1:
        return f"${v:,.2f}"
    digits = 2
    while v * 10 ** digits < 100 and digits < 12:
        digits += 1
    return f"${v:.{digits}f}"


def format_seconds(s: float | None) -> str:
    """"< 0.1 s", "0.4 s", "12 s", "3 min 5 s", "2 h 10 min"."""
    if s is None:
        return "–"
    if s < 0.1:
        return "< 0.1 s"
    if s < 10:
        return f"{s:.1f} s"
    if s < 60:
        return f"{s:.0f} s"
    m, sec = divmod(int(round(s)), 60)
    if m < 60:
        return f"{m} min {sec} s" if sec else f"{m} min"
    h, m = divmod(m, 60)
    return f"{h} h {m} min" if m else f"{h} h"


def bill_parts(bill: Bill) -> dict[str, str]:
    """Each figure as text with how it was made ("index", "context", "time"); "" where the bill
    has nothing to say (no price and no gold set)."""
    r = bill.rates
    out: dict[str, str] = {}
    if bill.embed_usd is not None:
        out["index"] = (f"{format_usd(bill.embed_usd)} to embed ({bill.embedded_tokens:,} tokens at "
                        f"${r.embed_usd_per_million:g}/M)")
    else:
        out["index"] = f"{bill.embedded_tokens:,} tokens to embed (set a price to see dollars)"
    if bill.context_tokens_per_question is not None:
        sent = "sent within the budget" if bill.within_budget else "of context"
        text = f"{bill.context_tokens_per_question:,.0f} tokens {sent} per question"
        if bill.context_usd_per_question is not None:
            text += (f" = {format_usd(bill.context_usd_per_question)} "
                     f"({format_usd(bill.context_usd_per_question * 1000)} per 1,000 questions)")
        out["context"] = text
    else:
        out["context"] = ""
    if bill.embed_seconds_estimate is not None and r.throughput is not None:
        approx = "" if bill.embed_seconds_estimate < 0.1 else "≈ "
        out["time"] = (f"{approx}{format_seconds(bill.embed_seconds_estimate)} to embed here "
                       f"({r.throughput.tokens_per_second:,.0f} tokens/s measured)")
    else:
        out["time"] = "embedding time: not measured yet on this machine"
    return out


def bill_line(bill: Bill) -> str:
    """The bill on one line (the CLI's table output)."""
    parts = bill_parts(bill)
    return "bill: " + " · ".join(p for p in (parts["index"], parts["context"], parts["time"]) if p)


__all__ = ["Rates", "Bill", "make_bill", "bill_for", "bill_dict", "bill_parts", "bill_line", "usd",
           "format_usd", "format_seconds", "MILLION"]
