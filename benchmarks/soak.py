"""Soak: a long session of scripted random user actions on the real window with the real model.

    .venv/bin/python benchmarks/soak.py                 # 30 minutes
    .venv/bin/python benchmarks/soak.py --minutes 5 --seed 7

Offscreen, one `MainWindow` with its own worker threads and the bundled all-MiniLM-L6-v2 (loaded
in the background as in the app). Every few hundred milliseconds a random action, as a user would
take it: open a document (the handbook, the public pages in benchmarks/data/public, a bad file),
switch strategy, drag the size or overlap slider through several values, ask a question, load a
gold set, pin a baseline, run a small sweep, export chunks / the report, Edit ▸ Undo. Not part of
`make test`.

It checks, and prints its figures:
* no exception escaped a slot or a worker (sys.excepthook, and every error the status bar showed
  that is not a refused bad file),
* memory stays bounded: resident set size (the window's process plus the helper process that
  runs its large chunking and BM25 jobs) sampled every 5 s; after the first third of the session
  (caches warm) it must not grow by more than `--max-growth-mb`,
* no GUI pause over `--bound-ms` (a 5 ms heartbeat on the GUI thread; see gui_heartbeat.py).
Exit status 1 when a check fails.

`--probe` prints, every 30 s, where memory is: the resident set, the Python heap (tracemalloc, when
`--tracemalloc` is given: slow), the entries of every core cache (`SizedLRU`), the embedding cache's
vectors, the undo steps and the Document objects alive, and the helper process's own line (its
resident set, glibc's heap in use and free, its caches). `--watchdog` samples the GUI thread's stack
during each pause and prints the three longest pauses' stacks. Issue 17 used it to tell caches filling to
their budget from leaks and from memory the C library kept after it was freed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from _common import ROOT, helpers_rss_mb, idle_collector_line, vm_rss_mb  # noqa: E402  (puts the repo on sys.path)
from gui_heartbeat import GcTimes  # noqa: E402

HANDBOOK = ROOT / "sample_docs" / "handbook.md"
PUBLIC = ROOT / "benchmarks" / "data" / "public"
BAD = ROOT / "tests" / "data" / "bad"
STRATEGIES = ("markdown", "recursive", "fixed_chars", "fixed_tokens", "sentences", "paragraph", "parent_child",
              "semantic")


def probe(w, label: str) -> None:
    """One line on where the memory is (see --probe); walks every object (a pause, not counted:
    the heartbeat is told)."""
    import gc
    import tracemalloc

    from inspector.core.embedding import cache as embedding_cache
    from inspector.core.runtime.lru import SizedLRU

    gc.collect()
    objs = gc.get_objects()
    lrus = [o for o in objs if isinstance(o, SizedLRU) and len(o)]
    docs = sum(1 for o in objs if type(o).__name__ == "Document")
    cache = embedding_cache._DEFAULT
    m = cache.memory_stats() if cache else None
    vectors = (f"{m.memory_entries} vectors in memory ({m.memory_bytes / 1e6:.0f}/{m.memory_limit / 1e6:.0f} MB), "
               f"{m.pending} pending, {m.disk_keys} on disk (index {m.index_bytes / 1e6:.1f} MB)") if m else "unused"
    hist = w.history.history
    traced = f", Python heap {tracemalloc.get_traced_memory()[0] / 1e6:.0f} MB" if tracemalloc.is_tracing() else ""
    full = sorted(f"{len(o)}/{o.max_items}" for o in lrus if len(o) >= o.max_items or o.total_size() >= o.max_size)
    print(f"  [probe {label}] RSS {vm_rss_mb():.0f} MB{traced}; caches: {len(lrus)} in use, "
          f"{sum(len(o) for o in lrus)} entries, {len(full)} at their budget; embedding cache {vectors}; "
          f"undo {len(hist.undo_steps)}+{len(hist.redo_steps)} steps; {docs} Documents alive; "
          f"{len(objs)} tracked objects", flush=True)
    print(f"  [probe {label}] what holds a Document no undo step holds: {holder_chain(w, objs)}", flush=True)
    print(f"  [probe {label}] largest caches: {cache_bytes(lrus)}", flush=True)
    from _common import process_memory

    from inspector.core.runtime import offload

    print(f"  [probe {label}] window: {process_memory()}", flush=True)
    if offload.default().pids():
        print(f"  [probe {label}] helper: {offload.default().call(process_memory)}", flush=True)



def holder_chain(w, objs: list) -> str:
    """The chain of referrers (up to 8 deep) of one Document that neither an undo step nor the
    window's corpus holds: what keeps documents alive in a long session."""
    import gc

    hist = w.history.history
    held = {id(d) for st in hist.undo_steps + hist.redo_steps for d in st.state.documents}
    held |= {id(d) for d in w.state.documents}
    loose = [o for o in objs if type(o).__name__ == "Document" and id(o) not in held]
    if not loose:
        return "none"
    skip = {id(objs), id(loose)}
    kinds: Counter[str] = Counter()
    for doc in loose:
        chain, o = [], doc
        for _ in range(8):
            refs = gc.get_referrers(o)
            skip.add(id(refs))  # this list holds `o` too: not a holder
            refs = [r for r in refs if id(r) not in skip and type(r).__name__ != "frame"
                    and type(r).__name__ != "Document"]
            if not refs:
                break
            skip.add(id(refs))
            o = refs[0]
            desc = type(o).__name__
            if isinstance(o, dict):
                desc += "{" + ",".join(str(k)[:16] for k in list(o)[:3]) + "}"
            chain.append(desc)
            if type(o).__name__ in ("SizedLRU", "_Task", "WindowState", "MainWindow"):
                break
        kinds[" <- ".join(chain)] += 1
    alive = Counter(type(o).__name__ for o in objs if type(o).__name__ in ("_Task", "JobRunner", "QThreadPool"))
    from inspector.qt.runner import LIVE_RUNNERS
    busy = sorted(f"{getattr(r, 'name', '?')}:{r.active_threads()}" for r in list(LIVE_RUNNERS))
    return (f"{len(loose)} such; " + "; ".join(f"{n}x {c}" for c, n in kinds.most_common(4))
            + f"; alive {dict(alive)}; runners {busy}")


def deep_bytes(root: object, seen: set[int], limit: int = 3_000_000) -> int:
    """Bytes reachable from `root` through containers, instances and numpy arrays (each object
    counted once across calls sharing `seen`; modules, types and functions not followed)."""
    import types

    import numpy as np

    total, stack, walked = 0, [root], 0
    while stack and walked < limit:
        x = stack.pop()
        if id(x) in seen or isinstance(x, (type, types.ModuleType, types.FunctionType, types.MethodType)):
            continue
        seen.add(id(x))
        walked += 1
        if isinstance(x, np.ndarray):
            base = x
            while isinstance(base.base, np.ndarray):
                base = base.base
            if id(base) not in seen or base is x:
                seen.add(id(base))
                total += base.nbytes
            continue
        total += sys.getsizeof(x)
        if isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, (list, tuple, set, frozenset)):
            stack.extend(x)
        elif isinstance(x, (str, bytes, int, float)):
            continue
        else:
            d = getattr(x, "__dict__", None)
            if isinstance(d, dict):
                stack.append(d)
            for cls in type(x).__mro__:  # slots of base classes too
                slots = getattr(cls, "__slots__", ())
                for k in (slots,) if isinstance(slots, str) else slots:
                    v = getattr(x, k, None)
                    if v is not None:
                        stack.append(v)
    return total


def cache_bytes(lrus: list) -> str:
    """The eight largest bounded caches by what their entries reach (shared data counted once,
    largest first) and their total."""
    seen: set[int] = set()
    rows = []
    for o in lrus:
        entries = list(o.values())
        first = type(entries[0]).__name__ if entries else "?"
        rows.append((deep_bytes(entries, seen), f"{first} {len(o)}/{o.max_items}"))
    rows.sort(reverse=True)
    total = sum(b for b, _ in rows) / 1e6
    return "; ".join(f"{label} {b / 1e6:.0f} MB" for b, label in rows[:8]) + f"; total {total:.0f} MB"


class Session:
    """The window and the actions a user takes on it."""

    def __init__(self, app, w, rng: random.Random, tmp: Path) -> None:
        self.app, self.w, self.rng, self.tmp = app, w, rng, tmp
        self.docs = [HANDBOOK] + sorted(PUBLIC.glob("*/*.md"))
        self.bad = [p for p in sorted(BAD.iterdir()) if p.suffix in (".md", ".txt", ".png", ".pdf")]
        self.counts: Counter[str] = Counter()
        self.expected_errors = 0
        self.deadline = float("inf")
        """When the session ends (a sweep waits no longer)."""

    # -- helpers -------------------------------------------------------------------------------
    def pump(self, seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            self.app.processEvents()
            time.sleep(0.003)

    def gold_for(self, doc: Path) -> Path | None:
        g = doc.with_name(doc.stem + ".gold.jsonl")
        return g if g.exists() else None

    # -- actions ---------------------------------------------------------------------------------
    def open_document(self) -> None:
        if self.rng.random() < 0.12:
            path = self.rng.choice(self.bad)
            self.expected_errors += 1
            self.counts["open bad file"] += 1
        else:
            path = self.rng.choice(self.docs)
            self.counts["open"] += 1
        self.w.open_user_paths([str(path)])

    def switch_strategy(self) -> None:
        # semantic runs the model to chunk (seconds): rarely, as a user trying it would.
        name = "semantic" if self.rng.random() < 0.08 else self.rng.choice(STRATEGIES[:-1])
        self.w.strategy_panel.set_strategy(name)
        self.counts[f"strategy {name}"] += 1

    def drag(self) -> None:
        controls = self.w.strategy_panel.controls
        names = [n for n in ("size", "overlap", "max_size", "parent_size", "child_overlap") if n in controls]
        if not names:
            return
        name = self.rng.choice(names)
        param = getattr(controls[name], "param", None)
        if param is None:
            return
        lo, hi = float(param.minimum), float(min(param.maximum, 2048))
        start = self.rng.uniform(lo, hi)
        for step in range(self.rng.randint(4, 12)):  # a drag: values every ~30 ms
            v = max(lo, min(hi, start + step * (hi - lo) / 40.0))
            with contextlib.suppress(ValueError, TypeError):
                self.w.strategy_panel.set_value(name, int(v))
            self.pump(0.03)
        self.counts[f"drag {name}"] += 1

    def ask(self) -> None:
        gold = self.w.retrieval.gold_questions
        q = self.rng.choice(gold).question if gold else self.rng.choice(
            ["How long is parental leave?", "Who approves travel?", "What is reimbursed?"])
        self.w.question_bar.ask(q)
        self.counts["ask"] += 1

    def load_gold(self) -> None:
        doc = self.w.state.document
        g = self.gold_for(Path(doc.path)) if doc is not None and doc.path else None
        if g is None:
            return
        self.w.gold_panel.open_gold(g)
        self.counts["load gold"] += 1

    def pin(self) -> None:
        if self.w.retrieval.pin_baseline() is not None:
            self.counts["pin"] += 1

    def sweep(self) -> None:
        w = self.w
        if not w.retrieval.gold_questions or w.retrieval.embedder is None:
            return
        w.open_sweep()
        d = w.sweep_dialog
        d.set_strategies(["fixed_chars", "recursive"])
        d.sizes.setText("128, 256")
        d.overlaps.setText("0")
        if d.run():
            self.counts["sweep"] += 1
            end = min(time.perf_counter() + 120, self.deadline)
            while d.runner.busy and time.perf_counter() < end:
                self.pump(0.1)
        d.close()  # cancels a sweep still running

    def export(self) -> None:
        ex = self.w.exports
        r = self.w.retrieval.result
        # The report exists only once a gold set has been scored (the menu item is disabled before).
        k = self.rng.randrange(3 if r is not None and r.report is not None else 1)
        out = self.tmp / f"export{k}"
        ok = (ex.export_chunks(str(out) + ".jsonl") if k == 0 else
              ex.export_report_markdown(str(out) + ".md") if k == 1 else ex.export_config(str(out) + ".json"))
        if ok:
            self.counts["export"] += 1

    def undo(self) -> None:
        if self.w.history.undo():
            self.counts["undo"] += 1

    ACTIONS = (("open_document", 3), ("switch_strategy", 4), ("drag", 8), ("ask", 4), ("load_gold", 2), ("pin", 2),
               ("sweep", 0.4), ("export", 1), ("undo", 1))

    def step(self, hb=None) -> str:
        names = [a for a, _w in self.ACTIONS]
        name = self.rng.choices(names, weights=[wt for _a, wt in self.ACTIONS])[0]
        if hb is not None:  # pauses are labelled with the action that was running and the model's state
            hb.phase(f"session|{name}|model {self.w.retrieval.model_state}")
        getattr(self, name)()
        return name


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=30.0, help="length of the session (default 30)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bound-ms", type=float, default=1000.0, help="longest GUI pause allowed")
    ap.add_argument("--max-growth-mb", type=float, default=300.0,
                    help="RSS growth allowed after the first third of the session")
    ap.add_argument("--watchdog", action="store_true",
                    help="sample the GUI thread's stack in long pauses; print the 3 longest pauses' stacks")
    ap.add_argument("--probe", action="store_true", help="print where the memory is every 30 s")
    ap.add_argument("--tracemalloc", action="store_true", help="with --probe: the Python heap too (slow)")
    args = ap.parse_args()
    if args.tracemalloc:
        import tracemalloc

        tracemalloc.start(1)

    from inspector.qt.app import create_app, start_helper
    from inspector.qt.heartbeat import Heartbeat
    from inspector.qt.main_window import MainWindow
    from inspector.qt.settings import ini_store

    exceptions: list[str] = []

    def hook(exc_type, exc, tb) -> None:
        exceptions.append("".join(traceback.format_exception(exc_type, exc, tb)))

    sys.excepthook = hook
    app = create_app()
    start_helper(app)  # as the app does: large chunking and BM25 jobs in the helper process
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        w = MainWindow(ini_store(str(tmp / "settings.ini")))
        w.resize(1400, 900)
        w.show()
        errors: list[str] = []
        w.messages.errorShown.connect(lambda text, _details: errors.append(text))
        s = Session(app, w, rng, tmp)
        hb = Heartbeat(threshold_ms=50.0, watchdog=args.watchdog)
        gct = GcTimes()
        hb.start("start-up")
        w.open_user_paths([str(HANDBOOK)])
        w.start_model()
        s.pump(2.0)
        hb.phase("session")
        t0 = time.perf_counter()
        end = t0 + args.minutes * 60
        def rss_mb() -> float:
            return vm_rss_mb() + helpers_rss_mb()

        rss: list[tuple[float, float]] = [(0.0, rss_mb())]
        helper_rss: list[float] = [helpers_rss_mb()]
        next_sample = t0 + 5
        next_probe = t0 + 30
        steps = 0
        jumps: list[tuple[float, str, float]] = []
        """(MB the resident set rose during one action and its pause, the action, seconds in)."""
        while time.perf_counter() < end:
            s.deadline = end
            before = rss_mb()
            try:
                name = s.step(hb)
            except Exception:  # noqa: BLE001  (a failing action is a finding, recorded and reported)
                exceptions.append(traceback.format_exc())
                name = "?"
            steps += 1
            s.pump(rng.uniform(0.1, 0.8))
            jumps.append((rss_mb() - before, name, time.perf_counter() - t0))
            if time.perf_counter() >= next_sample:
                rss.append((time.perf_counter() - t0, rss_mb()))
                helper_rss.append(helpers_rss_mb())
                next_sample += 5
            if args.probe and time.perf_counter() >= next_probe:
                hb.phase("probe")  # the probe's own walk is not a pause of the window
                probe(w, f"{time.perf_counter() - t0:.0f} s")
                app.processEvents()  # the overdue heartbeat tick lands in "probe"
                hb.phase("session")
                next_probe += 30
            if steps % 50 == 0:
                print(f"  {time.perf_counter() - t0:6.0f} s  {steps} actions  RSS {rss[-1][1]:.0f} MB  "
                      f"worst pause so far {hb.max_for('session'):.0f} ms", flush=True)
        hb.stop()
        elapsed = time.perf_counter() - t0
        w.close()

    warm = [m for t, m in rss if t >= elapsed / 3] or [rss[-1][1]]
    growth = max(warm) - warm[0]
    # Expected too: an export asked for while the chunks of a new document or strategy are on
    # their way (a user clicking too early is told so).
    unexpected = [e for e in errors if not any(str(p) in e for p in s.bad) and "still being computed" not in e]
    # A refused bad file is expected; so is "no gold set" style feedback. Everything else is listed.
    print(f"\nsoak: {elapsed / 60:.1f} minutes, {steps} actions (seed {args.seed})")
    print("actions: " + ", ".join(f"{k} {v}" for k, v in sorted(s.counts.items())))
    print(f"GUI pauses: worst {hb.max_for('session'):.0f} ms, over 50 ms: "
          f"{sum(1 for p in hb.pauses if p.label.startswith('session'))} (bound {args.bound_ms:.0f} ms)")
    from inspector.core.runtime import heap, offload

    print(f"heap trims: {heap.trims} (longest {heap.longest_s * 1000:.0f} ms, on their own thread)")
    print(f"RSS: start {rss[0][1]:.0f} MB, after a third {warm[0]:.0f} MB, peak {max(m for _t, m in rss):.0f} MB, "
          f"end {rss[-1][1]:.0f} MB; growth after the first third {growth:.0f} MB (bound {args.max_growth_mb:.0f}); "
          f"of which the helper process: end {helper_rss[-1]:.0f} MB, peak {max(helper_rss):.0f} MB, "
          f"replaced {offload.default().retired} times for its size")
    print(f"garbage collections: {gct.line()}")
    print(idle_collector_line(w))
    top = sorted(jumps, reverse=True)[:8]
    print("largest rises of the resident set over one action (and the pause after it): "
          + "; ".join(f"+{mb:.0f} MB {name} at {t:.0f} s" for mb, name, t in top))
    print("longest pauses: " + "; ".join(f"{p.ms:.0f} ms ({p.label.removeprefix('session|')})"
                                         for p in hb.worst(5) if p.label.startswith("session")))
    if args.watchdog:
        for p in [p for p in hb.worst(10) if p.label.startswith("session")][:3]:
            print(f"\n{p.ms:.0f} ms ({p.label}); the GUI thread was most often in:\n{p.stack}"
                  + (f"  busy meanwhile:\n{p.others}" if p.others else ""))
    print(f"exceptions: {len(exceptions)}; errors in the status bar: {len(errors)} "
          f"({len(errors) - len(unexpected)} from the bad files opened on purpose)")
    for e in exceptions[:5]:
        print("\n" + e)
    for e in unexpected[:10]:
        print("unexpected error: " + e)
    failed = bool(exceptions) or growth > args.max_growth_mb or hb.max_for("session") > args.bound_ms
    print("FAILED" if failed else "passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
