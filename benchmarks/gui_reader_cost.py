"""What filling the Reader's cards costs the GUI thread, offscreen. Printed, not asserted.

    .venv/bin/python benchmarks/gui_reader_cost.py [--questions 40]

The handbook (`markdown`, BM25, no model), each gold question asked once; then, per question, the
Reader is emptied and filled again with that question's result (`Reader.show_result`, events
processed). Timed in the GUI thread's CPU time (`time.thread_time`), not wall time, so that other
processes on a shared machine do not blur the figure. k = 5 and k = 10.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from _common import HANDBOOK, ROOT, p50, p95  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=40)
    args = parser.parse_args()
    from inspector.core.documents.document import load_paths
    from inspector.core.evaluation.gold import load_gold
    from inspector.qt.app import create_app
    from inspector.qt.controllers.chunk_jobs import ChunkRunner
    from inspector.qt.main_window import MainWindow
    from inspector.qt.settings import ini_store

    app = create_app()
    tmp = Path(tempfile.mkdtemp())
    doc = tmp / "handbook.md"
    shutil.copy(HANDBOOK, doc)  # a copy: the audit file goes beside it
    qs = [q.question for q in load_gold(ROOT / "sample_docs" / "handbook.gold.jsonl",
                                        load_paths([str(doc)]).documents).questions][:args.questions]
    w = MainWindow(ini_store(str(tmp / "s.ini")), runner=ChunkRunner(synchronous=True), debounce_ms=0,
                   synchronous_retrieval=True)
    w.resize(1400, 900)
    w.show()
    app.processEvents()
    w.retrieval.set_retriever("bm25")
    w.state.set_strategy("markdown")
    w.open_paths([str(doc)])
    w.reader_dock.show()
    w.reader_dock.raise_()
    app.processEvents()
    for k in (5, 10):
        w.retrieval.set_k(k)
        results = []
        for q in qs:
            w.retrieval.ask(q)
            app.processEvents()
            results.append(w.retrieval.result)
        ms = []
        for r in results:
            w.reader.show_result(None)
            app.processEvents()
            t = time.thread_time()
            w.reader.show_result(r)
            app.processEvents()
            ms.append((time.thread_time() - t) * 1000)
        print(f"Reader filled, k={k:2d}: p50 {p50(ms):5.1f} ms   p95 {p95(ms):5.1f} ms   (GUI-thread CPU, n={len(ms)})")
    w.close()
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
