"""Tuning with sliders: notches and keys, re-chunking during a drag, and the exact hit-rate trace.

The window tests use BM25 or the deterministic HashEmbedder (exact, fast); the trace job's
holding back is tested on the job itself, with a scripted hold, so nothing depends on timing.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from PySide6.QtCore import Qt

from inspector.core.chunking.registry import BUILTINS, strategies
from inspector.core.documents.document import from_text
from inspector.core.evaluation.config import EvalConfig
from inspector.core.runtime.cancel import check_cancelled
from inspector.core.viewmodel.scale import slider_scale
from inspector.core.viewmodel.trace import TraceCache, follow, trace_scope
from inspector.core.workbench import Workbench
from inspector.qt.controllers.state import InspectorState
from inspector.qt.controllers.trace import trace_job
from inspector.qt.panels.strategy_panel import NumberControl, StrategyPanel


@pytest.fixture
def panel(qtbot):
    state = InspectorState()
    p = StrategyPanel(state)
    qtbot.addWidget(p)
    return p


# -- notches and keys ------------------------------------------------------------------------------

def test_arrow_keys_move_one_notch_and_page_keys_about_a_doubling(panel, qtbot):
    panel.set_strategy("fixed_tokens")
    ctl: NumberControl = panel.control("size")
    assert ctl.value() == 256 and ctl.slider.maximum() == ctl.scale.last
    steps = [(Qt.Key.Key_Right, 320), (Qt.Key.Key_Right, 384), (Qt.Key.Key_Left, 320), (Qt.Key.Key_Left, 256),
             (Qt.Key.Key_PageUp, 512), (Qt.Key.Key_PageDown, 256), (Qt.Key.Key_Down, 224), (Qt.Key.Key_Up, 256)]
    for key, expected in steps:
        qtbot.keyClick(ctl.slider, key)
        assert ctl.value() == expected, key
        assert panel.state.params["size"] == expected
    # From a typed value between notches, one press goes to the next notch in that direction.
    ctl.spin.setValue(300)
    assert panel.state.params["size"] == 300 and ctl.value_at(ctl.slider.value()) == 320
    qtbot.keyClick(ctl.slider, Qt.Key.Key_Left)
    assert ctl.value() == 256
    ctl.spin.setValue(300)
    qtbot.keyClick(ctl.slider, Qt.Key.Key_Right)
    assert ctl.value() == 320
    qtbot.keyClick(ctl.slider, Qt.Key.Key_End)
    assert ctl.value() == 4096  # the practical end; the spin box goes further
    ctl.spin.setValue(8192)
    assert panel.state.params["size"] == 8192


def test_the_overlap_slider_spans_half_the_size_and_follows_it(panel):
    panel.set_strategy("fixed_tokens")
    overlap: NumberControl = panel.control("overlap")
    assert overlap.scale.values[-1] == 128 and overlap.maximum == 255  # slider to half, spin box below size
    panel.set_value("size", 1024)
    assert overlap.scale.values[-1] == 512 and overlap.maximum == 1023
    panel.set_value("overlap", 800)  # typed past the slider's end: valid, the slider rests at its end
    assert panel.state.params["overlap"] == 800 and overlap.slider.value() == overlap.slider.maximum()
    assert panel.problem.isHidden()


@pytest.mark.parametrize("name", sorted(s.name for s in BUILTINS if s.param_for_role("size") is not None))
def test_moving_the_size_gives_what_the_trace_plans_for_that_position(panel, name):
    """The trace scores `follow(...)`: it must be what the panel itself does when the size moves."""
    strat = strategies()[name]
    size = strat.param_for_role("size")
    values = slider_scale(size).values
    wide = strat.validate({p.name: p.maximum // 2 if p.name == size.name else p.maximum // 4
                           for p in strat.params if p.numeric})  # followers near their limits
    panel.set_strategy(name)
    for start in (strat.defaults(), wide):
        for v in (values[0], values[len(values) // 3], values[-1]):
            panel.state.set_params(start)
            assert panel.values() == start
            panel.set_value(size.name, v)
            assert panel.values() == follow(strat, start, size.name, v), (start, v)


# -- re-chunking during a drag -----------------------------------------------------------------------

def test_a_drag_rechunks_while_it_moves_and_the_release_gets_its_own_request(qtbot, make_window, open_doc,
                                                                              wait_complete):
    w = make_window(debounce_ms=100)
    open_doc(w)
    w.strategy_panel.set_strategy("fixed_tokens")
    wait_complete(w)
    slider = w.strategy_panel.control("size").slider
    sent: list[tuple[int, bool]] = []
    w.controller.requested.connect(lambda _rid: sent.append((w.state.params["size"], w.state.dragging)))

    slider.setSliderDown(True)  # sliderPressed
    assert w.state.dragging
    for _ in range(3):
        slider.setValue(slider.value() + 1)
    assert sent == [] and w.controller.pending  # throttled: the first move started the timer
    with qtbot.waitSignal(w.controller.requested, timeout=5000):
        pass
    for _ in range(2):  # a continuous drag: no pause, still a request per throttle interval
        slider.setValue(slider.value() + 1)
    with qtbot.waitSignal(w.controller.requested, timeout=5000):
        pass
    slider.setValue(slider.value() + 1)
    final = w.strategy_panel.control("size").value()
    slider.setSliderDown(False)  # sliderReleased: the final position is sent at once
    assert not w.state.dragging
    assert [d for _s, d in sent] == [True, True, False]
    assert sent[-1][0] == final and len({s for s, _d in sent}) == 3
    assert not w.controller.pending
    r = wait_complete(w)
    assert r.request.params["size"] == final


def test_a_release_where_the_last_request_was_sends_nothing_more(qtbot, make_window, open_doc, wait_complete):
    w = make_window()
    open_doc(w)
    wait_complete(w)
    slider = w.strategy_panel.control("size").slider
    sent: list[int] = []
    w.controller.requested.connect(sent.append)
    slider.setSliderDown(True)
    slider.setValue(slider.value() + 2)
    with qtbot.waitSignal(w.controller.requested, timeout=5000):
        pass
    slider.setSliderDown(False)
    assert len(sent) == 1 and not w.controller.pending and not w.state.dragging


# -- the exact hit-rate trace ----------------------------------------------------------------------

def _handle_centre_in(widget, slider) -> float:
    """x of the slider handle's centre, in `widget`'s coordinates, as the style draws it."""
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QStyle, QStyleOptionSlider

    opt = QStyleOptionSlider()
    slider.initStyleOption(opt)
    rect = slider.style().subControlRect(QStyle.ComplexControl.CC_Slider, opt, QStyle.SubControl.SC_SliderHandle,
                                         slider)
    window = widget.window()
    offset = slider.mapTo(window, QPoint(0, 0)) - widget.mapTo(window, QPoint(0, 0))
    return offset.x() + rect.x() + rect.width() / 2


def _trace_done(w, value=None):
    t = w.trace.trace
    return (t is not None and t.points and t.pending == 0 and not w.trace.runner.busy
            and (value is None or any(p.current and p.value == value for p in t.points)))


def _expected(w, strategy, params):
    """The core's own score of a configuration, as the CLI would compute it."""
    r = w.retrieval
    wb = Workbench([w.state.document], r.gold, embedder=r.embedder, cache=r.cache, lazy_model=False)
    config = EvalConfig(strategy, params, r.k, r.retriever, w.state.with_prefix, "exact")
    return wb.evaluate(config, questions=r.gold_questions).hit_rate


def test_the_trace_scores_the_neighbours_exactly_and_is_invalidated_by_a_strategy_switch(
        qtbot, dense_window, open_doc, wait_result):
    w = dense_window()
    w.state.set_strategy("fixed_tokens")
    open_doc(w)  # the handbook opens with its gold set
    main = wait_result(w, mode="exact", gold=True)
    qtbot.waitUntil(lambda: _trace_done(w, 256), timeout=60_000)
    t = w.trace.trace
    assert t.kind == "exact" and t.param == "size" and t.k == 5
    assert {160, 192, 224, 256, 320, 384, 448} <= {p.value for p in t.scored}
    here = next(p for p in t.points if p.current)
    assert here.value == 256 and here.score.hit_rate == main.report.hit_rate  # the main exact figure
    for p in t.scored:
        if p.value in (192, 448):
            assert p.score.hit_rate == _expected(w, "fixed_tokens", {"size": p.value, "overlap": 0})
            assert p.score.questions == len(w.retrieval.gold_questions)
    strip = w.strategy_panel.trace_strip
    assert strip is not None and strip.isVisible() and strip.trace is t
    assert strip.caption.text().startswith("Exact hit rate@5 at nearby sizes")
    # Each bar stands under the slider's handle as it would be at that notch.
    ctl = w.strategy_panel.control("size")
    for value in (192, 256, 448):
        ctl.slider.setSliderPosition(ctl.position_of(value))
        handle = _handle_centre_in(strip.plot, ctl.slider)
        assert abs(strip.plot.x_of(value) - handle) <= 1.0
        assert abs(strip.plot.bar_rect(next(p for p in t.points if p.value == value)).center().x() - handle) <= 1.0
    ctl.slider.setSliderPosition(ctl.position_of(256))

    w.state.set_strategy("recursive")
    t2 = w.trace.trace
    assert t2 is not t and all(p.score is None for p in t2.points)  # nothing of fixed_tokens shown
    assert w.strategy_panel.trace_strip.trace is t2
    qtbot.waitUntil(lambda: _trace_done(w, 256), timeout=60_000)
    t3 = w.trace.trace
    p = next(p for p in t3.scored if p.value == 320)
    assert p.score.hit_rate == _expected(w, "recursive", {"size": 320, "overlap": 0})


def test_k_and_retriever_changes_supersede_the_trace(qtbot, dense_window, open_doc, wait_result):
    w = dense_window()
    w.state.set_strategy("fixed_tokens")
    open_doc(w)
    wait_result(w, mode="exact", gold=True)
    qtbot.waitUntil(lambda: _trace_done(w), timeout=60_000)
    w.retrieval.set_k(3)
    assert w.trace.trace.k == 3 and all(p.score is None for p in w.trace.trace.points)
    w.retrieval.set_retriever("bm25")
    assert w.trace.trace.kind == "bm25"
    wait_result(w, mode="exact", gold=True)
    qtbot.waitUntil(lambda: _trace_done(w), timeout=60_000)
    p = next(p for p in w.trace.trace.scored if p.value == 224)
    assert p.score.hit_rate == _expected(w, "fixed_tokens", {"size": 224, "overlap": 0})
    assert w.strategy_panel.trace_strip.caption.text().startswith("BM25 hit rate@3")


def test_without_the_model_a_dense_trace_waits_and_says_so(qtbot, dense_window, open_doc):
    w = dense_window(start=False)
    open_doc(w)
    t = w.trace.trace
    assert t is not None and not t.points and "embedding model" in t.status
    assert "embedding model" in w.strategy_panel.trace_strip.caption.text()
    assert not w.trace.runner.busy


def test_the_trace_holds_while_the_user_drags(qtbot, dense_window):
    w = dense_window(start=False)
    assert not w.trace.held
    w.state.set_dragging(True)
    assert w.trace.held
    w.state.set_dragging(False)
    assert not w.trace.held


def test_the_trace_job_waits_for_the_main_work_and_scores_an_interrupted_position_again():
    """The job never starts a position while held, and a hold arriving mid-position (seen by the
    core's cancellation checks) makes it wait and score that position again."""
    doc = from_text("alpha beta. " * 20, "a.md")
    cfgs = [(v, EvalConfig("fixed_tokens", {"size": v, "overlap": 0}, 5, "bm25", False, "exact")) for v in (64, 128)]
    log: list[tuple] = []
    script = iter([True, True, False, True, False, False, False, False, False, False])

    def hold() -> bool:
        v = next(script, False)
        log.append(("hold", v))
        return v

    class Bench:
        def chunks_for(self, config, docs, lenient=False):  # the trace chunks as the config says (its view)
            return {doc.doc_id: ()}

        def evaluate(self, config, **_kw):
            log.append(("start", config.params["size"]))
            check_cancelled()  # where the core's loops look (embedding batches, chunkers)
            log.append(("done", config.params["size"]))
            return SimpleNamespace(hit_rate=0.5, hits=1, questions=(None, None), context_tokens_mean=None)

    cache = TraceCache()
    scope = trace_scope([doc], (), "")
    job = trace_job(Bench(), cfgs, [doc], (), scope, cache, hold, nice=False)
    out = list(job(lambda: False, lambda *_a: None))
    assert [(v, s.hit_rate) for _sc, v, _c, s in out] == [(64, 0.5), (128, 0.5)]
    starts = [i for i, e in enumerate(log) if e[0] == "start"]
    for i in starts:  # every start follows a hold check that said "go"
        assert log[i - 1] == ("hold", False)
    assert [e for e in log if e[0] != "hold"] == [("start", 64), ("start", 64), ("done", 64),
                                                  ("start", 128), ("done", 128)]
    # A position the cache already holds (the main figures scored it) is skipped; a cancelled job stops.
    cache.put(scope, cfgs[0][1], out[0][3])
    log.clear()
    assert [v for _s, v, _c, _sc in trace_job(Bench(), cfgs, [doc], (), scope, cache, lambda: False,
                                              nice=False)(lambda: False, lambda *_a: None)] == [128]
    assert list(trace_job(Bench(), cfgs, [doc], (), scope, TraceCache(), lambda: False,
                          nice=False)(lambda: True, lambda *_a: None)) == []


def test_the_caption_says_what_the_bars_are():
    from inspector.core.viewmodel.trace import Trace, TracePoint, TraceScore
    from inspector.qt.panels.trace import caption

    def pt(v, rate, current=False):
        return TracePoint(v, None if rate is None else TraceScore(rate, int(rate * 64), 64), current)

    t = Trace("size", (pt(192, 0.5), pt(256, 0.625, True), pt(320, 0.625), pt(384, None)), "exact", 5, pending=1)
    text = caption(t, unit="tokens")
    assert text == "Exact hit rate@5 at nearby sizes: 50.0–62.5 %, best at 256, 320 tokens · scoring 1 more…"
    assert caption(t, preview=True).endswith("(exact embeddings; the live figure is the pooled preview)")
    bm25 = Trace("parent_size", (pt(512, 0.5, True), pt(640, 0.5)), "bm25", 3)
    assert caption(bm25, preview=True) == "BM25 hit rate@3 at nearby parent sizes: 50.0 %"  # equal: no best
    assert caption(Trace("size", (), "exact", 5, status="waits for the model")) == "waits for the model"
    assert caption(None) == ""


def test_the_best_size_states_its_context_tokens_and_the_embedders_cut():
    """Issue 29: "best at 1024" said nothing of the 1,280 tokens handed to the LLM per question,
    nor that the embedder cut every chunk at that size."""
    from inspector.core.viewmodel.trace import Trace, TracePoint, TraceScore
    from inspector.qt.panels.trace import caption

    t = Trace("size", (TracePoint(256, TraceScore(0.5, 32, 64, 420.0, 0.0), True),
                       TracePoint(1024, TraceScore(0.625, 40, 64, 1280.0, 0.9), False)), "exact", 5)
    text = caption(t, unit="tokens")
    assert text.endswith("best at 1024 tokens (1,280 context tokens/question; the embedder cuts 90 % "
                         "of the chunks at 1024)")


def test_moving_to_a_traced_notch_is_exact_at_once(qtbot, dense_window, open_doc, wait_result):
    """The trace embeds its positions' chunks into the shared cache, so the main figures of a
    traced notch skip the pooled preview: the first answer for those chunks is already exact."""
    w = dense_window(settle_ms=60_000)  # exact figures would otherwise also come from the settle timer
    w.state.set_strategy("fixed_tokens")
    open_doc(w)
    qtbot.waitUntil(lambda: w.retrieval.pooled_ready, timeout=60_000)
    w.retrieval.refresh(exact=True)
    wait_result(w, mode="exact", gold=True)
    qtbot.waitUntil(lambda: _trace_done(w, 256), timeout=60_000)
    assert any(p.value == 384 and p.score is not None for p in w.trace.trace.points)
    modes: list[tuple[int, str]] = []
    w.retrieval.resultReady.connect(lambda r: modes.append((r.request.chunk_request_id, r.mode)))
    w.strategy_panel.set_value("size", 384)
    r = wait_result(w, mode="exact", gold=True)
    assert r.request.params["size"] == 384
    assert [m for rid, m in modes if rid == r.request.chunk_request_id] == ["exact"]
    here = next(p for p in w.trace.trace.points if p.value == 384)
    assert r.report.hit_rate == here.score.hit_rate
    # An untraced size far away still goes through the preview first.
    w.strategy_panel.set_value("size", 4096)
    qtbot.waitUntil(lambda: w.retrieval.result is not None and w.state.result is not None
                    and w.state.result.request.params["size"] == 4096
                    and w.retrieval.result.request.chunk_request_id == w.state.result.request_id, timeout=20_000)
    assert w.retrieval.result.mode == "pooled"


def test_a_trace_point_measures_the_embedders_cut_for_vector_retrievers():
    from pathlib import Path

    from inspector.core.documents.document import load_document
    from inspector.qt.controllers.trace import _truncated

    doc = load_document(Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md")
    wb = Workbench()
    params = {"size": 512, "overlap": 0}
    chunks = wb.chunk_corpus("fixed_tokens", params, [doc])
    assert _truncated(EvalConfig("fixed_tokens", params, retriever="dense"), chunks, [doc]) > 0.9
    assert _truncated(EvalConfig("fixed_tokens", params, retriever="bm25"), chunks, [doc]) is None
    small = wb.chunk_corpus("markdown", {}, [doc])
    assert _truncated(EvalConfig("markdown", {}, retriever="dense"), small, [doc]) == 0.0
