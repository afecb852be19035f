"""How long the GUI thread went without handling events: a heartbeat timer and, optionally, a
watchdog that catches what the GUI thread was doing during a long pause.

A `QTimer` firing every 5 ms on the GUI thread records the gap between its ticks: a gap of 200 ms
is 200 ms in which the window could neither repaint nor take a click, whatever kept it busy (a
slot that does too much, a C++ call that holds the GIL, a paint over a huge layout). The watchdog
(a Python thread, only when asked for) samples the GUI thread's stack while a gap is open, so a
benchmark can say *where* the time went. Used by `benchmarks/gui_heartbeat.py`, `benchmarks/soak.py`
and the tests that bound the window's pauses (generously: the shared test machines are noisy).
"""

from __future__ import annotations

import sys
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt, QTimer

#: The tick interval (ms).
TICK_MS = 5
#: Innermost functions of a thread that is waiting, not working (left out of `Pause.others`).
_IDLE = frozenset({"wait", "_wait_for_tstate_lock", "select", "poll", "get", "acquire", "sleep", "_worker",
                   "recv", "recv_into", "accept", "readinto", "read"})


@dataclass(slots=True)
class Pause:
    """One gap between ticks longer than the threshold."""

    ms: float
    label: str
    """What was going on (the label set by `phase`)."""
    stack: str = ""
    """The GUI thread's innermost frames sampled most often during the gap (watchdog only)."""
    others: str = ""
    """What the other threads that were not waiting did during the gap, the three samples seen most
    often (watchdog only): when the GUI
    thread's stack shows only the event loop, the time went to Qt's C++ code or to waiting for
    the GIL that this thread held (a long C call: an encode, a regex, a sort over a big text)."""


@dataclass(slots=True)
class PhaseStats:
    """Pauses of one labelled phase."""

    max_ms: float = 0.0
    ticks: int = 0
    over: int = 0
    """Gaps over the threshold."""
    seconds: float = 0.0


class Heartbeat(QObject):
    """Start it, label phases, read the worst gap (ms) per phase and overall."""

    def __init__(self, *, threshold_ms: float = 50.0, watchdog: bool = False, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.threshold_ms = threshold_ms
        self.pauses: list[Pause] = []
        self.phases: dict[str, PhaseStats] = {}
        self.label = ""
        self._last = 0.0
        self._phase_started = 0.0
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._gui_ident = threading.get_ident()
        self._watchdog = watchdog
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._samples: Counter[str] = Counter()
        self._other_samples: Counter[str] = Counter()
        self._lock = threading.Lock()

    # -- control -------------------------------------------------------------------------------
    def start(self, label: str = "") -> None:
        self.phase(label)
        self._last = time.perf_counter()
        self._timer.start()
        if self._watchdog and self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._watch, name="heartbeat-watchdog", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._tick()
        self._timer.stop()
        self._close_phase()
        if self._thread is not None:
            self._stop.set()
            self._thread.join(2.0)
            self._thread = None

    def phase(self, label: str) -> None:
        """Attribute the gaps from now on to `label`."""
        self._close_phase()
        self.label = label
        self._phase_started = time.perf_counter()
        self.phases.setdefault(label, PhaseStats())

    def _close_phase(self) -> None:
        if self.label in self.phases and self._phase_started:
            self.phases[self.label].seconds += time.perf_counter() - self._phase_started
        self._phase_started = 0.0

    # -- results -------------------------------------------------------------------------------
    @property
    def max_ms(self) -> float:
        return max((p.max_ms for p in self.phases.values()), default=0.0)

    def max_for(self, prefix: str) -> float:
        """Worst gap over the phases whose label starts with `prefix`."""
        return max((p.max_ms for k, p in self.phases.items() if k.startswith(prefix)), default=0.0)

    def worst(self, n: int = 5) -> list[Pause]:
        return sorted(self.pauses, key=lambda p: -p.ms)[:n]

    # -- the beat ------------------------------------------------------------------------------
    def _tick(self) -> None:
        now = time.perf_counter()
        gap = (now - self._last) * 1000.0 if self._last else 0.0
        self._last = now
        stats = self.phases.setdefault(self.label, PhaseStats())
        stats.ticks += 1
        stats.max_ms = max(stats.max_ms, gap)
        if gap > self.threshold_ms:
            stats.over += 1
            stack = others = ""
            if self._watchdog:
                with self._lock:
                    top = self._samples.most_common(1)
                    busy = self._other_samples.most_common(3)
                    self._samples.clear()
                    self._other_samples.clear()
                stack = top[0][0] if top else ""
                others = "".join(b for b, _n in busy)
            self.pauses.append(Pause(gap, self.label, stack, others))
        elif self._watchdog:
            with self._lock:
                self._samples.clear()
                self._other_samples.clear()

    def _watch(self) -> None:
        """Every 5 ms: if the GUI thread is late (no tick for over half the threshold), sample its
        innermost frames and those of every other thread that is not waiting."""
        late = self.threshold_ms / 2000.0
        me = threading.get_ident()
        while not self._stop.wait(0.005):
            if time.perf_counter() - self._last < late:
                continue
            raw = _raw_stacks(self._gui_ident, me)
            gui = raw.pop(self._gui_ident, None)
            if gui is None:
                continue
            names = {t.ident: t.name for t in threading.enumerate()}
            busy = [f"[thread {names.get(ident, ident)}]\n" + _format(stack[:4])
                    for ident, stack in raw.items() if stack and stack[0][2] not in _IDLE]
            with self._lock:
                self._samples[_format(gui[:6])] += 1
                for b in busy:
                    self._other_samples[b] += 1


def _raw_stacks(gui: int, skip: int) -> dict[int, list[tuple[str, int, str]]]:
    """(file, line, function) of each thread's innermost frames, innermost first. No frame object
    is kept past this call: a frame held from another thread keeps its locals alive after the
    function returned, and a local that wraps a Qt object Qt deletes meanwhile (a QTextLayout of
    a block relaid out) leaves shiboken a stale wrapper at an address Qt reuses: a later
    `addAction` came back as that QTextLayout in a watchdog soak run (another segfaulted)."""
    out: dict[int, list[tuple[str, int, str]]] = {}
    frame = f = None
    frames = sys._current_frames()
    try:
        for ident, frame in frames.items():
            if ident == skip:
                continue
            stack: list[tuple[str, int, str]] = []
            f = frame
            while f is not None and len(stack) < (8 if ident == gui else 4):
                stack.append((f.f_code.co_filename, f.f_lineno, f.f_code.co_name))
                f = f.f_back
            out[ident] = stack
    finally:
        del frames, frame, f
    return out


def _format(stack: list[tuple[str, int, str]]) -> str:
    """Outermost first, as a traceback prints (source lines from linecache)."""
    return "".join(traceback.format_list(traceback.StackSummary.from_list([(*x, None) for x in reversed(stack)])))


__all__ = ["Heartbeat", "Pause", "PhaseStats", "TICK_MS"]
