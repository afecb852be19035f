"""The hit-rate trace's plain-data half: which configurations a slider position stands for, which
positions to score first, and a cache that cannot mix up scopes."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.chunking.registry import BUILTINS, get_strategy
from inspector.core.documents.document import from_text, load_document
from inspector.core.evaluation.config import EvalConfig
from inspector.core.evaluation.gold import GoldQuestion, load_gold
from inspector.core.viewmodel.scale import slider_scale
from inspector.core.viewmodel.trace import (
    TraceCache,
    TraceScore,
    follow,
    plan_trace,
    snapshot,
    trace_scope,
)
from inspector.core.workbench import Workbench

ROOT = Path(__file__).resolve().parents[2]


def test_moving_the_size_drags_and_pushes_its_dependants():
    pc = get_strategy("parent_child")
    fit = {"fit_embedder": True}  # parameters added later keep their defaults
    base = {"parent_size": 1024, "child_size": 512, "child_overlap": 256, **fit}
    assert follow(pc, base, "parent_size", 2048) == {**base, "parent_size": 2048}  # nothing to move
    assert follow(pc, base, "parent_size", 320) == {"parent_size": 320, "child_size": 319, "child_overlap": 256, **fit}
    assert follow(pc, base, "parent_size", 64) == {"parent_size": 64, "child_size": 63, "child_overlap": 62, **fit}
    md = get_strategy("markdown")
    md_added = {"fit_embedder": True, "min_tokens": 32}
    assert follow(md, {"size": 256, "hard_cap": 512}, "size", 1024) == {"size": 1024, "hard_cap": 1024, **md_added}
    ft = get_strategy("fixed_tokens")
    assert follow(ft, {"size": 256, "overlap": 200}, "size", 96) == {"size": 96, "overlap": 95}
    assert follow(ft, {"size": 256, "overlap": 0}, "size", 0) is None  # below the minimum
    assert follow(pc, {"parent_size": 1024, "child_size": 16, "child_overlap": 0}, "parent_size", 16) is None


@given(st.sampled_from([s for s in BUILTINS if s.param_for_role("size") is not None]), st.data())
@settings(max_examples=120, deadline=None)
def test_every_followed_configuration_is_valid_and_keeps_the_moved_value(strat, data):
    size = strat.param_for_role("size")
    params = strat.defaults()
    value = data.draw(st.sampled_from(slider_scale(size).values))
    out = follow(strat, params, size.name, value)
    if out is not None:
        assert out[size.name] == value and strat.validate(out) == out


def test_the_plan_scores_the_current_value_first_then_the_nearest_notches():
    ft = get_strategy("fixed_tokens")
    scale = slider_scale(ft.param_for_role("size"))
    plan = plan_trace(ft, {"size": 256, "overlap": 0}, scale, k=5, retriever="bm25", with_prefix=False)
    assert plan is not None and plan.param == "size" and plan.current == 256
    assert [v for v, _c in plan.todo] == [256, 320, 224, 384, 192, 448, 160]
    assert all(c == EvalConfig("fixed_tokens", {"size": v, "overlap": 0}, 5, "bm25", False, "exact")
               for v, c in plan.todo)
    assert [v for v, _c in plan.shown] == list(scale.values)
    # A typed value between notches is scored itself, with the notches on each side around it.
    off = plan_trace(ft, {"size": 300, "overlap": 0}, scale, k=5, retriever="bm25", with_prefix=False, radius=2)
    assert [v for v, _c in off.todo] == [300, 320, 256, 384, 224]
    assert 300 in [v for v, _c in off.shown]
    # At the end of the slider there is only one side.
    end = plan_trace(ft, {"size": 16, "overlap": 0}, scale, k=5, retriever="bm25", with_prefix=False)
    assert [v for v, _c in end.todo] == [16, 24, 32, 40]


def test_no_plan_without_a_size_or_for_invalid_parameters():
    para = get_strategy("paragraph")
    ft = get_strategy("fixed_tokens")
    scale = slider_scale(ft.param_for_role("size"))
    assert plan_trace(para, {}, scale, k=5, retriever="bm25", with_prefix=False) is None
    assert plan_trace(ft, {"size": 64, "overlap": 64}, scale, k=5, retriever="bm25", with_prefix=False) is None


def test_the_cache_is_keyed_by_scope_and_configuration():
    doc = from_text("alpha beta gamma. " * 50, "a.md")
    other = from_text("alpha beta delta. " * 50, "a.md")
    q1 = (GoldQuestion("alpha?", ("alpha",)),)
    q2 = (GoldQuestion("beta?", ("beta",)),)
    cfg = EvalConfig("fixed_tokens", {"size": 64, "overlap": 0}, 5, "bm25", False, "exact")
    cache = TraceCache()
    scope = trace_scope([doc], q1, "")
    cache.put(scope, cfg, TraceScore(0.5, 1, 2))
    assert cache.get(trace_scope([doc], list(q1), ""), cfg) == TraceScore(0.5, 1, 2)  # equal content, new objects
    assert cache.get(trace_scope([doc], q2, ""), cfg) is None  # another gold set
    assert cache.get(trace_scope([other], q1, ""), cfg) is None  # same name, other content
    assert cache.get(trace_scope([doc], q1, "model-x"), cfg) is None  # another model
    assert cache.get(scope, EvalConfig("fixed_tokens", {"size": 64, "overlap": 0}, 3, "bm25", False, "exact")) is None
    assert cache.get(scope, EvalConfig("fixed_tokens", {"size": 64, "overlap": 0}, 5, "dense", False, "exact")) is None


def test_a_snapshot_shows_scored_notches_and_what_is_pending():
    ft = get_strategy("fixed_tokens")
    scale = slider_scale(ft.param_for_role("size"))
    plan = plan_trace(ft, {"size": 256, "overlap": 0}, scale, k=5, retriever="bm25", with_prefix=False, radius=1)
    cache = TraceCache()
    scope = trace_scope([from_text("x " * 10, "x.md")], (), "")
    far = EvalConfig("fixed_tokens", {"size": 1024, "overlap": 0}, 5, "bm25", False, "exact")
    cache.put(scope, far, TraceScore(0.9, 9, 10))  # scored earlier, still this context: shown
    cache.put(scope, plan.todo[0][1], TraceScore(0.6, 6, 10))
    trace = snapshot(plan, cache, scope, kind="bm25", k=5)
    assert [(p.value, p.score is not None, p.current) for p in trace.points] == [
        (224, False, False), (256, True, True), (320, False, False), (1024, True, False)]
    assert trace.pending == 2 and [p.value for p in trace.best()] == [1024]
    cache.put(scope, plan.todo[0][1], TraceScore(0.9, 9, 10))  # a tie: both are the best
    assert [p.value for p in snapshot(plan, cache, scope, kind="bm25", k=5).best()] == [256, 1024]


def test_a_planned_configuration_scores_as_the_workbench_evaluates_it():
    """The trace's configurations are ordinary ones: `Workbench.evaluate` scores them like the CLI."""
    doc = load_document(ROOT / "sample_docs" / "handbook.md")
    gold = load_gold(ROOT / "sample_docs" / "handbook.gold.jsonl", [doc])
    wb = Workbench([doc], gold)
    ft = get_strategy("fixed_tokens")
    plan = plan_trace(ft, {"size": 256, "overlap": 0}, slider_scale(ft.param_for_role("size")), k=5,
                      retriever="bm25", with_prefix=False, radius=1)
    rates = {v: wb.evaluate(c).hit_rate for v, c in plan.todo}
    assert set(rates) == {224, 256, 320} and all(0 < r <= 1 for r in rates.values())
