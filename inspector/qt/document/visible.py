"""Which part of the document is on screen, and where each piece of it is drawn.

Everything painted over the text (chunk tints, boundary ticks, hit outlines, page rules, the
gutter's bars) asks the same questions at every paint: which code-point range is visible, which
rectangles a range covers, at which y a position's line sits. `visible_text` answers them from the
text blocks on screen only, by bisection: a block's lines are in y order and the blocks in text
order, so nothing here walks the whole document (a 1 MB single-line document is one block of
thousands of lines; walking all of them made a frame take a minute).

Positions come in two units: code points (Python's, the chunks' offsets) and UTF-16 units (Qt's,
`QTextCursor` positions); `umap` converts between them, in one place.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass

from PySide6.QtCore import QRectF
from PySide6.QtGui import QTextLayout
from PySide6.QtWidgets import QPlainTextEdit

from inspector.core.viewmodel.offsets import Utf16Map


@dataclass(frozen=True, slots=True)
class VisibleBlock:
    """One text block (a source line) with at least one line on screen."""

    pos: int
    """UTF-16 position of the block's first character."""
    length: int
    """UTF-16 units of the block's text (without the separator)."""
    top: float
    """Viewport y of the block."""
    left: float
    layout: QTextLayout
    first_line: int = 0
    """First of the block's lines on screen (a 1 MB line is one block of thousands of lines)."""
    last_line: int = 0
    """Last of the block's lines on screen."""


def line_window(layout: QTextLayout, top: float, height: float) -> tuple[int, int]:
    """Indexes of the first and last lines of a block's layout that intersect [0, height), one
    line of margin either side, by bisection on y: a block's lines are in y order, and walking all
    of them at every paint is what made a 1 MB single-line document take a minute per frame."""
    n = layout.lineCount()
    if n <= 8:
        return 0, max(0, n - 1)
    lo, hi = 0, n
    while lo < hi:  # first line whose bottom is below the viewport's top
        mid = (lo + hi) // 2
        line = layout.lineAt(mid)
        if top + line.y() + line.height() < 0:
            lo = mid + 1
        else:
            hi = mid
    first = min(lo, n - 1)
    lo, hi = first, n
    while lo < hi:  # first line whose top is past the viewport's bottom
        mid = (lo + hi) // 2
        if top + layout.lineAt(mid).y() > height:
            hi = mid
        else:
            lo = mid + 1
    return max(0, first - 1), min(n - 1, max(first, lo - 1) + 1)


class VisibleText(list):
    """The visible blocks in order, with their UTF-16 starts for bisection, and the geometry
    questions painters ask about them. A snapshot of one paint: built again at the next."""

    def __init__(self, blocks: Iterable[VisibleBlock] = (), umap: Utf16Map | None = None,
                 width: float = 0.0, height: float = 0.0) -> None:
        super().__init__(blocks)
        self.starts: list[int] = [v.pos for v in self]
        self.umap = umap if umap is not None else Utf16Map("")
        self.width = width
        """Viewport width (a range reaching a line's end extends to it)."""
        self.height = height
        """Viewport height (y spans off screen are clamped just outside it)."""
        self._lines: tuple[list[int], list[float], list[float], int] | None = None

    def _line_table(self) -> tuple[list[int], list[float], list[float], int]:
        """(UTF-16 start, top, bottom) of every line on screen, in text order, and the UTF-16 end
        of the last one (a block's end counts as its last line), made once per snapshot. `y_span`
        bisects it with no Qt call per chunk: asking the layout for each chunk's two positions
        (five Qt calls each) was the soak's longest paint, as with a large overlap thousands of
        chunks are on screen, and beside a busy worker every Qt call waits for the GIL again."""
        if self._lines is None:
            starts: list[int] = []
            tops: list[float] = []
            bottoms: list[float] = []
            for v in self:
                layout = v.layout
                for li in range(v.first_line, min(layout.lineCount(), v.last_line + 1)):
                    line = layout.lineAt(li)
                    top = v.top + line.y()
                    starts.append(v.pos + line.textStart())
                    tops.append(top)
                    bottoms.append(top + line.height())
            end = -1
            if self:
                last = self[-1]
                end = last.pos + last.length
                if last.last_line < last.layout.lineCount() - 1:
                    line = last.layout.lineAt(last.last_line)
                    end = last.pos + line.textStart() + line.textLength()
            self._lines = (starts, tops, bottoms, end)
        return self._lines

    def text_range(self) -> tuple[int, int]:
        """Code-point range [lo, hi) of the visible lines (separators included)."""
        first, last = self[0], self[-1]
        lo16 = first.pos + (first.layout.lineAt(first.first_line).textStart() if first.first_line else 0)
        hi16 = last.pos + last.length + 1
        if last.last_line < last.layout.lineCount() - 1:
            line = last.layout.lineAt(last.last_line)
            hi16 = last.pos + line.textStart() + line.textLength()
        return self.umap.to_codepoint(lo16), min(self.umap.to_codepoint(min(hi16, self.umap.length16)) + 1,
                                                 self.umap.length)

    def rects(self, a16: int, b16: int) -> list[QRectF]:
        """One rectangle per visible text line of the UTF-16 range [a16, b16). A range that reaches
        a line's end extends to the right edge, one that began on an earlier line (or at the line's
        start) starts at the left edge, so a chunk of whole lines reads as one block and only a
        boundary inside a line shows as a step."""
        out: list[QRectF] = []
        if b16 <= a16 or not self:
            return out
        width = float(self.width)
        k = max(bisect.bisect_right(self.starts, a16) - 1, 0)
        for v in self[k:]:
            if v.pos >= b16:
                break
            layout = v.layout
            n = layout.lineCount()
            start = v.first_line
            if a16 > v.pos + v.length or a16 <= v.pos:
                pass
            elif v.last_line > v.first_line + 8:  # a long block: jump to the range's first line
                start = max(start, layout.lineForTextPosition(a16 - v.pos).lineNumber() - 1)
            for li in range(start, min(n, v.last_line + 1)):
                line = layout.lineAt(li)
                ls = v.pos + line.textStart()
                le = ls + line.textLength()
                last = li == n - 1
                if b16 <= ls:
                    break  # lines are in text order: none further on is in the range
                if a16 > le if last else a16 >= le:
                    continue
                x0 = 0.0 if a16 <= ls else v.left + line.cursorToX(a16 - v.pos)[0]
                x1 = width if b16 >= le else v.left + line.cursorToX(b16 - v.pos)[0]
                if x1 > x0:
                    out.append(QRectF(x0, v.top + line.y(), x1 - x0, line.height()))
        return out

    def point_of(self, p16: int) -> tuple[float, float, float] | None:
        """(x, top, height) of the line holding UTF-16 position p16, if visible."""
        k = bisect.bisect_right(self.starts, p16) - 1
        if k < 0 or p16 > self[k].pos + self[k].length:
            return None
        v = self[k]
        line = v.layout.lineForTextPosition(p16 - v.pos)
        if not line.isValid():
            return None
        return v.left + line.cursorToX(p16 - v.pos)[0], v.top + line.y(), line.height()

    def y_span(self, a: int, b: int) -> tuple[float, float]:
        """Viewport y span of the code-point range [a, b), clamped just outside the viewport, with
        no document lookups and no Qt call (the gutter and flag column ask this for every chunk
        on screen at every paint): the lines on screen are bisected (`_line_table`)."""
        h = float(self.height)
        a16, b16 = self.umap.to_utf16(a), self.umap.to_utf16(max(a, b - 1))
        starts, tops, bottoms, end = self._line_table()
        if not starts:
            return -2.0, h + 2.0
        if a16 < starts[0]:
            top = -2.0
        elif a16 > end:
            top = h + 2.0
        else:
            top = tops[bisect.bisect_right(starts, a16) - 1]
        if b16 > end:
            bottom = h + 2.0
        elif b16 < starts[0]:
            bottom = -2.0
        else:
            bottom = bottoms[bisect.bisect_right(starts, b16) - 1]
        return top, bottom


def visible_text(edit: QPlainTextEdit, umap: Utf16Map) -> VisibleText:
    """The blocks of `edit` with a line in its viewport, walked from the first visible block
    until one starts below the viewport."""
    blocks: list[VisibleBlock] = []
    block = edit.firstVisibleBlock()
    offset = edit.contentOffset()
    viewport = edit.viewport()
    height = viewport.height()
    while block.isValid():
        geo = edit.blockBoundingGeometry(block).translated(offset)
        if geo.top() > height:
            break
        if block.isVisible() and geo.bottom() >= 0:
            layout = block.layout()
            first, last = line_window(layout, geo.top(), height)
            blocks.append(VisibleBlock(block.position(), block.length() - 1, geo.top(), geo.left(),
                                       layout, first, last))
        block = block.next()
    return VisibleText(blocks, umap, float(viewport.width()), float(height))
