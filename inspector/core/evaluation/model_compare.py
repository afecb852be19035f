"""A gold set scored with two embedding models on the same chunks: hit@k and MRR of each, and
their paired difference.

Tuning conclusions move with the model (issue 28: `fixed_tokens` 512 beat 256 for one model and
lost for another), so the gold panel can put a second model's figures beside the first's, as it
puts BM25 and hybrid beside dense. The chunks are the index's own (the same spans, prefixes and
parents); only the vectors differ: the second model embeds every chunk (vectors cached under its
own identity, never mixed with the first's) and the questions. Both reports are made here with
the same search, so the difference is the model's alone, judged question by question with the
project's paired statistics (`uncertainty.paired_deltas`: bootstrap interval, McNemar for hit
rates), never by two unpaired means.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from inspector.core.chunking.chunk import Chunk
from inspector.core.embedding.spec import embedder_info
from inspector.core.errors import InputError
from inspector.core.evaluation.compare import Comparison, compare_reports
from inspector.core.evaluation.gold import GoldQuestion, GoldSet
from inspector.core.evaluation.metrics import IndexSearch, Report, evaluate
from inspector.core.evaluation.reranked import _chunks_by_doc
from inspector.core.evaluation.uncertainty import PairedDelta, paired_deltas
from inspector.core.retrieval.kinds import Retriever

if TYPE_CHECKING:
    from inspector.core.embedding.cache import VectorCache
    from inspector.core.embedding.embedder import Embedder
    from inspector.core.retrieval.index import Index

#: The figures two models are judged on.
MODEL_METRICS = ("hit_rate", "mrr")


@dataclass(frozen=True, slots=True)
class ModelFigures:
    """One gold set over one set of chunks, embedded by two models."""

    first: Report
    """The index's own model (the one in use)."""
    second: Report
    """The other model, on the same chunks."""
    comparison: Comparison
    """`compare_reports(first, second)`: every metric's change, the questions fixed and broken."""
    paired: Mapping[str, PairedDelta]
    """hit_rate and mrr of the second model against the first, paired over the questions."""
    k: int
    retriever: Retriever
    """"dense" or "hybrid" (BM25 reads no vectors: both models would score the same)."""
    first_model: Mapping[str, Any]
    """`embedder_info` of the first model (spec, model_id, dims, max_tokens, tokenizer, backend);
    with "stored_in" (a vector store's label) when the index's chunk vectors are that store's,
    the model then embedding the questions alone."""
    second_model: Mapping[str, Any]
    chunks: int
    """Chunks the second model embedded (cached ones included)."""
    seconds: float
    """Time spent indexing with the second model and scoring both."""


def model_figures(index: Index, gold: GoldSet | Sequence[GoldQuestion], embedder: Embedder, k: int, *,
                  retriever: Retriever = "dense", multi_doc: bool | None = None,
                  chunks_by_doc: Mapping[str, Sequence[Chunk]] | None = None,
                  cache: VectorCache | None = None,
                  progress: Callable[[int, int], None] | None = None) -> ModelFigures:
    """Score `gold` on `index` (an `Index` with vectors) and on the same chunks embedded by
    `embedder`, with `retriever`'s top k; both reports, the comparison and the paired deltas.

    `multi_doc` (default: the index holds several documents) restricts each question to its
    `source`, as the gold panel does. `chunks_by_doc` (default: the index's own) is what the
    reports count as the corpus. `cache`: the persistent vector cache (namespaced per model).
    `progress(done, total)` while the second model embeds the chunks; a worker's cancel scope
    stops it. InputError for BM25, which reads no vectors."""
    from inspector.core.retrieval.index import build_index

    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if retriever == "bm25":
        raise InputError("BM25 reads no vectors: compare embedding models under dense or hybrid retrieval")
    if getattr(index, "embedder", None) is None:
        raise InputError("the figures were computed without an embedding model: nothing to compare with")
    t0 = time.perf_counter()
    questions = tuple(gold.questions if isinstance(gold, GoldSet) else gold)
    multi = len(index.docs) > 1 if multi_doc is None else multi_doc
    chunks = dict(chunks_by_doc) if chunks_by_doc is not None else _chunks_by_doc(index)
    docs = [d for d in index.docs.values() if d.doc_id in chunks]
    other = build_index(docs, chunks, embedder, with_prefix=bool(index.with_prefix), cache=cache,
                        progress=progress)
    first = evaluate(questions, index.docs, chunks, IndexSearch(index, retriever=retriever, multi_doc=multi), k)
    second = evaluate(questions, index.docs, chunks, IndexSearch(other, retriever=retriever, multi_doc=multi), k)
    return ModelFigures(first=first, second=second, comparison=compare_reports(first, second),
                        paired=paired_deltas(first, second, metrics=MODEL_METRICS), k=k, retriever=retriever,
                        first_model=_first_model(index), second_model=embedder_info(embedder),
                        chunks=len(other.entries), seconds=time.perf_counter() - t0)


def _first_model(index: Index) -> dict[str, Any]:
    """`embedder_info` of the index's model, with "stored_in" when its chunk vectors are a vector
    store's: the figures are the store's vectors, not this model's, which its name alone said."""
    info = dict(embedder_info(index.embedder))
    if index.stored_in:
        info["stored_in"] = index.stored_in
    return info


__all__ = ["MODEL_METRICS", "ModelFigures", "model_figures"]
