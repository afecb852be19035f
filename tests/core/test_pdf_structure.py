"""PDFs with their structure (issue 30): headings, levels, lists, tables, running heads, hyphens,
columns and the page map, on small PDFs the tests write themselves (tests/pdf_fixture.py), plus
property tests of the layout steps and of the whole extractor."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.documents import pdf_convert, pdf_structure
from inspector.core.documents.document import load_document
from inspector.core.documents.pdf_convert import builtin_pdf, convert_pdf, set_pdf_backend
from inspector.core.documents.pdf_layout import Word, join_lines, make_blocks, make_lines, reading_order
from inspector.core.errors import InputError
from inspector.core.runtime.cancel import progress_scope
from inspector.core.text.structure import structure_of
from tests.pdf_fixture import PDF_PAGES, grid, make_layout_pdf, make_pdf, text_lines

BODY = ["Employees in Germany get fourteen weeks of parental leave, paid in full by",
        "the company, and may take it in up to three parts within the first three",
        "years after the birth or adoption of the child."]


def _page_of(meta: dict, offset: int) -> int:
    return sum(1 for s in meta["page_starts"] if s <= offset)


def _handbook_page() -> list[tuple]:
    return ([("text", 72, 60, 18, "B", "Travel and leave handbook")] + text_lines(72, 100, BODY)
            + [("text", 72, 150, 12, "B", "2.1 Refunds")] + text_lines(72, 175, BODY)
            + grid(72, 240, [120, 200], [["Item", "Limit"], ["Hotel", "150 EUR per night"],
                                         ["Meals", "40 EUR per day"]])
            + [("text", 72, 30, 8, "R", "ACME staff handbook"), ("text", 300, 760, 9, "R", "1")])


def _handbook() -> bytes:
    page1 = _handbook_page()
    page2 = (text_lines(72, 60, ["Receipts are kept for ten years. The finance team checks every refund",
                                 "claim within a week and pays approved claims with the next salary."])
             + [("text", 72, 110, 10, "B", "Booking rules")]
             + text_lines(72, 130, ["• Economy class is the default for flights under six hours.",
                                    "• Trains are preferred for trips under four hours."])
             + [("text", 72, 30, 8, "R", "ACME staff handbook"), ("text", 300, 760, 9, "R", "2")])
    return make_layout_pdf([page1, page2])


def test_headings_tables_lists_and_page_map_from_the_layout():
    text, kind, meta = builtin_pdf(_handbook(), "handbook.pdf")
    assert kind == "markdown" and meta["pages"] == 2
    heads = re.findall(r"^(#+) (.*)$", text, flags=re.M)
    # Levels by type size: 18 pt, 12 pt, then bold at the body size.
    assert heads == [("#", "Travel and leave handbook"), ("##", "2.1 Refunds"), ("###", "Booking rules")]
    assert "| Item | Limit |\n|---|---|\n| Hotel | 150 EUR per night |\n| Meals | 40 EUR per day |" in text
    assert "- Economy class is the default for flights under six hours.\n- Trains are preferred" in text
    # The running head and the page numbers are gone; the body is whole.
    assert "ACME staff handbook" not in text and not re.search(r"^\s*[12]\s*$", text, flags=re.M)
    assert "paid in full by the company" in text
    # Every character maps back to its page.
    starts = meta["page_starts"]
    assert starts[0] == 0 and starts == sorted(starts) and len(starts) == 2
    assert _page_of(meta, text.index("Hotel")) == 1 and _page_of(meta, text.index("Receipts")) == 2
    assert meta["structure"]["tables"] == 1 and meta["structure"]["running_lines_dropped"] == 4
    assert "3 headings" in meta["structure_note"] and "1 tables from ruling lines" in meta["structure_note"]


def test_the_markdown_pipeline_sees_the_heading_paths(tmp_path):
    path = tmp_path / "handbook.pdf"
    path.write_bytes(_handbook())
    doc = load_document(path)
    assert doc.kind == "markdown"
    titles = [h.title for h in structure_of(doc).headings]
    assert titles == ["Travel and leave handbook", "2.1 Refunds", "Booking rules"]


def test_outline_names_the_headings_and_their_levels():
    page = ([("text", 72, 60, 10, "R", "Leave")] + text_lines(72, 80, BODY)
            + [("text", 72, 140, 10, "R", "Sick leave")] + text_lines(72, 160, BODY))
    data = make_layout_pdf([page], outline=[("Leave", 0), ("Sick leave", 0)])
    text, _kind, meta = builtin_pdf(data, "outlined.pdf")
    # Same type as the body: only the outline can tell these are headings.
    assert re.findall(r"^# (.*)$", text, flags=re.M) == ["Leave", "Sick leave"]
    assert meta["structure"]["outline_matched"] == 2 and "from the outline" in meta["structure_note"]


def test_hyphenated_words_are_joined_and_code_is_fenced():
    page = (text_lines(72, 60, ["The travel policy applies to every employ-", "ee who books a trip abroad",
                                "with the company's card or a self-",
                                "Booked ticket."])
            + text_lines(72, 140, ["def refund(claim):", "    return claim.total"], font="M"))
    text, _kind, meta = builtin_pdf(make_layout_pdf([page]), "hyphens.pdf")
    assert "every employee who books" in text
    assert "self- Booked" in text  # an upper-case word after the hyphen keeps it
    assert "```\ndef refund(claim):\n    return claim.total\n```" in text
    assert meta["structure"]["hyphens_joined"] == 1 and meta["structure"]["code_blocks"] == 1


def test_numbered_item_titles_and_mixed_size_titles_beside_a_column():
    # "(1) Title" set bold a size above the body is a heading, not a list item run into the
    # text below; a title in two sizes ("Issues and Answers") on the baseline of a small-type
    # column beside it stays one line (issue 30, found on docling's normal_4pages.pdf).
    page = ([("text", 300, 60, 26, "B", "Issues"), ("text", 370, 64, 20, "B", "and"),
             ("text", 420, 60, 26, "B", "Answers"), ("text", 72, 66, 9, "R", "Issued 2 April by the office")]
            + [("text", 72, 130, 11, "B", "(1) Changes to the law")] + text_lines(72, 150, BODY)
            + [("text", 72, 210, 11, "B", "(2) The standard terms")] + text_lines(72, 230, BODY))
    text, _kind, _meta = builtin_pdf(make_layout_pdf([page]), "titles.pdf")
    heads = [h for _level, h in re.findall(r"^(#+) (.*)$", text, flags=re.M)]
    assert "Issues and Answers" in heads, text
    assert "(1) Changes to the law" in heads and "(2) The standard terms" in heads, text
    assert "Employees in Germany" in text and "- Employees" not in text


def test_a_run_of_bold_lines_is_not_a_run_of_empty_sections():
    # A cover's highlights: three bold lines in a row with nothing between them stay text; a bold
    # title followed by its paragraph stays a heading.
    page = ([("text", 72, 60, 10, "B", "Implement roles and separation of duties"),
             ("text", 72, 90, 10, "B", "Leverage row permissions on the database"),
             ("text", 72, 120, 10, "B", "Protect columns by defining column masks")]
            + text_lines(72, 150, ["This paper describes the feature for database engineers."])
            + [("text", 72, 200, 10, "B", "Booking rules")] + text_lines(72, 220, BODY))
    text, _kind, meta = builtin_pdf(make_layout_pdf([page]), "cover.pdf")
    heads = [h for _level, h in re.findall(r"^(#+) (.*)$", text, flags=re.M)]
    assert heads == ["Booking rules"], text
    assert "Leverage row permissions on the database" in text
    assert meta["structure"]["headings"] == {"bold": 1}


def test_boxes_that_are_a_drawing_stay_text_and_doubled_glyphs_are_read_once():
    # A syntax diagram: a 5 x 4 grid of boxes with a bold line in five cells (mostly empty, so
    # not a table); its lines stay text, none a heading. Below it a word whose every glyph is
    # drawn twice 0.7 pt apart (fake bold), as docling's Redbook sample does.
    items = [("text", 72, 40, 10, "R", "The statement is shown in the figure below.")]
    xs, tops = [72, 200, 330, 460, 540], [80, 110, 140, 170, 200, 230]
    for x in xs:
        items.append(("rule", x, tops[0], x, tops[-1]))
    for t in tops:
        items.append(("rule", xs[0], t, xs[-1], t))
    for k, line in enumerate(["CREATE PERMISSION", "ON TABLE", "FOR ROWS", "WHERE", "ENABLE"]):
        items.append(("text", xs[k % 4] + 4, tops[k] + 9, 10, "B", line))
    for i, ch in enumerate("ENFORCED"):
        items += [("text", 72 + 6 * i, 260, 10, "M", ch), ("text", 72.7 + 6 * i, 260, 10, "M", ch)]
    items += text_lines(72, 300, BODY)
    text, _kind, meta = builtin_pdf(make_layout_pdf([items]), "diagram.pdf")
    assert "|" not in text and meta["structure"]["tables"] == 0, text
    assert "CREATE PERMISSION" in text and "FOR ROWS" in text
    assert not re.search(r"^#", text, flags=re.M), text
    assert "ENFORCED" in text and "EENN" not in text, text


def _heads(text: str) -> list[str]:
    return [h for _level, h in re.findall(r"^(#+) (.*)$", text, flags=re.M)]


def test_white_text_on_bare_paper_is_never_a_heading_but_white_on_a_dark_box_is():
    # A cover's hidden bookmark text ("Front cover" in white, large, on white paper), as in
    # docling's Redbook sample, stays text; white type on a dark band is seen and can head.
    page = ([("text", 72, 40, 24, "B", "Front cover", 1), ("fill", 60, 90, 560, 130, 0.2),
             ("text", 72, 100, 18, "B", "Security fundamentals", 1)] + text_lines(72, 150, BODY))
    text, _kind, _meta = builtin_pdf(make_layout_pdf([page]), "hidden.pdf")
    assert _heads(text) == ["Security fundamentals"], text
    assert "Front cover" in text


def test_captions_brands_author_lines_and_long_questions_are_not_headings():
    page = ([("text", 72, 40, 16, "B", "Parental leave")] + text_lines(72, 70, BODY)
            + [("text", 400, 120, 11, "B", "Kim Chang-ho*")]
            + [("text", 72, 150, 11, "B", "[Table 1] Leave before and after the change")]
            + [("text", 72, 180, 22, "B", "Redpaper™")]
            + [("text", 72, 220, 10, "B", "23. If your company has a works council, how many days of leave may"),
               ("text", 72, 232, 10, "B", "a parent take at most in the first year after the birth?")]
            + text_lines(72, 260, BODY))
    text, _kind, _meta = builtin_pdf(make_layout_pdf([page]), "marks.pdf")
    assert _heads(text) == ["Parental leave"], text
    for line in ("Kim Chang-ho*", "[Table 1] Leave before", "Redpaper", "how many days of leave"):
        assert line in text, (line, text)


def test_column_heads_a_closing_brand_and_a_subtitle_are_not_headings():
    # Two bold labels side by side over a table drawn without rules; a large word alone at the
    # foot of the page; an italic line right under a title. The title itself stays a heading.
    page = ([("text", 72, 40, 18, "B", "Centre of Excellence"),
             ("text", 72, 64, 11, "I", "Expert help for your requirements")]
            + text_lines(72, 90, BODY)
            + [("text", 300, 150, 10, "B", "State funded"), ("text", 420, 150, 10, "B", "CSOs")]
            + [("text", 72, 170, 10, "R", "Children"), ("text", 300, 170, 10, "R", "yes"),
               ("text", 420, 170, 10, "R", "no")]
            + text_lines(72, 200, BODY)
            + [("text", 350, 700, 40, "B", "Redbooks"), ("text", 72, 720, 10, "R", "ibm.com/redbooks")])
    text, _kind, _meta = builtin_pdf(make_layout_pdf([page]), "placed.pdf")
    assert _heads(text) == ["Centre of Excellence"], text
    for line in ("Expert help for your requirements", "State funded", "CSOs", "Redbooks"):
        assert line in text, (line, text)


def test_each_page_is_read_with_the_collector_paused(monkeypatch):
    # A page's reading makes tens of thousands of short-lived objects: the cyclic collector is
    # paused for it (a tenth of the conversion walking them), and on again after, a failing page
    # included.
    import gc

    seen = []
    real = pdf_structure.page_blocks

    def recording(page):
        seen.append(gc.isenabled())
        if page.page_number == 2:
            raise ValueError("an odd page")
        return real(page)

    monkeypatch.setattr(pdf_structure, "page_blocks", recording)
    assert gc.isenabled()
    pages = pdf_convert.read_pages(make_pdf(PDF_PAGES))
    assert seen == [False, False, False] and gc.isenabled()
    assert pages[1].failure and not pages[0].failure


def test_the_fast_page_objects_are_pdfplumbers_own():
    # parse_objects_fast builds pdfplumber's object dicts itself (the backend's speed-up): on a
    # page with text in three fonts, white text, a filled box, ruling lines and a table, every
    # object equals the one pdfplumber's own parse_objects gives.
    page = (_handbook_page() + [("text", 72, 600, 12, "I", "Italic (and parentheses)", 1),
                                ("fill", 60, 590, 300, 620, 0.3)])
    data = make_layout_pdf([page])
    mine, theirs = pdf_structure.open_plumber(data), pdf_structure.open_plumber(data)
    with mine, theirs:
        fast = pdf_structure.parse_objects_fast(mine.pages[0])
        slow = theirs.pages[0].parse_objects()
    assert sorted(fast) == sorted(slow) and {"char", "line", "rect"} <= set(fast)
    for kind in slow:
        assert fast[kind] == slow[kind], kind


def test_table_cells_read_from_the_tables_own_characters_are_pdfplumbers():
    # _extract_table hands pdfplumber only the characters inside the table (the speed-up): the
    # cells equal pdfplumber's own extract over the whole page, text above and below included,
    # with a character on the table's right and bottom edges and one just outside its left edge.
    page = (_handbook_page() + text_lines(72, 330, BODY)
            + [("text", 70, 260, 9, "R", "x"), ("text", 391, 250, 9, "R", "edge")])
    with pdf_structure.open_plumber(make_layout_pdf([page])) as pdf:
        found = pdf.pages[0].find_tables()
        assert found
        for t in found:
            assert pdf_structure._extract_table(t) == t.extract(char_dir_rotated="btt")


def test_a_header_turned_upright_in_a_table_reads_forwards():
    xs, tops = [72, 250, 300, 350, 400], [100, 160, 178, 196]
    items = [("text", 72, 60, 10, "R", "Who may run which command:")]
    for x in xs:
        items.append(("rule", x, tops[0], x, tops[-1]))
    for t in tops:
        items.append(("rule", xs[0], t, xs[-1], t))
    items.append(("text", 76, 140, 9, "R", "User action"))
    for k, name in enumerate(["*JOBCTL", "SECADM", "Nobody"]):
        items.append(("up", xs[k + 1] + 16, tops[1] - 4, 9, "R", name))
    for r, row in enumerate([["STRDBMON", "X", "X", ""], ["CHGQRYA", "X", "", "X"]]):
        for c, cell in enumerate(row):
            if cell:
                items.append(("text", xs[c] + 4, tops[r + 1] + 4, 9, "R", cell))
    text, _kind, _meta = builtin_pdf(make_layout_pdf([items]), "rotated.pdf")
    assert "| User action | *JOBCTL | SECADM | Nobody |" in text, text
    assert "| STRDBMON | X | X |  |" in text


def test_two_columns_are_read_column_by_column():
    left = ["Left column starts here and", "goes on for a while with", "words of its own.", "",
            "A second left paragraph", "ends the left column."]
    right = ["Right column begins now and", "carries different words", "to the end.", "",
             "A second right paragraph", "ends the page."]
    items = [("text", 72, 40, 16, "B", "Two columns")]
    for k, (a, b) in enumerate(zip(left, right, strict=False)):
        if a:
            items.append(("text", 72, 80 + 13 * k, 10, "R", a))
        if b:
            items.append(("text", 320, 80 + 13 * k, 10, "R", b))
    text, _kind, _meta = builtin_pdf(make_layout_pdf([items]), "columns.pdf")
    order = [text.index(s) for s in ("Two columns", "Left column starts", "A second left", "Right column begins",
                                     "A second right")]
    assert order == sorted(order), text


def test_a_page_that_cannot_be_structured_falls_back_to_plain_text(monkeypatch):
    """The layout step raising on one page (injected: no real PDF is known to do it reliably)
    costs that page its structure, not the document; the warning names the page."""
    real = pdf_structure.page_blocks

    def flaky(page):
        if page.page_number == 2:
            raise ValueError("odd content stream")
        return real(page)

    monkeypatch.setattr(pdf_structure, "page_blocks", flaky)
    text, kind, meta = builtin_pdf(make_pdf(PDF_PAGES), "flaky.pdf")
    assert kind == "markdown" and "Refunds are issued within 14 days." in text
    assert meta["structure"]["plain_pages"] == [2]
    assert any("page 2: structure not recovered (ValueError: odd content stream)" in w for w in meta["warnings"])
    assert _page_of(meta, text.index("Refunds")) == 2 and _page_of(meta, text.index("Travel")) == 3


def test_backends_plain_and_unknown_and_docling_missing(tmp_path):
    data = make_pdf(PDF_PAGES)
    text, kind, _meta = convert_pdf(data, "p.pdf", backend="plain")
    assert kind == "text" and "Parental leave policy\nEmployees" in text
    with pytest.raises(ValueError, match="unknown PDF backend 'ocr'"):
        set_pdf_backend("ocr")
    path = tmp_path / "p.pdf"
    path.write_bytes(data)
    try:
        set_pdf_backend("plain")
        assert load_document(path).kind == "text"
    finally:
        set_pdf_backend("builtin")
    assert load_document(path).kind == "markdown"
    if pdf_convert.docling_available():
        pytest.skip("docling is installed here: the missing-package message cannot show")
    with pytest.raises(InputError, match=r"p\.pdf: the docling PDF backend needs the optional docling package"):
        convert_pdf(data, "p.pdf", backend="docling")


def test_docling_backend_still_gives_the_clear_errors():
    with pytest.raises(InputError, match="not a PDF file"):
        convert_pdf(b"plain words", "x.pdf", backend="docling")


def _docling_without_models(root) -> None:
    """A stand-in for the docling package on a machine that cannot reach the Hugging Face hub:
    real docling cannot run here (its models are not on this machine), so this one fails the
    way it does there, with huggingface_hub's many-line message for a model not in the cache."""
    pkg = root / "docling"
    (pkg / "datamodel").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "datamodel" / "__init__.py").write_text("")
    (pkg / "datamodel" / "base_models.py").write_text(
        "class DocumentStream:\n    def __init__(self, name, stream):\n        self.name, self.stream = name, stream\n")
    hub = ("An error happened while trying to locate the files on the Hub and we cannot find the appropriate "
           "snapshot folder for the specified revision on the local disk.\nPlease check your internet connection "
           "and try again.")
    (pkg / "document_converter.py").write_text(
        "class LocalEntryNotFoundError(OSError):\n    pass\n\n"
        "class DocumentConverter:\n    def convert(self, source):\n"
        f"        raise LocalEntryNotFoundError({hub!r})\n")


def test_docling_without_its_models_is_one_line_that_says_what_to_do(tmp_path, monkeypatch):
    import sys

    _docling_without_models(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert pdf_convert.docling_available()
        with pytest.raises(InputError) as err:
            convert_pdf(make_pdf(PDF_PAGES), "leave.pdf", backend="docling")
    finally:
        for name in [m for m in sys.modules if m == "docling" or m.startswith("docling.")]:
            del sys.modules[name]
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("leave.pdf: docling could not convert the PDF (LocalEntryNotFoundError")
    assert "docling-tools models download" in msg and "DOCLING_ARTIFACTS_PATH" in msg and "built-in" in msg


# ----------------------------------------------------------------------------- properties

# Latin and Hebrew words: a page mostly right-to-left reads its columns from the right.
_word = st.one_of(st.text(alphabet="abcdefghij", min_size=1, max_size=8),
                  st.text(alphabet="אבגדהוזחטי", min_size=1, max_size=8))


@st.composite
def _words(draw) -> list[Word]:
    """Words on a loose grid of lines and columns, some sizes and fonts mixed."""
    out = []
    n_lines = draw(st.integers(1, 12))
    cols = draw(st.sampled_from([(72,), (72, 320)]))
    for i in range(n_lines):
        for x_start in cols:
            x = float(x_start)
            size = draw(st.sampled_from([9.0, 10.0, 14.0]))
            top = 60.0 + i * draw(st.sampled_from([12.5, 13.0, 30.0])) * 1.0 + (i * 13.0)
            for _ in range(draw(st.integers(0, 4))):
                t = draw(_word)
                w = 5.0 * len(t)
                font = draw(st.sampled_from(["Helvetica", "Helvetica-Bold"]))
                out.append(Word(t, x, x + w, top, top + size, size, font))
                x += w + 2.5
    return out


@given(_words())
@settings(max_examples=60, deadline=None)
def test_layout_keeps_every_word_once_and_is_deterministic(words):
    lines = make_lines(words)
    blocks = make_blocks(lines)
    ordered = reading_order(blocks)
    assert sorted(id(b) for b in ordered) == sorted(id(b) for b in blocks)
    got = sorted((w.text, w.x0, w.top) for b in ordered for ln in b.lines for w in ln.words)
    assert got == sorted((w.text, w.x0, w.top) for w in words)
    again = reading_order(make_blocks(make_lines(list(words))))
    assert [[w for ln in b.lines for w in ln.words] for b in again] == \
        [[w for ln in b.lines for w in ln.words] for b in ordered]


@given(st.lists(st.text(alphabet="abc- ", min_size=1, max_size=12), min_size=1, max_size=6))
def test_join_lines_drops_only_joining_hyphens(texts):
    joined, n = join_lines(texts)
    kept = "".join(t.strip() for t in texts).replace(" ", "")
    assert len(joined.replace(" ", "")) == len(kept) - n


# Words one space apart: a run of spaces inside a line is a gap wider than a word space, which the
# layout reads as a column gutter by design (test_two_columns_are_read_column_by_column), so such a
# line has no single reading order to check.
_para = st.lists(st.text(alphabet="abcdefgh ", min_size=3, max_size=40).map(lambda s: " ".join(s.split()))
                 .filter(bool), min_size=1, max_size=4)


@given(st.lists(st.lists(_para, min_size=0, max_size=3), min_size=1, max_size=3))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_page_map_covers_the_text_in_page_order(pages):
    items = []
    for paras in pages:
        page, top = [], 60.0
        for lines in paras:
            page += text_lines(72, top, ["w" + ln for ln in lines])
            top += 13 * len(lines) + 20
        items.append(page)
    if not any(items):
        return
    data = make_layout_pdf(items)
    text, _kind, meta = builtin_pdf(data, "p.pdf")
    starts = meta["page_starts"]
    assert len(starts) == len(pages) and starts[0] == 0
    assert all(a < b for a, b in itertools.pairwise(starts))
    bounds = starts + [len(text)]
    for k, paras in enumerate(pages):
        span = text[bounds[k]:bounds[k + 1]]
        pos = 0
        for lines in paras:
            for ln in lines:
                for word in ("w" + ln).split():
                    found = span.find(word, pos)
                    assert found >= 0, (word, span)
                    pos = found + len(word)
    assert builtin_pdf(data, "p.pdf")[0] == text


def _glyphs(visual: str, x: float = 72, top: float = 100, size: float = 10) -> list[dict]:
    """Characters as pdfplumber gives them, drawn left to right in `visual` order (a space a gap)."""
    out = []
    for ch in visual:
        if ch != " ":
            out.append({"text": ch, "x0": x, "x1": x + 5, "top": top, "bottom": top + size, "size": size,
                        "fontname": "Arial", "upright": True, "non_stroking_color": (0,)})
        x += 5 if ch != " " else 4
    return out


def test_a_right_to_left_line_reads_from_the_right():
    # Hebrew as a PDF draws it: the line "שלום PDF עולם" placed from the left, so the leftmost
    # glyph is the last letter of the last word; the Latin word keeps its own direction.
    res = pdf_structure.PageResult(number=1)
    words = pdf_structure.chars_to_words(_glyphs("םלוע PDF םולש"), res)
    assert make_lines(words)[0].text == "שלום PDF עולם"
    # "سلام" with its lam-alef drawn as one glyph whose text is the two letters in order: the
    # glyphs are read from the right, each glyph's text kept whole (not "سالم").
    glyphs = _glyphs("mxs")
    for g, text in zip(glyphs, ("م", "لا", "س"), strict=True):
        g["text"] = text
    assert make_lines(pdf_structure.chars_to_words(glyphs, res))[0].text == "سلام"
    # A left-to-right line is untouched.
    assert make_lines(pdf_structure.chars_to_words(_glyphs("Leave policy"), res))[0].text == "Leave policy"


def _form_grid(top: float, rows: list[list[str]]) -> list[tuple]:
    """A form's ruled table: labels in bold on the left, values in regular type, 12 pt."""
    items = grid(72, top, [200, 250], rows, height=22, size=12)
    return [("text", *it[1:4], "B", it[5]) if it[0] == "text" and it[1] < 272 else it for it in items]


def test_a_forms_section_lines_between_its_tables_are_headings():
    # A form (the Persian prospectus in benchmarks/data/pdf has this shape): nearly all its text
    # in ruled tables whose labels are bold, and a few bold lines outside them that head the
    # sections. Those lines were the only paragraphs, so they were their own yardstick and none
    # stood out. A lead-in with a colon and a regular line at the cells' size stay text.
    page = ([("text", 72, 40, 14, "B", "Admission prospectus for domestic goods"),
             ("text", 300, 70, 11, "B", "Iran Mercantile Exchange"),
             ("text", 72, 100, 15, "B", "2-5 Product standard")]
            + _form_grid(125, [["Name of the standard", "Billets cast continuously"],
                               ["National standard number", "20300"],
                               ["Is the standard mandatory?", "No"],
                               ["Issuing body", "National Standards Organization"]])
            + [("text", 72, 240, 14, "B", "3 Admission to the exchange")]
            + _form_grid(265, [["Date the papers were filed", "1403/09/19"], ["Date of admission", "1403/10/04"],
                               ["Committee session number", "436"], ["Admission adviser", "Armoon brokerage"],
                               ["Basis of the base price", "World prices"]])
            + [("text", 72, 400, 12, "B", "Signature of the adviser:"),
               ("text", 72, 420, 12, "R", "Filled in by the exchange"), ("text", 300, 780, 9, "R", "7")])
    text, _kind, meta = builtin_pdf(make_layout_pdf([page]), "form.pdf")
    assert _heads(text) == ["Admission prospectus for domestic goods", "Iran Mercantile Exchange",
                            "2-5 Product standard", "3 Admission to the exchange"], text
    assert "Signature of the adviser:" in text and "Filled in by the exchange" in text
    assert meta["structure"]["tables"] == 2 and "between a form's tables" in meta["structure_note"]


def test_a_bold_documents_short_bold_line_is_not_a_heading_beside_a_small_table():
    # The form rule needs the tables to hold most of the page's text: in a document set in bold
    # throughout, a short bold line near a small table is text, as it was.
    page = (text_lines(72, 60, BODY, font="B") + [("text", 72, 110, 10, "B", "Hotel costs")]
            + text_lines(72, 130, BODY, font="B") + grid(72, 200, [120, 200], [["Item", "Limit"], ["Hotel", "150"]])
            + text_lines(72, 260, BODY, font="B"))
    text, _kind, _meta = builtin_pdf(make_layout_pdf([page]), "bold.pdf")
    assert _heads(text) == [], text


def test_a_right_to_left_tables_cells_and_columns_read_from_the_right():
    # A cell's text drawn from the left, as pdfplumber gives it: "לא" (no) at the left, "כן"
    # (yes) far to the right on the same row, a checkbox's width apart, and a second line below.
    chars = _glyphs("אל" + " " * 12 + "ןכ") + _glyphs("הרעה", top=115)
    assert pdf_structure._cell_text(chars, (60, 90, 200, 140)) == "כן\nלא\nהערה"
    # Its columns: the first is the rightmost once most cells are right-to-left ...
    assert pdf_structure._right_to_left([["תאריך", "1403/09/19"], ["שם", "פלדה"]])
    # ... and not for a table of one Hebrew and one English column, nor for numbers only.
    assert not pdf_structure._right_to_left([["תאריך", "Date"], ["שם", "Name"]])
    assert not pdf_structure._right_to_left([["1", "2"], ["3", "4"]])


def test_a_right_to_left_pages_columns_are_read_from_the_right():
    def page(left: list[str], right: list[str]) -> list[str]:
        words = [Word(t, x, x + 100, 100 + 14 * k, 110 + 14 * k, 10)
                 for x, col in ((72, left), (300, right)) for k, t in enumerate(col)]
        return [b.lines[0].text for b in reading_order(make_blocks(make_lines(words)))]

    assert page(["שלישי", "רביעי"], ["ראשון", "שני"]) == ["ראשון", "שלישי"]
    assert page(["first", "second"], ["third", "fourth"]) == ["first", "third"]


def test_a_long_pdf_s_pages_read_in_the_corpus_pool_make_the_same_document(monkeypatch):
    """Pages read in ranges on the pool's processes (`pdf_convert._all_pages`) give the Markdown,
    page map and notes of pages read one after another here, running heads dropped across the
    ranges as across the pages."""
    from inspector.core.documents import pdf_convert
    from inspector.core.runtime import offload

    pages = []
    for p in range(1, 8):
        page = [("text", 72, 40, 9, "R", "Kestrelbrook handbook (running head)"),
                ("text", 72, 72, 18, "B", f"Section {p}"),
                ("text", 72, 110, 11, "R", f"Body text of page {p}, which says what section {p} covers."),
                ("text", 72, 126, 11, "R", "A second line of the same paragraph, long enough to count.")]
        if p == 4:
            page += [("rule", 72, 160, 400, 160), ("rule", 72, 180, 400, 180), ("rule", 72, 200, 400, 200),
                     ("rule", 72, 160, 72, 200), ("rule", 236, 160, 236, 200), ("rule", 400, 160, 400, 200),
                     ("text", 80, 166, 10, "R", "Country"), ("text", 244, 166, 10, "R", "Weeks"),
                     ("text", 80, 186, 10, "R", "Germany"), ("text", 244, 186, 10, "R", "14")]
        pages.append(page)
    data = make_layout_pdf(pages)
    said: list[tuple[int, int, str]] = []
    with progress_scope(lambda *report: said.append(report)):
        serial = pdf_convert.builtin_pdf(data, "long.pdf")
    label = "Reading the pages of long.pdf"
    assert said == [(k, 7, label) for k in range(8)]  # before each page, and when all are read
    monkeypatch.setattr(pdf_convert, "PARALLEL_PAGES_AT_LEAST", 3)
    monkeypatch.setattr(offload, "allowed_cores", lambda: 2)
    pool = offload.corpus_pool()
    before = pool.calls
    said.clear()
    try:
        with progress_scope(lambda *report: said.append(report)):
            parallel = pdf_convert.builtin_pdf(data, "long.pdf")
        assert pool.calls - before == 4  # two ranges a process
    finally:
        offload.shutdown_corpus_pool()
    # As each range comes back (ranges of 1-2 pages, in any order): from none to all seven.
    done = [d for d, total, text in said if total == 7 and text == label]
    assert len(said) == 5 and done[0] == 0 and done[-1] == 7 and done == sorted(done)
    assert parallel[0] == serial[0] and parallel[1] == serial[1]
    assert "| Germany | 14 |" in serial[0] and "running head" not in serial[0]

    def timeless(meta: dict) -> dict:
        return {**meta, "structure": {k: v for k, v in meta["structure"].items() if k != "seconds"}}

    assert timeless(parallel[2]) == timeless(serial[2])


def test_a_pdf_s_pages_stay_in_this_process_where_one_core_is_allowed(monkeypatch):
    """A Ray task of one CPU (OMP_NUM_THREADS=1), or a pool's process, starts no pool of its own."""
    import multiprocessing

    from inspector.core.documents import pdf_convert
    from inspector.core.runtime import offload

    def no_pool(*_args, **_kwargs):
        raise AssertionError("a pool was started")

    data = make_layout_pdf([[("text", 72, 72, 11, "R", f"Page {p} of the policy.")] for p in range(1, 5)])
    monkeypatch.setattr(pdf_convert, "PARALLEL_PAGES_AT_LEAST", 2)
    monkeypatch.setattr(offload, "corpus_pool", no_pool)
    monkeypatch.setattr(offload, "cores", lambda: 4)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert offload.allowed_cores() == 1
    assert "Page 4 of the policy." in pdf_convert.builtin_pdf(data, "one.pdf")[0]
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert offload.allowed_cores() == 3
    monkeypatch.setattr(multiprocessing, "parent_process", lambda: object())  # as in a pool's process
    assert "Page 4 of the policy." in pdf_convert.builtin_pdf(data, "one.pdf")[0]


def test_a_folder_s_pdfs_converted_in_the_corpus_pool_load_as_they_load_here(tmp_path, monkeypatch):
    """The same documents, order and problems as one file after another: a broken PDF is a
    problem naming it, the other files load here meanwhile."""
    import shutil
    from pathlib import Path

    from inspector.core.documents import document
    from inspector.core.documents.document import load_paths
    from inspector.core.runtime import offload

    folder = tmp_path / "policies"
    (folder / "sub").mkdir(parents=True)
    for k in range(3):
        page = [("text", 72, 72, 18, "B", f"Policy {k}"), ("text", 72, 110, 11, "R", f"Body of policy {k}.")]
        (folder / ("sub" if k == 1 else "") / f"p{k}.pdf").write_bytes(make_layout_pdf([page, page]))
    bad = Path(__file__).resolve().parents[1] / "data" / "bad" / "truncated.pdf"
    shutil.copyfile(bad, folder / "broken.pdf")
    (folder / "notes.md").write_text("# Notes\n\nNot a PDF.\n", encoding="utf-8")
    serial = load_paths([folder])
    monkeypatch.setattr(offload, "allowed_cores", lambda: 2)
    pool = offload.corpus_pool()
    before = pool.calls
    said: list[tuple[int, int, str]] = []
    try:
        with progress_scope(lambda *report: said.append(report)):
            pooled = load_paths([folder])
        assert pool.calls - before == 4  # the four PDFs, the broken one too
        assert said == [(k, 4, "Converting the PDFs of policies") for k in range(5)]
    finally:
        offload.shutdown_corpus_pool()
    assert [d.doc_id for d in pooled.documents] == ["notes.md", "p0.pdf", "p2.pdf", "sub/p1.pdf"]
    assert pooled.documents == serial.documents
    assert [p.one_line() for p in pooled.problems] == [p.one_line() for p in serial.problems]
    assert len(serial.problems) == 1 and "broken.pdf" in serial.problems[0].one_line()
    # The backend chosen here converts them there too (the pool's processes have the default).
    set_pdf_backend("plain")
    try:
        plain = load_paths([folder])
        pool = offload.corpus_pool()
        before = pool.calls
        try:
            plain_pooled = load_paths([folder])
            assert pool.calls - before == 4
        finally:
            offload.shutdown_corpus_pool()
    finally:
        set_pdf_backend("builtin")
    assert [d.kind for d in plain_pooled.documents] == ["markdown", "text", "text", "text"]
    assert plain_pooled.documents == plain.documents
    monkeypatch.setattr(document, "PARALLEL_PDFS_AT_LEAST", 5)

    def chosen_meanwhile(_name):  # the window's Settings may choose one while a folder loads
        raise AssertionError("the backend was set where the user chooses it")

    monkeypatch.setattr(pdf_convert, "set_pdf_backend", chosen_meanwhile)
    assert load_paths([folder]).documents == serial.documents  # under the rule: no pool
