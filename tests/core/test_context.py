"""Contextual descriptions: deterministic extractive context added to what is embedded."""

from __future__ import annotations

from dataclasses import replace

from inspector.core.chunking.descriptions import (
    extractive_describer,
    with_descriptions,
    words,
)
from inspector.core.chunking.registry import chunk_document
from inspector.core.documents.document import from_text

HANDBOOK = """# Handbook

This policy handbook covers leave and refunds.

## Parental leave

Parental leave is paid through Elterngeld in Germany. Elterngeld covers up to fourteen months.
The policy applies to every employee.

Apply for Elterngeld at the local office. A birth certificate is needed.

## Refunds

Refunds for travel are paid monthly. The policy requires receipts for every refund.

Refunds above 500 euros need approval.
"""


def _chunks(doc, size=24):
    return chunk_document(doc, "markdown", {"size": size, "hard_cap": max(size, 64)})


def test_describer_gives_path_first_sentence_and_distinctive_words():
    doc = from_text(HANDBOOK, "handbook.md")
    chunk = next(c for c in _chunks(doc) if c.text(doc).startswith("Apply for Elterngeld"))
    desc = extractive_describer(chunk, doc)
    path, sentence, keywords = desc.split("\n")
    assert path == "Handbook > Parental leave"
    assert sentence == "Section: Parental leave is paid through Elterngeld in Germany."
    kws = keywords.removeprefix("Keywords: ").split(", ")
    assert kws[0] == "elterngeld"
    # "policy" is in every section: less distinctive than any word of this section alone.
    assert "policy" not in kws
    assert extractive_describer(chunk, doc) == desc  # deterministic


def test_section_sentence_left_out_when_the_chunk_holds_it():
    doc = from_text(HANDBOOK, "handbook.md")
    chunk = next(c for c in _chunks(doc, size=200) if "Refunds for travel" in c.text(doc))
    desc = extractive_describer(chunk, doc)
    assert "Section:" not in desc and desc.startswith("Handbook > Refunds\nKeywords: refunds")


def test_plain_text_uses_the_document_opening_and_chunk_words():
    doc = from_text("The travel policy explains bookings.\n\nTrains are preferred over flights.\n\n"
                    "Hotels are booked through the portal.\n", "travel.txt")
    chunk = next(c for c in chunk_document(doc, "paragraph") if "Hotels" in c.text(doc))
    desc = extractive_describer(chunk, doc)
    assert desc.split("\n")[0] == "travel.txt"
    assert "Section: The travel policy explains bookings." in desc
    assert set(desc.split("Keywords: ")[1].split(", ")) == {"hotels", "booked", "portal"}


def test_with_descriptions_changes_only_what_is_embedded():
    doc = from_text(HANDBOOK, "handbook.md")
    chunks = _chunks(doc)
    measured = tuple(replace(c, embed_tokens=99, embed_dropped=3, truncated_at=c.end - 1,
                             flags=c.flags | {"truncated_by_embedder"}) for c in chunks)
    described = with_descriptions(doc, measured)
    assert len(described) == len(chunks)
    for old, new in zip(chunks, described, strict=True):
        assert (new.start, new.end, new.token_count, new.heading_path) == (
            old.start, old.end, old.token_count, old.heading_path)
        desc = new.meta["description"]
        assert desc == extractive_describer(old, doc)
        # Appended after the existing prefix, without repeating the heading path line.
        assert new.prefix.startswith(old.prefix + "\n") and new.prefix.count(old.prefix) == 1
        assert new.embedded_text(doc) == f"{new.prefix}\n\n{old.text(doc)}"
        assert "Keywords:" in new.embedded_text(doc)
        assert new.embed_tokens is None and new.embed_dropped == 0 and new.truncated_at is None
        assert "truncated_by_embedder" not in new.flags


def test_custom_describer_and_replace_mode():
    doc = from_text(HANDBOOK, "handbook.md")
    chunks = _chunks(doc)

    def describer(chunk, document):
        return "" if chunk.id == 0 else f"Chunk {chunk.id} of {document.name}"

    described = with_descriptions(doc, chunks, describer)
    assert described[0] == chunks[0]  # an empty description leaves the chunk alone
    assert described[1].prefix == f"{chunks[1].prefix}\nChunk 1 of handbook.md"
    replaced = with_descriptions(doc, chunks, describer, replace_prefix=True)
    assert replaced[1].prefix == "Chunk 1 of handbook.md"


def test_split_table_header_stays_in_the_prefix():
    rows = "\n".join(f"| Country {i} | {i} weeks |" for i in range(60))
    doc = from_text(f"# Leave\n\n## Table\n\n| Country | Weeks |\n|---|---|\n{rows}\n", "t.md")
    chunks = chunk_document(doc, "markdown", {"size": 64, "hard_cap": 64})
    later = next(c for c in chunks[1:] if "| Country | Weeks |" in c.prefix)
    new = with_descriptions(doc, [later])[0]
    assert new.prefix.startswith(later.prefix + "\n") and "Keywords:" in new.prefix


def test_words_vocabulary():
    assert words("The Elterngeld-Antrag, don't 14 weeks; café é") == ["elterngeld-antrag", "don't", "weeks", "café"]


def test_describe_reaches_eval_and_changes_what_is_embedded(tmp_path, capsys):
    """`--describe` (EvalConfig.describe) runs the extractive describer inside the workbench:
    the spans stay, the embedded prefixes gain the description, and the config says so."""
    import json

    from inspector.cli import main
    from inspector.core.evaluation.config import EvalConfig
    from inspector.core.workbench import Workbench

    doc = tmp_path / "h.md"
    doc.write_text("# Handbook\n\n## Leave\n\nParental leave lasts 14 months in Germany.\n\n"
                   "## Travel\n\nBook trains at least two weeks ahead.\n", encoding="utf-8")
    gold = tmp_path / "g.jsonl"
    gold.write_text(json.dumps({"question": "How long is parental leave?", "answer": "14 months"}) + "\n",
                    encoding="utf-8")
    wb = Workbench()
    wb.open([doc])
    plain = wb.chunks_for(EvalConfig("markdown", retriever="bm25"))["h.md"]
    described = wb.chunks_for(EvalConfig("markdown", retriever="bm25", describe=True))["h.md"]
    assert [(c.start, c.end) for c in plain] == [(c.start, c.end) for c in described]
    assert all(d.prefix.startswith(p.prefix) and len(d.prefix) > len(p.prefix)
               for p, d in zip(plain, described, strict=True))
    assert main(["eval", str(doc), "--gold", str(gold), "--retriever", "bm25", "--describe", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["config"]["describe"] is True and out["hit_rate"] == 1.0
    assert EvalConfig.from_dict(out["config"]).describe is True
