"""Run every benchmark script in turn (each prints its own figures). `make bench` calls this."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = ["chunking.py", "chunk_health.py", "peers.py", "embed_throughput.py", "query_latency.py",
           "pooled_quality.py", "gui_latency.py", "slider_drag.py", "gui_ask_latency.py", "memory.py",
           "embedding_cache.py", "gui_memory.py", "chroma_repro.py", "embed_devices.py", "generalization.py",
           "defaults.py", "drafted_gold.py", "model_sizes.py --quick"]


def main() -> int:
    failed = []
    for entry in SCRIPTS:
        name, *args = entry.split()
        path = HERE / name
        if not path.exists():
            continue
        print(f"\n===== {entry}", flush=True)
        if subprocess.call([sys.executable, str(path), *args], cwd=HERE) != 0:
            failed.append(name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
