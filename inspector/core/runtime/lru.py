"""One size-bounded, locked LRU cache for everything the core remembers (per-document indexes,
chunks, retrieval indexes, reports, pooled vectors)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class SizedLRU(OrderedDict, Generic[V]):
    """An OrderedDict that keeps at most `max_items` entries and `max_size` in total (sizes as
    given when made: characters of the document). The most recent entry is always kept, however
    big. Safe to use from the GUI thread and workers at once."""

    def __init__(self, max_items: int, max_size: int) -> None:
        super().__init__()
        self.max_items = max_items
        self.max_size = max_size
        self._sizes: dict[Hashable, int] = {}
        self._lock = threading.RLock()

    def get_or_make(self, key: Hashable, make: Callable[[], V], size: int | Callable[[V], int]) -> V:
        """The value for `key`, made and stored when absent; `size` is its size, or a function
        giving it from the value made (a chunking's size is its number of chunks)."""
        with self._lock:
            hit = self.get(key)
            if hit is not None:
                self.move_to_end(key)
                return hit
        value = make()  # outside the lock: building an index can take a while
        with self._lock:
            self[key] = value
            self._sizes[key] = size(value) if callable(size) else size
            self._evict()
        return value

    def lookup(self, key: Hashable) -> V | None:
        """The value for `key` (marked as recently used), or None."""
        with self._lock:
            hit = self.get(key)
            if hit is not None:
                self.move_to_end(key)
            return hit

    def put(self, key: Hashable, value: V, size: int = 1) -> None:
        """Store `value` under `key`, evicting the least recently used entries beyond the bounds."""
        with self._lock:
            self[key] = value
            self.move_to_end(key)
            self._sizes[key] = size
            self._evict()

    def discard(self, key: Hashable) -> None:
        """Forget `key` (nothing happens when it is absent)."""
        with self._lock:
            self.pop(key, None)
            self._sizes.pop(key, None)

    def snapshot(self) -> list[tuple[Hashable, V]]:
        """The entries, least recently used first, as a list (safe to walk while others write)."""
        with self._lock:
            return list(self.items())

    def _evict(self) -> None:
        while len(self) > 1 and (len(self) > self.max_items or self.total_size() > self.max_size):
            old, _ = self.popitem(last=False)
            self._sizes.pop(old, None)

    def total_size(self) -> int:
        with self._lock:
            return sum(self._sizes.get(k, 0) for k in list(self))

    def clear(self) -> None:
        with self._lock:
            super().clear()
            self._sizes.clear()
