"""Texts/s of an OpenAI-compatible endpoint at concurrency 1, 4 and 8, beside the same model in
process, on the same texts.

    python benchmarks/embed_endpoint.py [--texts 400] [--repeats 2] [--concurrency 1,4,8]

The endpoint is tests/support/openai_server.py serving the bundled MiniLM, started in a process
of its own (it would share this one's GIL otherwise); the client is `OpenAIEmbedder` through
`embed_texts` with no cache, exactly as the app embeds (requests of 32 texts, the local default,
`concurrency` in flight). In process is `MiniLMEmbedder` through `embed_texts` with no cache, at
its own default batch size. Both run the same runtime (auto: OpenVINO when installed). The texts
are the sample handbook's `markdown` chunks (prefix + text), repeated if fewer than asked.

Prints texts/s (median of the repeats, interleaved), the ratio to in process, and the smallest
cosine between the endpoint's vectors and the in-process ones (>= 0.9999: the same vectors).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

from inspector.core.chunking.registry import chunk_document  # noqa: E402
from inspector.core.documents.document import load_document  # noqa: E402
from inspector.core.embedding.embedder import MiniLMEmbedder, embed_texts  # noqa: E402
from inspector.core.embedding.remote import OpenAIEmbedder  # noqa: E402

SERVER = ROOT / "tests" / "support" / "openai_server.py"


def handbook_texts(n: int) -> list[str]:
    doc = load_document(ROOT / "sample_docs" / "handbook.md")
    texts = [c.embedded_text(doc, with_prefix=True) for c in chunk_document(doc, "markdown", {})]
    m = len(texts)  # copies past the first get a suffix: no text is embedded twice
    return [texts[i % m] + (f" ({i // m})" if i >= m else "") for i in range(n)]


def start_server() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, str(SERVER), "--lifetime", "1800"], stdout=subprocess.PIPE,
                            text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("listening on "):
        proc.kill()
        raise SystemExit(f"the server did not start: {line!r}")
    return proc, line.removeprefix("listening on ")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--texts", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--concurrency", default="1,4,8")
    args = ap.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    texts = handbook_texts(args.texts)
    load = " ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"machine: {os.cpu_count()} cores (shared with other work), load average {load}")
    print(f"{len(texts)} texts (handbook markdown chunks, mean {statistics.mean(map(len, texts)):.0f} chars)")

    local = MiniLMEmbedder()
    local.load()
    proc, url = start_server()
    try:
        clients = {c: OpenAIEmbedder("all-MiniLM-L6-v2", url=url, key_env=None, concurrency=c,
                                     tokenizer=f"hf:{local.model_path}") for c in levels}
        for c in clients.values():  # warm-up: the probe, connections, the server's first batches
            embed_texts(c, texts[:64], None)
        embed_texts(local, texts[:64], None)
        times: dict[str, list[float]] = {"in process": []} | {f"endpoint, {c} in flight": [] for c in levels}
        vectors: dict[str, np.ndarray] = {}
        for _ in range(args.repeats):  # interleaved: load from other processes hits each alike
            t = time.perf_counter()
            vectors["in process"] = embed_texts(local, texts, None)
            times["in process"].append(time.perf_counter() - t)
            for c, client in clients.items():
                t = time.perf_counter()
                vectors[f"endpoint, {c} in flight"] = embed_texts(client, texts, None)
                times[f"endpoint, {c} in flight"].append(time.perf_counter() - t)
        base = len(texts) / statistics.median(times["in process"])
        print(f"runtime: {local.backend} in process and in the server")
        print(f"{'':<22} {'texts/s':>8} {'ratio':>6}  cos min vs in process")
        for name, ts in times.items():
            rate = len(texts) / statistics.median(ts)
            ref, got = vectors["in process"], vectors[name]
            cos = float(((ref * got).sum(1)).min())
            print(f"{name:<22} {rate:>8.1f} {rate / base:>5.2f}x  {cos:.6f}")
        billed = sum(c.tokens_used for c in clients.values())
        print(f"tokens billed by the endpoint (usage, all runs): {billed:,}")
        for c, client in clients.items():
            if client.waits:
                print(f"retries at {c} in flight: {len(client.waits)} ({', '.join(w for w, _ in client.waits[:4])})")
        print(f"load average at the end: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
