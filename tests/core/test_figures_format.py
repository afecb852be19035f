"""Figures as text (`inspector.core.evaluation.format`): the one formatter the window, its export
and the core's reports share writes each figure exactly as the copies it replaced did (issue 27:
a percent formatter written four times, intervals and points twice each)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from inspector.core.evaluation.format import MISSING, change_interval, num, pct, pts, spread

shares = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
changes = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False)


@given(shares)
def test_a_share_is_written_as_the_copies_wrote_it(v):
    assert pct(v) == f"{v * 100:.1f} %"  # gold panel, trace, heatmap legend, HTML export
    assert pct(v, 0, "%") == f"{v:.0%}"  # audit summary (window and Markdown), embedding map
    assert pct(v, unit="%") == f"{v:.1%}"  # sweep, heatmap tooltip, pooled/exact disagreement
    assert pct(v, unit="") == f"{v * 100:.1f}"  # heatmap cells


@given(changes, changes)
def test_changes_and_intervals_are_written_as_the_copies_wrote_them(lo, hi):
    assert pts(lo) == f"{lo * 100:+.1f} pts"
    assert change_interval(lo, hi, share=True) == f"[{lo * 100:+.1f}, {hi * 100:+.1f}]"
    assert change_interval(lo, hi) == f"[{lo:+.1f}, {hi:+.1f}]"
    assert spread(lo, hi, share=True) == f"[{lo * 100:.0f}–{hi * 100:.0f} %]"
    assert spread(lo, hi) == f"[{lo:.2f}–{hi:.2f}]"


def test_a_missing_figure():
    assert pct(None) == num(None) == MISSING == "–"
    assert num(None, none="-") == "-"
    assert num(0.74712) == "0.747" and num(2.5, 1) == "2.5"


def test_the_window_and_the_markdown_report_write_the_audit_precision_alike():
    from inspector.core.evaluation.audit import AuditSummary, QuestionSummary, first_relevant_text, summary_markdown

    s = QuestionSummary("Who?", (), ())
    md = summary_markdown(AuditSummary((s,)))
    assert f"| Who? | 0 | {pct(s.precision, 0, '%')} | {first_relevant_text(s)} |" in md
