"""Intervals, paired comparisons and McNemar's test, checked by hand and by simulation."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from inspector.core.evaluation.gold import GoldQuestion
from inspector.core.evaluation.metrics import (
    IndexCost,
    QuestionResult,
    Report,
)
from inspector.core.evaluation.report import report_dict
from inspector.core.evaluation.uncertainty import (
    bootstrap_ci,
    bootstrap_cis,
    mcnemar_exact,
    paired_delta,
    paired_deltas,
    per_question,
    questions_needed,
    questions_needed_paired,
    report_intervals,
)


def report(hits: list[bool], ranks: list[int | None] | None = None,
           recalls: list[float | None] | None = None) -> Report:
    """A report over questions q0, q1 ... with the given outcomes."""
    ranks = ranks if ranks is not None else [1 if h else None for h in hits]
    recalls = recalls if recalls is not None else [None] * len(hits)
    qs = tuple(QuestionResult(question=GoldQuestion(f"q{i}", ("a",)), hit=h, rank=r, retrieved=(),
                              recall=rc, precision=rc, iou=rc)
               for i, (h, r, rc) in enumerate(zip(hits, ranks, recalls, strict=True)))
    n = len(qs)
    with_refs = [x for x in recalls if x is not None]
    mean = sum(with_refs) / len(with_refs) if with_refs else None
    return Report(k=5, hit_rate=sum(hits) / n if n else 0.0,
                  mrr=sum(q.reciprocal_rank for q in qs) / n if n else 0.0,
                  recall=mean, precision=mean, iou=mean, questions=qs, cost=IndexCost(1, 1, 1))


# -- McNemar ----------------------------------------------------------------------------------------

def test_mcnemar_by_hand():
    assert mcnemar_exact(0, 5) == 0.0625  # 2 * (1/2)^5
    assert mcnemar_exact(5, 0) == 0.0625
    assert mcnemar_exact(1, 9) == 22 / 1024  # 2 * (1 + 10) / 2^10
    assert mcnemar_exact(2, 8) == 2 * (1 + 10 + 45) / 1024
    assert mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(0, 0) == 1.0
    assert 0.0 <= mcnemar_exact(0, 3000) < 1e-300 or mcnemar_exact(0, 3000) == 0.0
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


@given(st.integers(0, 60), st.integers(0, 60))
def test_mcnemar_equals_summing_every_outcome_no_likelier_than_the_observed(b, c):
    n = b + c
    if n == 0:
        return
    pmf = [Fraction(math.comb(n, i), 2 ** n) for i in range(n + 1)]
    expected = sum(p for p in pmf if p <= pmf[b])
    assert mcnemar_exact(b, c) == pytest.approx(float(min(Fraction(1), expected)), rel=1e-12)


# -- bootstrap --------------------------------------------------------------------------------------

def test_bootstrap_is_deterministic_and_brackets_the_mean():
    rng = np.random.default_rng(1)
    v = rng.random(60)
    a = bootstrap_ci(v, seed=3)
    assert a == bootstrap_ci(v, seed=3)
    assert a != bootstrap_ci(v, seed=4)
    assert a[0] < v.mean() < a[1]
    assert bootstrap_ci(v, level=0.5)[1] - bootstrap_ci(v, level=0.5)[0] < a[1] - a[0]


def test_bootstrap_width_matches_the_binomial_standard_error():
    v = np.array([1.0, 0.0] * 200)  # 400 questions, half hits: se = 0.025, 95% half-width ~ 0.049
    low, high = bootstrap_ci(v)
    assert low == pytest.approx(0.5 - 0.049, abs=0.008)
    assert high == pytest.approx(0.5 + 0.049, abs=0.008)


def test_bootstrap_covers_the_true_rate_about_95_times_in_100():
    rng = np.random.default_rng(2024)
    covered = 0
    for i in range(300):
        sample = (rng.random(60) < 0.7).astype(float)
        low, high = bootstrap_ci(sample, n_resamples=500, seed=i)
        covered += low <= 0.7 <= high
    assert 0.88 <= covered / 300 <= 0.99


def test_bootstrap_degenerate_inputs():
    assert bootstrap_ci([0.4]) == (0.4, 0.4)
    assert bootstrap_ci([1.0] * 40) == (1.0, 1.0)
    assert bootstrap_ci([0.1] * 7) == (0.1, 0.1)  # exactly, not up to rounding
    with pytest.raises(ValueError, match="no values"):
        bootstrap_ci([])
    with pytest.raises(ValueError, match="level"):
        bootstrap_ci([0.0, 1.0], level=1.0)


def test_rows_share_one_draw():
    rng = np.random.default_rng(5)
    m = rng.random((3, 30))
    assert bootstrap_cis(m, seed=9) == [bootstrap_ci(row, seed=9) for row in m]


def test_large_gold_sets_are_drawn_in_blocks_with_the_same_result_shape():
    v = (np.random.default_rng(0).random(5000) < 0.3).astype(float)
    low, high = bootstrap_ci(v, n_resamples=400)
    assert low < v.mean() < high and high - low < 0.04


# -- per-question values and report intervals -------------------------------------------------------

def test_per_question_values_and_intervals():
    r = report([True, False, True, True], ranks=[1, None, 2, 4], recalls=[1.0, None, 0.5, None])
    assert per_question(r, "hit_rate").tolist() == [1, 0, 1, 1]
    assert per_question(r, "mrr").tolist() == [1, 0, 0.5, 0.25]
    assert per_question(r, "recall").tolist() == [1.0, 0.5]  # only questions with references
    assert per_question(r, "hit_at_budget") is None
    cis = report_intervals(r)
    assert set(cis) == {"hit_rate_ci", "mrr_ci", "recall_ci", "precision_ci", "iou_ci", "hit_at_budget_ci"}
    assert cis["hit_at_budget_ci"] is None
    low, high = cis["hit_rate_ci"]
    assert low <= r.hit_rate <= high
    assert report_intervals(report([True, False]))["recall_ci"] is None
    with pytest.raises(ValueError, match="unknown metric"):
        per_question(r, "accuracy")


def test_report_dict_carries_intervals_deterministically():
    r = report([True, False, True, True, False] * 8)
    a, b = report_dict(r), report_dict(r)
    assert a == b
    assert a["hit_rate"] == 0.6
    low, high = a["hit_rate_ci"]
    assert low < 0.6 < high and a["recall_ci"] is None and a["budget"] is None


# -- paired comparisons -----------------------------------------------------------------------------

def test_five_fixed_none_broken_out_of_40_is_within_noise():
    before = report([False] * 5 + [True] * 20 + [False] * 15)
    after = report([True] * 5 + [True] * 20 + [False] * 15)
    d = paired_delta(before, after, "hit_rate")
    assert (d.fixed, d.broke, d.p_value) == (5, 0, 0.0625)
    assert d.delta == pytest.approx(5 / 40)
    # The bootstrap alone would call it: 0 lies below its interval. McNemar does not.
    assert d.ci[0] > 0
    assert d.verdict == "within noise"
    assert d.questions_needed == 61


def test_clear_gains_and_losses():
    before = report([False] * 20 + [True] * 20)
    after = report([True] * 40)
    d = paired_delta(before, after, "hit_rate")
    assert d.verdict == "better" and d.fixed == 20 and d.broke == 0 and d.p_value < 1e-5
    assert d.ci[0] > 0
    w = paired_delta(after, before, "hit_rate")
    assert w.verdict == "worse" and w.ci[1] < 0 and (w.fixed, w.broke) == (0, 20)


def test_no_change_is_within_noise():
    r = report([True, False] * 10)
    d = paired_delta(r, r, "hit_rate")
    assert d.delta == 0 and d.ci == (0.0, 0.0) and d.p_value == 1.0
    assert d.verdict == "within noise" and d.questions_needed is None


def test_swapped_outcomes_cancel():
    before = report([True] * 10 + [False] * 10)
    after = report([False] * 10 + [True] * 10)
    d = paired_delta(before, after, "hit_rate")
    assert d.delta == 0 and d.p_value == 1.0 and d.verdict == "within noise"
    assert d.ci[0] < 0 < d.ci[1]


def test_mrr_and_span_metrics_use_the_bootstrap_alone():
    before = report([True] * 30, ranks=[3] * 30, recalls=[0.2] * 30)
    after = report([True] * 30, ranks=[1] * 30, recalls=[0.2] * 15 + [0.9] * 15)
    m = paired_delta(before, after, "mrr")
    assert m.p_value is None and m.fixed is None and m.verdict == "better"
    assert m.delta == pytest.approx(1 - 1 / 3)
    deltas = paired_deltas(before, after)
    assert set(deltas) == {"hit_rate", "mrr", "recall", "precision", "iou"}
    assert deltas["recall"].verdict == "better" and deltas["hit_rate"].verdict == "within noise"


def test_paired_needs_one_gold_set_and_a_carried_metric():
    with pytest.raises(ValueError, match="different gold sets"):
        paired_delta(report([True] * 3), report([True] * 4), "hit_rate")
    with pytest.raises(ValueError, match="no question carries recall"):
        paired_delta(report([True] * 3), report([True] * 3), "recall")


# -- how many questions -----------------------------------------------------------------------------

def test_questions_needed_by_hand():
    # 5 fixed, 0 broken of 40: psi = d = 0.125.
    # (1.959964 * sqrt(0.125) + 0.841621 * sqrt(0.125 - 0.015625))^2 / 0.015625
    # = (0.692951 + 0.278340)^2 / 0.015625 = 60.38 -> 61
    assert questions_needed(5, 0, 40) == 61
    assert questions_needed(0, 5, 40) == 61  # the direction does not matter
    assert questions_needed(3, 3, 40) is None
    with pytest.raises(ValueError):
        questions_needed(30, 20, 40)


def test_questions_needed_gives_about_the_promised_power():
    # True discordant rates 15% fixed, 5% broken: d = 0.1, psi = 0.2 -> N questions.
    n = questions_needed(15, 5, 100)
    assert n == 155
    rng = np.random.default_rng(7)
    outcomes = rng.choice(3, size=(1000, n), p=[0.15, 0.05, 0.80])
    fixed = (outcomes == 0).sum(axis=1)
    broke = (outcomes == 1).sum(axis=1)
    power = np.mean([mcnemar_exact(int(b), int(c)) < 0.05 for b, c in zip(fixed, broke, strict=True)])
    assert 0.72 <= power <= 0.86  # the exact test is a little conservative against the 0.8 asked


def test_questions_needed_paired_by_hand():
    # mean 0.1, sd sqrt(0.02 / 3) = 0.08165; ((1.959964 + 0.841621) * 0.08165 / 0.1)^2 = 5.23 -> 6
    assert questions_needed_paired([0.2, 0.0, 0.1, 0.1]) == 6
    assert questions_needed_paired([0.1, -0.1]) is None
    assert questions_needed_paired([0.3] * 5) == 1
