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
