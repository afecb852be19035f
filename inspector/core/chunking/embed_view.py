"""Chunks marked with an embedding view (issue 29): `with_view` sets the view and the table header
row a chunk lost in each chunk's meta; what the view does to the text is `inspector.core.text.
embed_view` (re-exported here), which `Chunk.embedded_text` applies."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from inspector.core.chunking.chunk import Chunk
from inspector.core.documents.document import Document
from inspector.core.text.embed_view import (
    HEADER_KEY,
    VIEW_KEY,
    VIEWS,
    clean_span,
    clean_text,
    view_spans,
    view_text,
)

__all__ = ["HEADER_KEY", "VIEWS", "VIEW_KEY", "clean_span", "clean_text", "view_spans", "view_text", "with_view"]


def with_view(doc: Document, chunks: Iterable[Chunk], view: str) -> tuple[Chunk, ...]:
    """`chunks` marked to be embedded under `view` (spans unchanged); a chunk inside a table whose
    header row lies before it carries that row (`meta["table_header"]`). Their word-piece counts
    are reset (`annotate` measures the view's text again)."""
    if view not in VIEWS:
        raise ValueError(f"embed view must be one of {', '.join(VIEWS)}, got {view!r}")
    chunks = tuple(chunks)
    if view == "raw":
        return chunks
    from inspector.core.text.structure import structure_of

    headers: list[tuple[int, int, str]] = []  # (first row after the header, table end, header)
    for b in structure_of(doc).blocks:
        if b.kind == "table" and b.children:
            head = b.children[0]
            headers.append((head.end, b.end, doc.text[head.start:head.end]))
    out = []
    for c in chunks:
        meta = dict(c.meta)
        meta[VIEW_KEY] = view
        for after, end, header in headers:
            if c.start >= after and c.start < end:
                meta[HEADER_KEY] = header
                break
        # Word-piece measurements were of the span as written: reset, so that `annotate` (which
        # counts the view, what is sent) measures them again, as `with_descriptions` does.
        out.append(replace(c, meta=meta, embed_tokens=None, embed_dropped=0, truncated_at=None,
                           flags=c.flags - {"truncated_by_embedder"}))
    return tuple(out)
