"""Store specs: the one string that names a vector store's collection, `KIND:LOCATION:COLLECTION`.

    chroma:./chroma_db:langchain           a Chroma persistent folder and a collection in it
    lancedb:/data/lancedb:vectorstore      a LanceDB folder and a table in it
    qdrant:./qdrant_data:docs              a local Qdrant folder (QdrantClient(path=...))
    qdrant:http://localhost:6333:docs      a Qdrant server

The rule: the kind is the text before the FIRST ':', the collection the text after the LAST ':',
and the location everything between. A location may hold colons of its own (a Windows drive,
"C:\\stores\\chroma"; a URL with a port, "http://host:6333"); a collection name may not (Chroma,
LanceDB and Qdrant names are letters, digits, '_', '-' and '.').
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from inspector.core.errors import InputError

STORE_KINDS = ("chroma", "lancedb", "qdrant")
"""The stores `read_store` reads."""

SPEC_FORMS = {
    "chroma": "chroma:PATH:COLLECTION",
    "lancedb": "lancedb:PATH:TABLE",
    "qdrant": "qdrant:PATH_OR_URL:COLLECTION",
}

_URL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")

STORE_STRATEGY_PREFIX = "store:"
"""What a placed store's strategy name begins with (`source.store_strategy_name`: "store:SPEC")."""


def is_store_strategy(strategy: str) -> bool:
    """Whether a strategy name is a vector store's: its chunks and vectors are the user's."""
    return strategy.startswith(STORE_STRATEGY_PREFIX)


@dataclass(frozen=True, slots=True)
class StoreSpec:
    """A parsed store spec."""

    kind: str
    """"chroma", "lancedb" or "qdrant"."""
    location: str
    """The store's folder as written (may be relative), or a Qdrant server's http(s) URL."""
    collection: str
    """The collection (Chroma, Qdrant) or table (LanceDB) to read."""

    @property
    def is_url(self) -> bool:
        """True when the location is a URL (`scheme://...`), not a folder."""
        return bool(_URL_RE.match(self.location))

    def __str__(self) -> str:
        return f"{self.kind}:{self.location}:{self.collection}"


def parse_store_spec(spec: str) -> StoreSpec:
    """`KIND:LOCATION:COLLECTION` as a StoreSpec; InputError with one clear line otherwise.

    The collection is the text after the last ':' (see the module's docstring), so
    `qdrant:http://host:6333:docs` reads collection "docs" from the server at http://host:6333.
    Only Qdrant is read from a server; Chroma and LanceDB locations are folders.
    """
    text = spec.strip()
    kind, sep, rest = text.partition(":")
    kind = kind.strip().lower()
    if not sep or kind not in STORE_KINDS:
        forms = ", ".join(SPEC_FORMS.values())
        shown = f"unknown store kind {kind!r}" if sep else "not a store spec"
        raise InputError(f"{shown} in {spec!r}: expected one of {forms}")
    form = SPEC_FORMS[kind]
    location, sep, collection = rest.rpartition(":")
    collection = collection.strip()
    if not sep or not location.strip():
        raise InputError(f"{spec!r} names no {'table' if kind == 'lancedb' else 'collection'}: "
                         f"expected {form}")
    if not collection:
        raise InputError(f"{spec!r}: the text after the last ':' is empty; name the "
                         f"{'table' if kind == 'lancedb' else 'collection'}: {form}")
    if "/" in collection or "\\" in collection:
        # "chroma:C:\\db" (the collection left out) would otherwise read collection "\\db" in "C".
        raise InputError(f"{spec!r}: {collection!r} after the last ':' looks like a path, not a "
                         f"{'table' if kind == 'lancedb' else 'collection'} name: {form}")
    parsed = StoreSpec(kind, location.strip(), collection)
    if parsed.is_url and kind != "qdrant":
        raise InputError(f"{spec!r}: a {kind} store is read from its folder on this machine, "
                         f"not from a URL: {form}")
    if parsed.is_url and not parsed.location.lower().startswith(("http://", "https://")):
        raise InputError(f"{spec!r}: a Qdrant server's URL starts with http:// or https://")
    return parsed
