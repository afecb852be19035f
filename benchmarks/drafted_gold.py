"""Can drafted questions stand in for a human gold set? Rank agreement on Chroma's benchmark.

Drafts (`inspector.core.evaluation.drafts`, rules over the text, no LLM) are generated from each of
the five Chroma corpora, unreviewed. A grid of chunking configurations is scored twice on the same
protocol as `chroma_repro.py` (the five corpora in one index, k=5, character-level recall and IoU
as chunking_evaluation computes them, plus the window's hit rate): once with Chroma's 472
human-checked questions and once with the drafted set. If the drafted set ranks the configurations
as the human set does (Spearman's ρ over the grid, ties averaged) and picks the same best one, it
could choose settings for a user who has no gold set; if not, drafts are only a starting point.

For scale, each set is also split in two halves (even/odd questions) and the halves' rankings are
correlated: a human set's split-half ρ is the agreement one can hope for at that size.

    .venv/bin/python benchmarks/drafted_gold.py [--per-corpus 100] [--dense] [--cache-dir DIR]
        [--context-words 14] [--paragraph-references]

BM25 runs the whole grid (no embeddings); `--dense` adds exact MiniLM embeddings on the smaller
grid marked below (each configuration embeds the corpora once: minutes per configuration on a
laptop CPU, cached in DIR, default the user cache, so a second run takes seconds).
"""

from __future__ import annotations

import argparse
import bisect
import json
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from _common import ROOT
from chroma_repro import K, chunk_corpora, load_corpora, load_questions

from inspector.core.evaluation.drafts import CONTEXT_WORDS, draft_questions
from inspector.core.evaluation.metrics import span_scores
from inspector.core.evaluation.rank_agreement import bootstrap_spearman, spearman, top_indices
from inspector.core.retrieval.index import build_index
from inspector.core.text.structure import paragraph_spans


@dataclass(frozen=True)
class Config:
    label: str
    kind: str
    """"TokenText" / "Recursive" (Chroma's chunkers, as in chroma_repro) or one of our strategies."""
    size: int
    overlap: int
    params: tuple = ()
    dense: bool = False
    """Also scored with exact dense embeddings under --dense (the smaller grid)."""


GRID: tuple[Config, ...] = (
    Config("TokenText 128/0", "TokenText", 128, 0, dense=True),
    Config("TokenText 128/64", "TokenText", 128, 64),
    Config("TokenText 200/0", "TokenText", 200, 0, dense=True),
    Config("TokenText 200/100", "TokenText", 200, 100),
    Config("TokenText 250/0", "TokenText", 250, 0, dense=True),
    Config("TokenText 250/125", "TokenText", 250, 125, dense=True),
    Config("TokenText 400/0", "TokenText", 400, 0),
    Config("TokenText 400/200", "TokenText", 400, 200),
    Config("TokenText 512/0", "TokenText", 512, 0, dense=True),
    Config("TokenText 512/256", "TokenText", 512, 256),
    Config("Recursive 128/0", "Recursive", 128, 0),
    Config("Recursive 200/0", "Recursive", 200, 0, dense=True),
    Config("Recursive 250/0", "Recursive", 250, 0, dense=True),
    Config("Recursive 250/125", "Recursive", 250, 125),
    Config("Recursive 400/0", "Recursive", 400, 0, dense=True),
    Config("Recursive 400/200", "Recursive", 400, 200),
    Config("sentences 128/0", "sentences", 0, 0, (("size", 128), ("overlap", 0))),
    Config("sentences 128/1", "sentences", 0, 0, (("size", 128), ("overlap", 1)), dense=True),
    Config("sentences 256/0", "sentences", 0, 0, (("size", 256), ("overlap", 0))),
    Config("sentences 256/1", "sentences", 0, 0, (("size", 256), ("overlap", 1)), dense=True),
    Config("sentences 512/1", "sentences", 0, 0, (("size", 512), ("overlap", 1)), dense=True),
    Config("recursive 128/0", "recursive", 0, 0, (("size", 128), ("overlap", 0))),
    Config("recursive 256/0", "recursive", 0, 0, (("size", 256), ("overlap", 0))),
    Config("recursive 512/0", "recursive", 0, 0, (("size", 512), ("overlap", 0))),
    Config("fixed_chars 500/0", "fixed_chars", 0, 0, (("size", 500), ("overlap", 0))),
    Config("fixed_chars 1000/100", "fixed_chars", 0, 0, (("size", 1000), ("overlap", 100)), dense=True),
)

METRICS = ("recall", "iou", "hit")


@dataclass(frozen=True)
class Q:
    """A question of either set, reduced to what scoring needs."""

    text: str
    corpus: str
    references: tuple[tuple[int, int], ...]
    answer_span: tuple[int, int] | None = None
    """Drafts: a hit is a returned chunk that contains the answer (the window's rule); Chroma's
    questions have no answer: a hit is a returned chunk that overlaps a reference."""


def drafted_set(docs, per_corpus: int, context_words: int = CONTEXT_WORDS,
                paragraph_references: bool = False) -> tuple[list[Q], Counter, float]:
    """The drafts of every corpus as questions; `paragraph_references` replaces each draft's
    reference (its sentence) with the paragraph around it (a variant measured in the README)."""
    t = time.perf_counter()
    out: list[Q] = []
    kinds: Counter = Counter()
    for d in docs:
        paras = paragraph_spans(d.text) if paragraph_references else []
        starts = [a for a, _b in paras]
        for dr in draft_questions(d, limit=per_corpus, context_words=context_words):
            assert d.text[dr.answer_span[0]:dr.answer_span[1]] == dr.answer
            ref = dr.reference
            if paragraph_references:
                ref = paras[bisect.bisect_right(starts, ref[0]) - 1]
            out.append(Q(dr.question, d.doc_id, (ref,), dr.answer_span))
            kinds[dr.kind] += 1
    return out, kinds, time.perf_counter() - t


def score(hits_per_q: list[list], qs: list[Q]) -> np.ndarray:
    """questions x (recall, iou, hit) for the top-k chunks of each question."""
    rows = np.zeros((len(qs), 3))
    for i, (hits, q) in enumerate(zip(hits_per_q, qs, strict=True)):
        got = [(h.chunk.doc_id, h.chunk.start, h.chunk.end) for h in hits]
        s = span_scores(got, q.references, q.corpus)
        if q.answer_span is not None:
            a, b = q.answer_span
            hit = any(d == q.corpus and s0 <= a and b <= e0 for d, s0, e0 in got)
        else:
            hit = any(d == q.corpus and s0 < rb and ra < e0 for d, s0, e0 in got for ra, rb in q.references)
        rows[i] = (s.recall, s.iou, float(hit))
    return rows


def run_grid(docs, grid, sets: dict[str, list[Q]], retriever: str, emb=None, cache=None, qvecs=None):
    """{set name: configs x questions x metrics}, chunk counts and mean chunk lengths (characters)."""
    per_set = {name: [] for name in sets}
    counts = []
    lengths = []
    for cfg in grid:
        t = time.perf_counter()
        chunks = chunk_corpora(docs, cfg.kind, cfg.size, cfg.overlap, dict(cfg.params))
        counts.append(sum(len(cs) for cs in chunks.values()))
        lengths.append(float(np.mean([c.end - c.start for cs in chunks.values() for c in cs])))
        index = build_index(docs, chunks, emb if retriever == "dense" else None, with_prefix=False, cache=cache)
        for name, qs in sets.items():
            if retriever == "dense":
                hits = [index.search_vector(v, k=K) for v in qvecs[name]]
            else:
                hits = [index.search(q.text, k=K, retriever="bm25") for q in qs]
            per_set[name].append(score(hits, qs))
        print(f"  {retriever:<5} {cfg.label:<22} {counts[-1]:>6} chunks  {time.perf_counter() - t:6.1f} s",
              flush=True)
    return {name: np.stack(v) for name, v in per_set.items()}, counts, lengths


RESAMPLES = 2000


def agreement(a: np.ndarray, b: np.ndarray) -> dict:
    """a, b: configs x questions x metrics. Per metric: ρ over the configs' means with a 95 %
    bootstrap interval (each set's questions resampled independently), and the tops."""
    out = {}
    ma, mb = a.mean(axis=1), b.mean(axis=1)
    for j, m in enumerate(METRICS):
        ci = bootstrap_spearman(a[:, :, j], b[:, :, j], resamples=RESAMPLES, seed=j)
        out[m] = {"rho": ci.rho, "low": ci.low, "high": ci.high, "top_a": top_indices(ma[:, j]),
                  "top_b": top_indices(mb[:, j])}
    return out


def split_half(x: np.ndarray) -> dict:
    """ρ between the rankings of the even- and odd-numbered questions of one set."""
    return {m: spearman(x[:, 0::2, j].mean(axis=1), x[:, 1::2, j].mean(axis=1)) for j, m in enumerate(METRICS)}


def report(title: str, grid, counts, lengths, res: dict) -> dict:
    chroma, drafted = res["chroma"], res["drafted"]
    mc, md = 100 * chroma.mean(axis=1), 100 * drafted.mean(axis=1)
    print(f"\n{title}: {len(grid)} configurations, k={K}")
    print(f"{'configuration':<22}{'chunks':>7} | {'Chroma R / IoU / hit':>22} | {'drafted R / IoU / hit':>22}")
    for i, cfg in enumerate(grid):
        print(f"{cfg.label:<22}{counts[i]:>7} | {mc[i, 0]:6.1f} / {mc[i, 1]:4.1f} / {mc[i, 2]:5.1f} | "
              f"{md[i, 0]:6.1f} / {md[i, 1]:4.1f} / {md[i, 2]:5.1f}")
    agr = agreement(chroma, drafted)
    sh_c, sh_d = split_half(chroma), split_half(drafted)
    # No questions at all: rank by chunk length (longer first for recall and hit, shorter first
    # for IoU). What a question set adds is what it ranks beyond this.
    size_rho = {m: spearman(np.array(lengths) * (-1 if m == "iou" else 1), mc[:, j]) for j, m in enumerate(METRICS)}
    print(f"\n{'metric':<8}{'ρ drafted vs Chroma [95 % CI]':>31}{'best by Chroma':>26}"
          f"{'best by drafted':>26}{'same?':>7}"
          f"{'split-half ρ Chroma':>21}{'drafted':>9}{'ρ chunk length':>16}")
    for m in METRICS:
        a = agr[m]
        same = bool(set(a["top_a"]) & set(a["top_b"]))
        names_a = ", ".join(grid[i].label for i in a["top_a"][:2])
        names_b = ", ".join(grid[i].label for i in a["top_b"][:2])
        rho = f"{a['rho']:+.3f} [{a['low']:+.2f}, {a['high']:+.2f}]"
        print(f"{m:<8}{rho:>31}{names_a:>26}{names_b:>26}{'yes' if same else 'no':>7}"
              f"{sh_c[m]:>+21.3f}{sh_d[m]:>+9.3f}{size_rho[m]:>+16.3f}")
    return {"configs": [c.label for c in grid], "chunks": counts, "mean_chunk_chars": lengths,
            "rho_chunk_length": size_rho,
            "chroma_mean": mc.tolist(), "drafted_mean": md.tolist(),
            "agreement": {m: {"rho": agr[m]["rho"], "ci95": [agr[m]["low"], agr[m]["high"]],
                              "top_chroma": [grid[i].label for i in agr[m]["top_a"]],
                              "top_drafted": [grid[i].label for i in agr[m]["top_b"]]} for m in METRICS},
            "split_half": {"chroma": sh_c, "drafted": sh_d}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-corpus", type=int, default=100, help="drafts kept per corpus (spread over it)")
    ap.add_argument("--context-words", type=int, default=CONTEXT_WORDS,
                    help="words kept either side of a cloze's blank")
    ap.add_argument("--paragraph-references", action="store_true",
                    help="score drafts against their whole paragraph instead of their sentence")
    ap.add_argument("--dense", action="store_true", help="also exact MiniLM on the smaller grid")
    ap.add_argument("--cache-dir", default=None, help="embedding cache folder (default: the user cache)")
    ap.add_argument("--json", default=str(ROOT / "benchmarks" / "out" / "drafted_gold.json"),
                    help="where to write the figures as JSON")
    args = ap.parse_args()
    docs = load_corpora()
    chroma = [Q(q, c, tuple(refs)) for q, c, refs in load_questions()]
    drafted, kinds, secs = drafted_set(docs, args.per_corpus, args.context_words, args.paragraph_references)
    print(f"{len(docs)} corpora, {sum(len(d.text) for d in docs):,} characters; Chroma: {len(chroma)} questions; "
          f"drafted: {len(drafted)} in {secs:.1f} s ({', '.join(f'{k} {n}' for k, n in kinds.most_common())})")
    sets = {"chroma": chroma, "drafted": drafted}
    out: dict = {"drafted": len(drafted), "kinds": dict(kinds), "per_corpus": args.per_corpus,
                 "context_words": args.context_words, "paragraph_references": args.paragraph_references}
    res, counts, lengths = run_grid(docs, GRID, sets, "bm25")
    out["bm25"] = report("BM25", GRID, counts, lengths, res)
    if args.dense:
        from inspector.core.embedding.cache import EmbeddingCache, default_cache
        from inspector.core.embedding.embedder import MiniLMEmbedder, embed_texts

        cache = EmbeddingCache(args.cache_dir) if args.cache_dir else default_cache()
        emb = MiniLMEmbedder(batch_size=32)
        qvecs = {name: embed_texts(emb, [q.text for q in qs], cache) for name, qs in sets.items()}
        grid = tuple(c for c in GRID if c.dense)
        res, counts, lengths = run_grid(docs, grid, sets, "dense", emb=emb, cache=cache, qvecs=qvecs)
        out["dense"] = report("Dense (exact all-MiniLM-L6-v2, raw chunk text)", grid, counts, lengths, res)
    path = Path(args.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1), encoding="utf-8")
    print(f"\nfigures written to {path}")


if __name__ == "__main__":
    main()
