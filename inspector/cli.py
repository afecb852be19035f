"""Headless commands over the same core the window uses.

`chunk-inspector` with no command opens the window (on the sample handbook when no file is given).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Sequence

from inspector.core.errors import InputError

COMMANDS = ("chunks", "strategies")


class CliError(Exception):
    """Printed as one line on stderr with exit status 2."""


def sample_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "sample_docs"


def add_strategy_args(p: argparse.ArgumentParser, default: str = "markdown") -> None:
    p.add_argument("--strategy", default=default, help="strategy name (see `strategies`)")
    p.add_argument("--size", type=int, help="size parameter (tokens or characters, per strategy)")
    p.add_argument("--overlap", type=int, help="overlap parameter (per strategy)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="any other declared parameter, e.g. --param hard_cap=800")
    p.add_argument("--strategy-file", action="append", default=[], metavar="FILE",
                   help="register the strategies a Python file declares (RUNS THE FILE'S CODE)")
    p.add_argument("--import-chunks", metavar="FILE",
                   help="chunks made elsewhere (LangChain/LlamaIndex JSONL) as strategy 'imported'; "
                        "implies --strategy imported unless another is given")


def load_user_strategies(args: argparse.Namespace) -> None:
    """Plug-ins, LangChain's ready-made splitters, --strategy-file and --import-chunks."""
    from inspector.core import external

    for problem in external.load_entry_point_strategies().problems:
        print(f"warning: {problem.one_line()}", file=sys.stderr)
    external.register_langchain_strategies()
    for path in getattr(args, "strategy_file", None) or []:
        external.load_strategy_file(path)
    if getattr(args, "import_chunks", None):
        from inspector.core.imported import imported_strategy

        imported_strategy("imported", args.import_chunks)
        if getattr(args, "strategy", None) == "markdown":
            args.strategy = "imported"


def print_alignment_reports(name: str, docs) -> None:
    """What an external or imported strategy could not place, one warning per piece."""
    from inspector.core.external import is_external, last_alignment_report

    if not is_external(name):
        return
    for doc in docs:
        report = last_alignment_report(name, doc.doc_id)
        for line in report.lines() if report else ():
            print(f"warning: {line}", file=sys.stderr)


def strategy_params(args: argparse.Namespace) -> tuple[str, dict]:
    """(strategy name, params) from the common arguments; unknown names raise ValueError."""
    from inspector.core.chunk import get_strategy

    strat = get_strategy(args.strategy)
    params: dict = {}
    names = {p.name: p for p in strat.params}
    for flag in ("size", "overlap"):
        value = getattr(args, flag, None)
        if value is None:
            continue
        if flag in names:
            params[flag] = value
        elif flag == "size" and "parent_size" in names:
            params["parent_size"] = value
        elif flag == "size" and "child_size" in names:
            params["child_size"] = value
        elif flag == "overlap" and "child_overlap" in names:
            params["child_overlap"] = value
        else:
            raise ValueError(f"strategy '{strat.name}' has no {flag} parameter")
    for item in args.param:
        if "=" not in item:
            raise ValueError(f"--param expects NAME=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        p = names.get(k)
        if p is not None and p.kind == "float":
            params[k] = float(v)
        elif p is not None and p.kind == "int":
            params[k] = int(v)
        elif p is not None and p.kind == "bool":
            params[k] = v.lower() in ("1", "true", "yes", "on")
        else:
            params[k] = v
    return strat.name, strat.validate(params)


def _cmd_strategies(args: argparse.Namespace) -> int:
    from inspector.core.chunk import strategies

    load_user_strategies(args)
    out = []
    for s in strategies().values():
        out.append({"name": s.name, "description": s.description,
                    "params": [{"name": p.name, "unit": p.unit, "default": p.default,
                                "min": p.minimum, "max": p.maximum, "help": p.help} for p in s.params]})
    if args.format == "json":
        print(json.dumps(out, indent=2))
        return 0
    for s in out:
        print(f"{s['name']}: {s['description']}")
        for p in s["params"]:
            print(f"    {p['name']:<14} {p['unit']:<11} default {p['default']:<6} "
                  f"range {p['min']}..{p['max']}  {p['help']}")
    return 0


def _cmd_chunks(args: argparse.Namespace) -> int:
    from inspector.core.chunk import chunk_document
    from inspector.core.document import load_paths
    from inspector.core.export import chunk_record

    load_user_strategies(args)
    name, params = strategy_params(args)
    loaded = load_paths(args.paths)
    for problem in loaded.problems:
        print(f"warning: {problem.one_line()}", file=sys.stderr)
    for doc in loaded.documents:
        for note in doc.meta.get("warnings", ()):
            print(f"warning: {doc.doc_id}: {note}", file=sys.stderr)
    if not loaded.documents:
        raise CliError(f"no document could be loaded from {', '.join(map(str, args.paths))}")
    rows = []
    for doc in loaded.documents:
        for c in chunk_document(doc, name, params):
            rows.append((doc, c))
    print_alignment_reports(name, loaded.documents)
    if args.format == "jsonl":
        for doc, c in rows:
            print(json.dumps(chunk_record(doc, c), ensure_ascii=False))
    elif args.format == "json":
        print(json.dumps([chunk_record(doc, c) for doc, c in rows], ensure_ascii=False, indent=2))
    else:
        print(f"{'id':>5} {'start':>8} {'end':>8} {'tokens':>6}  {'flags':<28} heading path")
        for doc, c in rows:
            flags = ",".join(sorted(c.flags)) or "-"
            print(f"{c.key if len(loaded.documents) > 1 else c.id:>5} {c.start:>8} {c.end:>8} "
                  f"{c.token_count:>6}  {flags:<28} {' > '.join(c.heading_path)}")
        print(f"{len(rows)} chunks, strategy {name} {params}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="chunk-inspector", description=__doc__)
    sub = parser.add_subparsers(dest="command")
    p = sub.add_parser("chunks", help="print the chunks of a document")
    p.add_argument("paths", nargs="+", help="files or folders")
    add_strategy_args(p)
    p.add_argument("--format", choices=("table", "json", "jsonl"), default="table")
    p.set_defaults(func=_cmd_chunks)
    p = sub.add_parser("strategies", help="list strategies and their parameters")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument("--strategy-file", action="append", default=[], metavar="FILE",
                   help="also list the strategies a Python file declares (RUNS THE FILE'S CODE)")
    p.set_defaults(func=_cmd_strategies)
    for extend in _EXTENSIONS:
        extend(sub)
    return parser


#: Modules that add subcommands: each has `add_commands(subparsers)`.
_EXTENSIONS: list = []


def _load_extensions() -> None:
    import importlib

    for mod in ("inspector.cli_eval",):
        try:
            m = importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name != mod:
                raise
            continue
        if m.add_commands not in _EXTENSIONS:
            _EXTENSIONS.append(m.add_commands)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if not argv or (argv[0] not in _known_commands() and not argv[0].startswith("-")):
        from inspector.qt.app import run_app

        return run_app(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except InputError as exc:
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # `chunk-inspector chunks big.md | head`: the reader left; that is not an error. (Before
        # OSError, which it is a subclass of.) Point stdout at devnull so the exit flush is quiet.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0
    except (CliError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _known_commands() -> set[str]:
    _load_extensions()
    names = set(COMMANDS)
    for extend in _EXTENSIONS:
        names.update(getattr(extend, "commands", ()))
    return names
