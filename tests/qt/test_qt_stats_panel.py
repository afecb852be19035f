"""The statistics panel shows the core's figures and follows the sliders."""

from __future__ import annotations

from inspector.core.chunking.annotate import annotate
from inspector.core.chunking.registry import chunk_document
from inspector.core.chunking.stats import chunk_stats


def test_figures_match_the_core_and_follow_the_sliders(qtbot, make_window, open_doc, wait_complete):
    w = make_window()
    w.state.set_strategy("fixed_tokens")
    w.strategy_panel.set_value("size", 200)
    w.strategy_panel.set_value("overlap", 40)
    r = open_doc(w)
    doc = w.state.document
    pre = w.state.with_prefix
    expected = chunk_stats(doc, annotate(doc, chunk_document(doc, "fixed_tokens", {"size": 200, "overlap": 40}),
                                         with_prefix=pre))
    panel = w.stats_panel
    assert panel.stats == expected == r.stats
    assert panel.text("count") == f"{expected.count:,}"
    assert panel.text("tokens") == (f"{expected.min_tokens:,} / {expected.median_tokens:,.0f} / "
                                    f"{expected.p95_tokens:,.0f} / {expected.max_tokens:,}")
    assert panel.text("total") == f"{expected.total_tokens:,}"
    assert panel.text("inflation") == f"× {expected.inflation:.2f}" and expected.inflation > 1.15
    assert panel.share_text("cut_mid_sentence") == (f"{100 * expected.share('cut_mid_sentence'):.1f}% "
                                                    f"({expected.flag_counts['cut_mid_sentence']:,})")
    assert panel.histogram.counts == expected.bin_counts and panel.histogram.budget == 200

    before = panel.text("count")
    w.strategy_panel.set_value("size", 400)
    wait_complete(w)
    assert panel.text("count") != before
    assert panel.stats == chunk_stats(doc, annotate(doc, chunk_document(doc, "fixed_tokens",
                                                                        {"size": 400, "overlap": 40}),
                                                    with_prefix=pre))
    assert panel.histogram.budget == 400


def test_empty_state(qtbot, make_window):
    w = make_window()
    assert w.stats_panel.text("count") == "–" and w.stats_panel.histogram.counts == ()


def _values_cut(panel, viewport) -> list[str]:
    """Figures (values and flag shares) shown in part: narrower than their text, or reaching past
    the scroll area's visible width."""
    from PySide6.QtCore import QPoint

    labels = list(panel.figures.values()) + [pct for _bar, pct in panel.shares.values()]
    cut = []
    for label in labels:
        if not label.isVisibleTo(panel):
            continue
        need = label.fontMetrics().horizontalAdvance(label.text())
        left = label.mapTo(viewport, QPoint(0, 0)).x()
        if need > label.contentsRect().width() or left < 0 or left + label.width() > viewport.width():
            cut.append(f"{label.text()!r}: needs {need} px, has {label.contentsRect().width()} at x={left} "
                       f"in a {viewport.width()} px view")
    return cut


def test_four_digit_figures_are_never_cut(qtbot, make_window, open_doc):
    """Issue 26: at 1400x900 the statistics' values were cut at the column's right edge once they
    had four digits ("1,454 / 1,536 / 1,536 / 1,5"). At every width the column can take, each value
    is shown whole: beside its title where both fit, under it where they do not."""
    from PySide6.QtWidgets import QApplication

    from inspector.qt.dock_layout import scrollable
    from inspector.qt.panels.stats_panel import StatsPanel

    w = make_window(size=(1400, 900))
    panel = StatsPanel(w.state)  # a second panel on the window's state, in a scroll area as in its dock
    area = scrollable(panel)
    qtbot.addWidget(area)
    area.show()
    w.state.set_strategy("fixed_tokens")
    w.strategy_panel.set_value("size", 1536)
    open_doc(w)
    assert "," in panel.text("tokens") and len(panel.text("tokens")) > 24  # four-digit figures
    bar = area.verticalScrollBar().sizeHint().width()
    least = panel.minimumSizeHint().width() + bar
    assert least < 380  # the column's usual width holds them (stacked, if need be)
    stacked = set()
    for width in range(least, 701, 9):
        area.resize(width, 700)
        QApplication.processEvents()
        assert not _values_cut(panel, area.viewport()), (width, _values_cut(panel, area.viewport()))
        stacked.add(panel.stacked)
    assert stacked == {True, False}  # both arrangements were met
    # In the window: the Statistics tab of the 1400x900 layout.
    w.stats_dock.raise_()
    qtbot.waitUntil(lambda: w.stats_panel.isVisible(), timeout=5000)
    qtbot.wait(50)
    assert not _values_cut(w.stats_panel, w.stats_dock.widget().viewport())
