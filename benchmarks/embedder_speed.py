"""Load time and texts/s of embedders named by spec, each in a fresh process (the load includes
importing torch and sentence-transformers, as a user's first embedding does).

    python benchmarks/embedder_speed.py [--embedders minilm,st:two-layer] [--texts 300] [--repeats 3]

`st:two-layer` is all-MiniLM-L6-v2 cut to its first two layers (tests/support/models.py), built
into a temporary folder first. The texts are the handbook's 200-token chunks (cl100k), cycled to
`--texts`. MiniLM runs on torch (CHUNK_INSPECTOR_BACKEND=torch) so both rows use one runtime;
`minilm@auto` adds the row with OpenVINO where installed (its conversion is done by a first,
untimed run into the same temporary cache folder). Batch size: the embedder's default for the
device. Prints only what it measured: construct and load seconds, then the best of `--repeats`
passes of `encode` over all texts, in texts/s.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def texts(n: int) -> list[str]:
    from inspector.core.chunking.registry import chunk_document
    from inspector.core.documents.document import load_document

    doc = load_document(ROOT / "sample_docs" / "handbook.md")
    chunks = chunk_document(doc, "fixed_tokens", {"size": 200, "overlap": 0})
    body = [c.embedded_text(doc) for c in chunks]
    return [body[i % len(body)] for i in range(n)]


def child(spec: str, n: int, repeats: int) -> dict:
    """One embedder in this (fresh) process: timings as JSON-able numbers."""
    t0 = time.perf_counter()
    from inspector.core.embedding.spec import make_embedder

    emb = make_embedder(spec, device="cpu")
    t1 = time.perf_counter()
    emb.load()
    t2 = time.perf_counter()
    data = texts(n)
    emb.encode(data[:8])  # the first call's one-off costs (allocations, OpenVINO's first shapes)
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        emb.encode(data)
        best = min(best, time.perf_counter() - t)
    return {"spec": spec, "backend": emb.backend, "batch": int(emb.batch_size), "construct_s": t1 - t0,
            "load_s": t2 - t1, "texts_per_s": n / best, "dim": int(emb.dim), "max_seq": int(emb.max_seq_length)}


def run(spec: str, n: int, repeats: int, env: dict[str, str]) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", spec, "--texts", str(n), "--repeats", str(repeats)],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--embedders", default="minilm,st:two-layer,minilm@auto")
    ap.add_argument("--texts", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if args.child:
        print(json.dumps(child(args.child, args.texts, args.repeats)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "CHUNK_INSPECTOR_CACHE_DIR": str(Path(tmp) / "cache"),
               "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        specs = [s.strip() for s in args.embedders.split(",") if s.strip()]
        if "st:two-layer" in specs:
            from tests.support.models import build_two_layer_minilm

            folder = build_two_layer_minilm(Path(tmp) / "two-layer")
            specs = [f"st:{folder}" if s == "st:two-layer" else s for s in specs]
        rows = []
        for spec in specs:
            backend = "auto" if spec.endswith("@auto") else "torch"
            name = spec.removesuffix("@auto")
            run_env = {**env, "CHUNK_INSPECTOR_BACKEND": backend}
            if backend == "auto":
                run(name, 8, 1, run_env)  # converts for OpenVINO (untimed), as a user's first open does
            rows.append(run(name, args.texts, args.repeats, run_env) | {"row": spec})
    print(f"{args.texts} texts (handbook 200-token chunks), CPU, best of {args.repeats}; "
          f"{os.cpu_count()} cores, load from other processes not controlled")
    print(f"{'embedder':<28} {'backend':<9} {'batch':>5} {'construct s':>11} {'load s':>7} {'texts/s':>8}")
    def label(r: dict) -> str:
        return "st:two-layer" if r["row"].startswith("st:") else r["row"]

    for r in rows:
        print(f"{label(r):<28} {r['backend']:<9} {r['batch']:>5} {r['construct_s']:>11.2f} {r['load_s']:>7.2f} "
              f"{r['texts_per_s']:>8.1f}")
    base = next((r for r in rows if r["row"] == "minilm"), None)
    for r in rows:
        if base is not None and r is not base:
            print(f"{label(r)}: {r['texts_per_s'] / base['texts_per_s']:.2f}x MiniLM/torch's texts/s")


if __name__ == "__main__":
    main()
