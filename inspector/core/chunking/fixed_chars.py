"""Window strategies: `fixed_chars` and `fixed_tokens`."""

from __future__ import annotations

from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.common import SpanContext, is_blank
from inspector.core.documents.document import Document


def fixed_chars(doc: Document, params: dict) -> tuple[Chunk, ...]:
    size, overlap = params["size"], params["overlap"]
    text = doc.text
    n = len(text)
    step = size - overlap
    spans = []
    i = 0
    while i < n:
        e = min(i + size, n)
        if not is_blank(text, i, e):
            spans.append((i, e))
        if e >= n:
            break
        i += step
    ctx = SpanContext(doc)
    return tuple(ctx.make(spans, budget=None))
