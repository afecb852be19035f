"""A gold set scored before and after reranking: hit@k and MRR of the retriever's top k, of its
top `depth` reranked to k, and their paired difference.

Both reports score the same questions over the same index and the same retrieval: one search per
question, `depth` deep. "before" is its top k (what the pipeline hands the LLM without a
reranker); "after" is the same `depth` hits ordered by the reranker and cut to k. So the
difference is the reranker's alone, and it is judged question by question with the project's
paired statistics (`uncertainty.paired_deltas`: bootstrap interval, McNemar for hit rates),
never by two unpaired means. A third report at k = depth gives the ceiling: a reranker can only
reorder what the retriever found, so hit@k after reranking never exceeds hit@depth.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from inspector.core.chunking.chunk import Chunk
from inspector.core.evaluation.compare import Comparison, compare_reports
from inspector.core.evaluation.gold import GoldQuestion, GoldSet
from inspector.core.evaluation.metrics import IndexSearch, Report, evaluate
from inspector.core.evaluation.uncertainty import PairedDelta, paired_deltas
from inspector.core.retrieval.kinds import Retriever
from inspector.core.retrieval.rerank import RERANK_DEPTH, Reranker, ScoreCache, rerank_hits
from inspector.core.runtime.cancel import check_cancelled

if TYPE_CHECKING:
    from inspector.core.retrieval.index import Index

#: The figures a reranker is judged on.
RERANK_METRICS = ("hit_rate", "mrr")


@dataclass(frozen=True, slots=True)
class RerankFigures:
    """One gold set over one index, without and with a reranker."""

    before: Report
    """The retriever's top k."""
    after: Report
    """The retriever's top `depth`, reranked, cut to k."""
    within_depth: Report
    """The retriever's top `depth` as they come (k = depth): its hit rate is the ceiling of any
    reranking, its per-question `rank` how deep the first answer-holding chunk sat."""
    comparison: Comparison
    """`compare_reports(before, after)`: every metric's change, the questions fixed and broken."""
    paired: Mapping[str, PairedDelta]
    """hit_rate and mrr of after against before, paired over the questions (interval, verdict)."""
    k: int
    depth: int
    retriever: str
    reranker: str
    """The reranker's model_id."""
    reranker_info: Mapping[str, Any]
    """The reranker's `info()` when it has one (spec, model_id, device ...), else {"model_id"}."""
    pairs: int
    """(question, chunk) pairs read by the reranker (cached pairs included)."""
    computed: int
    """Pairs the model scored (the rest came from the score cache)."""
    seconds: float
    """Time spent reranking."""

    @property
    def ceiling(self) -> float:
        """Share of questions whose answer is in the retriever's top `depth`."""
        return self.within_depth.hit_rate

    def moves(self) -> tuple[tuple[GoldQuestion, int | None, int | None], ...]:
        """(question, rank of its first answer-holding chunk in the retriever's top `depth`, rank
        after reranking within k) for every question: "7 -> 1" is a ranking miss repaired."""
        return tuple((a.question, d.rank, a.rank)
                     for d, a in zip(self.within_depth.questions, self.after.questions, strict=True))


class _Served:
    """A search that answers from lists already made (each `depth` deep) and falls back to
    `search` for anything deeper: `evaluate` searches misses again, deeper, to diagnose them."""

    def __init__(self, lists: Mapping[int, Sequence[Any]], depth: int, search: Callable[[GoldQuestion, int], Any]):
        self.lists = lists
        self.depth = depth
        self.search = search

    def __call__(self, q: GoldQuestion, k: int) -> list[Any]:
        found = self.lists.get(id(q))
        if found is not None and k <= self.depth:
            return list(found[:k])
        return list(self.search(q, k))


def _chunks_by_doc(index: Index) -> dict[str, tuple[Chunk, ...]]:
    """The index's chunks by document (matchable entries and parent_child parents), as `evaluate`
    takes them."""
    out: dict[str, list[Chunk]] = {d: [] for d in index.docs}
    for c in index.entries:
        out.setdefault(c.doc_id, []).append(c)
    for (doc_id, _id), c in index.parents.items():
        out.setdefault(doc_id, []).append(c)
    return {d: tuple(sorted(cs, key=lambda c: (c.start, c.end, c.id))) for d, cs in out.items()}


def rerank_figures(index: Index, gold: GoldSet | Sequence[GoldQuestion], reranker: Reranker, k: int,
                   depth: int = RERANK_DEPTH, *, retriever: Retriever = "dense", multi_doc: bool | None = None,
                   chunks_by_doc: Mapping[str, Sequence[Chunk]] | None = None, cache: ScoreCache | None = None,
                   progress: Callable[[int, int], None] | None = None) -> RerankFigures:
    """Score `gold` on `index` (an `Index`) with `retriever`'s top k, and with its top `depth`
    reranked to k by `reranker`; both reports, the ceiling, the comparison and the paired deltas.

    `multi_doc` (default: the index holds several documents) restricts each question to its
    `source`, as the gold panel does. `chunks_by_doc` (default: the index's own) is what the
    reports count as the corpus. `cache`: the rerank score cache (default: the process-wide one).
    `progress(done, total)` after each question's reranking; a worker's cancel scope is checked
    between questions. InputError when `depth` is below k: reranking would hand back fewer than k
    chunks, and the "after" figures would lose by construction."""
    from inspector.core.errors import InputError

    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if depth < k:
        raise InputError(f"the rerank depth ({depth}) is below k ({k}): the reranker reads the retriever's top "
                         f"{depth} and could hand back only {depth} chunks")
    questions = tuple(gold.questions if isinstance(gold, GoldSet) else gold)
    multi = len(index.docs) > 1 if multi_doc is None else multi_doc
    search = IndexSearch(index, retriever=retriever, multi_doc=multi)
    chunks = dict(chunks_by_doc) if chunks_by_doc is not None else _chunks_by_doc(index)
    found = search.many(questions, depth)

    reranked: list[list[Any]] = []
    pairs = computed = 0
    seconds = 0.0
    for i, (q, hits) in enumerate(zip(questions, found, strict=True)):
        check_cancelled()
        res = rerank_hits(hits, q.question, reranker, depth, depth, docs=index.docs,
                          with_prefix=index.with_prefix, cache=cache)
        reranked.append(list(res.hits))
        pairs += res.depth
        computed += res.computed
        seconds += res.seconds
        if progress is not None:
            progress(i + 1, len(questions))

    by_q = {id(q): hits for q, hits in zip(questions, found, strict=True)}
    after_by_q = {id(q): hits for q, hits in zip(questions, reranked, strict=True)}
    before = evaluate(questions, index.docs, chunks, _Served(by_q, depth, search), k, results=found)
    # Misses after reranking are diagnosed within the reranked list (a rank there, or "not in top
    # depth"): the reranker never sees deeper hits, so a deeper search would describe another pipeline.
    after = evaluate(questions, index.docs, chunks, _Served(after_by_q, depth, search), k,
                     deep_k=depth, results=reranked)
    within = evaluate(questions, index.docs, chunks, _Served(by_q, depth, search), depth,
                      deep_k=depth, results=found)
    info_fn = getattr(reranker, "info", None)
    info = dict(info_fn()) if callable(info_fn) else {"model_id": str(reranker.model_id)}
    return RerankFigures(before=before, after=after, within_depth=within,
                         comparison=compare_reports(before, after),
                         paired=paired_deltas(before, after, metrics=RERANK_METRICS),
                         k=k, depth=depth, retriever=retriever, reranker=str(reranker.model_id),
                         reranker_info=info, pairs=pairs, computed=computed, seconds=seconds)


__all__ = ["RERANK_METRICS", "RerankFigures", "rerank_figures"]
