"""The longest GUI-thread pause while opening and dragging over hostile inputs. Printed, not asserted.

    .venv/bin/python benchmarks/gui_heartbeat.py                  # every input
    .venv/bin/python benchmarks/gui_heartbeat.py --only line --watchdog

A 5 ms heartbeat timer on the GUI thread (`inspector.qt.heartbeat.Heartbeat`) records the largest
gap between its ticks: the time the window could neither repaint nor take a click. For each input
the real window (offscreen, its own worker threads, no embedding model: BM25 answers) opens the
file as File ▸ Open does (big inputs load in the background), waits for complete chunks, then
drags the size slider of each strategy through 8 values, one every 30 ms as a hand drags, and
waits for the chunks to settle. Inputs:

* every file of tests/data/bad (bad ones are refused with a message),
* a 1 MB single line without spaces or newlines,
* a 10,000-row Markdown table,
* a 288-page PDF (docling's test PDFs' pages eight times over: its pages read in the corpus pool),
* a 20 MB Markdown document (the handbook repeated).

Target: no pause over 50 ms. `--watchdog` also samples the GUI thread's stack during each long
pause and prints where the time went (for profiling; it costs a little itself).
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
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from _common import ROOT, bench_window, big_markdown, idle_collector_line, settled, wait_for  # noqa: E402  (puts the repository on sys.path)

BAD = ROOT / "tests" / "data" / "bad"
#: Strategies dragged on every input, and the sizes the slider passes through.
DRAGS = {"recursive": [96, 112, 128, 160, 192, 224, 256, 288], "fixed_chars": [300, 340, 380, 420, 460, 500, 540, 580],
         "markdown": [160, 192, 224, 256, 288, 320, 352, 384]}


def make_inputs(tmp: Path, only: str | None) -> list[tuple[str, Path]]:
    """(label, path) of every input, generated into `tmp` where needed."""
    out: list[tuple[str, Path]] = []
    if only in (None, "bad"):
        out += [(f"bad/{p.name}", p) for p in sorted(BAD.iterdir()) if p.is_file() and p.name != "README"
                and not p.name.startswith(".")]
        p = tmp / "latin1_3mb.md"  # its encoding is guessed (charset-normalizer): not on the GUI thread
        p.write_bytes((BAD / "latin1.md").read_bytes() * 40_000)
        out.append(("2.8 MB Latin-1", p))
    if only in (None, "line"):
        p = tmp / "one_line_1mb.txt"
        p.write_text(("abcdefghij" * 100_000), encoding="utf-8")
        out.append(("1 MB single line", p))
    if only in (None, "table"):
        p = tmp / "table_10k.md"
        rows = "".join(f"| {i} | item {i} | {i * 7 % 1000} | note {i % 13} |\n" for i in range(10_000))
        p.write_text("# Table\n\n| id | name | value | note |\n|---|---|---|---|\n" + rows, encoding="utf-8")
        out.append(("10,000-row table", p))
    if only in (None, "pdf"):
        # docling's ten test PDFs' pages eight times over (benchmarks/data/pdf, MIT): its pages
        # read on the corpus pool's processes while the window waits (`pdf_convert`).
        from pdf_open import long_pdf

        out.append(("288-page PDF", long_pdf(tmp, 8)))
    if only in (None, "big"):
        p = tmp / "big_20mb.md"
        p.write_text(big_markdown(20_000_000), encoding="utf-8")
        out.append(("20 MB document", p))
    return out


def run_input(app, w, hb, label: str, path: Path, timeout: float) -> tuple[float, float, str]:
    """Open `path`, then drag; returns (worst open pause, worst drag pause, note)."""
    hb.phase(f"{label}|open")
    before = w.state.document
    w.messages.last_error = ""
    w.open_user_paths([str(path)])
    opened = wait_for(lambda: w.state.document is not before or bool(w.messages.last_error), timeout)
    if w.state.document is before:
        return hb.max_for(f"{label}|open"), 0.0, "refused: " + (w.messages.last_error or "?")[:60]
    if not opened or not wait_for(lambda: settled(w, view=True), timeout):
        return hb.max_for(f"{label}|open"), 0.0, "timed out opening"
    note = f"{len(w.state.document.text):,} chars"
    drag_note = []
    for strategy, sizes in DRAGS.items():
        hb.phase(f"{label}|switch {strategy}")
        w.strategy_panel.set_strategy(strategy)
        if not wait_for(lambda: settled(w) and w.state.result.request.strategy == strategy, timeout):
            drag_note.append(f"{strategy} timed out")
            continue
        hb.phase(f"{label}|drag {strategy}")
        t0 = time.perf_counter()
        for v in sizes:
            w.strategy_panel.set_value("size", v)
            end = time.perf_counter() + 0.030
            while time.perf_counter() < end:
                app.processEvents()
                time.sleep(0.002)
        ok = wait_for(lambda: settled(w) and w.state.params.get("size") == sizes[-1], timeout)
        drag_note.append(f"{strategy} {len(w.state.result.chunks):,} chunks, settled in "
                         f"{time.perf_counter() - t0:.1f} s" + ("" if ok else " (timed out)"))
    return hb.max_for(f"{label}|open"), hb.max_for(f"{label}|drag") or hb.max_for(f"{label}|switch"), \
        note + "; " + "; ".join(drag_note)


class GcTimes:
    """Every collection the cyclic garbage collector runs (any thread), timed with gc.callbacks:
    a full one holds the GIL, so its length is a GUI pause whichever thread triggered it."""

    def __init__(self) -> None:
        import gc

        self.counts = [0, 0, 0]
        self.worst = [0.0, 0.0, 0.0]
        self._t0 = 0.0
        gc.callbacks.append(self._cb)

    def _cb(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._t0 = time.perf_counter()
            return
        g = info["generation"]
        self.counts[g] += 1
        self.worst[g] = max(self.worst[g], (time.perf_counter() - self._t0) * 1000)

    def line(self) -> str:
        return ", ".join(f"gen{g}: {n} (longest {ms:.0f} ms)" for g, (n, ms) in
                         enumerate(zip(self.counts, self.worst, strict=True)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=("bad", "line", "table", "pdf", "big"), help="one group of inputs")
    ap.add_argument("--watchdog", action="store_true", help="sample the GUI thread's stack in long pauses")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds to wait for one step")
    args = ap.parse_args()

    from inspector.qt.app import create_app, start_helper
    from inspector.qt.heartbeat import Heartbeat

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        # Nothing kept from an earlier run (a PDF's conversion, a long text's token index), in
        # this process or its helpers: every input opens for the first time.
        os.environ["CHUNK_INSPECTOR_CACHE_DIR"] = str(tmp / "cache")
        app = create_app()
        start_helper(app)  # as the app does: large chunking and BM25 jobs in the helper process
        w = bench_window(tmp)
        inputs = make_inputs(tmp, args.only)
        hb = Heartbeat(threshold_ms=50.0, watchdog=args.watchdog)
        # The noise floor: the window idle for 3 s. On a loaded machine the OS alone delays the
        # GUI thread now and then; a pause no longer than this says nothing about the window.
        gct = GcTimes()
        gc.collect()  # the window's idle collector would run this one inside the idle phase below
        hb.start("idle")
        wait_for(lambda: False, 3.0)
        print(f"idle window, 3 s: worst gap {hb.max_for('idle'):.0f} ms (the noise floor of this machine now; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
        print(f"{'input':<32} {'open max':>9} {'drag max':>9}   notes")
        rows = []
        for label, path in inputs:
            o, d, note = run_input(app, w, hb, label, path, args.timeout)
            rows.append((label, o, d))
            print(f"{label:<32} {o:7.0f} ms {d:7.0f} ms   {note}", flush=True)
        hb.stop()
        worst = max(rows, key=lambda r: max(r[1], r[2]))
        print(f"\nworst pause: {max(worst[1], worst[2]):.0f} ms ({worst[0]}); "
              f"pauses over 50 ms: {len(hb.pauses)} (target: none)")
        print(f"garbage collections during the run: {gct.line()}")
        print(idle_collector_line(w))
        if args.watchdog:
            for p in hb.worst(8):
                busy = f"  busy meanwhile:\n{p.others}" if p.others else ""
                print(f"\n{p.ms:.0f} ms in {p.label}:\n{p.stack}{busy}")
        w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
