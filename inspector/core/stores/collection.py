"""What a vector store's collection holds, read once: ids, texts, metadata and stored vectors.

Every reader (Chroma, LanceDB, Qdrant) returns a `StoreCollection` of plain data, so placing
the chunks on documents and scoring them never touches a store client again. The helpers here
are what the readers share: the package check with its install hint, reading a record's text
and metadata from a payload laid out as LangChain writes it (or flat), and the one-line errors.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from inspector.core.errors import InputError

INSTALL_HINT = "pip install 'chunk-inspector[stores]'"

LABELS = {"chroma": "Chroma", "lancedb": "LanceDB", "qdrant": "Qdrant"}
"""How each store kind is named in messages."""

PACKAGES = {"chroma": "chromadb", "lancedb": "lancedb", "qdrant": "qdrant-client"}
"""The pip package of each store's client."""

TEXT_FIELDS = ("page_content", "text", "document", "content", "chunk", "chunk_text")
"""Fields that may hold a record's text, in order of preference: LangChain's Qdrant payload
("page_content"), LangChain's LanceDB column and plain payloads ("text"), then other common names."""

PAGE = 1000
"""Records fetched per request (a cancel is checked between pages)."""

MAX_LISTED = 12
"""Names listed in one error (collections, fields) before "and N more"."""


@dataclass(frozen=True, slots=True)
class StoreCollection:
    """One collection (table) of a vector store, read in full (or up to a limit)."""

    kind: str
    """"chroma", "lancedb" or "qdrant"."""
    name: str
    """The collection's (table's) name."""
    location: str
    """The folder (or server URL) it was read from, as the spec wrote it."""
    ids: tuple[str, ...]
    """Each record's id in the store, as a string (Qdrant's integer ids too)."""
    texts: tuple[str, ...]
    """Each record's text ("" for a record that stores none)."""
    metadatas: tuple[dict[str, Any], ...]
    """Each record's metadata ({} for none): LangChain's `Document.metadata`."""
    vectors: np.ndarray | None
    """float32 [len(ids), dim], row i the stored vector of record i, as stored (not normalized);
    None when the store holds no vectors."""
    metric: str | None = None
    """How the store ranks: "cosine", "l2", "ip" (inner product) or "l1"; None when the store
    does not record it (LanceDB chooses the metric per query)."""
    text_field: str = ""
    """Where the texts came from ("documents" for Chroma, else the column or payload key)."""
    vector_field: str = ""
    """The vector column (LanceDB) or named vector (Qdrant; "" for the unnamed one)."""
    total: int = 0
    """Records in the collection; more than len(ids) when a limit cut the read short."""
    source_key: str | None = None
    """The metadata key the user named as the records' source document (None: the defaults)."""

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def dim(self) -> int | None:
        """Dimensions of the stored vectors (None when the store holds none)."""
        return None if self.vectors is None else int(self.vectors.shape[1])

    @property
    def spec(self) -> str:
        """The spec string that names this collection."""
        return f"{self.kind}:{self.location}:{self.name}"

    @property
    def label(self) -> str:
        """"Chroma collection 'docs'" (for messages)."""
        what = "table" if self.kind == "lancedb" else "collection"
        return f"{LABELS.get(self.kind, self.kind)} {what} {self.name!r}"


def need_package(module: str, kind: str) -> Any:
    """The store's client module, or an InputError that says how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise InputError(f"reading a {LABELS[kind]} store needs the {PACKAGES[kind]} package: "
                         f"{INSTALL_HINT}") from None


def listed(names: Sequence[str]) -> str:
    """"a, b, c" with at most MAX_LISTED names ("... and 4 more")."""
    shown = ", ".join(repr(n) for n in names[:MAX_LISTED])
    more = len(names) - MAX_LISTED
    return f"{shown} and {more} more" if more > 0 else shown


def unknown_collection(kind: str, location: str, name: str, names: Sequence[str]) -> InputError:
    what = "table" if kind == "lancedb" else "collection"
    there = f"the {what}s there: {listed(sorted(names))}" if names else f"it holds no {what}s"
    return InputError(f"no {LABELS[kind]} {what} {name!r}; {there}", path=location)


def empty_collection(kind: str, location: str, name: str) -> InputError:
    what = "table" if kind == "lancedb" else "collection"
    return InputError(f"the {LABELS[kind]} {what} {name!r} is empty: it holds no records", path=location)


def no_text(kind: str, location: str, name: str, fields: Sequence[str]) -> InputError:
    what = "table" if kind == "lancedb" else "collection"
    there = f"the fields there: {listed(sorted(fields))}" if fields else "its records hold no fields"
    return InputError(f"the {LABELS[kind]} {what} {name!r} stores no chunk text (looked for "
                      f"{listed(TEXT_FIELDS)}); {there}", path=location)


_LOCKED_RE = re.compile(r"\blocked\b|\block\b|already accessed", re.IGNORECASE)
"""How the clients say another process holds the store (Qdrant: "already accessed by another
instance"; SQLite under Chroma: "database is locked")."""


def open_failure(kind: str, location: str, exc: BaseException) -> InputError:
    """A client's failure to open or read a store as one line (a lock held by another process
    gets a sentence of its own: it is the one failure the user fixes by closing a program)."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if _LOCKED_RE.search(first):
        return InputError(f"the {LABELS[kind]} store is in use by another process ({first}); close "
                          "the program that holds it, or read a copy of the folder", path=location)
    return InputError(f"could not read the {LABELS[kind]} store: {first}", path=location)


def split_payload(payload: Mapping[str, Any] | None) -> tuple[str | None, str | None, dict[str, Any]]:
    """(text, the field it came from, metadata) of one record's payload.

    LangChain's layout nests the metadata: {"page_content": ..., "metadata": {...}} (metadata
    None when the documents had none). A flat payload ({"text": ..., "source": ...}) has its
    other keys as metadata. (None, None, payload) when no text field holds a string.
    """
    if not payload:
        return None, None, {}
    for name in TEXT_FIELDS:
        value = payload.get(name)
        if isinstance(value, str):
            if "metadata" in payload:
                meta = payload["metadata"]
                if isinstance(meta, str):
                    meta = _json_object(meta)
                return value, name, dict(meta) if isinstance(meta, Mapping) else {}
            return value, name, {k: v for k, v in payload.items() if k != name}
    return None, None, dict(payload)


def _json_object(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except ValueError:
        return {"metadata": raw}
    return value if isinstance(value, dict) else {"metadata": value}


def json_metadata(raw: Any) -> dict[str, Any]:
    """A metadata value as a dict: a mapping as is, a JSON object string parsed, None as {}."""
    if raw is None:
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str):
        return _json_object(raw)
    return {"metadata": raw}


def meta_value(meta: Mapping[str, Any], key: str) -> Any:
    """`meta[key]`, or for a dotted key ("metadata.source", "doc.path") the nested value."""
    if key in meta:
        return meta[key]
    node: Any = meta
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def as_vectors(rows: Any, n: int, kind: str, location: str) -> np.ndarray:
    """Stored vectors as float32 [n, dim]; InputError when they are ragged or not numbers."""
    try:
        mat = np.asarray(rows, dtype=np.float32)
    except (TypeError, ValueError):
        raise InputError(f"the {LABELS[kind]} store's vectors are not all of one length", path=location) from None
    if mat.ndim != 2 or mat.shape[0] != n:
        raise InputError(f"the {LABELS[kind]} store's vectors have shape {mat.shape} for {n} records",
                         path=location)
    return mat
