"""GUI latency, measured on the real widgets offscreen. Printed, not asserted.

    python benchmarks/gui_latency.py [--repeats 30]

1. Slider change -> overlays repainted, on a ~1 MB Markdown document (the sample handbook repeated
   with numbered headings), for fixed_chars, fixed_tokens, sentences and markdown. The clock runs
   from setting the size control (as a drag does) to the end of the first viewport paint that shows
   the new chunks; the debounce interval is set to 0 here and reported apart (it is a deliberate
   100 ms wait for the user to stop dragging). "complete" adds the embedder word-piece stage.
   Targets: p50 <= 50 ms, p95 <= 100 ms for the window strategies, p95 <= 200 ms for markdown.
2. Scroll repaint with ~20,000 chunks (fixed_chars): one page down, then a synchronous repaint of
   the text, the gutter and the flag column. Target: p95 <= 16 ms.
3. Launch to window visible, in a fresh interpreter (`python -m inspector`). Target: <= 2 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SLIDER_SIZES = {
    "fixed_chars": [480, 500, 520, 540, 560, 580, 600],
    "fixed_tokens": [200, 208, 216, 224, 232, 240, 248],
    "sentences": [200, 208, 216, 224, 232, 240, 248],
    "markdown": [240, 256, 272, 288, 304, 320, 336],
}


def big_markdown(target_chars: int = 1_000_000) -> str:
    src = (ROOT / "sample_docs" / "handbook.md").read_text(encoding="utf-8")
    body = src.split("---\n", 2)[2] if src.startswith("---") else src
    parts, n, i = [], 0, 0
    while n < target_chars:
        i += 1
        part = f"# Part {i}\n\n{body}\n"
        parts.append(part)
        n += len(part)
    return "".join(parts)


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    k = (len(s) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def fmt(values: list[float]) -> str:
    return f"p50 {pct(values, 0.5):6.1f} ms   p95 {pct(values, 0.95):6.1f} ms   max {max(values):6.1f} ms"


def wait_for(app, cond, timeout: float = 60.0) -> None:
    end = time.perf_counter() + timeout
    while not cond():
        app.processEvents()
        if time.perf_counter() > end:
            raise TimeoutError("condition not met")
        time.sleep(0.0005)


def make_window(tmp: Path):
    from inspector.qt.app import create_app, start_helper
    from inspector.qt.main_window import MainWindow
    from inspector.qt.settings import ini_store

    app = create_app()

    start_helper(app)  # as the app does (inspector.core.runtime.offload)
    w = MainWindow(ini_store(str(tmp / "settings.ini")), debounce_ms=0)
    w.resize(1400, 900)
    w.show()
    app.processEvents()
    return app, w


def slider_latency(app, w, doc_path: Path, repeats: int) -> None:
    print(f"\n1. Slider change -> overlays repainted ({doc_path.stat().st_size / 1e6:.2f} MB Markdown, "
          f"debounce excluded: {100} ms by design)")
    painted = {"rid": -1, "t": 0.0}

    def on_paint():
        r = w.view.result
        if r is not None:
            painted["rid"], painted["t"] = r.request_id, time.perf_counter()

    w.view.painted.connect(on_paint)
    w.open_paths([str(doc_path)])
    wait_for(app, lambda: w.state.result is not None and w.state.result.complete)
    for strategy, sizes in SLIDER_SIZES.items():
        w.state.set_strategy(strategy)
        wait_for(app, lambda: w.state.result is not None and w.state.result.complete
                 and w.state.result.request.strategy == strategy)
        # Warm up once (first run of a strategy builds its per-document caches).
        w.strategy_panel.set_value("size", sizes[-1])
        wait_for(app, lambda: not w.state.busy)
        first, complete, chunks = [], [], 0
        for k in range(repeats):
            size = sizes[k % len(sizes)]
            if size == w.strategy_panel.values()["size"]:
                size = sizes[(k + 1) % len(sizes)]
            t0 = time.perf_counter()
            w.strategy_panel.set_value("size", size)
            rid_target = [None]

            def shown() -> bool:
                rid = w.runner.latest_id
                rid_target[0] = rid
                return painted["rid"] == rid and not w.controller.pending

            wait_for(app, shown)
            first.append((painted["t"] - t0) * 1000)
            wait_for(app, lambda: w.state.result is not None and w.state.result.complete
                     and w.state.result.request_id == rid_target[0])
            complete.append((time.perf_counter() - t0) * 1000)
            chunks = len(w.state.result.chunks)
        print(f"   {strategy:<13} ({chunks:>5} chunks)  repainted: {fmt(first)}")
        print(f"   {'':<13} {'':>14}  complete:  {fmt(complete)}")


def scroll_latency(app, w, doc_path: Path, repeats: int) -> None:
    w.state.set_strategy("fixed_chars")
    w.strategy_panel.set_value("overlap", 0)
    w.strategy_panel.set_value("size", 50)
    wait_for(app, lambda: w.state.result is not None and w.state.result.complete
             and w.state.result.request.params.get("size") == 50, timeout=120)
    n = len(w.state.result.chunks)
    view = w.view
    sb = view.verticalScrollBar()
    sb.setValue(sb.maximum() // 3)
    app.processEvents()
    times, segs = [], 0
    for _ in range(repeats * 3):
        sb.setValue(min(sb.maximum(), sb.value() + sb.pageStep()))
        t0 = time.perf_counter()
        view.viewport().repaint()
        view.gutter.repaint()
        view.flag_column.repaint()
        times.append((time.perf_counter() - t0) * 1000)
        segs = len(view.last_paint.segments) if view.last_paint else 0
        app.processEvents()
    print(f"\n2. Scroll repaint, {n:,} chunks in the document ({segs} runs on screen): {fmt(times)}")


def launch_latency(repeats: int = 5) -> None:
    visible, painted = [], []
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "CHUNK_INSPECTOR_SMOKE": "1", "CHUNK_INSPECTOR_SETTINGS": str(Path(tmp) / "s.ini"),
               "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
        for _ in range(repeats):
            t0 = time.perf_counter()
            proc = subprocess.Popen([sys.executable, "-m", "inspector"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True)
            assert proc.stdout is not None
            for line in proc.stdout:
                if line.startswith("visible"):
                    visible.append(time.perf_counter() - t0)
                elif line.startswith("chunks"):
                    painted.append(time.perf_counter() - t0)
            proc.wait(120)
    print(f"\n3. Launch (fresh interpreter, bundled handbook): window visible "
          f"median {statistics.median(visible):.2f} s (max {max(visible):.2f} s); first chunks painted "
          f"median {statistics.median(painted):.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, QT_QPA_PLATFORM={os.environ['QT_QPA_PLATFORM']}")
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        doc_path = tmpdir / "big.md"
        doc_path.write_text(big_markdown(), encoding="utf-8")
        app, w = make_window(tmpdir)
        try:
            slider_latency(app, w, doc_path, args.repeats)
            scroll_latency(app, w, doc_path, args.repeats)
        finally:
            w.close()
            app.processEvents()
    launch_latency()
    return 0


if __name__ == "__main__":
    sys.exit(main())
