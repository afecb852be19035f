"""Code points <-> UTF-16 units: the one place where offsets change units.

Python strings (and every offset in the core) count code points; Qt's `QTextCursor` and
`QTextDocument` count UTF-16 code units, in which a character outside the Basic Multilingual Plane
(an emoji, say) takes two units. Everything that crosses into Qt goes through a `Utf16Map`.

The map stores only the code-point positions of astral characters, so a document without any (the
common case) costs nothing, and each conversion is one bisection.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import TYPE_CHECKING

from inspector.core.runtime.slices import codepoints

if TYPE_CHECKING:
    import numpy as np
else:
    from inspector.core.runtime.lazy_numpy import np


class Utf16Map:
    """Offset conversion for one text. Immutable once built; safe to share between threads.

    `breaks` (sorted code-point offsets) are places where the view shows the text with one extra
    unit inserted before that offset: a line break that cuts a huge source line into blocks Qt
    can lay out quickly (`display_text`). Offset `p` of a break maps to the start of the block
    after the inserted break; the UTF-16 position just before the inserted break (the end of the
    block before) maps back to `p` as well."""

    __slots__ = ("length", "length16", "_astral", "_astral16", "_astral_np", "_astral16_np", "_breaks",
                 "_breaks16", "_breaks_np", "_breaks16_np")

    def __init__(self, text: str, breaks: Sequence[int] | np.ndarray = (), *, cps: np.ndarray | None = None) -> None:
        """`cps`: the text's code points as an array, when the caller has them already."""
        self.length = len(text)
        """Length of the text in code points."""
        if cps is None and not len(breaks) and text.isascii():
            # Code points are UTF-16 units: nothing to map, and no numpy (the view's constructor
            # makes one for the empty text before the window's first paint; issue 31). The array
            # slots stay unset: they are read only when their lists are not empty.
            self._astral = []
            self._astral16 = []
            self._breaks = []
            self._breaks16 = []
            self.length16 = self.length
            return
        if (cps is not None and cps.dtype == np.uint8) or (cps is None and text.isascii()):
            astral = np.zeros(0, dtype=np.int64)
        else:
            if cps is None:
                cps = codepoints(text)
            astral = np.flatnonzero(cps >= 0x10000).astype(np.int64)
        # Code-point offsets of astral characters, and where each one starts in UTF-16 units
        # (every astral character before it adds one extra unit).
        self._astral_np = astral
        self._astral16_np = astral + np.arange(len(astral), dtype=np.int64)
        self._astral = astral.tolist()
        self._astral16 = self._astral16_np.tolist()
        b = np.asarray(breaks, dtype=np.int64)
        # Each break's code-point offset, and the UTF-16 position of the unit inserted before it.
        self._breaks_np = b
        self._breaks16_np = b + np.searchsorted(astral, b, side="left") + np.arange(len(b), dtype=np.int64)
        self._breaks = b.tolist()
        self._breaks16 = self._breaks16_np.tolist()
        self.length16 = self.length + len(self._astral) + len(self._breaks)
        """Length of the text in UTF-16 units (inserted breaks included)."""

    @property
    def has_astral(self) -> bool:
        """True if any character needs two UTF-16 units."""
        return bool(self._astral)

    @property
    def breaks(self) -> list[int]:
        """Code-point offsets the view shows a break before (see the class docstring)."""
        return self._breaks

    @property
    def identity(self) -> bool:
        """True when code points and UTF-16 positions are the same numbers."""
        return not self._astral and not self._breaks

    def to_utf16(self, cp: int) -> int:
        """UTF-16 offset of code-point offset `cp` (0 <= cp <= len(text))."""
        u = cp if not self._astral else cp + bisect.bisect_left(self._astral, cp)
        if self._breaks:
            u += bisect.bisect_right(self._breaks, cp)
        return u

    def to_codepoint(self, u16: int) -> int:
        """Code-point offset of UTF-16 offset `u16`; a position inside a surrogate pair is floored
        to the start of its character."""
        if self._breaks:
            u16 -= bisect.bisect_left(self._breaks16, u16)  # inserted units before it
        if not self._astral:
            return u16
        # Astral characters that start before u16 each took one extra unit. One that starts at
        # u16 - 1 (u16 inside its pair) lands on its own start: the floor.
        return u16 - bisect.bisect_right(self._astral16, u16 - 1)

    def to_utf16_array(self, cps: Sequence[int] | np.ndarray) -> np.ndarray:
        """Vectorised `to_utf16` (int64 array)."""
        arr = np.asarray(cps, dtype=np.int64)
        out = arr.copy() if not self._astral else arr + np.searchsorted(self._astral_np, arr, side="left")
        if self._breaks:
            out += np.searchsorted(self._breaks_np, arr, side="right")
        return out

    def to_codepoint_array(self, u16s: Sequence[int] | np.ndarray) -> np.ndarray:
        """Vectorised `to_codepoint` (int64 array)."""
        arr = np.asarray(u16s, dtype=np.int64)
        if self._breaks:
            arr = arr - np.searchsorted(self._breaks16_np, arr, side="left")
        if not self._astral:
            return arr.copy()
        return arr - np.searchsorted(self._astral16_np, arr - 1, side="right")


class LineIndex:
    """Line numbers (0-based, "\\n"-separated, as Qt's text blocks) of code-point offsets."""

    __slots__ = ("newlines", "line_count")

    def __init__(self, text: str) -> None:
        raw = codepoints(text)
        self.newlines = np.flatnonzero(raw == 10)
        """Code-point offsets of every newline."""
        self.line_count = len(self.newlines) + 1

    def line_of(self, cp: int) -> int:
        return int(np.searchsorted(self.newlines, cp, side="left"))

    def line_of_array(self, cps: Sequence[int] | np.ndarray) -> np.ndarray:
        """Line of each offset (an offset on a newline belongs to the line the newline ends)."""
        return np.searchsorted(self.newlines, np.asarray(cps, dtype=np.int64), side="left")

    def fractions(self, cps: Sequence[int] | np.ndarray) -> np.ndarray:
        """Where each offset's line sits in the document, 0..1 (line / line count)."""
        return self.line_of_array(cps) / float(self.line_count)
