"""The headless CLI: chunks and strategies, and one-line errors for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli import main

HANDBOOK = Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md"


def test_chunks_jsonl_is_langchain_shaped(capsys):
    assert main(["chunks", str(HANDBOOK), "--strategy", "markdown", "--format", "jsonl"]) == 0
    lines = capsys.readouterr().out.splitlines()
    text = HANDBOOK.read_text(encoding="utf-8")
    rec = [json.loads(x) for x in lines]
    assert len(rec) > 20
    for r in rec:
        m = r["metadata"]
        assert text[m["start_index"]:m["end_index"]] == r["page_content"]
        assert {"source", "heading_path", "token_count", "flags"} <= set(m)


def test_chunks_table_and_parameters(capsys):
    assert main(["chunks", str(HANDBOOK), "--strategy", "fixed_tokens", "--size", "128",
                 "--overlap", "16"]) == 0
    out = capsys.readouterr().out
    assert "chunks, strategy fixed_tokens {'size': 128, 'overlap': 16}" in out


def test_strategies_lists_parameters(capsys):
    assert main(["strategies", "--format", "json"]) == 0
    names = {s["name"]: s for s in json.loads(capsys.readouterr().out)}
    assert {"paragraph", "fixed_chars", "fixed_tokens", "sentences", "recursive", "markdown",
            "parent_child"} <= set(names)
    assert [p["name"] for p in names["fixed_tokens"]["params"]] == ["size", "overlap"]


@pytest.mark.parametrize("args,needle", [
    (["chunks", "MISSING.md"], "MISSING.md: no such file"),
    (["chunks", str(HANDBOOK), "--strategy", "fixed_chars", "--size", "100", "--overlap", "100"],
     "overlap (100) must be smaller than size (100)"),
    (["chunks", str(HANDBOOK), "--strategy", "nope"], "unknown strategy 'nope'"),
    (["chunks", str(HANDBOOK), "--strategy", "paragraph", "--size", "5"], "has no size parameter"),
])
def test_bad_input_is_one_line_on_stderr(capsys, args, needle):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_binary_file_is_named(tmp_path, capsys):
    p = tmp_path / "image.md"
    p.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    assert main(["chunks", str(p)]) == 2
    assert "image.md: binary file" in capsys.readouterr().err


def test_strategy_file_and_imported_chunks(tmp_path, capsys):
    doc = tmp_path / "doc.md"
    doc.write_text("# A\n\nFirst part here.\n\n# B\n\nSecond part here.\n", encoding="utf-8")
    plugin = tmp_path / "mine.py"
    plugin.write_text("def halves(text):\n    return [p for p in text.split('\\n\\n') if p.strip()]\n"
                      "CHUNK_INSPECTOR_STRATEGIES = {'halves': halves}\n", encoding="utf-8")
    assert main(["chunks", str(doc), "--strategy-file", str(plugin), "--strategy", "halves",
                 "--format", "jsonl"]) == 0
    recs = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [r["page_content"] for r in recs] == ["# A", "First part here.", "# B", "Second part here."]
    exported = tmp_path / "chunks.jsonl"
    exported.write_text("\n".join(json.dumps({"page_content": t}) for t in
                                  ["First part here.", "not in the document at all", "Second part here."]),
                        encoding="utf-8")
    assert main(["chunks", str(doc), "--import-chunks", str(exported), "--format", "jsonl"]) == 0
    out = capsys.readouterr()
    recs = [json.loads(x) for x in out.out.splitlines()]
    assert [r["page_content"] for r in recs] == ["First part here.", "Second part here."]
    assert "not in the document" in out.err  # the piece that could not be aligned is reported
