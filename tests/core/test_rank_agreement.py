"""Spearman's rank correlation with ties averaged (numpy only), checked against hand-worked values,
scipy where it is installed, and its invariants."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.evaluation.rank_agreement import average_ranks, bootstrap_spearman, spearman, top_indices


def test_average_ranks_share_ties():
    assert average_ranks([10, 20, 20, 30]).tolist() == [1.0, 2.5, 2.5, 4.0]
    assert average_ranks([3, 1, 3, 3, 2]).tolist() == [4.0, 1.0, 4.0, 4.0, 2.0]
    assert average_ranks([]).tolist() == []
    with pytest.raises(ValueError):
        average_ranks([1.0, float("nan")])


def test_spearman_by_hand():
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # Ranks a = 1, 2.5, 2.5, 4 and b = 1, 2, 3, 4: Pearson of those = 0.9486...
    assert spearman([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(3 / math.sqrt(10), abs=1e-12)
    assert math.isnan(spearman([1, 1, 1], [1, 2, 3]))
    assert math.isnan(spearman([1], [2]))
    with pytest.raises(ValueError, match="length"):
        spearman([1, 2], [1, 2, 3])


def test_top_indices():
    assert top_indices([0.1, 0.5, 0.2]) == (1,)
    assert top_indices([0.5, 0.1, 0.5]) == (0, 2)
    assert top_indices([]) == ()


values = st.lists(st.integers(-5, 5).map(float), min_size=3, max_size=30)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_matches_scipy_and_its_invariants(data):
    a = data.draw(values)
    b = data.draw(st.lists(st.integers(-5, 5).map(float), min_size=len(a), max_size=len(a)))
    rho = spearman(a, b)
    if math.isnan(rho):
        assert len(set(a)) == 1 or len(set(b)) == 1
        return
    assert -1 - 1e-12 <= rho <= 1 + 1e-12
    assert spearman(b, a) == pytest.approx(rho)
    # A strictly increasing transform changes no rank; negating one side flips the sign.
    assert spearman(np.exp(np.asarray(a) / 3), b) == pytest.approx(rho)
    assert spearman(-np.asarray(a), b) == pytest.approx(-rho)
    scipy_stats = pytest.importorskip("scipy.stats")
    assert rho == pytest.approx(float(scipy_stats.spearmanr(a, b).statistic), abs=1e-9)
    assert average_ranks(a).tolist() == pytest.approx(scipy_stats.rankdata(a, method="average").tolist())


def test_bootstrap_interval_holds_rho_and_narrows_with_agreement():
    rng = np.random.default_rng(1)
    truth = np.linspace(0.2, 0.8, 8)
    # Two sets of 0/1 scores drawn from the same per-configuration rates: they agree, noisily.
    a = (rng.random((8, 300)) < truth[:, None]).astype(float)
    b = (rng.random((8, 200)) < truth[:, None]).astype(float)
    r = bootstrap_spearman(a, b, resamples=300, seed=3)
    assert r.low <= r.rho <= r.high and r.resamples == 300
    assert r.low > 0.5  # 8 well separated rates: the ranking is clear whatever questions are drawn
    assert bootstrap_spearman(a, b, resamples=300, seed=3) == r  # deterministic for a seed
    # A set scored on the reversed rates disagrees; its interval stays below zero.
    c = (rng.random((8, 200)) < truth[::-1, None]).astype(float)
    rc = bootstrap_spearman(a, c, resamples=300, seed=3)
    assert rc.high < 0 and rc.rho < 0
    # Noise only (every configuration the same rate): an interval that straddles zero, wide.
    n1 = (rng.random((8, 100)) < 0.5).astype(float)
    n2 = (rng.random((8, 100)) < 0.5).astype(float)
    rn = bootstrap_spearman(n1, n2, resamples=300, seed=3)
    assert rn.low < 0 < rn.high and rn.high - rn.low > 0.5


def test_bootstrap_rejects_mismatched_shapes():
    with pytest.raises(ValueError):
        bootstrap_spearman(np.zeros((3, 4)), np.zeros((4, 4)))
    with pytest.raises(ValueError):
        bootstrap_spearman(np.zeros(3), np.zeros(3))
    r = bootstrap_spearman(np.zeros((3, 0)), np.ones((3, 2)))
    assert r.resamples == 0
