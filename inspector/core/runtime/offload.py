"""Pure-Python work that would hold the GIL for long, run in a helper process instead.

Why: in the window, a worker *thread* running Python (BM25 indexing, chunking a big document)
starves the GUI thread. Every call Qt makes into a Python object (an event, a paint, a virtual
method shiboken checks for an override) must take the GIL first, and beside a busy thread each
take waits for the interpreter's switch interval. A repaint makes thousands of such calls: in the
issue-17 soak the window froze for 700-900 ms while a thread tokenized chunks for BM25, with the
GUI thread inside `QWidget.event` waiting. A second process has its own GIL, so the window only
shares the CPU with it, never the interpreter.

The helper is one `spawn`ed process (never `fork`: the window has threads and Qt state), started
on first use, reused, and run at a lower priority than the window. Work is sent as plain data
(texts, spans, parameters) and comes back as plain data (arrays, small objects): pickling both is
a few milliseconds where the work is hundreds.

Off by default: the command line has no GUI thread to keep responsive and would only pay the
helper's start. The window turns it on (`enable()`). Small jobs stay in the calling thread
(`wanted`): a round trip costs about a millisecond plus pickling, a start a second.

Cancellation crosses the process boundary: each call gets a slot in a shared byte array; when the
caller's cancel scope (`inspector.core.runtime.cancel`) says the request is stale, the caller sets the
slot and stops waiting, and `check_cancelled()` inside the helper raises there, so stale work
stops instead of delaying the next request. If the helper dies, the call is run in the calling
thread and the next call starts a fresh helper.

Long texts travel through a file, not the pipe (`ship`). The pipe's feeder thread pickles a call
in one C call that holds the GIL: a 20 MB document took 42 ms, the longest pause of the window
while opening it. Shipped, the calling thread writes the text to a temporary file a slice at a
time (each slice's encode a millisecond, the writes without the GIL), the pipe carries the file's
name, and the helper reads the text back.

A helper that has grown is replaced (`Offload.retire_if_grown`). Each job leaves a little behind:
CPython's small-object arenas go back to the system only when wholly empty, so the helper of a
30-minute soak went from 120 MB to 290-300 MB holding a few pages of documents, more than half of
the session's growth. Once the helper has been idle for `RETIRE_IDLE_S` and its resident set is
more than `RETIRE_GROWTH_BYTES` above what it had after starting, plus `HELD_BYTES_PER_CHAR` for
every character of the documents it keeps (a helper holding a 20 MB document's tokens rightly
weighs 750 MB, and a restart would throw 19 s of work away), it is shut down and a fresh one
started at once (a quarter of a second). What the old one kept is sent again when asked for
(`NeedDocument`), as after a helper dies.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import multiprocessing as mp
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from inspector.core.runtime.cancel import Cancelled, cancel_scope, check_cancelled, current

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Jobs smaller than this (characters of text they read) stay in the calling thread.
MIN_CHARS = 200_000
#: Cancel slots shared with the helper; a slot is reused after this many calls.
SLOTS = 256
#: How often a waiting caller looks at its cancel scope (seconds).
POLL_S = 0.02
#: Added to the helper's niceness: the window's process is served first on a busy machine.
NICENESS = 5

#: The helper gives freed heap pages back to the system at most this often (seconds) while jobs
#: keep coming...
TRIM_EVERY_S = 5.0
#: ...and once it has been idle this long after a job (seconds), so that what a large job freed is
#: not held until the next job.
TRIM_IDLE_S = 0.5

#: Texts at least this long (characters) go to the helper through a file (`ship`).
SHIP_MIN_CHARS = 1_000_000

#: A helper is replaced by a fresh one (`Offload.retire_if_grown`) when its resident set is this
#: much above what it had after starting...
RETIRE_GROWTH_BYTES = 96 << 20
#: ...plus this much for each character of the documents it keeps (`holding`: a 20 MB document's
#: text, tokens, word pieces and structure took 34 bytes a character, a 2 MB one 55)...
HELD_BYTES_PER_CHAR = 64
#: ...once no call has run for this long (seconds)...
RETIRE_IDLE_S = 3.0
#: ...and it has served at least this long (seconds), so that a wrong guess costs one restart a
#: minute at most.
RETIRE_MIN_AGE_S = 60.0
#: How often the keeper thread looks (seconds).
KEEPER_EVERY_S = 1.0

_FLAGS: Any = None  # the helper's view of the shared cancel slots (set by _init)
_LAST_TRIM = [0.0]
_JOB_ENDED = threading.Event()
"""Set by every job that ends in the helper; the trimmer waits for it."""
_BUSY = [0]
"""Jobs running in the helper now (0 or 1: one worker)."""
_HOLDING: list[Callable[[], int]] = []
"""In the helper: functions that count the characters of documents a module keeps (`holding`)."""


def _init(flags: Any) -> None:
    global _FLAGS
    _FLAGS = flags
    from inspector.core.runtime import heap

    # As in the window's process: large blocks mapped on their own and unmapped when freed, and
    # free pages trimmed after jobs (`_run`, `_trimmer`). Without it the helper kept what its
    # largest jobs had used: 100 MB at the start of a 30-minute soak, 343 MB at its end.
    heap.configure()
    threading.Thread(target=_trimmer, name="helper-trim", daemon=True).start()
    threading.Thread(target=_outlive_no_parent, name="helper-parent", daemon=True).start()
    with contextlib.suppress(OSError, AttributeError):  # not permitted, or not a POSIX system
        os.nice(NICENESS)


def _outlive_no_parent() -> None:
    """In the helper, on its own thread: exit as soon as the process that started it is gone.
    The helper waits for work on a queue whose pipe it holds both ends of, so a window that was
    killed or crashed (no `shutdown`) left it running for good: 125 MB and a resource tracker
    beside it, found after a killed soak."""
    parent = mp.parent_process()
    if parent is None:  # not a spawned child (a test calling it here)
        return
    parent.join()  # returns once the parent's end of its sentinel pipe is closed: it has exited
    os._exit(0)


def _trim_now() -> None:
    from inspector.core.runtime import heap

    heap.trim()
    _LAST_TRIM[0] = time.monotonic()


def _trimmer(idle_s: float = TRIM_IDLE_S) -> None:
    """In the helper, on its own thread: after a job, once no job has run for `idle_s`, give the
    freed pages back (a soak's helper otherwise sat on a large job's memory between bursts)."""
    while True:
        _JOB_ENDED.wait()
        _JOB_ENDED.clear()
        time.sleep(idle_s)
        if _BUSY[0] or _JOB_ENDED.is_set():
            _JOB_ENDED.set()  # still working: look again after the next quiet moment
            continue
        _trim_now()


def _run(slot: int, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
    """In the helper: `fn(*args)` inside a cancel scope that reads the call's shared slot."""
    flags = _FLAGS
    if flags is not None and flags[slot]:  # cancelled while it waited in the queue
        raise Cancelled()
    _BUSY[0] += 1
    try:
        with cancel_scope(lambda: flags is not None and flags[slot] != 0):
            return fn(*args)
    finally:
        _BUSY[0] -= 1
        _JOB_ENDED.set()
        if time.monotonic() - _LAST_TRIM[0] >= TRIM_EVERY_S:
            _trim_now()


def _pid() -> int:
    return os.getpid()


def _warm(warm_up: Callable[[], object] | None) -> tuple[int, int | None]:
    """In the helper, its first job: `warm_up()` imports what its jobs use, so the first real job
    does not wait for it; answers (its pid, the resident set it then has: the baseline
    `retire_if_grown` measures this process's growth from). The jobs are the domain's, so the
    domain names the imports (`inspector.core.chunking.helper_jobs.warm_up`, handed to `enable` by
    the window): this module sits below the domain and imports none of it."""
    if warm_up is not None:
        warm_up()
    return os.getpid(), _footprint()[0]


def holding(count: Callable[[], int]) -> None:
    """In the helper: `count()` tells how many characters of documents a module keeps there (a
    helper that holds them may rightly be large: `retire_if_grown` allows for them)."""
    _HOLDING.append(count)


def rss_bytes(pid: int | str = "self") -> int | None:
    """Resident set size of a process in bytes (None where /proc does not tell)."""
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _footprint() -> tuple[int | None, int]:
    """In the helper: its resident set once free pages are given back, and the characters of
    documents its modules keep."""
    _trim_now()
    return rss_bytes(), sum(count() for count in _HOLDING)


def _probe() -> tuple[int, int | None, int]:
    """In the helper: (its pid, `_footprint()`), so the size is compared with that process's own
    baseline (a pool of several processes answers from whichever takes the job)."""
    return (os.getpid(), *_footprint())


class ShippedText:
    """A long text on its way to the helper, in a temporary file (`ship`). Pickled, it is the
    file's name; unpickled, the text (or None when the file is gone: the caller gave up on the
    call, which the helper then does not run)."""

    def __init__(self, text: str) -> None:
        from inspector.core.runtime.slices import utf8_slices

        self.chars = len(text)
        self.path = ""
        for folder in _ship_folders():
            fd = -1
            try:
                fd, path = tempfile.mkstemp(prefix="inspector-text-", suffix=".utf8", dir=folder)
                for part in utf8_slices(text):  # each write runs without the GIL
                    view = memoryview(part)
                    while view:
                        view = view[os.write(fd, view):]
                os.close(fd)
                self.path = path
                return
            except OSError:  # full (a small /dev/shm) or not writable: the next folder
                if fd >= 0:
                    os.close(fd)
                    with contextlib.suppress(OSError):
                        os.unlink(path)
        raise OSError("no folder to ship a text through")

    def __reduce__(self) -> tuple[Any, ...]:
        return (_received, (self.path, self.chars))

    def discard(self) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.path)


def _ship_folders() -> list[str | None]:
    """Memory-backed /dev/shm first where there is one, then the system's temporary folder."""
    shm = "/dev/shm"
    return ([shm] if os.path.isdir(shm) and os.access(shm, os.W_OK) else []) + [None]


def _received(path: str, chars: int) -> str | None:
    """In the helper: the shipped text (None when the caller already discarded it; never raise
    while a call is unpickled, which would take the helper down)."""
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "surrogatepass")  # the helper's own GIL: at once
    except (OSError, UnicodeDecodeError):
        return None
    return text if len(text) == chars else None


@contextlib.contextmanager
def ship(text: str) -> Iterator[Any]:
    """`text` as it should be passed to `Offload.call`: long ones as a `ShippedText` (removed on
    leaving), short ones as they are, and as they are too where no file can be written."""
    if len(text) < SHIP_MIN_CHARS:
        yield text
        return
    try:
        parcel = ShippedText(text)
    except OSError as exc:
        log.warning("could not ship a text through a file (%s); sending it through the pipe", exc)
        yield text
        return
    try:
        yield parcel
    finally:
        parcel.discard()


class Offload:
    """One helper process for pure-Python work (see the module's docstring). Thread-safe."""

    def __init__(self, *, min_chars: int = MIN_CHARS, enabled: bool = False,
                 warm_up: Callable[[], object] | None = None, workers: int = 1) -> None:
        self.min_chars = min_chars
        self.workers = max(1, workers)
        """Processes of the pool: 1 for the window's helper (its jobs keep documents between
        calls, so they must meet the same process), more for a corpus's independent jobs
        (`corpus_pool`, `call_each`)."""
        self.enabled = enabled
        self.warm_up = warm_up
        """A module-level function the helper runs first, importing what its jobs use (`_warm`);
        None: the first job imports what it needs."""
        self._ctx = mp.get_context("spawn")
        self._flags: Any = None
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self._next = 0
        self.calls = 0
        """Calls run in the helper (a test counts them)."""
        self.recent: collections.deque[str] = collections.deque(maxlen=64)
        """Names of the functions of the last calls, oldest first (tests read them)."""
        self.fallbacks = 0
        """Calls run in the calling thread because the helper had died."""
        self.ready = True
        """False while `warm_later` is starting the helper: jobs stay in the calling thread
        meanwhile, so the first document after launch is not chunked a second later."""
        self.retired = 0
        """Helpers replaced because they had grown (`retire_if_grown`)."""
        self._baselines: dict[int, int] = {}
        """Each running helper process's resident set after its start, by pid (bytes)."""
        self._inflight = 0
        self._started = 0.0
        self._last_end = 0.0
        self._ended_since_check = False
        self._keeper: threading.Thread | None = None
        self.shutdowns = 0
        """Calls of `shutdown` so far: a retirement under way starts no fresh helper after one."""

    def wanted(self, chars: int, min_chars: int | None = None) -> bool:
        """Whether a job reading `chars` characters goes to the helper (`min_chars`: the job's
        own threshold instead of the helper's)."""
        floor = self.min_chars if min_chars is None else min_chars
        return self.enabled and self.ready and chars >= floor

    def _executor(self, *, calling: bool = False) -> tuple[ProcessPoolExecutor, Any]:
        """The running helper, started if there is none (`calling`: a call is made on it, which
        `_ended` closes)."""
        with self._lock:
            pool = self._pool if self._pool is not None else self._start_locked()
            if calling:
                self._inflight += 1
            return pool, self._flags

    def _start_locked(self) -> ProcessPoolExecutor:
        """Start a helper (`_lock` held)."""
        self._flags = self._ctx.Array("b", SLOTS, lock=False)
        pool = self._pool = ProcessPoolExecutor(self.workers, mp_context=self._ctx, initializer=_init,
                                                initargs=(self._flags,))
        self._baselines = {}
        self._started = time.monotonic()
        for _ in range(self.workers):  # each process's first job, as they start
            pool.submit(_warm, self.warm_up).add_done_callback(lambda fut: self._note_baseline(pool, fut))
        if self._keeper is None:
            self._keeper = threading.Thread(target=self._keep, name="offload-keeper", daemon=True)
            self._keeper.start()
        return pool

    @property
    def baseline(self) -> int | None:
        """The largest resident set a running helper process had after its start (bytes; None
        until one is known)."""
        with self._lock:
            return max(self._baselines.values(), default=None)

    def _note_baseline(self, pool: ProcessPoolExecutor, fut: Future[tuple[int, int | None]]) -> None:
        if fut.cancelled() or fut.exception() is not None:
            return
        pid, rss = fut.result()
        with self._lock:
            if self._pool is pool and rss is not None:
                self._baselines[pid] = rss

    def _ended(self) -> None:
        with self._lock:
            self._inflight -= 1
            self._last_end = time.monotonic()
            self._ended_since_check = True

    def _keep(self) -> None:
        """The keeper thread: while there is a helper, look now and then whether it should be
        replaced (`retire_if_grown`)."""
        while True:
            time.sleep(KEEPER_EVERY_S)
            with self._lock:
                if self._pool is None:
                    self._keeper = None
                    return
            try:
                self.retire_if_grown()
            except Exception as exc:  # noqa: BLE001  (the keeper must not die; the next look may do)
                log.warning("could not check the helper process's size: %s", exc)

    def retire_if_grown(self) -> bool:
        """Replace the helper by a fresh one if it has been idle for `RETIRE_IDLE_S`, has served
        `RETIRE_MIN_AGE_S`, and its resident set is over its allowance (the module's docstring).
        True when it was replaced. The keeper thread calls it; so may a test."""
        now = time.monotonic()
        with self._lock:
            pool, baselines = self._pool, dict(self._baselines)
            if (pool is None or not baselines or self._inflight or not self._ended_since_check
                    or now - self._last_end < RETIRE_IDLE_S or now - self._started < RETIRE_MIN_AGE_S):
                return False
            self._ended_since_check = False  # looked: not again before another call has ended
        try:
            pid, rss, held = pool.submit(_probe).result(timeout=30)
        except (BrokenProcessPool, RuntimeError, TimeoutError):
            return False
        # That process's own start; one whose warm-up another process took: the largest start known.
        baseline = baselines.get(pid, max(baselines.values()))
        if rss is None or rss <= baseline + RETIRE_GROWTH_BYTES + HELD_BYTES_PER_CHAR * held:
            return False
        with self._lock:
            if self._pool is not pool or self._inflight:  # a call came meanwhile: look later
                self._ended_since_check = True
                return False
            self._pool = None
            self.retired += 1
            shutdowns = self.shutdowns
        log.info("helper process grew to %d MB (%d MB after starting, %d characters kept): replacing it",
                 rss >> 20, baseline >> 20, held)
        pool.shutdown(wait=True)
        with self._lock:
            # The fresh one starts now, not at the next job; unless the owner shut the helper down
            # meanwhile (the window quitting): one started after that would never be stopped.
            if self._pool is None and self.shutdowns == shutdowns:
                self._start_locked()
        return True

    def _slot(self, flags: Any) -> int:
        with self._lock:
            slot = self._next % SLOTS
            self._next += 1
            flags[slot] = 0
            return slot

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` in the helper (`fn` a module-level function, `args` picklable); raises
        what it raises, `Cancelled` as soon as the calling scope is cancelled."""
        is_cancelled = current()
        pool, flags = self._executor(calling=True)
        try:
            slot = self._slot(flags)
            try:
                fut: Future[T] = pool.submit(_run, slot, fn, args)
            except (BrokenProcessPool, RuntimeError) as exc:  # died, or shut down meanwhile
                return self._fallback(pool, exc, fn, args)
            self.calls += 1
            self.recent.append(getattr(fn, "__name__", repr(fn)))
            while True:
                try:
                    return fut.result(timeout=POLL_S)
                except TimeoutError:
                    if is_cancelled is not None and is_cancelled():
                        flags[slot] = 1
                        fut.cancel()
                        raise Cancelled() from None
                except BrokenProcessPool as exc:
                    return self._fallback(pool, exc, fn, args)
        finally:
            self._ended()

    def _fallback(self, pool: ProcessPoolExecutor, exc: BaseException, fn: Callable[..., T],
                  args: tuple[Any, ...]) -> T:
        log.warning("helper process unavailable (%s); running %s in this process", exc,
                    getattr(fn, "__name__", fn))
        with self._lock:
            if self._pool is pool:
                self._pool = None
        self.fallbacks += 1
        return fn(*args)

    def call_each(self, fn: Callable[..., T], calls: Sequence[tuple[Any, ...]]
                  ) -> Iterator[tuple[int, T | None, BaseException | None]]:
        """`fn(*args)` for every `args` of `calls`, spread over the pool's processes; yields
        (position in `calls`, result, None) or (position, None, the exception it raised) as each
        ends, so one failing call does not stop the others. At most two calls per process are in
        flight (each holds a cancel slot, and a shipped text a file). `Cancelled` as soon as the
        calling scope is cancelled: the calls running are told to stop, the queued ones dropped.
        If the pool dies, the calls left run in the calling thread."""
        is_cancelled = current()
        pool, flags = self._executor(calling=True)
        running: dict[Future[T], tuple[int, int]] = {}
        todo = collections.deque(enumerate(calls))
        try:
            while todo or running:
                while todo and len(running) < 2 * self.workers:
                    i, args = todo[0]
                    slot = self._slot(flags)
                    try:
                        fut: Future[T] = pool.submit(_run, slot, fn, args)
                    except (BrokenProcessPool, RuntimeError) as exc:  # died, or shut down meanwhile
                        todo.extendleft(reversed([(j, calls[j]) for j, _s in running.values()]))
                        running.clear()
                        yield from self._each_here(pool, exc, fn, todo)
                        return
                    todo.popleft()
                    running[fut] = (i, slot)
                    self.calls += 1
                    self.recent.append(getattr(fn, "__name__", repr(fn)))
                done, _ = wait(running, timeout=POLL_S, return_when=FIRST_COMPLETED)
                if not done and is_cancelled is not None and is_cancelled():
                    for f, (_i, slot) in running.items():
                        flags[slot] = 1
                        f.cancel()
                    raise Cancelled()
                for f in done:
                    i, _slot = running.pop(f)
                    try:
                        result = f.result()
                    except BrokenProcessPool as exc:
                        todo.appendleft((i, calls[i]))
                        todo.extendleft(reversed([(j, calls[j]) for j, _s in running.values()]))
                        running.clear()
                        yield from self._each_here(pool, exc, fn, todo)
                        return
                    except Cancelled:
                        raise
                    except Exception as exc:  # noqa: BLE001  (the caller reports it with the call)
                        yield i, None, exc
                    else:
                        yield i, result, None
        finally:
            for f, (_i, slot) in running.items():  # cancelled, or the caller stopped early
                flags[slot] = 1
                f.cancel()
            self._ended()

    def _each_here(self, pool: ProcessPoolExecutor, exc: BaseException, fn: Callable[..., T],
                   todo: collections.deque[tuple[int, tuple[Any, ...]]]
                   ) -> Iterator[tuple[int, T | None, BaseException | None]]:
        """`call_each`'s calls left, in the calling thread (the pool died)."""
        log.warning("helper processes unavailable (%s); running %d calls of %s in this process", exc,
                    len(todo), getattr(fn, "__name__", fn))
        with self._lock:
            if self._pool is pool:
                self._pool = None
        while todo:
            i, args = todo.popleft()
            self.fallbacks += 1
            check_cancelled()
            try:
                result = fn(*args)
            except Cancelled:
                raise
            except Exception as e:  # noqa: BLE001  (as in the pool: the caller reports it)
                yield i, None, e
            else:
                yield i, result, None

    def warm_later(self) -> None:
        """Start the helper and its imports on a daemon thread (the window calls it at launch)."""
        if self.enabled:
            self.ready = False
            threading.Thread(target=self._warm, name="offload-warm", daemon=True).start()

    def _warm(self) -> None:
        try:
            self.call(_pid)  # waits behind the helper's first job, its imports (`_warm`)
        except Exception as exc:  # noqa: BLE001  (a job will meet the same failure and say so)
            log.warning("could not start the helper process: %s", exc)
        finally:
            self.ready = True

    def pids(self) -> list[int]:
        """Process ids of the running helper (for memory figures)."""
        with self._lock:
            pool = self._pool
        procs = getattr(pool, "_processes", None) or {}
        return list(procs)

    def shutdown(self) -> None:
        """Stop the helper: running work is told to stop, queued work is dropped."""
        with self._lock:
            pool, flags, self._pool = self._pool, self._flags, None
            self.shutdowns += 1
        if pool is None:
            return
        for i in range(SLOTS):
            flags[i] = 1
        pool.shutdown(wait=True, cancel_futures=True)


_DEFAULT = Offload()


def default() -> Offload:
    """The process-wide helper (off until `enable()`)."""
    return _DEFAULT


def enable(on: bool = True, *, min_chars: int | None = None,
           warm_up: Callable[[], object] | None = None) -> Offload:
    """Send large jobs to the helper from now on (the window does, at start); `warm_up`: what a
    fresh helper runs first (`Offload.warm_up`)."""
    _DEFAULT.enabled = on
    if min_chars is not None:
        _DEFAULT.min_chars = min_chars
    if warm_up is not None:
        _DEFAULT.warm_up = warm_up
    return _DEFAULT


_CORPUS: list[Offload] = []
_CORPUS_LOCK = threading.Lock()


def cores() -> int:
    """The CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def allowed_cores() -> int:
    """The cores this process may run on, or fewer where OMP_NUM_THREADS says so (Ray sets it to a
    worker's CPUs: a one-CPU task runs one thread and starts no processes; a user who set it to
    limit threads is obeyed too)."""
    limit = cores()
    omp = os.environ.get("OMP_NUM_THREADS", "").strip()
    if omp.isdigit() and int(omp) > 0:
        limit = min(limit, int(omp))
    return max(1, limit)


def corpus_pool(warm_up: Callable[[], object] | None = None) -> Offload:
    """The process-wide pool for a corpus's independent jobs (`Offload.call_each`: every document
    of a folder chunked at once), one process per core, started on first use; separate from the
    window's helper, whose one process keeps the shown document between calls. Shut down with
    `shutdown_corpus_pool` (the window does when it quits)."""
    with _CORPUS_LOCK:
        if not _CORPUS:
            _CORPUS.append(Offload(enabled=True, warm_up=warm_up if warm_up is not None else _DEFAULT.warm_up,
                                   workers=cores()))
        return _CORPUS[0]


def shutdown_corpus_pool() -> None:
    """Stop `corpus_pool`'s processes, if they were started."""
    with _CORPUS_LOCK:
        pools = list(_CORPUS)
    for pool in pools:
        pool.shutdown()
