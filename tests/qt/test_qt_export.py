"""File ▸ Export: chunks as the CLI's JSONL, the report as Markdown and CSV, the configuration as a
JSON file the CLI accepts; every write atomic."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

from inspector.core.chunking.records import chunks_jsonl
from inspector.core.evaluation.config import EvalConfig

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "sample_docs" / "handbook.md"
GOLD = ROOT / "sample_docs" / "handbook.gold.jsonl"


def _window(hash_window, open_doc, wait_result, strategy="fixed_tokens", **params):
    w = hash_window(start=False)
    w.retrieval.set_retriever("bm25")
    w.state.set_strategy(strategy)
    open_doc(w)
    if params:
        w.state.set_params(params)
    r = wait_result(w, gold=True)
    return w, r


def test_chunks_jsonl_is_the_clis_format(qtbot, hash_window, open_doc, wait_result, tmp_path):
    w, _r = _window(hash_window, open_doc, wait_result, size=200, overlap=20)
    out = tmp_path / "chunks.jsonl"
    assert w.exports.export_chunks(out)
    text = out.read_text(encoding="utf-8")
    doc = w.state.document
    assert text == chunks_jsonl(doc, w.state.result.chunks)
    records = [json.loads(line) for line in text.splitlines()]
    assert len(records) == len(w.state.result.chunks)
    for rec, c in zip(records, w.state.result.chunks, strict=True):
        assert rec["page_content"] == doc.text[c.start:c.end]
        assert (rec["metadata"]["start_index"], rec["metadata"]["end_index"]) == (c.start, c.end)
    assert "Exported the chunks" in w.message.text()


def test_a_large_chunk_export_is_written_off_the_gui_thread(qtbot, hash_window, open_doc, wait_result, tmp_path,
                                                             monkeypatch):
    from inspector.qt.actions import export_actions

    w, _r = _window(hash_window, open_doc, wait_result, size=200, overlap=20)
    monkeypatch.setattr(export_actions, "THREAD_FROM_CHUNKS", 10)  # the handbook's chunks count as large
    out = tmp_path / "big.jsonl"
    assert w.exports.export_chunks(out)
    assert w.exports.threads and "Exporting" in w.message.text()
    qtbot.waitUntil(lambda: "Exported the chunks" in w.message.text(), timeout=20_000)
    # The thread posts its message as its last act; it may still be returning when the GUI shows it.
    qtbot.waitUntil(lambda: not any(t.is_alive() for t in w.exports.threads), timeout=5_000)
    assert out.read_text(encoding="utf-8") == chunks_jsonl(w.state.document, w.state.result.chunks)
    # A failure on the thread reaches the status bar, and no file is left half written.
    bad = tmp_path / "not_a_dir"
    bad.write_text("x", encoding="utf-8")
    assert w.exports.export_chunks(bad / "chunks.jsonl")
    qtbot.waitUntil(lambda: not any(t.is_alive() for t in w.exports.threads), timeout=20_000)
    qtbot.waitUntil(lambda: "could not write" in w.message.text(), timeout=5_000)


def test_config_json_loads_in_the_cli(qtbot, hash_window, open_doc, wait_result, tmp_path, capsys):
    w, r = _window(hash_window, open_doc, wait_result, size=200, overlap=20)
    w.question_bar.k_spin.setValue(4)
    r = wait_result(w, gold=True)
    out = tmp_path / "config.json"
    assert w.exports.export_config(out)
    data = json.loads(out.read_text(encoding="utf-8"))
    config = EvalConfig.from_dict(data)
    assert config == EvalConfig("fixed_tokens", {"size": 200, "overlap": 20}, 4, "bm25", w.state.with_prefix, "exact")
    # The CLI takes the file and reproduces the panel's figures.
    from inspector.cli import main

    assert main(["eval", str(HANDBOOK), "--gold", str(GOLD), "--config", str(out), "--format", "json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert cli["config"] == config.to_dict()
    assert cli["hit_rate"] == round(r.report.hit_rate, 4) and cli["mrr"] == round(r.report.mrr, 4)


def test_report_markdown_and_csv(qtbot, hash_window, open_doc, wait_result, tmp_path):
    w, r = _window(hash_window, open_doc, wait_result)
    md = tmp_path / "report.md"
    assert w.exports.export_report_markdown(md)
    text = md.read_text(encoding="utf-8")
    report = r.report
    assert f"| Hit rate@5 | {report.hit_rate:.3f} ({report.hits}/{len(report.questions)}) |" in text
    assert f"`{r.config.label()}`" in text and "handbook.gold.jsonl" in text
    table_rows = [line for line in text.splitlines()
                  if line.startswith("| ") and (" hit |" in line or " miss |" in line)]
    assert len(table_rows) == len(report.questions)
    out = tmp_path / "report.csv"
    assert w.exports.export_report_csv(out)
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert len(rows) == len(report.questions)
    for row, q in zip(rows, report.questions, strict=True):
        assert row["question"] == q.question.question
        assert row["hit"] == ("true" if q.hit else "false")
        assert row["rank"] == (str(q.rank) if q.rank else "")
        assert row["diagnosis"] == (q.diagnosis.message if q.diagnosis else "")


def test_export_menu_and_failed_writes(qtbot, hash_window, open_doc, wait_result, tmp_path, monkeypatch):
    w, _r = _window(hash_window, open_doc, wait_result)
    titles = [a.text() for a in w.export_menu.actions()]
    assert titles == ["&Chunks as JSONL…", "Evaluation Report as &Markdown…", "Evaluation Report as &CSV…",
                      "C&onfiguration as JSON…", "&View as HTML…", "Settings as Co&de…"]
    w.exports.update_enabled()
    assert all(a.isEnabled() for a in w.export_menu.actions())
    out = tmp_path / "config.json"
    out.write_text("old", encoding="utf-8")

    def refuse(src, dst):
        raise OSError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    assert not w.exports.export_config(out)
    assert out.read_text(encoding="utf-8") == "old"
    assert "Permission denied" in w.message.text()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []  # no temporary left
    # Without a report there is nothing to export.
    monkeypatch.undo()
    w.retrieval.set_gold(None)
    qtbot.waitUntil(lambda: w.retrieval.result is None, timeout=5000)
    assert not w.exports.export_report_csv(tmp_path / "r.csv") and "no evaluation report" in w.message.text()


def test_exporting_chunks_before_they_arrive_says_they_are_on_their_way(qtbot, hash_window, open_doc, wait_result,
                                                                        tmp_path):
    w, _r = _window(hash_window, open_doc, wait_result)
    w.state.result = None  # as between a new strategy and its first chunks
    assert not w.exports.export_chunks(tmp_path / "c.jsonl")
    assert "still being computed" in w.message.text()
    assert not (tmp_path / "c.jsonl").exists()


def test_a_bm25_report_does_not_claim_embeddings(qtbot, hash_window, open_doc, wait_result, tmp_path):
    """Issue 26: the exported report of a BM25 window said "Vectors: exact embeddings"."""
    w, r = _window(hash_window, open_doc, wait_result)
    assert r.retriever == "bm25"
    md = tmp_path / "report.md"
    assert w.exports.export_report_markdown(md)
    text = md.read_text(encoding="utf-8")
    assert "- Retrieval: BM25 keyword scores (no embeddings)" in text
    assert "exact embeddings" not in text
