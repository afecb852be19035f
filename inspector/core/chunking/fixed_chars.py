"""Window strategies: `fixed_chars` and `fixed_tokens`."""

from __future__ import annotations

from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.common import SpanContext, is_blank
from inspector.core.chunking.params import Param, Strategy
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


STRATEGY = Strategy(
    "fixed_chars", fixed_chars,
    (
    Param("size", "characters", 500, 1, 20000, 10, "Window length", role="size",
          practical=(50, 10000), scale="log10"),
    Param("overlap", "characters", 0, 0, 10000, 10, "Characters shared by neighbouring windows",
          role="overlap", less_than="size", scale="log10", practical_share=0.5),
),
    "Windows of `size` characters stepping by size - overlap; boundaries fall wherever they fall.",
    prefix_default=False,
)
