"""Test helpers shared by the embedding and cache tests: an embedder wrapper that records what
it was asked to encode, and a runner for thread stress tests."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class Counting:
    """Wraps an embedder and records every text it is asked to encode, call by call (`calls`;
    `texts` is all of them in order)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model_id, self.dim, self.max_seq_length = inner.model_id, inner.dim, inner.max_seq_length
        self.calls: list[list[str]] = []

    def encode(self, texts):
        self.calls.append(list(texts))
        return self.inner.encode(texts)

    @property
    def texts(self) -> list[str]:
        return [t for call in self.calls for t in call]


def run_threads(target: Callable[[int], None], n: int = 6, timeout: float = 120.0) -> None:
    """Start `target(seed)` on `n` threads at once and wait for all of them."""
    threads = [threading.Thread(target=target, args=(s,)) for s in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
