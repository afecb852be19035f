"""`paragraph`: split on blank lines, the naive baseline."""

from __future__ import annotations

from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.common import SpanContext
from inspector.core.documents.document import Document
from inspector.core.text.structure import paragraph_spans


def paragraph(doc: Document, params: dict) -> tuple[Chunk, ...]:
    ctx = SpanContext(doc)
    return tuple(ctx.make(paragraph_spans(doc.text)))
