"""Configurations scored on a gold set: one, two side by side (compare), or a grid (sweep).

A configuration is plain data (`EvalConfig`: strategy, params, k, retriever, prefix); running it
chunks every document, builds an index and evaluates. A sweep chunks and indexes each distinct
(strategy, params) once and scores every k from one search, so a grid over k costs one index.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable, Mapping, Sequence

from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.registry import chunk_document
from inspector.core.documents.document import Document
from inspector.core.embedding.embedder import Cancelled
from inspector.core.evaluation.compare import Comparison, compare_reports
from inspector.core.evaluation.config import Cancel, EvalConfig, IndexFactory, Progress
from inspector.core.evaluation.gold import GoldQuestion, GoldSet
from inspector.core.evaluation.metrics import (
    IndexSearch,
    Report,
    evaluate,
)
from inspector.core.evaluation.sweep import SweepResult, SweepRow, grid, rank_key


def chunk_corpus(docs: Sequence[Document], config: EvalConfig) -> dict[str, tuple[Chunk, ...]]:
    return {d.doc_id: chunk_document(d, config.strategy, config.params) for d in docs}


def default_index_factory(embedder: Any = None, cache: Any = None, progress: Any = None,
                          cancel: Cancel | None = None) -> IndexFactory:
    """Builds `retrieval.build_index` indexes; no embedder is loaded for BM25 alone."""

    def build(docs: Sequence[Document], chunks_by_doc: Mapping[str, tuple[Chunk, ...]],
              config: EvalConfig) -> Any:
        from inspector.core.retrieval import index as retrieval

        emb = embedder
        if config.retriever == "bm25":
            emb = None
        elif emb is None:
            from inspector.core.embedding.embedder import default_embedder

            emb = default_embedder()
        vectors = None
        if emb is not None and config.embedding == "pooled":
            from inspector.core.retrieval import pooled

            pv = {d.doc_id: pooled.pooled_for(d, emb, progress=progress, cancel=cancel) for d in docs}
            vectors = pooled.index_vectors(chunks_by_doc, pv, with_prefix=config.with_prefix)
        return retrieval.build_index(docs, chunks_by_doc, emb, with_prefix=config.with_prefix,
                                     cache=cache, progress=progress, cancel=cancel, vectors=vectors)

    return build


def run_config(gold: GoldSet | Sequence[GoldQuestion], docs: Sequence[Document], config: EvalConfig,
               *, embedder: Any = None, cache: Any = None, index_factory: IndexFactory | None = None,
               chunks_by_doc: Mapping[str, tuple[Chunk, ...]] | None = None) -> Report:
    """Chunk, index and evaluate one configuration."""
    factory = index_factory or default_index_factory(embedder, cache)
    chunks = chunks_by_doc if chunks_by_doc is not None else chunk_corpus(docs, config)
    index = factory(docs, chunks, config)
    search = IndexSearch(index, retriever=config.retriever, multi_doc=len(docs) > 1)
    return evaluate(gold, docs, chunks, search, config.k)


def compare(gold: GoldSet | Sequence[GoldQuestion], docs: Sequence[Document], a: EvalConfig,
            b: EvalConfig, *, embedder: Any = None, cache: Any = None,
            index_factory: IndexFactory | None = None, progress: Progress | None = None,
            cancel: Cancel | None = None) -> Comparison:
    """Score A and B on the same gold set and compare them."""
    reports = []
    for i, config in enumerate((a, b)):
        if cancel is not None and cancel():
            raise Cancelled()
        if progress is not None:
            progress(i, 2, config.label())
        reports.append(run_config(gold, docs, config, embedder=embedder, cache=cache,
                                  index_factory=index_factory))
    if progress is not None:
        progress(2, 2, "")
    return compare_reports(reports[0], reports[1], before_config=a, after_config=b)


def sweep(gold: GoldSet | Sequence[GoldQuestion], docs: Sequence[Document],
          configs: Iterable[EvalConfig], *, embedder: Any = None, cache: Any = None,
          index_factory: IndexFactory | None = None, progress: Progress | None = None,
          cancel: Cancel | None = None, skipped: Sequence[tuple[str, str]] = (),
          confirm: int = 0) -> SweepResult:
    """Score every configuration; rows come back best first. Configurations that differ only in
    k share one index and one search (as deep as the largest k). With `confirm=N`, the N best
    pooled rows are scored again with exact embeddings (`SweepRow.exact`): pooled vectors make
    the grid fast, the exact figure is what a production pipeline will see."""
    configs = list(configs)
    factory = index_factory or default_index_factory(embedder, cache, cancel=cancel)
    groups: dict[tuple, list[EvalConfig]] = {}
    for c in configs:
        groups.setdefault(c.chunking_key, []).append(c)
    questions = tuple(gold.questions if isinstance(gold, GoldSet) else gold)
    rows: list[SweepRow] = []
    done = 0
    total = len(configs)
    cancelled = False
    for members in groups.values():
        if cancel is not None and cancel():
            cancelled = True
            break
        first = members[0]
        if progress is not None:
            progress(done, total, first.label())
        chunks = chunk_corpus(docs, first)
        try:
            index = factory(docs, chunks, first)
        except Cancelled:
            cancelled = True
            break
        if cancel is not None and cancel():
            cancelled = True
            break
        search = IndexSearch(index, retriever=first.retriever, multi_doc=len(docs) > 1)
        deepest = max(c.k for c in members)
        results = search.many(questions, deepest)
        for c in sorted(members, key=lambda c: c.k):
            rows.append(SweepRow(c, evaluate(questions, docs, chunks, search, c.k, results=results)))
            done += 1
    if progress is not None and not cancelled:
        progress(total, total, "")
    rows.sort(key=rank_key)
    if confirm and not cancelled:
        confirmed = []
        for i, row in enumerate(rows):
            if i < confirm and row.config.embedding == "pooled" and row.config.retriever != "bm25":
                if cancel is not None and cancel():
                    cancelled = True
                    confirmed.extend(rows[i:])
                    break
                if progress is not None:
                    progress(i, confirm, f"confirming {row.config.label()} with exact embeddings")
                exact_cfg = replace(row.config, embedding="exact")
                try:
                    exact = run_config(questions, docs, exact_cfg, embedder=embedder, cache=cache)
                except Cancelled:
                    cancelled = True
                    confirmed.extend(rows[i:])
                    break
                row = SweepRow(row.config, row.report, exact)
            confirmed.append(row)
        rows = confirmed
    return SweepResult(tuple(rows), tuple(skipped), cancelled)


def sweep_grid(gold: GoldSet | Sequence[GoldQuestion], docs: Sequence[Document], *,
               strategies: Sequence[str], sizes: Sequence[int | None] = (None,),
               overlaps: Sequence[int | None] = (None,), ks: Sequence[int] = (5,),
               retriever: str = "dense", with_prefix: bool | None = None, embedding: str = "exact",
               **kwargs: Any) -> SweepResult:
    """`grid` then `sweep`."""
    configs, skipped = grid(strategies, sizes, overlaps, ks, retriever=retriever,
                            with_prefix=with_prefix, embedding=embedding)
    return sweep(gold, docs, configs, skipped=skipped, **kwargs)
