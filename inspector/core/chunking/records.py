"""Chunks as LangChain-shaped JSON records."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from inspector.core.chunking.chunk import Chunk
from inspector.core.documents.document import Document


def chunk_record(doc: Document, c: Chunk) -> dict:
    """One chunk shaped like a LangChain `Document`: page_content plus metadata."""
    meta = {
        "source": doc.path or doc.name,
        "doc_id": doc.doc_id,
        "chunk_id": c.id,
        "start_index": c.start,
        "end_index": c.end,
        "heading_path": list(c.heading_path),
        "context_prefix": c.prefix,
        "token_count": c.token_count,
        "flags": sorted(c.flags),
        "role": c.role,
    }
    if c.parent_id is not None:
        meta["parent_id"] = c.parent_id
    if c.embed_tokens is not None:
        # Measured by `annotate`: what the embedder sees (prefix + text, [CLS]/[SEP] included),
        # and whether it reads only part of it.
        meta["word_pieces"] = c.embed_tokens
        meta["truncated_by_embedder"] = "truncated_by_embedder" in c.flags
        meta["embed_tokens"] = c.embed_tokens
        meta["embed_dropped"] = c.embed_dropped
    for k, v in c.meta.items():
        meta.setdefault(k, v)
    return {"page_content": doc.text[c.start:c.end], "metadata": meta}


def chunks_jsonl(doc: Document, chunks: Iterable[Chunk]) -> str:
    return "".join(chunks_jsonl_lines(doc, chunks))


def chunks_jsonl_lines(doc: Document, chunks: Iterable[Chunk]) -> Iterator[str]:
    """`chunks_jsonl` a line at a time (to stream a large export to its file)."""
    for c in chunks:
        yield json.dumps(chunk_record(doc, c), ensure_ascii=False) + "\n"
