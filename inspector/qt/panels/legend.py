"""Help ▸ Legend: what every colour, hatch, mark and badge on the text means.

Each swatch is drawn with the same colours as the thing it explains (the theme's chunk tints,
overlap hatches and tail shade, the flag colours, the hit and answer colours, the baseline lane's
change colours), from the palette in use, so the legend stays right in dark mode and whenever a
colour changes in `theme`, `hits` or `compare_lane`.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPainterPath, QPaintEvent, QPen, QPolygonF
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QGridLayout,
    QLabel,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from inspector.qt.document.compare_lane import ADDED, KEPT, MOVED, REMOVED, diff_color
from inspector.qt.document.hits import answer_color, hit_color
from inspector.qt.document.painting import zigzag
from inspector.qt.theme import FLAG_ORDER, FLAG_STYLE, STALE_PILL, STALE_PILL_TEXT, Theme

Painter = Callable[[QPainter, QRectF, Theme], None]

SWATCH = QSize(104, 24)


# -- swatches: each draws what the view draws, in a small rectangle -----------------------------------

def _small_bold(p: QPainter) -> float:
    """Set the painter's font to a small bold one (a pill's or a badge's text); its pill height."""
    font = QFont(p.font())
    font.setBold(True)
    font.setPointSizeF(max(7.0, font.pointSizeF() * 0.8))
    p.setFont(font)
    return QFontMetrics(font).height() + 2


def _chunks(p: QPainter, r: QRectF, t: Theme) -> None:
    w = r.width() / 3
    for i in range(3):
        cell = QRectF(r.left() + i * w, r.top(), w, r.height())
        p.fillRect(cell, t.fill(i))
        p.fillRect(QRectF(cell.left(), cell.top(), 2, cell.height()), t.bar(i))


def _overlap(p: QPainter, r: QRectF, t: Theme) -> None:
    w = r.width() / 3
    p.fillRect(QRectF(r.left(), r.top(), w, r.height()), t.fill(0))
    mid = QRectF(r.left() + w, r.top(), w, r.height())
    p.fillRect(mid, t.overlap_fill((0, 1)))
    p.fillRect(mid, t.overlap_brush(0))
    p.fillRect(mid, t.overlap_brush(1))
    p.fillRect(QRectF(r.left() + 2 * w, r.top(), w, r.height()), t.fill(1))


def _tail(p: QPainter, r: QRectF, t: Theme) -> None:
    w = r.width() * 0.45
    p.fillRect(QRectF(r.left(), r.top(), w, r.height()), t.fill(0))
    tail = QRectF(r.left() + w, r.top(), r.width() - w, r.height())
    p.fillRect(tail, t.fill(0))
    p.fillRect(tail, t.tail_brush())
    p.fillRect(tail, t.tail_hatch())
    p.fillRect(QRectF(r.left() + w - 1, r.top(), 2.5, r.height()), t.flag("truncated_by_embedder"))


def _cut(p: QPainter, r: QRectF, t: Theme) -> None:
    p.fillRect(r, t.fill(0))
    path = QPainterPath()
    zigzag(path, r.center().x(), r.top() + 2, r.height() - 4)
    p.setPen(QPen(t.flag("cut_mid_sentence"), 1.6))
    p.drawPath(path)


def _split_table(p: QPainter, r: QRectF, t: Theme) -> None:
    p.fillRect(QRectF(r.left(), r.top(), r.width(), r.height() / 2), t.fill(0))
    p.fillRect(QRectF(r.left(), r.center().y(), r.width(), r.height() / 2), t.fill(1))
    p.setPen(QPen(t.flag("split_table"), 1.6, Qt.PenStyle.DashLine))
    p.drawLine(QPointF(r.left(), r.center().y()), QPointF(r.right(), r.center().y()))


def _selection(p: QPainter, r: QRectF, t: Theme) -> None:
    p.fillRect(r, t.fill(0))
    p.setPen(QPen(t.selection, 2.0))
    p.drawRect(r.adjusted(2, 2, -2, -2))


def _flag(name: str) -> Painter:
    def paint(p: QPainter, r: QRectF, t: Theme) -> None:
        p.fillRect(r, t.fill(1))
        h = _small_bold(p)
        pill = QRectF(r.left() + 4, r.center().y() - h / 2, r.width() - 8, h)
        bg = QColor(t.base)
        bg.setAlphaF(0.9)
        p.setPen(QPen(t.flag(name), 1.0))
        p.setBrush(bg)
        p.drawRoundedRect(pill, h / 2, h / 2)
        p.drawText(pill, Qt.AlignmentFlag.AlignCenter, t.flag_label(name, short=True))
    return paint


def _gutter_dot(p: QPainter, r: QRectF, t: Theme) -> None:
    p.setPen(t.muted)
    p.drawText(QRectF(r.left() + 12, r.top(), 30, r.height()), Qt.AlignmentFlag.AlignVCenter, "42")
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(t.flag("cut_mid_sentence"))
    p.drawEllipse(QPointF(r.left() + 6, r.center().y()), 2.5, 2.5)
    p.fillRect(QRectF(r.left() + 44, r.top() + 2, 4, r.height() - 4), t.bar(0))
    p.fillRect(QRectF(r.left() + 41, r.top() + 2, 7, 2), t.bar(0))
    p.fillRect(QRectF(r.left() + 50, r.top() + 2, 4, r.height() - 4), t.bar(1))


def _hit(p: QPainter, r: QRectF, t: Theme) -> None:
    veil = QColor(t.base)
    veil.setAlphaF(0.6 if not t.dark else 0.55)
    p.fillRect(r, t.fill(2))
    p.fillRect(r, veil)
    chunk = QRectF(r.left() + 2, r.top() + 2, r.width() * 0.45, r.height() - 4)
    p.fillRect(chunk, t.fill(0))
    p.setPen(QPen(hit_color(t), 2.0))
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.drawRect(chunk)
    h = _small_bold(p)
    badge = QRectF(r.left() + r.width() * 0.5, r.center().y() - h / 2, r.width() * 0.5 - 2, h)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(hit_color(t))
    p.drawRoundedRect(badge, h / 2, h / 2)
    p.setPen(t.badge_ink)
    p.drawText(badge, Qt.AlignmentFlag.AlignCenter, "#1  0.69")


def _answer(p: QPainter, r: QRectF, t: Theme) -> None:
    p.fillRect(r, t.fill(0))
    color = answer_color(t)
    fill = QColor(color)
    fill.setAlphaF(0.38)
    box = r.adjusted(14, 4, -14, -4)
    p.fillRect(box, fill)
    p.setPen(QPen(color.darker(135) if not t.dark else color, 1.6, Qt.PenStyle.DashLine))
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.drawRect(box)


def _lane(kind: str) -> Painter:
    """One baseline boundary as the gutter draws it: the grey baseline lane on the left, the
    connector, the current chunks' lane on the right."""
    def paint(p: QPainter, r: QRectF, t: Theme) -> None:
        bar_x, cur_x = r.left() + 30, r.left() + 62
        y, y2 = r.top() + 6, r.bottom() - 6
        p.fillRect(QRectF(bar_x, r.top() + 1, 4, r.height() - 2), t.muted)
        p.fillRect(QRectF(cur_x, r.top() + 1, 4, r.height() - 2), t.bar(0))
        color = diff_color(kind, t)
        left = bar_x + 4
        if kind == KEPT:
            p.setPen(QPen(color, 1.0))
            p.drawLine(QPointF(left, y), QPointF(cur_x, y))
        elif kind == MOVED:
            p.setPen(QPen(color, 2.0))
            p.drawLine(QPointF(left, y), QPointF(cur_x - 4, y2))
            _arrow(p, color, cur_x + 1, y2, cur_x - 5)
        elif kind == ADDED:
            _arrow(p, color, cur_x + 1, y, left + 2)
        elif kind == REMOVED:
            p.fillRect(QRectF(bar_x - 3, y - 1.5, 9, 3), color)
            cx, s = (left + cur_x) / 2, 3.0
            p.setPen(QPen(color, 1.8))
            p.drawLine(QPointF(cx - s, y - s), QPointF(cx + s, y + s))
            p.drawLine(QPointF(cx - s, y + s), QPointF(cx + s, y - s))
    return paint


def _arrow(p: QPainter, color: QColor, tip_x: float, y: float, back_x: float) -> None:
    h = min(4.0, max(2.5, (tip_x - back_x) / 2))
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(color)
    p.drawPolygon(QPolygonF([QPointF(tip_x, y), QPointF(back_x, y - h), QPointF(back_x, y + h)]))


def _stale(p: QPainter, r: QRectF, t: Theme) -> None:
    _chunks(p, r, t)
    wash = QColor(t.base)
    wash.setAlphaF(0.5)
    p.fillRect(r, wash)
    h = _small_bold(p)
    pill = QRectF(r.left() + 6, r.center().y() - h / 2, r.width() - 12, h)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(STALE_PILL)
    p.drawRoundedRect(pill, h / 2, h / 2)
    p.setPen(QColor(STALE_PILL_TEXT))
    p.drawText(pill, Qt.AlignmentFlag.AlignCenter, "computing…")


FLAG_MEANING = {
    "truncated_by_embedder": "The embedding model reads only part of prefix + text (its limit: 256 word "
                             "pieces for the bundled MiniLM, its own for the model chosen in Settings ▸ "
                             "Embedding Model); the rest is shaded in the text.",
    "stub": "Under 32 tokens: a heading or lead-in alone, which outranks the content it introduces.",
    "cut_mid_sentence": "The chunk starts or ends inside a sentence.",
    "split_table": "A table is split between this chunk and the next.",
    "over_budget": "Longer than the strategy's size allows.",
    "no_heading": "No heading in its text and no heading path embedded with it (the context prefix is off, "
                  "or it lies before the first heading): retrieval cannot tell which section it belongs to.",
}

Entry = tuple[Painter, str, str]
"""A swatch painter, a name, and what it means."""


def legend_sections() -> tuple[tuple[str, tuple[Entry, ...]], ...]:
    """The legend's sections, in the order the eye meets them: on the text, beside it, after a
    question, against a baseline."""
    flags = tuple((_flag(f), f"Flag: {FLAG_STYLE[f][0]}", FLAG_MEANING[f]) for f in FLAG_ORDER)
    return (
        ("On the text", (
            (_chunks, "Chunks", "Each chunk tinted; neighbours in different colours, a coloured tick where "
                                "each one starts."),
            (_overlap, "Overlap", "Text in two chunks at once, hatched in both chunks' colours."),
            (_tail, "Never embedded", "Shaded and hatched: the end of a chunk the embedder never reads; the "
                                      "red bar is where it stops reading."),
            (_cut, "Cut mid-sentence", "A red zig-zag where a boundary falls inside a sentence."),
            (_split_table, "Split table", "A dashed line where a boundary falls between a table's rows."),
            (_selection, "Selected chunk", "Outlined in blue (click the text, a gutter number or a table row)."),
            (_stale, "Computing…", "New settings are being chunked: what is shown still belongs to the "
                                   "previous ones."),
        )),
        ("Beside the text", (
            (_gutter_dot, "Gutter", "Chunk numbers and bars, one lane per overlapping chunk; a dot: the "
                                    "chunk's worst flag."),
            *flags,
        )),
        ("After a question", (
            (_hit, "Retrieved chunk", "Outlined in orange with its rank and score beside it; everything "
                                      "else dimmed. F3 / Shift+F3 walk through the hits."),
            (_answer, "Gold answer", "Where the selected gold question's answer lies."),
        )),
        ("Against a pinned baseline (gutter, left lane)", (
            (_lane(KEPT), "Kept", "The baseline's boundary is still there."),
            (_lane(MOVED), "Moved", "A purple line from the baseline's cut to the current one."),
            (_lane(ADDED), "Added", "A green arrowhead: a boundary the baseline did not have."),
            (_lane(REMOVED), "Removed", "A red tick and cross: the baseline's boundary is gone."),
        )),
    )


class Swatch(QWidget):
    """A small picture drawn by a painter with the theme of the palette in use."""

    def __init__(self, painter: Painter, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.painter = painter
        self.setFixedSize(SWATCH)

    def paintEvent(self, e: QPaintEvent) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        theme = Theme.for_palette(self.palette())
        p.fillRect(self.rect(), theme.base)
        self.painter(p, QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), theme)
        p.end()

    def changeEvent(self, e: QEvent) -> None:
        if e.type() == QEvent.Type.PaletteChange:
            self.update()
        super().changeEvent(e)


class Legend(QDialog):
    """The legend, a window beside the main one (not modal: look from it to the text)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Legend — Chunk Inspector")
        self.setModal(False)
        body = QWidget()
        grid = QGridLayout(body)
        grid.setHorizontalSpacing(10)
        grid.setVerticalSpacing(4)
        grid.setColumnStretch(2, 1)
        self.entries: list[tuple[str, str]] = []
        """(name, meaning) of every row, in order (tests read it)."""
        row = 0
        for title, entries in legend_sections():
            head = QLabel(title)
            f = head.font()
            f.setBold(True)
            head.setFont(f)
            head.setContentsMargins(0, 8 if row else 0, 0, 2)
            grid.addWidget(head, row, 0, 1, 3)
            row += 1
            for painter, name, meaning in entries:
                grid.addWidget(Swatch(painter), row, 0, Qt.AlignmentFlag.AlignTop)
                label = QLabel(f"<b>{name}</b>")
                grid.addWidget(label, row, 1, Qt.AlignmentFlag.AlignTop)
                text = QLabel(meaning)
                text.setWordWrap(True)
                grid.addWidget(text, row, 2)
                self.entries.append((name, meaning))
                row += 1
        scroll = QScrollArea()
        scroll.setWidget(body)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        lay = QVBoxLayout(self)
        lay.addWidget(scroll, 1)
        lay.addWidget(buttons)
        self.resize(620, 640)


__all__ = ["Legend", "legend_sections", "Swatch"]
