"""Colours for chunks and flags that stay readable on light and dark palettes.

Chunk fills are pale tints on a light background and deep tints on a dark one, so text on them
keeps its contrast; neighbours take successive hues from a cycle, so two adjacent chunks never
share a colour. Flag colours carry the same meaning everywhere (text, gutter, table, statistics).
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QPalette

from inspector.core.api import SizedLRU

#: Hues (degrees) of the chunk cycle: blue, amber, green, violet, teal, rose.
CHUNK_HUES = (212, 38, 135, 275, 178, 345)

#: Flag -> (label, hue). Hues chosen apart from the chunk cycle's saturation so marks stand out.
FLAG_STYLE: dict[str, tuple[str, int]] = {
    "truncated_by_embedder": ("truncated", 0),
    "cut_mid_sentence": ("cut mid-sentence", 8),
    "split_table": ("split table", 28),
    "over_budget": ("over budget", 300),
    "no_heading": ("no heading", 48),
    "stub": ("stub", 100),
}

#: Short labels for the narrow flag column beside the text.
FLAG_SHORT = {"truncated_by_embedder": "truncated", "cut_mid_sentence": "cut", "split_table": "split table",
              "over_budget": "over budget", "no_heading": "no heading", "stub": "stub"}

#: Order in which flags are listed (most harmful to retrieval first).
FLAG_ORDER = ("truncated_by_embedder", "stub", "cut_mid_sentence", "split_table", "over_budget", "no_heading")


#: -- Colours that say something: the same on light and dark palettes (each reads on both). Hex
#: names, so stylesheets take them as they are and painters as QColor(name). What differs between
#: the palettes is a field of `Theme` below.
GOOD = "#2e8b57"
"""A hit, a question fixed, exact figures, the model ready."""
BAD = "#d03a3a"
"""A miss, a question broken, an error, a file that could not be opened."""
WARNING = "#c76a00"
"""Something to know about: stand-in figures (BM25 while the model loads), figures being
recomputed, a problem with a document, a language the model does not know."""
POOLED = "#6a5acd"
"""Figures from the pooled live preview (neither exact nor a stand-in)."""
QUIET = "#808080"
"""What decides nothing: an interval, a change within noise, stale outcomes, boundary ticks
before the theme's colour is known."""
INVALID_SETTING = "#d04040"
"""The strategy panel's note on settings the strategy rejects."""
BEST_HIT_DOCUMENT = "#c2580a"
"""The document list's hits column where the question's #1 hit lies."""
MARK = "#dc3c3c"
"""A layer of marks on the overview strip given no colour of its own."""
NOT_FOUND_FIELD = "rgba(220, 60, 60, 60)"
"""The find field's background when the text is not found (a stylesheet colour)."""
STALE_PILL = QColor(199, 106, 0, 235)
"""The "computing…" pill over figures that belong to superseded chunks (the veil and its legend)."""
STALE_PILL_TEXT = "#ffffff"
HEAT_RAMP = ((0.0, "#3b4f8f"), (0.35, "#2f8f9d"), (0.7, "#7cc36b"), (1.0, "#f2d544"))
"""The sweep heatmap's sequential ramp (dark blue -> teal -> yellow), readable on both palettes."""
INK_ON_BRIGHT, INK_ON_DEEP = "#111111", "#ffffff"
"""Text on a heatmap cell: dark on its bright end, white on its deep end."""
CURRENT_CELL = "#e0572a"
"""The dashed outline of the heatmap cell with the window's current settings."""
PDF_CHUNK_OUTLINE = QColor(230, 120, 0, 220)
PDF_CHUNK_FILL = QColor(255, 200, 0, 70)
"""The current chunk's words marked on a rendered PDF page (paper is light on either palette)."""


_THEMES: SizedLRU[Theme] = SizedLRU(32, 32)


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Base).lightnessF() < 0.5


@dataclass(frozen=True)
class Theme:
    """Palette-dependent colours, rebuilt when the palette changes."""

    dark: bool
    fills: tuple[QColor, ...]
    """Background tint of a chunk, by rank modulo the cycle."""
    strong: tuple[QColor, ...]
    """Saturated version of each fill for gutter bars and boundary ticks."""
    text: QColor
    muted: QColor
    base: QColor
    selection: QColor
    """Outline of the selected chunk."""
    tail: QColor
    """Shade over text the embedder never reads."""
    heading: QColor
    badge_ink: QColor
    """Text on a badge in a strong colour (a hit's rank, a judged verdict): white on the light
    palette's deep badges, near-black on the dark palette's bright ones."""
    best_position: QColor
    """The best scored position of the hit-rate trace."""
    accepted_draft: QColor
    """A drafted question the user accepted."""
    uncovered: QColor
    """A warm background under sections no gold question is about."""
    notice: QColor
    """Background of a notice across a panel (the drafts' measurement banner)."""
    notice_text: QColor

    @classmethod
    def for_palette(cls, palette: QPalette) -> Theme:
        """The theme of a palette (cached: widgets ask on every paint)."""
        key = palette.cacheKey()
        return _THEMES.get_or_make(key, lambda: cls._build(palette), 1)

    @classmethod
    def _build(cls, palette: QPalette) -> Theme:
        dark = is_dark(palette)
        if dark:
            fills = tuple(QColor.fromHslF(h / 360, 0.42, 0.25) for h in CHUNK_HUES)
            strong = tuple(QColor.fromHslF(h / 360, 0.70, 0.62) for h in CHUNK_HUES)
        else:
            fills = tuple(QColor.fromHslF(h / 360, 0.80, 0.90) for h in CHUNK_HUES)
            strong = tuple(QColor.fromHslF(h / 360, 0.65, 0.45) for h in CHUNK_HUES)
        text = palette.color(QPalette.ColorRole.Text)
        muted = QColor(text)
        muted.setAlphaF(0.55)
        tail = QColor(120, 120, 120, 110) if not dark else QColor(10, 10, 10, 150)
        selection = QColor.fromHslF(0.6, 0.9, 0.45 if not dark else 0.7)
        heading = QColor.fromHslF(0.6, 0.55, 0.30 if not dark else 0.78)
        return cls(dark, fills, strong, text, muted, palette.color(QPalette.ColorRole.Base), selection, tail,
                   heading,
                   badge_ink=QColor("#1b1b1b" if dark else "#ffffff"),
                   best_position=QColor("#5cc98a" if dark else GOOD),
                   accepted_draft=QColor("#7fd6a0" if dark else GOOD),
                   uncovered=QColor(110, 62, 20) if dark else QColor(255, 226, 199),
                   notice=QColor(92, 64, 0) if dark else QColor(255, 240, 196),
                   notice_text=QColor(255, 236, 190) if dark else QColor(92, 60, 0))

    def fill(self, rank: int) -> QColor:
        return self.fills[rank % len(self.fills)]

    def bar(self, rank: int) -> QColor:
        return self.strong[rank % len(self.strong)]

    def overlap_fill(self, ranks: tuple[int, ...]) -> QColor:
        """Average of the overlapping chunks' fills, darkened a little so the region reads as its own."""
        cs = [self.fill(r) for r in ranks] or [self.fill(0)]
        r = sum(c.redF() for c in cs) / len(cs)
        g = sum(c.greenF() for c in cs) / len(cs)
        b = sum(c.blueF() for c in cs) / len(cs)
        out = QColor.fromRgbF(r, g, b)
        return out.darker(112) if not self.dark else out.lighter(125)

    def overlap_brush(self, rank: int) -> QBrush:
        """Stripes in the strong colour of the other chunk over the first one's fill: the region
        visibly belongs to both."""
        c = QColor(self.bar(rank))
        c.setAlphaF(0.5)
        return QBrush(c, Qt.BrushStyle.BDiagPattern)

    def tail_brush(self) -> QBrush:
        return QBrush(self.tail, Qt.BrushStyle.SolidPattern)

    def tail_hatch(self) -> QBrush:
        c = QColor(self.flag("truncated_by_embedder"))
        c.setAlphaF(0.55)
        return QBrush(c, Qt.BrushStyle.FDiagPattern)

    def flag(self, name: str) -> QColor:
        hue = FLAG_STYLE.get(name, ("", 0))[1]
        return QColor.fromHslF(hue / 360, 0.85, 0.50 if not self.dark else 0.62)

    def flag_label(self, name: str, short: bool = False) -> str:
        if short and name in FLAG_SHORT:
            return FLAG_SHORT[name]
        return FLAG_STYLE.get(name, (name.replace("_", " "), 0))[0]
