"""The local engine against `--engine ray` with 1 and 2 workers, on this machine.

Workloads (each engine in a fresh process, so tokenization starts cold for every one, and with an
empty embedding cache folder of its own, so every engine embeds everything):

* BM25 sweep on the Chroma corpora (5 documents, 1.45 MB, 472 questions): fixed_tokens and
  recursive at 128/256/512 tokens, k=5 (6 configurations).
* BM25 sweep on the sample handbook (95 KB, 64 questions), the same grid.
* exact dense eval on the handbook: fixed_tokens 128/0, the bundled model (OpenVINO when installed),
  every chunk embedded (the cache folder starts empty).
* exact dense eval on three Chroma corpora (chatlogs, state_of_the_union, wikitexts: 207 KB, their
  questions), fixed_tokens 250/0: enough chunks for the embedding pace to show.

Printed side by side: wall time (cluster start apart), chunks per second (chunks scored over the
whole run for the sweeps, chunks embedded for dense), the Ray stage times, and a fingerprint of the
JSON report so equal results show as equal strings.

    .venv/bin/python benchmarks/ray_engine.py              # all three engines
    .venv/bin/python benchmarks/ray_engine.py --skip-dense # BM25 only

Also printed, for the sizing in docs/scale.md: the embedding stage's seconds until its first batch
came back (actors started, model loaded in each), and dense scoring's pace on one core (256
question vectors by 100,000 chunk vectors of 384, float32, the best 50 per question kept; one BLAS
thread).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHROMA = ROOT / "benchmarks" / "data" / "chroma"
HANDBOOK = ROOT / "sample_docs"


KEYS = ("chroma_bm25", "handbook_bm25", "handbook_dense", "chroma_dense")


def _one(engine: str, workers: int, skip_dense: bool) -> dict:
    """Run every workload with one engine; a dict of figures."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from inspector.core.embedding.cache import EmbeddingCache
    from inspector.core.evaluation.config import EvalConfig
    from inspector.core.evaluation.report import report_json, sweep_json
    from inspector.core.evaluation.sweep import grid
    from inspector.core.workbench import Workbench

    out: dict = {"engine": engine, "workers": workers}
    session = None
    if engine == "ray":
        from inspector.core.distributed import start_local

        t0 = time.perf_counter()
        session = start_local(workers)
        out["start_s"] = time.perf_counter() - t0

    def runner(wb: Workbench):
        if engine == "local":
            return wb
        from inspector.core.distributed import RayEngine

        return RayEngine(wb, session=session, workers=workers)

    def fingerprint(data: dict) -> str:
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:12]

    def _dense_figures(report, config, runner, wall: float) -> dict:
        """What one dense evaluation run reports: wall time, chunks and their rate, hit rate, the
        report's fingerprint (equal across engines) and the runner's stage timings."""
        return {"wall_s": wall, "chunks": report.cost.chunks, "chunks_per_s": report.cost.chunks / wall,
                "hit_rate": report.hit_rate, "fingerprint": fingerprint(report_json(report, config)),
                "stages": dict(getattr(runner, "timings", {}))}

    configs, skipped = grid(["fixed_tokens", "recursive"], [128, 256, 512], [0], [5], retriever="bm25")
    for name, paths, gold in (("chroma_bm25", [CHROMA / "corpora"], CHROMA / "questions_df.csv"),
                              ("handbook_bm25", [HANDBOOK / "handbook.md"], HANDBOOK / "handbook.gold.jsonl")):
        t0 = time.perf_counter()
        wb = Workbench()
        wb.open(paths)
        wb.load_gold(gold)
        r = runner(wb)
        result = r.sweep(configs, skipped=skipped)
        wall = time.perf_counter() - t0
        chunks = sum(row.report.cost.chunks for row in result.rows)
        out[name] = {"wall_s": wall, "chunks": chunks, "chunks_per_s": chunks / wall,
                     "mb": sum(len(d.text.encode()) for d in wb.documents) / 1e6,
                     "best": result.rows[0].config.label(), "hit_rate": result.rows[0].report.hit_rate,
                     "fingerprint": fingerprint(sweep_json(result)),
                     "stages": dict(getattr(r, "timings", {}))}
    if not skip_dense:
        with tempfile.TemporaryDirectory(prefix="ray-bench-cache-") as tmp:
            config = EvalConfig("fixed_tokens", {"size": 128, "overlap": 0}, 5, "dense")
            t0 = time.perf_counter()
            from inspector.core.embedding.embedder import MiniLMEmbedder

            wb = Workbench(embedder=MiniLMEmbedder(device="cpu"), cache=EmbeddingCache(tmp))
            wb.open([HANDBOOK / "handbook.md"])
            wb.load_gold(HANDBOOK / "handbook.gold.jsonl")
            r = runner(wb)
            report = r.evaluate(config)
            wall = time.perf_counter() - t0
            out["handbook_dense"] = _dense_figures(report, config, r, wall) | {
                "backend": (getattr(r, "device", None) or {}).get("backend") or getattr(wb.embedder, "backend", None)}
        with tempfile.TemporaryDirectory(prefix="ray-bench-cache-") as tmp:
            # Three Chroma corpora (207 KB) at 250-token chunks: long enough for the embedding
            # stage's steady pace to show through the actors' start.
            import csv

            picked = ("chatlogs", "state_of_the_union", "wikitexts")
            gold_path = Path(tmp) / "questions.csv"
            with open(CHROMA / "questions_df.csv", encoding="utf-8", newline="") as src, \
                    open(gold_path, "w", encoding="utf-8", newline="") as dst:
                rows = [r for r in csv.DictReader(src) if r["corpus_id"] in picked]
                w = csv.DictWriter(dst, fieldnames=["question", "references", "corpus_id"])
                w.writeheader()
                w.writerows(rows)
            config = EvalConfig("fixed_tokens", {"size": 250, "overlap": 0}, 5, "dense")
            t0 = time.perf_counter()
            wb = Workbench(embedder=MiniLMEmbedder(device="cpu"), cache=EmbeddingCache(Path(tmp) / "cache"))
            wb.open([CHROMA / "corpora" / f"{name}.md" for name in picked])
            wb.load_gold(gold_path)
            r = runner(wb)
            report = r.evaluate(config)
            wall = time.perf_counter() - t0
            out["chroma_dense"] = _dense_figures(report, config, r, wall) | {
                "embedded": getattr(r, "counts", {}).get("embedded")}
    if session is not None:
        session.close()
    return out


def _gemm() -> dict:
    """Dense scoring's pace on one core (run in a process with one BLAS thread), as docs/scale.md's
    plan scores: a block of 256 question vectors against 100,000 chunk vectors (384 float32), the
    best 50 of each question kept (argpartition). The product alone is timed too: the selection
    costs as much as the arithmetic at this shape."""
    import numpy as np

    rng = np.random.default_rng(0)
    q = rng.standard_normal((256, 384), dtype=np.float32)
    m = rng.standard_normal((100_000, 384), dtype=np.float32)
    q @ m[:1000].T  # warm the BLAS
    product = search = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        scores = q @ m.T
        t1 = time.perf_counter()
        np.argpartition(scores, -50, axis=1)[:, -50:]
        t2 = time.perf_counter()
        product, search = min(product, t1 - t0), min(search, t2 - t0)
    flop = 2 * q.shape[0] * m.shape[0] * q.shape[1]
    return {"product_gflops": flop / product / 1e9, "search_gflops": flop / search / 1e9,
            "pairs_per_s": q.shape[0] * m.shape[0] / search, "search_s": search}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--one", nargs=2, metavar=("ENGINE", "WORKERS"), help=argparse.SUPPRESS)
    ap.add_argument("--skip-dense", action="store_true", help="BM25 workloads only")
    ap.add_argument("--gemm", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    if args.one:
        print(json.dumps(_one(args.one[0], int(args.one[1]), args.skip_dense)))
        return
    if args.gemm:
        print(json.dumps(_gemm()))
        return
    runs = []
    for engine, workers in (("local", 0), ("ray", 1), ("ray", 2)):
        cmd = [sys.executable, __file__, "--one", engine, str(workers)] + (["--skip-dense"] if args.skip_dense else [])
        print(f"running {engine}{' x' + str(workers) if workers else ''} ...", file=sys.stderr, flush=True)
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        if proc.returncode != 0:
            print(proc.stderr[-3000:], file=sys.stderr)
            raise SystemExit(proc.returncode)
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    names = ["local", "ray x1", "ray x2"]
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (2 shared cores)")
    starts = ["-"] + [f"{r['start_s']:.1f}" for r in runs[1:]]
    print(f"\ncluster start (s): {' | '.join(f'{n} {s}' for n, s in zip(names, starts, strict=True))}\n")
    print("| workload | " + " | ".join(f"{n} wall s | {n} chunks/s" for n in names) + " | same results |")
    print("|---|" + "---|---|" * len(names) + "---|")
    for key in KEYS:
        if key not in runs[0]:
            continue
        cells = " | ".join(f"{r[key]['wall_s']:.1f} | {r[key]['chunks_per_s']:.0f}" for r in runs)
        same = len({r[key]["fingerprint"] for r in runs}) == 1
        print(f"| {key} ({runs[0][key]['chunks']:,} chunks) | {cells} | {'yes' if same else 'NO'} |")
    print("\nRay stage seconds (chunking / pieces / embedding / evaluating):")
    for n, r in zip(names[1:], runs[1:], strict=True):
        for key in KEYS:
            if key in r:
                st = r[key]["stages"]
                print(f"  {n} {key}: " + " / ".join(f"{st.get(s, 0.0):.1f}" for s in
                                                   ("chunking", "pieces", "embedding", "evaluating")))
    if "handbook_dense" in runs[0]:
        print("\nmodel backend: " + ", ".join(f"{n} {r['handbook_dense']['backend']}"
                                               for n, r in zip(names, runs, strict=True)))
        print("embedding stage, seconds to the first batch (actors started, model loaded): " + ", ".join(
            f"{n} {key} {r[key]['stages'].get('embedding_first', 0.0):.1f}"
            for n, r in zip(names[1:], runs[1:], strict=True) for key in ("handbook_dense", "chroma_dense")))
    one = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, __file__, "--gemm"], capture_output=True, text=True, cwd=ROOT, env=one)
    if proc.returncode == 0:
        g = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"dense scoring on one core, 256 questions x 100,000 chunks (384 float32), top 50 kept: "
              f"{g['search_s']:.2f} s, {g['pairs_per_s'] / 1e6:.0f} M question-chunk pairs/s = "
              f"{g['search_gflops']:.1f} GFLOP/s (the product alone {g['product_gflops']:.1f} GFLOP/s)")
        runs.append({"gemm": g})
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
