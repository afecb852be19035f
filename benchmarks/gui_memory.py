"""Memory of one window session: open 20 large documents one after another; does RSS level off?

    .venv/bin/python benchmarks/gui_memory.py                 # 20 documents of 1-2 MB
    .venv/bin/python benchmarks/gui_memory.py --docs 40 --strategy sentences

Offscreen, one `MainWindow` with its real worker threads. Each generated Markdown document
(distinct content, 1-2 MB) is opened through `open_paths`, as File ▸ Open does, which replaces
the previous one; the script waits until its chunks are complete (word pieces counted) and the
view has painted them, then opens the next. After 1, 5, 10 and 20 documents it prints the resident
set size (VmRSS from /proc/self/status, Linux), the documents still alive in the process (a leak
of the window would keep every opened document), and the sizes of the core's per-document caches,
which are LRU-bounded: RSS must level off once they are full instead of growing with each document.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from _common import big_markdown, vm_hwm_mb, vm_rss_mb  # noqa: E402  (puts the repository on sys.path)


def documents_alive() -> int:
    from inspector.core.documents.document import Document

    return sum(1 for o in gc.get_objects() if isinstance(o, Document))


def cache_sizes() -> str:
    from inspector.core.chunking import sentences
    from inspector.core.text import structure, tokens, wordpieces

    return (f"token indexes {len(tokens._INDEXES)}, structures {len(structure._STRUCTURES)}, "
            f"sentence units {len(sentences._UNITS)}, word pieces {len(wordpieces._INDEXES)}")


def write_docs(folder: Path, n: int) -> list[Path]:
    base = {mb: big_markdown(mb * 1_000_000) for mb in (1, 2)}
    paths = []
    for k in range(n):
        text = base[1 + k % 2].replace("# ", f"# D{k} ", 200)  # distinct content: caches key on it
        p = folder / f"doc{k:02d}.md"
        p.write_text(text, encoding="utf-8")
        paths.append(p)
    return paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=20)
    ap.add_argument("--strategy", default="markdown")
    args = ap.parse_args()

    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([sys.argv[0]])
    from inspector.qt.main_window import MainWindow
    from inspector.qt.settings import ini_store

    checkpoints = {c for c in (1, 5, 10, 20, 40, 80) if c <= args.docs} | {args.docs}
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_docs(Path(tmp), args.docs)
        window = MainWindow(ini_store(str(Path(tmp) / "settings.ini")))
        window.resize(1400, 900)
        window.show()
        window.state.set_strategy(args.strategy)
        app.processEvents()
        gc.collect()
        print(f"strategy {args.strategy}; {args.docs} documents of 1-2 MB, opened one after another")
        print(f"{'docs':>5} {'MB opened':>10} {'RSS MB':>8} {'peak MB':>8} {'docs alive':>10} {'s':>7}  caches")
        print(f"{0:>5} {0:>10} {vm_rss_mb():>8.0f} {vm_hwm_mb():>8.0f} {documents_alive():>10} {0:>7.1f}  "
              f"{cache_sizes()}", flush=True)
        total = 0
        t0 = time.perf_counter()
        for k, p in enumerate(paths, 1):
            if not window.open_paths([str(p)]):
                raise SystemExit(f"could not open {p}: {window.message.text()}")
            total += p.stat().st_size

            def done() -> bool:
                r = window.state.result
                return (r is not None and r.complete and r.request_id == window.runner.latest_id
                        and not window.controller.pending)

            deadline = time.monotonic() + 300
            while not done():
                if time.monotonic() > deadline:
                    raise SystemExit(f"{p.name}: no chunks after 300 s")
                app.processEvents()
                time.sleep(0.005)
            window.view.viewport().repaint()
            app.processEvents()
            if k in checkpoints:
                gc.collect()
                print(f"{k:>5} {total / 1e6:>10.1f} {vm_rss_mb():>8.0f} {vm_hwm_mb():>8.0f} "
                      f"{documents_alive():>10} {time.perf_counter() - t0:>7.1f}  {cache_sizes()}", flush=True)
        window.close()
        app.processEvents()
        gc.collect()
        print(f"closed {total / 1e6:>8.1f} {vm_rss_mb():>8.0f} {vm_hwm_mb():>8.0f} {documents_alive():>10}")


if __name__ == "__main__":
    main()
