"""The cl100k encoding's load in fresh interpreters (issue 31): `tokens.encoding()` from a cached
image of its parsed ranks ("cached"), with an empty cache folder (the parse, then the image
written: "miss"), and, with `--against DIR`, another checkout's (the base commit's parse: "base").
Wall and CPU milliseconds of the call (tiktoken's import included), medians of `--repeats`
launches taken in turn, so that all meet the same load; the load average is printed beside them.

    .venv/bin/python benchmarks/encoding_load.py [--repeats 9] [--against DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_PROBE = """
import json, time
from inspector.core.text import tokens
w, c = time.perf_counter(), time.process_time()
tokens.encoding()
print(json.dumps([1e3 * (time.perf_counter() - w), 1e3 * (time.process_time() - c)]))
"""


def launch(root: Path, cache: Path) -> tuple[float, float]:
    """(wall ms, CPU ms) of `tokens.encoding()` in a fresh interpreter on `root`'s code."""
    env = {**os.environ, "PYTHONPATH": str(root), "CHUNK_INSPECTOR_CACHE_DIR": str(cache)}
    out = subprocess.run([sys.executable, "-c", _PROBE], cwd=root, env=env, capture_output=True,
                         text=True, check=True, timeout=120)
    wall, cpu = json.loads(out.stdout.strip().splitlines()[-1])
    return wall, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--against", type=Path, default=None, help="another checkout (the base) launched in turn")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        warm = Path(tmp) / "warm"
        launch(ROOT, warm)  # writes the image the "cached" launches read
        kinds: dict[str, tuple[Path, Path | None]] = {"cached": (ROOT, warm), "miss": (ROOT, None)}
        if args.against:
            kinds["base"] = (args.against.resolve(), None)
        times: dict[str, list[tuple[float, float]]] = {k: [] for k in kinds}
        load0 = os.getloadavg()[0]
        for i in range(args.repeats):
            for kind, (root, cache) in kinds.items():
                times[kind].append(launch(root, cache or Path(tmp) / f"empty-{kind}-{i}"))
        load1 = os.getloadavg()[0]
    print(f"tokens.encoding() in fresh interpreters, {args.repeats} each in turn, "
          f"load average {load0:.2f} -> {load1:.2f}")
    for kind, rows in times.items():
        wall = [w for w, _ in rows]
        cpu = [c for _, c in rows]
        print(f"  {kind:6}  wall median {statistics.median(wall):6.1f} ms (range {min(wall):.1f}-{max(wall):.1f}), "
              f"CPU median {statistics.median(cpu):6.1f} ms (range {min(cpu):.1f}-{max(cpu):.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
