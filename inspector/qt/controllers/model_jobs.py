"""The embedding model the user chose, in the window's background jobs (Settings ▸ Embedding Model…).

`check_model_job` makes the model a spec names and loads it on a worker thread: a sentence-
transformers folder is resolved and its weights read, an HTTP endpoint is asked once (which learns
the vector size and tells a refused key, an unknown model or an unreachable host), and its word-
piece model is read (a folder without tokenizer.json cannot count its pieces). Only a model that
passed all of it replaces the current one; any failure is one line and the previous model stays.

`model_figures_job`: the gold panel's "Compare with model…", the same chunks scored with a second
model beside the first (`api.model_figures`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from inspector.qt.runner import Job, Progress

CHECK_TEXT = "model check"


def check_model_job(spec: Any, device: str = "auto") -> Job:
    """Yields the loaded embedder `spec` (an `EmbedderSpec`) names, on `device`."""

    def job(cancelled: Callable[[], bool], progress: Progress) -> Iterator[Any]:
        from inspector.core.api import make_embedder

        progress(0, 0, f"Loading {spec.label()}")
        emb = make_embedder(spec, device=device)
        try:
            load = getattr(emb, "load", None)
            if callable(load):
                load()  # the weights, or one request to the endpoint: seconds, here only
            _ = getattr(emb, "piece_spec", None)  # its tokenizer and limit: InputError when unreadable
            info = getattr(emb, "info", None)
            if callable(info) and info().get("backend") == "http":
                # A remembered vector size asks the endpoint nothing: one short text tells a refused
                # key, an unknown model or an unreachable host now, not at the first question.
                emb.encode([CHECK_TEXT])
        except BaseException:
            close_http(emb)  # a refused model keeps no connection open
            raise
        progress(0, 0, "")
        yield emb

    return job


def close_http(emb: Any) -> None:
    """Close an HTTP model's kept-alive connections (they reopen on its next request)."""
    info = getattr(emb, "info", None)
    if callable(info) and info().get("backend") == "http":
        emb.close()


def model_figures_job(result: Any, spec: Any, device: str = "auto", cache: Any = None) -> Job:
    """hit@k and MRR of the result's gold set with its own model and with the model `spec` names,
    on the same chunks (a `ModelFigures`); the second model is loaded here, off the GUI thread."""
    index = result.index
    req = result.request
    gold = tuple(q for q in req.gold if q.source is None or q.source in index.docs)

    def job(cancelled: Callable[[], bool], progress: Progress) -> Iterator[Any]:
        from inspector.core.api import make_embedder, model_figures

        progress(0, 0, f"Loading {spec.label()}")
        emb = make_embedder(spec, device=device)
        try:
            load = getattr(emb, "load", None)
            if callable(load):
                load()

            def step(done: int, total: int) -> None:
                progress(done, total, "Embedding the chunks")

            yield model_figures(index, gold, emb, req.k, retriever=result.retriever, cache=cache, progress=step)
        finally:
            close_http(emb)

    return job


__all__ = ["check_model_job", "close_http", "model_figures_job"]
