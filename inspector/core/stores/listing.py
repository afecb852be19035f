"""Which collections (tables) a store holds, for a chooser: read without opening the store
through its client where the files say it, so listing never writes to the user's store.

- Chroma: the `collections` table of `chroma.sqlite3`, read through SQLite in read-only mode
  (Chroma's client writes on every start; see chroma_store.py);
- LanceDB: the folder's `<table>.lance` directories (a table is one such directory);
- Qdrant: a local folder's `meta.json` (its "collections"); a server's collections through the
  client (a GET, nothing written).

Any failure is an InputError of one line naming the location, as the readers' are.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from inspector.core.errors import InputError
from inspector.core.stores.collection import LABELS, need_package, open_failure
from inspector.core.stores.spec import STORE_KINDS, StoreSpec


def list_collections(kind: str, location: str) -> tuple[str, ...]:
    """The names of the collections (LanceDB: tables) at `location`, sorted; InputError when the
    location is not such a store (or, for a Qdrant server, cannot be reached)."""
    kind = kind.strip().lower()
    if kind not in STORE_KINDS:
        raise InputError(f"unknown store kind {kind!r}: expected one of {', '.join(STORE_KINDS)}")
    location = location.strip()
    if not location:
        raise InputError(f"name the {LABELS[kind]} store's folder" + (" or URL" if kind == "qdrant" else ""))
    spec = StoreSpec(kind, location, "_")
    if spec.is_url:
        if kind != "qdrant":
            raise InputError(f"a {LABELS[kind]} store is read from its folder on this machine, not from a URL",
                             path=location)
        return _qdrant_server(spec)
    folder = Path(location).expanduser()
    if not folder.is_dir():
        raise InputError("no such folder" if not folder.exists() else "not a folder", path=location)
    if kind == "chroma":
        return _chroma(folder, location)
    if kind == "lancedb":
        names = sorted(p.name[:-len(".lance")] for p in folder.iterdir() if p.is_dir() and p.name.endswith(".lance"))
        if not names:
            raise InputError("not a LanceDB folder: it holds no <table>.lance directories", path=location)
        return tuple(names)
    return _qdrant_folder(folder, location)


def _chroma(folder: Path, shown: str) -> tuple[str, ...]:
    db = folder / "chroma.sqlite3"
    if not db.is_file():
        raise InputError("not a Chroma folder: it holds no chroma.sqlite3", path=shown)
    try:
        con = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=2)
        try:
            rows = con.execute("SELECT name FROM collections").fetchall()
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise open_failure("chroma", shown, exc) from None
    return tuple(sorted(str(r[0]) for r in rows))


def _qdrant_folder(folder: Path, shown: str) -> tuple[str, ...]:
    meta = folder / "meta.json"
    if not meta.is_file():
        raise InputError("not a Qdrant folder: it holds no meta.json", path=shown)
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"could not read Qdrant's meta.json: {exc}", path=shown) from None
    collections = data.get("collections") if isinstance(data, dict) else None
    return tuple(sorted(str(n) for n in collections)) if isinstance(collections, dict) else ()


def _qdrant_server(spec: StoreSpec) -> tuple[str, ...]:
    from inspector.core.stores.qdrant_store import _client

    need_package("qdrant_client", "qdrant")
    client = _client(spec, None)
    try:
        got = client.get_collections()
    except Exception as exc:  # unreachable, refused, a bad key: one line
        raise open_failure("qdrant", spec.location, exc) from None
    finally:
        client.close()
    return tuple(sorted(str(c.name) for c in got.collections))


__all__ = ["list_collections"]
