"""How sure a figure is: bootstrap intervals over questions, paired comparisons, McNemar's test.

A hit rate on 40 questions moves 2.5 points per question, so every figure is reported with the
interval a different draw of questions (of the same kind) could have given. Questions are the unit
of resampling: they are what a gold set samples. Two configurations scored on one gold set are
compared question by question (paired), which removes the questions' own difficulty from the noise.

Each metric is a per-question value (`METRICS`: name -> extractor of a `QuestionResult`) whose mean
is the report's figure; a metric that a question does not carry (recall without reference spans,
hit at budget without a budget) leaves the question out, and a metric no question carries is None.
A metric added to the reports later only needs an entry in `METRICS` (and in `BINARY` when its
values are 0/1, which brings McNemar's exact test to its comparisons).

numpy only: the exact binomial test is summed from integer binomial coefficients, the normal
quantiles come from the standard library's `statistics.NormalDist`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from inspector.core.evaluation.metrics import QuestionResult, Report

#: Significance level of every verdict ("better"/"worse" need p < ALPHA and an interval without 0).
ALPHA = 0.05
#: Power assumed when estimating how many questions a gold set needs.
POWER = 0.8
LEVEL = 0.95
N_RESAMPLES = 2000

#: What the bootstrap draws at a time (resamples x questions), to bound memory on big gold sets.
_BLOCK_CELLS = 1_000_000

Extractor = Callable[["QuestionResult"], "float | None"]


def _hit(r: QuestionResult) -> float:
    return 1.0 if r.hit else 0.0


def _rr(r: QuestionResult) -> float:
    return r.reciprocal_rank


def _recall(r: QuestionResult) -> float | None:
    return r.recall


def _precision(r: QuestionResult) -> float | None:
    return r.precision


def _iou(r: QuestionResult) -> float | None:
    return r.iou


def _budget_hit(r: QuestionResult) -> float | None:
    v = getattr(r, "budget_hit", None)
    return None if v is None else (1.0 if v else 0.0)


#: Per-question value of each metric, named as the report's attribute; None: not carried.
METRICS: Mapping[str, Extractor] = {
    "hit_rate": _hit,
    "mrr": _rr,
    "recall": _recall,
    "precision": _precision,
    "iou": _iou,
    "hit_at_budget": _budget_hit,
}

#: Metrics whose per-question values are 0/1: their paired comparisons add McNemar's exact test.
BINARY = frozenset({"hit_rate", "hit_at_budget"})


def _extractor(metric: str) -> Extractor:
    try:
        return METRICS[metric]
    except KeyError:
        raise ValueError(f"unknown metric {metric!r}; known: {', '.join(METRICS)}") from None


# -- per-question values ----------------------------------------------------------------------------

def per_question(report: Report, metric: str) -> np.ndarray | None:
    """The metric's value for every question that carries it, in question order (float64);
    None when no question does (the report's figure is None then too)."""
    get = _extractor(metric)
    values = [v for v in (get(r) for r in report.questions) if v is not None]
    return np.asarray(values, dtype=np.float64) if values else None


def paired_values(before: Report, after: Report, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """The metric on the questions both reports carry it for, aligned question by question.
    The reports must score one gold set (same questions in the same order)."""
    _check_same_gold(before, after)
    get = _extractor(metric)
    a: list[float] = []
    b: list[float] = []
    for x, y in zip(before.questions, after.questions, strict=True):
        vx, vy = get(x), get(y)
        if vx is not None and vy is not None:
            a.append(vx)
            b.append(vy)
    return np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)


def _check_same_gold(before: Report, after: Report) -> None:
    if len(before.questions) != len(after.questions) or any(
            x.question.question != y.question.question
            for x, y in zip(before.questions, after.questions, strict=True)):
        raise ValueError("the two reports are on different gold sets")


# -- the bootstrap ----------------------------------------------------------------------------------

def _check(level: float, n_resamples: int) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie between 0 and 1, got {level}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")


def resampled_means(rows: np.ndarray, *, n_resamples: int = N_RESAMPLES, seed: int = 0) -> np.ndarray:
    """Means of every row over the same `n_resamples` resamples of its columns (questions drawn
    with replacement): an (n_resamples, rows) array. One draw serves all rows, so rows that are
    per-question values of different configurations stay paired. Deterministic for a seed."""
    m = np.atleast_2d(np.asarray(rows, dtype=np.float64))
    n = m.shape[1]
    if n == 0:
        raise ValueError("no values to resample")
    rng = np.random.default_rng(seed)
    out = np.empty((n_resamples, m.shape[0]), dtype=np.float64)
    block = max(1, _BLOCK_CELLS // n)
    for lo in range(0, n_resamples, block):
        b = min(block, n_resamples - lo)
        idx = rng.integers(0, n, size=(b, n))
        # How often each question is drawn in each resample; the mean is then one product.
        counts = np.bincount((idx + (np.arange(b) * n)[:, None]).ravel(),
                             minlength=b * n).reshape(b, n)
        # Summed row by row (numpy's pairwise sum), not as one matrix product: a BLAS product
        # rounds differently with the shape and the thread count, and the exported JSON must not.
        for r, row in enumerate(m):
            out[lo:lo + b, r] = (counts * row).sum(axis=1) / n
    return out


def bootstrap_cis(rows: np.ndarray, *, level: float = LEVEL, n_resamples: int = N_RESAMPLES,
                  seed: int = 0) -> list[tuple[float, float]]:
    """`bootstrap_ci` of every row, from one shared draw of questions (see `resampled_means`)."""
    _check(level, n_resamples)
    m = np.atleast_2d(np.asarray(rows, dtype=np.float64))
    tail = (1.0 - level) / 2.0
    q = np.quantile(resampled_means(m, n_resamples=n_resamples, seed=seed), [tail, 1.0 - tail], axis=0)
    out: list[tuple[float, float]] = []
    for i, row in enumerate(m):
        if np.all(row == row[0]):
            # Every resample has this mean; say so exactly rather than up to rounding.
            out.append((float(row[0]), float(row[0])))
        else:
            out.append((float(q[0, i]), float(q[1, i])))
    return out


def bootstrap_ci(values: Sequence[float] | np.ndarray, *, level: float = LEVEL,
                 n_resamples: int = N_RESAMPLES, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean: the questions are drawn with replacement
    `n_resamples` times and the interval is the (1-level)/2 and (1+level)/2 quantiles of the
    resampled means. Deterministic for a seed. One value, or all values equal, gives the point
    (v, v): the bootstrap sees no spread. That understates the doubt for a hit rate of 0 or 1 on
    a small set (40 hits out of 40 still allows a true rate near 0.91), so read a collapsed
    interval as "no miss observed", not as certainty. No values is an error."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1:
        raise ValueError("bootstrap_ci takes a flat sequence of values")
    if len(v) == 0:
        raise ValueError("no values: an interval needs at least one question")
    return bootstrap_cis(v[None, :], level=level, n_resamples=n_resamples, seed=seed)[0]


def report_intervals(report: Report, *, level: float = LEVEL, n_resamples: int = N_RESAMPLES,
                     seed: int = 0, metrics: Iterable[str] | None = None
                     ) -> dict[str, tuple[float, float] | None]:
    """`<metric>_ci` for every metric in `METRICS` (or those named): the bootstrap interval of
    its per-question values, None where the report does not carry the metric."""
    out: dict[str, tuple[float, float] | None] = {}
    for name in (METRICS if metrics is None else metrics):
        values = per_question(report, name)
        out[f"{name}_ci"] = None if values is None else bootstrap_ci(
            values, level=level, n_resamples=n_resamples, seed=seed)
    return out


# -- McNemar and the questions a gold set needs -----------------------------------------------------

def mcnemar_exact(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value from the discordant pairs: under "no difference" each of
    the b + c questions that changed outcome is equally likely to have gone either way, so the
    smaller count is Binomial(b + c, 1/2); p = min(1, 2 P(X <= min(b, c))). No discordant pair
    gives 1. Summed in exact integers, so it holds for any b + c."""
    if b < 0 or c < 0:
        raise ValueError(f"counts must not be negative, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail / 2 ** n)


def _z(p: float) -> float:
    return NormalDist().inv_cdf(p)


def questions_needed(fixed: int, broke: int, n: int, *, alpha: float = ALPHA,
                     power: float = POWER) -> int | None:
    """Questions a gold set would need for McNemar's test (two-sided, level `alpha`) to tell the
    two configurations apart with probability `power`, if the observed rates held.

    From the observed discordant shares p10 = broke / n and p01 = fixed / n, the discordant rate
    psi = p10 + p01 and the difference d = p01 - p10 (the change in hit rate), the normal
    approximation of McNemar's test (Connor 1987) gives
        N = (z(1 - alpha/2) sqrt(psi) + z(power) sqrt(psi - d^2))^2 / d^2.
    None when the observed difference is 0 (no number of questions would show it)."""
    if n <= 0:
        raise ValueError(f"n must be positive, got {n}")
    if fixed < 0 or broke < 0 or fixed + broke > n:
        raise ValueError(f"fixed={fixed} and broke={broke} do not fit in {n} questions")
    d = (fixed - broke) / n
    if d == 0:
        return None
    psi = (fixed + broke) / n
    root = _z(1 - alpha / 2) * math.sqrt(psi) + _z(power) * math.sqrt(max(psi - d * d, 0.0))
    return max(1, math.ceil(root * root / (d * d)))


def questions_needed_paired(differences: Sequence[float] | np.ndarray, *, alpha: float = ALPHA,
                            power: float = POWER) -> int | None:
    """The same estimate for a metric that is not 0/1 (MRR, recall ...): the normal
    approximation of a paired test, N = ((z(1 - alpha/2) + z(power)) s / d)^2 with d the mean and
    s the standard deviation (n - 1) of the per-question differences. None when d is 0; at least 1."""
    v = np.asarray(differences, dtype=np.float64)
    if len(v) == 0:
        raise ValueError("no differences")
    d = float(v.mean())
    if d == 0:
        return None
    s = float(v.std(ddof=1)) if len(v) > 1 else 0.0
    return max(1, math.ceil(((_z(1 - alpha / 2) + _z(power)) * s / d) ** 2))


# -- paired comparison ------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class PairedDelta:
    """One metric of configuration B (after) against A (before), question by question."""

    metric: str
    n: int
    """Questions compared (those both reports carry the metric for)."""
    before: float
    """A's mean over those questions."""
    after: float
    delta: float
    """after - before."""
    ci: tuple[float, float]
    """Paired bootstrap interval of the mean per-question difference."""
    verdict: str
    """"better", "worse" or "within noise" (see `paired_delta`)."""
    p_value: float | None = None
    """Exact McNemar p-value (0/1 metrics only)."""
    fixed: int | None = None
    """0/1 metrics: questions missed by A and hit by B (McNemar's b)."""
    broke: int | None = None
    """0/1 metrics: questions hit by A and missed by B (McNemar's c)."""
    questions_needed: int | None = None
    """Questions a gold set would need to show this difference (alpha 0.05, power 0.8); None
    when the difference is 0. See `questions_needed` and `questions_needed_paired`."""


def paired_delta(before: Report, after: Report, metric: str, *, level: float = LEVEL,
                 n_resamples: int = N_RESAMPLES, seed: int = 0, alpha: float = ALPHA) -> PairedDelta:
    """B against A on one metric over the same gold set.

    The rule for the verdict: "better" when the paired bootstrap interval of the per-question
    differences lies entirely above 0 and, for 0/1 metrics (hit rate, hit at budget), McNemar's
    exact p-value is below `alpha` (0.05); "worse" likewise below 0; otherwise "within noise" (the
    interval contains 0, or McNemar's p >= alpha). Both are asked of 0/1 metrics because the
    bootstrap alone is too eager with few discordant questions (0 fixed against 4 broken out of 40
    leaves 0 outside its interval, while the exact test gives p = 0.125).

    Raises ValueError when the reports score different gold sets or no question carries the
    metric in both (see `paired_deltas` for every metric both carry)."""
    a, b = paired_values(before, after, metric)
    if len(a) == 0:
        raise ValueError(f"no question carries {metric} in both reports")
    diff = b - a
    low, high = bootstrap_ci(diff, level=level, n_resamples=n_resamples, seed=seed)
    p = fixed = broke = None
    if metric in BINARY:
        fixed = int(np.sum((a == 0) & (b == 1)))
        broke = int(np.sum((a == 1) & (b == 0)))
        p = mcnemar_exact(fixed, broke)
        needed = questions_needed(fixed, broke, len(a), alpha=alpha)
    else:
        needed = questions_needed_paired(diff, alpha=alpha)
    significant = p is None or p < alpha
    if low > 0 and significant:
        verdict = "better"
    elif high < 0 and significant:
        verdict = "worse"
    else:
        verdict = "within noise"
    return PairedDelta(metric=metric, n=len(a), before=float(a.mean()), after=float(b.mean()),
                       delta=float(diff.mean()), ci=(low, high), verdict=verdict, p_value=p,
                       fixed=fixed, broke=broke, questions_needed=needed)


def paired_deltas(before: Report, after: Report, *, metrics: Iterable[str] | None = None,
                  **kwargs: float) -> dict[str, PairedDelta]:
    """`paired_delta` for every metric (of `METRICS`, or those named) that both reports carry."""
    _check_same_gold(before, after)
    out: dict[str, PairedDelta] = {}
    for name in (METRICS if metrics is None else metrics):
        a, _b = paired_values(before, after, name)
        if len(a):
            out[name] = paired_delta(before, after, name, **kwargs)  # type: ignore[arg-type]
    return out


__all__ = [
    "ALPHA",
    "BINARY",
    "METRICS",
    "POWER",
    "PairedDelta",
    "bootstrap_ci",
    "bootstrap_cis",
    "mcnemar_exact",
    "paired_delta",
    "paired_deltas",
    "paired_values",
    "per_question",
    "questions_needed",
    "questions_needed_paired",
    "report_intervals",
    "resampled_means",
]
