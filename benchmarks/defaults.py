"""Defaults from evidence: which retriever and which markdown size should the app start with?

Issue 12 ("Trustworthy tuning"). Measures the candidate defaults on three tuning sets and applies
a rule written down before any of these figures was looked at; only after the decision does it
read the public documents' held-out test split, as a check of the choice, never an input to it.

Candidates: retriever dense (all-MiniLM-L6-v2, exact vectors), BM25 or hybrid, with the default
strategy `markdown` at size 128, 256 or 384 (hard_cap max(512, size), fit_embedder on,
min_tokens and the heading prefix at their defaults), k = 5. Old defaults: dense, size 256.

Tuning evidence: the sample handbook (64 questions, written by the team), Chroma's five corpora
(472 questions, reference spans: a hit is a retrieved chunk overlapping a reference) and the
public documents' `tune` split (97 questions). Printed per dataset with 95 % bootstrap intervals
over questions: hit@3, hit@5, MRR, and for Chroma recall and IoU (k = 5).

THE RULE (fixed before the first run of this script):

1. Score: "pooled hit@5", the equal-weight mean over the three datasets of hit@5, so each
   dataset counts once (Chroma's 472 questions would otherwise outvote the 97 real-document
   ones). Its noise: a paired bootstrap stratified by dataset (questions resampled within each
   dataset, 2000 resamples), 95 % interval of the pooled difference.
2. Retriever, at size 256: a challenger (BM25 or hybrid) replaces dense only if
   (a) its pooled hit@5 minus dense's has a 95 % interval entirely above 0, and
   (b) on no dataset is it worse than dense by `paired_delta` on hit@5 (interval below 0 and
       McNemar p < 0.05): a default must not buy a pooled gain with a loss on one kind of text.
   If both qualify, the higher pooled hit@5 wins (equal: the higher pooled MRR). Otherwise dense
   stays: within noise, keep what users have.
3. Size, with the retriever step 2 chose: 128 or 384 replaces 256 by the same test (a) and (b)
   against 256; if both qualify, the higher pooled hit@5 (equal: the higher pooled MRR).
4. Then, and only then, the held-out check: the chosen defaults against the old ones on the
   public `test` split (93 questions), hit@3 / hit@5 / MRR with intervals and the paired
   difference. It is reported as it comes out; it does not feed back into the choice.

    .venv/bin/python benchmarks/defaults.py            # ~30 s once the vectors are cached
    .venv/bin/python benchmarks/defaults.py --no-test  # the tune evidence and the decision only

Exact MiniLM vectors come from the persistent cache in benchmarks/out/cache (embedded on first
use; Chroma's three markdown sizes are ~5,000 distinct chunks, ~20 min on the shared CPUs).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

import numpy as np
from _datasets import DATASETS, Dataset, bench_cache, load

from inspector.core.evaluation.config import EvalConfig
from inspector.core.evaluation.metrics import QuestionResult, Report
from inspector.core.evaluation.uncertainty import bootstrap_ci, paired_delta, resampled_means

RETRIEVERS = ("dense", "bm25", "hybrid")
SIZES = (128, 256, 384)
OLD = ("dense", 256)
K = 5
LEVEL = 0.95
SEED = 0


def config(retriever: str, size: int) -> EvalConfig:
    return EvalConfig("markdown", {"size": size}, K, retriever)


# -- per-question values ------------------------------------------------------------------------------

def _hit3(q: QuestionResult) -> float:
    return 1.0 if q.rank is not None and q.rank <= 3 else 0.0


METRICS = {
    "hit@3": _hit3,
    "hit@5": lambda q: 1.0 if q.hit else 0.0,
    "MRR": lambda q: q.reciprocal_rank,
    "recall": lambda q: q.recall,
    "IoU": lambda q: q.iou,
}


def values(report: Report, metric: str) -> np.ndarray:
    get = METRICS[metric]
    return np.asarray([get(q) for q in report.questions], dtype=np.float64)


def cell(report: Report, metric: str) -> str:
    v = values(report, metric)
    lo, hi = bootstrap_ci(v, level=LEVEL, seed=SEED)
    return f"{v.mean():.3f} [{lo:.3f}, {hi:.3f}]"


# -- measuring ----------------------------------------------------------------------------------------

@dataclass
class Measured:
    dataset: Dataset
    reports: dict[tuple[str, int], Report]


def measure(ds: Dataset) -> Measured:
    reports: dict[tuple[str, int], Report] = {}
    for size in SIZES:
        for retriever in RETRIEVERS:
            reports[(retriever, size)] = ds.workbench.evaluate(config(retriever, size))
    return Measured(ds, reports)


def table(m: Measured) -> None:
    metrics = ["hit@3", "hit@5", "MRR"] + (["recall", "IoU"] if m.dataset.spans else [])
    print(f"\n{m.dataset.name}: {len(m.dataset.questions)} questions, markdown, k = {K}, "
          f"95 % bootstrap intervals over questions\n")
    print("| retriever | size | chunks | " + " | ".join(metrics) + " |")
    print("|---|---|---|" + "---|" * len(metrics))
    for (retriever, size), r in m.reports.items():
        print(f"| {retriever} | {size} | {r.cost.chunks} | " + " | ".join(cell(r, x) for x in metrics) + " |")


# -- the rule -----------------------------------------------------------------------------------------

def pooled(runs: list[Measured], key: tuple[str, int], metric: str) -> float:
    return float(np.mean([values(m.reports[key], metric).mean() for m in runs]))


def pooled_diff(runs: list[Measured], a: tuple[str, int], b: tuple[str, int],
                metric: str = "hit@5") -> tuple[float, tuple[float, float]]:
    """Pooled (equal-weight) mean of b - a, with the stratified paired bootstrap interval."""
    draws = []
    point = []
    for j, m in enumerate(runs):
        d = values(m.reports[b], metric) - values(m.reports[a], metric)
        point.append(d.mean())
        draws.append(resampled_means(d[None, :], seed=SEED + j)[:, 0])
    pooled_draws = np.mean(draws, axis=0)
    tail = (1 - LEVEL) / 2
    lo, hi = np.quantile(pooled_draws, [tail, 1 - tail])
    return float(np.mean(point)), (float(lo), float(hi))


def challenge(runs: list[Measured], incumbent: tuple[str, int], challengers: list[tuple[str, int]],
              what: str) -> tuple[str, int]:
    """Steps 2 and 3 of the rule: the challenger that passes (a) and (b) with the highest pooled
    hit@5 (then MRR), else the incumbent."""
    print(f"\n{what}: against {incumbent[0]} size {incumbent[1]} "
          f"(pooled hit@5 {pooled(runs, incumbent, 'hit@5'):.3f})")
    passed = []
    for c in challengers:
        delta, (lo, hi) = pooled_diff(runs, incumbent, c)
        worse = []
        verdicts = []
        for m in runs:
            pd = paired_delta(m.reports[incumbent], m.reports[c], "hit_rate", level=LEVEL, seed=SEED)
            verdicts.append(f"{m.dataset.name} {100 * pd.delta:+.1f} [{100 * pd.ci[0]:+.1f}, "
                            f"{100 * pd.ci[1]:+.1f}] p={pd.p_value:.3f} {pd.verdict}")
            if pd.verdict == "worse":
                worse.append(m.dataset.name)
        ok_a, ok_b = lo > 0, not worse
        print(f"  {c[0]} size {c[1]}: pooled hit@5 {pooled(runs, c, 'hit@5'):.3f}, difference "
              f"{100 * delta:+.1f} points [{100 * lo:+.1f}, {100 * hi:+.1f}] -> (a) "
              f"{'passes' if ok_a else 'fails'}; (b) {'passes' if ok_b else 'fails: worse on ' + ', '.join(worse)}")
        for v in verdicts:
            print(f"      {v}")
        if ok_a and ok_b:
            passed.append(c)
    if not passed:
        print(f"  -> keep {incumbent[0]} size {incumbent[1]}")
        return incumbent
    best = max(passed, key=lambda c: (pooled(runs, c, "hit@5"), pooled(runs, c, "MRR")))
    print(f"  -> switch to {best[0]} size {best[1]}")
    return best


def held_out(chosen: tuple[str, int], embedder: Any, cache: Any) -> None:
    ds = load("public", embedder=embedder, cache=cache, split="test")
    old = ds.workbench.evaluate(config(*OLD))
    new = old if chosen == OLD else ds.workbench.evaluate(config(*chosen))
    print(f"\nHeld-out check, public test split ({len(ds.questions)} questions), read only now:\n")
    print("| defaults | retriever | size | hit@3 | hit@5 | MRR |")
    print("|---|---|---|---|---|---|")
    for label, key, r in (("old", OLD, old), ("chosen", chosen, new)):
        print(f"| {label} | {key[0]} | {key[1]} | " + " | ".join(cell(r, x) for x in ("hit@3", "hit@5", "MRR")) + " |")
    if chosen == OLD:
        print("\nThe chosen defaults are the old ones: the test figures above are the kept defaults' own.")
        return
    for metric in ("hit_rate", "mrr"):
        pd = paired_delta(old, new, metric, level=LEVEL, seed=SEED)
        extra = f", fixed {pd.fixed}, broke {pd.broke}, McNemar p={pd.p_value:.3f}" if pd.p_value is not None else ""
        print(f"  chosen - old, {'hit@5' if metric == 'hit_rate' else 'MRR'}: {pd.delta:+.3f} "
              f"[{pd.ci[0]:+.3f}, {pd.ci[1]:+.3f}]{extra}: {pd.verdict}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-test", action="store_true", help="stop after the decision (do not read the test split)")
    args = ap.parse_args()
    from inspector.core.embedding.embedder import MiniLMEmbedder

    embedder, cache = MiniLMEmbedder(), bench_cache()
    runs = []
    for name in DATASETS:
        m = measure(load(name, embedder=embedder, cache=cache, split="tune"))
        table(m)
        runs.append(m)
    print(f"\nPooled (equal-weight mean over {', '.join(m.dataset.name for m in runs)}):\n")
    print("| retriever | size | pooled hit@3 | pooled hit@5 | pooled MRR |")
    print("|---|---|---|---|---|")
    for key in runs[0].reports:
        print(f"| {key[0]} | {key[1]} | {pooled(runs, key, 'hit@3'):.3f} | {pooled(runs, key, 'hit@5'):.3f} | "
              f"{pooled(runs, key, 'MRR'):.3f} |")
    retriever = challenge(runs, OLD, [(r, OLD[1]) for r in RETRIEVERS if r != OLD[0]],
                          "Step 2, retriever at size 256")
    chosen = challenge(runs, retriever, [(retriever[0], s) for s in SIZES if s != OLD[1]],
                       f"Step 3, markdown size with {retriever[0]}")
    print(f"\nDecision: retriever {chosen[0]}, markdown size {chosen[1]} "
          f"({'unchanged' if chosen == OLD else 'changed from ' + OLD[0] + ' ' + str(OLD[1])})")
    if not args.no_test:
        held_out(chosen, embedder, cache)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
