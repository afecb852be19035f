"""core.runtime.gcpause: the collector is paused inside allocation-heavy sections and what they leave is
moved to the oldest generation, never frozen for good: a reference cycle alive during a section
that becomes garbage afterwards is still collected, and nested or concurrent sections in several
threads restore the collector's state exactly once."""

from __future__ import annotations

import gc
import threading
import weakref

from inspector.core.runtime.gcpause import (
    DEFERRED_THRESHOLD2,
    OVERDUE_AFTER,
    PROMOTE_AT,
    collect_full,
    defer_full_collections,
    full_collection_due,
    full_collection_overdue,
    full_collections_deferred,
    middle_collections_since_full,
    paused_gc,
    promote_survivors,
    resume_full_collections,
)


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def _cycle() -> tuple[_Node, weakref.ref[_Node]]:
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return a, weakref.ref(a)


def test_a_cycle_alive_during_a_section_is_collected_once_it_is_garbage() -> None:
    before, before_ref = _cycle()  # made before the section (an old document, a widget)
    with paused_gc():
        inside, inside_ref = _cycle()
        assert not gc.isenabled()
        bulk = [[k] for k in range(PROMOTE_AT + 1_000)]  # enough new objects to be promoted
    assert any(o is bulk for o in gc.get_objects(generation=2))
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0  # nothing left in the permanent generation
    assert any(o is before for o in gc.get_objects())  # still tracked, in a searched generation
    del before, inside, bulk
    gc.collect()
    assert before_ref() is None and inside_ref() is None  # a permanent freeze kept both forever


def test_promoted_objects_sit_in_the_oldest_generation() -> None:
    node, ref = _cycle()
    promote_survivors()
    assert gc.get_freeze_count() == 0
    assert any(o is node for o in gc.get_objects(generation=2))
    del node
    gc.collect()
    assert ref() is None


def test_nested_and_concurrent_sections_restore_the_collector_once() -> None:
    assert gc.isenabled()
    start = threading.Barrier(8)
    seen_enabled: list[bool] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            start.wait()
            for _ in range(200):
                with paused_gc(), paused_gc():
                    seen_enabled.append(gc.isenabled())
                    _cycle()
        except BaseException as exc:  # noqa: BLE001  (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert not any(seen_enabled)  # never enabled inside a section while another was open
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_a_small_section_leaves_its_objects_young() -> None:
    gc.collect()
    with paused_gc():
        small = [[k] for k in range(100)]
    assert any(o is small for o in gc.get_objects(generation=0))


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def _full_collections() -> int:
    return gc.get_stats()[2]["collections"]


def test_deferred_full_collections_wait_for_collect_full() -> None:
    t0, t1, t2 = gc.get_threshold()
    assert t2 < DEFERRED_THRESHOLD2  # nothing left deferred by an earlier test
    gc.collect()
    defer_full_collections()
    try:
        assert full_collections_deferred()
        assert gc.get_threshold() == (t0, t1, DEFERRED_THRESHOLD2)
        fulls = _full_collections()
        node, ref = _cycle()
        promote_survivors()  # an old cycle (a closed document's), found only by a full collection
        del node
        keep = []
        # Garbage cycles and survivors, enough for the interpreter's own rule to run several full
        # collections (threshold2 middle ones, and a quarter of the old objects new).
        for _ in range(5_000):  # bounded: ~30 middle collections take ~100 rounds
            if middle_collections_since_full() >= 30:
                break
            keep.append([[k] for k in range(2_000)])
            _cycle()
        assert _full_collections() == fulls  # none ran on its own
        assert full_collection_due() and not full_collection_overdue()
        assert ref() is not None  # the cycle waits for the full collection
        assert collect_full() > 0
        assert ref() is None
        assert _full_collections() == fulls + 1
        assert middle_collections_since_full() == 0 and not full_collection_due()
    finally:
        resume_full_collections()
    assert gc.get_threshold() == (t0, t1, t2)
    assert not full_collections_deferred()


def test_deferral_is_counted_and_the_last_resume_restores_threshold2() -> None:
    t = gc.get_threshold()
    defer_full_collections()
    defer_full_collections()
    resume_full_collections()
    assert gc.get_threshold()[2] == DEFERRED_THRESHOLD2
    resume_full_collections()
    assert gc.get_threshold() == t
    resume_full_collections()  # one too many: nothing changes
    assert gc.get_threshold() == t


def test_overdue_after_many_middle_collections() -> None:
    defer_full_collections()
    try:
        gc.collect()
        keep = []
        for _ in range(20_000):  # bounded: OVERDUE_AFTER middle collections take ~700 rounds
            if middle_collections_since_full() >= OVERDUE_AFTER:
                break
            keep.append([[k] for k in range(2_000)])
        assert full_collection_overdue()
    finally:
        resume_full_collections()


def test_collect_full_waits_outside_a_paused_section() -> None:
    gc.collect()
    node, ref = _cycle()
    del node
    with paused_gc():
        assert collect_full() == 0
        assert ref() is not None
    assert collect_full() > 0
    assert ref() is None
