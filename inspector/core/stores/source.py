"""A vector store as a chunk source: its records, placed on the opened documents, are a strategy
like any other, so evaluate, compare and sweep score the user's own chunks beside ours; and its
vectors are the index's (the question embedded by the model the user names).

    source = open_store("chroma:./chroma_db:langchain", docs)   # reads, places, registers
    config = EvalConfig(source.strategy, retriever="dense")      # the store's chunks as a strategy
    index = source.index(docs, chunks_by_doc, embedder)          # the store's own vectors

The strategy returns the placed chunks of whichever opened document it is run on (an empty tuple
for one no record is on); records that could not be placed are in `placement.unplaced`, never
dropped silently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.external import register_external
from inspector.core.chunking.params import Strategy
from inspector.core.documents.document import Document
from inspector.core.stores.collection import StoreCollection
from inspector.core.stores.placement import Placement, place_records
from inspector.core.stores.read import read_store
from inspector.core.stores.scoring import ranking_note, store_index
from inspector.core.stores.spec import STORE_STRATEGY_PREFIX

if TYPE_CHECKING:
    from inspector.core.embedding.cache import VectorCache
    from inspector.core.embedding.embedder import Embedder
    from inspector.core.retrieval.index import Index

#: Placed stores by the name of their strategy (the last one opened under a name wins).
_SOURCES: dict[str, StoreSource] = {}


@dataclass(frozen=True)
class StoreSource:
    """A store read and placed on documents, registered as the strategy `strategy`."""

    strategy: str
    """The strategy name its chunks go by: "store:" and the store's spec."""
    collection: StoreCollection
    placement: Placement

    @property
    def note(self) -> str | None:
        """Why rankings here can differ from the store's own (its metric), else None."""
        return ranking_note(self.collection)

    def index(self, docs: Sequence[Document], chunks_by_doc: Mapping[str, Sequence[Chunk]],
              embedder: Embedder, cache: VectorCache | None = None) -> Index:
        """The dense index of the placed chunks on their store vectors (questions embedded by
        `embedder`; a vector size unlike the store's is an InputError saying so). Only the chunks
        given are indexed, so a document filter still applies."""
        placed = Placement({d.doc_id: tuple(chunks_by_doc.get(d.doc_id, ())) for d in docs},
                           self.placement.rows, self.placement.unplaced, self.placement.warnings,
                           self.placement.records)
        return store_index(docs, placed, self.collection, embedder, cache=cache)


def store_strategy_name(spec: str) -> str:
    return f"{STORE_STRATEGY_PREFIX}{spec}"


def open_store(spec: str, docs: Sequence[Document], *, source_key: str | None = None,
               limit: int | None = None) -> StoreSource:
    """Read the store `spec` names (read-only), place its records on `docs` and register its
    chunks as a strategy. InputError for a store that cannot be read (see `read_store`)."""
    collection = read_store(spec, source_key=source_key, limit=limit)
    placement = place_records(collection, docs, source_key=source_key)
    name = store_strategy_name(collection.spec)
    by_doc = dict(placement.chunks)

    def run(doc: Document, params: Mapping[str, Any]) -> tuple[Chunk, ...]:
        return tuple(by_doc.get(doc.doc_id, ()))

    # The store holds texts alone: no context prefix is embedded with them, as the store's own
    # vectors were made (a prefix would also be a question's word no store chunk has).
    strategy = Strategy(name, run, (), f"Chunks of {collection.label}, placed on the documents",
                        prefix_default=False)
    register_external(strategy)
    source = StoreSource(name, collection, placement)
    _SOURCES[name] = source
    return source


def store_source(strategy: str) -> StoreSource | None:
    """The placed store a strategy name stands for (None for every other strategy)."""
    return _SOURCES.get(strategy)


__all__ = ["StoreSource", "open_store", "store_source", "store_strategy_name"]
