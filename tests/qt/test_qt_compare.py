"""Comparing two settings on the text: the pinned baseline's chunks as a second gutter lane and
strip lane, the boundary counts in the gold panel, and fixed/broken questions linked to their
answers in the text. BM25 keeps it fast (no vectors)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from inspector.core.viewmodel.boundary_diff import boundary_diff
from inspector.qt.document.overview_strip import OverviewStrip
from inspector.qt.panels.gold_model import ROW_ROLE

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def bm25_window(hash_window):
    def make(**kw):
        w = hash_window(start=False, **kw)
        w.retrieval.set_retriever("bm25")
        return w
    return make


def _painted(w) -> tuple[int, ...]:
    w.view.gutter.repaint()
    return w.view.gutter.baseline_painted


def _pin_then_fixed_chars(w, open_doc, wait_result, size=300):
    open_doc(w)
    wait_result(w, gold=True)
    w.gold_panel.pin_button.click()
    base = w.retrieval.baseline
    w.strategy_panel.set_strategy("fixed_chars")
    w.strategy_panel.set_value("size", size)
    wait_result(w, gold=True)
    return base


def test_the_baseline_lane_is_painted_only_while_a_baseline_is_pinned(qtbot, bm25_window, open_doc, wait_result):
    w = bm25_window()
    open_doc(w)
    wait_result(w, gold=True)
    narrow = w.view.gutter.width_hint()
    assert _painted(w) == () and not w.strip.comparing and w.compare.lane is None
    g = w.view.gutter
    lanes_left = g.width() - 4 - g.BAR - (g.lanes() - 1) * (g.BAR + g.GAP)
    assert g.numbers_right == lanes_left - 4  # the numbers end just left of the lanes
    assert w.gold_panel.boundary_label.isHidden()

    w.gold_panel.pin_button.click()
    base = w.retrieval.baseline
    assert base.chunks == w.retrieval.result.request.chunks  # the pinned chunks travel with it
    lane = w.compare.lane
    assert lane is not None and lane.diff.unchanged  # just pinned: the same boundaries
    assert len(lane.diff.kept) == len({c.start for c in base.chunks if c.role != "parent"})
    assert w.view.gutter.width_hint() == narrow + w.view.gutter.BAR + w.view.gutter.CONNECT
    painted = _painted(w)
    lanes_left = g.width() - 4 - g.BAR - (g.lanes() - 1) * (g.BAR + g.GAP)
    assert g.numbers_right == lanes_left - 4 - g.BAR - g.CONNECT  # and left of the baseline lane
    assert painted and set(painted) <= {c.id for c in base.chunks}
    assert w.strip.comparing and w.strip.width() == OverviewStrip.COMPARE_WIDTH

    # Other settings: the lane shows how their boundaries differ, as the core computes it.
    w.strategy_panel.set_strategy("fixed_chars")
    w.strategy_panel.set_value("size", 300)
    wait_result(w, gold=True)
    current = [(c.start, c.end) for c in w.state.result.chunks if c.role != "parent"]
    expected = boundary_diff([(c.start, c.end) for c in base.chunks if c.role != "parent"], current)
    assert w.compare.lane.diff == expected
    assert expected.moved and expected.added and expected.removed
    counts = expected.counts()
    text = w.gold_panel.boundary_label.text()
    assert w.gold_panel.boundary_label.isVisibleTo(w.gold_panel)
    for kind in ("kept", "moved", "added", "removed"):
        assert f"{counts[kind]} {kind}" in text
    assert _painted(w)
    assert "Baseline" in w.view.gutter.baseline_tooltip(0)
    # The lane's bar is drawn in the gutter's pixels: the column left of the connector is not bare.
    img = w.view.gutter.grab().toImage()
    geo = w.view.gutter._lane_geometry()
    bg = w.view.palette().color(w.view.palette().ColorRole.Window).rgb()
    x = int(geo.bar_x + 1)
    assert any(img.pixelColor(x, y).rgb() != bg for y in range(0, img.height(), 3))

    w.gold_panel.clear_button.click()
    assert w.compare.lane is None and _painted(w) == ()
    assert not w.strip.comparing and w.strip.width() == OverviewStrip.WIDTH
    assert w.view.gutter.width_hint() < narrow + w.view.gutter.BAR  # back to the plain gutter
    assert w.gold_panel.boundary_label.isHidden()


def test_a_new_document_drops_the_lane(qtbot, bm25_window, open_doc, wait_result, tmp_path):
    w = bm25_window()
    _pin_then_fixed_chars(w, open_doc, wait_result)
    assert w.compare.lane is not None
    other = tmp_path / "other.md"
    other.write_text("# Other\n\nSome text.\n\nMore text here.\n", encoding="utf-8")
    open_doc(w, other)
    assert w.retrieval.baseline is None and w.compare.lane is None and _painted(w) == ()


def test_clicking_a_fixed_or_broken_question_scrolls_to_its_answer(qtbot, bm25_window, open_doc, wait_result):
    w = bm25_window()
    _pin_then_fixed_chars(w, open_doc, wait_result)
    cmp = w.retrieval.comparison
    changes = list(cmp.broke) + list(cmp.fixed)
    assert changes
    target = changes[0].question
    w.gold_dock.show()
    w.gold_dock.raise_()
    lst = w.gold_panel.changes

    def click() -> None:
        # The list is rebuilt with every new comparison: find the question's item afresh.
        item = next(lst.item(i) for i in range(lst.count()) if lst.item(i).data(Qt.ItemDataRole.UserRole) == target)
        lst.scrollToItem(item)
        qtbot.mouseClick(lst.viewport(), Qt.MouseButton.LeftButton, pos=lst.visualItemRect(item).center())

    def answer_on_screen() -> bool:
        if not w.view.answer_spans:
            return False
        a, b = w.view.answer_spans[0]
        top, _bottom = w.view.y_range(a, b)
        return 0 <= top < w.view.viewport().height()

    w.view.verticalScrollBar().setValue(w.view.verticalScrollBar().maximum())
    click()
    wait_result(w, question=target.question, gold=True)
    assert w.retrieval.question == target.question
    assert w.view.answer_spans and answer_on_screen()
    # The question row is selected in the table.
    row = w.gold_panel.proxy.data(w.gold_panel.view.currentIndex(), ROW_ROLE)
    assert w.gold_panel.model.questions[row] == target
    # Scrolled away, a second click on the same question brings its answer back.
    sb = w.view.verticalScrollBar()
    sb.setValue(0 if sb.value() > sb.maximum() // 2 else sb.maximum())
    qtbot.wait(10)
    assert not answer_on_screen()
    click()
    qtbot.waitUntil(answer_on_screen, timeout=5000)


def test_the_baseline_is_kept_by_its_own_part_and_heard_through_the_controller(qtbot, bm25_window, open_doc,
                                                                                 wait_result):
    """The controller's baseline job lives in `BaselineComparison` (issue 27): pinning, comparing
    and forgetting go through it, and the panels still hear the controller's signals, baseline
    first, then the comparison."""
    from inspector.qt.controllers.baseline import BaselineComparison

    w = bm25_window()
    open_doc(w)
    r = wait_result(w, gold=True)
    keeper = w.retrieval.baselines
    assert isinstance(keeper, BaselineComparison)
    heard = []
    w.retrieval.baselineChanged.connect(lambda b: heard.append(("baseline", b)))
    w.retrieval.comparisonChanged.connect(lambda c: heard.append(("comparison", c)))
    base = w.retrieval.pin_baseline()
    assert keeper.baseline is base is w.retrieval.baseline and base.report is r.report
    assert [k for k, _ in heard] == ["baseline", "comparison"] and heard[0][1] is base
    assert w.retrieval.comparison is keeper.comparison is heard[1][1] is not None
    assert w.retrieval.paired is keeper.paired and "hit_rate" in keeper.paired
    assert w.retrieval.baseline_results() == keeper.results(r) and len(keeper.results(r)) == len(r.report.questions)
    assert not keeper.covers(w.state.document, ())  # pinned over one document: no corpus to cover
    heard.clear()
    w.retrieval.clear_baseline()
    assert heard == [("baseline", None), ("comparison", None)]
    assert keeper.baseline is None and w.retrieval.paired == {}
    w.retrieval.restore_baseline(base)
    assert w.retrieval.baseline is base and w.retrieval.comparison is not None
