"""Helpers shared by the benchmark scripts: the 1 MB document and timing."""

from __future__ import annotations

import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
HANDBOOK = ROOT / "sample_docs" / "handbook.md"


def big_markdown(target_bytes: int = 1_000_000) -> str:
    """The sample handbook repeated to ~1 MB, headings numbered so each copy is distinct."""
    base = HANDBOOK.read_text(encoding="utf-8")
    body = base.split("\n---\n", 1)[1] if base.startswith("---") else base
    parts = []
    i = 0
    while sum(len(p.encode()) for p in parts) < target_bytes:
        i += 1
        parts.append(re.sub(r"^(#{1,6}) (.+)$", lambda m: f"{m.group(1)} {m.group(2)} ({i})", body,
                            flags=re.MULTILINE))
    return "".join(parts)


def chroma_text() -> str:
    """Chroma's five public corpora joined (1.45 MB of text written by others, no repeats;
    benchmarks/data/chroma, MIT): the document beside `big_markdown` that no rule was set on."""
    corpora = sorted((ROOT / "benchmarks" / "data" / "chroma" / "corpora").glob("*.md"))
    return "\n\n".join(p.read_text(encoding="utf-8") for p in corpora)


def forget_document_caches(disk: bool = True) -> None:
    """Empty this process's per-document caches (token and word-piece indexes, structures, the
    detected languages, sentence units, markdown's split points, the widest prefixes), and the
    token indexes, structures and word-piece indexes kept on disk (`tokencache`, `structurecache`,
    `piececache`, in the cache folder in use), so that the next chunking of any document is a
    first one: what every "cold" figure starts from. `disk=False` keeps those on disk: the next
    chunking is then that of a document opened again in a new session."""
    from inspector.core.chunking import fit, markdown, sentences
    from inspector.core.text import (
        language,
        piececache,
        structure,
        structurecache,
        tokencache,
        tokens,
        wordpieces,
    )

    for cache in (tokens._INDEXES, structure._STRUCTURES, structure._OUTLINES, wordpieces._INDEXES, language._LANGUAGES,
                  sentences._UNITS, markdown._UNITS, fit._WIDEST):
        cache.clear()
    if disk:
        for kept in (tokencache.FILES, structurecache.FILES, piececache.FILES):
            kept.forget()


def helpers_rss_mb() -> float:
    """Resident set size of the helper process(es) (`inspector.core.runtime.offload`) in MB: work moved
    there still counts."""
    from inspector.core.runtime import offload

    return sum(_status_mb("VmRSS", pid) for pid in offload.default().pids())


def process_memory() -> str:
    """One line on where this process's memory is (in the helper process: run it as
    `offload.default().call(process_memory)`): resident set, anonymous and file memory, glibc's
    heap (in use / free inside it / mmapped), tracked objects, the core caches' entries, heavy
    modules loaded, and the resident set after a trim."""
    import ctypes
    import gc

    from inspector.core.runtime import heap
    from inspector.core.runtime.lru import SizedLRU

    class _Info(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                   "fsmblks", "uordblks", "fordblks", "keepcost")]

    heap_line = ""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _Info
        m = libc.mallinfo2()
        heap_line = (f"heap in use {m.uordblks / 1e6:.0f} MB, free in heap {m.fordblks / 1e6:.0f} MB, "
                     f"mmapped {m.hblkhd / 1e6:.0f} MB; ")
    except (OSError, AttributeError):
        pass
    rss = _status_mb("VmRSS")
    gc.collect()
    objs = gc.get_objects()
    lrus = [o for o in objs if isinstance(o, SizedLRU) and len(o)]
    heap.trim()
    heavy = ",".join(m for m in ("torch", "transformers", "sentence_transformers", "scipy") if m in sys.modules)
    return (f"RSS {rss:.0f} MB ({_status_mb('VmRSS'):.0f} after a trim; anonymous "
            f"{_status_mb('RssAnon'):.0f}, files {_status_mb('RssFile'):.0f}); {heap_line}{len(objs)} tracked "
            f"objects; caches {len(lrus)} in use, {sum(len(o) for o in lrus)} entries; "
            f"modules {len(sys.modules)} ({heavy or 'no torch'})")


def idle_collector_line(w) -> str:
    """What the window's idle collector (`inspector.qt.idle_gc`) ran."""
    ig = w.idle_gc
    return (f"full collections run by the window's idle collector: {ig.collections} "
            f"({ig.overdue_collections} overdue, run while busy), longest {ig.longest_ms:.0f} ms")


def _status_mb(field: str, pid: int | str = "self") -> float:
    """A memory figure of /proc/<pid>/status in MB (0 where there is none)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def vm_rss_mb() -> float:
    """Current resident set size in MB (VmRSS)."""
    return _status_mb("VmRSS")


def vm_hwm_mb() -> float:
    """Peak resident set size in MB (VmHWM)."""
    return _status_mb("VmHWM")


def timeit(fn: Callable[[], object], repeat: int = 15) -> list[float]:
    """Wall times in milliseconds."""
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def p50(xs: list[float]) -> float:
    return statistics.median(xs)


def p95(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))]


def wait_for(cond: Callable[[], bool], timeout: float) -> bool:
    """Run the Qt event loop until `cond()` holds (True) or `timeout` seconds pass (False)."""
    from PySide6.QtWidgets import QApplication

    end = time.perf_counter() + timeout
    while not cond():
        QApplication.processEvents()
        if time.perf_counter() > end:
            return False
        time.sleep(0.001)
    return True


def settled(w, *, view: bool = False) -> bool:
    """The window's latest chunks are complete and retrieval has settled (`view`: and the document
    view has loaded its text, as tests/qt/test_qt_heartbeat.py waits)."""
    r = w.state.result
    return (r is not None and r.complete and r.request_id == w.runner.latest_id and not w.controller.pending
            and not w.state.busy and not (view and w.view.loading))


def bench_window(tmp: Path, *, strategy: str | None = None, view: bool = False):
    """The real main window as the GUI benchmarks measure it: settings in `tmp`, 1400x900, shown,
    BM25 (no model), `strategy` if given, the sample handbook opened and settled (`settled`)."""
    from inspector.qt.main_window import MainWindow
    from inspector.qt.settings import ini_store

    w = MainWindow(ini_store(str(tmp / "settings.ini")))
    w.resize(1400, 900)
    w.show()
    w.retrieval.set_retriever("bm25")
    if strategy is not None:
        w.state.set_strategy(strategy)
    w.open_paths([str(ROOT / "sample_docs" / "handbook.md")])
    wait_for(lambda: settled(w, view=view), 60)
    return w

