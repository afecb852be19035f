"""The core's public door: every name the window (`inspector.qt`) and the command line
(`inspector.cli`) use from the core, and nothing they do not.

What may import what (pyproject.toml's import contracts; `make lint` checks them):

- `inspector.cli` imports from the core only this module;
- `inspector.qt` imports from the core this module and the view-model, `inspector.core.viewmodel`
  (the window's second door: what its views compute without Qt — overlap segments, UTF-16
  offsets, the slider scale, the settings schema, the map's projection, the trace's plan);
- everything behind it (chunking, retrieval, evaluation, the workbench's parts, the runtime) may
  change shape without the window or the CLI noticing, as long as this table is kept.

Importing this module imports nothing else of the core: a name is looked up in `_WHERE` and taken
from the module that defines it when it is first asked for (PEP 562 `__getattr__`), so the window
still starts without the embedding model, torch or the chunkers it has not used yet. It is looked
up every time, never kept here, so a test that replaces a function in its own module replaces it
for the window and the CLI too. The `TYPE_CHECKING` block names the same things for mypy and
readers; a test holds the table, that block and `__all__` to one list.

The window's modules keep it that way (issue 31): a name they only annotate with is imported
under `TYPE_CHECKING`, and one they call is reached as `api.name` where it is used, unless its
module is light (the runtime's, `errors`, the evaluation's number formats), so that importing a
panel imports no evaluation, retrieval or workbench before the window shows (a launch test holds
the list).

A few runtime modules are handed out whole (`_MODULES`): the window uses each as a namespace of
related calls (`offload.enable()`, `heap.trim()`, `gcpause.collect_full()`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Name -> the module that defines it ("module:attribute" where the door's name differs).
_WHERE: dict[str, str] = {
    # documents
    "Document": "inspector.core.documents.document",
    "LoadResult": "inspector.core.documents.document",
    "load_paths": "inspector.core.documents.document",
    "DEFAULT_MAX_BYTES": "inspector.core.documents.document",
    "MARKDOWN_SUFFIXES": "inspector.core.documents.document",
    "TEXT_SUFFIXES": "inspector.core.documents.document",
    "CONVERTED_SUFFIXES": "inspector.core.documents.converters",
    "CONVERSION_KEPT": "inspector.core.documents.convertcache:KEPT_FLAG",
    "canonical_codec": "inspector.core.documents.encoding",
    "PDF_BACKENDS": "inspector.core.documents.pdf_convert",
    "set_pdf_backend": "inspector.core.documents.pdf_convert",
    "pdf_backend": "inspector.core.documents.pdf_convert",
    "docling_available": "inspector.core.documents.pdf_convert",
    "PageImage": "inspector.core.documents.pdf_render",
    "render_pdf_page": "inspector.core.documents.pdf_render",
    "text_boxes": "inspector.core.documents.pdf_render",
    "may_need_guessing": "inspector.core.documents.encoding",
    "InputError": "inspector.core.errors",
    "write_failure": "inspector.core.errors",
    # text
    "structure_of": "inspector.core.text.structure",
    "outline_of": "inspector.core.text.structure",
    "heading_completions": "inspector.core.text.heading_filter",
    "HeadingCatalog": "inspector.core.text.heading_filter",
    "heading_catalog_of": "inspector.core.text.heading_filter",
    "completions_over": "inspector.core.text.heading_filter",
    "resolve_heading_filter": "inspector.core.text.heading_filter",
    "MULTILINGUAL_MODEL": "inspector.core.text.model_fit",
    "ModelFit": "inspector.core.text.model_fit",
    "model_fit": "inspector.core.text.model_fit",
    "MAX_WORD_PIECES": "inspector.core.text.wordpieces",
    "piece_override": "inspector.core.text.wordpieces",
    "use_piece_spec": "inspector.core.text.wordpieces",
    "use_embedder_pieces": "inspector.core.text.wordpieces",
    "word_piece_limit": "inspector.core.text.wordpieces:max_seq_length",
    # retrieval
    "Retriever": "inspector.core.retrieval.kinds",
    "RETRIEVERS": "inspector.core.retrieval.kinds",
    "is_retriever": "inspector.core.retrieval.kinds",
    # chunking
    "Chunk": "inspector.core.chunking.chunk",
    "set_semantic_embedder": "inspector.core.chunking.semantic",
    "chosen_semantic_embedder": "inspector.core.chunking.semantic",
    "FLAGS": "inspector.core.chunking.chunk",
    "ChunkStats": "inspector.core.chunking.stats",
    "Param": "inspector.core.chunking.params",
    "Strategy": "inspector.core.chunking.params",
    "with_size_overlap": "inspector.core.chunking.params",
    "chunk_document": "inspector.core.chunking.registry",
    "get_strategy": "inspector.core.chunking.registry",
    "strategies": "inspector.core.chunking.registry",
    "annotate": "inspector.core.chunking.annotate",
    "with_view": "inspector.core.chunking.embed_view",
    "view_text": "inspector.core.chunking.embed_view",
    "view_spans": "inspector.core.chunking.embed_view",
    "chunk_stats": "inspector.core.chunking.stats",
    "is_external": "inspector.core.chunking.external",
    "last_alignment_report": "inspector.core.chunking.external",
    "load_strategy_file": "inspector.core.chunking.external",
    "imported_strategy": "inspector.core.chunking.imported",
    "chunk_record": "inspector.core.chunking.records",
    "chunks_jsonl": "inspector.core.chunking.records",
    "chunks_jsonl_lines": "inspector.core.chunking.records",
    "NoEquivalent": "inspector.core.chunking.snippets",
    "TARGETS": "inspector.core.chunking.snippets",
    "settings_code": "inspector.core.chunking.snippets",
    "helper_warm_up": "inspector.core.chunking.helper_jobs:warm_up",
    # embedding
    "HashEmbedder": "inspector.core.embedding.embedder",
    "MINILM_ID": "inspector.core.embedding.embedder",
    "MiniLMEmbedder": "inspector.core.embedding.embedder",
    "configure_default_embedder": "inspector.core.embedding.embedder",
    "default_embedder": "inspector.core.embedding.embedder",
    "device_info": "inspector.core.embedding.embedder",
    "DEVICE_CHOICES": "inspector.core.embedding.device",
    "DeviceError": "inspector.core.embedding.device",
    "parse_device": "inspector.core.embedding.device",
    "default_cache": "inspector.core.embedding.cache",
    "measured_rate": "inspector.core.embedding.rate:last",
    # evaluation: configurations, gold sets, reports, comparisons, sweeps
    "DEFAULT_RETRIEVER": "inspector.core.retrieval.kinds",
    "Embedding": "inspector.core.evaluation.config",
    "EmbedView": "inspector.core.text.embed_view",
    "is_embed_view": "inspector.core.text.embed_view",
    "DEFAULT_EMBED_VIEW": "inspector.core.evaluation.config",
    "EMBED_VIEWS": "inspector.core.evaluation.config",
    "EvalConfig": "inspector.core.evaluation.config",
    "sized_params": "inspector.core.evaluation.config",
    "unit_note": "inspector.core.evaluation.config",
    "units_sentence": "inspector.core.evaluation.config",
    "GoldQuestion": "inspector.core.evaluation.gold",
    "add_questions": "inspector.core.evaluation.gold",
    "answer_spans": "inspector.core.evaluation.gold",
    "load_gold": "inspector.core.evaluation.gold",
    "normalize": "inspector.core.evaluation.gold",
    "question_line": "inspector.core.evaluation.gold",
    "remove_question": "inspector.core.evaluation.gold",
    "union_ranges": "inspector.core.evaluation.metrics",
    "SPAN_METRICS": "inspector.core.evaluation.metrics",
    "aligned": "inspector.core.evaluation.compare",
    "compare_shared": "inspector.core.evaluation.compare",
    "paired_deltas": "inspector.core.evaluation.uncertainty",
    "grid": "inspector.core.evaluation.sweep",
    "rank_key": "inspector.core.evaluation.sweep",
    "FORMATS": "inspector.core.evaluation.report",
    "INTERVAL_SEED": "inspector.core.evaluation.report",
    "RENDERERS": "inspector.core.evaluation.report",
    "report_csv": "inspector.core.evaluation.report",
    "report_json": "inspector.core.evaluation.report",
    "report_markdown": "inspector.core.evaluation.report",
    "report_text": "inspector.core.evaluation.report",
    "sweep_text": "inspector.core.evaluation.report",
    "settle_text": "inspector.core.evaluation.report",
    # evaluation: the bill, coverage, drafted questions, the audit
    "Bill": "inspector.core.evaluation.bill",
    "Rates": "inspector.core.evaluation.bill",
    "bill_for": "inspector.core.evaluation.bill",
    "bill_parts": "inspector.core.evaluation.bill",
    "format_seconds": "inspector.core.evaluation.bill",
    "format_usd": "inspector.core.evaluation.bill",
    "change_interval": "inspector.core.evaluation.format",
    "num": "inspector.core.evaluation.format",
    "pct": "inspector.core.evaluation.format",
    "pts": "inspector.core.evaluation.format",
    "spread": "inspector.core.evaluation.format",
    "make_bill": "inspector.core.evaluation.bill",
    "Coverage": "inspector.core.evaluation.coverage",
    "Section": "inspector.core.evaluation.coverage",
    "coverage": "inspector.core.evaluation.coverage",
    "Draft": "inspector.core.evaluation.drafts",
    "MEASUREMENT": "inspector.core.evaluation.drafts",
    "draft_questions": "inspector.core.evaluation.drafts",
    "Audit": "inspector.core.evaluation.audit",
    "AuditFiles": "inspector.core.evaluation.audit",
    "AuditSummary": "inspector.core.evaluation.audit",
    "GoldProposal": "inspector.core.evaluation.audit",
    "QuestionSummary": "inspector.core.evaluation.audit",
    "Span": "inspector.core.evaluation.audit",
    "Verdict": "inspector.core.evaluation.verdicts",
    "RELEVANT": "inspector.core.evaluation.verdicts",
    "PARTLY": "inspector.core.evaluation.verdicts",
    "NOT": "inspector.core.evaluation.verdicts",
    "export_summary": "inspector.core.evaluation.audit",
    "first_relevant_text": "inspector.core.evaluation.audit",
    "gold_from_audit": "inspector.core.evaluation.audit",
    "highlights": "inspector.core.evaluation.audit",
    "load_audits": "inspector.core.evaluation.audit",
    "question_text": "inspector.core.evaluation.verdicts",
    "replay": "inspector.core.evaluation.audit",
    "save_audits": "inspector.core.evaluation.audit",
    "summarize": "inspector.core.evaluation.audit",
    # the workbench and its parts
    "Workbench": "inspector.core.workbench",
    "ChunkStage": "inspector.core.workbench.chunk_store",
    "ChunkStore": "inspector.core.workbench.chunk_store",
    "Staging": "inspector.core.workbench.staging",
    "RetrievalRequest": "inspector.core.workbench.staging",
    "RetrievalResult": "inspector.core.workbench.staging",
    "EXACT": "inspector.core.retrieval.kinds",
    "POOLED": "inspector.core.retrieval.kinds",
    "FALLBACK": "inspector.core.retrieval.kinds",
    "Mode": "inspector.core.retrieval.kinds",
    # the Ray engine (--engine ray)
    "EngineError": "inspector.core.distributed",
    "RayEngine": "inspector.core.distributed",
    "STAGE_UNITS": "inspector.core.distributed.engine:UNITS",
    # the HTML export (the window reaches it through its view-model door too)
    "view_html": "inspector.core.viewmodel.html_export",
    # the user's pipeline: embedding model, reranker, vector store (issue 28)
    "EmbedderSpec": "inspector.core.embedding.spec",
    "EMBEDDER_KINDS": "inspector.core.embedding.spec:KINDS",
    "parse_embedder_spec": "inspector.core.embedding.spec",
    "options_read_by": "inspector.core.embedding.spec",
    "make_embedder": "inspector.core.embedding.spec",
    "embedder_info": "inspector.core.embedding.spec",
    "HttpStatusError": "inspector.core.embedding.endpoint",
    "RERANK_DEPTH": "inspector.core.retrieval.rerank",
    "Reranker": "inspector.core.retrieval.rerank",
    "RerankResult": "inspector.core.retrieval.rerank",
    "parse_reranker_spec": "inspector.core.retrieval.rerank",
    "rerank_hits": "inspector.core.retrieval.rerank",
    "RerankFigures": "inspector.core.evaluation.reranked",
    "rerank_figures": "inspector.core.evaluation.reranked",
    "ModelFigures": "inspector.core.evaluation.model_compare",
    "model_figures": "inspector.core.evaluation.model_compare",
    "STORE_KINDS": "inspector.core.stores.spec",
    "StoreSpec": "inspector.core.stores.spec",
    "parse_store_spec": "inspector.core.stores.spec",
    "read_store": "inspector.core.stores.read",
    "StoreSource": "inspector.core.stores.source",
    "store_source": "inspector.core.stores.source",
    "store_strategy_name": "inspector.core.stores.source",
    "list_collections": "inspector.core.stores.listing",
    "check_store_dimensions": "inspector.core.stores.scoring:check_dimensions",
    # runtime
    "Cancelled": "inspector.core.runtime.cancel",
    "cancel_scope": "inspector.core.runtime.cancel",
    "progress_scope": "inspector.core.runtime.cancel",
    "check_cancelled": "inspector.core.runtime.cancel",
    "SizedLRU": "inspector.core.runtime.lru",
    "atomic_write_bytes": "inspector.core.runtime.atomic",
    "atomic_write_text": "inspector.core.runtime.atomic",
    "atomic_writer": "inspector.core.runtime.atomic",
    "promote_survivors": "inspector.core.runtime.gcpause",
    "lazy_numpy": "inspector.core.runtime.lazy_numpy:np",
}

#: Modules handed out whole (each a namespace of related calls).
_MODULES: dict[str, str] = {
    "external": "inspector.core.chunking.external",
    "offload": "inspector.core.runtime.offload",
    "heap": "inspector.core.runtime.heap",
    "gcpause": "inspector.core.runtime.gcpause",
}


def __getattr__(name: str) -> Any:
    """The named thing, from the module that defines it (imported now if it is not yet)."""
    if name in _MODULES:
        return importlib.import_module(_MODULES[name])
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, _, attribute = where.partition(":")
    return getattr(importlib.import_module(module), attribute or name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE, *_MODULES])


if TYPE_CHECKING:
    from inspector.core.chunking import external
    from inspector.core.chunking.annotate import annotate
    from inspector.core.chunking.chunk import FLAGS, Chunk
    from inspector.core.chunking.embed_view import view_spans, view_text, with_view
    from inspector.core.chunking.external import is_external, last_alignment_report, load_strategy_file
    from inspector.core.chunking.helper_jobs import warm_up as helper_warm_up
    from inspector.core.chunking.imported import imported_strategy
    from inspector.core.chunking.params import Param, Strategy, with_size_overlap
    from inspector.core.chunking.records import chunk_record, chunks_jsonl, chunks_jsonl_lines
    from inspector.core.chunking.registry import chunk_document, get_strategy, strategies
    from inspector.core.chunking.semantic import chosen_semantic_embedder, set_semantic_embedder
    from inspector.core.chunking.snippets import TARGETS, NoEquivalent, settings_code
    from inspector.core.chunking.stats import ChunkStats, chunk_stats
    from inspector.core.distributed import EngineError, RayEngine
    from inspector.core.distributed.engine import UNITS as STAGE_UNITS
    from inspector.core.documents.convertcache import KEPT_FLAG as CONVERSION_KEPT
    from inspector.core.documents.converters import CONVERTED_SUFFIXES
    from inspector.core.documents.document import (
        DEFAULT_MAX_BYTES,
        MARKDOWN_SUFFIXES,
        TEXT_SUFFIXES,
        Document,
        LoadResult,
        load_paths,
    )
    from inspector.core.documents.encoding import canonical_codec, may_need_guessing
    from inspector.core.documents.pdf_convert import PDF_BACKENDS, docling_available, pdf_backend, set_pdf_backend
    from inspector.core.documents.pdf_render import PageImage, render_pdf_page, text_boxes
    from inspector.core.embedding.cache import default_cache
    from inspector.core.embedding.device import DEVICE_CHOICES, DeviceError, parse_device
    from inspector.core.embedding.embedder import (
        MINILM_ID,
        HashEmbedder,
        MiniLMEmbedder,
        configure_default_embedder,
        default_embedder,
        device_info,
    )
    from inspector.core.embedding.endpoint import HttpStatusError
    from inspector.core.embedding.rate import last as measured_rate
    from inspector.core.embedding.spec import KINDS as EMBEDDER_KINDS
    from inspector.core.embedding.spec import (
        EmbedderSpec,
        embedder_info,
        make_embedder,
        options_read_by,
        parse_embedder_spec,
    )
    from inspector.core.errors import InputError, write_failure
    from inspector.core.evaluation.audit import (
        NOT,
        PARTLY,
        RELEVANT,
        Audit,
        AuditFiles,
        AuditSummary,
        GoldProposal,
        QuestionSummary,
        Span,
        Verdict,
        export_summary,
        first_relevant_text,
        gold_from_audit,
        highlights,
        load_audits,
        question_text,
        replay,
        save_audits,
        summarize,
    )
    from inspector.core.evaluation.bill import (
        Bill,
        Rates,
        bill_for,
        bill_parts,
        format_seconds,
        format_usd,
        make_bill,
    )
    from inspector.core.evaluation.compare import aligned, compare_shared
    from inspector.core.evaluation.config import (
        DEFAULT_EMBED_VIEW,
        EMBED_VIEWS,
        Embedding,
        EvalConfig,
        sized_params,
        unit_note,
        units_sentence,
    )
    from inspector.core.evaluation.coverage import Coverage, Section, coverage
    from inspector.core.evaluation.drafts import MEASUREMENT, Draft, draft_questions
    from inspector.core.evaluation.format import change_interval, num, pct, pts, spread
    from inspector.core.evaluation.gold import (
        GoldQuestion,
        add_questions,
        answer_spans,
        load_gold,
        normalize,
        question_line,
        remove_question,
    )
    from inspector.core.evaluation.metrics import SPAN_METRICS, union_ranges
    from inspector.core.evaluation.model_compare import ModelFigures, model_figures
    from inspector.core.evaluation.report import (
        FORMATS,
        INTERVAL_SEED,
        RENDERERS,
        report_csv,
        report_json,
        report_markdown,
        report_text,
        settle_text,
        sweep_text,
    )
    from inspector.core.evaluation.reranked import RerankFigures, rerank_figures
    from inspector.core.evaluation.sweep import grid, rank_key
    from inspector.core.evaluation.uncertainty import paired_deltas
    from inspector.core.retrieval.kinds import (
        DEFAULT_RETRIEVER,
        EXACT,
        FALLBACK,
        POOLED,
        RETRIEVERS,
        Mode,
        Retriever,
        is_retriever,
    )
    from inspector.core.retrieval.rerank import RERANK_DEPTH, Reranker, RerankResult, parse_reranker_spec, rerank_hits
    from inspector.core.runtime import gcpause, heap, offload
    from inspector.core.runtime.atomic import atomic_write_bytes, atomic_write_text, atomic_writer
    from inspector.core.runtime.cancel import Cancelled, cancel_scope, check_cancelled, progress_scope
    from inspector.core.runtime.gcpause import promote_survivors
    from inspector.core.runtime.lazy_numpy import np as lazy_numpy
    from inspector.core.runtime.lru import SizedLRU
    from inspector.core.stores.listing import list_collections
    from inspector.core.stores.read import read_store
    from inspector.core.stores.scoring import check_dimensions as check_store_dimensions
    from inspector.core.stores.source import StoreSource, store_source, store_strategy_name
    from inspector.core.stores.spec import STORE_KINDS, StoreSpec, parse_store_spec
    from inspector.core.text.embed_view import EmbedView, is_embed_view
    from inspector.core.text.heading_filter import (
        HeadingCatalog,
        completions_over,
        heading_catalog_of,
        heading_completions,
        resolve_heading_filter,
    )
    from inspector.core.text.model_fit import MULTILINGUAL_MODEL, ModelFit, model_fit
    from inspector.core.text.structure import outline_of, structure_of
    from inspector.core.text.wordpieces import MAX_WORD_PIECES, piece_override, use_embedder_pieces, use_piece_spec
    from inspector.core.text.wordpieces import max_seq_length as word_piece_limit
    from inspector.core.viewmodel.html_export import view_html
    from inspector.core.workbench import Workbench
    from inspector.core.workbench.chunk_store import ChunkStage, ChunkStore
    from inspector.core.workbench.staging import RetrievalRequest, RetrievalResult, Staging

__all__ = [
    # documents and text
    "Document", "LoadResult", "load_paths", "DEFAULT_MAX_BYTES", "MARKDOWN_SUFFIXES", "TEXT_SUFFIXES",
    "CONVERTED_SUFFIXES", "CONVERSION_KEPT", "canonical_codec", "may_need_guessing", "InputError", "write_failure",
    "PDF_BACKENDS", "set_pdf_backend", "pdf_backend", "docling_available", "PageImage", "render_pdf_page",
    "text_boxes",
    "structure_of", "outline_of", "heading_completions", "HeadingCatalog", "heading_catalog_of",
    "completions_over", "resolve_heading_filter",
    "MULTILINGUAL_MODEL", "ModelFit",
    "model_fit",
    "MAX_WORD_PIECES", "piece_override", "use_piece_spec", "use_embedder_pieces", "word_piece_limit",
    # chunking
    "Chunk", "FLAGS", "ChunkStats", "Param", "Strategy", "with_size_overlap", "chunk_document", "get_strategy",
    "set_semantic_embedder", "chosen_semantic_embedder",
    "strategies", "annotate", "with_view", "view_text", "view_spans", "chunk_stats",
    "external", "is_external", "last_alignment_report", "load_strategy_file",
    "imported_strategy", "chunk_record", "chunks_jsonl", "chunks_jsonl_lines", "NoEquivalent", "TARGETS",
    "settings_code", "helper_warm_up",
    # retrieval
    "Retriever", "RETRIEVERS", "is_retriever",
    # embedding
    "HashEmbedder", "MINILM_ID", "MiniLMEmbedder", "configure_default_embedder", "default_embedder",
    "device_info", "DEVICE_CHOICES", "DeviceError", "parse_device", "default_cache", "measured_rate",
    # evaluation
    "DEFAULT_RETRIEVER", "DEFAULT_EMBED_VIEW", "EMBED_VIEWS", "Embedding", "EmbedView", "is_embed_view",
    "EvalConfig", "sized_params", "unit_note", "units_sentence", "GoldQuestion", "add_questions", "answer_spans",
    "load_gold", "normalize", "question_line", "remove_question", "union_ranges", "SPAN_METRICS", "aligned",
    "compare_shared",
    "paired_deltas", "grid", "rank_key", "FORMATS", "INTERVAL_SEED", "RENDERERS", "report_csv", "report_json",
    "report_markdown", "report_text", "sweep_text", "settle_text", "Bill", "Rates", "bill_for", "bill_parts",
    "format_seconds",
    "format_usd", "make_bill", "Coverage", "Section", "coverage", "Draft", "MEASUREMENT", "draft_questions",
    "Audit", "AuditFiles", "AuditSummary", "GoldProposal", "QuestionSummary", "Span", "Verdict", "RELEVANT",
    "PARTLY", "NOT", "export_summary", "first_relevant_text", "gold_from_audit", "highlights", "load_audits",
    "question_text", "replay", "save_audits", "summarize",
    # figures as text
    "change_interval", "num", "pct", "pts", "spread",
    # the workbench, the Ray engine, the HTML export
    "Workbench", "ChunkStage", "ChunkStore", "Staging", "RetrievalRequest", "RetrievalResult", "EXACT", "POOLED",
    "FALLBACK", "Mode", "EngineError", "RayEngine", "STAGE_UNITS", "view_html",
    # the user's pipeline (issue 28)
    "EmbedderSpec", "EMBEDDER_KINDS", "parse_embedder_spec", "options_read_by", "make_embedder", "embedder_info",
    "HttpStatusError",
    "RERANK_DEPTH", "Reranker", "RerankResult", "parse_reranker_spec", "rerank_hits", "RerankFigures",
    "rerank_figures", "STORE_KINDS", "StoreSpec", "parse_store_spec", "read_store", "StoreSource", "store_source",
    "store_strategy_name",
    "list_collections", "check_store_dimensions", "ModelFigures", "model_figures",
    # runtime
    "offload", "heap", "gcpause", "Cancelled", "cancel_scope", "progress_scope", "check_cancelled", "SizedLRU",
    "atomic_write_bytes", "atomic_write_text", "atomic_writer", "promote_survivors", "lazy_numpy",
]
