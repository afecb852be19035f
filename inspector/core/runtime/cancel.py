"""Cooperative cancellation for long core calls, without threading a callback through every API.

A worker runs a core call inside `cancel_scope(is_cancelled)`; long loops in the core call
`check_cancelled()` now and then, which raises `Cancelled` once the worker's request is stale or
the window is closing. Outside a scope the check costs one context-variable lookup.

Progress travels the same way: inside `progress_scope(report)`, a long core loop's
`report_progress(done, total, label)` reaches the worker's `report` (the window's status bar);
outside one it does nothing.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator

_CANCEL: contextvars.ContextVar[Callable[[], bool] | None] = contextvars.ContextVar(
    "inspector_cancel", default=None)


class Cancelled(Exception):
    """The caller no longer wants the result."""


@contextlib.contextmanager
def cancel_scope(is_cancelled: Callable[[], bool] | None) -> Iterator[None]:
    token = _CANCEL.set(is_cancelled)
    try:
        yield
    finally:
        _CANCEL.reset(token)


def current() -> Callable[[], bool] | None:
    """The scope's cancel callable (for APIs that take one explicitly)."""
    return _CANCEL.get()


def check_cancelled() -> None:
    fn = _CANCEL.get()
    if fn is not None and fn():
        raise Cancelled()


_PROGRESS: contextvars.ContextVar[Callable[[int, int, str], None] | None] = contextvars.ContextVar(
    "inspector_progress", default=None)


@contextlib.contextmanager
def progress_scope(report: Callable[[int, int, str], None] | None) -> Iterator[None]:
    """`report_progress` inside this block calls `report(done, total, label)`."""
    token = _PROGRESS.set(report)
    try:
        yield
    finally:
        _PROGRESS.reset(token)


def report_progress(done: int, total: int, label: str) -> None:
    """How far a long core call is (`done` of `total`, what it does), for whoever listens."""
    fn = _PROGRESS.get()
    if fn is not None:
        fn(done, total, label)
