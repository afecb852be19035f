"""A 20-document, 20 MB folder opened and every document chunked: serially in this process, then
in the corpus pool (`offload.corpus_pool`, one process per core: `ChunkStore.chunk_each`), in the
same run; prints seconds and the ratio serial / parallel (issue 31's target: ~2x on 2 cores, the
parallel open at most 4 s).

The documents are built from the Markdown and text of `benchmarks/data` (each document the
texts concatenated from its own starting point, to `--mb` MB in all). Every measured pass uses a
folder of its own (each document begins with a line naming the pass), so no pass is served from
another's caches: the serial pass clears this process's token, structure and word-piece caches,
and the pool's processes have never seen the documents they are given. "pool cold" includes
starting the processes and their imports (the first folder after the window starts); "pool warm"
is a second folder on the running pool. "one pool process" runs the same path with one process:
the pool's processes run at a lower priority than this one (`offload.NICENESS`, so that the
window stays responsive), which on a machine shared with other work makes "serial in this
process" an unfair baseline.

    .venv/bin/python benchmarks/parallel_corpus.py [--strategy fixed_tokens] [--docs 20] [--mb 20]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from _common import ROOT, forget_document_caches

from inspector.core.chunking import helper_jobs
from inspector.core.documents.document import load_paths
from inspector.core.runtime import keptfiles, offload
from inspector.core.workbench.chunk_store import ChunkStore

DATA = ROOT / "benchmarks" / "data"


def sources() -> list[str]:
    """The texts of benchmarks/data (provenance notes and READMEs left out)."""
    files = sorted(p for p in DATA.rglob("*") if p.suffix in (".md", ".txt") and p.is_file()
                   and p.name not in ("PROVENANCE.md", "README.md"))
    return [p.read_text(encoding="utf-8") for p in files]


def build_folder(folder: Path, tag: str, docs: int, total_bytes: int) -> None:
    texts = sources()
    joined = "\n\n".join(texts)
    per_doc = total_bytes // docs
    folder.mkdir(parents=True)
    for n in range(docs):
        start = (n * len(joined)) // docs
        body = [f"# {tag}: document {n + 1}\n\n"]
        size = len(body[0])
        k = 0
        while size < per_doc:
            piece = joined[start:] if k == 0 else joined
            body.append(piece[:per_doc - size])
            size += len(body[-1].encode("utf-8"))
            k += 1
        (folder / f"doc{n + 1:02d}.md").write_text("".join(body), encoding="utf-8")


def pool_cpu_s(pool: offload.Offload | None = None) -> float:
    """CPU seconds the pool's processes have used so far (user + system)."""
    total = 0
    for pid in (pool or offload.corpus_pool()).pids():
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as f:
                fields = f.read().rpartition(")")[2].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, ValueError, IndexError):
            continue
    return total / os.sysconf("SC_CLK_TCK")


def open_and_chunk(folder: Path, strategy: str, parallel: bool, pool: offload.Offload | None = None
                   ) -> tuple[float, int, int]:
    """(seconds, documents, chunks): the folder loaded and every document chunked."""
    t0 = time.perf_counter()
    loaded = load_paths([folder])
    store = ChunkStore()
    chunks = 0
    for _i, got, exc in store.chunk_each(loaded.documents, strategy, None, parallel=parallel, pool=pool):
        if exc is not None:
            raise exc
        chunks += len(got or ())
    return time.perf_counter() - t0, len(loaded.documents), chunks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--strategy", default="fixed_tokens")
    ap.add_argument("--docs", type=int, default=20)
    ap.add_argument("--mb", type=float, default=20.0)
    args = ap.parse_args()
    print(f"cores: {offload.cores()}; load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="parallel-corpus-") as tmp:
        folders = {}
        # Each pass's documents begin with a line naming the pass: "pass 1" to "pass 4", the same
        # length and word pieces, so every pass chunks the same text but for one digit (the pass's
        # own names, whose lengths differ, moved the markdown strategy's count by ~90 chunks: a
        # chunk's heading path is in what it embeds, and fit_embedder counts its word pieces).
        for number, tag in enumerate(("serial", "one process", "pool cold", "pool warm"), 1):
            folders[tag] = Path(tmp) / tag.replace(" ", "_")
            build_folder(folders[tag], f"pass {number}", args.docs, int(args.mb * 1_000_000))
        size = sum(p.stat().st_size for p in folders["serial"].iterdir())
        print(f"folder: {args.docs} documents, {size / 1e6:.1f} MB; strategy {args.strategy} (defaults)")
        forget_document_caches()
        c0 = time.process_time()
        serial, n, count = open_and_chunk(folders["serial"], args.strategy, parallel=False)
        c1 = time.process_time()
        forget_document_caches()
        print(f"serial (this process):      {serial:6.2f} s  ({n} documents, {count:,} chunks; CPU {c1 - c0:.2f} s)")
        one = offload.Offload(enabled=True, warm_up=helper_jobs.corpus_warm_up)  # as the pool, 1 process
        list(one.call_each(offload._pid, [()]))  # started and warmed: only the work is timed
        single, n, count = open_and_chunk(folders["one process"], args.strategy, parallel=True, pool=one)
        print(f"one pool process (warm):    {single:6.2f} s  ({n} documents, {count:,} chunks; CPU there "
              f"{pool_cpu_s(one):.2f} s with its start; at the pool's niceness, a fair 1-core baseline)")
        one.shutdown()
        c0 = time.process_time()
        cold, n, count = open_and_chunk(folders["pool cold"], args.strategy, parallel=True)
        c1, p1 = time.process_time(), pool_cpu_s()
        print(f"parallel, pool cold:        {cold:6.2f} s  ({n} documents, {count:,} chunks; "
              f"{offload.corpus_pool().workers} processes, started in this pass; CPU here {c1 - c0:.2f} s, "
              f"in the pool {p1:.2f} s)")
        warm, n, count = open_and_chunk(folders["pool warm"], args.strategy, parallel=True)
        c2, p2 = time.process_time(), pool_cpu_s()
        print(f"parallel, pool warm:        {warm:6.2f} s  ({n} documents, {count:,} chunks; CPU here "
              f"{c2 - c1:.2f} s, in the pool {p2 - p1:.2f} s)")
        print(f"ratio serial / parallel:    {serial / cold:.2f}x (pool cold), {serial / warm:.2f}x (pool warm); "
              f"one pool process / pool warm: {single / warm:.2f}x")
        print(f"target <= 4 s on 2 cores:   {'met' if warm <= 4 else 'not met'} (pool warm), "
              f"{'met' if cold <= 4 else 'not met'} (pool cold)")
        # A later session: fresh processes, nothing in memory, the "pool cold" pass's token indexes
        # and structures on disk (`keptfiles`).
        offload.shutdown_corpus_pool()
        again, n, count = open_and_chunk(folders["pool cold"], args.strategy, parallel=True)
        kept = "read from disk" if keptfiles.enabled() else f"not kept: ${keptfiles.ENV_VAR} off"
        print(f"opened again, pool cold:    {again:6.2f} s  ({n} documents, {count:,} chunks; the pool cold pass's "
              f"folder in fresh processes, token indexes and structures {kept})")
        forget_document_caches()
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    offload.shutdown_corpus_pool()


if __name__ == "__main__":
    main()
