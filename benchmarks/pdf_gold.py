"""Hit rate on a small gold set over a public handbook-like PDF: markdown chunks of the structured
PDF against chunks of the same PDF's plain page text (issue 30).

    python benchmarks/pdf_gold.py [--k 1,3,5] [--no-dense]

The PDF is IBM's Redbook sample "Row and Column Access Control Support in IBM DB2 for i"
(benchmarks/data/pdf/redp5110_sampled.pdf, 18 pages, from docling's test data, MIT: see
benchmarks/data/pdf/PROVENANCE.md). The 22 questions (benchmarks/data/pdf_gold/redp5110_sampled
.gold.jsonl) were written for issue 30 as a reader of the Redbook would ask them, paraphrased
rather than copied; each answer is a short exact string of the PDF's text. A question is a hit at
k when one of the top k chunks holds its answer, compared with runs of white space made one space
(the plain text breaks lines where the page does, so an answer may span a line break there).

Configurations: the built-in backend's Markdown chunked by `markdown` (the app's default), and
pypdf's plain page text chunked by `recursive` and by `markdown` (which, without headings, falls
back to paragraphs and sizes), each at its defaults and embedding the context prefix where the
strategy does by default. Retrieval: BM25, and the bundled MiniLM exact (cosine) unless --no-dense.
Printed: hit@k with 95 % Wilson intervals, MRR, and for each plain configuration against the
structured one the questions only one of them finds (an exact two-sided sign test on those).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from inspector.core.chunking.annotate import annotate  # noqa: E402
from inspector.core.chunking.chunk import embedded  # noqa: E402
from inspector.core.chunking.registry import chunk_document, get_strategy  # noqa: E402
from inspector.core.documents.document import load_document  # noqa: E402
from inspector.core.documents.pdf_convert import set_pdf_backend  # noqa: E402
from inspector.core.retrieval.index import bm25_model, bm25_tokens  # noqa: E402

PDF = ROOT / "benchmarks" / "data" / "pdf" / "redp5110_sampled.pdf"
GOLD = ROOT / "benchmarks" / "data" / "pdf_gold" / "redp5110_sampled.gold.jsonl"
CONFIGS = (("structured + markdown", "builtin", "markdown"), ("plain + recursive", "plain", "recursive"),
           ("plain + markdown", "plain", "markdown"))


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 0.0)
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def sign_test(b: int, c: int) -> float:
    """Two-sided exact binomial p for b against c discordant questions."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(0, min(b, c) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def ranks(backend: str, strategy: str, questions: list[dict], dense: bool) -> tuple[dict[str, list[int]], int, str]:
    """For each retriever, the 1-based rank of the first chunk holding each answer (0: none in 50)."""
    set_pdf_backend(backend)
    try:
        doc = load_document(PDF)
    finally:
        set_pdf_backend("builtin")
    strat = get_strategy(strategy)
    chunks = [c for c in annotate(doc, chunk_document(doc, strategy), with_prefix=strat.prefix_default)
              if c.role != "parent"]
    texts = [embedded(c.prefix, doc.text[c.start:c.end]) for c in chunks]
    bodies = [squash(doc.text[c.start:c.end]) for c in chunks]
    missing = [q["answer"] for q in questions if squash(q["answer"]) not in squash(doc.text)]
    out: dict[str, list[int]] = {}
    depth = min(50, len(chunks))
    model = bm25_model(texts)
    rows = []
    for q in questions:
        res, _scores = model.retrieve([bm25_tokens(q["question"])], k=depth, show_progress=False)
        rows.append([int(i) for i in res[0]])
    out["bm25"] = [_first(order, bodies, q["answer"]) for order, q in zip(rows, questions, strict=True)]
    if dense:
        from inspector.core.embedding.embedder import default_embedder, embed_query, embed_texts

        emb = default_embedder()
        vecs = np.asarray(embed_texts(emb, texts))
        qv = np.asarray([embed_query(emb, q["question"]) for q in questions])
        vecs = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
        qv = qv / np.linalg.norm(qv, axis=1, keepdims=True)
        sims = qv @ vecs.T
        out["dense"] = [_first(list(np.argsort(-sims[i], kind="stable")[:depth]), bodies, q["answer"])
                        for i, q in enumerate(questions)]
    note = f"{len(chunks)} chunks" + (f"; answers not in this text: {missing}" if missing else "")
    return out, len(chunks), note


def _first(order: list[int], bodies: list[str], answer: str) -> int:
    a = squash(answer)
    for rank, i in enumerate(order, start=1):
        if a in bodies[i]:
            return rank
    return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--k", default="1,3,5")
    ap.add_argument("--no-dense", action="store_true")
    args = ap.parse_args()
    ks = [int(k) for k in args.k.split(",")]
    questions = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines() if line.strip()]
    n = len(questions)
    print(f"{PDF.name}: {n} questions")
    results = {}
    for name, backend, strategy in CONFIGS:
        t0 = time.perf_counter()
        r, _count, note = ranks(backend, strategy, questions, not args.no_dense)
        results[name] = r
        print(f"- {name}: {note} ({time.perf_counter() - t0:.1f} s)")
    retrievers = list(next(iter(results.values())))
    print()
    print("| retriever | configuration | " + " | ".join(f"hit@{k} [95% CI]" for k in ks) + " | MRR@50 |")
    print("|---|---|" + "---|" * (len(ks) + 1))
    for ret in retrievers:
        for name in results:
            rk = results[name][ret]
            cells = []
            for k in ks:
                h = sum(1 for r in rk if 0 < r <= k)
                lo, hi = wilson(h, n)
                cells.append(f"{h / n:.2f} ({h}/{n}) [{lo:.2f}, {hi:.2f}]")
            mrr = sum(1 / r for r in rk if r) / n
            print(f"| {ret} | {name} | " + " | ".join(cells) + f" | {mrr:.3f} |")
    print()
    base = CONFIGS[0][0]
    for ret in retrievers:
        for name in list(results)[1:]:
            for k in ks:
                a = [0 < r <= k for r in results[base][ret]]
                b = [0 < r <= k for r in results[name][ret]]
                only_a = sum(x and not y for x, y in zip(a, b, strict=True))
                only_b = sum(y and not x for x, y in zip(a, b, strict=True))
                print(f"{ret} hit@{k}: {base} alone finds {only_a}, {name} alone finds {only_b} "
                      f"(sign test p = {sign_test(only_a, only_b):.2f})")


if __name__ == "__main__":
    main()
