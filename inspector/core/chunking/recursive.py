"""`recursive`: a separator hierarchy down to a token budget, small pieces merged.

The algorithm is LangChain's RecursiveCharacterTextSplitter (keep_separator="start",
strip_whitespace=True) carried out on spans, so its boundaries match LangChain's on the same
separators, length function and settings (tests/core/test_recursive_langchain.py proves it),
while every chunk stays an exact span of the document and no offset is recovered by searching.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.common import SpanContext, trim
from inspector.core.documents.document import Document
from inspector.core.runtime.cancel import check_cancelled

#: Paragraph, line, sentence, word, character (regular expressions).
DEFAULT_SEPARATORS: tuple[str, ...] = (r"\n\n", r"\n", r"(?<=[.!?])\s+", r" ", "")


#: Merge character-level pieces by prefix sums (`_merge_characters`) instead of one piece at a time.
FAST_CHARACTERS = True


@lru_cache(maxsize=64)
def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


#: Separators found sooner by another expression whose every match starts a fixed number of
#: characters earlier: (expression, shift). The sentence separator's look-behind is tried at every
#: position of the text, while `[.!?]` lets `re` skip ahead to the next mark (14.7 vs 5.3 ms over
#: Chroma's 1.45 MB; issue 31). The same matches: a look-behind match at q is a match of the other
#: at q - 1 and back, and a scan resumed after a match's end e meets the same ones (text[e - 1] is
#: white space, so no look-behind match starts at e; tests compare the two on generated text).
_SHIFTED: dict[str, tuple[str, int]] = {r"(?<=[.!?])\s+": (r"[.!?]\s+", 1)}


def _match_starts(separator: str, sub: str, offset: int = 0) -> list[int]:
    """Where each match of `separator` in `sub` starts, plus `offset` (scanned as `finditer` does)."""
    pattern, shift = _SHIFTED.get(separator, (separator, 0))
    offset += shift
    return [m.start() + offset for m in _compile(pattern).finditer(sub)]


def _found(separator: str, sub: str) -> bool:
    """Whether `separator` matches somewhere in `sub`."""
    return _compile(_SHIFTED.get(separator, (separator, 0))[0]).search(sub) is not None


def _character_lengths(text: str, a: int, b: int, length: Callable[[int, int], int]) -> np.ndarray:
    """`length(i, i + 1)` for every character of text[a:b], asked once per distinct character: the
    length of a one-character span depends on that character alone (a token count of the span
    encoded on its own, or `len`)."""
    cps = np.frombuffer(text[a:b].encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    values, first, inverse = np.unique(cps, return_index=True, return_inverse=True)
    per_value = np.fromiter((length(a + int(i), a + int(i) + 1) for i in first), dtype=np.int64, count=len(values))
    return per_value[inverse.reshape(-1)]


def _merge_characters(text: str, a: int, b: int, lens: np.ndarray, chunk_size: int, chunk_overlap: int,
                      out: list[tuple[int, int]]) -> None:
    """LangChain's merge of one-character splits, a chunk at a time instead of a character at a
    time: with S the prefix sums of the lengths, the window [s, e) grows until the next character
    would pass `chunk_size` (one bisection), is emitted, and drops characters from its front while
    it holds more than `chunk_overlap` or the next character would still not fit (another). The
    same spans as `merge` over per-character splits (a test compares them), in O(chunks log n):
    a 1 MB line without a space is a million splits (seconds) but a few thousand chunks."""
    n = b - a
    cum = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lens, out=cum[1:])
    s = 0
    while s < n:
        check_cancelled()
        stop = int(np.searchsorted(cum, cum[s] + chunk_size, side="right"))  # first prefix over the size
        if stop > n:  # the rest fits: the last chunk
            ta, tb = trim(text, a + s, b)
            if ta < tb:
                out.append((ta, tb))
            return
        e = stop - 1  # character e does not fit; [s, e) is a chunk (e > s: every length < chunk_size)
        ta, tb = trim(text, a + s, a + e)
        if ta < tb:
            out.append((ta, tb))
        keep = int(np.searchsorted(cum, cum[e] - chunk_overlap, side="left"))  # at most the overlap
        fits = int(np.searchsorted(cum, cum[e] + int(lens[e]) - chunk_size, side="left"))  # room for e
        s = max(s, keep, min(e, fits))


def _merge_splits(text: str, splits: list[tuple[int, int, int]], chunk_size: int, chunk_overlap: int,
                  out: list[tuple[int, int]]) -> None:
    """LangChain's _merge_splits with an empty separator (it is kept on the splits): the merged
    spans appended to `out`.
    A deque: dropping from the front must not copy the window (LangChain's `cur[1:]` makes
    a 1 MB line without spaces, split per character, quadratic in the chunk size)."""
    cur: deque[tuple[int, int, int]] = deque()
    total = 0
    for sp in splits:
        ln = sp[2]
        if total + ln > chunk_size and cur:
            a, b = trim(text, cur[0][0], cur[-1][1])
            if a < b:
                out.append((a, b))
            while total > chunk_overlap or (total + ln > chunk_size and total > 0):
                total -= cur.popleft()[2]
        cur.append(sp)
        total += ln
    if cur:
        a, b = trim(text, cur[0][0], cur[-1][1])
        if a < b:
            out.append((a, b))


def _pick_separator(sub: str, seps: Sequence[str]) -> tuple[str, Sequence[str]]:
    """The first separator found in `sub` (or the empty one, or the last), and those after it."""
    for i, s in enumerate(seps):
        if not s:
            return s, ()
        if _found(s, sub):
            return s, seps[i + 1:]
    return seps[-1], ()


def _separator_pieces(sub: str, a: int, b: int, separator: str) -> list[tuple[int, int]]:
    """Split points of text[a:b] (`sub`): each separator match starts a new split
    (keep_separator="start"); empty pieces left out."""
    cuts = [a, *_match_starts(separator, sub, a), b]
    return [(x, y) for x, y in zip(cuts, cuts[1:], strict=False) if x < y]


def recursive_spans(text: str, start: int, end: int, length: Callable[[int, int], int],
                    chunk_size: int, chunk_overlap: int,
                    separators: Sequence[str] = DEFAULT_SEPARATORS, *,
                    lengths: Callable[[list[tuple[int, int]]], list[int]] | None = None
                    ) -> list[tuple[int, int]]:
    """Chunk spans of text[start:end] (trimmed, in order), LangChain's recursive algorithm.
    `lengths`, when given, is `length` of many spans at once (`TokenIndex.counts`): every split
    of a level is measured, so a level's are asked for together."""
    out: list[tuple[int, int]] = []
    if lengths is None:
        def lengths(spans: list[tuple[int, int]]) -> list[int]:
            return [length(a, b) for a, b in spans]

    def merge(splits: list[tuple[int, int, int]]) -> None:
        _merge_splits(text, splits, chunk_size, chunk_overlap, out)

    def split(a: int, b: int, seps: Sequence[str]) -> None:
        check_cancelled()
        # Work on the slice, as LangChain does: a look-behind must not see text before `a`.
        sub = text[a:b]
        separator, rest = _pick_separator(sub, seps)
        if separator:
            pieces = _separator_pieces(sub, a, b, separator)
        else:
            if FAST_CHARACTERS and b > a:
                lens = _character_lengths(text, a, b, length)
                if int(lens.max()) < chunk_size:  # no character alone fills a chunk: merge them all
                    _merge_characters(text, a, b, lens, chunk_size, chunk_overlap, out)
                    return
            pieces = [(i, i + 1) for i in range(a, b)]
        good: list[tuple[int, int, int]] = []
        for (pa, pb), ln in zip(pieces, lengths(pieces), strict=True):
            if ln < chunk_size:
                good.append((pa, pb, ln))
            else:
                if good:
                    merge(good)
                    good = []
                if not rest:
                    ta, tb = trim(text, pa, pb)
                    if ta < tb:
                        out.append((ta, tb))
                else:
                    split(pa, pb, rest)
        if good:
            merge(good)

    if end > start:
        split(start, end, tuple(separators))
    return out


def recursive(doc: Document, params: dict) -> tuple[Chunk, ...]:
    ctx = SpanContext(doc)
    spans = recursive_spans(doc.text, 0, len(doc.text), ctx.count, params["size"], params["overlap"],
                            lengths=ctx.counts)
    return tuple(ctx.make(spans, budget=params["size"]))
