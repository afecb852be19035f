"""Split-half generalization: does the sweep's cross-validated recommendation hold on unseen questions?

Issue 12 ("Trustworthy tuning"). A sweep picks a configuration on one gold set; the question a user
cares about is whether the pick is still better than what they had on questions nobody has
written yet. Here the gold set is split in half at random (5 seeds): on half A the app's own
selection runs (`Workbench.sweep` over a grid of strategies x sizes x overlaps, with the
cross-validated `Recommendation` against the default configuration), and the configuration it
advises (the default when it says "keep current") is scored on half B, which nothing saw. The
naive pick, the configuration with the best in-sample hit rate on A (the sweep table's first row),
is scored the same way.

Printed per dataset and retriever, as mean and [min, max] over the seeds, on half B:
- gain: pick minus default (hit@5 points): what following the advice earned on new questions;
- gap to oracle: the best configuration on B minus the pick (what a clairvoyant choice would add);
- optimism: the pick's score on A minus on B (how much choosing on A flattered it);
- keep: how often the recommendation was "keep current" (for the naive pick: how often the
  in-sample best was the default itself).

Scores on B are per-question results of one full-set sweep, sliced to B: a question's hit does
not depend on which other questions are asked (the script checks this on every A half: the full
sweep sliced to A equals the sweep run on A). The metric is the one the recommendation uses, hit@5
(k = 5); for Chroma's reference-span questions a hit is a retrieved chunk overlapping a reference.
Hit@5 favours big chunks (five of them hold more text); `--budget N` ranks and recommends by the
hit rate within N context tokens instead (the app's `budget`), which does not.

    .venv/bin/python benchmarks/generalization.py                       # BM25, all three datasets
    .venv/bin/python benchmarks/generalization.py --retrievers bm25,dense --datasets handbook,public
    .venv/bin/python benchmarks/generalization.py --budget 1024  # judged by what fits in 1,024 tokens

Issue 29: `--starts default,fixed_tokens:512:0,fixed_chars:2000:0` asks for the advice from each
of these current settings (the broken ones are added to the grid) and prints the realized gain on
B of following it over staying put; the advice must improve a broken start and never hurt the
default. Each start's findings are printed with how much they affect the retriever (the embedder's
cut: "(partial)" under hybrid, "(none)" under BM25; such findings license a switch only with a
likely gain, or not at all). `--small` is the issue's grid (markdown, recursive, fixed_tokens x 128/256/512 x 0/32),
`--split all` pools the public set's tune and test questions:

    nice -n 5 .venv/bin/python benchmarks/generalization.py --datasets public --split all \
        --retrievers dense --small --starts default,fixed_tokens:512:0,fixed_chars:2000:0

Exact MiniLM vectors come from the persistent cache in benchmarks/out/cache (embedded on first
use, ~3-15 chunks/s on the shared CPUs; Chroma's grid is 26,600 distinct chunks, chroma-small's
about a seventh of that).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
from _datasets import DATASETS, SPLIT_SETS, bench_cache, load

from inspector.core.evaluation.config import EvalConfig, sized_params
from inspector.core.evaluation.selection import score_matrix
from inspector.core.evaluation.sweep import grid

SEEDS = (0, 1, 2, 3, 4)
SIZES = (128, 256, 512)
#: Token overlaps for the window strategies; sentences overlap in sentences (0 or 1).
OVERLAPS = (0, 64)
SENTENCE_OVERLAPS = (0, 1)
FOLDS = 5


SMALL_SIZES = (128, 256, 512)
SMALL_OVERLAPS = (0, 32)


def start_config(spec: str, retriever: str) -> EvalConfig:
    """"default" or STRATEGY:SIZE:OVERLAP (as sweep's --against) at k = 5 with `retriever`."""
    if spec == "default":
        return EvalConfig(retriever=retriever)
    name, size, overlap = (spec.split(":") + ["", ""])[:3]
    return EvalConfig(name, sized_params(name, int(size) if size else None, int(overlap) if overlap else None),
                      retriever=retriever)


def small_configs(retriever: str) -> list[EvalConfig]:
    """The issue's grid: markdown / recursive / fixed_tokens x 128/256/512 x 0/32 at k = 5."""
    a, _ = grid(["markdown", "recursive", "fixed_tokens"], SMALL_SIZES, SMALL_OVERLAPS, retriever=retriever)
    return a


def configs_for(retriever: str) -> list[EvalConfig]:
    """The grid: markdown / recursive / fixed_tokens / sentences x sizes x overlaps (21 configurations,
    markdown has no overlap), every one at k = 5 with the strategy's default prefix."""
    a, _ = grid(["markdown", "recursive", "fixed_tokens"], SIZES, OVERLAPS, retriever=retriever)
    b, _ = grid(["sentences"], SIZES, SENTENCE_OVERLAPS, retriever=retriever)
    return a + b


@dataclass
class Outcome:
    seed: int
    rec: EvalConfig
    """What the recommendation says to use (the default when it keeps it)."""
    rec_keep: bool
    rec_cv_gain: float
    """The app's own cross-validated gain estimate on A."""
    naive: EvalConfig
    gain_rec: float
    gain_naive: float
    gap_rec: float
    gap_naive: float
    opt_rec: float
    opt_naive: float
    oracle: EvalConfig
    naive_is_default: bool
    starts: dict[str, StartOutcome] | None = None
    """Issue 29: the advice from each start (`--starts`), by its spec."""


@dataclass
class StartOutcome:
    pick: EvalConfig
    keep: bool
    reason: str
    p_better: float | None
    cv_gain: float
    gain: float
    """Realized on B: the pick minus the start (hit@5 points / 100)."""
    default_gain: float
    """On B: the default minus the start (what the issue's users were denied)."""
    findings: tuple[str, ...]
    """Kinds of the start's findings, with "(partial)" or "(none)" where the fault touches the
    retriever only partly or not at all (`Finding.affects`)."""
    evidence: str = ""
    """The gold set's figures on the start's cut, on A (`Finding.evidence`)."""


def split(n: int, seed: int, a_size: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Half A (floor(n/2) questions, or `a_size`) and B (the rest), drawn with the seed; indexes ascending."""
    perm = np.random.default_rng(seed).permutation(n)
    cut = n // 2 if a_size is None else a_size
    return np.sort(perm[:cut]), np.sort(perm[cut:])


def run(name: str, retriever: str, *, embedder, cache, budget: int | None = None,
        seeds: tuple[int, ...] = SEEDS, starts: tuple[str, ...] = (), small: bool = False,
        split_name: str = "tune", a_size: int | None = None) -> list[Outcome]:
    from inspector.core.workbench.evaluator import recommend

    ds = load(name, embedder=embedder, cache=cache, split=split_name)
    wb, questions = ds.workbench, ds.questions
    configs = small_configs(retriever) if small else configs_for(retriever)
    default = EvalConfig(retriever=retriever)
    if default not in configs:
        configs.append(default)
    start_cfgs = {s: start_config(s, retriever) for s in starts}
    configs += [c for c in start_cfgs.values() if c not in configs]
    findings_for = wb.evaluator.findings_for()
    evidence_for = wb.evaluator.evidence_for()
    if default not in configs:
        raise AssertionError("the default configuration must be a grid point")
    t0 = time.perf_counter()
    full = wb.sweep(configs, budget=budget)
    by_cfg = {r.config: r.report for r in full.rows}
    order = list(by_cfg)
    metric = "hit_rate" if budget is None else "hit_at_budget"
    matrix, kept = score_matrix([by_cfg[c] for c in order], metric)
    assert len(kept) == len(questions)
    idx = {c: i for i, c in enumerate(order)}
    shown = "hit@5" if budget is None else f"hit@5 within {budget} tokens"
    print(f"\n{ds.name} ({len(questions)} questions), {retriever}: {len(configs)} configurations, "
          f"full sweep {time.perf_counter() - t0:.0f} s; default {default.label()} "
          f"{shown} {matrix[idx[default]].mean():.3f}; best in-sample {full.rows[0].config.label()} "
          f"{matrix[idx[full.rows[0].config]].mean():.3f}", flush=True)
    out: list[Outcome] = []
    for seed in seeds:
        a, b = split(len(questions), seed, a_size)
        wb.set_gold(tuple(questions[i] for i in a))
        res = wb.sweep(configs, against=default, folds=FOLDS, seed=seed, budget=budget)
        rec = res.recommendation
        assert rec is not None
        on_a = {r.config: (r.report.hit_rate if budget is None else r.report.hit_at_budget) for r in res.rows}
        for c in order:  # a question's hit does not depend on the others asked
            if abs(on_a[c] - matrix[idx[c], a].mean()) > 1e-12:
                raise AssertionError(f"{c.label()}: sweep on A {on_a[c]} != full sweep sliced to A")
        score_b = matrix[:, b].mean(axis=1)
        best_b = float(score_b.max())
        pick, naive = rec.best, res.rows[0].config
        base_b = score_b[idx[default]]
        out.append(Outcome(
            seed=seed, rec=pick, rec_keep=rec.keep_current, rec_cv_gain=rec.gain, naive=naive,
            gain_rec=score_b[idx[pick]] - base_b, gain_naive=score_b[idx[naive]] - base_b,
            gap_rec=best_b - score_b[idx[pick]], gap_naive=best_b - score_b[idx[naive]],
            opt_rec=on_a[pick] - score_b[idx[pick]], opt_naive=on_a[naive] - score_b[idx[naive]],
            oracle=order[int(np.argmax(score_b))], naive_is_default=naive == default, starts={}))
        o = out[-1]
        for spec, start in start_cfgs.items():
            _, srec = recommend(res.rows, start, budget=budget, folds=FOLDS, seed=seed, findings_for=findings_for,
                                evidence_for=evidence_for)
            assert o.starts is not None
            so = o.starts[spec] = StartOutcome(
                pick=srec.best, keep=srec.keep_current, reason=srec.reason, p_better=srec.p_better,
                cv_gain=srec.gain, gain=score_b[idx[srec.best]] - score_b[idx[start]],
                default_gain=base_b - score_b[idx[start]],
                findings=tuple(f.kind + ('' if f.affects == 'full' else f' ({f.affects})') for f in srec.findings),
                evidence="; ".join(f.evidence.text() for f in srec.findings if f.evidence is not None))
            if so.evidence:
                print(f"  seed {seed} from {spec}: the cut on the gold set (A): {so.evidence}", flush=True)
            print(f"  seed {seed} from {spec}: findings {', '.join(so.findings) or 'none'}; "
                  f"{'keep' if so.keep else 'switch to ' + so.pick.label()} ({so.reason}, P(better) "
                  f"{so.p_better:.2f}, CV gain on A {100 * so.cv_gain:+.1f}); realized on B "
                  f"{100 * so.gain:+.1f} (default on B {100 * so.default_gain:+.1f})", flush=True)
        print(f"  seed {seed}: recommendation {'keep current' if o.rec_keep else o.rec.label()} "
              f"(CV gain on A {100 * o.rec_cv_gain:+.1f}, on B {100 * o.gain_rec:+.1f}); naive "
              f"{o.naive.label()} (B {100 * o.gain_naive:+.1f}); oracle on B {o.oracle.label()}", flush=True)
    wb.set_gold(questions)
    return out


def _fmt(values: list[float]) -> str:
    v = 100 * np.asarray(values)
    return f"{v.mean():+5.1f} [{v.min():+5.1f}, {v.max():+5.1f}]"


def summary(rows: list[tuple[str, str, list[Outcome]]], budget: int | None = None) -> None:
    shown = "hit@5" if budget is None else f"hit@5 within {budget} tokens"
    print(f"\nOn the unseen half B, {shown} in points, mean [min, max] over {len(rows[0][2])} seeds "
          "(gain = pick - default; gap = oracle on B - pick; optimism = pick on A - pick on B)\n")
    print("| dataset | retriever | pick | gain on B | gap to oracle | optimism | keep current "
          "| the app's CV gain estimate on A |")
    print("|---|---|---|---|---|---|---|---|")
    for name, retriever, outs in rows:
        n = len(outs)
        print(f"| {name} | {retriever} | recommendation | {_fmt([o.gain_rec for o in outs])} | "
              f"{_fmt([o.gap_rec for o in outs])} | {_fmt([o.opt_rec for o in outs])} | "
              f"{sum(o.rec_keep for o in outs)}/{n} | {_fmt([o.rec_cv_gain for o in outs])} |")
        print(f"| | | naive in-sample best | {_fmt([o.gain_naive for o in outs])} | "
              f"{_fmt([o.gap_naive for o in outs])} | {_fmt([o.opt_naive for o in outs])} | "
              f"{sum(o.naive_is_default for o in outs)}/{n} | |")


def start_summary(rows: list[tuple[str, str, list[Outcome]]], budget: int | None = None) -> None:
    shown = "hit@5" if budget is None else f"hit@5 within {budget} tokens"
    print(f"\nAdvice from each start (issue 29), realized on the unseen half B, {shown} in points, "
          f"mean [min, max] over {len(rows[0][2])} seeds\n")
    print("| dataset | retriever | start | switched | by the old rule (confirmed only) | why | realized gain on B "
          "| default - start on B | worst realized | P(better), mean |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, retriever, outs in rows:
        for spec in (outs[0].starts or {}):
            s = [o.starts[spec] for o in outs if o.starts]
            why = ", ".join(f"{r} {sum(x.reason == r for x in s)}" for r in dict.fromkeys(x.reason for x in s))
            print(f"| {name} | {retriever} | {spec} | {sum(not x.keep for x in s)}/{len(s)} | "
                  f"{sum(x.reason == 'confirmed' for x in s)}/{len(s)} | {why} | "
                  f"{_fmt([x.gain for x in s])} | {_fmt([x.default_gain for x in s])} | "
                  f"{100 * min(x.gain for x in s):+.1f} | "
                  f"{np.mean([x.p_better or 0.0 for x in s]):.2f} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default=",".join(DATASETS),
                    help="comma-separated: handbook,chroma,chroma-small,public,paraphrase,heldout")
    ap.add_argument("--retrievers", default="bm25", help="comma-separated: bm25,dense,hybrid")
    ap.add_argument("--budget", type=int, default=None,
                    help="rank and recommend by the hit rate within this many context tokens")
    ap.add_argument("--seeds", type=int, default=len(SEEDS), help="random halvings (seeds 0..N-1)")
    ap.add_argument("--starts", default="",
                    help="comma-separated current settings to advise from: default,fixed_tokens:512:0,...")
    ap.add_argument("--small", action="store_true", help="the issue-29 grid (18 configurations)")
    ap.add_argument("--split", default="tune", help="public / paraphrase set questions: tune, test or all")
    ap.add_argument("--a-size", type=int, default=None,
                    help="questions the advice sees (half A); B is the rest (issue 29's users had 30)")
    args = ap.parse_args()
    retrievers = [r for r in args.retrievers.split(",") if r]
    embedder = cache = None
    if any(r != "bm25" for r in retrievers):
        from inspector.core.embedding.embedder import MiniLMEmbedder

        embedder, cache = MiniLMEmbedder(), bench_cache()
    rows = []
    for retriever in retrievers:
        for name in [d for d in args.datasets.split(",") if d]:
            outs = run(name, retriever, embedder=embedder, cache=cache, budget=args.budget,
                       seeds=tuple(range(args.seeds)), starts=tuple(s for s in args.starts.split(",") if s),
                       small=args.small, split_name=args.split, a_size=args.a_size)
            rows.append((f"{name}-{args.split}" if name in SPLIT_SETS else name, retriever, outs))
    summary(rows, args.budget)
    if args.starts:
        start_summary(rows, args.budget)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
