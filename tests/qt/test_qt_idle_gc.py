"""Full garbage collections wait until the user is idle (issue 17's heartbeat: a 56-60 ms full
collection in the middle of opening a 20 MB document; the soak: 225-252 ms ones with the model)."""

from __future__ import annotations

import gc

import pytest
import shiboken6
from PySide6.QtCore import QEvent, QObject, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication

from inspector.core.runtime import gcpause
from inspector.qt.idle_gc import IdleCollector


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class _Node:
    def __init__(self) -> None:
        self.other: object = None


def _make_due(n: int | None = None) -> None:
    """Garbage cycles until `n` (default: the due count) middle collections have run since the
    last full one."""
    target = n if n is not None else gcpause._DUE_AFTER
    assert target < 1_000
    for _ in range(10_000_000):  # bounded: a middle collection every ~3,500 cycles
        if gcpause.middle_collections_since_full() >= target:
            return
        a, b = _Node(), _Node()
        a.other, b.other = b, a
    raise AssertionError("the collector ran no middle collections")


@pytest.fixture(autouse=True)
def _nothing_left_deferred():
    """A failing test must not leave the rest of the session without full collections."""
    before = gcpause._DEFERRED
    yield
    while before < gcpause._DEFERRED:
        gcpause.resume_full_collections()


@pytest.fixture
def collector(qapp):
    state = {"busy": False}
    clock = _Clock()
    c = IdleCollector(lambda: state["busy"], idle_ms=1_000, check_ms=10_000, clock=clock)
    gc.collect()
    yield c, clock, state
    c.stop()


def test_a_due_collection_waits_for_an_idle_second(collector):
    c, clock, _ = collector
    assert gcpause.full_collections_deferred()
    assert not c.check()  # nothing due yet
    _make_due()
    c._last_activity = clock.now
    clock.now += 0.5
    assert not c.check()  # due, but the user was active half a second ago
    clock.now += 0.6
    fulls = gc.get_stats()[2]["collections"]
    assert c.check()
    assert gc.get_stats()[2]["collections"] == fulls + 1
    assert c.collections == 1 and c.overdue_collections == 0
    assert gcpause.middle_collections_since_full() == 0
    assert not c.check()  # nothing due any more


def test_a_running_job_is_activity_until_it_ends(collector):
    c, clock, state = collector
    _make_due()
    state["busy"] = True
    clock.now += 5
    assert not c.check()
    state["busy"] = False
    clock.now += 0.5
    assert not c.check()  # the job ended half a second ago
    clock.now += 0.6
    assert c.check()


def test_input_on_a_watched_object_is_activity(collector):
    c, clock, _ = collector
    target = QObject()
    c.watch(target)
    _make_due()
    clock.now += 5
    QApplication.sendEvent(target, QMouseEvent(QEvent.Type.MouseMove, QPointF(1, 1), QPointF(1, 1),
                                               Qt.MouseButton.NoButton, Qt.MouseButton.NoButton,
                                               Qt.KeyboardModifier.NoModifier))
    assert c._last_activity == clock.now
    clock.now += 0.5
    assert not c.check()
    clock.now += 0.6
    assert c.check()


def test_an_overdue_collection_runs_even_while_busy(collector, monkeypatch):
    c, clock, state = collector
    monkeypatch.setattr(gcpause, "OVERDUE_AFTER", gcpause._DUE_AFTER + 3)
    state["busy"] = True
    _make_due()
    assert not c.check()
    _make_due(gcpause.OVERDUE_AFTER)
    assert c.check()
    assert c.overdue_collections == 1


def test_stop_gives_the_interpreter_its_full_collections_back(qapp):
    t = gc.get_threshold()
    c = IdleCollector(lambda: False)
    assert gc.get_threshold()[2] == gcpause.DEFERRED_THRESHOLD2
    c.stop()
    assert gc.get_threshold() == t
    c.stop()
    assert gc.get_threshold() == t
    _make_due()
    assert not c.check()  # stopped: never collects


def test_a_collector_destroyed_without_stop_resumes(qapp):
    t = gc.get_threshold()
    parent = QObject()
    IdleCollector(lambda: False, parent=parent)
    assert gcpause.full_collections_deferred()
    shiboken6.delete(parent)  # the C++ objects go; Python never called stop()
    assert gc.get_threshold() == t


def test_the_window_defers_until_closed_and_watches_its_input(make_window):
    t = gc.get_threshold()
    w = make_window()
    assert w.idle_gc.timer.isActive()
    assert gcpause.full_collections_deferred()
    w.idle_gc._last_activity = 0.0
    QApplication.sendEvent(w.windowHandle(), QMouseEvent(QEvent.Type.MouseMove, QPointF(5, 5), QPointF(5, 5),
                                                         Qt.MouseButton.NoButton, Qt.MouseButton.NoButton,
                                                         Qt.KeyboardModifier.NoModifier))
    assert w.idle_gc._last_activity > 0.0
    w.close()
    assert not w.idle_gc.timer.isActive()
    assert gc.get_threshold() == t


def test_a_window_that_takes_the_focus_is_watched(qapp, qtbot):
    from PySide6.QtWidgets import QDialog

    c = IdleCollector(lambda: False)
    try:
        c.follow_focus()
        d = QDialog()
        qtbot.addWidget(d)
        d.show()
        d.activateWindow()
        qtbot.waitUntil(lambda: QApplication.focusWindow() is d.windowHandle(), timeout=5_000)
        assert d.windowHandle() in c._watched
        c._last_activity = 0.0
        QApplication.sendEvent(d.windowHandle(), QMouseEvent(QEvent.Type.MouseMove, QPointF(2, 2), QPointF(2, 2),
                                                             Qt.MouseButton.NoButton, Qt.MouseButton.NoButton,
                                                             Qt.KeyboardModifier.NoModifier))
        assert c._last_activity > 0.0
    finally:
        c.stop()
