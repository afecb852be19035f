"""Opening a PDF the first time and again: the conversion kept on disk (issue 31, `convertcache`).

Times `load_document` on the ten docling test PDFs (benchmarks/data/pdf, MIT) and on one long PDF
made of them (their pages appended `--copies` times, pypdf's writer), three ways:
- first: nothing kept (the folder emptied), the built-in backend converts every page;
- again, this process: the same file, its conversion read from the disk;
- again, a new process: `python -c "load_document(...)"`, timed inside it (the call, after the
  import of `load_document`) and whole (the interpreter's start and imports included), as a user
  who opens it tomorrow meets it.
Every document read back is checked equal to the one converted (text, kind, meta but the flag).

    .venv/bin/python benchmarks/pdf_open.py [--copies 8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, p50

from inspector.core.documents import convertcache
from inspector.core.documents.document import load_document
from inspector.core.runtime import keptfiles

PDFS = sorted((ROOT / "benchmarks" / "data" / "pdf").glob("*.pdf"))

_CHILD = """
import sys, time
from inspector.core.documents.document import load_document
t = time.perf_counter()
doc = load_document(sys.argv[1])
print(time.perf_counter() - t, doc.meta.get("conversion_kept", False))
"""


def long_pdf(folder: Path, copies: int) -> Path:
    """The ten PDFs' pages, `copies` times over, in one file."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    readers = [PdfReader(str(pdf)) for pdf in PDFS]
    for _ in range(copies):
        for reader in readers:
            for page in reader.pages:
                writer.add_page(page)
    path = folder / f"docling_x{copies}.pdf"
    with open(path, "wb") as fh:
        writer.write(fh)
    return path


def _timed(path: Path):
    t = time.perf_counter()
    doc = load_document(path)
    return time.perf_counter() - t, doc


def measure(path: Path, repeat: int) -> tuple[list[float], list[float], list[float], list[float], int]:
    first, again, child_call, child_whole = [], [], [], []
    pages = 0
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for _ in range(repeat):
        convertcache.FILES.forget()
        t, built = _timed(path)
        first.append(t)
        pages = built.meta.get("pages", 0)
        keptfiles.flush()
        t, read = _timed(path)
        again.append(t)
        assert read.meta.get(convertcache.KEPT_FLAG), "not read back"
        assert read.text == built.text and read.kind == built.kind
        assert {k: v for k, v in read.meta.items() if k != convertcache.KEPT_FLAG} == built.meta
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", _CHILD, str(path)], env=env, check=True,
                             capture_output=True, text=True).stdout.split()
        child_whole.append(time.perf_counter() - t0)
        assert out[1] == "True", "the new process converted it again"
        child_call.append(float(out[0]))
    return first, again, child_call, child_whole, pages


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--copies", type=int, default=8, help="copies of the ten PDFs' pages in the long one")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if not keptfiles.enabled():
        raise SystemExit(f"${keptfiles.ENV_VAR} is off: nothing would be kept")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["CHUNK_INSPECTOR_CACHE_DIR"] = tmp  # this run's own folder: the user's untouched
        print(f"{'file':<34} {'pages':>5} {'first':>8} {'again':>8} {'new process: call':>18} {'whole':>7}")
        sums = [0.0, 0.0, 0.0]
        for path in [*PDFS, long_pdf(Path(tmp), args.copies)]:
            first, again, call, whole, pages = measure(path, args.repeat)
            print(f"{path.name:<34} {pages:>5} {p50(first):>7.3f}s {p50(again) * 1e3:>6.1f}ms "
                  f"{p50(call) * 1e3:>16.1f}ms {p50(whole):>6.2f}s")
            if path in PDFS:
                sums[0] += p50(first)
                sums[1] += p50(again)
                sums[2] += p50(call)
        print(f"{'the ten files':<34} {'':>5} {sums[0]:>7.3f}s {sums[1] * 1e3:>6.1f}ms {sums[2] * 1e3:>16.1f}ms")
        size = sum(p.stat().st_size for p in convertcache.FILES.folder(Path(tmp)).glob("*"))
        print(f"kept on disk after the last file: {size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
