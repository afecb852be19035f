"""Reproduce the Chroma chunking-evaluation MiniLM table with our engine, exact and pooled.

Protocol of the report (Smith & Troynikov, 2024): the five corpora in one index, all-MiniLM-L6-v2,
the raw chunk text embedded (no context prefix), k=5, recall / precision / IoU at character level
as chunking_evaluation computes them (`inspector.core.evaluation.metrics.span_scores`). TokenText is our
`fixed_tokens`; Recursive is our recursive splitter run with the report's separators
["\\n\\n", "\\n", ".", "?", "!", " ", ""] and a cl100k length. Chunks are exact spans, where the
report located chunk texts in the corpus by fuzzy search.

Then: our own strategies on the same protocol, to see which beats the best published MiniLM row.

    .venv/bin/python benchmarks/chroma_repro.py [--quick] [--pooled-only]

Embeddings are cached (user cache folder), so a second run takes seconds.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import time
from pathlib import Path

import numpy as np
from _common import ROOT  # noqa: F401  (puts the project on sys.path)

from inspector.core.chunking.common import SpanContext
from inspector.core.chunking.recursive import recursive_spans
from inspector.core.chunking.registry import chunk_document
from inspector.core.documents.document import Document
from inspector.core.embedding.cache import default_cache
from inspector.core.embedding.embedder import MiniLMEmbedder, embed_texts
from inspector.core.evaluation.metrics import span_scores
from inspector.core.retrieval.index import build_index
from inspector.core.retrieval.pooled import (
    DEFAULT_SCHEME,
    MiniLMPieceEncoder,
    PooledVectors,
    build_piece_table,
    index_vectors,
)
from inspector.core.runtime.cachedir import default_cache_dir

DATA = Path(__file__).resolve().parent / "data" / "chroma"
CHROMA_SEPARATORS = [re.escape(s) for s in ["\n\n", "\n", ".", "?", "!", " ", ""]]
K = 5


def load_corpora() -> list[Document]:
    docs = []
    for p in sorted((DATA / "corpora").glob("*.md")):
        docs.append(Document(text=p.read_text(encoding="utf-8"), name=p.name, kind="text",
                             path=str(p), doc_id=p.stem))
    return docs


def load_questions() -> list[tuple[str, str, list[tuple[int, int]]]]:
    with open(DATA / "questions_df.csv", encoding="utf-8", newline="") as fh:
        return [(r["question"], r["corpus_id"],
                 [(int(x["start_index"]), int(x["end_index"])) for x in json.loads(r["references"])])
                for r in csv.DictReader(fh)]


def published() -> dict[tuple[str, int, int], tuple[float, float, float]]:
    out = {}
    with open(DATA / "published_results.csv", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            if r["embedding_model"] == "all-MiniLM-L6-v2" and r["chunker"] in ("TokenText", "Recursive"):
                out[(r["chunker"], int(r["chunk_size_tokens"]), int(r["overlap_tokens"]))] = (
                    float(r["recall_mean"]), float(r["precision_mean"]), float(r["iou_mean"]))
    return out


def chunk_corpora(docs, kind: str, size: int, overlap: int, strategy_params: dict | None = None):
    out = {}
    for d in docs:
        if kind == "TokenText":
            out[d.doc_id] = chunk_document(d, "fixed_tokens", {"size": size, "overlap": overlap})
        elif kind == "Recursive":
            ctx = SpanContext(d)
            out[d.doc_id] = tuple(ctx.make(recursive_spans(d.text, 0, len(d.text), ctx.count, size, overlap,
                                                           CHROMA_SEPARATORS)))
        else:
            out[d.doc_id] = chunk_document(d, kind, strategy_params or {})
    return out


def score(index, qvecs, questions) -> tuple[float, float, float]:
    rec, prec, iou = [], [], []
    for qv, (_q, corpus, refs) in zip(qvecs, questions, strict=True):
        hits = index.search_vector(qv, k=K)
        got = [(h.chunk.doc_id, h.chunk.start, h.chunk.end) for h in hits]
        s = span_scores(got, refs, corpus)
        rec.append(s.recall)
        prec.append(s.precision)
        iou.append(s.iou)
    return 100 * float(np.mean(rec)), 100 * float(np.mean(prec)), 100 * float(np.mean(iou))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="only the 250-token rows")
    ap.add_argument("--pooled-only", action="store_true", help="skip exact embeddings")
    args = ap.parse_args()
    docs = load_corpora()
    questions = load_questions()
    emb = MiniLMEmbedder(batch_size=32)
    cache = default_cache()
    t0 = time.perf_counter()
    qvecs = embed_texts(emb, [q for q, _c, _r in questions], cache)
    print(f"{len(docs)} corpora, {sum(len(d.text) for d in docs):,} characters, {len(questions)} questions "
          f"(embedded in {time.perf_counter() - t0:.1f} s); cache {default_cache_dir()}")

    t0 = time.perf_counter()
    enc = MiniLMPieceEncoder(emb)
    pooled = {d.doc_id: PooledVectors(build_piece_table(d, enc, cache_dir=default_cache_dir()), enc, doc=d)
              for d in docs}
    pieces = sum(len(p.table) for p in pooled.values())
    print(f"pooled pieces: {pieces} ({DEFAULT_SCHEME.key}), ready in {time.perf_counter() - t0:.1f} s "
          "(cached after the first run)\n")

    pub = published()
    rows = [("TokenText", 250, 125), ("Recursive", 250, 125), ("TokenText", 250, 0),
            ("Recursive", 250, 0), ("TokenText", 200, 0), ("Recursive", 200, 0)]
    if args.quick:
        rows = rows[:2]
    ours = [("markdown", {"size": s, "hard_cap": 2 * s}) for s in (128, 200, 256)]
    ours += [("sentences", {"size": s, "overlap": 1}) for s in (128, 200, 256)]
    ours += [("recursive", {"size": s, "overlap": 0}) for s in (128, 200)]
    ours += [("fixed_tokens", {"size": 400, "overlap": 200})]

    print(f"{'configuration':<34}{'chunks':>7} | {'exact R / P / IoU':>22} | {'pooled R / P / IoU':>22} | "
          f"{'published R / P / IoU':>22} | exact-pub R  embed s")
    best_pub = max(pub.values()) if pub else None

    def run(label, chunks, pubrow):
        n = sum(len(cs) for cs in chunks.values())
        t = time.perf_counter()
        if args.pooled_only:
            exact = None
        else:
            idx = build_index(docs, chunks, emb, with_prefix=False, cache=cache)
            exact = score(idx, qvecs, questions)
        secs = time.perf_counter() - t
        pidx = build_index(docs, chunks, emb, with_prefix=False,
                           vectors=index_vectors(chunks, pooled, with_prefix=False))
        pooled_s = score(pidx, qvecs, questions)
        fmt = lambda x: "" if x is None else f"{x[0]:5.1f} / {x[1]:4.1f} / {x[2]:4.1f}"  # noqa: E731
        diff = f"{exact[0] - pubrow[0]:+5.1f}" if exact and pubrow else ""
        print(f"{label:<34}{n:>7} | {fmt(exact):>22} | {fmt(pooled_s):>22} | {fmt(pubrow):>22} | "
              f"{diff:>11}  {secs:6.0f}", flush=True)
        return exact, pooled_s

    for kind, size, overlap in rows:
        run(f"{kind} {size}/{overlap}", chunk_corpora(docs, kind, size, overlap), pub.get((kind, size, overlap)))
    print()
    for name, params in ours:
        label = f"ours {name} " + ",".join(f"{k}={v}" for k, v in params.items())
        run(label, chunk_corpora(docs, name, 0, 0, params), None)
    if best_pub:
        print(f"\nbest published MiniLM row: recall {best_pub[0]:.1f}, IoU {max(v[2] for v in pub.values()):.1f}")


if __name__ == "__main__":
    main()
