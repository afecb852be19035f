"""Slider scales: notches that round-trip, never decrease, land on the step, and hit round sizes."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from inspector.core.chunking.params import Param, Strategy
from inspector.core.chunking.registry import BUILTINS
from inspector.core.viewmodel.scale import SliderScale, ladder, slider_range, slider_scale


def _noop(doc, params):
    return ()


@st.composite
def int_params(draw) -> Param:
    """An int parameter with any range, step, scale and practical range the declaration allows."""
    step = draw(st.sampled_from([1, 2, 5, 8, 10, 16, 50, 100]))
    minimum = draw(st.integers(0, 500))
    maximum = minimum + draw(st.integers(0, 40_000))
    scale = draw(st.sampled_from(["", "linear", "log2", "log10"]))
    practical = None
    if draw(st.booleans()) and maximum > minimum:
        lo = draw(st.integers(minimum, maximum))
        hi = draw(st.integers(lo, maximum))
        practical = (lo, hi)
    if scale == "linear":
        assume((maximum - minimum) / step <= 5000)  # a declared linear scale has one notch a step
    return Param("size", "tokens", minimum, minimum, maximum, step, scale=scale, practical=practical)


@given(int_params(), st.data())
@settings(max_examples=300, deadline=None)
def test_notches_round_trip_and_never_decrease(param, data):
    maximum = data.draw(st.integers(param.minimum, param.maximum))
    sc = slider_scale(param, maximum)
    lo, hi = slider_range(param, maximum)
    assert sc.values[0] == lo and sc.values[-1] == hi  # both ends are reachable
    assert list(sc.values) == sorted(set(sc.values))  # strictly increasing
    for pos in range(len(sc.values)):
        assert sc.position_of(sc.value_at(pos)) == pos  # position -> value -> position
        if 0 < pos < sc.last:
            assert sc.values[pos] % param.step == 0  # inner notches land on the step
    # value -> position never decreases, and lands on the nearest notch.
    vs = sorted(data.draw(st.lists(st.integers(lo - 10, hi + 10), min_size=2, max_size=30)))
    positions = [sc.position_of(v) for v in vs]
    assert positions == sorted(positions)
    for v in vs:
        nearest = min(abs(x - v) for x in sc.values)
        assert abs(sc.value_at(sc.position_of(v)) - v) == nearest


@given(int_params(), st.data())
@settings(max_examples=200, deadline=None)
def test_a_step_from_any_value_reaches_the_next_notch_in_that_direction(param, data):
    sc = slider_scale(param)
    v = data.draw(st.integers(sc.values[0], sc.values[-1]))
    up, down = sc.value_at(sc.step(v, 1)), sc.value_at(sc.step(v, -1))
    above = [x for x in sc.values if x > v]
    below = [x for x in sc.values if x < v]
    assert up == (above[0] if above else sc.values[-1])
    assert down == (below[-1] if below else sc.values[0])
    frac = sc.fraction_of(v)
    assert 0 <= frac <= sc.last
    assert sc.step(v, 0) == sc.position_of(v)


@given(st.integers(1, 5000), st.data())
@settings(max_examples=100, deadline=None)
def test_fraction_of_is_monotonic_and_exact_on_notches(hi, data):
    sc = slider_scale(Param("size", "tokens", 16, 1, 8192, 8, practical=(16, max(16, hi)), scale="log2"))
    for pos, v in enumerate(sc.values):
        assert sc.fraction_of(v) == pytest.approx(pos)
    xs = sorted(data.draw(st.lists(st.floats(0, 6000), min_size=2, max_size=20)))
    fr = [sc.fraction_of(x) for x in xs]
    assert all(a <= b + 1e-12 for a, b in itertools.pairwise(fr))


def test_token_sizes_get_round_notches_over_the_practical_range():
    fixed_tokens = next(s for s in BUILTINS if s.name == "fixed_tokens")
    sc = slider_scale(fixed_tokens.param_for_role("size"))
    assert sc.kind == "log2"
    assert sc.values[:12] == (16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160)
    assert sc.values[-5:] == (2048, 2560, 3072, 3584, 4096)
    assert len(sc.values) == 31  # ~6 pixels a notch on a 180-pixel slider, not 45 tokens a pixel
    assert sc.page == 4  # PageUp doubles: 256 -> 512
    assert sc.value_at(sc.step(256, sc.page)) == 512
    fixed_chars = next(s for s in BUILTINS if s.name == "fixed_chars")
    chars = slider_scale(fixed_chars.param_for_role("size"))
    assert chars.kind == "log10" and {100, 200, 250, 500, 1000, 2000, 4000} <= set(chars.values)


def test_every_builtin_default_sits_on_a_notch():
    """A slider at its default is exactly the default, and the first arrow press moves one notch."""
    for strat in BUILTINS:
        values = strat.defaults()
        for p in strat.params:
            if not p.numeric:
                continue
            other = values.get(p.less_than) if p.less_than else None
            sc = slider_scale(p, reference=other)
            assert p.default in sc.values, (strat.name, p.name, p.default)


def test_an_overlap_slider_ends_at_its_share_of_the_size():
    overlap = Param("overlap", "tokens", 0, 0, 4096, 8, less_than="size", scale="log2", practical_share=0.5)
    sc = slider_scale(overlap, maximum=255, reference=256)
    assert sc.values == (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128)
    assert slider_scale(overlap, maximum=99, reference=100).values[-1] == 48  # half, down to the step
    # Without a share the slider reaches the constraint's end, which is a notch although off-scale.
    plain = Param("overlap", "tokens", 0, 0, 4096, 8, less_than="size", scale="log2")
    assert slider_scale(plain, maximum=255).values[-2:] == (224, 255)


def test_a_constraint_narrower_than_the_practical_range_falls_back_to_the_valid_minimum():
    child = Param("child_size", "tokens", 16, 16, 4096, 8, practical=(64, 2048), scale="log2")
    assert slider_range(child, maximum=31) == (16, 31)
    assert slider_scale(child, maximum=31).values == (16, 24, 31)


def test_linear_and_float_ladders():
    assert ladder("linear", 1, 99, 1) == tuple(range(1, 100))
    assert ladder("linear", 0.0, 1.0, 0.05, integer=False)[:4] == (0.0, 0.05, 0.1, 0.15)
    assert slider_scale(Param("ratio", "", 0.5, 0.0, 1.0, 0.05)).kind == "linear"
    assert ladder("log2", 5, 5, 8) == (5,)
    assert isinstance(slider_scale(Param("t", "percentile", 90, 1, 99, 1)), SliderScale)


@pytest.mark.parametrize("kwargs, message", [
    ({"scale": "cubic"}, "scale 'cubic'"),
    ({"practical": (0, 100)}, "practical range"),
    ({"practical": (200, 100)}, "practical range"),
    ({"practical_share": 0.5}, "practical_share needs less_than"),
])
def test_slider_declarations_are_checked(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Strategy("bad_slider", _noop, (Param("size", "tokens", 64, 16, 1024, 8, **kwargs),), "demo")


def test_slider_fields_leave_validation_alone():
    """The practical range shapes the slider only: values outside it stay valid."""
    for strat in BUILTINS:
        for p in strat.params:
            if p.practical is not None:
                assert strat.validate({p.name: p.default})[p.name] == p.default
    fixed_tokens = next(s for s in BUILTINS if s.name == "fixed_tokens")
    assert fixed_tokens.validate({"size": 8192, "overlap": 0})["size"] == 8192
    assert fixed_tokens.validate({"size": 1, "overlap": 0})["size"] == 1
