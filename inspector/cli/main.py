"""Headless commands over the same core the window uses.

`chunk-inspector` with no command opens the window (on the sample handbook when no file is given).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence

#: Each module adds its subcommands (`add_commands`) and names them (`COMMANDS`), in this order.
#: The names are written here too, so that `chunk-inspector` with no command (the window) imports
#: none of the command modules (~0.2-0.4 s of imports before the window, issue 31); a test holds
#: this table to each module's `COMMANDS`.
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "chunks": ("chunks", "strategies"),
    "evaluate": ("eval", "compare", "sweep"),
    "ask": ("ask",),
    "html": ("html",),
    "code": ("code",),
}


def build_parser() -> argparse.ArgumentParser:
    import importlib

    parser = argparse.ArgumentParser(prog="chunk-inspector", description=__doc__)
    sub = parser.add_subparsers(dest="command")
    for name in COMMAND_MODULES:
        importlib.import_module(f"inspector.cli.{name}").add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if not argv or (argv[0] not in _known_commands() and not argv[0].startswith("-")):
        from inspector.qt.app import run_app

        return run_app(argv)
    from inspector.cli.common import CliError, apply_pdf_backend
    from inspector.core.api import InputError

    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    from inspector.core.api import (
        chosen_semantic_embedder,
        pdf_backend,
        piece_override,
        set_pdf_backend,
        set_semantic_embedder,
        use_piece_spec,
    )

    # --embedder moves word-piece counts and the semantic strategy's model to its model, and
    # --pdf-backend the PDF backend: put them back after (a caller's process goes on)
    pieces, semantic, backend = piece_override(), chosen_semantic_embedder(), pdf_backend()
    try:
        apply_pdf_backend(args)
        return int(args.func(args) or 0)
    except InputError as exc:
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # `chunk-inspector chunks big.md | head`: the reader left; that is not an error. (Before
        # OSError, which it is a subclass of.) Point stdout at devnull so the exit flush is quiet.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (CliError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        use_piece_spec(pieces)
        set_semantic_embedder(semantic)
        set_pdf_backend(backend)


def _known_commands() -> set[str]:
    return {name for names in COMMAND_MODULES.values() for name in names}
