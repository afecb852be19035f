"""`code`: a runnable Python program that makes the same chunks with LangChain, LlamaIndex, chonkie
or Chunk Inspector's own API.

    chunk-inspector code --strategy recursive --size 256 --overlap 32 --target langchain > chunks.py
    python chunks.py handbook.md      # one JSON line {"text": ...} per chunk

A strategy/target pair that no library call reproduces is refused with one line saying what to
use instead (`inspector.core.chunking.snippets`).
"""

from __future__ import annotations

import argparse
from typing import Any

from inspector.cli.common import CliError, add_strategy_args, load_user_strategies, one_line_error, strategy_params

COMMANDS = ("code",)


def _cmd_code(args: argparse.Namespace) -> int:
    from inspector.core.api import NoEquivalent, settings_code

    load_user_strategies(args)
    name, params = strategy_params(args)
    try:
        print(settings_code(name, params, args.target), end="")
    except NoEquivalent as exc:
        raise CliError(f"code: {exc}") from None
    return 0


def add_commands(subparsers: Any) -> None:
    from inspector.core.api import TARGETS

    p = subparsers.add_parser("code", help="print a Python program making these chunks with another library")
    add_strategy_args(p, default="recursive")
    p.add_argument("--target", choices=TARGETS, default="langchain",
                   help="langchain (default), llamaindex, chonkie, or inspector (this project's API)")
    p.set_defaults(func=_cmd_code)
    p.error = one_line_error(p)
