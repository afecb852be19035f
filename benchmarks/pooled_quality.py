"""Pooled against exact embeddings (issue: live dense hit rate).

1. Approximation quality on the sample handbook and its gold set: hit rate@5 and MRR, pooled and
   exact, for window and structure-aware strategies at several sizes. (The Chroma benchmark's
   recall, pooled and exact, is printed by chroma_repro.py.)
2. Speed: a new hit rate after a slider change on a ~1 MB document with 100 questions, pooled:
   re-chunk + pooled vectors + index + evaluation, question vectors cached. Target p95 <= 200 ms.
3. The one-time cost of the pieces against exact embedding of one configuration.

    .venv/bin/python benchmarks/pooled_quality.py
"""

from __future__ import annotations

import time

from _common import HANDBOOK, ROOT, big_markdown, p50, p95

from inspector.core.documents.document import from_text, load_document
from inspector.core.embedding.cache import default_cache
from inspector.core.embedding.embedder import MiniLMEmbedder, embed_texts
from inspector.core.evaluation.config import EvalConfig
from inspector.core.evaluation.gold import GoldQuestion, load_gold
from inspector.core.evaluation.metrics import IndexSearch, evaluate
from inspector.core.retrieval.index import build_index
from inspector.core.retrieval.pooled import (
    MiniLMPieceEncoder,
    PooledVectors,
    build_piece_table,
    index_vectors,
)
from inspector.core.workbench import Workbench


def quality(emb, cache) -> None:
    doc = load_document(HANDBOOK)
    gold = load_gold(ROOT / "sample_docs" / "handbook.gold.jsonl", [doc])
    print(f"1. sample handbook, {len(gold.questions)} questions, k=5 (hit rate / MRR)")
    print(f"{'configuration':<46}{'exact':>14}{'pooled':>14}{'diff (pts)':>12}")
    configs = []
    for size in (128, 256, 512):
        configs.append(EvalConfig("fixed_tokens", {"size": size, "overlap": size // 8}))
        configs.append(EvalConfig("sentences", {"size": size, "overlap": 1}))
        configs.append(EvalConfig("markdown", {"size": size, "hard_cap": 2 * size}))
    configs.append(EvalConfig("parent_child", {}))
    for cfg in configs:
        ex = Workbench([doc], gold, embedder=emb, cache=cache).evaluate(cfg)
        po = Workbench([doc], gold, embedder=emb, cache=cache).evaluate(
            EvalConfig(cfg.strategy, cfg.params, 5, "dense", cfg.with_prefix, "pooled"))
        label = cfg.label().replace(" k=5 dense", "")
        print(f"{label:<46}{ex.hit_rate:>7.3f}/{ex.mrr:.3f}{po.hit_rate:>7.3f}/{po.mrr:.3f}"
              f"{100 * (po.hit_rate - ex.hit_rate):>+12.1f}", flush=True)


def speed(emb, cache) -> None:
    text = big_markdown()
    doc = from_text(text, "big.md")
    base = load_gold(ROOT / "sample_docs" / "handbook.gold.jsonl", [load_document(HANDBOOK)])
    questions = [GoldQuestion(question=q.question, answers=q.answers, source=None)
                 for q in (list(base.questions) * 2)[:100]]
    enc = MiniLMPieceEncoder(emb)
    t = time.perf_counter()
    table = build_piece_table(doc, enc, cache_dir=None)
    pieces_s = time.perf_counter() - t
    pv = PooledVectors(table, enc, doc=doc)
    qv = embed_texts(emb, [q.question for q in questions], cache)
    print(f"\n2. slider change -> new pooled hit rate, {len(text.encode()) / 1e6:.2f} MB, "
          f"{len(questions)} questions")
    for strategy, sizes in (("fixed_tokens", range(200, 328, 8)), ("markdown", range(200, 328, 8))):
        times = []
        for size in sizes:
            params = ({"size": size, "overlap": 16} if strategy == "fixed_tokens"
                      else {"size": size, "hard_cap": 2 * size})
            cfg = EvalConfig(strategy, params, 5, "dense", None, "pooled")
            t = time.perf_counter()
            chunks = Workbench([doc]).chunks_for(cfg)
            vecs = index_vectors(chunks, {doc.doc_id: pv}, with_prefix=cfg.with_prefix)
            index = build_index([doc], chunks, emb, with_prefix=cfg.with_prefix, vectors=vecs, cache=cache)
            search = IndexSearch(index)
            for q, v in zip(questions, qv, strict=True):
                index._queries[q.question] = v  # question vectors are cached by the window
            report = evaluate(questions, [doc], chunks, search, 5)
            times.append((time.perf_counter() - t) * 1000)
        print(f"  {strategy:<13} p50 {p50(times):6.0f} ms  p95 {p95(times):6.0f} ms  "
              f"({len(chunks[doc.doc_id])} chunks, hit rate {report.hit_rate:.3f})  target p95 <= 200 ms")

    print(f"\n3. one-time cost on this document: pieces {len(table)} embedded in {pieces_s:.0f} s")
    chunks = Workbench([doc]).chunks_for(EvalConfig("fixed_tokens", {"size": 250, "overlap": 125}))
    texts = [c.embedded_text(doc, with_prefix=False) for c in chunks[doc.doc_id]][:400]
    t = time.perf_counter()
    embed_texts(emb, texts, None)
    per = (time.perf_counter() - t) / len(texts)
    print(f"   exact embedding of fixed_tokens 250/125: {per * 1000:.0f} ms per chunk, "
          f"{per * len(chunks[doc.doc_id]):.0f} s for its {len(chunks[doc.doc_id])} chunks (extrapolated from 400)")


def main() -> None:
    emb = MiniLMEmbedder()
    cache = default_cache()
    quality(emb, cache)
    speed(emb, cache)


if __name__ == "__main__":
    main()
