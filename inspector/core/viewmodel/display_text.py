"""The text as the view shows it: huge source lines cut into blocks Qt can lay out quickly.

Qt keeps each line of a `QPlainTextEdit` as one block and lays a block out whole: a 1 MB line
without a newline costs ~150 ms at every repaint and ~500 ms at every width change, however
little of it is on screen. The view therefore shows every source line longer than `LONG_LINE`
characters as blocks of at most `PIECE` characters, cut at the last whitespace before the limit
when there is one. Nothing changes in the document: chunks stay spans of `Document.text`, and the
inserted breaks live only in the view's offset map (`Utf16Map(text, breaks)`), which every
position crossing into Qt already goes through.

Also here, because it scales with the document and must not run on the GUI thread for a big one:
whether the text holds a very long run without whitespace (the view then wraps anywhere: Qt lays
such a "word" out in time quadratic in its length when it may only break between words). The
result is remembered per text, so the background loader can prepare it before the view asks.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from inspector.core.runtime.lru import SizedLRU
from inspector.core.runtime.slices import codepoints
from inspector.core.viewmodel.offsets import Utf16Map

if TYPE_CHECKING:
    import numpy as np
else:
    from inspector.core.runtime.lazy_numpy import np

#: Source lines longer than this many code points are shown as several blocks.
LONG_LINE = 20_000
#: ... of at most this many code points each.
PIECE = 10_000
#: A cut looks this far back from the limit for whitespace to cut after.
LOOK_BACK = 1_000
#: A run of this many characters without whitespace makes the view wrap anywhere.
LONG_WORD = 10_000

@lru_cache(maxsize=1)
def _is_space() -> np.ndarray:
    """Whether each code point up to U+3000 is whitespace for str.isspace() (none above is): a
    lookup table, so a 20 MB text is classified in one vectorised step (made at first use: numpy
    is not imported before the window's first paint)."""
    return np.array([chr(c).isspace() for c in range(0x3001)], dtype=bool)


@dataclass(frozen=True, slots=True)
class DisplayText:
    """The string handed to Qt, the offset map that goes with it, and the wrap decision."""

    source: str
    """The document's text this was made from (the same object)."""
    text: str
    """The document's text with a "\\n" inserted before each break (the text itself when none)."""
    umap: Utf16Map
    """Code points of the document <-> UTF-16 positions of `text`."""
    long_word: bool
    """Some run of LONG_WORD characters holds no whitespace (wrap anywhere)."""

    @property
    def breaks(self) -> list[int]:
        return self.umap.breaks


def _codepoints(text: str) -> np.ndarray:
    return codepoints(text)


def display_breaks(text: str, *, long_line: int = LONG_LINE, piece: int = PIECE,
                   look_back: int = LOOK_BACK, cps: np.ndarray | None = None) -> np.ndarray:
    """Sorted code-point offsets before which the view inserts a break: inside every line longer
    than `long_line`, every `piece` characters at most, just after the last whitespace within
    `look_back` of the limit (at the limit when there is none)."""
    if len(text) <= long_line:
        return np.zeros(0, dtype=np.int64)
    cps = _codepoints(text) if cps is None else cps
    newlines = np.flatnonzero(cps == 10)
    starts = np.concatenate(([0], newlines + 1))
    ends = np.concatenate((newlines, [len(text)]))
    out: list[int] = []
    is_long = (ends - starts) > long_line
    for a, b in zip(starts[is_long].tolist(), ends[is_long].tolist(), strict=True):
        p = a
        while b - p > piece:
            limit = p + piece
            cut = limit
            for q in range(limit - 1, max(p, limit - look_back) - 1, -1):
                if text[q].isspace():
                    cut = q + 1
                    break
            out.append(cut)
            p = cut
    return np.asarray(out, dtype=np.int64)


def has_long_word(text: str, *, long_word: int = LONG_WORD, cps: np.ndarray | None = None) -> bool:
    """True if some run of `long_word` characters holds no whitespace (vectorised: a regular
    expression over 20 MB takes seconds)."""
    if len(text) < long_word:
        return False
    cps = _codepoints(text) if cps is None else cps
    if cps.dtype == np.uint8:
        mask = _is_space()[:256][cps]
    else:
        table = _is_space()
        mask = table[np.minimum(cps, len(table) - 1)] & (cps < len(table))
    # A run of `long_word` without whitespace covers a whole aligned window of half that length:
    # look closely only around windows that hold no whitespace at all (none, in ordinary text).
    half = max(1, long_word // 2)
    n = len(mask) // half * half
    blank = np.flatnonzero(~mask[:n].reshape(-1, half).any(axis=1))
    for w in blank.tolist():
        a, b = max(0, (w - 1) * half), min(len(mask), (w + 2) * half)
        edges = np.concatenate(([a - 1], a + np.flatnonzero(mask[a:b]), [b]))
        if int(np.diff(edges).max()) - 1 >= long_word:
            return True
    return False


def make_display_text(text: str) -> DisplayText:
    cps = _codepoints(text) if len(text) > min(LONG_LINE, LONG_WORD) else None
    breaks = display_breaks(text, cps=cps)
    shown = text
    if len(breaks):
        cuts = [0, *breaks.tolist(), len(text)]
        shown = "\n".join(text[cuts[i]:cuts[i + 1]] for i in range(len(cuts) - 1))
    return DisplayText(text, shown, Utf16Map(text, breaks, cps=cps), has_long_word(text, cps=cps))


#: Display texts of the last few documents (the loader prepares them off the GUI thread).
_DISPLAY: SizedLRU[DisplayText] = SizedLRU(4, 80_000_000)


def display_text(text: str) -> DisplayText:
    """`make_display_text(text)`, remembered for the same string object (the background loader
    makes it for a big document before the view asks)."""
    hit = _DISPLAY.lookup(id(text))
    if hit is not None and hit.source is text:
        return hit
    made = make_display_text(text)
    _DISPLAY.put(id(text), made, len(text))
    return made


__all__ = ["DisplayText", "display_text", "make_display_text", "display_breaks", "has_long_word", "LONG_LINE",
           "PIECE", "LONG_WORD"]
