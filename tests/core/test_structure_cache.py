"""A long Markdown document's structure kept on disk (`inspector.core.text.structurecache`): read
back, it is the structure the text parses to; a file that does not check out is never read."""

from __future__ import annotations

import marshal
from pathlib import Path

from hypothesis import given, settings

from inspector.core.documents.document import from_text
from inspector.core.runtime import keptfiles
from inspector.core.text import markdown_fast, structure, structurecache
from inspector.core.text.structure import parse_markdown, structure_of
from tests.core.strategies_for_tests import markdown_text

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "sample_docs" / "handbook.md"


#: The folder the `kept` fixture (tests/core/conftest.py) yields.
KEPT = structurecache.FILES


def _parses(monkeypatch) -> list[int]:
    parsed: list[int] = []
    original = markdown_fast.parse

    def parse(text):
        parsed.append(len(text))
        return original(text)

    monkeypatch.setattr(markdown_fast, "parse", parse)
    return parsed


def test_a_document_opened_again_reads_its_structure(kept, monkeypatch):
    text = HANDBOOK.read_text(encoding="utf-8") * 2
    reference = parse_markdown(text, "first.md")
    assert reference.headings and any(b.children for b in reference.blocks)
    assert structure_of(from_text(text, "first.md")) == reference
    (path,) = kept.glob(f"*{structurecache.FILES.suffix}")
    assert path.name.startswith(from_text(text).sha256)
    structure._STRUCTURES.clear()
    parsed = _parses(monkeypatch)
    again = structure_of(from_text(text, "second.md"))
    assert parsed == []
    assert again == parse_markdown(text, "second.md")  # the title's fallback is this document's name


def test_a_text_without_a_heading_takes_its_name_as_title_when_read(kept):
    text = "no heading here\n\n" * 100
    structure_of(from_text(text, "one.md"))
    structure._STRUCTURES.clear()
    assert structure_of(from_text(text, "two.md")).title == "two.md"


@settings(max_examples=60, deadline=None)
@given(text=markdown_text)
def test_a_parse_read_back_is_the_parse(text):
    parts = structure._markdown_parts(text)
    decoded = structurecache.decode(structurecache.encode(parts), len(text))
    assert decoded is not None
    assert structure._structure(text, "x.md", *decoded) == structure._structure(text, "x.md", *parts)


def test_a_file_that_does_not_check_out_is_never_read(kept, monkeypatch):
    text = HANDBOOK.read_text(encoding="utf-8")
    doc = from_text(text, "h.md")
    reference = structure_of(doc)
    (path,) = kept.glob(f"*{structurecache.FILES.suffix}")
    good = path.read_bytes()
    parsed = _parses(monkeypatch)
    for what, data in {"a flipped byte": good[:100] + bytes([good[100] ^ 1]) + good[101:],
                       "cut short": good[:-3], "empty": b""}.items():
        path.write_bytes(data)
        structure._STRUCTURES.clear()
        assert structure_of(from_text(text, "h.md")) == reference
        assert path.read_bytes() == good, what
    assert len(parsed) == 3
    blocks, headings, title = structure._markdown_parts(text)
    plain = [structurecache._plain(b) for b in blocks]
    wrong = {
        "a span beyond the text": [(*plain[0][:2], len(text) + 1, *plain[0][3:]), *plain[1:]],
        "blocks out of order": plain[::-1],
        "a kind no parse makes": [("script", *plain[0][1:]), *plain[1:]],
        "children of children": [(*plain[0][:5], ((*plain[0][:5], ((*plain[0][:5], ()),)),)), *plain[1:]],
        "a span that is not a number": [(plain[0][0], str(plain[0][1]), *plain[0][2:]), *plain[1:]],
    }
    for what, bad in wrong.items():
        payload = marshal.dumps((tuple(bad), tuple(headings), title))
        assert structurecache.decode(payload, len(text)) is None, what
        assert structurecache.FILES.write(doc.sha256, structurecache.structure_key(), [payload])
        assert structurecache.FILES.load(doc.sha256, structurecache.structure_key(),
                                         lambda p: structurecache.decode(p, len(text))) is None
        assert not path.exists()
    assert structurecache.decode(b"not marshal", len(text)) is None


def test_short_texts_and_plain_text_keep_nothing(kept, monkeypatch):
    monkeypatch.setattr(keptfiles, "PERSIST_AT_LEAST", 10_000)
    structure_of(from_text("# short\n\ntext\n", "s.md"))
    structure_of(from_text("plain text " * 2000, "p.txt"))
    assert not kept.exists() or not list(kept.iterdir())


def test_the_key_reads_the_parsers_own_sources():
    from inspector.core.text import markdown_blocks, markdown_fast

    here = Path(structurecache.__file__).parent
    assert {here / name for name in structurecache._SOURCES} == {
        Path(m.__file__) for m in (markdown_blocks, markdown_fast, structure)}
    key = structurecache.structure_key()
    assert len(key) == 64 and key == structurecache.structure_key()
