"""The helper process (`inspector.core.runtime.offload`): results, errors, cancellation across the process
boundary, a helper that dies, and BM25 built there equal to BM25 built here."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from inspector.core.chunking import helper_jobs
from inspector.core.chunking.registry import get_strategy
from inspector.core.documents.document import from_text
from inspector.core.retrieval.index import build_index
from inspector.core.runtime import offload
from inspector.core.runtime.cancel import Cancelled, cancel_scope
from tests.core import offload_jobs as jobs

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def helper():
    h = offload.Offload(min_chars=0, enabled=True)
    yield h
    h.shutdown()


def test_results_and_errors_come_back(helper):
    assert helper.call(jobs.add, 2, 3) == 5
    assert helper.call(jobs.pid) != os.getpid()
    with pytest.raises(ValueError, match="broken gold set"):
        helper.call(jobs.fail, "broken gold set")
    assert helper.call(jobs.add, 1, 1) == 2  # an error leaves the helper usable


def test_off_or_small_jobs_stay_in_this_process():
    h = offload.Offload(min_chars=1000)
    assert not h.wanted(10**9)  # off by default
    h.enabled = True
    assert not h.wanted(999) and h.wanted(1000)


def test_cancelling_stops_the_wait_and_the_work(helper):
    helper.call(jobs.pid)  # started
    stop = threading.Event()
    threading.Timer(0.2, stop.set).start()
    t0 = time.monotonic()
    with cancel_scope(stop.is_set), pytest.raises(Cancelled):
        helper.call(jobs.spin, 30.0)
    assert time.monotonic() - t0 < 5.0
    # The stale job stopped in the helper: the next call does not wait 30 s behind it.
    t0 = time.monotonic()
    assert helper.call(jobs.add, 20, 22) == 42
    assert time.monotonic() - t0 < 10.0


def test_a_dead_helper_is_replaced(helper):
    first = helper.call(jobs.pid)
    os.kill(first, signal.SIGKILL)
    # The call that meets the dead helper runs here instead; a later one gets a fresh helper.
    for _ in range(3):
        assert helper.call(jobs.add, 3, 4) == 7
    assert helper.fallbacks >= 1 or helper.call(jobs.pid) != first
    assert helper.call(jobs.pid) != first


@pytest.mark.parametrize("with_prefix,ship_from", [(True, 10**9), (False, 10**9), (True, 1)])
def test_bm25_built_in_the_helper_ranks_as_built_here(helper, monkeypatch, with_prefix, ship_from):
    monkeypatch.setattr(offload, "SHIP_MIN_CHARS", ship_from)  # 1: the texts go through files
    text = (ROOT / "sample_docs" / "handbook.md").read_text(encoding="utf-8")
    doc = from_text(text, "handbook.md")
    chunks = get_strategy("markdown")(doc, {})
    questions = ["parental leave in Germany", "how many vacation days", "expense reports deadline",
                 "remote work equipment"]

    def scores(h):
        monkeypatch.setattr(offload, "_DEFAULT", h)
        index = build_index([doc], {doc.doc_id: chunks}, None, with_prefix=with_prefix)
        return [np.asarray(index._bm25_scores(q, None)) for q in questions], \
            [[hit.chunk.id for hit in index.search(q, k=5, retriever="bm25")] for q in questions]

    calls = helper.calls
    here = scores(offload.Offload())
    there = scores(helper)
    assert helper.calls == calls + 1
    for a, b in zip(here[0], there[0], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert here[1] == there[1]


def test_jobs_stay_here_while_the_helper_warms_up():
    h = offload.Offload(min_chars=0, enabled=True)
    try:
        h.warm_later()
        assert not h.wanted(10**6)  # starting: the caller does the job itself
        deadline = time.monotonic() + 60
        while not h.ready and time.monotonic() < deadline:
            time.sleep(0.05)
        assert h.ready and h.wanted(10**6) and h.wanted(5, min_chars=5) and not h.wanted(4, min_chars=5)
        assert h.pids()
    finally:
        h.shutdown()


def test_a_fresh_helper_runs_the_warm_up_it_was_given_before_any_job():
    """The runtime names no domain module: the window hands it `helper_jobs.warm_up`, which
    imports the chunkers and bm25s first, so the first document after launch does not wait."""
    # The chunkers themselves, not only their declarations (the registry imports no chunker).
    names = ["bm25s", "inspector.core.chunking.markdown", "inspector.core.chunking.recursive"]
    cold = offload.Offload(min_chars=0, enabled=True)
    warm = offload.Offload(min_chars=0, enabled=True, warm_up=helper_jobs.warm_up)
    try:
        assert cold.call(jobs.imported, names) == [False, False, False]
        assert warm.call(jobs.imported, names) == [True, True, True]
        assert warm.baseline is not None  # measured after the warm-up, as `retire_if_grown` needs
    finally:
        cold.shutdown()
        warm.shutdown()


def test_the_helper_gives_memory_back_once_idle_after_a_job(tmp_path):
    """What a job freed is trimmed when the helper goes quiet, not only at the next job 5 s on."""
    h = offload.Offload(min_chars=0, enabled=True)
    try:
        assert h.call(jobs.add, 1, 1) == 2  # the first job trims at its end (none made before)
        report = tmp_path / "trims.txt"
        before = h.call(jobs.report_trims_to, str(report))  # the last job: the helper goes quiet
        if before < 0:
            pytest.skip("the C library is not glibc: nothing to trim")
        # No job runs after it, so only the idle trimmer can trim (the every-TRIM_EVERY_S trim
        # happens at the end of a job): wait for the helper to say its count grew.
        assert _wait(report.exists, 60.0)
        assert offload.TRIM_IDLE_S < offload.TRIM_EVERY_S
        assert int(report.read_text(encoding="ascii")) > before
        assert h.call(jobs.trims) > before
    finally:
        h.shutdown()


def _gone(pid: int) -> bool:
    """The process has exited (a zombie left to an init that does not reap counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False


def test_the_helper_does_not_outlive_a_killed_window(tmp_path):
    """A window killed without `shutdown` (a crash, `kill -9`) takes its helper with it."""
    import subprocess
    import sys

    if not Path("/proc").is_dir():
        pytest.skip("no /proc here")
    script = ("import os, signal\n"
              "from inspector.core.runtime import offload\n"
              "from tests.core import offload_jobs as jobs\n"
              "h = offload.Offload(min_chars=0, enabled=True)\n"
              "print(h.call(jobs.pid), flush=True)\n"
              "os.kill(os.getpid(), signal.SIGKILL)\n")
    out = tmp_path / "pid.txt"
    with out.open("w") as fh:  # a file, not a pipe: the helper inherits it and must not be waited for
        proc = subprocess.run([sys.executable, "-c", script], stdout=fh, cwd=Path(__file__).parents[2],
                              timeout=120)
    assert proc.returncode == -signal.SIGKILL
    pid = int(out.read_text().split()[0])
    deadline = time.monotonic() + 20
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    gone = _gone(pid)
    if not gone:
        os.kill(pid, signal.SIGKILL)
    assert gone, "the helper process outlived the process that started it"


# -- long texts through a file ---------------------------------------------------------------------

_ODD = "Grüße — 16 weeks € \ud800 end\n"  # non-ASCII and a lone surrogate (passed through)


def test_a_long_text_is_shipped_through_a_file_and_arrives_whole(monkeypatch):
    import pickle

    monkeypatch.setattr(offload, "SHIP_MIN_CHARS", 1000)
    text = _ODD * 500
    with offload.ship(text) as sent:
        assert isinstance(sent, offload.ShippedText)
        path = sent.path
        data = pickle.dumps(sent)
        assert len(data) < 500  # the file's name, not the text
        assert pickle.loads(data) == text
    assert not os.path.exists(path)  # removed once the call is over
    assert pickle.loads(data) is None  # gone: the helper would not run the call
    with offload.ship("short") as sent:
        assert sent == "short"


def test_a_shipped_text_reaches_the_real_helper(helper, monkeypatch):
    monkeypatch.setattr(offload, "SHIP_MIN_CHARS", 1000)
    text = _ODD * 500
    with offload.ship(text) as sent:
        assert helper.call(jobs.length_and_hash, sent) == jobs.length_and_hash(text)


def test_a_text_that_cannot_be_shipped_goes_through_the_pipe(monkeypatch):
    monkeypatch.setattr(offload, "SHIP_MIN_CHARS", 10)
    monkeypatch.setattr(offload, "_ship_folders", lambda: ["/nonexistent/folder"])
    with offload.ship("x" * 100) as sent:
        assert sent == "x" * 100


def test_a_shipped_document_is_the_document_again(monkeypatch):
    import pickle

    from inspector.core.chunking import helper_jobs

    monkeypatch.setattr(offload, "SHIP_MIN_CHARS", 1000)
    doc = from_text("# Leave\n\n" + _ODD * 400, "big.md")
    with helper_jobs.shipped(doc) as sent:
        data = pickle.dumps(sent)
        assert len(data) < 2000
        back = pickle.loads(data)
    assert back == doc and back.text == doc.text and back.kind == doc.kind and back.doc_id == doc.doc_id
    assert back._sha256 == doc.sha256
    assert pickle.loads(data) is None  # the text is gone: the helper asks for the document again
    small = from_text("tiny", "t.md")
    with helper_jobs.shipped(small) as sent:
        assert sent is small


# -- a helper that has grown is replaced -----------------------------------------------------------


@pytest.fixture
def quick_retire(monkeypatch):
    """Retirement after 0.2 s idle, at any age, above 32 MB of growth (the keeper looks every 0.1 s)."""
    if offload.rss_bytes() is None:
        pytest.skip("no /proc: the helper's size is not known here")
    monkeypatch.setattr(offload, "RETIRE_IDLE_S", 0.2)
    monkeypatch.setattr(offload, "RETIRE_MIN_AGE_S", 0.0)
    monkeypatch.setattr(offload, "RETIRE_GROWTH_BYTES", 32 << 20)
    monkeypatch.setattr(offload, "HELD_BYTES_PER_CHAR", 64)
    monkeypatch.setattr(offload, "KEEPER_EVERY_S", 0.1)
    h = offload.Offload(min_chars=0, enabled=True, warm_up=helper_jobs.warm_up)  # as the window's
    yield h
    h.shutdown()


def _wait(condition, seconds=30.0):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


def test_a_grown_helper_is_replaced_once_idle(quick_retire):
    h = quick_retire
    first = h.call(jobs.hold, 80, 0)  # 80 MB more, no documents to explain them
    assert _wait(lambda: h.retired == 1)
    assert _wait(lambda: h.baseline is not None)  # the fresh one started at once and measured itself
    assert h.call(jobs.pid) != first
    assert h.call(jobs.add, 2, 2) == 4
    assert not h.retire_if_grown()  # the fresh one is small


def test_a_helper_whose_documents_explain_its_size_is_kept(quick_retire, monkeypatch):
    h = quick_retire
    looks: list[bool] = []
    look = offload.Offload.retire_if_grown

    def counted(self):  # the real look, counted
        replaced = look(self)
        looks.append(replaced)
        return replaced

    monkeypatch.setattr(offload.Offload, "retire_if_grown", counted)
    first = h.call(jobs.hold, 80, 2_000_000)  # 2 M characters: 128 MB allowed for them
    # The keeper measured the helper once it was idle (that look clears the flag), and a later
    # look has ended, so the measuring one has too.
    assert _wait(lambda: not h._ended_since_check)
    seen = len(looks)
    assert _wait(lambda: len(looks) > seen)
    assert not any(looks)
    assert not h.retire_if_grown()
    assert h.retired == 0 and h.call(jobs.pid) == first


def test_a_busy_helper_is_not_replaced(quick_retire, tmp_path):
    h = quick_retire
    h.call(jobs.hold, 80, 0)
    done = threading.Event()
    go_on = tmp_path / "go-on"
    worker = threading.Thread(target=lambda: (h.call(jobs.wait_for_file, str(go_on)), done.set()))
    worker.start()
    assert _wait(lambda: h._inflight == 1)
    assert not h.retire_if_grown()  # a call runs
    go_on.touch()
    worker.join()
    assert done.is_set()
    assert _wait(lambda: h.retired == 1)  # idle afterwards: replaced


def test_a_chunk_job_after_a_replacement_sends_the_document_again(quick_retire, monkeypatch):
    from inspector.core.chunking import helper_jobs

    h = quick_retire
    monkeypatch.setattr(offload, "_DEFAULT", h)
    doc = from_text((ROOT / "sample_docs" / "handbook.md").read_text(encoding="utf-8"), "handbook.md")
    key = helper_jobs.doc_key(doc)
    before = h.call(helper_jobs.chunk_stage, key, doc, "markdown", {}, None)
    h.call(jobs.hold, 80, 0)
    assert _wait(lambda: h.retired == 1)
    with pytest.raises(helper_jobs.NeedDocument):  # the fresh helper does not hold it...
        h.call(helper_jobs.chunk_stage, key, None, "markdown", {}, None)
    after = h.call(helper_jobs.chunk_stage, key, doc, "markdown", {}, None)  # ...until sent again
    assert after.chunks.unpack() == before.chunks.unpack()


def test_a_shipped_document_is_read_here_when_the_pool_dies(monkeypatch):
    """A dead pool's calls run in the calling process (`Offload._each_here`) with the arguments
    made for the pool: a long document still in its parcel, not unpickled, is chunked all the same."""
    from inspector.core.chunking.registry import chunk_document

    monkeypatch.setattr(offload, "SHIP_MIN_CHARS", 1000)
    doc = from_text("# Leave\n\n" + "Parental leave is paid for fourteen months in Germany. " * 100, "big.md")
    with helper_jobs.shipped(doc) as sent:
        assert sent is not doc  # the parcel the pool would have been sent
        packed = helper_jobs.chunk_job(sent, "markdown", {}, None)
        stage = helper_jobs.chunk_stage(helper_jobs.doc_key(doc), sent, "markdown", {}, None, False)
    assert packed.unpack() == chunk_document(doc, "markdown", {})
    assert stage.chunks.unpack() == packed.unpack()


def test_each_helper_process_is_measured_against_its_own_start():
    """A pool of several processes: each warm-up notes its own process's size, by pid, and the
    size check compares a process with its own start (before, every process was compared with
    whichever warm-up had finished last)."""
    if offload.rss_bytes() is None:
        pytest.skip("no /proc: the helper's size is not known here")
    h = offload.Offload(min_chars=0, enabled=True, warm_up=helper_jobs.warm_up, workers=2)
    try:
        assert h.call(jobs.add, 1, 1) == 2
        assert _wait(lambda: h.baseline is not None)
        with h._lock:
            measured = dict(h._baselines)
        assert measured and set(measured) <= set(h.pids()) and all(v > 0 for v in measured.values())
        assert h.baseline == max(measured.values())
        pid, rss, held = h.call(offload._probe)
        assert pid in h.pids() and rss is not None and rss > 0 and held >= 0
    finally:
        h.shutdown()


def test_a_helper_shut_down_while_it_is_retired_stays_down(quick_retire, monkeypatch):
    """The owner's `shutdown` (the window quitting) while the keeper retires a grown helper: no
    fresh helper is started after it, which nothing would ever stop (found as a thread leaked
    into the next test: the fresh pool's queue feeder)."""
    from concurrent.futures import ProcessPoolExecutor

    h = quick_retire
    h.call(jobs.hold, 80, 0)
    real = ProcessPoolExecutor.shutdown

    def owner_quits_meanwhile(self, *args, **kwargs):
        monkeypatch.setattr(ProcessPoolExecutor, "shutdown", real)
        h.shutdown()  # the retired pool is already out of `h`: this only marks the shutdown
        return real(self, *args, **kwargs)

    monkeypatch.setattr(ProcessPoolExecutor, "shutdown", owner_quits_meanwhile)
    assert _wait(lambda: h.retired == 1)
    assert _wait(lambda: h._keeper is None, seconds=10)  # the keeper ends: no helper to keep
    assert h._pool is None and h.shutdowns == 1
    assert h.call(jobs.add, 1, 2) == 3  # a later call starts a helper again, as before
