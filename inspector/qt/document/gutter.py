"""The two margins beside the document's text: the gutter on the left, the flag column on the right.

The gutter shows each chunk as a bar (one lane per overlapping chunk, parents in the leftmost
lane) with its number at its first line; clicking it selects the chunk there. While a baseline is
pinned, its chunks stand in one more lane on the left, each boundary drawn as kept, moved, added
or removed (`compare_lane`). The flag column
names each chunk's flags beside its first lines, on the chunk's own tint, and a retrieved chunk's
rank badge (#1 and its score) first, so labels never cover the text.

Both paint from what the view they stand beside shows (`TextMargin`): its chunk result, theme,
selection, hits and visible text, asked at each paint, so they never hold a stale copy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, cast

from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QHelpEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPalette,
    QPen,
)
from PySide6.QtWidgets import QToolTip, QWidget

from inspector.qt.controllers.chunk_jobs import ChunkResult
from inspector.qt.controllers.state import InspectorState
from inspector.qt.document.compare_lane import (
    ADDED,
    MOVED,
    REMOVED,
    BaselineLane,
    LaneGeometry,
    diff_color_hex,
    paint_baseline_lane,
)
from inspector.qt.document.hits import HitMark, format_score, hit_color
from inspector.qt.document.visible import VisibleText
from inspector.qt.theme import FLAG_ORDER, Theme

if TYPE_CHECKING:
    from inspector.core.api import Chunk, Document


class TextMargin(Protocol):
    """What the margins read from the text they stand beside (the `DocumentView`)."""

    state: InspectorState
    document_: Document | None
    result: ChunkResult | None
    theme: Theme
    hits: tuple[HitMark, ...]
    current_hit: int
    baseline_lane: BaselineLane | None

    def visible_blocks(self) -> VisibleText: ...

    def click_at(self, pt: QPoint) -> int: ...

    def font(self) -> QFont: ...

    def fontMetrics(self) -> QFontMetrics: ...

    def palette(self) -> QPalette: ...


#: Documents at least this long (characters) get room in the gutter from the start
#: (`Gutter.reserve_for`).
RESERVE_FROM = 200_000


class Gutter(QWidget):
    """Chunk bars and numbers beside the text (one lane per overlapping chunk)."""

    BAR = 4
    GAP = 2
    CONNECT = 16
    """Width of the connector between the baseline lane and the current lanes."""

    def __init__(self, view: TextMargin, parent: QWidget) -> None:
        super().__init__(parent)
        self.view = view
        self.baseline_painted: tuple[int, ...] = ()
        """Ids of the baseline chunks the last paint drew (empty: no baseline lane was drawn)."""
        self.numbers_right = 0.0
        """Right edge of the chunk numbers in the last paint (just left of the lanes)."""
        self._room = (0, 0)
        """(digits, lanes) the width keeps room for whatever the result (see `reserve_for`)."""

    def reserve_for(self, text_length: int) -> None:
        """A new document is shown. Changing the gutter's width changes the text's, and Qt then
        lays the whole text out again on the GUI thread (~70 ms for 20 MB, at every re-chunk that
        changed the chunk count's digits or the lanes). So the gutter only grows while a document
        is shown (even at a few hundred kilobytes a relayout is tens of milliseconds, paid whenever
        a drag crossed a power of ten), and a long document's starts with room for the chunk
        numbers its size suggests and two lanes."""
        self._room = (len(str(text_length // 100)), 2) if text_length >= RESERVE_FROM else (0, 0)

    def lanes(self) -> int:
        r = self.view.result
        if r is None:
            return 1
        return max(r.index.lane_count, 1) + (1 if len(r.parents) else 0)

    def width_hint(self) -> int:
        r = self.view.result
        digits = len(str(max(len(r.chunks) - 1, 0))) if r is not None else 2
        lanes = self.lanes()
        digits, lanes = self._room = (max(self._room[0], digits), max(self._room[1], lanes))  # never narrows
        fm = self.view.fontMetrics()
        extra = self.BAR + self.CONNECT if self.view.baseline_lane is not None else 0
        return 10 + fm.horizontalAdvance("9" * max(digits, 2)) + 8 + lanes * (self.BAR + self.GAP) + extra

    def _lane_geometry(self) -> LaneGeometry:
        """The baseline lane: left of the current lanes, a connector between."""
        current_x = self.width() - 4 - self.BAR - (self.lanes() - 1) * (self.BAR + self.GAP)
        return LaneGeometry(current_x - self.CONNECT - self.BAR, self.BAR, current_x)

    def sizeHint(self) -> QSize:
        return QSize(self.width_hint(), 0)

    def paintEvent(self, e: QPaintEvent) -> None:
        view = self.view
        p = QPainter(self)
        pal = view.palette()
        bg = pal.color(pal.ColorRole.Window)
        p.fillRect(e.rect(), bg)
        self.baseline_painted = ()
        r = view.result
        if r is None or view.document_ is None:
            p.end()
            return
        vis = view.visible_blocks()
        if not vis:
            p.end()
            return
        baseline = view.baseline_lane
        if baseline is not None:
            geo = self._lane_geometry()
            self.baseline_painted = paint_baseline_lane(p, vis, baseline, geo, view.theme)
        theme = view.theme
        lo, hi = vis.text_range()
        w = self.width()
        base_x = w - 4 - self.BAR
        fm = view.fontMetrics()
        sel = view.state.selection
        # Bars are gathered by colour and drawn with one call per colour: PySide lets go of the
        # GIL around every Qt call, and beside a busy worker each call waited for it again (a
        # rectangle at a time, the gutter was the soak's longest paint).
        rects: dict[int, tuple[QColor, list[QRectF]]] = {}

        def bar(color: QColor, rect: QRectF) -> None:
            rects.setdefault(color.rgba(), (color, []))[1].append(rect)

        # Parents first (leftmost lane), then painted chunks in their lanes.
        parent_x = base_x - (self.lanes() - 1) * (self.BAR + self.GAP)
        for cid in r.parents.chunks_in(lo, hi):
            c = r.chunk(cid)
            if c is None:
                continue
            y0, y1 = vis.y_span(c.start, c.end)
            bar(theme.muted, QRectF(parent_x, y0 + 1, self.BAR, max(2.0, y1 - y0 - 2)))
        numbers: list[tuple[float, int]] = []
        for cid in r.index.chunks_in(lo, hi):
            c = r.chunk(cid)
            if c is None:
                continue
            rank = r.index.rank(cid)
            lane = r.index.lanes.get(cid, 0)
            x = base_x - lane * (self.BAR + self.GAP)
            y0, y1 = vis.y_span(c.start, c.end)
            color = theme.bar(rank)
            bar(color, QRectF(x, y0 + 1, self.BAR, max(2.0, y1 - y0 - 2)))
            if y0 >= -1:
                bar(color, QRectF(x - 3, y0 + 1, self.BAR + 3, 2))  # boundary tick
                numbers.append((y0, cid))
        p.setPen(Qt.PenStyle.NoPen)
        for color, group in rects.values():
            p.setBrush(color)
            p.drawRects(group)
        text_right = base_x - (self.lanes() - 1) * (self.BAR + self.GAP) - 4
        if baseline is not None:
            text_right -= self.BAR + self.CONNECT
        self.numbers_right = text_right
        last_y = -1e9
        for y0, cid in numbers:
            if y0 - last_y < fm.height() - 2 and cid != sel:
                continue  # two starts on one line: the first number stands for both
            last_y = y0
            c = r.chunk(cid)
            if c is None:
                continue
            font = QFont(view.font())
            if cid == sel:
                font.setBold(True)
                p.setPen(theme.selection)
            else:
                p.setPen(theme.muted)
            p.setFont(font)
            p.drawText(QRectF(0, y0, text_right, fm.height()),
                       Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                       str(cid))
            flagged = [f for f in FLAG_ORDER if f in c.flags and f != "no_heading"]
            if flagged:
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(theme.flag(flagged[0]))
                p.drawEllipse(QPointF(4.5, y0 + fm.height() / 2), 2.5, 2.5)
        p.end()

    def mousePressEvent(self, e) -> None:
        # Clicking a bar or number selects the chunk whose start is nearest above the click.
        view = self.view
        pt = QPoint(2, int(e.position().y()))
        view.click_at(pt)

    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ToolTip:
            e = cast(QHelpEvent, e)  # Qt delivers ToolTip events as QHelpEvent
            if self.view.baseline_lane is not None:
                geo = self._lane_geometry()
                x = e.pos().x()
                if geo.bar_x - 3 <= x < geo.current_x:
                    QToolTip.showText(e.globalPos(), self.baseline_tooltip(e.pos().y()), self)
                    return True
            text = self.chunk_tooltip(e.pos().y())
            if text:
                QToolTip.showText(e.globalPos(), text, self)
            else:
                QToolTip.hideText()
            return True
        return super().event(e)

    def chunk_tooltip(self, y: float) -> str:
        """What the table and the side pane say of a chunk, where its boundary is drawn: the chunks
        starting on the line at `y` (its number), else those whose bars cover it, one line each:
        "#12 · Leave › Germany · 212 tokens (251 word pieces)"."""
        view = self.view
        r = view.result
        vis = view.visible_blocks() if r is not None and view.document_ is not None else None
        if r is None or not vis:
            return ""
        lo, hi = vis.text_range()
        line = view.fontMetrics().height()
        starting, covering = [], []
        for cid in list(r.index.chunks_in(lo, hi)) + list(r.parents.chunks_in(lo, hi)):
            c = r.chunk(cid)
            if c is None:
                continue
            y0, y1 = vis.y_span(c.start, c.end)
            if y0 <= y < y0 + line:
                starting.append(c)
            elif y0 <= y < y1:
                covering.append(c)
        return "\n".join(chunk_summary(c) for c in (starting or covering)[:4])

    def baseline_tooltip(self, y: float) -> str:
        """The baseline lane explained, and the baseline boundary on the line at `y`, if any."""
        lane = self.view.baseline_lane
        if lane is None:
            return ""
        dark = self.view.theme.dark
        legend = " · ".join(f"<span style='color:{diff_color_hex(k, dark)}'>{k}</span>"
                            for k in (MOVED, ADDED, REMOVED))
        text = f"<b>Baseline</b> (left lane): {lane.label}<br>Boundaries {legend}; grey: kept"
        vis = self.view.visible_blocks()
        if vis:
            lo, hi = vis.text_range()
            fm_h = self.view.fontMetrics().height()
            for cid in lane.index.chunks_in(lo, hi):
                k = lane.index.rank(cid)
                start = lane.index.starts[k]
                top = vis.y_span(start, start + 1)[0]
                if top <= y < top + fm_h:
                    text += f"<br>Baseline chunk {cid} starts here: {lane.describe_boundary(start)}"
                    break
        return text


def chunk_summary(c: Chunk) -> str:
    """One line on a chunk: number, heading path, cl100k tokens and the embedder's word pieces."""
    role = f" ({c.role})" if c.role != "chunk" else ""
    path = " › ".join(c.heading_path) or "no heading"
    size = f"{c.token_count:,} tokens"
    if c.embed_tokens is not None:
        dropped = f", {c.embed_dropped:,} past the model's limit" if c.embed_dropped else ""
        size += f" ({c.embed_tokens:,} word pieces{dropped})"
    return f"#{c.id}{role} · {path} · {size}"


class FlagColumn(QWidget):
    """Right of the text: each flagged chunk's flags as labels, stacked from its first line, on
    the chunk's own tint so they read as part of it. A retrieved chunk's rank badge (#1 and its
    score) comes first, so badges never cover the text."""

    def __init__(self, view: TextMargin, parent: QWidget) -> None:
        super().__init__(parent)
        self.view = view
        self._font = QFont(view.font())
        self._font.setPointSizeF(max(7.0, view.font().pointSizeF() * 0.8))
        self._font.setBold(True)
        self.last_labels: list[tuple[int, str]] = []
        """(chunk id, flag) of each flag label the last paint drew, in order (tests read it)."""

    def width_hint(self) -> int:
        fm = QFontMetrics(self._font)
        widest = max(fm.horizontalAdvance(self.view.theme.flag_label(f, short=True)) for f in FLAG_ORDER)
        return widest + 22

    def paintEvent(self, e: QPaintEvent) -> None:
        view = self.view
        p = QPainter(self)
        p.fillRect(e.rect(), view.theme.base)
        r = view.result
        vis = view.visible_blocks() if r is not None else VisibleText()
        self.last_labels = []
        if not vis or r is None:
            p.end()
            return
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        theme = view.theme
        p.setFont(self._font)
        lo, hi = vis.text_range()
        h = self.badge_height()
        w = self.width()
        badges, labelled = self.hit_spans(vis, h)
        # Flags of a hit chunk start below its badge.
        first_at = {(hit.start, hit.end): y0 + h + 4 for hit, y0, _y1 in labelled}
        for cid in r.index.chunks_in(lo, hi):
            c = r.chunk(cid)
            if c is None:
                continue
            y0, y1 = vis.y_span(c.start, c.end)
            # The chunk's tint continues into the column (overlaps: the later chunk's tint wins).
            p.fillRect(QRectF(0, max(y0, -1.0), w, min(y1, self.height() + 1.0) - max(y0, -1.0)),
                       theme.fill(r.index.rank(cid)))
            if not self._room_for_labels(y0, y1, h):
                continue  # on the line above the viewport: its labels would stand beside the next chunk
            flags = [f for f in FLAG_ORDER if f in c.flags]
            y = first_at.get((c.start, c.end), y0 + 2)
            for f in flags:
                if y + h > y1 + 1 and y > y0 + 2:
                    break  # no room left beside this chunk: the tooltip and table list the rest
                rect = QRectF(5, y, w - 10, h)
                color = theme.flag(f)
                bg = QColor(theme.base)
                bg.setAlphaF(0.9)
                p.setPen(QPen(color, 1.0))
                p.setBrush(bg)
                p.drawRoundedRect(rect, h / 2, h / 2)
                p.drawText(rect, Qt.AlignmentFlag.AlignCenter, theme.flag_label(f, short=True))
                self.last_labels.append((cid, f))
                y += h + 2
        if badges:
            self._paint_badges(p, badges, labelled, h)
        p.end()

    def badge_height(self) -> int:
        """A label's height in this column (a rank badge, a flag)."""
        return QFontMetrics(self._font).height() + 2

    def hit_spans(self, vis: VisibleText, h: float) -> tuple[list[tuple[HitMark, float, float]],
                                                             list[tuple[HitMark, float, float]]]:
        """(hit, y0, y1) of the hits on the visible lines, and of those that get a rank badge
        (`h`: a badge's height): the hits with half a badge's height of them on screen. The
        visible lines include the one just above the viewport, and a hit ending there had its
        badge pinned to the top, beside the next chunk: docs/gold.png showed "#2" beside the
        chunk holding a missed question's answer, a chunk that was not retrieved."""
        lo, hi = vis.text_range()
        on_lines = [(hit, *vis.y_span(hit.start, hit.end)) for hit in self.view.hits
                    if hit.end > lo and hit.start < hi]
        return on_lines, [b for b in on_lines if self._room_for_labels(b[1], b[2], h)]

    def _room_for_labels(self, y0: float, y1: float, h: float) -> bool:
        """Whether a chunk spanning [y0, y1) has half a label's height (`h`) of it on screen: the
        least beside which its badge and flags read as its own."""
        return min(y1, float(self.height())) - max(y0, 0.0) >= h / 2

    def _paint_badges(self, p: QPainter, badges: list[tuple[HitMark, float, float]],
                      labelled: list[tuple[HitMark, float, float]], h: float) -> None:
        """The column dimmed beside everything but `badges` (the hits on the visible lines), and
        a rank badge beside each of `labelled`."""
        view = self.view
        theme = view.theme
        w = self.width()
        # Dim the column beside everything but the hits, as the text is dimmed.
        keep = QPainterPath()
        for _hit, y0, y1 in badges:
            keep.addRect(QRectF(0, y0, w, y1 - y0))
        veil_path = QPainterPath()
        veil_path.addRect(QRectF(self.rect()))
        veil = QColor(theme.base)
        veil.setAlphaF(0.6 if not theme.dark else 0.55)
        p.fillPath(veil_path.subtracted(keep), veil)
        color = hit_color(theme)
        ink = theme.badge_ink
        current = view.hits[view.current_hit].rank if 0 <= view.current_hit < len(view.hits) else -1
        placed: list[float] = []
        for hit, y0, _y1 in sorted(labelled, key=lambda b: b[0].rank):
            y = max(2.0, y0 + 2)
            while any(abs(y - other) < h + 2 for other in placed):
                y += h + 2  # two hits starting on one line: stack their badges
            placed.append(y)
            rect = QRectF(4, y, w - 8, h)
            p.setPen(QPen(color.darker(130), 2.0) if hit.rank == current else Qt.PenStyle.NoPen)
            p.setBrush(color)
            p.drawRoundedRect(rect, h / 2, h / 2)
            p.setPen(ink)
            p.drawText(rect, Qt.AlignmentFlag.AlignCenter, f"#{hit.rank}  {format_score(hit.score)}")
