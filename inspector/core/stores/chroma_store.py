"""Reading a Chroma persistent folder (what `langchain_chroma.Chroma(persist_directory=...)` fills).

LangChain's Chroma integration calls `collection.upsert(ids, documents, metadatas, embeddings)`:
the chunk's text is the record's document, `Document.metadata` its metadata (flat: str, int,
float, bool values), and the vector its embedding; the collection's "hnsw:space" metadata (or its
configuration) says how it ranks, "l2" unless set.

Read only: Chroma's client is not. Every start writes a row to an internal table
(`acquire_write`), and loading a collection, even to count it, replays Chroma's write-ahead log
into the HNSW index files and writes them back (measured with chromadb 1.5.9: three files of a
30-record store changed on each read). Chroma is not safe for two processes at once, so doing that
in a folder the user's running application holds could damage their index. The reader therefore
copies the folder to a temporary one and opens the copy (telemetry off, reset forbidden); the
user's folder is only read. The copy costs about the store's size on disk for the read's duration,
no more than the vectors read into memory. A folder without `chroma.sqlite3` is refused before
anything is copied or opened (a client would create an empty store there).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from inspector.core.errors import InputError
from inspector.core.runtime.cancel import check_cancelled
from inspector.core.stores.collection import (
    PAGE,
    StoreCollection,
    as_vectors,
    empty_collection,
    json_metadata,
    need_package,
    no_text,
    open_failure,
    split_payload,
    unknown_collection,
)
from inspector.core.stores.spec import StoreSpec

SQLITE_FILE = "chroma.sqlite3"


def _client(folder: Path, shown: str) -> Any:
    chromadb = need_package("chromadb", "chroma")
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False, allow_reset=False)
    try:
        return chromadb.PersistentClient(path=str(folder), settings=settings)
    except Exception as exc:  # the client's own errors (a lock, a schema it cannot migrate) as one line
        raise open_failure("chroma", shown, exc) from None


def _metric(col: Any) -> str:
    meta = col.metadata or {}
    space = meta.get("hnsw:space")
    if not space:
        config = getattr(col, "configuration", None) or {}
        hnsw = config.get("hnsw") if isinstance(config, dict) else None
        space = (hnsw or {}).get("space") if isinstance(hnsw, dict) else None
    return str(space or "l2")


def read_chroma(spec: StoreSpec, folder: Path, limit: int | None) -> StoreCollection:
    """The records of `spec.collection` in the Chroma folder, in the store's order, read from a
    temporary copy of the folder (see the module's docstring)."""
    shown = spec.location
    if not (folder / SQLITE_FILE).is_file():
        raise InputError(f"not a Chroma folder: it holds no {SQLITE_FILE}", path=shown)
    need_package("chromadb", "chroma")  # before copying anything
    with tempfile.TemporaryDirectory(prefix="chunk-inspector-chroma-", ignore_cleanup_errors=True) as tmp:
        copy = Path(tmp) / "store"
        try:
            shutil.copytree(folder, copy)
        except (OSError, shutil.Error) as exc:
            raise InputError(f"could not copy the Chroma store to read it: {exc}", path=shown) from None
        return _read_copy(spec, copy, limit)


def _read_copy(spec: StoreSpec, folder: Path, limit: int | None) -> StoreCollection:
    shown = spec.location
    client = _client(folder, shown)
    try:
        try:
            names = [str(getattr(c, "name", c)) for c in client.list_collections()]
            if spec.collection not in names:
                raise unknown_collection("chroma", shown, spec.collection, names)
            col = client.get_collection(spec.collection)
            total = int(col.count())
            metric = _metric(col)
        except InputError:
            raise
        except Exception as exc:
            raise open_failure("chroma", shown, exc) from None
        if total == 0:
            raise empty_collection("chroma", shown, spec.collection)
        want = total if limit is None else min(limit, total)
        ids: list[str] = []
        docs: list[str | None] = []
        metas: list[dict[str, Any]] = []
        rows: list[Any] = []
        has_vectors = True
        while len(ids) < want:
            check_cancelled()
            try:
                got = col.get(include=["documents", "metadatas", "embeddings"],
                              limit=min(PAGE, want - len(ids)), offset=len(ids))
            except Exception as exc:
                raise open_failure("chroma", shown, exc) from None
            page_ids = list(got.get("ids") or [])
            if not page_ids:
                break  # the collection shrank while being read
            n = len(page_ids)
            ids.extend(str(i) for i in page_ids)
            docs.extend(got.get("documents") or [None] * n)
            metas.extend(json_metadata(m) for m in (got.get("metadatas") or [None] * n))
            emb = got.get("embeddings")
            if emb is None or len(emb) == 0:
                has_vectors = False
            else:
                rows.extend(emb)
    finally:
        close = getattr(client, "close", None)
        if close is not None:
            close()
    texts, fields = _texts(docs, metas)
    if not any(texts):
        keys = sorted({k for m in metas for k in m})
        raise no_text("chroma", shown, spec.collection, ["documents (all empty)", *keys])
    vectors = as_vectors(rows, len(ids), "chroma", shown) if has_vectors and rows else None
    return StoreCollection("chroma", spec.collection, shown, tuple(ids), tuple(texts), tuple(metas),
                           vectors, metric, fields, "", total)


def _texts(docs: list[str | None], metas: list[dict[str, Any]]) -> tuple[list[str], str]:
    """Each record's text: its document, else a text field of its metadata (some pipelines keep
    the text there and store no document); the field most texts came from."""
    texts: list[str] = []
    used: dict[str, int] = {}
    for i, doc in enumerate(docs):
        if isinstance(doc, str) and doc:
            texts.append(doc)
            used["documents"] = used.get("documents", 0) + 1
            continue
        text, field, rest = split_payload(metas[i])
        if text and field:
            texts.append(text)
            metas[i] = rest
            used[f"metadata.{field}"] = used.get(f"metadata.{field}", 0) + 1
        else:
            texts.append("")
    return texts, max(used, key=lambda k: used[k]) if used else ""
