"""The reranker in the window's background jobs (Settings ▸ Reranker…).

`reranked_stages` follows the staging's stages of one request: every stage passes through as it
is, so the retriever's order is on screen at once; the last stage with a question is then handed
on once more with its hits reranked (the retriever's top `depth` searched again on the same index,
ordered by the reranker, cut to k; each hit's `rank_before` the retriever's rank, which the Reader
shows as "#1 · was 7"). Reranking is slow on a CPU (seconds for 50 pairs), so it comes last and a
newer request cancels it between batches like any job.

`rerank_figures_job`: the gold panel's "Score with reranker", hit@k and MRR before and after
reranking on the index the figures were computed on (`api.rerank_figures`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from inspector.core.api import RetrievalRequest, RetrievalResult, rerank_figures, rerank_hits
from inspector.qt.runner import Job, Progress


def reranked_stages(stages: Iterator[RetrievalResult], req: RetrievalRequest, reranker: Any, depth: int,
                    progress: Progress) -> Iterator[RetrievalResult]:
    """The stages as they come, then the last one again with its hits reranked (see the module)."""
    if reranker is None or not req.question.strip():
        yield from stages
        return
    last: RetrievalResult | None = None
    for stage in stages:
        if last is not None:
            yield last
        last = stage
    if last is None:
        return
    # The retriever's order first (more to come: the reranked hits follow).
    yield replace(last, more_coming=True)
    index = last.index
    pool = index.search(req.question, max(depth, req.k), last.retriever, docs=req.filter_docs,
                        heading_prefix=req.heading_prefix)
    n = min(depth, len(pool))
    progress(0, n, f"Reranking the top {n}")
    res = rerank_hits(pool, req.question, reranker, req.k, depth, docs=index.docs,
                      with_prefix=bool(getattr(index, "with_prefix", req.with_prefix)))
    progress(0, 0, "")
    yield replace(last, hits=res.hits)


def rerank_figures_job(result: RetrievalResult, reranker: Any, depth: int) -> Job:
    """hit@k and MRR of the result's gold set before and after reranking (a `RerankFigures`)."""
    index = result.index
    req = result.request
    gold = tuple(q for q in req.gold if q.source is None or q.source in index.docs)
    k = req.k

    def job(cancelled: Callable[[], bool], progress: Progress) -> Iterator[Any]:
        def step(done: int, total: int) -> None:
            progress(done, total, "Reranking the gold set")

        yield rerank_figures(index, gold, reranker, k, max(depth, k), retriever=result.retriever,
                             progress=step)

    return job


__all__ = ["reranked_stages", "rerank_figures_job"]
