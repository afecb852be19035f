"""The pinned baseline's chunks beside the current ones: a second lane in the gutter and in the
overview strip, with each boundary drawn as kept, moved, added or removed.

"Pin as Baseline" keeps the report and the chunks of the settings it was pressed on. While one is
pinned, `CompareLanes` compares its chunk starts with the current chunks' after every re-chunk
(`inspector.core.viewmodel.boundary_diff`, pure and fast) and hands the result to the widgets that
draw it: the gutter (through the view, `DocumentView.set_baseline`), the overview strip
(`OverviewStrip.set_compare`) and a line in the gold panel with the counts. Nothing here chunks
or scores: the baseline's chunks come with the pin, the current ones from the state.

In the gutter the baseline lane stands left of the current lanes, a narrow connector between:
* kept: a faint line across the connector (the same cut on both sides);
* moved: a purple line from the baseline's cut to the current one, ending in an arrowhead;
* removed: a red tick on the baseline lane and a cross in the connector;
* added: a green arrowhead pointing into the current lanes.
Shapes as well as colours, since the chunk colours already use most hues.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QLineF, QObject, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPen, QPolygonF

from inspector.core.viewmodel.boundary_diff import BoundaryDiff, boundary_diff
from inspector.core.viewmodel.segments import SpanIndex
from inspector.qt.document.visible import VisibleText
from inspector.qt.theme import Theme

KEPT, MOVED, ADDED, REMOVED = "kept", "moved", "added", "removed"


def diff_color(kind: str, theme: Theme) -> QColor:
    """Colour of a boundary's change, the same in the gutter, the strip and the legend."""
    if kind == KEPT:
        return QColor(theme.muted)
    hue, sat = {MOVED: (282, 0.62), ADDED: (140, 0.70), REMOVED: (0, 0.72)}[kind]
    return QColor.fromHslF(hue / 360, sat, 0.66 if theme.dark else 0.42)


def diff_color_hex(kind: str, dark: bool = False) -> str:
    """`diff_color` as #rrggbb for rich text (labels, tooltips)."""
    hue, sat = {KEPT: (0, 0.0), MOVED: (282, 0.62), ADDED: (140, 0.70), REMOVED: (0, 0.72)}[kind]
    return QColor.fromHslF(hue / 360, sat, 0.66 if dark else 0.42).name()


@dataclass(frozen=True)
class BaselineLane:
    """What the baseline lane shows: the pinned chunks and how their boundaries changed."""

    label: str
    """The baseline's configuration, e.g. "markdown size=400 hard_cap=1000 k=5 dense"."""
    index: SpanIndex
    """The pinned chunks (parents left out), for the visible range."""
    diff: BoundaryDiff
    kept: tuple[int, ...] = ()
    removed: tuple[int, ...] = ()
    added: tuple[int, ...] = ()
    move_before: tuple[int, ...] = ()
    """Baseline offsets of the moves, ascending (moves never cross: `move_after` is ascending too)."""
    move_after: tuple[int, ...] = ()
    _kinds: dict[int, str] = field(default_factory=dict, compare=False)

    @classmethod
    def build(cls, label: str, index: SpanIndex, diff: BoundaryDiff) -> BaselineLane:
        kinds = {o: KEPT for o in diff.kept}
        kinds.update({o: REMOVED for o in diff.removed})
        kinds.update({m.before: MOVED for m in diff.moved})
        return cls(label, index, diff, diff.kept, diff.removed, diff.added,
                   tuple(m.before for m in diff.moved), tuple(m.after for m in diff.moved), kinds)

    def kind_at(self, baseline_offset: int) -> str:
        """KEPT, MOVED or REMOVED for a baseline boundary ("" when it is none)."""
        return self._kinds.get(baseline_offset, "")

    def describe_boundary(self, baseline_offset: int) -> str:
        kind = self.kind_at(baseline_offset)
        if kind == MOVED:
            k = bisect.bisect_left(self.move_before, baseline_offset)
            d = self.move_after[k] - baseline_offset
            return f"moved {abs(d):,} characters {'later' if d > 0 else 'earlier'}"
        return {KEPT: "kept", REMOVED: "removed (no boundary near it now)"}.get(kind, "")


@dataclass(frozen=True)
class LaneGeometry:
    """Where the gutter draws the baseline lane (x in gutter pixels)."""

    bar_x: float
    """Left of the baseline lane's bar."""
    bar_width: float
    current_x: float
    """Left edge of the current chunks' lanes: the connector ends here."""


def _in_range(values: tuple[int, ...], lo: int, hi: int) -> tuple[int, ...]:
    return values[bisect.bisect_left(values, lo):bisect.bisect_left(values, hi)]


def _line_top(vis: VisibleText, offset: int) -> float:
    return vis.y_span(offset, offset + 1)[0]


def _arrowhead(path: QPainterPath, tip_x: float, y: float, back_x: float) -> None:
    """A triangle pointing right with its tip at (tip_x, y), its base at back_x (added to `path`)."""
    h = min(4.0, max(2.5, (tip_x - back_x) / 2))
    path.addPolygon(QPolygonF([QPointF(tip_x, y), QPointF(back_x, y - h), QPointF(back_x, y + h)]))
    path.closeSubpath()


def _fill(p: QPainter, color: QColor, rects: list[QRectF]) -> None:
    if rects:
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(color)
        p.drawRects(rects)


def _lines(p: QPainter, pen: QPen, lines: list[QLineF]) -> None:
    if lines:
        p.setPen(pen)
        p.drawLines(lines)


def _shape(p: QPainter, color: QColor, path: QPainterPath) -> None:
    if not path.isEmpty():
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(color)
        p.drawPath(path)


def paint_baseline_lane(p: QPainter, vis: VisibleText, lane: BaselineLane, geo: LaneGeometry,
                        theme: Theme) -> tuple[int, ...]:
    """Paint the visible part of the baseline lane and its connectors; returns the ids of the
    baseline chunks painted (the gutter records them for tests).

    Shapes are gathered and drawn with one Qt call per colour and kind: PySide lets go of the GIL
    around every Qt call, and beside a worker running Python each call waited to get it back (one
    call per bar, tick and arrow made this the soak's longest paint, 2.4 s)."""
    lo, hi = vis.text_range()
    bar_x, bar_w, cur_x = geo.bar_x, geo.bar_width, geo.current_x
    conn_left = bar_x + bar_w
    shades = (QColor(theme.muted), QColor(theme.muted))
    shades[1].setAlphaF(theme.muted.alphaF() * 0.5)
    painted: list[int] = []
    bars: tuple[list[QRectF], list[QRectF]] = ([], [])
    for cid in lane.index.chunks_in(lo, hi):
        k = lane.index.rank(cid)
        pos = lane.index.starts[k]
        y0, y1 = vis.y_span(pos, lane.index.ends[k])
        bars[k % 2].append(QRectF(bar_x, y0 + 1, bar_w, max(2.0, y1 - y0 - 2)))
        painted.append(cid)
    _fill(p, shades[0], bars[0])
    _fill(p, shades[1], bars[1])
    antialiased = p.testRenderHint(QPainter.RenderHint.Antialiasing)
    p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    kept = diff_color(KEPT, theme)
    kept.setAlphaF(kept.alphaF() * 0.6)
    ticks: list[QRectF] = []
    links: list[QLineF] = []
    for o in _in_range(lane.kept, lo, hi):
        y = _line_top(vis, o) + 2
        ticks.append(QRectF(bar_x - 2, y - 1, bar_w + 2, 2))
        links.append(QLineF(conn_left, y, cur_x, y))
    _fill(p, theme.muted, ticks)
    _lines(p, QPen(kept, 1.0), links)
    # Shapes as well as colours (the chunk cycle uses most hues): removed ends in a cross, added is
    # an arrowhead pointing into the current lanes, a move is a line ending in one.
    removed = diff_color(REMOVED, theme)
    marks: list[QRectF] = []
    crosses: list[QLineF] = []
    for o in _in_range(lane.removed, lo, hi):
        y = _line_top(vis, o) + 2
        marks.append(QRectF(bar_x - 3, y - 1.5, bar_w + 5, 3))
        cx, r = conn_left + (cur_x - conn_left) * 0.5, 3.0
        crosses += [QLineF(cx - r, y - r, cx + r, y + r), QLineF(cx - r, y + r, cx + r, y - r)]
    _fill(p, removed, marks)
    _lines(p, QPen(removed, 1.8), crosses)
    arrows = QPainterPath()
    for o in _in_range(lane.added, lo, hi):
        _arrowhead(arrows, cur_x + 1, _line_top(vis, o) + 2, conn_left + 2)
    _shape(p, diff_color(ADDED, theme), arrows)
    moved = diff_color(MOVED, theme)
    # A move is drawn when either end is on screen: its line then points to the other end.
    i = min(bisect.bisect_left(lane.move_before, lo), bisect.bisect_left(lane.move_after, lo))
    j = max(bisect.bisect_left(lane.move_before, hi), bisect.bisect_left(lane.move_after, hi))
    starts: list[QRectF] = []
    paths: list[QLineF] = []
    heads = QPainterPath()
    for k in range(i, j):
        yb = _line_top(vis, lane.move_before[k]) + 2
        ya = _line_top(vis, lane.move_after[k]) + 2
        starts.append(QRectF(bar_x - 3, yb - 1.5, bar_w + 3, 3))
        paths.append(QLineF(conn_left, yb, cur_x - 4, ya))
        _arrowhead(heads, cur_x + 1, ya, cur_x - 5)
    _fill(p, moved, starts)
    _lines(p, QPen(moved, 2.0), paths)
    _shape(p, moved, heads)
    p.setRenderHint(QPainter.RenderHint.Antialiasing, antialiased)
    p.setBrush(Qt.BrushStyle.NoBrush)
    return tuple(painted)


class CompareLanes(QObject):
    """Keeps the baseline lane of the gutter and the strip, and the gold panel's boundary counts,
    in step with the pinned baseline and the current chunks."""

    laneChanged = Signal(object)
    """BaselineLane | None, after each recomputation."""

    def __init__(self, state: Any, retrieval: Any, view: Any, strip: Any, gold_panel: Any = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.retrieval = retrieval
        self.view = view
        self.strip = strip
        self.gold_panel = gold_panel
        self.lane: BaselineLane | None = None
        self._index_for: tuple[Any, SpanIndex] | None = None
        """The pinned chunks' SpanIndex, built once per baseline."""
        self._key: tuple | None = None
        retrieval.baselineChanged.connect(lambda _b: self.update_lane())
        state.chunksChanged.connect(lambda _r: self.update_lane())

    def update_lane(self) -> None:
        base = self.retrieval.baseline
        result = self.state.result
        doc = self.state.document
        if base is None or result is None or doc is None or result.document is not doc:
            self._set(None)
            return
        pinned = [c for c in base.chunks if c.role != "parent" and c.doc_id == doc.doc_id]
        if not pinned:
            self._set(None)
            return
        key = (id(base), result.request_id)
        if key == self._key and self.lane is not None:
            return
        if self._index_for is None or self._index_for[0] is not base:
            self._index_for = (base, SpanIndex([(c.start, c.end) for c in pinned], [c.id for c in pinned]))
        index = self._index_for[1]
        current = list(zip(result.index.starts, result.index.ends, strict=True))
        diff = boundary_diff(list(zip(index.starts, index.ends, strict=True)), current)
        label = base.config.label() if base.config is not None else "baseline"
        self._key = key
        self._set(BaselineLane.build(label, index, diff))

    def _set(self, lane: BaselineLane | None) -> None:
        if lane is None:
            self._key = None
            self._index_for = None
        self.lane = lane
        self.view.set_baseline(lane)
        self._update_strip(lane)
        if self.gold_panel is not None:
            self.gold_panel.set_boundary_summary(*self.summary(lane, self.view.theme.dark))
        self.laneChanged.emit(lane)

    def _update_strip(self, lane: BaselineLane | None) -> None:
        doc = self.state.document
        if lane is None or doc is None:
            self.strip.set_compare(None)
            return
        from inspector.qt.controllers.chunk_jobs import _line_index

        lines = _line_index(doc)

        def fr(offsets: tuple[int, ...]) -> tuple[float, ...]:
            return tuple(lines.fractions(list(offsets)).tolist()) if offsets else ()

        theme = self.view.theme
        self.strip.set_compare({
            "before": ((fr(lane.kept), diff_color(KEPT, theme)), (fr(lane.removed), diff_color(REMOVED, theme)),
                       (fr(lane.move_before), diff_color(MOVED, theme))),
            "after": ((fr(lane.added), diff_color(ADDED, theme)), (fr(lane.move_after), diff_color(MOVED, theme))),
        }, f"Left: the baseline's boundaries ({lane.label}); right: the current ones. "
           f"{lane.diff.summary()}")

    @staticmethod
    def summary(lane: BaselineLane | None, dark: bool = False) -> tuple[str, str]:
        """(rich text, tooltip) of the boundary counts for the gold panel ("" without a baseline)."""
        if lane is None:
            return "", ""
        c = lane.diff.counts()
        parts = [f"{c[KEPT]} kept"]
        for kind in (MOVED, ADDED, REMOVED):
            parts.append(f"<span style='color:{diff_color_hex(kind, dark)}'>{c[kind]} {kind}</span>")
        tip = ("Chunk boundaries of the current settings against the baseline's, drawn in the gutter (the "
               "left lane is the baseline) and beside the scroll bar.\n" + lane.diff.summary())
        return "Boundaries: " + " · ".join(parts), tip


__all__ = ["BaselineLane", "CompareLanes", "LaneGeometry", "paint_baseline_lane", "diff_color", "diff_color_hex",
           "KEPT", "MOVED", "ADDED", "REMOVED"]
