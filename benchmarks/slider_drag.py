"""A continuous drag of the size slider on a ~1 MB document. Printed, not asserted.

    python benchmarks/slider_drag.py [--strategy fixed_tokens] [--seconds 3] [--step-ms 30] [--model] [--small]

The size slider is held down (sliderPressed) and moved one notch every `--step-ms` (a mouse
crossing ~6-pixel notches at ~200 px/s), up and down its middle notches, without a pause, for
`--seconds`; then released. The document is the sample handbook repeated to ~1 MB (named
handbook.md, so the sample gold set's 64 questions apply and every re-chunk is scored too).
Measured:

1. chunking requests sent and distinct chunkings painted *during* the drag (a debounce alone sends
   none until the pointer rests; the throttle sends one every ~100 ms);
2. GUI-thread time of one slider move (everything `setValue` runs synchronously: the panel, the
   constraints, the state, the throttle, the trace strip): p50 / p95 / max;
3. event-loop lag during the drag: how late a 5 ms timer fires (a stall of the window shows here,
   whatever caused it: painting new chunks, the table, the statistics): p50 / p95 / max;
4. release -> final position's chunks painted.

`--model` loads the bundled model first, so re-chunks are scored with the pooled preview as in
the real app (minutes the first time: the piece vectors are embedded once, then cached), and adds:

5. release -> exact figures shown, for a release two notches from where the slider rested (a
   position the trace had scored: its exact embeddings are cached) and for a release on a notch
   never visited (pooled preview first, exact after the settle interval and the embedding).

With `--model` the embedding cache is a fresh temporary folder (`$CHUNK_INSPECTOR_CACHE_DIR`), so
"never visited" means it and every run starts cold: the live-preview vectors are embedded first.

`--small` uses the sample handbook itself (95 KB) instead of the ~1 MB copy: with the real model on
a CPU, scoring seven positions of a 1 MB document exactly takes minutes.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.gui_latency import big_markdown, fmt, wait_for  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--strategy", default="fixed_tokens")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--step-ms", type=int, default=30)
    parser.add_argument("--model", action="store_true", help="load the bundled model (pooled preview while dragging)")
    parser.add_argument("--small", action="store_true", help="the 95 KB sample handbook instead of ~1 MB")
    args = parser.parse_args()

    from PySide6.QtCore import QElapsedTimer, QEventLoop, Qt, QTimer

    from inspector.qt.app import create_app, start_helper
    from inspector.qt.main_window import MainWindow
    from inspector.qt.settings import ini_store

    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}, "
          f"QT_QPA_PLATFORM={os.environ['QT_QPA_PLATFORM']}")
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        if args.model:
            os.environ["CHUNK_INSPECTOR_CACHE_DIR"] = str(tmpdir / "cache")  # cold: nothing embedded before
        doc_path = tmpdir / "handbook.md"
        src = (ROOT / "sample_docs" / "handbook.md").read_text(encoding="utf-8")
        doc_path.write_text(src if args.small else big_markdown(), encoding="utf-8")
        app = create_app()
        start_helper(app)  # as the app does (inspector.core.runtime.offload)
        w = MainWindow(ini_store(str(tmpdir / "settings.ini")))  # the app's own debounce and throttle
        w.resize(1400, 900)
        w.show()
        app.processEvents()
        try:
            if args.model:
                w.start_model()
                wait_for(app, lambda: w.retrieval.embedder is not None, timeout=600)
            w.state.set_strategy(args.strategy)
            w.open_paths([str(doc_path)])
            w.gold_panel.open_gold(str(ROOT / "sample_docs" / "handbook.gold.jsonl"))
            wait_for(app, lambda: w.state.result is not None and w.state.result.complete, timeout=300)
            if args.model:
                wait_for(app, lambda: w.retrieval.pooled_ready, timeout=1800)
            wait_for(app, lambda: not w.state.busy and not w.retrieval.runner.busy, timeout=600)
            ctl = w.strategy_panel.control(w.strategy_panel.strategy.param_for_role("size").name)
            slider = ctl.slider
            n_notches = slider.maximum() + 1
            lo, hi = max(0, slider.value() - 4), min(slider.maximum(), slider.value() + 4)
            print(f"\n{args.strategy}, {doc_path.stat().st_size / 1e6:.2f} MB, {len(w.state.result.chunks):,} chunks "
                  f"at size {ctl.value()}; slider of {n_notches} notches, dragged between notches {lo} and {hi} "
                  f"({ctl.value_at(lo)}..{ctl.value_at(hi)}) every {args.step_ms} ms for {args.seconds:g} s"
                  f"{'; model loaded, pooled preview' if args.model else '; no model: BM25 scores'}")

            requested: list[float] = []
            painted: set[int] = set()
            w.controller.requested.connect(lambda _rid: requested.append(time.perf_counter()))
            w.view.painted.connect(lambda: painted.add(w.view.result.request_id) if w.view.result else None)
            move_ms: list[float] = []
            lag_ms: list[float] = []
            clock = QElapsedTimer()
            last = [0.0]

            def tick() -> None:
                now = clock.nsecsElapsed() / 1e6
                if last[0]:
                    lag_ms.append(max(0.0, now - last[0] - 5.0))
                last[0] = now

            direction = [1]

            def move() -> None:
                pos = slider.value() + direction[0]
                if pos > hi or pos < lo:
                    direction[0] = -direction[0]
                    pos = slider.value() + direction[0]
                t0 = time.perf_counter()
                slider.setValue(pos)
                move_ms.append((time.perf_counter() - t0) * 1000)

            lag = QTimer()
            lag.setTimerType(Qt.TimerType.PreciseTimer)
            lag.setInterval(5)
            lag.timeout.connect(tick)
            mover = QTimer()
            mover.setTimerType(Qt.TimerType.PreciseTimer)
            mover.setInterval(args.step_ms)
            mover.timeout.connect(move)
            loop = QEventLoop()
            painted_before = set(w.view.result.request_id for _ in [0]) if w.view.result else set()
            painted.clear()
            slider.setSliderDown(True)
            start = time.perf_counter()
            clock.start()
            lag.start()
            mover.start()
            QTimer.singleShot(int(args.seconds * 1000), loop.quit)
            loop.exec()
            mover.stop()
            lag.stop()
            during_requests = len(requested)
            during_painted = len(painted - painted_before)
            final = ctl.value()
            t_release = time.perf_counter()
            slider.setSliderDown(False)
            wait_for(app, lambda: w.view.result is not None and w.view.result.request_id == w.runner.latest_id
                     and w.view.result.request.params.get(ctl.param.name) == final, timeout=120)
            released = (time.perf_counter() - t_release) * 1000
            sent_at_release = len(requested) - during_requests
            dur = time.perf_counter() - start
            print(f"1. during the drag: {len(move_ms)} moves, {during_requests} chunking requests, "
                  f"{during_painted} new chunkings painted ({during_requests / args.seconds:.1f} requests/s)")
            print(f"2. one slider move on the GUI thread:   {fmt(move_ms)}")
            print(f"3. event-loop lag during the drag:      {fmt(lag_ms)}")
            how = "its own request" if sent_at_release else "already requested by the last throttled request"
            print(f"4. release -> final chunks painted:     {released:.1f} ms (size {final}, {how}; "
                  f"{dur:.1f} s in all)")
            if args.model:
                release_to_exact(app, w, ctl, far=min(slider.maximum(), hi + 5))
        finally:
            w.close()
            app.processEvents()
    return 0


def trace_settled(w) -> bool:
    t, r = w.trace.trace, w.retrieval
    return (t is not None and bool(t.points) and not t.pending and not w.trace.runner.busy and not r.runner.busy
            and not r.exact_pending and not w.state.busy)


def release_to_exact(app, w, ctl, far: int) -> None:
    """Drag to `target` notches and release; the time until the main figures for those chunks are exact."""
    slider = ctl.slider

    def drag_to(pos: int) -> float:
        slider.setSliderDown(True)
        step = 1 if pos > slider.value() else -1
        while slider.value() != pos:
            slider.setValue(slider.value() + step)
            app.processEvents()
        value = ctl.value()
        t0 = time.perf_counter()
        slider.setSliderDown(False)
        wait_for(app, lambda: w.retrieval.result is not None and w.state.result is not None
                 and w.state.result.request.params.get(ctl.param.name) == value
                 and w.retrieval.result.request.chunk_request_id == w.state.result.request_id
                 and w.retrieval.result.mode == "exact", timeout=1800)
        return (time.perf_counter() - t0) * 1000

    t0 = time.perf_counter()
    wait_for(app, lambda: trace_settled(w), timeout=3600)
    traced = sorted(p.value for p in w.trace.trace.scored)
    print(f"   (trace around size {ctl.value()} scored {traced} in {time.perf_counter() - t0:.1f} s after the drag)")
    near = slider.value() + 2
    ms_near = drag_to(near)
    ms_far = drag_to(far)
    print(f"5. release -> exact figures: on a traced notch ({ctl.value_at(near)}) {ms_near:.0f} ms; "
          f"on a notch never visited ({ctl.value_at(far)}) {ms_far:.0f} ms (settle interval "
          f"{w.retrieval.settle_ms} ms included)")


if __name__ == "__main__":
    sys.exit(main())
