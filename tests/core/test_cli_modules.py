"""The command line's modules share helpers through `inspector.cli.common` under public names: no
command module reaches into another's private helpers (`evaluate` had become a second `common`)."""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[2] / "inspector" / "cli"


def test_no_cli_module_imports_a_private_name_of_another():
    private = []
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("inspector.cli"):
                private += [f"{path.name}:{node.lineno} {node.module}.{a.name}" for a in node.names
                            if a.name.startswith("_")]
    assert private == []


def test_command_modules_take_shared_helpers_from_common_only():
    """A command module imports other command modules' code only through `common` (main.py, which
    puts the commands together, imports the modules themselves)."""
    crossing = []
    for path in sorted(CLI.glob("*.py")):
        if path.name in ("main.py", "__init__.py", "__main__.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("inspector.cli")
                    and node.module != "inspector.cli.common"):
                crossing.append(f"{path.name}:{node.lineno} {node.module}")
    assert crossing == []
