"""Cross-validated selection: it finds a truly better configuration, keeps the current one when
nothing is, and prefers the current one (then the cheaper) on ties."""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.evaluation.gold import GoldQuestion
from inspector.core.evaluation.metrics import IndexCost, QuestionResult, Report
from inspector.core.evaluation.selection import cross_validated_choice, score_matrix


def bernoulli(rng: np.random.Generator, rates: list[float], n: int) -> np.ndarray:
    return (rng.random((len(rates), n)) < np.asarray(rates)[:, None]).astype(float)


def test_a_configuration_better_on_every_question_is_chosen():
    rng = np.random.default_rng(0)
    m = bernoulli(rng, [0.5, 0.5, 0.5], 200)
    m[2] = 1.0
    s = cross_validated_choice(m, current=0)
    assert s.config_index == 2 and all(f.pick == 2 for f in s.folds)
    assert not s.keep_current and s.gain_ci[0] > 0 and s.p_value < 1e-6
    assert s.gain == pytest.approx(1.0 - m[0].mean())
    assert s.optimism == pytest.approx(0.0)  # picked in every fold: nothing flattered
    assert s.tied_with_best == (False, False, True)


def test_a_large_margin_over_200_noisy_questions_is_found():
    rng = np.random.default_rng(1)
    m = bernoulli(rng, [0.5, 0.8, 0.55, 0.45], 200)
    s = cross_validated_choice(m, current=0, seed=3)
    assert s.config_index == 1 and not s.keep_current
    assert s.gain_ci[0] > 0 and s.gain == pytest.approx(m[1].mean() - m[0].mean(), abs=0.05)


def test_equal_configurations_keep_the_current_one():
    m = np.tile((np.arange(40) % 3 == 0).astype(float), (4, 1))
    s = cross_validated_choice(m, current=2, cost=[1, 2, 3, 4])
    assert s.config_index == 2 and s.keep_current
    assert s.gain == 0 and s.gain_ci == (0.0, 0.0) and set(s.differences) == {0.0}
    assert s.tied_with_best == (True,) * 4 and s.cheapest_tied == 2


def test_noise_with_one_mean_rarely_moves_the_current_configuration():
    # 20 configurations, each hitting 60% of 40 questions at random: the in-sample winner looks
    # better than it is (optimism > 0) and is nearly never the current one; cross-validation
    # should seldom call a switch.
    switches = naive = 0
    optimism = []
    for seed in range(100):
        m = bernoulli(np.random.default_rng(100 + seed), [0.6] * 20, 40)
        s = cross_validated_choice(m, current=0, seed=seed, n_resamples=500)
        switches += not s.keep_current
        naive += s.config_index != 0
        optimism.append(s.optimism)
    assert naive >= 85
    assert switches <= 6  # 4.3% over 2000 such gold sets
    assert np.mean(optimism) > 0.05


def test_ties_go_to_the_current_then_the_cheaper_then_the_lower_index():
    base = np.array([1, 0, 1, 1, 0, 1, 0, 1, 1, 0], dtype=float)
    m = np.vstack([base * 0, base, base, base])
    assert cross_validated_choice(m, current=3, cost=[0, 9, 1, 5]).config_index == 3
    assert cross_validated_choice(m, current=0, cost=[0, 9, 1, 5]).config_index == 2
    assert cross_validated_choice(m, current=0, cost=[0, 1, 1, 5]).config_index == 1
    assert cross_validated_choice(m, current=0).config_index == 1
    s = cross_validated_choice(m, current=0, cost=[0, 9, 1, 5])
    assert s.tied_with_best == (False, True, True, True) and s.cheapest_tied == 2


def test_deterministic_for_a_seed_and_every_question_held_out_once():
    rng = np.random.default_rng(4)
    m = bernoulli(rng, [0.6, 0.65, 0.5], 53)
    a = cross_validated_choice(m, current=0, seed=11)
    assert a == cross_validated_choice(m, current=0, seed=11)
    assert [f.held_out for f in a.folds] != [f.held_out for f in cross_validated_choice(m, 0, seed=12).folds]
    held = sorted(i for f in a.folds for i in f.held_out)
    assert held == list(range(53)) and len(a.folds) == 5  # every question held out once
    assert [len(f.held_out) for f in a.folds] == [11, 11, 11, 10, 10]
    assert a.optimism == pytest.approx(a.in_sample_score - a.cv_score)
    assert a.cv_score == pytest.approx(a.current_score + a.gain)


def test_fewer_questions_than_folds_is_leave_one_out():
    m = np.array([[0, 1, 0], [1, 1, 1]], dtype=float)
    s = cross_validated_choice(m, current=0, folds=5)
    assert len(s.folds) == 3 and all(len(f.held_out) == 1 for f in s.folds)
    assert all(f.pick == 1 for f in s.folds) and s.differences == (1.0, 0.0, 1.0)


def test_one_question_keeps_the_current_configuration():
    s = cross_validated_choice([[0.0], [1.0]], current=0)
    assert len(s.folds) == 1 and s.folds[0].pick == 0 and s.gain == 0
    assert s.config_index == 1 and s.keep_current  # the in-sample pick, unconfirmed


def test_bad_input():
    with pytest.raises(ValueError, match="matrix"):
        cross_validated_choice(np.zeros((2, 0)), current=0)
    with pytest.raises(ValueError, match="current"):
        cross_validated_choice(np.zeros((2, 3)), current=2)
    with pytest.raises(ValueError, match="cost"):
        cross_validated_choice(np.zeros((2, 3)), current=0, cost=[1.0])
    with pytest.raises(ValueError, match="folds"):
        cross_validated_choice(np.zeros((2, 3)), current=0, folds=1)
    with pytest.raises(ValueError, match="finite"):
        cross_validated_choice([[0.0, np.nan]], current=0)


def _report(hits: list[bool], recalls: list[float | None]) -> Report:
    qs = tuple(QuestionResult(question=GoldQuestion(f"q{i}", ("a",)), hit=h, rank=1 if h else None,
                              retrieved=(), recall=r)
               for i, (h, r) in enumerate(zip(hits, recalls, strict=True)))
    return Report(5, 0.0, 0.0, None, None, None, qs, IndexCost(1, 1, 1))


def test_score_matrix_from_reports():
    a = _report([True, False, True], [0.5, None, 1.0])
    b = _report([False, False, True], [0.25, None, 0.0])
    m, kept = score_matrix([a, b])
    assert m.tolist() == [[1, 0, 1], [0, 0, 1]] and kept == (0, 1, 2)
    m, kept = score_matrix([a, b], "recall")
    assert m.tolist() == [[0.5, 1.0], [0.25, 0.0]] and kept == (0, 2)
    with pytest.raises(ValueError, match="different gold sets"):
        score_matrix([a, _report([True], [None])])
    with pytest.raises(ValueError, match="unknown metric"):
        score_matrix([a], "accuracy")


def test_continuous_scores_use_the_bootstrap_alone():
    rng = np.random.default_rng(8)
    m = np.vstack([rng.random(80) * 0.5, rng.random(80) * 0.5 + 0.4])  # e.g. reciprocal ranks
    s = cross_validated_choice(m, current=0)
    assert s.p_value is None and s.config_index == 1 and not s.keep_current
