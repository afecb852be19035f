"""`--size`/`--overlap` go where each strategy's declarations say, exactly as before roles existed.

The expectations are the values (or messages) the name-list code of c5fec29 produced for
`chunks`/`ask` (`strategy_params`) and `eval` (`_flag_params`), written out by hand. The one
deliberate change is semantic, whose `max_size` now holds the size role.
"""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.cli.common import strategy_params
from inspector.cli.evaluate import _flag_params
from inspector.core.chunking.external import remove_external

HANDBOOK = Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md"

# (strategy, --size, --overlap, --param items, chunks/ask result, eval result); a str is the error.
CASES = [
    ("fixed_chars", 300, 30, [], {"size": 300, "overlap": 30}, {"size": 300, "overlap": 30}),
    ("fixed_chars", 100, 100, [], "fixed_chars: overlap (100) must be smaller than size (100)",
     "fixed_chars: overlap (100) must be smaller than size (100)"),
    # --param names the parameter exactly: it wins in chunks; eval applies --size on top of it.
    ("fixed_chars", 100, None, ["size=300"], {"size": 300, "overlap": 0}, {"size": 100, "overlap": 0}),
    ("fixed_tokens", 128, 16, [], {"size": 128, "overlap": 16}, {"size": 128, "overlap": 16}),
    ("markdown", 300, None, [], {"size": 300, "hard_cap": 512}, {"size": 300, "hard_cap": 512}),
    # eval raises the hard cap it was not given; chunks leaves it to --param.
    ("markdown", 1000, None, [], "markdown: hard_cap (512) must be at least size (1000)",
     {"size": 1000, "hard_cap": 1000}),
    ("markdown", 1000, None, ["hard_cap=2000"], {"size": 1000, "hard_cap": 2000},
     {"size": 1000, "hard_cap": 2000}),
    ("markdown", 1000, None, ["hard_cap=600"], "markdown: hard_cap (600) must be at least size (1000)",
     "markdown: hard_cap (600) must be at least size (1000)"),
    ("markdown", 300, 0, [], "strategy 'markdown' has no overlap parameter", {"size": 300, "hard_cap": 512}),
    ("markdown", 300, 16, [], "strategy 'markdown' has no overlap parameter",
     "strategy 'markdown' has no overlap parameter"),
    ("paragraph", 100, None, [], "strategy 'paragraph' has no size parameter",
     "strategy 'paragraph' has no size parameter"),
    ("paragraph", None, 0, [], "strategy 'paragraph' has no overlap parameter", {}),
    ("paragraph", None, 16, [], "strategy 'paragraph' has no overlap parameter",
     "strategy 'paragraph' has no overlap parameter"),
    ("paragraph", 100, 16, [], "strategy 'paragraph' has no size parameter",
     "strategy 'paragraph' has no overlap parameter"),
    ("recursive", 128, 16, [], {"size": 128, "overlap": 16}, {"size": 128, "overlap": 16}),
    ("recursive", 64, 64, [], "recursive: overlap (64) must be smaller than size (64)",
     "recursive: overlap (64) must be smaller than size (64)"),
    ("parent_child", 512, 16, [], {"parent_size": 512, "child_size": 128, "child_overlap": 16},
     {"parent_size": 512, "child_size": 128, "child_overlap": 16}),
    ("parent_child", 100, None, [], "parent_child: child_size (128) must be smaller than parent_size (100)",
     "parent_child: child_size (128) must be smaller than parent_size (100)"),
    ("parent_child", 100, None, ["child_size=64"], {"parent_size": 100, "child_size": 64, "child_overlap": 0},
     {"parent_size": 100, "child_size": 64, "child_overlap": 0}),
    ("parent_child", 512, 128, [], "parent_child: child_overlap (128) must be smaller than child_size (128)",
     "parent_child: child_overlap (128) must be smaller than child_size (128)"),
    ("sentences", 256, 2, [], {"size": 256, "overlap": 2}, {"size": 256, "overlap": 2}),
    ("sentences", 128, 16, [], {"size": 128, "overlap": 16}, {"size": 128, "overlap": 16}),
    ("sentences", 128, 30, [], "sentences: overlap must be between 0 and 20 sentences, got 30",
     "sentences: overlap must be between 0 and 20 sentences, got 30"),
    ("semantic", None, 0, [], "strategy 'semantic' has no overlap parameter",
     {"threshold": 90, "min_size": 64, "max_size": 256}),
    # Changed on purpose: before roles, semantic had "no size parameter".
    ("semantic", 300, None, [], {"threshold": 90, "min_size": 64, "max_size": 300},
     {"threshold": 90, "min_size": 64, "max_size": 300}),
    ("semantic", 32, None, [], "semantic: min_size (64) must be smaller than max_size (32)",
     "semantic: min_size (64) must be smaller than max_size (32)"),
]


#: Parameters added after this table was written (the embedder budget, the stub floor): their
#: defaults are part of every result for these strategies.
ADDED = {"markdown": {"fit_embedder": True, "min_tokens": 32}, "parent_child": {"fit_embedder": True}}


def _outcome(f):
    try:
        return f()
    except ValueError as exc:
        return str(exc)


def _with_added(strategy, expected):
    return {**expected, **ADDED.get(strategy, {})} if isinstance(expected, dict) else expected


@pytest.mark.parametrize("strategy, size, overlap, param, chunks, evaluate", CASES)
def test_size_and_overlap_flags_map_as_before(strategy, size, overlap, param, chunks, evaluate):
    ns = argparse.Namespace(strategy=strategy, size=size, overlap=overlap, param=param)
    assert _outcome(lambda: strategy_params(ns)[1]) == _with_added(strategy, chunks)
    assert _outcome(lambda: _flag_params(strategy, ns, {})) == _with_added(strategy, evaluate)


def test_strategies_json_lists_roles_and_constraints(capsys):
    assert main(["strategies", "--format", "json"]) == 0
    params = {s["name"]: {p["name"]: p for p in s["params"]} for s in json.loads(capsys.readouterr().out)}
    pc = params["parent_child"]
    assert (pc["parent_size"]["role"], pc["child_size"]["less_than"], pc["child_overlap"]["role"],
            pc["child_overlap"]["less_than"]) == ("size", "parent_size", "overlap", "child_size")
    assert params["markdown"]["hard_cap"]["at_least"] == "size"
    assert params["markdown"]["hard_cap"]["role"] == "" and params["markdown"]["size"]["at_least"] is None
    assert params["semantic"]["max_size"]["role"] == "size"


def test_strategy_file_params_named_size_and_overlap_take_the_flags(tmp_path, capsys):
    plugin = tmp_path / "windows.py"
    plugin.write_text(textwrap.dedent('''
        from inspector.core.chunking.external import chunk_strategy
        from inspector.core.chunking.params import Param

        @chunk_strategy("test_flag_windows", params=(Param("size", "characters", 400, 1, 5000),
                                                    Param("overlap", "characters", 0, 0, 1000)))
        def windows(text, size, overlap):
            return [text[i:i + size] for i in range(0, len(text), size - overlap)]
    '''), encoding="utf-8")
    try:
        assert main(["chunks", str(HANDBOOK), "--strategy-file", str(plugin), "--strategy",
                     "test_flag_windows", "--size", "300", "--overlap", "30"]) == 0
        assert "{'size': 300, 'overlap': 30}" in capsys.readouterr().out
        assert main(["chunks", str(HANDBOOK), "--strategy-file", str(plugin), "--strategy",
                     "test_flag_windows", "--size", "300", "--overlap", "300"]) == 2
        assert "test_flag_windows: overlap (300) must be smaller than size (300)" in capsys.readouterr().err
    finally:
        remove_external("test_flag_windows")
