"""Background jobs for asking and measuring: thin wrappers that run the core's calls on the
latest-wins runner (`inspector.qt.runner.JobRunner`), cancellable through the core's
`cancel_scope`. Nothing here decides how to retrieve or score: the workbench's `Staging` (preview
first, exact last) and its stores and evaluator do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from inspector.core import api
from inspector.core.api import EXACT, FALLBACK, POOLED  # noqa: F401  (re-exported)
from inspector.qt.runner import Job, JobRunner, Progress  # noqa: F401  (JobRunner re-exported)

if TYPE_CHECKING:
    from inspector.core.api import (
        Document,
        RetrievalRequest,
        RetrievalResult,
        Staging,
        Workbench,
    )

#: The core's names this module hands the window's modules, looked up when asked for: importing
#: them here would import the workbench's retrieval and evaluation before the window shows (issue 31).
_FROM_CORE = ("Document", "RetrievalRequest", "RetrievalResult", "Staging", "Workbench")


def __getattr__(name: str) -> Any:
    if name in _FROM_CORE:
        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def retrieval_job(staging: Staging, req: RetrievalRequest, reranker: Any = None, depth: int = 50) -> Job:
    """The question bar's and gold panel's job: the staging's stages, preview first, exact last
    (with a `reranker`, the question's hits of the last stage reranked after it: `rerank_jobs`)."""

    def job(cancelled: Callable[[], bool], progress: Progress) -> Iterator[RetrievalResult]:
        if reranker is None:
            yield from staging.stages(req, cancelled, progress)
            return
        from inspector.qt.controllers.rerank_jobs import reranked_stages

        yield from reranked_stages(staging.stages(req, cancelled, progress), req, reranker, depth, progress)

    return job


def load_model_job(embedder: Any) -> Job:
    def job(cancelled: Callable[[], bool], progress: Progress) -> Iterator[Any]:
        load = getattr(embedder, "load", None)
        if callable(load):
            load()  # imports torch and reads the weights: seconds, on this worker thread only
        yield embedder

    return job


def pooled_job(workbench: Workbench, doc: Document) -> Job:
    """The document's live-preview piece vectors, built once (then persisted)."""

    def job(cancelled: Callable[[], bool], progress: Progress) -> Iterator[Any]:
        def pieces(done: int, total: int) -> None:
            progress(done, total, "Preparing live preview")

        yield doc, workbench.build_pooled(doc, progress=pieces, cancel=cancelled)

    return job


def sweep_job(workbench: Workbench, configs: list, *, skipped: list, confirm: int,
              docs: Sequence[Document] | None = None, against: Any = None,
              budget: int | None = None) -> Job:
    """The sweep dialog's job: `Workbench.sweep` with progress and cancellation (and, `against`
    the window's settings, its cross-validated recommendation)."""

    def job(cancelled: Callable[[], bool], progress: Progress) -> Iterator[Any]:
        yield workbench.sweep(configs, progress=progress, cancel=cancelled, skipped=skipped,
                              confirm=confirm, docs=docs, against=against, budget=budget)

    return job


__all__ = ["JobRunner", "RetrievalRequest", "RetrievalResult", "Staging", "Workbench", "retrieval_job",
           "load_model_job", "pooled_job", "sweep_job", "EXACT", "POOLED", "FALLBACK"]
