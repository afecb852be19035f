"""The embedding cache with many vectors on disk: what a process holds after loading it, how long
the load takes, and get_many of hit keys served from disk and from memory.

    .venv/bin/python benchmarks/embedding_cache.py                  # 200,000 x 384-d, 5,000 lookups
    .venv/bin/python benchmarks/embedding_cache.py --n 50000 --lookups 2000
    git show main:inspector/core/embedding/cache.py > /tmp/main_cache.py
    .venv/bin/python benchmarks/embedding_cache.py --cache-module /tmp/main_cache.py   # another version

The cache is written once (--segments files, 10 by default, by a child process) into --folder
(default benchmarks/out/embedding-cache-N-DIM, reused while it holds N records in that many files);
the measurement runs in a fresh child, so the resident set is the reader's alone. With more than
16 segments (`--segments 20`) the load merges them into one (compaction), which the load time and
the peak resident set then include. The segment files were just written or
read, so they are in the OS page cache: "from disk" means from the page cache through read calls.
`--cache-module` loads the cache module from a file (the segment format is the same in both).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import struct
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import numpy as np
from _common import ROOT, p50, timeit, vm_hwm_mb, vm_rss_mb  # (puts the repository on sys.path)

MODEL = "benchmark-model"


def key(i: int) -> bytes:
    return hashlib.sha256(f"benchmark text {i}".encode()).digest()


def cache_module(path: str | None) -> ModuleType:
    if path is None:
        from inspector.core.embedding import cache

        return cache
    spec = importlib.util.spec_from_file_location("cache_under_test", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def on_disk(folder: Path) -> tuple[int, int]:
    """(segment files, records their headers announce), read without loading a cache."""
    files = sorted(folder.rglob("*.emb"))
    records = 0
    for p in files:
        with open(p, "rb") as fh:
            head = fh.read(20)
        records += struct.unpack("<8sIII", head)[2] if len(head) == 20 else 0
    return len(files), records


def write(folder: Path, n: int, dim: int, segments: int) -> None:
    from inspector.core.embedding import cache as cache_mod

    cache_mod.MAX_SEGMENTS = max(cache_mod.MAX_SEGMENTS, segments)  # as many files as asked for
    cache = cache_mod.EmbeddingCache(folder, memory_bytes=0)
    cache.clear()
    step = -(-n // segments)
    rng = np.random.default_rng(0)
    for start in range(0, n, step):
        ids = range(start, min(n, start + step))
        vecs = rng.standard_normal((len(ids), dim)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        cache.put_many(MODEL, [key(i) for i in ids], vecs)
        cache.flush()


def measure(folder: Path, n: int, dim: int, lookups: int, module: str | None) -> None:
    mod = cache_module(module)
    rng = np.random.default_rng(1)
    sets = [[key(int(i)) for i in rng.choice(n, lookups, replace=False)] for _ in range(6)]
    segments = on_disk(folder)[0]
    rss0 = vm_rss_mb()
    cache = mod.EmbeddingCache(folder)
    t = time.perf_counter()
    cache.get_many(MODEL, [], dim)  # loads the model's segments
    load_s = time.perf_counter() - t
    rss_load = vm_rss_mb()
    t = time.perf_counter()
    found = cache.get_many(MODEL, sets[0], dim)
    first_ms = (time.perf_counter() - t) * 1000
    assert len(found) == lookups, f"{len(found)} of {lookups} keys found"
    del found
    rss_lookup = vm_rss_mb()
    # Sets not asked for yet are read from the files (main's version holds them all in a dict).
    disk = [timeit(lambda s=s: cache.get_many(MODEL, s, dim), repeat=1)[0] for s in sets[1:]]
    memory = timeit(lambda: cache.get_many(MODEL, sets[-1], dim), repeat=15)
    label = module or "this checkout"
    print(f"embedding cache ({label}): {n:,} vectors of {dim} floats on disk "
          f"({sum(p.stat().st_size for p in folder.rglob('*.emb')) / 1e6:,.0f} MB, {segments} segment files "
          f"before the load)")
    print(f"  resident set: {rss0:,.0f} MB before, {rss_load:,.0f} MB after load (+{rss_load - rss0:,.0f}), "
          f"{rss_lookup:,.0f} MB after a lookup of {lookups:,} keys (+{rss_lookup - rss0:,.0f}); "
          f"peak {vm_hwm_mb():,.0f} MB")
    print(f"  load: {load_s:.2f} s")
    print(f"  get_many of {lookups:,} hit keys: first {first_ms:.1f} ms; keys not asked before "
          f"p50 {p50(disk):.1f} ms ({len(disk)} sets); the same keys again p50 {p50(memory):.1f} ms")
    if hasattr(cache, "memory_stats"):
        m = cache.memory_stats()
        print(f"  memory layer {m.memory_entries:,} vectors, {m.memory_bytes / 1e6:.1f} of "
              f"{m.memory_limit / 1e6:.0f} MB; index {m.disk_keys:,} keys, {m.index_bytes / 1e6:.1f} MB, "
              f"{m.segments} segments")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=200_000, help="vectors on disk")
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--lookups", type=int, default=5_000, help="keys per get_many")
    ap.add_argument("--segments", type=int, default=10, help="segment files to write the vectors in")
    ap.add_argument("--folder", type=Path, default=None)
    ap.add_argument("--cache-module", default=None, help="load EmbeddingCache from this file instead")
    ap.add_argument("--role", choices=("write", "measure"), default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    folder = args.folder or ROOT / "benchmarks" / "out" / f"embedding-cache-{args.n}-{args.dim}"
    if args.role == "write":
        write(folder, args.n, args.dim, args.segments)
        return
    if args.role == "measure":
        measure(folder, args.n, args.dim, args.lookups, args.cache_module)
        return
    common = [sys.executable, __file__, "--n", str(args.n), "--dim", str(args.dim), "--folder", str(folder)]
    if on_disk(folder) != (args.segments, args.n):
        subprocess.run(common + ["--role", "write", "--segments", str(args.segments)], check=True)
    subprocess.run(common + ["--role", "measure", "--lookups", str(args.lookups)]
                   + (["--cache-module", args.cache_module] if args.cache_module else []), check=True)


if __name__ == "__main__":
    main()
