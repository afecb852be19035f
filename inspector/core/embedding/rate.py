"""How fast the loaded embedder embeds on this machine, measured while it works, remembered on disk.

The bill (`inspector.core.evaluation.bill`) turns a configuration's embedded tokens into an
estimate of embedding time. A rate quoted from elsewhere would be wrong by the machine: this one is
what `embed_texts` measured the last time it sent enough texts to the model (cache hits excluded,
only the time inside `encode` counted), in cl100k tokens per second, the unit every count of the
bill is in. The latest measurement per model is kept in memory and in `throughput.json` in the
cache folder (written atomically), so an estimate is at hand before anything is embedded again.

Embedding time is taken as proportional to tokens: within the model's 256-piece window the cost of
a batch grows with its padded length, and chunk sizes of a sweep differ mostly in that.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

log = logging.getLogger(__name__)

#: Fewer texts than this in one call (a query, a handful of new chunks) are not a measurement.
MIN_TEXTS = 16
FILE_NAME = "throughput.json"


@dataclass(frozen=True, slots=True)
class TokenRate:
    """One measurement of an embedder's speed."""

    model_id: str
    texts: int
    """Texts sent to the model."""
    tokens: int
    """Their cl100k tokens."""
    seconds: float
    """Wall time inside the model's encode calls."""
    measured_at: float = 0.0
    """Unix time of the measurement."""

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0

    @property
    def texts_per_second(self) -> float:
        return self.texts / self.seconds if self.seconds > 0 else 0.0

    def seconds_for(self, tokens: int) -> float | None:
        """Estimated seconds to embed `tokens` cl100k tokens (None without a usable rate)."""
        rate = self.tokens_per_second
        return tokens / rate if rate > 0 else None


_LAST: dict[str, TokenRate] = {}
_LOCK = threading.Lock()
_LOADED = False


def _path() -> Path:
    from inspector.core.runtime.cachedir import default_cache_dir

    return default_cache_dir() / FILE_NAME


def _load() -> None:
    """Read the persisted measurements once (a missing or broken file reads as none)."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    try:
        data = json.loads(_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if not isinstance(data, dict):
        return
    for model_id, rec in data.items():
        try:
            t = TokenRate(str(model_id), int(rec["texts"]), int(rec["tokens"]), float(rec["seconds"]),
                           float(rec.get("measured_at", 0.0)))
        except (KeyError, TypeError, ValueError):
            continue
        if t.seconds > 0 and t.tokens > 0:
            _LAST.setdefault(t.model_id, t)


def _save() -> None:
    from inspector.core.runtime.atomic import atomic_write_text

    data = {m: {k: v for k, v in asdict(t).items() if k != "model_id"} for m, t in _LAST.items()}
    try:
        path = _path()
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(data, indent=1, sort_keys=True))
    except OSError as exc:  # an unwritable cache folder keeps the measurement in memory only
        log.info("throughput not saved: %s", exc)


def record(model_id: str, texts: Sequence[str], seconds: float) -> TokenRate | None:
    """Remember that `texts` took `seconds` inside the model (None when too few to count)."""
    if len(texts) < MIN_TEXTS or seconds <= 0:
        return None
    from inspector.core.text.tokens import count_text

    tokens = sum(count_text(t) for t in texts)
    if tokens <= 0:
        return None
    t = TokenRate(model_id, len(texts), tokens, float(seconds), time.time())
    with _LOCK:
        _load()
        _LAST[model_id] = t
        _save()
    return t


def last(model_id: str | None) -> TokenRate | None:
    """The latest measurement of `model_id` (this process's, else the persisted one)."""
    if not model_id:
        return None
    with _LOCK:
        _load()
        return _LAST.get(model_id)


def forget() -> None:
    """Drop what is remembered in memory (tests; the file is read again on the next call)."""
    global _LOADED
    with _LOCK:
        _LAST.clear()
        _LOADED = False


__all__ = ["TokenRate", "record", "last", "forget", "MIN_TEXTS", "FILE_NAME"]
