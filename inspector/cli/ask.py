"""`ask`: one question's top-k chunks, exactly as the model reads them."""

from __future__ import annotations

import argparse
from typing import Any

from inspector.cli.common import (
    RETRIEVER_CHOICES,
    CliError,
    add_device_args,
    add_embedder_args,
    add_encoding_arg,
    add_reranker_args,
    add_store_args,
    add_strategy_args,
    check_store_flags,
    device_fields,
    device_line,
    embedder_line,
    embedder_report,
    make_reranker,
    one_line_error,
    open_store,
    open_workbench,
    print_json,
    reranker_report,
    store_report,
    strategy_params,
)
from inspector.core.api import DEFAULT_EMBED_VIEW, DEFAULT_RETRIEVER, EMBED_VIEWS

COMMANDS = ("ask",)


# -- ask: one question, the hits exactly as the model reads them --------------------------------

def _cmd_ask(args: argparse.Namespace) -> int:
    from inspector.core.api import EvalConfig

    check_store_flags(args)
    args.strategy = args.strategy or "markdown"
    name, params = strategy_params(args)
    config = EvalConfig(name, params, args.k, args.retriever or DEFAULT_RETRIEVER, args.prefix,
                        args.embedding or "exact", args.describe, embed_view=args.embed_view or DEFAULT_EMBED_VIEW)
    reranker, depth = make_reranker(args)  # a bad spec is named before any work
    wb = open_workbench(args, [config.retriever], gold=False)
    source = None
    if args.store:
        source = open_store(args, wb)
        args.strategy = source.strategy
        name, params = strategy_params(args)
        config = EvalConfig(name, params, args.k, config.retriever, args.prefix, args.embedding or "exact",
                            args.describe, embed_view=config.embed_view)
    docs = wb.documents
    known = {d.doc_id for d in docs}
    only = [d.strip() for d in args.docs.split(",") if d.strip()] if args.docs else None
    for d in only or ():
        if d not in known:
            raise CliError(f"--docs: no document {d!r} in the corpus (known: {', '.join(sorted(known))})")
    heading = None
    if args.heading:
        from inspector.core.api import outline_of, resolve_heading_filter

        # Typed by prefix, the sole document title optional: the window's rule (heading_filter).
        paths = [h.path for d in docs for h in outline_of(d).headings]
        heading = list(resolve_heading_filter(args.heading, paths)) or None
    hits = wb.ask(args.question, config, docs=only, heading_prefix=heading, reranker=reranker, rerank_depth=depth)
    by_id = {d.doc_id: d for d in docs}
    if args.format == "json":
        print_json({"question": args.question, "config": config.to_dict(),
                "filters": {"docs": only, "heading_prefix": heading}, "store": store_report(source),
                "reranker": ({**reranker_report(reranker), "depth": depth} if reranker is not None else None),
                "hits": [{"rank": h.rank, "rank_before": h.rank_before, "score": round(float(h.score), 4),
                          "chunk": h.chunk.key,
                          "matched": h.matched.key, "start": h.chunk.start, "end": h.chunk.end,
                          "heading_path": list(h.chunk.heading_path),
                          "text": h.chunk.embedded_text(by_id[h.chunk.doc_id], with_prefix=config.with_prefix)}
                         for h in hits],
                **device_fields(wb.embedder), "embedder": embedder_report(wb.embedder)})
        return 0
    filt = []
    if only:
        filt.append(f"documents {', '.join(only)}")
    if heading:
        filt.append(f"under {' > '.join(heading)}")
    print(device_line(wb.embedder))
    if embedder_line(wb.embedder):
        print(embedder_line(wb.embedder))
    if reranker is not None:
        print(f"reranker: {reranker.model_id} over the retriever's top {depth}")
    print(f"{args.question}\n{config.label()}{'  (filtered to ' + '; '.join(filt) + ')' if filt else ''}")
    if not hits:
        print("no chunk matched")
    for h in hits:
        doc = by_id[h.chunk.doc_id]
        moved = f"  (retriever #{h.rank_before} \u2192 #{h.rank})" if h.rank_before is not None else ""
        print(f"\n#{h.rank}  score {h.score:.3f}  {h.chunk.key}  [{h.chunk.start}:{h.chunk.end}]{moved}")
        print(h.chunk.embedded_text(doc, with_prefix=config.with_prefix))
    return 0


def add_commands(subparsers: Any) -> None:
    p = subparsers.add_parser("ask", help="retrieve the top-k chunks for one question, as the model reads them")
    p.add_argument("paths", nargs="+", help="documents or folders (the corpus)")
    p.add_argument("--question", "-q", required=True, help="the question")
    add_strategy_args(p, default=None)  # type: ignore[arg-type]  # markdown unless --store
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--retriever", choices=RETRIEVER_CHOICES, default=None,
                   help=f"dense, bm25 or hybrid; default {DEFAULT_RETRIEVER}")
    prefix = p.add_mutually_exclusive_group()
    prefix.add_argument("--prefix", dest="prefix", action="store_true", default=None)
    prefix.add_argument("--no-prefix", dest="prefix", action="store_false")
    p.add_argument("--embedding", choices=("exact", "pooled"), default=None)
    p.add_argument("--describe", action="store_true",
                   help="embed a contextual description with each chunk (no LLM)")
    p.add_argument("--embed-view", choices=EMBED_VIEWS, default=None,
                   help="what the model and BM25 read of each chunk: raw or clean (link targets, reference "
                        "definitions, table padding dropped; fit_embedder counts the view); "
                        f"default {DEFAULT_EMBED_VIEW}")
    p.add_argument("--docs", help="comma-separated document ids to search (metadata filter)")
    p.add_argument("--heading", help="heading path to search under, each title by its start, any case, "
                   "the document title optional, e.g. 'parental > germ'")
    p.add_argument("--format", choices=("table", "json"), default="table")
    add_embedder_args(p)
    add_reranker_args(p)
    add_store_args(p)
    add_encoding_arg(p)
    add_device_args(p)
    p.set_defaults(func=_cmd_ask)
    p.error = one_line_error(p)

