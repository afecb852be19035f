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
