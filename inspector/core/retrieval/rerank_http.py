"""A reranker behind an HTTP `/rerank` endpoint (`http:URL` specs): TEI, vLLM, infinity, Jina, Cohere.

Two request forms are in use, and a server answers one of them:

* Cohere/Jina (vLLM, infinity, Jina's and Cohere's APIs):
  POST {"model", "query", "documents": [...], "top_n"} -> {"results": [{"index", "relevance_score"}]}
* TEI (Hugging Face text-embeddings-inference):
  POST {"query", "texts": [...], "truncate": true} -> [{"index", "score"}]

`style=None` finds out: the first request goes in the Cohere form; a server that refuses it with a
4xx other than 401/403/429 (TEI's axum answers 422 "missing field `texts`") is asked again in TEI's
form, and the form that worked is remembered for the life of the reranker. An answer is read by
its shape (a list is TEI's, {"results"} Cohere's), whichever form was sent.

**The URL rule.** A URL whose path ends with /rerank is used as given; any other gets /rerank
appended (http://localhost:8080 -> TEI's /rerank; http://localhost:8000/v1 -> vLLM's /v1/rerank).

Texts go `batch_size` per request (32: TEI's default client batch limit), `concurrency` requests
in flight; a cross-encoder scores each (query, text) pair on its own, so the scores of split
requests are the scores of one. Retries, timeouts, cancellation, keys and one-line errors are the
embedder's (`inspector.core.embedding.endpoint`): a key comes from the environment variable named
by `key_env`, or `key=`, and is never shown.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from inspector.core.embedding.endpoint import (
    Endpoint,
    HttpStatusError,
    run_bounded,
    split_url,
)
from inspector.core.errors import InputError
from inspector.core.runtime.cancel import current as _current_cancel

STYLES = ("cohere", "tei")
BATCH_SIZE = 32
"""Texts per request: TEI's default --max-client-batch-size (it refuses more)."""
_TRY_OTHER = frozenset({400, 404, 405, 413, 415, 422})
"""Refusals that may mean "not my request form" (a wrong key or a rate limit never does)."""


class HttpReranker:
    """`score(query, texts)` from a /rerank endpoint (module docstring). Nothing is sent on
    construction."""

    backend = "http"

    def __init__(self, url: str, model: str | None = None, key_env: str | None = None, *,
                 key: str | None = None, style: str | None = None, batch_size: int = BATCH_SIZE,
                 concurrency: int = 4, timeout: float = 60.0, max_retries: int = 6, auth: str = "bearer",
                 sleep: Callable[[float], None] | None = None) -> None:
        if style is not None and style not in STYLES:
            raise InputError(f"unknown rerank style {style!r} (use {' or '.join(STYLES)})")
        if batch_size < 1:
            raise InputError(f"batch_size must be at least 1, got {batch_size}")
        if concurrency < 1:
            raise InputError(f"concurrency must be at least 1, got {concurrency}")
        parsed = split_url(url)
        if not parsed.base.rstrip("/").endswith("/rerank"):
            parsed = dataclasses.replace(parsed, base=parsed.base + "/rerank", shown=parsed.shown + "/rerank")
        self.url = parsed.shown
        self.model = model or None
        self.key_env = key_env or None
        self.style: str | None = style
        """"cohere" or "tei": the request form the server takes (None until found out)."""
        self.batch_size = int(batch_size)
        self.concurrency = int(concurrency)
        self._endpoint = Endpoint(parsed, key=key, key_env=self.key_env, auth=auth, timeout=timeout,
                                  max_retries=max_retries, connections=self.concurrency + 1, sleep=sleep)
        self.model_id = f"http:{self.url}" + (f"#{self.model}" if self.model else "")
        self._style_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"HttpReranker(url={self.url!r}, model={self.model!r}, key_env={self.key_env!r})"

    __str__ = __repr__

    @property
    def waits(self) -> list[tuple[str, float]]:
        return self._endpoint.waits

    def describe(self) -> str:
        return f"reranker at {self.url}" + (f" ({self.model})" if self.model else "")

    def info(self) -> dict[str, Any]:
        """The report's `reranker` object (no key)."""
        return {"spec": f"http:{self.url}", "model_id": self.model_id, "model": self.model,
                "style": self.style, "backend": "http"}

    def close(self) -> None:
        self._endpoint.close()

    # -- scoring ---------------------------------------------------------------------------------
    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """One float per text, higher = more relevant (the server's scores, in input order)."""
        texts = list(texts)
        if not texts:
            return np.zeros(0, dtype=np.float64)
        cancel = _current_cancel()
        ranges = [(a, min(a + self.batch_size, len(texts))) for a in range(0, len(texts), self.batch_size)]
        out = np.empty(len(texts), dtype=np.float64)
        if self.style is None:  # the first request finds the form out; the rest go in parallel after it
            with self._style_lock:
                if self.style is None:
                    a, b = ranges[0]
                    out[a:b] = self._detect(query, texts[a:b], cancel)
                    ranges = ranges[1:]

        def job(a: int, b: int) -> Callable[[], np.ndarray]:
            return lambda: self._request(self.style or "cohere", query, texts[a:b], cancel)

        parts = run_bounded([job(a, b) for a, b in ranges], self.concurrency, cancel=cancel)
        for (a, b), scores in zip(ranges, parts, strict=True):
            out[a:b] = scores
        return out

    def _detect(self, query: str, texts: list[str], cancel: Callable[[], bool] | None) -> np.ndarray:
        try:
            scores = self._request("cohere", query, texts, cancel)
            self.style = "cohere"
            return scores
        except HttpStatusError as first:
            if first.status not in _TRY_OTHER:
                raise
            try:
                scores = self._request("tei", query, texts, cancel)
            except HttpStatusError as second:
                raise InputError(f"{self.url} took neither rerank request: the Cohere/Jina form "
                                 f"({first.status}: {first.server_message}), TEI's ({second.status}: "
                                 f"{second.server_message})") from None
            self.style = "tei"
            return scores

    def _request(self, style: str, query: str, texts: list[str], cancel: Callable[[], bool] | None) -> np.ndarray:
        body: dict[str, Any]
        if style == "tei":
            body = {"query": query, "texts": texts, "truncate": True}
        else:
            body = {"query": query, "documents": texts, "top_n": len(texts)}
            if self.model:
                body["model"] = self.model
        payload = self._endpoint.request("POST", "", body, what="a rerank response", cancel=cancel)
        return self._parse(payload, len(texts))

    def _parse(self, payload: Any, n: int) -> np.ndarray:
        def bad(why: str) -> InputError:
            return self._endpoint.malformed(why, "a rerank response")

        if isinstance(payload, list):  # TEI
            items, key = payload, "score"
        elif isinstance(payload, dict) and isinstance(payload.get("results"), list):  # Cohere, Jina, vLLM
            items, key = payload["results"], "relevance_score"
        else:
            raise bad(repr(payload)[:200])
        scores = np.full(n, np.nan, dtype=np.float64)
        for item in items:
            if not isinstance(item, dict):
                raise bad(repr(item)[:200])
            idx = item.get("index")
            s = item.get(key, item.get("score", item.get("relevance_score")))
            if not isinstance(idx, int) or not 0 <= idx < n or not isinstance(s, (int, float)):
                raise bad(repr(item)[:200])
            scores[idx] = float(s)
        missing = np.flatnonzero(np.isnan(scores))
        if missing.size:
            raise bad(f"no score for {missing.size} of {n} texts")
        return scores


__all__ = ["HttpReranker", "STYLES", "BATCH_SIZE"]
