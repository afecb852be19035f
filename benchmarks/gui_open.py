"""Where the wall time of opening a big document in the window goes. Printed, not asserted.

    .venv/bin/python benchmarks/gui_open.py                       # 20 MB and 1 MB, 3 opens each
    .venv/bin/python benchmarks/gui_open.py --mb 20 --repeats 1 --profile 25

The real window (offscreen, 1400x900, BM25 retriever, `recursive` strategy, the app's helper
process started as `qt.app.start_helper` starts it) opens a Markdown document made of the sample
handbook repeated (as tests/qt/test_qt_heartbeat.py's hostile-inputs test makes its 20 MB one),
through `open_user_paths` as File ▸ Open does, and the clock marks, from the call:

* `document`: the document is the window's (loaded and decoded on the loader thread, applied);
* `chunks`: the first chunk result of the document is in the state (possibly incomplete);
* `overlays`: the first viewport paint showing chunk overlays of the document ended (issue 31's
  "File ▸ Open to overlays painted", target <= 400 ms for 1 MB);
* `complete`: the complete result (word pieces and all) is in the state;
* `painted`: the first viewport paint showing that complete result's overlays ended;
* `loaded`: the view holds the whole text (it loads in slices, one per event-loop turn);
* `settled`: as the heartbeat test waits for: complete, retrieval settled, view loaded.

Each document is written afresh for every open (its own path and a distinct first line), so no
per-document cache of an earlier open answers. With `--again`, every open of a size after its
first is of the same text as that first (on a new path), after the helper process was stopped and
this process's per-document caches emptied: a document opened again in a later session, its
token index, structure and word pieces read from the disk cache (`keptfiles`; the disk cache is
emptied before the first open). `--profile N` also samples every thread's stack
every 5 ms (the GUI thread, the worker threads) and prints the N functions seen most often as
running per thread ("self"), and on the stack ("total"); the helper process's CPU seconds are
read from /proc.

`--keystroke S`: S seconds after the open settled (the events processed meanwhile), the
heading filter's first completion ("p", what its first keystroke asks, on the GUI thread) is
timed: `first keystroke`. Before stop 48 the completer made the document's heading catalog there
(20 MB: ~0.3 s); it is now made on the chunking thread once the chunks are in.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from _common import ROOT, bench_window, forget_document_caches, settled, wait_for  # noqa: E402  (puts the repository on sys.path)


def write_doc(path: Path, chars: int, tag: int, numbered: bool = False) -> None:
    """The handbook repeated with "# Part k" headings, as the heartbeat test writes its 20 MB;
    `numbered`: every heading of copy k ends in " (k)", so that no two heading paths are alike
    (`--numbered`: a 20 MB document of ~33,000 distinct paths for the heading filter)."""
    body = (ROOT / "sample_docs" / "handbook.md").read_text(encoding="utf-8")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"<!-- open {tag} -->\n")
        written = k = 0
        while written < chars:
            text = re.sub(r"^(#{1,6} .+)$", rf"\1 ({k})", body, flags=re.MULTILINE) if numbered else body
            part = f"# Part {k}\n\n{text}\n"
            fh.write(part)
            written += len(part)
            k += 1


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process, from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Sampler:
    """Every thread's stack every `interval` seconds: (thread name -> Counter of self / total)."""

    def __init__(self, interval: float = 0.005) -> None:
        self.interval = interval
        self.self_: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        self.total: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        self.samples: collections.Counter[str] = collections.Counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sampler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        me = threading.get_ident()
        while not self._stop.wait(self.interval):
            names = {t.ident: t.name for t in threading.enumerate()}
            for ident, frame in sys._current_frames().items():
                if ident == me:
                    continue
                name = names.get(ident, str(ident))
                name = "GUI" if name == "MainThread" else name.split("-")[0]
                seen = set()
                top = True
                f = frame
                while f is not None:
                    key = f"{Path(f.f_code.co_filename).name}:{f.f_code.co_name}"
                    if top:
                        self.self_[name][key] += 1
                        top = False
                    if key not in seen:
                        self.total[name][key] += 1
                        seen.add(key)
                    f = f.f_back
                self.samples[name] += 1
                del f
            del frame

    def report(self, n: int) -> None:
        ms = self.interval * 1000
        for name, count in self.samples.most_common():
            idle_keys = ("selectors.py:select", "threading.py:wait", "queue.py:get", "connection.py:_recv")
            busy = sum(v for k, v in self.self_[name].items() if not k.endswith(idle_keys))
            print(f"\n[{name}] {count} samples ({count * ms / 1000:.1f} s), ~{busy * ms / 1000:.1f} s not waiting")
            print("  self:  " + "; ".join(f"{k} {v * ms / 1000:.2f}s" for k, v in self.self_[name].most_common(n)))
            print("  total: " + "; ".join(f"{k} {v * ms / 1000:.2f}s" for k, v in self.total[name].most_common(n)))


def open_once(w, path: Path, pids: list[int], sampler: Sampler | None, timeout: float,
              keystroke: float | None = None) -> tuple[dict[str, float], bool]:
    """Open `path` in the window `w` as File ▸ Open does; the marks (seconds from the call)."""
    marks: dict[str, float] = {}
    before = w.state.document

    def on_paint() -> None:
        r = w.view.result
        if r is not None and r.document is not before and r.document is w.state.document \
                and w.view.last_paint is not None:
            marks.setdefault("overlays", time.perf_counter() - t0)
            if r.complete:
                marks.setdefault("painted", time.perf_counter() - t0)

    def cond() -> bool:
        now = time.perf_counter() - t0
        doc = w.state.document
        if doc is not before:
            marks.setdefault("document", now)
            r = w.state.result
            if r is not None and r.document is doc:
                marks.setdefault("chunks", now)
                if r.complete:
                    marks.setdefault("complete", now)
            if not w.view.loading:
                marks.setdefault("loaded", now)
        return "document" in marks and settled(w, view=True)

    cpu0 = {p: cpu_seconds(p) for p in pids}
    own0 = time.process_time()
    w.view.painted.connect(on_paint)
    t0 = time.perf_counter()
    if sampler:
        sampler.start()
    w.open_user_paths([str(path)])
    ok = wait_for(cond, timeout)
    marks["settled"] = time.perf_counter() - t0
    if keystroke is not None:
        wait_for(lambda: False, keystroke)  # the user reads the overlays; the event loop runs
        start = time.perf_counter()
        w.question_bar.completions("p")
        marks["first keystroke"] = time.perf_counter() - start
    if sampler:
        sampler.stop()
    w.view.painted.disconnect(on_paint)
    marks["GUI process CPU"] = time.process_time() - own0
    marks["helper CPU"] = sum(cpu_seconds(p) - c for p, c in cpu0.items())
    return marks, ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, nargs="*", default=[20.0, 1.0], help="document sizes in MB (millions of chars)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--profile", type=int, default=0, help="sample stacks, print the N commonest functions")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--keystroke", type=float, default=None,
                    help="seconds after the open settled to time the heading filter's first completion")
    ap.add_argument("--numbered", action="store_true", help="every copy's headings numbered (distinct paths)")
    ap.add_argument("--again", action="store_true",
                    help="open each size's first text again, as a later session would (see above)")
    args = ap.parse_args()

    from inspector.core.runtime import offload
    from inspector.qt.app import create_app, start_helper

    app = create_app()
    start_helper(app)
    helper = offload.default()
    helper.call(offload._pid)  # started and imported before the clock runs (as the test's fixture)
    pids = helper.pids()
    results: dict[float, list[dict[str, float]]] = collections.defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        w = bench_window(tmp, strategy="recursive", view=True)
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; helper pids {pids}")
        tag = 0
        first: dict[float, int] = {}
        if args.again:
            forget_document_caches()
        for rep in range(args.repeats):
            for mb in args.mb:
                tag += 1
                path = tmp / f"doc_{tag}.md"
                if args.again and mb in first:  # a later session: no helper, nothing in memory
                    helper.shutdown()
                    forget_document_caches(disk=False)
                    helper.call(offload._pid)
                    pids = helper.pids()
                write_doc(path, int(mb * 1_000_000), first.setdefault(mb, tag) if args.again else tag, args.numbered)
                sampler = Sampler() if args.profile else None
                marks, ok = open_once(w, path, pids, sampler, args.timeout, args.keystroke)
                results[mb].append(marks)
                n = len(w.state.result.chunks) if w.state.result is not None else 0
                print(f"{mb:g} MB #{rep + 1}: " + ", ".join(f"{k} {v:.2f}" for k, v in marks.items())
                      + f" s; {n:,} chunks; load {os.getloadavg()[0]:.1f}" + ("" if ok else " (TIMED OUT)"),
                      flush=True)
                if sampler:
                    sampler.report(args.profile)
        w.close()
    print("\nmedians (s):")
    for mb, runs in results.items():
        keys = [k for k in runs[0] if all(k in r for r in runs)]
        print(f"  {mb:g} MB: " + ", ".join(f"{k} {statistics.median(r[k] for r in runs):.2f}" for k in keys))
    helper.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
