"""Whole-text conversions done a slice at a time, so a big document never holds the GIL for long.

`str.encode` over a 20 MB text is one C call of 50–100 ms that keeps every other thread waiting,
the window's GUI thread included. Done in slices of `STEP` characters, the interpreter may hand
the GIL over between two slices; the results are identical (UTF-8 and UTF-32 encode each code
point on its own, so slices cut anywhere between code points concatenate to the whole).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
else:
    from inspector.core.runtime.lazy_numpy import np

#: Characters per slice (a few milliseconds of work each).
STEP = 1 << 20
#: Python ints per slice when a list becomes an array: converting an int object costs far more
#: than encoding a character (a slice of STEP ints held the GIL for 20-40 ms).
INT_STEP = 1 << 16


def codepoints(text: str) -> np.ndarray:
    """The text's code points (uint32; uint8 when the text is ASCII, which is cheaper to scan)."""
    n = len(text)
    if text.isascii():
        out8 = np.empty(n, dtype=np.uint8)
        for a in range(0, n, STEP):
            out8[a:a + STEP] = np.frombuffer(text[a:a + STEP].encode("ascii"), dtype=np.uint8)
        return out8
    out = np.empty(n, dtype=np.uint32)
    for a in range(0, n, STEP):
        out[a:a + STEP] = np.frombuffer(text[a:a + STEP].encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return out


def decode_utf8(data: bytes) -> str:
    """`data.decode("utf-8")`, a slice at a time (an incremental decoder carries a character cut
    between slices); a UnicodeDecodeError gives offsets into the whole of `data`."""
    import codecs

    if len(data) <= STEP:
        return data.decode("utf-8")
    dec = codecs.getincrementaldecoder("utf-8")()
    parts: list[str] = []
    for a in range(0, len(data), STEP):
        try:
            parts.append(dec.decode(data[a:a + STEP], final=a + STEP >= len(data)))
        except UnicodeDecodeError as exc:
            pending = len(dec.getstate()[0])  # bytes of a character begun in the slice before
            raise UnicodeDecodeError("utf-8", data, a - pending + exc.start, a - pending + exc.end, exc.reason) \
                from None
    return "".join(parts)


#: Bytes per window of `line_windows` (a regex over one is a few milliseconds).
LINE_WINDOW_BYTES = 256 * 1024


def line_windows(data: bytes, size: int = LINE_WINDOW_BYTES) -> Iterator[memoryview]:
    """`data` in windows of at least `size` bytes, each ending after a newline where there is one:
    never inside a multibyte UTF-8 character (a newline byte is ASCII), so a byte regex run a
    window at a time finds what one call over the whole finds, and lets go of the GIL between."""
    view = memoryview(data)
    start = 0
    while start < len(data):
        end = data.find(b"\n", start + size) + 1 or len(data)
        yield view[start:end]
        start = end


def utf8_slices(text: str) -> Iterator[bytes]:
    """The text's UTF-8 bytes (lone surrogates passed through), a slice at a time."""
    for a in range(0, len(text), STEP):
        yield text[a:a + STEP].encode("utf-8", "surrogatepass")


def sha256_text(text: str) -> str:
    """`hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()`, a slice at a time."""
    h = hashlib.sha256()
    for chunk in utf8_slices(text):
        h.update(chunk)
    return h.hexdigest()


def int_list_array(values: list[int], dtype: type | None = None) -> np.ndarray:
    """`np.asarray(values, dtype)` for a list of millions of ints, a slice at a time (int64 when
    `dtype` is None)."""
    out: np.ndarray = np.empty(len(values), dtype=np.int64 if dtype is None else dtype)
    for a in range(0, len(values), INT_STEP):
        out[a:a + INT_STEP] = values[a:a + INT_STEP]
    return out


def searchsorted(haystack: np.ndarray, needles: np.ndarray, side: str = "left") -> np.ndarray:
    """`np.searchsorted(haystack, needles, side)` over millions of needles, a slice at a time."""
    out = np.empty(len(needles), dtype=np.int64)
    for a in range(0, len(needles), STEP):
        out[a:a + STEP] = np.searchsorted(haystack, needles[a:a + STEP], side=side)  # type: ignore[call-overload]
    return out


class Utf8Map:
    """Character offsets to UTF-8 byte offsets and back, for one text, read off its continuation
    bytes (10xxxxxx): few in most text, so no array of an offset per character is made (for 20 MB,
    `utf8_offsets` made a 160 MB array afresh, 0.2-0.9 s of the token index, issue 31). The token
    index and the compiled Markdown parser's block spans read offsets through it."""

    def __init__(self, text: str) -> None:
        self._cont: np.ndarray | None = None
        """Byte offsets of the continuation bytes (None: the text is ASCII)."""
        if text.isascii():
            self.nbytes = len(text)
            return
        data = np.frombuffer(b"".join(utf8_slices(text)), dtype=np.uint8)
        self.nbytes = len(data)
        self._cont = np.flatnonzero((data & 0xC0) == 0x80)
        # Characters before each continuation byte (non-decreasing): those before byte(c) are the
        # ones whose count is at most c.
        self._before = self._cont - np.arange(len(self._cont))

    def char_at(self, byte_offsets: np.ndarray) -> np.ndarray:
        """The character holding each byte offset (its start, inside a multi-byte character; the
        text's length at its end): `searchsorted(utf8_offsets(text), b, "right") - 1`."""
        b = np.asarray(byte_offsets, dtype=np.int64)
        if self._cont is None:
            return b.copy()
        return b - searchsorted(self._cont, b, "right")

    def byte_of(self, chars: np.ndarray) -> np.ndarray:
        """Byte offset of each character offset: `utf8_offsets(text)[chars]`."""
        c = np.asarray(chars, dtype=np.int64)
        if self._cont is None:
            return c.copy()
        return c + searchsorted(self._before, c, "right")


__all__ = ["codepoints", "decode_utf8", "utf8_slices", "sha256_text", "int_list_array", "searchsorted", "STEP",
           "Utf8Map"]
