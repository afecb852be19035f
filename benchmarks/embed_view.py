"""What the clean embedding view changes: hit rates and word pieces, raw vs clean (issue 29).

For each set: the default strategy (`markdown` 256 with its prefix), k = 5, retrievers BM25, dense
(all-MiniLM-L6-v2, exact vectors) and hybrid, with the embedding view `raw` (the span text as
written) and `clean` (link targets, reference definitions and table padding dropped, a lost table
header repeated: `inspector.core.chunking.embed_view`). The spans, so the hit test and the text
handed to the LLM, are the same under both views: only what the model and BM25 read differs.

Printed per set: hit@3, hit@5, MRR with 95 % bootstrap intervals, the paired clean - raw
difference of hit@5 and MRR with its interval and verdict (`paired_delta`); word pieces of every
embedded text (prefix + view, the model's tokenizer, without [CLS]/[SEP]) raw vs clean, the share
saved, the same for chunks holding a table row, and chunks over the model's 256 pieces.

Sets: the sample handbook (64 questions), Chroma's five corpora (472), the public set's original
questions (190, both splits) and its paraphrased questions (118, both splits); `chroma-each`: each
of Chroma's corpora alone with its own questions (not in the default run).

    .venv/bin/python benchmarks/embed_view.py                  # all sets (~15 min cold, shared CPUs)
    .venv/bin/python benchmarks/embed_view.py --sets handbook,public
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np
from _datasets import PUBLIC, Dataset, bench_cache, load
from defaults import LEVEL, SEED, cell

from inspector.core.evaluation.config import EvalConfig
from inspector.core.evaluation.gold import GoldQuestion, load_gold
from inspector.core.evaluation.uncertainty import paired_delta
from inspector.core.workbench import Workbench

RETRIEVERS = ("bm25", "dense", "hybrid")
VIEWS = ("raw", "clean")
K = 5
SETS = ("handbook", "chroma", "public", "paraphrase", "chroma-each")
CHROMA_CORPORA = ("chatlogs", "finance", "pubmed", "state_of_the_union", "wikitexts")


def chroma_corpus(corpus: str, *, embedder: Any, cache: Any) -> Dataset:
    """One of Chroma's five corpora alone, with its own questions (the pooled set mixes them)."""
    ds = load("chroma", embedder=embedder, cache=cache)
    keep = f"{corpus}.md"
    ds.workbench.set_documents([d for d in ds.workbench.documents if d.doc_id == keep])
    qs = tuple(q for q in ds.questions if q.source == keep)
    ds.workbench.set_gold(qs)
    return Dataset(f"chroma {corpus}", ds.workbench, qs, True)


def config(retriever: str, view: str) -> EvalConfig:
    return EvalConfig("markdown", {"size": 256}, K, retriever, embed_view=view)


def public_all(kind: str, *, embedder: Any, cache: Any) -> Dataset:
    """The public documents with all their questions of one kind ("" original, "paraphrase")."""
    wb = Workbench(embedder=embedder, cache=cache, lazy_model=False, indexes=2)
    wb.open(sorted(p / f"{p.name}.md" for p in PUBLIC.iterdir() if p.is_dir()))
    qs: list[GoldQuestion] = []
    for folder in sorted(p for p in PUBLIC.iterdir() if p.is_dir()):
        infix = f".{kind}" if kind else ""
        qs.extend(load_gold(folder / f"{folder.name}{infix}.gold.jsonl", wb.documents).questions)
    wb.set_gold(tuple(qs))
    return Dataset(kind or "public", wb, tuple(qs), False)


def pieces(ds: Dataset, view: str) -> tuple[int, int, int, int]:
    """(word pieces of all embedded texts, of those holding a table row, chunks, chunks over 256
    pieces with [CLS]/[SEP]) under `view`."""
    from inspector.core.text.wordpieces import count_text

    wb = ds.workbench
    cfg = config("bm25", view)
    by_id = {d.doc_id: d for d in wb.documents}
    total = table = n = over = 0
    for doc_id, chunks in wb.chunks_for(cfg).items():
        doc = by_id[doc_id]
        for c in chunks:
            if c.role == "parent":
                continue
            p = count_text(c.embedded_text(doc, with_prefix=cfg.with_prefix))
            total += p
            n += 1
            over += p + 2 > 256
            if any(line.lstrip().startswith("|") for line in c.text(doc).splitlines()):
                table += p
    return total, table, n, over


def report(ds: Dataset) -> dict[str, Any]:
    print(f"\n{ds.name}: {len(ds.questions)} questions, markdown 256, k = {K}, "
          f"95 % bootstrap intervals over questions\n")
    raw_p, raw_t, n, raw_over = pieces(ds, "raw")
    cl_p, cl_t, _, cl_over = pieces(ds, "clean")
    saved = 1 - cl_p / raw_p if raw_p else 0.0
    saved_t = 1 - cl_t / raw_t if raw_t else 0.0
    print(f"word pieces of the {n} embedded texts: raw {raw_p:,}, clean {cl_p:,} ({100 * saved:.1f} % saved); "
          f"chunks with a table row: raw {raw_t:,}, clean {cl_t:,} ({100 * saved_t:.1f} % saved); "
          f"over 256 pieces: raw {raw_over}, clean {cl_over}\n")
    print("| retriever | view | hit@3 | hit@5 | MRR | clean - raw hit@5 | clean - raw MRR |")
    print("|---|---|---|---|---|---|---|")
    out: dict[str, Any] = {"set": ds.name, "questions": len(ds.questions), "chunks": n, "pieces_raw": raw_p,
                           "pieces_clean": cl_p, "table_pieces_raw": raw_t, "table_pieces_clean": cl_t,
                           "over_raw": raw_over, "over_clean": cl_over, "runs": {}}
    for retriever in RETRIEVERS:
        reports = {v: ds.workbench.evaluate(config(retriever, v)) for v in VIEWS}
        for v in VIEWS:
            r = reports[v]
            deltas = ["", ""]
            if v == "clean":
                for i, metric in enumerate(("hit_rate", "mrr")):
                    pd = paired_delta(reports["raw"], r, metric, level=LEVEL, seed=SEED)
                    deltas[i] = (f"{100 * pd.delta:+.1f} [{100 * pd.ci[0]:+.1f}, {100 * pd.ci[1]:+.1f}] "
                                 f"{pd.verdict}")
                    out["runs"][f"{retriever}:{metric}"] = [pd.delta, pd.ci[0], pd.ci[1], pd.verdict]
            print(f"| {retriever} | {v} | {cell(r, 'hit@3')} | {cell(r, 'hit@5')} | {cell(r, 'MRR')} | "
                  f"{deltas[0]} | {deltas[1]} |")
            out["runs"][f"{retriever}:{v}:hit@5"] = float(np.mean([q.hit for q in r.questions]))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default=",".join(SETS[:-1]), help=f"comma-separated, of {', '.join(SETS)}")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    from inspector.core.embedding.embedder import MiniLMEmbedder

    embedder, cache = MiniLMEmbedder(), bench_cache()
    results = []
    for name in [s.strip() for s in args.sets.split(",") if s.strip()]:
        if name not in SETS:
            raise SystemExit(f"--sets: unknown set {name!r}; known: {', '.join(SETS)}")
        if name == "chroma-each":
            results.extend(report(chroma_corpus(c, embedder=embedder, cache=cache)) for c in CHROMA_CORPORA)
            continue
        if name in ("handbook", "chroma"):
            ds = load(name, embedder=embedder, cache=cache)
        else:
            ds = public_all("" if name == "public" else "paraphrase", embedder=embedder, cache=cache)
        results.append(report(ds))
    if args.json:
        from inspector.core.runtime.atomic import atomic_write_text

        atomic_write_text(args.json, json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
