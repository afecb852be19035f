"""Do two sets of questions rank the same configurations alike? Spearman's rank correlation.

Used to judge a stand-in gold set (drafted questions) against a human one: if both order a grid of
chunking configurations the same way, the cheap set can choose settings for the user; if not, it
cannot, whatever its own figures look like. numpy only (no scipy in the core's dependencies).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np


def average_ranks(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Ranks from 1 (smallest) to n; tied values share the mean of the ranks they span
    (scipy.stats.rankdata's "average" method)."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"expected a 1-d sequence, got shape {x.shape}")
    if np.isnan(x).any():
        raise ValueError("cannot rank NaN")
    n = len(x)
    order = np.argsort(x, kind="stable")
    sorted_x = x[order]
    # Start of each run of equal values in sorted order, and the mean rank of that run.
    starts = np.flatnonzero(np.r_[True, sorted_x[1:] != sorted_x[:-1]])
    ends = np.r_[starts[1:], n]
    mean_rank = (starts + ends + 1) / 2.0  # ranks starts+1 .. ends, averaged
    ranks = np.empty(n, dtype=np.float64)
    ranks[order] = np.repeat(mean_rank, ends - starts)
    return ranks


def spearman(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Spearman's ρ: the Pearson correlation of the average ranks of `a` and `b` (ties averaged).
    NaN when either side is constant (no ranking to agree with) or has fewer than two values."""
    ra, rb = average_ranks(a), average_ranks(b)
    if len(ra) != len(rb):
        raise ValueError(f"length mismatch: {len(ra)} and {len(rb)}")
    if len(ra) < 2:
        return float("nan")
    da, db = ra - ra.mean(), rb - rb.mean()
    den = float(np.sqrt((da * da).sum() * (db * db).sum()))
    if den == 0.0:
        return float("nan")
    return float((da * db).sum() / den)


def top_indices(values: Sequence[float] | np.ndarray) -> tuple[int, ...]:
    """Positions of the largest value (all of them, when tied)."""
    x = np.asarray(values, dtype=np.float64)
    if len(x) == 0:
        return ()
    return tuple(int(i) for i in np.flatnonzero(x == x.max()))


class RhoInterval(NamedTuple):
    """Spearman's ρ of two question sets' rankings, with a bootstrap percentile interval."""

    rho: float
    """ρ between the configurations' mean scores under each set (all questions)."""
    low: float
    """Lower end of the interval (the (1 - level) / 2 quantile of the resampled ρ)."""
    high: float
    """Upper end of the interval."""
    resamples: int
    """Resamples that gave a ρ (a resample where one side is constant has none)."""


def bootstrap_spearman(a: np.ndarray, b: np.ndarray, *, resamples: int = 2000, level: float = 0.95,
                       seed: int = 0) -> RhoInterval:
    """ρ between the rankings of configurations by two question sets, and how much it could move
    had other questions been asked: each set's questions are drawn again with replacement
    (independently, since the sets are different questions), the configurations' means recomputed
    and correlated, `resamples` times; the interval is the percentile one at `level`.

    `a`: configurations x questions of set A (one score per configuration and question); `b`:
    configurations x questions of set B (the same configurations, any number of questions).
    Deterministic for a given `seed`."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[0] != b.shape[0]:
        raise ValueError(f"expected configurations x questions for both sets, got {a.shape} and {b.shape}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie between 0 and 1, got {level}")
    if a.shape[1] == 0 or b.shape[1] == 0:
        return RhoInterval(float("nan"), float("nan"), float("nan"), 0)
    rho = spearman(a.mean(axis=1), b.mean(axis=1))
    if resamples <= 0:
        return RhoInterval(rho, float("nan"), float("nan"), 0)
    rng = np.random.default_rng(seed)
    got: list[float] = []
    for _ in range(resamples):
        ia = rng.integers(0, a.shape[1], size=a.shape[1])
        ib = rng.integers(0, b.shape[1], size=b.shape[1])
        r = spearman(a[:, ia].mean(axis=1), b[:, ib].mean(axis=1))
        if not np.isnan(r):
            got.append(r)
    if not got:
        return RhoInterval(rho, float("nan"), float("nan"), 0)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(np.asarray(got), [tail, 1.0 - tail])
    return RhoInterval(rho, float(low), float(high), len(got))


__all__ = ["RhoInterval", "average_ranks", "bootstrap_spearman", "spearman", "top_indices"]
