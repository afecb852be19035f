"""Figures as text: shares as percentages, changes in points, plain numbers, intervals.

One place decides how a figure is written, for the window (gold panel, trace, sweep, heatmap,
audit summary, statistics), its HTML export and the core's own reports, so that "85.9 %" reads
the same everywhere. It sits in the evaluation package, the lowest layer whose reports write
figures (the audit summary's Markdown); the view-model and the window use it from above, the
window through `inspector.core.api`. Plain functions over floats; None is a figure not computed
("–").
"""

from __future__ import annotations

MISSING = "–"
"""What a figure not computed (None) is written as."""


def pct(v: float | None, digits: int = 1, unit: str = " %") -> str:
    """A share (0..1) as a percentage: 0.859 -> "85.9 %"; `unit` "%" where room is tight
    ("85.9%"), "" for the number alone (a heatmap cell); "–" for None."""
    return MISSING if v is None else f"{v * 100:.{digits}f}{unit}"


def num(v: float | None, digits: int = 3, none: str = MISSING) -> str:
    """A plain figure to `digits` decimals (MRR, recall, IoU): "0.747"; `none` for None."""
    return none if v is None else f"{v:.{digits}f}"


def pts(d: float, digits: int = 1) -> str:
    """A change of a share in percentage points, signed: 0.021 -> "+2.1 pts"."""
    return f"{d * 100:+.{digits}f} pts"


def spread(lo: float, hi: float, *, share: bool = False) -> str:
    """Where a figure would land (a bootstrap interval): "[89–99 %]" for a share, "[0.81–0.93]"
    for the rest."""
    if share:
        return f"[{lo * 100:.0f}–{hi * 100:.0f} %]"
    return f"[{lo:.2f}–{hi:.2f}]"


def change_interval(lo: float, hi: float, *, share: bool = False) -> str:
    """The interval of a change, signed: "[+1.0, +3.0]", in points for a share (the caller says
    "pts" where the sentence needs it), in the figure's own unit otherwise."""
    scale = 100 if share else 1
    return f"[{lo * scale:+.1f}, {hi * scale:+.1f}]"


__all__ = ["MISSING", "pct", "num", "pts", "spread", "change_interval"]
