"""The user's vector store: read their collection, place its chunks on their documents, score
against their vectors.

    collection = read_store("chroma:./chroma_db:langchain")      # spec.py, read.py
    placement = place_records(collection, docs)                   # placement.py
    index = store_index(docs, placement, collection, embedder)    # scoring.py

Readers for Chroma (chroma_store.py), LanceDB (lance_store.py) and Qdrant (qdrant_store.py) import
their client only when called; the clients are the optional extra `stores`.
"""

from __future__ import annotations

from inspector.core.stores.collection import INSTALL_HINT, StoreCollection
from inspector.core.stores.placement import (
    NO_SOURCE,
    NO_TEXT,
    REASONS,
    SOURCE_AMBIGUOUS,
    SOURCE_KEYS,
    SOURCE_NOT_OPENED,
    TEXT_AMBIGUOUS,
    TEXT_NOT_FOUND,
    Placement,
    UnplacedRecord,
    place_records,
)
from inspector.core.stores.read import read_store
from inspector.core.stores.scoring import check_dimensions, placed_vectors, ranking_note, store_index
from inspector.core.stores.spec import STORE_KINDS, StoreSpec, parse_store_spec

__all__ = [
    "INSTALL_HINT", "NO_SOURCE", "NO_TEXT", "REASONS", "SOURCE_AMBIGUOUS", "SOURCE_KEYS",
    "SOURCE_NOT_OPENED", "STORE_KINDS", "TEXT_AMBIGUOUS", "TEXT_NOT_FOUND", "Placement",
    "StoreCollection", "StoreSpec", "UnplacedRecord", "check_dimensions", "parse_store_spec",
    "place_records", "placed_vectors", "ranking_note", "read_store", "store_index",
]
