"""Imported chunks: JSONL from LangChain or LlamaIndex pipelines placed back onto the document."""

from __future__ import annotations

import json
import os

import pytest

from inspector.core.chunking.external import last_alignment_report, remove_external
from inspector.core.chunking.imported import (
    imported_strategy,
    load_chunk_jsonl,
    read_chunk_records,
)
from inspector.core.chunking.records import chunks_jsonl
from inspector.core.chunking.registry import chunk_document, get_strategy
from inspector.core.documents.document import Document, from_text
from inspector.core.errors import InputError
from inspector.core.text.tokens import count_text

TEXT = ("# Handbook\n\n## Leave\n\nSame paragraph here.\n\nLeave is 14 weeks in Germany.\n\n"
        "## Refunds\n\nSame paragraph here.\n\nRefunds take 14 days.\n")


def _doc() -> Document:
    doc = from_text(TEXT, "handbook.md")
    return Document(text=doc.text, name=doc.name, path="/data/handbook.md", doc_id="handbook.md")


def _write(tmp_path, records, name="chunks.jsonl"):
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records),
                    encoding="utf-8")
    return path


def test_langchain_records_with_one_unplaceable(tmp_path):
    doc = _doc()
    t = doc.text
    second_same = t.index("Same paragraph here.", t.index("## Refunds"))
    records = [
        {"page_content": "## Leave\n\nSame paragraph here.", "metadata": {"start_index": t.index("## Leave")}},
        {"page_content": "Leave is 14 weeks in Germany.", "metadata": {}},
        {"page_content": "This sentence was never in the handbook.", "metadata": {}},
        {"page_content": "Same paragraph here.", "metadata": {"start_index": -1}},  # LangChain: not found
        {"page_content": "Refunds take 14 days.", "metadata": {"source": "/elsewhere/handbook.md"}},
    ]
    result = load_chunk_jsonl(_write(tmp_path, records), doc)
    assert [c.text(doc) for c in result.chunks] == [
        "## Leave\n\nSame paragraph here.", "Leave is 14 weeks in Germany.", "Same paragraph here.",
        "Refunds take 14 days."]
    # The repeated paragraph lands on its second occurrence (in order), not the first.
    assert result.chunks[2].start == second_same
    assert [(u.line, u.preview) for u in result.unaligned] == [(3, "This sentence was never in the handbook.")]
    assert result.warnings == ()
    for c in result.chunks:
        assert c.token_count == count_text(c.text(doc)) and c.doc_id == "handbook.md"
    assert result.chunks[1].heading_path == ("Handbook", "Leave")
    assert result.chunks[3].heading_path == ("Handbook", "Refunds")
    assert [c.meta["import_line"] for c in result.chunks] == [1, 2, 4, 5]
    assert [c.id for c in result.chunks] == [0, 1, 2, 3]


def test_llamaindex_offsets_used_when_they_check_out(tmp_path):
    doc = _doc()
    t = doc.text
    a = t.index("Refunds take")
    good = {"text": "Refunds take 14 days.", "start_char_idx": a, "end_char_idx": a + 21, "id_": "n2"}
    # Wrong offsets (pointing at the first "Same paragraph") for the second one: aligned by text.
    first_same = t.index("Same paragraph here.")
    second_same = t.index("Same paragraph here.", first_same + 1)
    wrong = {"text": "Leave is 14 weeks in Germany.", "start_char_idx": first_same, "end_char_idx": first_same + 29}
    same = {"text": "Same  paragraph\nhere.", "start_char_idx": second_same, "end_char_idx": second_same + 20}
    result = load_chunk_jsonl(_write(tmp_path, [wrong, same, good]), doc)
    assert [c.text(doc) for c in result.chunks] == [
        "Leave is 14 weeks in Germany.", "Same paragraph here.", "Refunds take 14 days."]
    assert result.chunks[1].start == second_same  # its own offsets, whitespace differences aside
    assert result.chunks[2].meta["import_id"] == "n2"
    assert len(result.warnings) == 1 and "line(s) 1" in result.warnings[0]
    assert result.unaligned == ()


def test_export_round_trip_keeps_every_span(tmp_path):
    doc = from_text("# T\n\n" + "\n\n".join(["Same line here."] * 40), "rep.md")
    chunks = chunk_document(doc, "recursive", {"size": 16, "overlap": 6})
    path = tmp_path / "export.jsonl"
    path.write_text(chunks_jsonl(doc, chunks), encoding="utf-8")
    result = load_chunk_jsonl(path, doc)
    assert [(c.start, c.end) for c in result.chunks] == [(c.start, c.end) for c in chunks]
    assert [c.heading_path for c in result.chunks] == [c.heading_path for c in chunks]
    # Without offsets, alignment by text gives the same texts (places may differ on repeats).
    stripped = [{"page_content": json.loads(ln)["page_content"]} for ln in path.read_text().splitlines()]
    result2 = load_chunk_jsonl(_write(tmp_path, stripped, "plain.jsonl"), doc)
    assert [c.text(doc) for c in result2.chunks] == [c.text(doc) for c in chunks]
    assert result2.unaligned == ()


def test_records_of_other_documents_are_skipped(tmp_path):
    doc = _doc()
    records = [
        {"page_content": "Refunds take 14 days.", "metadata": {"doc_id": "other.md"}},
        {"page_content": "Leave is 14 weeks in Germany.", "metadata": {"source": "/data/handbook.md"}},
        {"page_content": "Refunds take 14 days.", "metadata": {"source": "handbook.md"}},
    ]
    result = load_chunk_jsonl(_write(tmp_path, records), doc)
    assert [c.meta["import_line"] for c in result.chunks] == [2, 3]
    assert any("skipped 1 records of other documents" in w for w in result.warnings)


def test_file_naming_no_record_of_this_document_is_aligned_with_a_warning(tmp_path):
    doc = _doc()
    records = [{"page_content": "Refunds take 14 days.", "metadata": {"source": "renamed.md"}}]
    result = load_chunk_jsonl(_write(tmp_path, records), doc)
    assert len(result.chunks) == 1
    assert any("no record names handbook.md" in w for w in result.warnings)


@pytest.mark.parametrize("lines, line, problem", [
    (['{"page_content": "ok"}', '{"page_content": "broken', '{"text": "x"}'], 2, "broken JSON"),
    (['{"page_content": "ok"}', "", '{"metadata": {}}'], 3, "no chunk text"),
    (['["a list"]'], 1, "expected a JSON object"),
    (['{"text": 12}'], 1, "must be a string"),
])
def test_broken_files_name_file_and_line(tmp_path, lines, line, problem):
    path = _write(tmp_path, lines)
    with pytest.raises(InputError) as info:
        load_chunk_jsonl(path, _doc())
    assert info.value.path == str(path) and info.value.line == line and problem in info.value.problem


def test_empty_and_missing_files(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(InputError, match="holds no chunk records"):
        read_chunk_records(empty)
    with pytest.raises(InputError, match="no such file"):
        read_chunk_records(tmp_path / "missing.jsonl")


def test_imported_file_is_one_more_strategy(tmp_path):
    doc = _doc()
    path = _write(tmp_path, [{"page_content": "Leave is 14 weeks in Germany."},
                             {"page_content": "Not in the text at all."}])
    strat = imported_strategy("test_imported", path)
    try:
        assert get_strategy("test_imported") is strat and strat.params == ()
        chunks = chunk_document(doc, "test_imported")
        assert [c.text(doc) for c in chunks] == ["Leave is 14 weeks in Germany."]
        report = last_alignment_report("test_imported", doc.doc_id)
        assert [u.line for u in report.unaligned] == [2]
        # The file changed on disk: read again on the next run.
        path.write_text(json.dumps({"page_content": "Refunds take 14 days."}) + "\n", encoding="utf-8")
        st = os.stat(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
        assert [c.text(doc) for c in chunk_document(doc, "test_imported")] == ["Refunds take 14 days."]
        assert last_alignment_report("test_imported", doc.doc_id).ok
    finally:
        remove_external("test_imported")


def test_imported_strategy_fails_early_on_a_broken_file(tmp_path):
    path = _write(tmp_path, ['{"page_content": "a"}', "{nope"])
    with pytest.raises(InputError) as info:
        imported_strategy("test_broken_import", path)
    assert info.value.line == 2
