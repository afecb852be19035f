"""Helpers shared by the benchmark scripts: the 1 MB document and timing."""

from __future__ import annotations

import re
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

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


def helpers_rss_mb() -> float:
    """Resident set size of the helper process(es) (`inspector.core.offload`) in MB: work moved
    there still counts."""
    from inspector.core import offload

    return sum(_status_mb("VmRSS", pid) for pid in offload.default().pids())


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
