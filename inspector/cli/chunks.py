"""`chunks` and `strategies`: a document's chunks, and the strategies with their parameters."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from inspector.cli.common import (
    CliError,
    add_device_args,
    add_embedder_args,
    add_encoding_arg,
    add_store_args,
    add_strategy_args,
    check_store_flags,
    configured_embedder,
    document_encoding,
    embedder_report,
    embedder_spec,
    load_user_strategies,
    make_model,
    one_line_error,
    open_store,
    print_alignment_reports,
    print_document_warnings,
    strategy_params,
    use_model_pieces,
)


def _cmd_strategies(args: argparse.Namespace) -> int:
    from inspector.core.api import strategies

    load_user_strategies(args)
    out: list[dict[str, Any]] = []  # the JSON printed
    for s in strategies().values():
        out.append({"name": s.name, "description": s.description,
                    "params": [{"name": p.name, "unit": p.unit, "default": p.default,
                                "min": p.minimum, "max": p.maximum, "help": p.help,
                                "role": p.role, "less_than": p.less_than, "at_least": p.at_least}
                               for p in s.params]})
    if args.format == "json":
        print(json.dumps(out, indent=2))
        return 0
    for row in out:
        print(f"{row['name']}: {row['description']}")
        for p in row["params"]:
            print(f"    {p['name']:<14} {p['unit']:<11} default {p['default']:<6} "
                  f"range {p['min']}..{p['max']}  {p['help']}")
    return 0


def _cmd_chunks(args: argparse.Namespace) -> int:
    from inspector.core.api import annotate, chunk_document, chunk_record, get_strategy, load_paths

    encoding = document_encoding(args)
    check_store_flags(args)
    load_user_strategies(args)
    args.strategy = args.strategy or "markdown"
    name, params = strategy_params(args)

    if get_strategy(name).needs_embedder:  # semantic chunking embeds sentences: on --device
        configured_embedder(args)
    # Word pieces, truncation flags and fit_embedder budgets as the chosen model reads its input.
    spec = embedder_spec(args)
    model = make_model(args, spec) if spec.names_model else None
    use_model_pieces(model)
    if get_strategy(name).needs_embedder:  # its sentence vectors come from the chosen model
        from inspector.core.api import set_semantic_embedder

        set_semantic_embedder(None if spec.kind == "minilm" else model or make_model(args, spec))
    loaded = load_paths(args.paths, encoding=encoding)
    for problem in loaded.problems:
        print(f"warning: {problem.one_line()}", file=sys.stderr)
    print_document_warnings(loaded.documents)
    if not loaded.documents:
        raise CliError(f"no document could be loaded from {', '.join(map(str, args.paths))}")
    if args.store:  # the store's records, placed on the documents, are the chunks
        from inspector.core.api import Workbench

        source = open_store(args, Workbench(loaded.documents, embedder=None))
        name, params = source.strategy, {}
    # Measured in the embedder's word pieces with the prefix the strategy embeds by default: the
    # figures say whether the model reads each chunk whole.
    with_prefix = get_strategy(name).prefix_default
    rows = []
    for doc in loaded.documents:
        for c in annotate(doc, chunk_document(doc, name, params), with_prefix=with_prefix):
            rows.append((doc, c))
    print_alignment_reports(name, loaded.documents)
    if args.format == "jsonl":
        for doc, c in rows:
            print(json.dumps(chunk_record(doc, c), ensure_ascii=False))
    elif args.format == "json":
        print(json.dumps([chunk_record(doc, c) for doc, c in rows], ensure_ascii=False, indent=2))
    else:
        print(f"{'id':>5} {'start':>8} {'end':>8} {'tokens':>6} {'WP':>5}  {'flags':<28} heading path")
        for _doc, c in rows:
            flags = ",".join(sorted(c.flags)) or "-"
            print(f"{c.key if len(loaded.documents) > 1 else c.id:>5} {c.start:>8} {c.end:>8} "
                  f"{c.token_count:>6} {c.embed_tokens:>5}  {flags:<28} {' > '.join(c.heading_path)}")
        print(f"{len(rows)} chunks, strategy {name} {params}")
        if model is not None:
            info = embedder_report(model)
            print(f"WP: word pieces of {info['spec']} (counted with {info['tokenizer'] or info['model_id']}, "
                  f"reads {info['max_tokens']:,})")
    return 0


def add_commands(sub: Any) -> None:
    p = sub.add_parser("chunks", help="print the chunks of a document")
    p.add_argument("paths", nargs="+", help="files or folders")
    add_strategy_args(p, default=None)  # type: ignore[arg-type]  # markdown unless --store
    add_store_args(p)
    add_encoding_arg(p)
    p.add_argument("--format", choices=("table", "json", "jsonl"), default="table")
    add_device_args(p)
    add_embedder_args(p)
    p.set_defaults(func=_cmd_chunks)
    p.error = one_line_error(p)
    p = sub.add_parser("strategies", help="list strategies and their parameters")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument("--strategy-file", action="append", default=[], metavar="FILE",
                   help="also list the strategies a Python file declares (RUNS THE FILE'S CODE)")
    p.set_defaults(func=_cmd_strategies)


COMMANDS = ("chunks", "strategies")
