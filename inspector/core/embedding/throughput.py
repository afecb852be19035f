"""How fast the loaded embedder embeds, observed, and what that predicts.

The window asks two questions of it: "would embedding these chunks exactly take under ~200 ms?"
(then it shows exact figures while the user drags, instead of the pooled preview: small
documents on a GPU) and "how long until the embedding in progress ends?" (the ETA on the
progress bar). Both come from measurements of this process, never from constants: until the
embedder has embedded a batch there is no prediction.

The unit of work is the character, capped at what the model reads (`max_seq_length` word pieces
are ~4 characters each in English prose): a 5,000-character chunk costs what a 1,000-character
one does, because the model truncates it. Texts per second would mislead, since chunk sizes
differ by a factor of ten between strategies.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable

CHARS_PER_PIECE = 4
"""Characters per word piece assumed when capping a text at what the model reads."""
EMA_WEIGHT = 0.3
"""Weight of the newest batch in the moving average (a few batches settle it)."""
MIN_UNITS = 2_000
"""Batches smaller than this (queries) are not timed: fixed overheads dominate them."""


def cost_units(texts: Iterable[str], max_seq_length: int) -> int:
    """Characters the model reads of these texts (each capped at max_seq_length word pieces)."""
    cap = max(1, int(max_seq_length)) * CHARS_PER_PIECE
    return sum(min(len(t), cap) for t in texts)


def cost_units_of_lengths(lengths: Iterable[int], max_seq_length: int) -> int:
    """`cost_units` from text lengths alone (no text needs to be built)."""
    cap = max(1, int(max_seq_length)) * CHARS_PER_PIECE
    return sum(min(int(n), cap) for n in lengths)


class Throughput:
    """An exponential moving average of characters embedded per second (thread-safe)."""

    def __init__(self) -> None:
        self._rate: float | None = None
        self._batches = 0
        self._lock = threading.Lock()

    @property
    def rate(self) -> float | None:
        """Characters per second, or None before the first timed batch."""
        with self._lock:
            return self._rate

    @property
    def batches(self) -> int:
        with self._lock:
            return self._batches

    def record(self, units: int, seconds: float) -> None:
        """One batch: `units` characters embedded in `seconds`."""
        if units < MIN_UNITS or seconds <= 0:
            return
        r = units / seconds
        with self._lock:
            self._rate = r if self._rate is None else (1 - EMA_WEIGHT) * self._rate + EMA_WEIGHT * r
            self._batches += 1

    def predict(self, units: int) -> float | None:
        """Seconds to embed `units` characters, or None when nothing was measured yet."""
        rate = self.rate
        if units <= 0:
            return 0.0
        return None if not rate else units / rate


def predict_seconds(embedder: object, texts: Iterable[str]) -> float | None:
    """Seconds the embedder is predicted to take for these texts (None: no measurement yet, or an
    embedder that keeps none, such as the test embedder)."""
    tp = getattr(embedder, "throughput", None)
    if not isinstance(tp, Throughput):
        return None
    return tp.predict(cost_units(texts, int(getattr(embedder, "max_seq_length", 256))))


def format_eta(seconds: float | None) -> str:
    """"~40 s left", "~3 min left", "" when unknown."""
    if seconds is None or math.isnan(seconds) or seconds < 0:
        return ""
    if seconds < 1.5:
        return "~1 s left"
    if seconds < 90:
        return f"~{round(seconds):d} s left"
    return f"~{round(seconds / 60):d} min left"


class Eta:
    """Seconds left of one embedding run, from its own pace so far (cache hits excluded).

    Before the first batch has finished it falls back to the embedder's moving average, scaled
    by the texts still to embed."""

    def __init__(self, clock=None) -> None:
        import time

        self._clock = clock or time.perf_counter
        self._t0: float | None = None
        self._done0 = 0

    def update(self, done: int, total: int, fallback: float | None = None) -> float | None:
        """Seconds left after `done` of `total` texts (`fallback`: a prediction for them all)."""
        now = self._clock()
        if self._t0 is None:
            self._t0, self._done0 = now, done  # the first call counts what the cache had
            return fallback
        embedded = done - self._done0
        if embedded <= 0:
            return fallback
        rate = embedded / max(now - self._t0, 1e-9)
        return max(total - done, 0) / rate


__all__ = ["Throughput", "Eta", "cost_units", "cost_units_of_lengths", "predict_seconds", "format_eta"]
