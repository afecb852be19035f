"""`paragraph`: split on blank lines, the naive baseline."""

from __future__ import annotations

from inspector.core.chunk import Chunk, register
from inspector.core.chunkers.common import SpanContext
from inspector.core.document import Document
from inspector.core.structure import paragraph_spans


@register("paragraph", (), "Split on blank lines: one chunk per paragraph (the naive baseline).", prefix_default=False)
def paragraph(doc: Document, params: dict) -> tuple[Chunk, ...]:
    ctx = SpanContext(doc)
    return tuple(ctx.make(paragraph_spans(doc.text)))
