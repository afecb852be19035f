"""The window's start (issue 31): process start to the window visible, and to the sample handbook's
chunks painted, in fresh interpreters (`python -m inspector`, offscreen, the launch probe
CHUNK_INSPECTOR_SMOKE). Targets: visible <= 0.5 s, chunks painted <= 1.0 s. Printed, not
asserted; the load average is printed beside them (the machine is shared).

    .venv/bin/python benchmarks/startup.py [--repeats 7] [--importtime] [--phases]

`--importtime` also lists the heavy packages imported by the time the window is visible, and
what importing the app and the main window costs by package and module (`-X importtime`).
`--against DIR` launches another checkout in turn with this one (before/after, same load).
`--phases` also prints the CPU seconds (all threads) of each step of the launch: PySide6, the
application, the window's modules, its constructor, showing it, and on to the chunks painted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _env(tmp: str, root: Path = ROOT) -> dict[str, str]:
    # Compiled bytecode is kept (in a folder of the run's own, per checkout), as an installed app's
    # is: where PYTHONDONTWRITEBYTECODE is set, every launch would compile every module again.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "CHUNK_INSPECTOR_SMOKE": "1", "CHUNK_INSPECTOR_SETTINGS": str(Path(tmp) / "s.ini"),
            "PYTHONPATH": str(root), "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen"),
            "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
            "PYTHONPYCACHEPREFIX": str(Path(tmp) / "pycache" / root.name)}


#: Packages the first paint should not need (issue 31): imported on demand or after the window.
HEAVY = ("torch", "sentence_transformers", "transformers", "pyqtgraph", "scipy", "markdown_it", "tiktoken",
         "tokenizers", "bm25s", "sklearn", "umap", "openvino", "onnxruntime", "chromadb", "lancedb", "qdrant_client",
         "fitz", "pypdfium2", "docling", "ray")


def modules_at_visible(tmp: str, root: Path = ROOT) -> list[str]:
    """The modules the window's process had imported when it was visible (the launch probe writes
    them to CHUNK_INSPECTOR_MODULES)."""
    listing = Path(tmp) / "modules.txt"
    subprocess.run([sys.executable, "-m", "inspector"], cwd=root,
                   env={**_env(tmp, root), "CHUNK_INSPECTOR_MODULES": str(listing)}, capture_output=True,
                   timeout=120)
    return listing.read_text(encoding="utf-8").split("\n") if listing.exists() else []


def import_rows(tmp: str, root: Path = ROOT) -> list[tuple[int, int, str]]:
    """(self µs, cumulative µs, name) of every module `import inspector.qt.app, inspector.qt.main_window`
    imports in a fresh interpreter under `-X importtime` (without the helper process, whose own
    import lines would mix in)."""
    code = "import inspector.qt.app, inspector.qt.main_window"
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code], cwd=root, env=_env(tmp, root),
                          capture_output=True, text=True, timeout=120)
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative_us, name = (part.strip() for part in line[len("import time:"):].split("|"))
        rows.append((int(self_us), int(cumulative_us), name))
    return rows


def launch_wall(tmp: str, root: Path = ROOT) -> tuple[float, float, float]:
    """Seconds from starting the process to the 'visible' and 'chunks' lines, by this clock, and
    the CPU seconds the process spent in all (every thread, start to exit: it quits right after
    the chunks are painted). CPU time moves less with the machine's load than wall time does."""
    visible = painted = float("nan")
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "inspector"], cwd=root, env=_env(tmp, root),
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("visible"):
            visible = time.perf_counter() - t0
        elif line.startswith("chunks"):
            painted = time.perf_counter() - t0
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, with its resource usage
    return visible, painted, usage.ru_utime + usage.ru_stime


#: `run_app`'s steps in a fresh interpreter, with the CPU seconds (all threads) each took: printed
#: as one JSON line. The window opens the handbook from the event loop, as the app does.
PHASES = """
import json, sys, time
marks = [("start", time.process_time())]
def mark(name):
    marks.append((name, time.process_time()))
import inspector.cli.main
import PySide6.QtWidgets
mark("PySide6")
from inspector.qt.app import create_app
app = create_app()
mark("application")
from inspector.qt.actions.file_actions import open_later, sample_path
from inspector.qt.main_window import MainWindow
from inspector.qt.settings import ini_store
mark("window's modules")
w = MainWindow(ini_store(sys.argv[1]))
mark("window's constructor")
w.show()
from PySide6.QtCore import QTimer
def shown():
    mark("show, to the event loop")
    open_later(w, [str(sample_path())])
def on_chunks(result):
    if result is not None and result.complete and marks[-1][0] != "to the chunks painted":
        w.view.viewport().repaint()
        mark("to the chunks painted")
        QTimer.singleShot(0, w.close)
w.state.chunksChanged.connect(on_chunks)
QTimer.singleShot(0, shown)
app.exec()
print(json.dumps({name: t - marks[i][1] for i, (name, t) in enumerate(marks[1:])}))
"""


def cpu_phases(tmp: str, root: Path, n: int) -> dict[str, float]:
    """Median CPU seconds of each step of `PHASES` over `n` fresh interpreters."""
    runs: list[dict[str, float]] = []
    for i in range(n):
        proc = subprocess.run([sys.executable, "-c", PHASES, str(Path(tmp) / f"phases{i}.ini")], cwd=root,
                              env=_env(tmp, root), capture_output=True, text=True, timeout=120)
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return {name: statistics.median(r[name] for r in runs) for name in runs[0]}


def import_profile(tmp: str, top: int = 15) -> None:
    mods = modules_at_visible(tmp)
    tops = {m.split(".")[0] for m in mods}
    import_rows(tmp)  # bytecode compiled and cached first
    print(f"\nat the window visible: {len(mods)} modules imported; of the heavy packages: "
          f"{', '.join(h for h in HEAVY if h in tops) or 'none'}")
    rows = import_rows(tmp)
    total = sum(r[0] for r in rows)
    print(f"importing the app and the main window (-X importtime, one fresh interpreter): {len(rows)} modules, "
          f"{total / 1e6:.2f} s of self time (the profiler adds its own cost)")
    by_top: dict[str, int] = {}
    for self_us, _cum, name in rows:
        by_top[name.split(".")[0]] = by_top.get(name.split(".")[0], 0) + self_us
    print("  by top-level package (self times summed): " + ", ".join(
        f"{name} {us / 1e3:.0f} ms" for name, us in sorted(by_top.items(), key=lambda kv: -kv[1])[:top]))
    heavy = sorted((r for r in rows if r[2].startswith("inspector")), key=lambda r: -r[1])[:top]
    print("  inspector modules by cumulative import time: " + ", ".join(
        f"{name} {cum / 1e3:.0f} ms" for _self, cum, name in heavy))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--importtime", action="store_true")
    ap.add_argument("--phases", action="store_true",
                    help="also the CPU seconds of each step of the launch (medians, same launches count)")
    ap.add_argument("--against", type=Path, default=None,
                    help="another checkout (e.g. `git archive` of the base commit) launched in turn with this one")
    args = ap.parse_args()
    roots = [ROOT] + ([args.against.resolve()] if args.against else [])
    load0 = os.getloadavg()[0]
    times: dict[Path, tuple[list[float], list[float], list[float]]] = {root: ([], [], []) for root in roots}
    with tempfile.TemporaryDirectory() as tmp:
        for root in roots:  # the first launch writes the settings file and warms the OS's file cache
            launch_wall(tmp, root)
        for _ in range(args.repeats):
            for root in roots:  # in turn, so that both see the same load
                v, p, cpu = launch_wall(tmp, root)
                times[root][0].append(v)
                times[root][1].append(p)
                times[root][2].append(cpu)
        load1 = os.getloadavg()[0]
        print(f"{args.repeats} launches each (after one unmeasured), load average {load0:.2f} -> {load1:.2f}")
        for root in roots:
            visible, painted, cpu = times[root]
            print(f"{root}:")
            print(f"  process start -> window visible:   median {statistics.median(visible):.2f} s, "
                  f"range {min(visible):.2f}-{max(visible):.2f} s (target <= 0.5 s)")
            print(f"  process start -> chunks painted:   median {statistics.median(painted):.2f} s, "
                  f"range {min(painted):.2f}-{max(painted):.2f} s (target <= 1.0 s)")
            print(f"  CPU of the launch (all threads, to exit): median {statistics.median(cpu):.2f} s, "
                  f"range {min(cpu):.2f}-{max(cpu):.2f} s")
        if args.phases:
            for root in roots:
                phases = cpu_phases(tmp, root, args.repeats)
                print(f"{root}: CPU seconds by step (median of {args.repeats}): " + ", ".join(
                    f"{name} {sec:.3f}" for name, sec in phases.items()))
        if args.importtime:
            import_profile(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
