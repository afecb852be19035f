"""Does the pooled preview rank configurations like exact embedding? (issue "Trustworthy tuning",
part 3).

For a grid of configurations (fixed_tokens, recursive, sentences, markdown, paragraph, fixed_chars
at sizes 64..512 tokens, with and without overlap) this scores hit@3, hit@5 and MRR@5 (and, on the
Chroma corpora, Chroma's recall@5) twice: with exact chunk vectors (each embedded text through the
model, truncated at 256 word pieces) and with pooled vectors, for every pooled variant below. It
prints, per variant: Spearman's rank correlation pooled vs exact over the grid, the exact rank of
the pooled best configuration, and max |pooled - exact| in points per size.

Targets (issue): rank correlation >= 0.9 on both corpora, the pooled best in exact's top 3,
|pooled - exact| <= 2 points at every size.

Exact vectors go through a persistent EmbeddingCache and piece tables are persisted, both in
--cache-dir (default: .cache-bench in the repository), so each distinct chunk text is embedded
once across configurations and runs.

    .venv/bin/python benchmarks/pooled_vs_exact.py [--corpus handbook|chroma|both]
        [--chroma-corpora chatlogs,state_of_the_union] [--variants a,b] [--json out.json]
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from _common import HANDBOOK, ROOT

from inspector.core.chunking.registry import chunk_document, get_strategy
from inspector.core.documents.document import Document, load_document
from inspector.core.embedding.cache import EmbeddingCache
from inspector.core.embedding.embedder import MiniLMEmbedder, embed_texts
from inspector.core.evaluation.gold import GoldQuestion, load_gold
from inspector.core.evaluation.metrics import IndexSearch, evaluate
from inspector.core.retrieval.index import build_index
from inspector.core.retrieval.pooled import (
    MiniLMPieceEncoder,
    PieceScheme,
    PooledVectors,
    build_piece_table,
    chunk_vectors,
)

CHROMA = Path(__file__).resolve().parent / "data" / "chroma"
SIZES = (64, 128, 256, 384, 512)
CHARS_PER_TOKEN = 4.7
"""fixed_chars sizes are these many characters per nominal token (the handbook's average)."""
K = 5


# -- the grid -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Config:
    strategy: str
    params: dict[str, Any]
    size: int | None
    """Nominal size in tokens (the per-size rows); None for paragraph."""

    @property
    def label(self) -> str:
        return f"{self.strategy} " + ",".join(f"{k}={v}" for k, v in self.params.items())


def grid() -> list[Config]:
    out: list[Config] = []
    for s in SIZES:
        for ov in (0, s // 4):
            out.append(Config("fixed_tokens", {"size": s, "overlap": ov}, s))
            out.append(Config("recursive", {"size": s, "overlap": ov}, s))
        for ov in (0, 1):
            out.append(Config("sentences", {"size": s, "overlap": ov}, s))
        out.append(Config("markdown", {"size": s, "hard_cap": 2 * s}, s))
        chars = int(round(s * CHARS_PER_TOKEN, -1))
        for ov in (0, chars // 4):
            out.append(Config("fixed_chars", {"size": chars, "overlap": ov}, s))
    out.append(Config("paragraph", {}, None))
    return out


# -- pooled variants ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Variant:
    name: str
    schemes: tuple[PieceScheme, ...]
    """One table, or late-chunking tables of several windows (blended by chunk length)."""
    options: dict[str, Any] = field(default_factory=dict)
    """PooledVectors keyword arguments (truncate, specials)."""


def _late(window: int, tiled: bool = False) -> PieceScheme:
    """12-token pieces of token vectors from windows `window` word pieces long, half a window
    apart (each token from the window where it is most central), or `tiled` edge to edge (each
    token computed once, near a window's edge as often as a chunk's tokens are near its edge)."""
    return PieceScheme("grid", 12, window, window - 2 if tiled else window // 2)


MEAN = {"specials": "mean"}
EACH = {"specials": "each"}

VARIANTS = [
    Variant("v1 grid25 (shipped)", (PieceScheme("grid", 25),), {"truncate": False, **EACH}),
    Variant("grid25 +trunc", (PieceScheme("grid", 25),), EACH),
    Variant("grid25 +trunc +1cls", (PieceScheme("grid", 25),), MEAN),
    Variant("grid12 +trunc +1cls", (PieceScheme("grid", 12),), MEAN),
    Variant("grid50 +trunc +1cls", (PieceScheme("grid", 50),), MEAN),
    Variant("sent25 +trunc +1cls", (PieceScheme("sentences", 25),), MEAN),
    Variant("sent50 +trunc +1cls", (PieceScheme("sentences", 50),), MEAN),
    Variant("sent50 +trunc", (PieceScheme("sentences", 50),), EACH),
    Variant("sent100 +trunc +1cls", (PieceScheme("sentences", 100),), MEAN),
    Variant("late w64", (_late(64),), MEAN),
    Variant("late w128", (_late(128),), MEAN),
    Variant("late w256", (_late(256),), MEAN),
    Variant("late w64+128+256", (_late(64), _late(128), _late(256)), MEAN),
    Variant("late tiled 64+128+256", (_late(64, True), _late(128, True), _late(256, True)), MEAN),
]
"""Every variant but the first mirrors truncation; "+1cls" adds one [CLS]+[SEP] pair per chunk,
the others each covered piece's; late variants use 12-token pieces of windowed token vectors.
"sent50 +trunc" is what `pooled_for` builds (`DEFAULT_SCHEME`, PooledVectors' defaults)."""


# -- statistics ---------------------------------------------------------------------------------

def rankdata(x: np.ndarray) -> np.ndarray:
    """Ranks from 1, ties given the average of the ranks they span."""
    x = np.asarray(x, dtype=np.float64)
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x), dtype=np.float64)
    sx = x[order]
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and sx[j + 1] == sx[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson correlation of the (tie-averaged) ranks; nan when either side is constant."""
    ra, rb = rankdata(a), rankdata(b)
    ra -= ra.mean()
    rb -= rb.mean()
    den = float(np.sqrt((ra * ra).sum() * (rb * rb).sum()))
    return float((ra * rb).sum() / den) if den else float("nan")


def exact_rank_of_pooled_best(exact: np.ndarray, pooled: np.ndarray) -> int:
    """Competition rank by exact (1 + configurations strictly better) of the pooled best; where
    several tie for the pooled best, the worst of their exact ranks (the preview cannot tell
    them apart, so the user may pick any)."""
    best = np.flatnonzero(pooled == pooled.max())
    return max(1 + int((exact > exact[i]).sum()) for i in best)


# -- corpora ------------------------------------------------------------------------------------

@dataclass
class Corpus:
    name: str
    docs: list[Document]
    questions: list[GoldQuestion]
    prefix: bool | None
    """None: each strategy's default (as the app does); False: raw chunk text (Chroma's protocol)."""
    multi_doc: bool
    metrics: tuple[str, ...]


def handbook() -> Corpus:
    doc = load_document(HANDBOOK)
    gold = load_gold(ROOT / "sample_docs" / "handbook.gold.jsonl", [doc])
    return Corpus("handbook", [doc], list(gold.questions), None, False, ("hit@3", "hit@5", "mrr"))


def chroma(names: list[str]) -> Corpus:
    """The named Chroma corpora in one index, their questions only, searched without a source
    filter (the report's protocol: all corpora in one index, raw chunk text)."""
    docs = []
    for n in names:
        p = CHROMA / "corpora" / f"{n}.md"
        docs.append(Document(text=p.read_text(encoding="utf-8"), name=p.name, kind="text",
                             path=str(p), doc_id=p.stem))
    qs = []
    with open(CHROMA / "questions_df.csv", encoding="utf-8", newline="") as fh:
        for r in csv.DictReader(fh):
            if r["corpus_id"] in names:
                refs = tuple((int(x["start_index"]), int(x["end_index"])) for x in json.loads(r["references"]))
                qs.append(GoldQuestion(question=r["question"], source=r["corpus_id"], references=refs))
    return Corpus("chroma:" + "+".join(names), docs, qs, False, False,
                  ("hit@3", "hit@5", "mrr", "recall"))


def per_question(corpus: Corpus, chunks: dict, index: Any) -> dict[str, list[float]]:
    """Each metric per question (points): the grid's figures are their means."""
    search = IndexSearch(index, multi_doc=corpus.multi_doc)
    rep = evaluate(corpus.questions, corpus.docs, chunks, search, K, deep_k=K)
    out = {"hit@3": [100.0 * (q.rank is not None and q.rank <= 3) for q in rep.questions],
           "hit@5": [100.0 * q.hit for q in rep.questions],
           "mrr": [100.0 * q.reciprocal_rank for q in rep.questions]}
    if rep.recall is not None:
        out["recall"] = [100.0 * (q.recall or 0.0) for q in rep.questions]
    return out


def means(pq: dict[str, list[float]]) -> dict[str, float]:
    return {m: float(np.mean(v)) for m, v in pq.items()}


# -- the run ------------------------------------------------------------------------------------

def run(corpus: Corpus, variants: list[Variant], emb: MiniLMEmbedder, cache: EmbeddingCache,
        cache_dir: Path) -> dict[str, Any]:
    configs = grid()
    enc = MiniLMPieceEncoder(emb)
    embed_texts(emb, [q.question for q in corpus.questions], cache)
    print(f"\n== {corpus.name}: {len(corpus.docs)} document(s), "
          f"{sum(len(d.text) for d in corpus.docs):,} characters, {len(corpus.questions)} questions, "
          f"{len(configs)} configurations", flush=True)
    tables: dict[str, dict[str, PooledVectors]] = {}
    for v in variants:
        t = time.perf_counter()
        tables[v.name] = {d.doc_id: PooledVectors([build_piece_table(d, enc, scheme=sc, cache_dir=cache_dir)
                                                   for sc in v.schemes], enc, doc=d, **v.options)
                          for d in corpus.docs}
        n = sum(len(t.starts) for p in tables[v.name].values() for t in p.tables)
        keys = "+".join(sc.key for sc in v.schemes)
        print(f"  {v.name:<24} {keys:<44} {n:6} pieces, {time.perf_counter() - t:6.1f} s "
              f"(~0 when read from {cache_dir.name})", flush=True)
    results: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for i, cfg in enumerate(configs):
        strat = get_strategy(cfg.strategy)
        prefix = strat.prefix_default if corpus.prefix is None else corpus.prefix
        chunks = {d.doc_id: chunk_document(d, cfg.strategy, cfg.params) for d in corpus.docs}
        n = sum(len(cs) for cs in chunks.values())
        t = time.perf_counter()
        exact_index = build_index(corpus.docs, chunks, emb, with_prefix=prefix, cache=cache)
        secs = time.perf_counter() - t
        pq = per_question(corpus, chunks, exact_index)
        row: dict[str, Any] = {"config": cfg.label, "size": cfg.size, "chunks": n, "exact": means(pq),
                               "exact_q": pq, "pooled": {}, "pooled_q": {}, "cos": {}}
        for v in variants:
            cv = chunk_vectors(chunks, tables[v.name], with_prefix=prefix)
            idx = build_index(corpus.docs, chunks, emb, with_prefix=prefix, cache=cache, vectors=cv.vectors)
            pq = per_question(corpus, chunks, idx)
            row["pooled"][v.name] = means(pq)
            row["pooled_q"][v.name] = pq
            row["cos"][v.name] = float(np.mean(np.sum(cv.vectors * exact_index.vectors, axis=1)))
        results.append(row)
        ex = row["exact"]
        print(f"  [{i + 1:2}/{len(configs)}] {cfg.label:<42} {n:5} chunks  exact hit@3 {ex['hit@3']:5.1f}"
              f"  hit@5 {ex['hit@5']:5.1f}  (exact {secs:5.1f} s)", flush=True)
    print(f"  grid scored in {time.perf_counter() - t0:.0f} s")
    report(corpus, variants, results)
    return {"corpus": corpus.name, "rows": results}


def noise(rows: list[dict[str, Any]], metric: str, resamples: int = 300, seed: int = 0
          ) -> tuple[float, np.ndarray]:
    """How firmly the gold set itself ranks the grid, by resampling its questions: the median
    Spearman correlation of exact scores on a resample with exact scores on all questions, and
    the pairs of configurations whose exact order holds in >= 95 % of resamples ("separable")."""
    rng = np.random.default_rng(seed)
    q = np.array([r["exact_q"][metric] for r in rows])  # configs x questions
    full = q.mean(axis=1)
    nq = q.shape[1]
    rhos = []
    wins = np.zeros((len(rows), len(rows)))
    for _ in range(resamples):
        pick = rng.integers(0, nq, nq)
        boot = q[:, pick].mean(axis=1)
        rhos.append(spearman(boot, full))
        wins += boot[:, None] > boot[None, :]
    separable = wins >= 0.95 * resamples
    return float(np.median(rhos)), separable


def report(corpus: Corpus, variants: list[Variant], rows: list[dict[str, Any]]) -> None:
    print(f"\n-- {corpus.name}: exact and pooled per configuration (hit@3 / hit@5 / MRR"
          f"{' / recall' if 'recall' in corpus.metrics else ''}, points)")
    head = f"{'configuration':<42}{'exact':>26}"
    print(head + "".join(f"{v.name[:24]:>26}" for v in variants))
    for r in rows:
        cells = [r["exact"]] + [r["pooled"][v.name] for v in variants]
        print(f"{r['config']:<42}" + "".join(
            f"{' / '.join(f'{c[m]:.0f}' for m in corpus.metrics):>26}" for c in cells))
    print(f"\n-- {corpus.name}: pooled against exact over {len(rows)} configurations")
    seps = {}
    for m in corpus.metrics:
        ceiling, sep = noise(rows, m)
        seps[m] = sep
        print(f"  {m}: exact on resampled questions vs all questions, median Spearman {ceiling:.3f}; "
              f"{int(sep.sum())} of {len(rows) * (len(rows) - 1) // 2} configuration pairs separable "
              f"(same exact order in >= 95 % of resamples)")
    print(f"{'variant':<26}{'metric':<8}{'spearman':>9}{'best@exact':>11}{'sep.pairs':>10}{'mean cos':>9}  "
          + "max |pooled-exact| by size (points): " + " ".join(f"{s:>5}" for s in SIZES) + "  para")
    for v in variants:
        for m in corpus.metrics:
            ex = np.array([r["exact"][m] for r in rows])
            po = np.array([r["pooled"][v.name][m] for r in rows])
            rho = spearman(po, ex)
            rank = exact_rank_of_pooled_best(ex, po)
            cos = np.mean([r["cos"][v.name] for r in rows])
            # Separable pairs (exact i > j firmly) that pooled orders the same way.
            i, j = np.nonzero(seps[m])
            agree = f"{100 * float(np.mean(po[i] > po[j])):.0f}%" if len(i) else "-"
            by = []
            for s in list(SIZES) + [None]:
                d = [abs(r["pooled"][v.name][m] - r["exact"][m]) for r in rows if r["size"] == s]
                by.append(max(d) if d else float("nan"))
            print(f"{v.name[:25]:<26}{m:<8}{rho:>9.3f}{rank:>11}{agree:>10}{cos:>9.4f}  "
                  + " " * 37 + " ".join(f"{x:5.1f}" for x in by))
    print(f"\n-- {corpus.name}: mean (pooled - exact) by size, points (a bias, where max |.| above "
          "also counts noise)")
    print(f"{'variant':<26}{'metric':<8}" + " ".join(f"{s:>6}" for s in SIZES) + "   para")
    for v in variants:
        for m in corpus.metrics:
            by = []
            for s in list(SIZES) + [None]:
                d = [r["pooled"][v.name][m] - r["exact"][m] for r in rows if r["size"] == s]
                by.append(float(np.mean(d)) if d else float("nan"))
            print(f"{v.name[:25]:<26}{m:<8}" + " ".join(f"{x:+6.1f}" for x in by))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", choices=("handbook", "chroma", "both"), default="both")
    ap.add_argument("--chroma-corpora", default="chatlogs,state_of_the_union",
                    help="comma-separated (all five: chatlogs,finance,pubmed,state_of_the_union,wikitexts)")
    ap.add_argument("--variants", default="", help="comma-separated variant names (default: all)")
    ap.add_argument("--cache-dir", default=str(ROOT / ".cache-bench"))
    ap.add_argument("--json", default="", help="write the measured rows here")
    ap.add_argument("--report", default="", help="print the report of a --json file (no run)")
    args = ap.parse_args()
    variants = VARIANTS
    if args.report:
        for res in json.loads(Path(args.report).read_text(encoding="utf-8")):
            names = list(res["rows"][0]["pooled"])
            metrics = ("hit@3", "hit@5", "mrr") + (("recall",) if res["corpus"].startswith("chroma") else ())
            corpus = Corpus(res["corpus"], [], [], None, False, metrics)
            report(corpus, [v for v in VARIANTS if v.name in names], res["rows"])
        return
    if args.variants:
        wanted = [w.strip() for w in args.variants.split(",")]
        variants = [v for v in VARIANTS if v.name in wanted]
    cache_dir = Path(args.cache_dir)
    emb = MiniLMEmbedder(batch_size=32)
    cache = EmbeddingCache(cache_dir)
    corpora = []
    if args.corpus in ("handbook", "both"):
        corpora.append(handbook())
    if args.corpus in ("chroma", "both"):
        corpora.append(chroma([c.strip() for c in args.chroma_corpora.split(",") if c.strip()]))
    out = [run(c, variants, emb, cache, cache_dir) for c in corpora]
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
