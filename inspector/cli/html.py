"""`html`: one document's chunks (and a question's hits, a gold set's results) as a standalone page.

    chunk-inspector html handbook.md --strategy markdown --gold handbook.gold.jsonl \\
        --question "How long is parental allowance paid in Germany?" -o handbook.html

The page is built by `inspector.core.viewmodel.html_export.view_html`, the same function behind
the window's File ▸ Export ▸ View as HTML…, and written atomically.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from inspector.cli.common import (
    RETRIEVER_CHOICES,
    CliError,
    add_embedder_args,
    add_encoding_arg,
    add_strategy_args,
    load_user_strategies,
    one_line_error,
    open_workbench,
    strategy_params,
)
from inspector.core.api import DEFAULT_RETRIEVER

COMMANDS = ("html",)


def _cmd_html(args: argparse.Namespace) -> int:
    from inspector.core.api import EvalConfig, answer_spans, atomic_write_text, view_html

    load_user_strategies(args)
    name, params = strategy_params(args)
    if args.k < 1:
        raise CliError(f"--k must be at least 1, got {args.k}")
    config = EvalConfig(name, params, args.k, args.retriever, args.prefix, args.embedding)
    retrieves = bool(args.gold or args.question)
    args.paths = [args.document]
    wb = open_workbench(args, [config.retriever] if retrieves else ["bm25"], gold=bool(args.gold))
    if len(wb.documents) != 1:
        raise CliError(f"html shows one document; {args.document} holds {len(wb.documents)}")
    doc = wb.documents[0]
    chunks = wb.chunk(doc, name, params)
    report = wb.evaluate(config) if args.gold else None
    hits: list[Any] = wb.ask(args.question, config) if args.question else []
    answers: list[tuple[int, int]] = []
    if args.question and wb.gold is not None:
        for q in wb.questions([doc]):
            if q.question.strip() == args.question.strip():
                answers = answer_spans(doc, q)
                break
    mode = "" if config.retriever == "bm25" else config.embedding
    page = view_html(doc, chunks, hits=hits, question=args.question or "", answers=answers, report=report,
                     config=config if retrieves else None, settings=f"{name} " + " ".join(
                         f"{k}={v}" for k, v in params.items()), mode=mode)
    atomic_write_text(args.output, page)
    print(f"{args.output}: {doc.doc_id}, {len(chunks):,} chunks"
          + (f", {len(hits)} hits" if args.question else "")
          + (f", hit rate@{config.k} {report.hit_rate:.3f}" if report is not None else ""), file=sys.stderr)
    return 0


def add_commands(subparsers: Any) -> None:
    p = subparsers.add_parser("html", help="write a document's chunks (and hits, gold results) as one HTML page")
    p.add_argument("document", help="the document (.md, .txt, .html, .pdf, .docx)")
    add_strategy_args(p)
    p.add_argument("--gold", help="gold set: add its figures and every question's result")
    p.add_argument("--question", "-q", help="a question: outline its top-k chunks")
    p.add_argument("--output", "-o", required=True, help="the HTML file to write")
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--retriever", choices=RETRIEVER_CHOICES, default=DEFAULT_RETRIEVER)
    prefix = p.add_mutually_exclusive_group()
    prefix.add_argument("--prefix", dest="prefix", action="store_true", default=None)
    prefix.add_argument("--no-prefix", dest="prefix", action="store_false")
    p.add_argument("--embedding", choices=("exact", "pooled"), default="exact")
    add_embedder_args(p)
    add_encoding_arg(p)
    p.set_defaults(func=_cmd_html)
    p.error = one_line_error(p)
