"""Choosing a configuration that will still be best on questions nobody has written yet.

Picking the best of many configurations on one gold set flatters the pick: with 40 questions and
30 configurations, the winner is partly the one that was lucky on these 40. Cross-validation asks
the honest question instead: choose on some questions, score on the others. The gold set is split
into k folds; for each, the configuration best on the other folds is scored against the current
one on the held-out fold, so every question gives one held-out difference (pick - current). Their
mean is the gain to expect from switching by this rule, with a paired bootstrap interval; only an
interval entirely above 0 is a reason to leave the current configuration (and, for 0/1 scores,
McNemar's exact test on the held-out questions that changed, as `uncertainty.paired_delta` asks).

Input is a score matrix, configurations x questions, of one per-question metric (hit 0/1, hit at
budget, reciprocal rank ...; `score_matrix` builds it from reports), the index of the current
configuration and optionally a cost per configuration (embedded tokens, say: lower is better)
that only breaks ties.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from inspector.core.evaluation.uncertainty import (
    ALPHA,
    LEVEL,
    METRICS,
    N_RESAMPLES,
    bootstrap_ci,
    bootstrap_cis,
    mcnemar_exact,
    resampled_means,
)

if TYPE_CHECKING:
    from inspector.core.evaluation.metrics import Report

#: Means closer than this are a tie (sums of the same questions added in a different order).
TIE = 1e-12


@dataclass(frozen=True, slots=True)
class Fold:
    """One fold of the cross-validation."""

    held_out: tuple[int, ...]
    """Question indexes (columns) scored in this fold, ascending."""
    pick: int
    """Configuration best on the other questions."""


@dataclass(frozen=True, slots=True)
class Selection:
    """What cross-validated selection recommends, and how sure it is."""

    config_index: int
    """The configuration chosen on ALL questions (the recommendation, if any)."""
    current: int
    """The current configuration's index."""
    keep_current: bool
    """True unless the held-out gain's interval lies entirely above 0, for 0/1 scores McNemar's
    p-value is below 0.05 as well, and the recommendation differs from the current configuration.
    On pure noise (20 equal configurations, 40 questions) it says "switch" for 4% of gold sets,
    above the 2.5% a one-sided 95% interval promises, because the held-out differences of
    different folds are not independent (each fold's pick was trained on the others); taking
    the in-sample best would switch in 93%."""
    gain: float
    """Mean held-out difference (pick - current): what switching by this rule gains on new questions."""
    gain_ci: tuple[float, float]
    """Paired bootstrap interval of `gain`."""
    p_value: float | None
    """0/1 scores: exact McNemar p-value of the held-out questions the switch fixed against those
    it broke; None for other scores."""
    current_score: float
    """The current configuration's mean over all questions."""
    in_sample_score: float
    """`config_index`'s mean over all questions (what the sweep table shows for it)."""
    cv_score: float
    """Mean held-out score of the configurations picked fold by fold: the rule's honest score."""
    optimism: float
    """in_sample_score - cv_score: how much choosing on these questions flatters the winner."""
    differences: tuple[float, ...]
    """Held-out difference (pick - current) for every question, in question order."""
    folds: tuple[Fold, ...]
    tied_with_best: tuple[bool, ...]
    """Per configuration: cannot be told apart from `config_index` on these questions, i.e. the
    paired bootstrap interval of its per-question difference to it contains 0 (True for the best
    itself). Not cross-validated: a short list to choose from on other grounds (cost)."""
    cheapest_tied: int
    """Among `tied_with_best`: the current configuration if tied, else the lowest cost, then the
    lowest index."""
    p_better: float = 0.5
    """Probability that switching by the rule beats the current configuration: the share of paired
    bootstrap resamples of the held-out differences whose mean is above 0 (ties count half). A
    graded answer where `keep_current` is all or nothing: 0.97 on 30 questions is worth acting on
    when the chunks are broken, though the interval still touches 0."""
    questions_to_confirm: int | None = None
    """Questions a gold set needs for the held-out gain's 95 % interval to exclude 0, if the gain
    and its spread stay what they are here ((1.96 sd / gain)^2); None when the gain is not above 0
    (no number of questions confirms it)."""


def _best(means: np.ndarray, current: int, cost: np.ndarray) -> int:
    """Highest mean; ties go to the current configuration, then the lower cost, then the lower index."""
    top = float(np.max(means))
    tied = np.flatnonzero(means >= top - TIE)
    return _prefer(tied, current, cost)


def _prefer(candidates: np.ndarray, current: int, cost: np.ndarray) -> int:
    if current in candidates:
        return current
    return int(min(candidates, key=lambda i: (cost[i], i)))


def _folds(n: int, k: int, rng: np.random.Generator) -> list[np.ndarray]:
    """k folds of the question indexes, shuffled with the seed and dealt round robin (sizes differ
    by at most one). Not stratified on the current configuration's score: that would tie its
    held-out score to its training score, which held-out questions must not share. Measured on
    2000 gold sets of pure noise (20 configurations x 40 questions, each hit at 60%), neither way
    biased the held-out gain (-0.003 +- 0.003 shuffled, +0.002 +- 0.003 stratified)."""
    perm = rng.permutation(n)
    return [np.sort(perm[f::k]) for f in range(k)]


def cross_validated_choice(scores: np.ndarray | Sequence[Sequence[float]], current: int,
                           cost: Sequence[float] | np.ndarray | None = None, *, folds: int = 5,
                           seed: int = 0, level: float = LEVEL, n_resamples: int = N_RESAMPLES,
                           alpha: float = ALPHA) -> Selection:
    """Cross-validated selection over questions (see the module's docstring).

    For each fold, the configuration with the highest mean on the training questions is picked
    (ties: the current one, then the lower cost, then the lower index) and it and the current one
    are scored on the held-out questions. With fewer questions than `folds`, every question is its
    own fold (leave-one-out); a single question leaves an empty training set, where the current
    configuration is kept. Folds are shuffled with the seed (see `_folds`); deterministic for a
    seed (folds and bootstrap both draw from it)."""
    m = np.asarray(scores, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] == 0 or m.shape[1] == 0:
        raise ValueError("scores must be a configurations x questions matrix with at least one of each")
    if not np.all(np.isfinite(m)):
        raise ValueError("scores must be finite (leave out questions a configuration cannot score)")
    n_cfg, n_q = m.shape
    if not 0 <= current < n_cfg:
        raise ValueError(f"current must index a configuration (0..{n_cfg - 1}), got {current}")
    c = np.zeros(n_cfg) if cost is None else np.asarray(cost, dtype=np.float64)
    if c.shape != (n_cfg,):
        raise ValueError(f"cost needs one value per configuration ({n_cfg}), got {c.shape}")
    if folds < 2:
        raise ValueError(f"folds must be at least 2, got {folds}")
    k = min(folds, n_q)
    rng = np.random.default_rng(seed)
    held_diff = np.zeros(n_q)
    held_score = np.zeros(n_q)
    fold_list: list[Fold] = []
    for test in _folds(n_q, k, rng):
        train = np.setdiff1d(np.arange(n_q), test, assume_unique=True)
        pick = _best(m[:, train].mean(axis=1), current, c) if len(train) else current
        held_diff[test] = m[pick, test] - m[current, test]
        held_score[test] = m[pick, test]
        fold_list.append(Fold(tuple(int(i) for i in test), pick))
    gain_ci = bootstrap_ci(held_diff, level=level, n_resamples=n_resamples, seed=seed)
    # With 0/1 scores and few changed questions the bootstrap alone is too eager (see
    # `uncertainty.paired_delta`); the exact test on the changed questions holds it back.
    p = None
    if np.all((m == 0) | (m == 1)):
        p = mcnemar_exact(int(np.sum(held_diff > 0)), int(np.sum(held_diff < 0)))
    confirmed = gain_ci[0] > 0.0 and (p is None or p < alpha)
    means = m.mean(axis=1)
    chosen = _best(means, current, c)
    tied_cis = bootstrap_cis(m - m[chosen], level=level, n_resamples=n_resamples, seed=seed)
    tied = tuple(lo <= 0.0 <= hi for lo, hi in tied_cis)
    in_sample = float(means[chosen])
    cv = float(held_score.mean())
    p_better, to_confirm = graded(held_diff, n_resamples=n_resamples, seed=seed)
    return Selection(
        config_index=chosen, current=current,
        keep_current=chosen == current or not confirmed,
        gain=float(held_diff.mean()), gain_ci=gain_ci, p_value=p,
        current_score=float(means[current]), in_sample_score=in_sample, cv_score=cv,
        optimism=in_sample - cv,
        differences=tuple(float(x) for x in held_diff),
        folds=tuple(fold_list), tied_with_best=tied,
        cheapest_tied=_prefer(np.flatnonzero(tied), current, c),
        p_better=p_better, questions_to_confirm=to_confirm)


def graded(differences: np.ndarray | Sequence[float], *, n_resamples: int = N_RESAMPLES,
           seed: int = 0, z: float = 1.96) -> tuple[float, int | None]:
    """(P(mean difference > 0), questions needed to confirm it) of paired per-question
    differences: the share of bootstrap resamples whose mean is above 0 (ties half), and the
    number of questions at which a `z` interval of the mean would exclude 0 if the mean and the
    spread stayed as observed (None when the mean is not above 0)."""
    d = np.asarray(differences, dtype=np.float64)
    if not len(d):
        return 0.5, None
    means = resampled_means(d[None, :], n_resamples=n_resamples, seed=seed)[:, 0]
    p = float(np.mean(means > TIE) + 0.5 * np.mean(np.abs(means) <= TIE))
    mean = float(d.mean())
    if mean <= TIE:
        return p, None
    sd = float(d.std(ddof=1)) if len(d) > 1 else 0.0
    return p, max(len(d) if sd == 0 else 2, int(np.ceil((z * sd / mean) ** 2)))


def score_matrix(reports: Sequence[Report], metric: str = "hit_rate") -> tuple[np.ndarray, tuple[int, ...]]:
    """Per-question values of `metric` (a name in `uncertainty.METRICS`) for every report, as a
    configurations x questions matrix over the questions every report carries it for, and those
    questions' indexes. The reports must score one gold set (same questions, same order)."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; known: {', '.join(METRICS)}")
    if not reports:
        raise ValueError("no reports")
    n = len(reports[0].questions)
    names = [q.question.question for q in reports[0].questions]
    for r in reports[1:]:
        if [q.question.question for q in r.questions] != names:
            raise ValueError("the reports are on different gold sets")
    get = METRICS[metric]
    rows = [[get(q) for q in r.questions] for r in reports]
    keep = tuple(i for i in range(n) if all(row[i] is not None for row in rows))
    if not keep:
        raise ValueError(f"no question carries {metric} in every report")
    return np.asarray([[row[i] for i in keep] for row in rows], dtype=np.float64), keep


__all__ = ["Fold", "Selection", "cross_validated_choice", "graded", "score_matrix"]
