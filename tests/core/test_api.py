"""The core's public door (`inspector.core.api`): every name resolves, importing it costs nothing,
and the window and the command line take what they use from the core through it."""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.core import api

ROOT = Path(__file__).resolve().parents[2]

#: What importing the door must not bring in: the model's stack, the numeric and parsing
#: libraries, Qt, Ray (each is lazy today, and the window's start time depends on it).
HEAVY = ("torch", "sentence_transformers", "transformers", "openvino", "numpy", "scipy", "bm25s", "markdown_it",
         "tiktoken", "regex", "sentencex", "pypdf", "docx", "ray", "PySide6", "pyqtgraph")


def _type_checking_names() -> set[str]:
    """The names the `if TYPE_CHECKING:` block of api.py binds."""
    tree = ast.parse((ROOT / "inspector" / "core" / "api.py").read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    return {a.asname or a.name for node in block.body if isinstance(node, ast.ImportFrom) for a in node.names}


def test_every_name_of_the_table_resolves_to_the_defining_modules_own():
    assert set(api.__all__) == set(api._WHERE) | set(api._MODULES)
    assert len(api.__all__) == len(set(api.__all__))
    assert _type_checking_names() == set(api.__all__)  # mypy sees what the table hands out
    for name, where in api._WHERE.items():
        module, _, attribute = where.partition(":")
        assert getattr(api, name) is getattr(importlib.import_module(module), attribute or name), name
    for name, module in api._MODULES.items():
        assert getattr(api, name) is importlib.import_module(module)
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        api.no_such_name  # noqa: B018


def test_the_door_keeps_nothing_so_a_replaced_function_is_replaced_for_its_callers(monkeypatch):
    from inspector.core.documents import document

    def replaced(*args, **kwargs):
        raise AssertionError("not called")

    real = api.load_paths
    monkeypatch.setattr(document, "load_paths", replaced)
    assert api.load_paths is replaced
    monkeypatch.undo()
    assert api.load_paths is real


def test_importing_the_door_imports_nothing_heavy_and_no_other_core_module():
    code = ("import sys\nimport inspector.core.api\n"
            "print('\\n'.join(sorted(m for m in sys.modules)))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    loaded = set(proc.stdout.split())
    assert not {m for m in loaded if m.split(".")[0] in HEAVY}
    assert {m for m in loaded if m.startswith("inspector")} == {"inspector", "inspector.core", "inspector.core.api"}


def test_the_check_itself_sees_a_heavy_import():
    # The subprocess check can fail: a module that imports numpy is caught by it.
    code = "import sys\nimport inspector.core.chunking.fit\nprint('\\n'.join(sorted(sys.modules)))\n"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert "numpy" in proc.stdout.split()


def _core_imports(package: str) -> list[tuple[str, int, str, list[str]]]:
    """(file, line, module, names) of every `from inspector.core... import` under a package."""
    found = []
    for path in sorted((ROOT / "inspector" / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("inspector.core"):
                found.append((str(path.relative_to(ROOT)), node.lineno, node.module or "",
                              [a.name for a in node.names]))
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("inspector.core"):
                        found.append((str(path.relative_to(ROOT)), node.lineno, a.name, []))
    return found


@pytest.mark.parametrize("package,doors", [("qt", ("inspector.core.api", "inspector.core.viewmodel")),
                                           ("cli", ("inspector.core.api",))])
def test_the_window_and_the_command_line_take_the_core_through_their_doors(package, doors):
    """import-linter holds the modules (pyproject.toml); this also holds the names, function-level
    imports included: a name the door lacks would only fail when that code runs."""
    imports = _core_imports(package)
    assert imports
    # `from inspector.core import api` takes the door itself (its names looked up where they are
    # used, issue 31); any other name of `inspector.core` is outside.
    outside = [(f, line, m) for f, line, m, names in imports
               if not any(m == d or m.startswith(d + ".") for d in doors)
               and not (m == "inspector.core" and names == ["api"])]
    assert outside == []
    missing = [(f, line, n) for f, line, m, names in imports if m == "inspector.core.api"
               for n in names if n not in api.__all__]
    assert missing == []
    # And every `api.name` a module of the package looks up is one the door has.
    looked_up = [(f, line, n) for f, line, n in _api_lookups(package) if n not in api.__all__]
    assert looked_up == []


def _api_lookups(package: str) -> list[tuple[str, int, str]]:
    """(file, line, name) of every `api.name` in a module of the package that imports the door
    whole (`from inspector.core import api`)."""
    found = []
    for path in sorted((ROOT / "inspector" / package).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if not any(isinstance(n, ast.ImportFrom) and n.module == "inspector.core" for n in ast.walk(tree)):
            continue
        found += [(str(path.relative_to(ROOT)), n.lineno, n.attr) for n in ast.walk(tree)
                  if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "api"]
    return found


def test_the_strategy_registry_declares_the_builtins_without_importing_a_chunker():
    """Issue 31: the window reads the built-ins' parameters before it shows; the chunkers (numpy,
    the tokenizer, the Markdown parser) load when a strategy first runs."""
    code = ("import sys\nfrom inspector.core.chunking.registry import strategies\n"
            "assert strategies()['markdown'].params\n"
            "print('\\n'.join(sorted(m for m in sys.modules)))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    loaded = set(proc.stdout.split())
    assert not {m for m in loaded if m.split(".")[0] in HEAVY}
    assert {m for m in loaded if m.startswith("inspector.core.chunking.")} == {
        "inspector.core.chunking.builtins", "inspector.core.chunking.chunk", "inspector.core.chunking.params",
        "inspector.core.chunking.registry"}


def test_each_builtin_runs_the_function_of_its_own_module():
    from inspector.core.chunking.builtins import BUILTINS, Deferred

    for strategy in BUILTINS:
        assert isinstance(strategy.func, Deferred)
        module = importlib.import_module(strategy.func.module)
        assert module.__name__ == f"inspector.core.chunking.{strategy.name}"
        assert strategy.func.resolve() is getattr(module, strategy.name)
