"""core.gcpause: the collector is paused inside allocation-heavy sections and what they leave is
moved to the oldest generation, never frozen for good: a reference cycle alive during a section
that becomes garbage afterwards is still collected, and nested or concurrent sections in several
threads restore the collector's state exactly once."""

from __future__ import annotations

import gc
import threading
import weakref

from inspector.core.gcpause import PROMOTE_AT, paused_gc, promote_survivors


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
                with paused_gc():
                    with paused_gc():
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
