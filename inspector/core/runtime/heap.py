"""Give freed memory back to the operating system (glibc), so a long session's resident size
follows what it holds rather than the highest it ever held.

Why: issue 17's soak (random user actions for minutes, the real model) showed the resident set
swing between 0.7 and 3.5 GB while the Python heap held 100-250 MB between spikes; after
`malloc_trim(0)` the same process was 0.2-1.5 GB smaller. The spikes are transient work (token
lists for BM25 over heavily overlapping chunks, the model's hidden states, piece tables), freed by
reference counting, but glibc keeps what was freed inside its heaps: the main heap only shrinks
from the top, each worker thread's arena likewise, and large blocks stop being mmapped once the
dynamic mmap threshold has risen (it rises to the size of each mmapped block freed, up to 32 MB).

Two measures, both no-ops where glibc is absent (macOS, Windows, musl):

* `configure()` fixes the mmap threshold at `MMAP_THRESHOLD`: every block that large is mapped on
  its own and unmapped when freed (arrays, big lists), whatever was freed before;
* `trim()` runs `malloc_trim(0)`, which also returns free pages inside the heaps. ctypes releases
  the interpreter lock for the call, so a worker thread can run it while the window goes on.
"""

from __future__ import annotations

import ctypes
import sys
import threading
import time

#: Blocks of at least this many bytes are mmapped (and given back when freed). glibc's default
#: starts at 128 KiB and grows with each large block freed.
MMAP_THRESHOLD = 1 << 20
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

_LIBC: ctypes.CDLL | None = None
_LOADED = False
_LOCK = threading.Lock()
trims = 0
"""`trim()` calls that reached glibc (for tests and benchmarks)."""
longest_s = 0.0
"""The longest `trim()` so far, in seconds (benchmarks print it)."""


def _load_libc() -> ctypes.CDLL:
    """glibc by its soname; `ctypes.util.find_library` only where that fails (another C library):
    importing ctypes.util and its search (it runs `ldconfig -p`) cost 10-35 ms before the window
    showed (issue 31)."""
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        from ctypes.util import find_library

        return ctypes.CDLL(find_library("c") or "libc.so.6")


def _libc() -> ctypes.CDLL | None:
    global _LIBC, _LOADED
    with _LOCK:
        if not _LOADED:
            _LOADED = True
            if sys.platform.startswith("linux"):
                try:
                    lib = _load_libc()
                    if hasattr(lib, "malloc_trim") and hasattr(lib, "mallopt"):
                        lib.malloc_trim.argtypes = [ctypes.c_size_t]
                        lib.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
                        _LIBC = lib
                except OSError:
                    _LIBC = None
        return _LIBC


def available() -> bool:
    """True where the C library is glibc (both measures do something)."""
    return _libc() is not None


def configure(mmap_threshold: int = MMAP_THRESHOLD) -> bool:
    """Fix glibc's mmap threshold (which also stops its dynamic growth); True when set."""
    lib = _libc()
    if lib is None:
        return False
    ok = bool(lib.mallopt(_M_MMAP_THRESHOLD, int(mmap_threshold)))
    # The trim threshold would otherwise also follow the dynamic mmap threshold upwards.
    ok = bool(lib.mallopt(_M_TRIM_THRESHOLD, 4 * int(mmap_threshold))) and ok
    return ok


def trim() -> bool:
    """Return free heap pages to the system now; True when glibc did (something to give back or
    not). Call it off the GUI thread: it walks every heap (milliseconds to tens of them)."""
    global trims, longest_s
    lib = _libc()
    if lib is None:
        return False
    t0 = time.perf_counter()
    lib.malloc_trim(0)
    took = time.perf_counter() - t0
    with _LOCK:
        trims += 1
        longest_s = max(longest_s, took)
    return True


__all__ = ["MMAP_THRESHOLD", "available", "configure", "trim"]
