"""HTML, PDF and DOCX files become text with the same structure tools as Markdown; fixtures are
generated in tmp_path by the tests themselves (a tiny hand-written PDF writer, python-docx)."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.chunking.registry import chunk_document
from inspector.core.documents.converters import CONVERTED_SUFFIXES, convert
from inspector.core.documents.document import find_documents, load_document, load_paths
from inspector.core.documents.formats import PAGE_BREAK, gfm_table, html_to_markdown
from inspector.core.errors import InputError
from inspector.core.text.structure import structure_of

# ----------------------------------------------------------------------------- helpers
from tests.pdf_fixture import PDF_PAGES, make_pdf  # noqa: E402

HTML = """<!DOCTYPE html>
<html><head><title>Handbook page</title>
<style>body { color: red }</style>
<script>document.write("SECRET SCRIPT TEXT"); fetch("http://example.invalid/x")</script>
</head><body>
<nav><a href="/">Home</a></nav>
<h1>Employee Handbook</h1>
<p>Welcome to the   handbook.
   It explains &amp; defines our policies &lt;for everyone&gt;.</p>
<h2>Parental leave</h2>
<p>Employees in Germany get 14 weeks of leave.</p>
<table>
  <tr><th>Country</th><th>Weeks</th></tr>
  <tr><td>Germany</td><td>14</td></tr>
  <tr><td>France</td><td>16 | paid</td></tr>
</table>
<h2>Refunds</h2>
<ul><li>Receipts required</li><li>Within 30 days<ul><li>Nested item</li></ul></li></ul>
<pre><code class="language-python">def refund(x):
    return x * 2
</code></pre>
<script>var hidden = "ANOTHER SCRIPT";</script>
</body></html>
"""


def _docx_bytes() -> bytes:
    docx = pytest.importorskip("docx")
    d = docx.Document()
    d.add_heading("Employee Handbook", 0)
    d.add_paragraph("An introduction paragraph.")
    d.add_heading("Parental leave", 1)
    d.add_paragraph("Employees in Germany get 14 weeks of leave.")
    table = d.add_table(rows=3, cols=2)
    for r, row in enumerate([("Country", "Weeks"), ("Germany", "14"), ("France", "16")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    d.add_paragraph("The table above is indicative.")
    d.add_heading("Germany details", 2)
    d.add_paragraph("Apply through the portal.", style="List Bullet")
    d.add_paragraph("Tell your manager.", style="List Bullet")
    d.add_heading("Refunds", 1)
    d.add_paragraph("Refunds take 14 days.")
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def _page_of(doc, offset: int) -> int:
    """1-based page of an offset, from the page texts themselves (independent of bisect)."""
    page = 0
    for k, start in enumerate(doc.meta["page_starts"], start=1):
        if start <= offset:
            page = k
    return page


# ----------------------------------------------------------------------------- HTML


def test_html_becomes_markdown_without_scripts(tmp_path):
    path = tmp_path / "page.html"
    path.write_text(HTML, encoding="utf-8")
    doc = load_document(path)
    assert doc.kind == "markdown" and doc.encoding == "converted"
    assert "SECRET" not in doc.text and "ANOTHER SCRIPT" not in doc.text and "color" not in doc.text
    assert "example.invalid" not in doc.text
    assert "Welcome to the handbook. It explains & defines our policies <for everyone>." in doc.text
    assert doc.meta["title"] == "Handbook page"
    s = structure_of(doc)
    assert [(h.level, h.title) for h in s.headings] == [
        (1, "Employee Handbook"), (2, "Parental leave"), (2, "Refunds")]
    kinds = [b.kind for b in s.blocks]
    assert "table" in kinds and "list" in kinds and "code" in kinds
    table = next(b for b in s.blocks if b.kind == "table")
    assert doc.text[table.start:table.end] == (
        "| Country | Weeks |\n|---|---|\n| Germany | 14 |\n| France | 16 \\| paid |")
    code = next(b for b in s.blocks if b.kind == "code")
    assert code.info == "python" and "return x * 2" in doc.text[code.start:code.end]
    assert "  - Nested item" in doc.text


def test_markdown_strategy_on_html_carries_heading_paths(tmp_path):
    path = tmp_path / "page.htm"
    path.write_text(HTML, encoding="utf-8")
    doc = load_document(path)
    chunks = chunk_document(doc, "markdown", {"size": 24, "hard_cap": 64})
    by_text = {c.text(doc): c for c in chunks}
    germany = next(c for t, c in by_text.items() if "Germany | 14" in t)
    assert germany.heading_path == ("Employee Handbook", "Parental leave")
    refunds = next(c for t, c in by_text.items() if "Receipts required" in t)
    assert refunds.heading_path == ("Employee Handbook", "Refunds")
    assert refunds.prefix == "Employee Handbook > Refunds"


def test_html_charset_from_meta_and_unclosed_tags():
    data = ('<meta charset="iso-8859-1"><h2>Caf\xe9</h2><p>one<p>two<ul><li>a<li>b</ul>'
            '<table><tr><td>x<td>y<tr><td>z</table>').encode("latin-1")
    text, kind, _meta = html_to_markdown(data, "x.html")
    assert text == "## Caf\xe9\n\none\n\ntwo\n\n- a\n- b\n\n| x | y |\n|---|---|\n| z |  |\n"


def test_html_text_that_looks_like_markdown_stays_text():
    text, _kind, _meta = html_to_markdown(b"<p># not a heading</p><p>1. not a list</p><p>- nor this</p>")
    doc_structure = structure_of(_doc(text))
    assert [b.kind for b in doc_structure.blocks] == ["paragraph"] * 3


def _doc(text: str):
    from inspector.core.documents.document import Document

    return Document(text=text, name="x.html")


def test_gfm_table_pads_ragged_rows_and_escapes_pipes():
    assert gfm_table([["a", "b|c"], ["1"]]) == "| a | b\\|c |\n|---|---|\n| 1 |  |"
    assert gfm_table([[" ", ""]]) == ""


# ----------------------------------------------------------------------------- PDF


def test_pdf_pages_and_page_metadata(tmp_path):
    path = tmp_path / "policy.pdf"
    path.write_bytes(make_pdf(PDF_PAGES))
    doc = load_document(path)
    assert doc.kind == "markdown" and doc.meta["pages"] == 3
    starts = doc.meta["page_starts"]
    assert starts[0] == 0 and starts == sorted(starts)
    for k, lines in enumerate(PDF_PAGES):
        assert doc.text[starts[k]:].startswith(lines[0])
    assert doc.text.count("\f") == 0 and doc.text.count(PAGE_BREAK) == 2  # issue 26: no form feed left
    for strategy, params in (("sentences", {"size": 16}), ("recursive", {"size": 12})):
        for c in chunk_document(doc, strategy, params):
            assert c.text(doc).strip() and not c.text(doc).startswith("\f")
            assert c.meta["page"] == _page_of(doc, c.start)
            assert c.meta["page_end"] == _page_of(doc, c.end - 1)
    # Paragraph chunks never cross a page break: the form feed line is a paragraph break.
    chunks = chunk_document(doc, "paragraph")
    assert all("\f" not in c.text(doc) and c.meta["page"] == c.meta["page_end"] for c in chunks)
    refunds = next(c for c in chunks if "Refunds" in c.text(doc))
    assert refunds.meta["page"] == 2
    travel = next(c for c in chunks if "portal" in c.text(doc))
    assert travel.meta["page"] == 3


def test_a_pdf_s_text_has_no_form_feed_and_keeps_its_offsets(tmp_path):
    """Issue 26: the form feed between pages stayed in the text (and in every chunk and export).
    It is a newline now, so the text is as long as before and every offset into it (page starts,
    gold references, audit marks made before) holds; each chunk's page is still exact."""
    pages = PDF_PAGES + [["Appendix: forms.", "Form A is for leave.", "Form B is for refunds."]]
    path = tmp_path / "policy.pdf"
    path.write_bytes(make_pdf(pages))
    doc = load_document(path)
    assert "\f" not in doc.text and "\x0c" not in doc.text
    starts = doc.meta["page_starts"]
    assert len(starts) == 4
    # Where the pages started when the break was "\n\n\f\n\n": five characters between them.
    bodies = [doc.text[a:b].strip() for a, b in zip(starts, starts[1:] + [len(doc.text)], strict=True)]
    old = [0]
    for body in bodies[:-1]:
        old.append(old[-1] + len(body) + len("\n\n\f\n\n"))
    assert starts == old
    for k, lines in enumerate(pages):
        assert bodies[k].startswith(lines[0]) and doc.text[starts[k]:].startswith(lines[0])
    for strategy, params in (("fixed_chars", {"size": 60, "overlap": 10}), ("recursive", {"size": 12}),
                             ("paragraph", {})):
        chunks = chunk_document(doc, strategy, params)
        assert chunks
        for c in chunks:
            assert "\f" not in c.text(doc)
            assert c.meta["page"] == _page_of(doc, c.start)
            assert c.meta["page_end"] == _page_of(doc, c.end - 1)
    assert next(c for c in chunk_document(doc, "paragraph") if "Form B" in c.text(doc)).meta["page"] == 4


def test_pdf_chunk_spanning_pages_reports_both(tmp_path):
    path = tmp_path / "policy.pdf"
    path.write_bytes(make_pdf(PDF_PAGES))
    doc = load_document(path)
    whole = chunk_document(doc, "fixed_chars", {"size": 5000})
    assert len(whole) == 1 and (whole[0].meta["page"], whole[0].meta["page_end"]) == (1, 3)


def test_pdf_empty_page_keeps_page_numbers(tmp_path):
    path = tmp_path / "gap.pdf"
    path.write_bytes(make_pdf([["First page."], [], ["Third page."]]))
    doc = load_document(path)
    third = next(c for c in chunk_document(doc, "paragraph") if "Third" in c.text(doc))
    assert third.meta["page"] == 3


def test_pdf_without_text_is_an_input_error(tmp_path):
    path = tmp_path / "scan.pdf"
    path.write_bytes(make_pdf([[], []]))
    with pytest.raises(InputError, match=r"scan\.pdf: no extractable text \(scanned\?\)"):
        load_document(path)


@pytest.mark.parametrize("data, problem", [
    (make_pdf(PDF_PAGES)[:300], "cannot read PDF"),
    (b"%PDF-1.4\nthis is not a pdf body", "cannot read PDF"),
    (b"plain words, named .pdf", "not a PDF file"),
])
def test_broken_pdf_is_an_input_error_naming_the_file(tmp_path, data, problem):
    path = tmp_path / "broken.pdf"
    path.write_bytes(data)
    with pytest.raises(InputError) as info:
        load_document(path)
    assert info.value.path == str(path) and problem in info.value.problem


def test_encrypted_pdf_needs_a_password(tmp_path):
    pypdf = pytest.importorskip("pypdf")
    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(make_pdf(PDF_PAGES))))
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    buf = io.BytesIO()
    writer.write(buf)
    path = tmp_path / "locked.pdf"
    path.write_bytes(buf.getvalue())
    with pytest.raises(InputError, match="locked.pdf: encrypted PDF: a password is needed"):
        load_document(path)


def test_pdf_encrypted_with_empty_password_opens():
    pypdf = pytest.importorskip("pypdf")
    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(make_pdf(PDF_PAGES))))
    writer.encrypt(user_password="", owner_password="owner", algorithm="RC4-128")
    buf = io.BytesIO()
    writer.write(buf)
    text, _kind, meta = convert(buf.getvalue(), ".pdf", "open.pdf")
    assert "Refunds are issued" in text and meta["pages"] == 3


# ----------------------------------------------------------------------------- DOCX


def test_docx_headings_tables_and_lists_in_order(tmp_path):
    path = tmp_path / "handbook.docx"
    path.write_bytes(_docx_bytes())
    doc = load_document(path)
    assert doc.kind == "markdown"
    s = structure_of(doc)
    assert [(h.level, h.title) for h in s.headings] == [
        (1, "Employee Handbook"), (1, "Parental leave"), (2, "Germany details"), (1, "Refunds")]
    text = doc.text
    table = "| Country | Weeks |\n|---|---|\n| Germany | 14 |\n| France | 16 |"
    # Document order: the table sits between the paragraphs around it.
    assert text.index("get 14 weeks") < text.index(table) < text.index("The table above")
    assert "- Apply through the portal.\n- Tell your manager." in text
    assert [b.kind for b in s.blocks].count("table") == 1


def test_markdown_strategy_on_docx_carries_heading_paths(tmp_path):
    path = tmp_path / "handbook.docx"
    path.write_bytes(_docx_bytes())
    doc = load_document(path)
    chunks = chunk_document(doc, "markdown", {"size": 20, "hard_cap": 64})
    table_chunk = next(c for c in chunks if "| Germany | 14 |" in c.text(doc))
    assert table_chunk.heading_path == ("Parental leave",)
    portal = next(c for c in chunks if "portal" in c.text(doc))
    assert portal.heading_path == ("Parental leave", "Germany details")


@pytest.mark.parametrize("data", [b"PK\x03\x04 not really a zip", b"just text", _docx_bytes()[:400]])
def test_broken_docx_is_an_input_error(tmp_path, data):
    path = tmp_path / "broken.docx"
    path.write_bytes(data)
    with pytest.raises(InputError) as info:
        load_document(path)
    assert info.value.path == str(path) and "DOCX" in info.value.problem


# ----------------------------------------------------------------------------- folders


def test_folders_pick_up_converted_formats_and_report_bad_ones(tmp_path):
    (tmp_path / "a.html").write_text(HTML, encoding="utf-8")
    (tmp_path / "b.pdf").write_bytes(make_pdf(PDF_PAGES))
    (tmp_path / "c.docx").write_bytes(_docx_bytes())
    (tmp_path / "d.pdf").write_bytes(b"%PDF-1.4 broken")
    assert {".html", ".htm", ".pdf", ".docx"} <= CONVERTED_SUFFIXES
    assert [p.name for p in find_documents(tmp_path)] == ["a.html", "b.pdf", "c.docx", "d.pdf"]
    loaded = load_paths([tmp_path])
    assert [d.doc_id for d in loaded.documents] == ["a.html", "b.pdf", "c.docx"]
    assert len(loaded.problems) == 1 and loaded.problems[0].path.endswith("d.pdf")


def test_unknown_suffix_is_an_input_error():
    with pytest.raises(InputError, match="unsupported file type .xls"):
        convert(b"", ".xls", "x.xls")


TAGS = ["p", "div", "h1", "h3", "ul", "ol", "li", "table", "tr", "td", "th", "pre", "code", "br",
        "blockquote", "script", "style", "b", "a", "caption", "hr", "img", "title", "head", "body"]


def test_an_unclosed_caption_keeps_its_text():
    """Found by the tag-soup property below: a <caption> the markup never closed lost its text."""
    text, _kind, _meta = html_to_markdown(b"<table><caption>word", "soup.html")
    assert "word" in text


@settings(max_examples=150)
@given(st.lists(st.one_of(
    st.builds(lambda t, close: f"</{t}>" if close else f"<{t}>", st.sampled_from(TAGS), st.booleans()),
    st.sampled_from(["word", "two words", "&amp;", "&lt;b&gt;", "\n", "  ", "| pipe", "# hash", "1. x", "```"]),
), max_size=60))
def test_any_tag_soup_converts_without_losing_text_outside_scripts(parts):
    html = "".join(parts)
    text, kind, _meta = html_to_markdown(html.encode(), "soup.html")
    assert kind == "markdown"
    structure_of(_doc(text))  # parses
    if "<script>" not in html and "<style>" not in html and "<head>" not in html and "<title>" not in html:
        for word in ("word", "two words"):
            if word in html:
                assert word.split()[0] in text
