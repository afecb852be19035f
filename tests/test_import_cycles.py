"""No module of `inspector` needs, through any chain of imports, a module that needs it.

The graph is built from the source, not from `sys.modules`: every `import` and `from ... import`
statement counts wherever it stands (top level, inside a function, under `if TYPE_CHECKING:`),
because a cycle hidden behind a lazy or type-only import is still two modules that cannot be
read, tested or moved one without the other. Edges go to the module named, or to the submodule
when `from package import name` names one; a package's `__init__` is not implied by importing a
module below it (an `__init__` that imports its own submodules is not a cycle in this sense).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "inspector"


def module_files(root: Path = ROOT, package: str = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> source file, for every .py file under the package."""
    out: dict[str, Path] = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module a `from` statement names (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(source: str, module: str, is_package: bool, known: set[str]) -> set[str]:
    """Modules of `known` that `source` imports, by any statement anywhere in it."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, is_package, node)
            names = [f"{target}.{a.name}" if f"{target}.{a.name}" in known else target for a in node.names]
        else:
            continue
        for name in names:
            # `import a.b.c` where only `a.b` is ours still depends on `a.b`.
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module:
                found.add(name)
    return found


def import_graph(files: dict[str, Path]) -> dict[str, set[str]]:
    known = set(files)
    return {m: imports_of(p.read_text(encoding="utf-8"), m, p.name == "__init__.py", known)
            for m, p in files.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle as a path [a, b, ..., a], or [] when the graph has none (iterative DFS)."""
    WHITE, GREY, BLACK = 0, 1, 2
    colour = dict.fromkeys(graph, WHITE)
    for root in sorted(graph):
        if colour[root] != WHITE:
            continue
        stack: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        colour[root] = GREY
        while stack:
            node, todo = stack[-1]
            if not todo:
                colour[node] = BLACK
                stack.pop()
                continue
            nxt = todo.pop()
            if colour.get(nxt, BLACK) == GREY:
                path = [n for n, _t in stack]
                return path[path.index(nxt):] + [nxt]
            if colour.get(nxt) == WHITE:
                colour[nxt] = GREY
                stack.append((nxt, sorted(graph[nxt])))
    return []


def test_the_graph_sees_every_kind_of_import():
    known = {"pkg", "pkg.a", "pkg.b", "pkg.sub", "pkg.sub.c", "pkg.sub.d"}
    source = (
        "from typing import TYPE_CHECKING\n"
        "import pkg.a\n"
        "if TYPE_CHECKING:\n    from pkg.b import Thing\n"
        "def f():\n    from . import d\n    from ..a import x\n"
        "import os.path\n"
    )
    assert imports_of(source, "pkg.sub.c", False, known) == {"pkg.a", "pkg.b", "pkg.sub.d"}
    assert imports_of("from pkg import sub\n", "pkg.a", False, known) == {"pkg.sub"}


def test_the_check_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) in (
        ["a", "b", "c", "a"], ["b", "c", "a", "b"], ["c", "a", "b", "c"])
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set(), "d": {"a", "c"}}) == []


def test_the_graph_covers_the_package():
    graph = import_graph(module_files())
    assert "inspector.qt.main_window" in graph and "inspector.core.chunking.registry" in graph
    assert "inspector.qt.controllers.state" in graph["inspector.qt.main_window"]


def test_no_import_cycle_in_inspector():
    cycle = find_cycle(import_graph(module_files()))
    assert not cycle, "import cycle: " + " -> ".join(cycle)
