"""Cooperative cancellation for long core calls, without threading a callback through every API.

A worker runs a core call inside `cancel_scope(is_cancelled)`; long loops in the core call
`check_cancelled()` now and then, which raises `Cancelled` once the worker's request is stale or
the window is closing. Outside a scope the check costs one context-variable lookup.
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
