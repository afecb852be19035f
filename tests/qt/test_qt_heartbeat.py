"""The GUI thread never stops for long: a 5 ms heartbeat timer records the worst gap while the
window opens and re-chunks hostile inputs (tests/data/bad, a 1 MB line without spaces, a
10,000-row table, a 20 MB document). The bound is generous (these machines are shared and noisy:
an idle window alone sees 25-60 ms gaps under load); benchmarks/gui_heartbeat.py prints the
figures. Also: what the view shows of a huge line (blocks, loaded in slices) maps back exactly.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from inspector.qt.heartbeat import Heartbeat

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad"
#: Generous: twenty times the target of 50 ms, because on these shared 2-core machines (load 6-12)
#: the OS alone delays the GUI thread by 25-60 ms when the window is idle, and opening the 20 MB
#: document measured 150-560 ms. Before the fixes: 62 s (a table opened after a 1 MB line),
#: 2.5 s (20 MB), 1.3 s (1 MB line); this bound catches any of those coming back.
BOUND_MS = 1000.0


def _settled(w) -> bool:
    r = w.state.result
    return (r is not None and r.complete and r.request_id == w.runner.latest_id and not w.controller.pending
            and not w.state.busy and not w.view.loading)


def _open_and_drag(qtbot, w, hb: Heartbeat, label: str, path: Path, sizes=(200, 260, 320)) -> None:
    hb.phase(f"{label} open")
    before = w.state.document
    w.messages.last_error = ""
    w.open_user_paths([str(path)])
    qtbot.waitUntil(lambda: w.state.document is not before or bool(w.messages.last_error), timeout=120_000)
    if w.state.document is before:
        return  # refused with a message (checked elsewhere)
    qtbot.waitUntil(lambda: _settled(w), timeout=240_000)
    hb.phase(f"{label} drag")
    for v in sizes:
        w.strategy_panel.set_value("size", v)
        qtbot.wait(30)
    qtbot.waitUntil(lambda: _settled(w) and w.state.params.get("size") == sizes[-1], timeout=240_000)


@pytest.fixture
def app_helper(monkeypatch):
    """The helper process as the app runs it (`qt.app.start_helper`): large chunking and BM25 jobs
    go there, so worker threads do not hold the GUI thread's GIL. Without it this test measured a
    window no user runs, and on a slow machine passed and failed by turns (20 MB drag 897-1,823
    ms, the window of the app itself within the bound)."""
    from inspector.core.chunking import helper_jobs
    from inspector.core.runtime import offload

    h = offload.Offload(enabled=True, warm_up=helper_jobs.warm_up)  # as `start_helper` makes it
    monkeypatch.setattr(offload, "_DEFAULT", h)
    h.call(offload._pid)  # started and imported before the heartbeat counts
    yield h
    h.shutdown()


@pytest.fixture
def own_heap():
    """The collector's count as a fresh window has it, not as the test worker left it. An xdist
    worker reaches this test after hundreds of others (torch, models, windows: millions of objects
    a user's process never holds). The window defers full collections to idle moments
    (`qt.idle_gc`) but runs one on the GUI thread when overdue (200 middle collections since the
    last full one), and tests rarely leave a window idle, so the count carried in from earlier
    tests made that collection fall at a random point of this test, walking the whole worker's
    heap: CI saw 1,158 ms on `mixed_newlines.md open`, this machine 1,235 ms and 1,427 ms on other
    small files. Reproduced here with 3 million objects and the count at 190 on entry: one overdue
    collection, 248 ms unloaded; with the count at zero, none. One full collection first puts the
    count back at zero."""
    import gc

    middle = gc.get_count()[2]
    t0 = time.perf_counter()
    gc.collect()
    yield f"entered with {middle} middle collections since a full one; the full one here took " \
          f"{(time.perf_counter() - t0) * 1000:.0f} ms over {len(gc.get_objects()):,} objects"


def _pauses(hb: Heartbeat, n: int = 2) -> str:
    return "".join(f"\n{p.ms:.0f} ms in {p.label}; the GUI thread:\n{p.stack}other threads:\n{p.others}"
                   for p in hb.worst(n))


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_no_long_pause_opening_and_dragging_over_hostile_inputs(qtbot, make_window, tmp_path, app_helper, own_heap):
    w = make_window(size=(1400, 900))
    w.retrieval.set_retriever("bm25")
    w.state.set_strategy("recursive")
    line = tmp_path / "line.txt"
    line.write_text("abcdefghij" * 100_000, encoding="utf-8")
    table = tmp_path / "table.md"
    table.write_text("# Table\n\n| id | name | value |\n|---|---|---|\n"
                     + "".join(f"| {i} | item {i} | {i * 7 % 1000} |\n" for i in range(10_000)), encoding="utf-8")
    big = tmp_path / "big.md"
    body = (ROOT / "sample_docs" / "handbook.md").read_text(encoding="utf-8")
    with open(big, "w", encoding="utf-8") as fh:
        written = k = 0
        while written < 20_000_000:
            part = f"# Part {k}\n\n{body}\n"
            fh.write(part)
            written += len(part)
            k += 1
    inputs = [(p.name, p) for p in sorted(BAD.iterdir()) if p.is_file() and p.suffix in (".md", ".txt")]
    inputs += [("1 MB line", line), ("10,000-row table", table), ("20 MB document", big)]
    hb = Heartbeat(threshold_ms=50.0, watchdog=True)  # a failure says where the time went
    hb.start("start")
    t0 = time.perf_counter()
    for label, path in inputs:
        _open_and_drag(qtbot, w, hb, label, path)
    hb.stop()
    worst = {k: round(v.max_ms) for k, v in hb.phases.items() if v.max_ms > 100}
    took = {k: round(v.seconds, 1) for k, v in hb.phases.items() if v.seconds >= 1}
    print(f"\nworst gaps over 100 ms: {worst}; overall {hb.max_ms:.0f} ms in {time.perf_counter() - t0:.0f} s;"
          f" phases of a second or more (s): {took}; {own_heap}")
    assert hb.phases["1 MB line open"].ticks > 0 and hb.phases["20 MB document drag"].ticks > 0  # they ran
    gcs = w.idle_gc
    assert hb.max_ms < BOUND_MS, (f"the GUI thread stopped for {hb.max_ms:.0f} ms: {worst}; full collections"
                                  f" {gcs.collections} ({gcs.overdue_collections} overdue, longest"
                                  f" {gcs.longest_ms:.0f} ms; {own_heap}){_pauses(hb)}")


def test_a_huge_line_is_shown_as_blocks_that_map_back_to_the_document(qtbot, make_window, wait_complete,
                                                                      tmp_path, monkeypatch):
    from inspector.qt.document import view as view_module

    monkeypatch.setattr(view_module, "LOAD_SLICE", 7_000)  # several slices, one per event-loop turn
    text = "head\n" + ("abcdefghij" * 5_000) + "\n" + ("word " * 6_000) + "\ntail 🚀 end\n"
    path = tmp_path / "huge.txt"
    path.write_text(text, encoding="utf-8")
    w = make_window()
    w.state.set_strategy("fixed_chars")
    with qtbot.waitSignal(w.view.loaded, timeout=30_000):
        assert w.open_paths([str(path)])
        assert w.view.loading  # the rest goes in over the next turns
    wait_complete(w)
    doc = w.state.document
    shown = w.view.toPlainText()
    assert shown != doc.text and shown.replace("\n", "") == doc.text.replace("\n", "")
    assert w.view.document().blockCount() > doc.text.count("\n") + 1  # the 50,000-character line is cut
    assert max(len(b) for b in shown.split("\n")) <= 10_000
    # Positions cross into Qt and back exactly; a selection over a cut gives the document's text.
    for cp in (0, 5, 30_000, len(doc.text) - 5, len(doc.text)):
        assert w.view.umap.to_codepoint(w.view.umap.to_utf16(cp)) == cp
    from PySide6.QtGui import QTextCursor

    cursor = w.view.textCursor()
    a, b = 9_990, 10_020
    cursor.setPosition(w.view.umap.to_utf16(a))
    cursor.setPosition(w.view.umap.to_utf16(b), QTextCursor.MoveMode.KeepAnchor)
    w.view.setTextCursor(cursor)
    assert w.view.selected_source_text() == doc.text[a:b] and "\u2029" in cursor.selectedText()
    # Clicking text selects the chunk that holds it, as anywhere else.
    rec = w.view.last_paint
    w.view.viewport().repaint()
    rec = w.view.last_paint
    assert rec is not None and rec.segments == w.state.result.index.segments_in(rec.lo, rec.hi)


def test_slices_of_a_big_text_are_sized_by_how_long_the_last_one_took():
    from inspector.qt.document.view import LOAD_SLICE, LOAD_SLICE_MIN, LOAD_SLICE_MS, next_slice

    assert next_slice(200_000, 40.0) == int(200_000 / 40.0 * LOAD_SLICE_MS)  # slow (short lines): smaller
    assert next_slice(10_000, 1.0) == 20_000  # fast: grows, at most doubling
    assert next_slice(150_000, 1.0) == LOAD_SLICE  # never above the cap...
    assert next_slice(10_000, 500.0) == LOAD_SLICE_MIN  # ...nor below the floor
    assert next_slice(0, 0.0) == LOAD_SLICE_MIN


def _spin_on_the_gui_thread(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_the_watchdog_names_where_the_gui_thread_was(qtbot, own_heap):
    """The spin's pause carries the spin's stack. Not necessarily the worst pause: in a test
    worker another one can be longer (make test once saw a 1,023 ms pause with no stack beside
    the spin: a collection over the worker's heap, during which the watchdog, needing the GIL,
    cannot sample)."""
    hb = Heartbeat(threshold_ms=50.0, watchdog=True)
    hb.start("spin")
    qtbot.wait(30)
    _spin_on_the_gui_thread(0.3)
    qtbot.wait(30)
    hb.stop()
    spun = [p for p in hb.pauses if "_spin_on_the_gui_thread" in p.stack]
    assert spun and max(p.ms for p in spun) >= 250, hb.worst(3)


def test_the_watchdog_keeps_no_frame_of_another_thread():
    """A frame kept by the sampler keeps its locals alive after the function returned; a local
    wrapping a Qt object that Qt then deletes (a QTextLayout) left shiboken a stale wrapper that a
    later QAction came back as (a watchdog soak run). The sampler must hold no frame afterwards."""
    import threading
    import weakref

    from inspector.qt.heartbeat import _raw_stacks

    class Local:
        pass

    ready, go = threading.Event(), threading.Event()
    refs = []

    def worker():
        obj = Local()
        refs.append(weakref.ref(obj))
        ready.set()
        go.wait(5)

    t = threading.Thread(target=worker, name="sampled")
    t.start()
    assert ready.wait(5)
    try:
        stacks = _raw_stacks(threading.main_thread().ident, threading.get_ident())
    finally:
        go.set()
        t.join(5)
    assert any(name == "worker" for s in stacks.values() for _f, _l, name in s)
    assert refs[0]() is None  # the worker's local died with its frame
