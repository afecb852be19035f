"""How a question's retrieved chunks and a gold answer look wherever they are shown.

The document view outlines each hit and dims the rest, the flag column puts a rank badge beside
it, the overview strip marks where it lies, and the Reader lists it: all of them take the hit's
colour, the answer's colour and the score's format from here, so the same hit reads the same in
every place.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QColor

from inspector.qt.theme import Theme


@dataclass(frozen=True, slots=True)
class HitMark:
    """A retrieved chunk to outline: what the model receives for one rank of a question."""

    rank: int
    """1-based rank."""
    start: int
    end: int
    """Code-point span of the returned chunk (the parent, for parent_child)."""
    score: float
    chunk_id: int
    role: str = "chunk"


def hit_color(theme: Theme) -> QColor:
    """Outline and badge colour of retrieved chunks: an orange apart from the chunk tints and the
    selection blue."""
    return QColor.fromHslF(24 / 360, 0.92, 0.62 if theme.dark else 0.46)


def answer_color(theme: Theme) -> QColor:
    return QColor.fromHslF(50 / 360, 1.0, 0.55 if theme.dark else 0.50)


def format_score(score: float) -> str:
    """Three significant digits: 0.612 (cosine), 0.0325 (fused rank), 12.4 (BM25)."""
    return f"{score:.3g}"
