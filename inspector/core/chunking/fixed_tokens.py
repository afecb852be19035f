"""Window strategies: `fixed_chars` and `fixed_tokens`."""

from __future__ import annotations

from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.common import SpanContext, is_blank
from inspector.core.documents.document import Document
from inspector.core.runtime.cancel import check_cancelled
from inspector.core.text.tokens import TokenIndex


def token_windows(ti: TokenIndex, start: int, end: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """Spans of at most `size` tokens (exact count of the span text) covering [start, end),
    neighbours sharing `overlap` document tokens; whitespace-only windows are left out. Offsets are
    floored to character boundaries
    where a token boundary falls inside a multi-byte character."""
    spans: list[tuple[int, int]] = []
    if end <= start:
        return spans
    k0 = ti.token_at_or_after(start)
    # A token straddling `start` (inside a character) belongs to the first window.
    if k0 > 0 and ti.char_of_token(k0) > start:
        k0 -= 1
    s = start
    ntok = len(ti)
    while s < end:
        if not len(spans) & 255:
            check_cancelled()
        k = min(k0 + size, ntok)
        e = min(ti.char_of_token(k), end) if k < ntok else end
        while e > s and ti.count(s, e) > size:
            k -= 1
            e = min(ti.char_of_token(k), end)
        if e <= s:
            # One token inside one character, or a pathological count: take one code point.
            e = s + 1
            while e < end and ti.count(s, e + 1) <= max(size, 1) and ti.char_of_token(k0 + 1) > e:
                e += 1
            k = ti.token_at_or_after(e)
        if not is_blank(ti.text, s, e):
            spans.append((s, e))
        if e >= end:
            break
        nk = max(k - overlap, k0 + 1)
        ns = ti.char_of_token(nk)
        if ns <= s:
            ns = s + 1
            nk = ti.token_at_or_after(ns)
        if overlap == 0:
            ns = e
        k0, s = nk, max(ns, start)
    return spans


def fixed_tokens(doc: Document, params: dict) -> tuple[Chunk, ...]:
    ctx = SpanContext(doc)
    text = doc.text
    spans = token_windows(ctx.tokens, 0, len(text), params["size"], params["overlap"])
    return tuple(ctx.make(spans, budget=params["size"]))
