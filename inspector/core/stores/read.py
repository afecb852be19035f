"""`read_store`: one call from a spec string to the collection's records, whatever the store."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from inspector.core.errors import InputError
from inspector.core.stores.collection import StoreCollection, listed, meta_value
from inspector.core.stores.spec import StoreSpec, parse_store_spec


def read_store(spec: str | StoreSpec, *, source_key: str | None = None,
               limit: int | None = None) -> StoreCollection:
    """Read a collection named by `spec` ("chroma:PATH:COLLECTION", "lancedb:PATH:TABLE",
    "qdrant:PATH_OR_URL:COLLECTION"): its ids, texts, metadata and stored vectors, read only.

    `limit` reads at most that many records (the store's first ones). `source_key` names the
    metadata key that holds each record's source document when it is not "source" (a dotted
    key reaches into nested metadata, "doc.path"); it is kept on the collection for placement,
    and a key no record has is an error now, listing the keys there.

    Every problem the user can fix is an InputError of one line: a missing folder, a folder that
    is not such a store, an unknown collection (the ones there are listed), an empty one, no text
    field (the fields there are listed), the client package not installed (with the pip line),
    a store locked by another process.
    """
    parsed = parse_store_spec(spec) if isinstance(spec, str) else spec
    if limit is not None and limit < 1:
        raise InputError(f"the record limit must be at least 1, got {limit}")
    folder: Path | None = None
    if not parsed.is_url:
        folder = Path(parsed.location).expanduser()
        if not folder.exists():
            raise InputError("no such folder", path=parsed.location)
        if not folder.is_dir():
            raise InputError(f"not a folder: a {parsed.kind} store is a folder", path=parsed.location)
    if parsed.kind == "chroma":
        from inspector.core.stores.chroma_store import read_chroma

        assert folder is not None
        collection = read_chroma(parsed, folder, limit)
    elif parsed.kind == "lancedb":
        from inspector.core.stores.lance_store import read_lancedb

        assert folder is not None
        collection = read_lancedb(parsed, folder, limit)
    else:
        from inspector.core.stores.qdrant_store import read_qdrant

        collection = read_qdrant(parsed, folder, limit)
    if source_key:
        if not any(meta_value(m, source_key) is not None for m in collection.metadatas):
            keys = sorted({k for m in collection.metadatas for k in m})
            there = f"the keys there: {listed(keys)}" if keys else "the records have no metadata"
            raise InputError(f"no record of {collection.label} has the metadata key {source_key!r}; "
                             f"{there}", path=parsed.location)
        collection = replace(collection, source_key=source_key)
    return collection
