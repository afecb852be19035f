"""Functions the helper-process tests send to the helper (module level, so they pickle by name)."""

from __future__ import annotations

import os
import time

from inspector.core.runtime.cancel import check_cancelled


def add(a: int, b: int) -> int:
    return a + b


def fail(message: str) -> None:
    raise ValueError(message)


def pid() -> int:
    return os.getpid()


def spin(seconds: float) -> str:
    """Loops for `seconds`, checking for cancellation as the core's long loops do."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        check_cancelled()
        time.sleep(0.005)
    return "finished"


def imported(names: list[str]) -> list[bool]:
    """Which of these modules the helper has imported."""
    import sys

    return [n in sys.modules for n in names]


def trims() -> int:
    """Heap trims the helper has made so far (-1 where the C library is not glibc)."""
    from inspector.core.runtime import heap

    return heap.trims if heap.available() else -1


def length_and_hash(text: str) -> tuple[int, str]:
    import hashlib

    return len(text), hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


_KEPT: list[bytearray] = []


def hold(megabytes: int, chars: int) -> int:
    """Keeps `megabytes` of memory in the helper, saying it holds documents of `chars` characters
    (`offload.holding`); answers the helper's pid."""
    from inspector.core.runtime import offload

    _KEPT.append(bytearray(b"\x01" * (megabytes << 20)))  # written: resident, not only reserved
    offload.holding(lambda: chars)
    return os.getpid()


def wait_for_file(path: str, seconds: float = 60.0) -> bool:
    """Runs until `path` exists (the test creates it), checking for cancellation as `spin` does;
    True when it appeared within `seconds`."""
    end = time.monotonic() + seconds
    while not os.path.exists(path):
        if time.monotonic() >= end:
            return False
        check_cancelled()
        time.sleep(0.005)
    return True


def report_trims_to(path: str) -> int:
    """Answers the heap trims made so far (-1 where the C library is not glibc) and leaves a thread
    in the helper that writes the count to `path` once it has grown: the test waits for that file
    instead of for a time, and asks the helper nothing meanwhile (no job that would reset its idle
    time)."""
    import threading

    from inspector.core.runtime import heap

    if not heap.available():
        return -1
    before = heap.trims

    def watch() -> None:
        end = time.monotonic() + 60
        while heap.trims <= before and time.monotonic() < end:
            time.sleep(0.005)
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="ascii") as fh:
            fh.write(str(heap.trims))
        os.replace(tmp, path)

    threading.Thread(target=watch, name="test-trim-watch", daemon=True).start()
    return before
