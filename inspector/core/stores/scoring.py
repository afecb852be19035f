"""Scoring against the store's own vectors: a dense Index whose rows are the vectors the user's
pipeline stored for the placed chunks, the questions embedded by the embedder the user names.

The chunk vectors are never recomputed, so what is measured is the user's index as it is; only
the questions need a model, and it must be the model that filled the store (the same number of
dimensions is the check that can be made; a different model of the same size is the user's to
avoid).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from inspector.core.documents.document import Document
from inspector.core.embedding.cache import VectorCache
from inspector.core.embedding.embedder import Embedder
from inspector.core.errors import InputError
from inspector.core.retrieval.index import Index, build_index
from inspector.core.stores.collection import StoreCollection
from inspector.core.stores.placement import Placement

UNIT_TOLERANCE = 1e-3
"""How far from 1 a stored vector's length may be and still count as normalized."""


def check_dimensions(collection: StoreCollection, embedder: Embedder) -> None:
    """InputError unless the store holds vectors of the embedder's size."""
    if collection.vectors is None:
        raise InputError(f"{collection.label} holds no vectors to score against", path=collection.spec)
    if collection.dim != int(embedder.dim):
        raise InputError(f"the store's vectors have {collection.dim} dimensions; the embedder "
                         f"{embedder.model_id} gives {embedder.dim}: choose the model that filled the "
                         "store with --embedder", path=collection.spec)


def placed_vectors(placement: Placement, collection: StoreCollection) -> np.ndarray:
    """The stored vectors of the placed chunks, in the order `build_index` indexes them (by
    document, then chunk; parents skipped): one row per chunk, so two chunks placed from two
    records with the same text keep their own rows."""
    if collection.vectors is None:
        raise InputError(f"{collection.label} holds no vectors", path=collection.spec)
    rows = [placement.rows[(doc_id, c.id)] for doc_id, cs in placement.chunks.items() for c in cs
            if c.role != "parent"]
    return collection.vectors[np.asarray(rows, dtype=np.int64)]


def store_index(docs: Sequence[Document], placement: Placement, collection: StoreCollection,
                embedder: Embedder, *, cache: VectorCache | None = None) -> Index:
    """A dense (and BM25) Index over the placed chunks whose vectors are the store's rows.

    Queries are embedded by `embedder` (the model that filled the store: a different size is an
    InputError saying so). BM25 indexes the chunk texts without a context prefix, since the
    store's records are the texts alone. Rows are normalized, so dense scores are cosine
    similarities; see `ranking_note` for stores that rank otherwise.
    """
    check_dimensions(collection, embedder)
    index = build_index(docs, placement.chunks, embedder, with_prefix=False, cache=cache,
                        vectors=placed_vectors(placement, collection))
    index.stored_in = collection.label
    return index


def ranking_note(collection: StoreCollection) -> str | None:
    """A sentence when this app's cosine ranking can differ from the store's own: its vectors are
    not of unit length and it ranks by inner product or distance (None otherwise)."""
    vecs = collection.vectors
    if vecs is None or collection.metric == "cosine" or not len(vecs):
        return None
    norms = np.linalg.norm(vecs, axis=1)
    if float(np.max(np.abs(norms - 1.0))) <= UNIT_TOLERANCE:
        return None  # on unit vectors l2, inner product and cosine rank alike
    how = {"l2": "L2 distance", "ip": "inner product", "l1": "L1 distance"}.get(
        collection.metric or "", "a metric chosen per query")
    return (f"{collection.label} ranks by {how} and its vectors are not of unit length; rankings "
            "here are by cosine similarity and can differ from the store's")
