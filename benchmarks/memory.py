"""Memory and time on big inputs: does a long session grow without bound?

    .venv/bin/python benchmarks/memory.py            # 20 documents of 1-5 MB, then the big bad inputs
    .venv/bin/python benchmarks/memory.py --docs 8 --skip-big

Part 1 loads and chunks N distinct Markdown documents of 1-5 MB in one process with every strategy
that needs no embedding model (default parameters), and prints the resident set size (current
and peak, `resource.getrusage().ru_maxrss`) after 5, 10, 20 ... documents, with the sizes of the
per-document caches (token indexes, structures, sentence units, word pieces). The caches are
LRU-bounded, so RSS must level off once they are full instead of growing with every document.

Part 2 times the big inputs of the reliability tests: a 20 MB document (load, then each strategy),
a 1 MB line without spaces and a 10,000-row table (each strategy).
"""

from __future__ import annotations

import argparse
import gc
import resource
import sys
import tempfile
import time
from pathlib import Path

from _common import big_markdown  # noqa: E402  (puts the repository on sys.path)

from inspector.core.chunking.registry import chunk_document, sentences, strategies
from inspector.core.documents.document import load_document
from inspector.core.text import structure, tokens, wordpieces


def rss_mb() -> float:
    """Current resident set size (Linux: /proc/self/statm), else the peak."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * resource.getpagesize() / 2**20
    except (OSError, ValueError, IndexError):
        return peak_mb()


def peak_mb() -> float:
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / 2**20 if sys.platform == "darwin" else kb / 1024


def names() -> list[str]:
    return [n for n, s in strategies().items() if not s.needs_embedder]


def cache_sizes() -> str:
    return (f"token indexes {len(tokens._INDEXES)}, structures {len(structure._STRUCTURES)}, "
            f"sentence units {len(sentences._UNITS)}, word pieces {len(wordpieces._INDEXES)}")


def write_docs(folder: Path, n: int) -> list[Path]:
    base = {mb: big_markdown(mb * 1_000_000) for mb in range(1, 6)}
    paths = []
    for k in range(n):
        mb = 1 + k % 5
        # Distinct content per document (the caches key on the content hash).
        text = base[mb].replace("# ", f"# D{k} ", 200)
        p = folder / f"doc{k:02d}.md"
        p.write_text(text, encoding="utf-8")
        paths.append(p)
    return paths


def part_memory(n: int) -> None:
    checkpoints = {c for c in (1, 5, 10, 20, 40) if c <= n} | {n}
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_docs(Path(tmp), n)
        gc.collect()
        print(f"{'docs':>5} {'MB read':>8} {'RSS MB':>8} {'peak MB':>8} {'s':>7}  caches")
        print(f"{0:>5} {0:>8} {rss_mb():>8.0f} {peak_mb():>8.0f} {0:>7.1f}  {cache_sizes()}")
        total = 0
        t0 = time.perf_counter()
        for k, p in enumerate(paths, 1):
            doc = load_document(p)
            total += p.stat().st_size
            for name in names():
                chunk_document(doc, name)
            del doc
            if k in checkpoints:
                gc.collect()
                print(f"{k:>5} {total / 1e6:>8.1f} {rss_mb():>8.0f} {peak_mb():>8.0f} "
                      f"{time.perf_counter() - t0:>7.1f}  {cache_sizes()}", flush=True)
        # The first documents again: evicted entries are rebuilt, nothing accumulates.
        for p in paths[:5]:
            doc = load_document(p)
            for name in names():
                chunk_document(doc, name)
        gc.collect()
        print(f"again {total / 1e6:>8.1f} {rss_mb():>8.0f} {peak_mb():>8.0f} "
              f"{time.perf_counter() - t0:>7.1f}  {cache_sizes()}  (first 5 re-chunked)")


def _time_strategies(path: Path, label: str) -> None:
    t = time.perf_counter()
    doc = load_document(path)
    print(f"{label}: {len(doc.text):,} characters, load {time.perf_counter() - t:.2f} s")
    for name in names():
        t = time.perf_counter()
        chunks = chunk_document(doc, name)
        print(f"    {name:<14} {len(chunks):>7} chunks {time.perf_counter() - t:>7.2f} s", flush=True)


def part_big() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        para = ("Parental leave rules apply to employees in Germany and France, with benefits paid "
                "for fourteen months. ") * 4
        parts, size, i = [], 0, 0
        while size < 20_000_000:
            s = f"## Section {i}\n\n" + (para + "\n\n") * 5
            parts.append(s)
            size += len(s)
            i += 1
        (folder / "big20.md").write_text("".join(parts), encoding="utf-8")
        (folder / "one_line.md").write_text("x" * 1_000_000, encoding="utf-8")
        rows = "".join(f"| {i} | item {i} | {i * 3.5} |\n" for i in range(10_000))
        (folder / "table.md").write_text("# Table\n\n| id | name | value |\n|---|---|---|\n" + rows,
                                         encoding="utf-8")
        # The first strategy on each document also pays for its structure and token index.
        _time_strategies(folder / "big20.md", "20 MB Markdown")
        _time_strategies(folder / "one_line.md", "1 MB line without spaces")
        _time_strategies(folder / "table.md", "10,000-row table")
        print(f"peak RSS {peak_mb():.0f} MB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=20, help="documents of 1-5 MB to load and chunk")
    ap.add_argument("--skip-big", action="store_true", help="skip the timing of the big bad inputs")
    ap.add_argument("--skip-memory", action="store_true", help="skip the many-documents part")
    args = ap.parse_args()
    print(f"strategies: {', '.join(names())}")
    if not args.skip_memory:
        part_memory(args.docs)
    if not args.skip_big:
        part_big()


if __name__ == "__main__":
    main()
