"""Chunks as LangChain-shaped JSON records, and atomic file writes."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Iterable

from inspector.core.chunk import Chunk
from inspector.core.document import Document


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
        meta["embed_tokens"] = c.embed_tokens
        meta["embed_dropped"] = c.embed_dropped
    for k, v in c.meta.items():
        meta.setdefault(k, v)
    return {"page_content": doc.text[c.start:c.end], "metadata": meta}


def chunks_jsonl(doc: Document, chunks: Iterable[Chunk]) -> str:
    return "".join(json.dumps(chunk_record(doc, c), ensure_ascii=False) + "\n" for c in chunks)


def atomic_write_text(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> None:
    atomic_write_bytes(path, text.encode(encoding))


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write to a temporary file in the same folder, fsync, then rename over the target: a reader
    (or a crash) sees the old file or the new one, never half of either."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
