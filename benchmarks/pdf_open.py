"""Opening a PDF the first time and again: the conversion kept on disk (issue 31, `convertcache`).

Times `load_document` on the ten docling test PDFs (benchmarks/data/pdf, MIT) and on one long PDF
made of them (their pages appended `--copies` times, pypdf's writer), three ways:
- first: nothing kept (the folder emptied), the built-in backend converts every page (a PDF of
  `pdf_convert.PARALLEL_PAGES_AT_LEAST` pages or more: in ranges on the corpus pool's processes,
  and once a round in this process alone, for the ratio);
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

from inspector.core.documents import convertcache, pdf_convert
from inspector.core.documents.document import load_document
from inspector.core.runtime import keptfiles, offload

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


def _serial_first(path: Path) -> float:
    """A first opening with every page read in this process (no corpus pool)."""
    saved = pdf_convert.PARALLEL_PAGES_AT_LEAST
    pdf_convert.PARALLEL_PAGES_AT_LEAST = 1 << 30
    try:
        convertcache.FILES.forget()
        return _timed(path)[0]
    finally:
        pdf_convert.PARALLEL_PAGES_AT_LEAST = saved


def measure(path: Path, repeat: int, serial: list[float]
            ) -> tuple[list[float], list[float], list[float], list[float], int]:
    """Each round: (a first opening with the pages in one process, into `serial`, for a PDF long
    enough for the pool), a first opening, again in this process, again in a new process."""
    from pypdf import PdfReader

    first, again, child_call, child_whole = [], [], [], []
    pages = len(PdfReader(str(path)).pages)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for _ in range(repeat):
        if pages >= pdf_convert.PARALLEL_PAGES_AT_LEAST:
            serial.append(_serial_first(path))
        convertcache.FILES.forget()
        t, built = _timed(path)
        first.append(t)
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


def folder(tmp: Path, repeat: int, longs: tuple[int, ...] = (1, 2, 3)) -> None:
    """A folder of the ten PDFs and, for each of `longs`, one made of their pages that many times
    (1, 2, 3: 36, 72, 108 pages), opened first with its PDFs in the corpus pool and with every file
    in this process (alternating, the conversions forgotten before each), then again."""
    import shutil

    from inspector.core.documents import document
    from inspector.core.documents.document import load_paths

    where = tmp / f"folder{len(longs)}"
    where.mkdir()
    for pdf in PDFS:
        shutil.copyfile(pdf, where / pdf.name)
    for copies in longs:
        long_pdf(where, copies)
    pooled, alone, again = [], [], []
    saved = document.PARALLEL_PDFS_AT_LEAST
    for _ in range(repeat):
        for times, rule in ((pooled, saved), (alone, 1 << 30)):
            document.PARALLEL_PDFS_AT_LEAST = rule
            convertcache.FILES.forget()
            t = time.perf_counter()
            got = load_paths([where])
            times.append(time.perf_counter() - t)
        document.PARALLEL_PDFS_AT_LEAST = saved
        keptfiles.flush()
        t = time.perf_counter()
        assert load_paths([where]).documents == got.documents
        again.append(time.perf_counter() - t)
    print(f"\nfolder of {len(got.documents)} PDFs ({sum(d.meta['pages'] for d in got.documents)} pages), "
          f"load_paths, min / median of {repeat}: PDFs in the corpus pool ({offload.allowed_cores()} processes) "
          f"{min(pooled):.2f} / {p50(pooled):.2f} s, every file in this process {min(alone):.2f} / "
          f"{p50(alone):.2f} s ({p50(alone) / p50(pooled):.2f}x); again (kept) {p50(again) * 1e3:.0f} ms")


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
            serial: list[float] = []
            first, again, call, whole, pages = measure(path, args.repeat, serial)
            print(f"{path.name:<34} {pages:>5} {p50(first):>7.3f}s {p50(again) * 1e3:>6.1f}ms "
                  f"{p50(call) * 1e3:>16.1f}ms {p50(whole):>6.2f}s")
            if serial:
                print(f"  its pages in the corpus pool ({offload.cores()} processes): first {min(first):.2f} / "
                      f"{p50(first):.2f} s (min / median; the pool's start in the first round), in this "
                      f"process alone: {min(serial):.2f} / {p50(serial):.2f} s, "
                      f"{p50(serial) / p50(first):.2f}x")
            if path in PDFS:
                sums[0] += p50(first)
                sums[1] += p50(again)
                sums[2] += p50(call)
        print(f"{'the ten files':<34} {'':>5} {sums[0]:>7.3f}s {sums[1] * 1e3:>6.1f}ms {sums[2] * 1e3:>16.1f}ms")
        folder(Path(tmp), args.repeat, ())
        folder(Path(tmp), args.repeat)
        size = sum(p.stat().st_size for p in convertcache.FILES.folder(Path(tmp)).glob("*"))
        print(f"kept on disk after the last file: {size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
