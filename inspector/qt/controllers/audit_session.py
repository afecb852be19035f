"""The audit's state in the window: the judgements of the open documents, kept current and written
after every change.

It owns one immutable `Audit` (inspector.core.evaluation.audit) and the files it lives in: each
mark in the audit file of the document it judges (`<stem>.audit.jsonl` beside it), whichever
document is shown, all of them loaded when the documents open (a restart resumes the audit; in a
corpus, choosing another document under Document keeps every mark). Marks are keyed by question
and span, so switching question, shown document or settings and back loses nothing; a chunk of new
settings takes its verdict from `replay`. Each exact ranking of a question that has judgements is
recorded per configuration, so the summary of that configuration can be given later without
asking again. A file that cannot be read is never overwritten: the marks of this session it would
hold are then kept in memory and the window says why.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from inspector.core import api
from inspector.core.api import write_failure
from inspector.qt.controllers.retrieval import POOLED, RetrievalController
from inspector.qt.controllers.state import InspectorState

if TYPE_CHECKING:
    from inspector.core.api import (
        Audit,
        AuditFiles,
        AuditSummary,
        Document,
        GoldProposal,
        GoldQuestion,
        RetrievalResult,
        Span,
        Verdict,
    )


def config_label(result: RetrievalResult | None) -> str:
    """The label a result's configuration is recorded under: `EvalConfig.label()`, with the
    retriever that actually answered when BM25 stood in for dense vectors."""
    if result is None:
        return ""
    req = result.request
    cfg = result.config
    if cfg is not None:
        label = cfg.label()
    else:
        params = " ".join(f"{k}={v}" for k, v in req.params.items())
        label = f"{req.strategy}{' ' + params if params else ''} k={req.k} {req.retriever}"
    if result.retriever != req.retriever:
        label += f" ({result.retriever} stand-in)"
    return label


def hit_span(hit: Any) -> Span:
    """The span a hit hands the model (the parent, for parent_child): what is judged."""
    c = hit.chunk
    return (c.doc_id, c.start, c.end)


class AuditSession(QObject):
    """The judgements of the open documents' audit, for the Reader and the audit mode."""

    changed = Signal()
    """Marks, recorded runs or the files changed."""
    errored = Signal(str)
    """A line for the status bar (a file that could not be read or written)."""

    def __init__(self, state: InspectorState, retrieval: RetrievalController, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.retrieval = retrieval
        # `audit` and `files` are made when first read (the first document's open replaces them):
        # their module is not one the window's first paint needs (issue 31).
        self.problem = ""
        self.asked: list[str] = []
        """Questions asked in this session, in order (navigation offers them after the gold set's)."""
        self._docs: tuple[Document, ...] = ()
        state.documentChanged.connect(self._on_document)
        # New documents around the shown one (an undo puts a corpus back around it): documentChanged
        # does not come then. Otherwise it follows, with the document to load for.
        state.documentsChanged.connect(
            lambda docs: self._on_document(state.document) if any(d is state.document for d in docs) else None)
        retrieval.questionChanged.connect(self._on_question)
        retrieval.resultReady.connect(self._on_result)
        if state.document is not None:
            self._on_document(state.document)

    @functools.cached_property
    def audit(self) -> Audit:
        """The judgements of the open documents."""
        return api.Audit()

    @functools.cached_property
    def files(self) -> AuditFiles:
        """The audit files of the open documents (a document read from no file has none: its marks
        stay in memory)."""
        return api.AuditFiles(self.audit)

    # -- the files -----------------------------------------------------------------------------
    def _open_documents(self, doc: Document | None) -> tuple[Document, ...]:
        """The documents open with the shown one: its corpus, or itself alone."""
        if doc is None:
            return ()
        docs = self.state.documents
        return tuple(docs) if any(d is doc for d in docs) else (doc,)

    def _on_document(self, doc: Document | None) -> None:
        docs = self._open_documents(doc)
        if len(docs) == len(self._docs) and all(a is b for a, b in zip(docs, self._docs, strict=True)):
            return  # another document of the same corpus shown: the marks are the same
        self._docs = docs
        self.files = api.load_audits(docs)
        self.audit = self.files.audit
        problems = [f"audit not loaded, and left as it is: {why}" for why in self.files.problems.values()]
        self.problem = problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "") \
            if problems else ""
        if self.problem:
            self.errored.emit(self.problem)
        for w in self.audit.warnings:
            self.errored.emit(f"audit: {w}")
        self.changed.emit()

    @property
    def path(self) -> Path | None:
        """The audit file of the shown document (None: a document read from no file)."""
        doc = self.state.document
        return self.files.path_of(doc.doc_id) if doc is not None else None

    def write(self) -> bool:
        """Write the audit files whose content changed (each atomically); False when one is not
        written (it could not be read, or the write failed)."""
        self.files, failed = api.save_audits(self.files, self.audit)
        for path, exc in failed:
            self.errored.emit(write_failure(path, exc))
        return not failed and not self.files.problems

    def _set(self, audit: Audit) -> None:
        if audit is not self.audit:
            self.audit = audit
            self.write()
            self.changed.emit()

    # -- judging -------------------------------------------------------------------------------
    def judge(self, question: str, hit: Any, judgement: str | None) -> None:
        """Judge the span a hit returns for a question (None: unjudged again); the current
        ranking of that question is recorded with it."""
        span = hit_span(hit)
        docs = {d.doc_id: d for d in (self.state.documents or ())}
        if self.state.document is not None:
            docs.setdefault(self.state.document.doc_id, self.state.document)
        d = docs.get(span[0])
        text = d.text[span[1]:span[2]] if d is not None else None
        result = self.retrieval.result
        audit = self.audit.judge(question, span, judgement, config=config_label(result), text=text)
        self._set(self._with_run(audit, result))

    def verdict(self, question: str, hit: Any) -> Verdict:
        return api.replay(self.audit.marks, question, hit_span(hit))

    def _with_run(self, audit: Audit, result: RetrievalResult | None) -> Audit:
        if result is None or result.mode == POOLED or not result.request.question or not result.hits:
            return audit
        q = api.question_text(result.request.question)
        if not audit.marks_for(q):
            return audit
        return audit.record(q, config_label(result), [hit_span(h) for h in result.hits])

    def _on_result(self, result: RetrievalResult) -> None:
        self._set(self._with_run(self.audit, result))

    def _on_question(self, question: str) -> None:
        q = api.question_text(question)
        if q and q not in self.asked:
            self.asked.append(q)

    # -- questions -----------------------------------------------------------------------------
    def gold_question(self, question: str) -> GoldQuestion | None:
        """The gold set's question with this text (its answers are highlighted), if any."""
        q = api.question_text(question)
        return next((g for g in self.retrieval.gold_questions if api.question_text(g.question) == q), None)

    def questions(self) -> list[str]:
        """What next/previous question walks through: the gold set's questions about the open
        documents, then the audited ones, then the ones asked in this session."""
        gold = [api.question_text(g.question) for g in self.retrieval.gold_questions]
        audit = self.__dict__.get("audit")  # not made yet (before the first document): none audited
        return list(dict.fromkeys([*gold, *(audit.questions if audit is not None else ()), *self.asked]))

    # -- summary and gold ----------------------------------------------------------------------
    def rankings(self) -> dict[str, list[Span]]:
        """Every ranking the window has now: the asked question's hits and each gold question's
        retrieved chunks (from the report), as spans."""
        r = self.retrieval.result
        out: dict[str, list[Span]] = {}
        if r is None:
            return out
        if r.report is not None:
            by_key = {c.key: c for c in r.request.chunks}
            index = r.index
            for c in (*getattr(index, "entries", ()), *getattr(index, "parents", {}).values()):
                by_key.setdefault(c.key, c)
            for qr in r.report.questions:
                chunks = [by_key.get(k) for k in qr.retrieved]
                if all(c is not None for c in chunks):
                    out[api.question_text(qr.question.question)] = [(c.doc_id, c.start, c.end) for c in chunks if c]
        if r.request.question:
            out[api.question_text(r.request.question)] = [hit_span(h) for h in r.hits]
        return out

    def summary(self) -> AuditSummary:
        """The audited questions (and the one asked now) under the current settings."""
        r = self.retrieval.result
        current = [api.question_text(r.request.question)] if r is not None and r.request.question else []
        qs = list(dict.fromkeys([*self.audit.questions, *current]))
        return api.summarize(self.audit, self.rankings(), config_label(r), qs)

    def gold_proposal(self, questions: Sequence[str] | None = None) -> GoldProposal:
        """Gold questions from the spans judged relevant (answers of a matching gold question kept)."""
        answers = {}
        for q in self.audit.questions:
            g = self.gold_question(q)
            if g is not None and g.answers:
                answers[q] = g.answers
        return api.gold_from_audit(self.audit, questions, answers)


__all__ = ["AuditSession", "config_label", "hit_span"]
