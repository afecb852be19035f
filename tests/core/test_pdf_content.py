"""A page's content streams read by `pdf_content` as pdfminer's parser reads them (issue 31):
the same objects in the same order on every page of the benchmark PDFs and on generated
streams full of pdfminer's odd readings; where the two could differ, pdfminer's parser reads."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pdfminer.pdfinterp import PDFContentParser
from pdfminer.pdftypes import PDFStream, dict_value, resolve1, stream_value
from pdfminer.psparser import PSEOF, PSKeyword, PSLiteral

from inspector.core.documents import pdf_content, pdf_structure
from inspector.core.documents.pdf_content import content_objects
from tests.pdf_fixture import STRING_NAMED_FONT, VERTICAL_FONT, make_content_pdf

PDFS = sorted((Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "pdf").glob("*.pdf"))


def _pdfminer(streams: list[bytes]) -> list:
    """pdfminer's own reading: the objects its content parser gives, in order."""
    try:
        parser = PDFContentParser([PDFStream({}, data) for data in streams])
    except PSEOF:
        return []
    out = []
    while True:
        try:
            _pos, obj = parser.nextobject()
        except PSEOF:
            return out
        out.append(obj)


def _typed(x):
    """An object with the type of every value beside it (True is 1 and 1 is 1.0 to ==)."""
    if isinstance(x, list):
        return ["list", [_typed(v) for v in x]]
    if isinstance(x, dict):
        return ["dict", {k: _typed(v) for k, v in x.items()}]
    if isinstance(x, (PSLiteral, PSKeyword)):
        return [type(x).__name__, id(x)]  # both interned: the same name is the same object
    if isinstance(x, PDFStream):  # an inline image: each reading makes its own
        return ["stream", _typed(x.attrs), x.rawdata, x.objid]
    return [type(x).__name__, x]


def _same_reading(streams: list[bytes]) -> bool:
    """Whether `content_objects` reads the streams as pdfminer does, or gives way to it; when
    pdfminer's parser fails on them, `content_objects` must give way."""
    ours = content_objects(streams)
    try:
        theirs = _pdfminer(streams)
    except Exception:  # noqa: BLE001  (pdfminer's own failures: an assertion, a syntax error)
        return ours is None
    return ours is None or _typed(ours) == _typed(theirs)


def _page_streams(path: Path) -> list[list[bytes]]:
    """Each page's content streams, and each form XObject's, of a PDF."""
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdfparser import PDFParser

    out = []
    with path.open("rb") as f:
        doc = PDFDocument(PDFParser(f))
        for page in PDFPage.create_pages(doc):
            out.append([stream_value(s).get_data() for s in page.contents])
            xobjects = resolve1((page.resources or {}).get("XObject")) or {}
            for ref in dict_value(xobjects).values():
                x = stream_value(ref)
                if getattr(x.get("Subtype"), "name", None) == "Form":
                    out.append([x.get_data()])
    return out


@pytest.mark.parametrize("path", PDFS, ids=[p.stem for p in PDFS])
def test_every_page_of_a_benchmark_pdf_reads_as_pdfminer_reads_it(path):
    pages = _page_streams(path)
    assert pages
    for k, streams in enumerate(pages):
        ours = content_objects(streams)
        assert ours is not None, (path.name, k)  # nothing here that it leaves to pdfminer
        assert _typed(ours) == _typed(_pdfminer(streams)), (path.name, k)


#: Pieces of content streams: ordinary operators and operands, and pdfminer's odd readings (a
#: sign or a point alone, numbers run together, a name's escapes, a string's nesting, escapes,
#: octal codes and line continuations, hex strings with spaces and an odd digit, a lone ">",
#: dictionaries and arrays left open or closed twice, a comment, NUL, bytes beyond ASCII).
_PIECES = [
    b"BT", b"ET", b"q", b"Q", b"/F1", b"12", b"Tf", b"-3.5", b".5", b"5.", b"-", b"+", b".", b"1.2.3",
    b"--5", b"+.5", b"007", b"Td", b"Tj", b"TJ", b"'", b'"', b"T*", b"(Hello)", b"(a(b)c)", b"(\\(x\\))",
    b"(\\101\\1012\\7)", b"(\\777)", b"(\\q)", b"(\\\r\nz)", b"(\\\nz)", b"(\\\rz)", b"(\\", b"(", b")",
    b"()", b"<48656C6C6F>", b"<4 8 6>", b"<>", b"<", b">", b"<<", b">>", b"[", b"]", b"{", b"}",
    b"/A#41B", b"/#", b"/#4", b"/#4g", b"/", b"/Na\xc3\xa9", b"/\xff", b"%comment", b"true", b"false",
    b"null", b"\x00", b"\xff", b"BI", b"ID", b"EI", b"BDC", b"/P", b"<< /MCID 0 >>", b"[(a) -250 (b)]",
]
_GAPS = [b"", b" ", b"\n", b"\r\n", b"\t", b"\r", b"\x0c"]


@st.composite
def _streams(draw) -> list[bytes]:
    parts = draw(st.lists(st.tuples(st.sampled_from(_PIECES) | st.binary(max_size=3), st.sampled_from(_GAPS)),
                          max_size=30))
    data = b"".join(p + g for p, g in parts)
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=2)))
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


@given(_streams())
def test_generated_streams_read_as_pdfminer_reads_them(streams):
    assert _same_reading(streams)


def test_ordinary_streams_are_read_here_not_left_to_pdfminer():
    streams = [b"BT /F1 12 Tf 72 720 Td (Hello \\(world\\)) Tj [(a) -250 <0041>] TJ ET\n",
               b"q 1 0 0 1 0 0 cm 0.5 g 10 10 100 50 re f Q /P << /MCID 3 >> BDC EMC"]
    ours = content_objects(streams)
    assert ours is not None and _typed(ours) == _typed(_pdfminer(streams))
    assert ours[7] == b"Hello (world)" and ours[9] == [b"a", -250, b"\x00A"]


@pytest.mark.parametrize("streams", [
    [b"BI /W 1 /H 1 /F /A85 ID 8;~> EI"],  # an inline image whose data ends at "~>"
    [b"BI /W 1 /H 1 ID \xff", b"EI Q"],  # an inline image the first stream ends
    [b"[ BI /W 1 /H 1 ID \xff EI ]"],  # an inline image inside an array
    [b"q ID (x) Tj"],  # an ID without its BI
    [b"(open string", b" closed) Tj"],  # a string the first stream ends
    [b"BT /", b"F1 12 Tf"],  # a name the first stream ends before its first character
    [b"<0041", b"> Tj"],  # a hex string the first stream ends
    [b"/A#41"],  # a name whose escape ends the last stream: pdfminer drops it
    [b"[1 2"],  # an array left open
    [b"1 2 ]"],  # an array closed that was never begun
    [b"<< /A >>"],  # a dictionary with a key and no value
    [b"(\\777) Tj"],  # an octal code over 255: pdfminer fails an assertion
])
def test_where_the_readings_could_differ_pdfminer_reads(streams):
    assert content_objects(streams) is None
    assert _same_reading(streams)


@pytest.mark.parametrize("stream", [
    b"q 10 0 0 10 0 0 cm BI /W 2 /H 1 /BPC 8 /CS /G ID \x00\xff EI Q",
    b"BI /W 1 /H 1 /BPC 8 /CS /RGB /F /AHx ID 0a0b0c> EI BT (after) Tj ET",
    b"BI /W 4 /H 1 /BPC 8 /CS /G ID EEI E\x00EIx EI\r\nEI\n(s) Tj",  # "EI" inside the data
    b"BI /IM true /W 8 /H 1 ID \x0a\r\nEI\n",  # one line end before EI dropped, not two
    # pdfminer's reads start again three bytes after the ID: the CR of this string's line
    # continuation ends one of them (it keeps the LF), which it would not counted from 0
    b"BI /W 1 /H 1 ID X" + b" " * 4088 + b"EI (a\\\r\nb) Tj",
])
def test_an_inline_image_reads_as_pdfminer_reads_it(stream):
    ours = content_objects([stream])
    assert ours is not None and _typed(ours) == _typed(_pdfminer([stream]))
    assert any(isinstance(o, PDFStream) for o in ours)


def test_a_line_continuation_cut_by_pdfminers_read_keeps_its_line_feed():
    # pdfminer reads 4,096 bytes at a time: a backslash, CR, LF in a string skips CR and LF when
    # both are in one read, and keeps the LF when the CR ends the read. Read as it reads.
    for at in (4093, 4094, 4095, 4096):
        data = b" " * (at - 2) + b"(\\\r\nx) Tj (y\\\r\nz) Tj"
        ours = content_objects([data])
        assert ours is not None and _typed(ours) == _typed(_pdfminer([data])), at
    assert content_objects([b" " * 4093 + b"(\\\r\nx)"]) == [b"\nx"]
    assert content_objects([b" " * 4092 + b"(\\\r\nx)"]) == [b"x"]


def test_a_page_reads_the_same_through_either_interpreter():
    # The page's objects (characters, rules, boxes) from the fast interpreter equal pdfplumber's
    # own, on a page whose text runs across its content streams, with a form of every odd
    # reading, and on one with an inline image (read by pdfminer's parser).
    text = (b"BT /F1 12 Tf 72 720 Td (Hello \\(world\\)) Tj 0 -14 Td [(Kern) -250 (ed)] TJ ET\n"
            # turned, skewed, backwards and leaning text: each corner of a glyph's box the extreme
            # one somewhere (the box is pdfminer's `apply_matrix_rect`, written out)
            b"BT /F1 9 Tf 0 1 -1 0 500 300 Tm (turned) Tj -1 0.3 0.2 -1 300 200 Tm (skewed) Tj "
            b"-1 0 -0.3 -1 300 250 Tm (back) Tj 1 0.3 0.2 1 100 150 Tm (lean) Tj ET\n"
            b"0.5 w 72 700 m 300 700 l S q 0.3 g 60 590 240 30 re f Q\n")
    image = b"q 10 0 0 10 300 300 cm BI /W 1 /H 1 /BPC 8 /CS /G ID \x80 EI Q BT /F1 9 Tf 1 1 Td (after) Tj ET"
    cases = [[text], [text[:40], text[40:90], text[90:150], text[150:]], [text + image]]
    for streams in cases:
        data = make_content_pdf(streams)
        mine, theirs = pdf_structure.open_plumber(data), pdf_structure.open_plumber(data)
        with mine, theirs:
            fast = pdf_structure.parse_objects_fast(mine.pages[0])
            slow = theirs.pages[0].parse_objects()
        assert sorted(fast) == sorted(slow) and "char" in fast, streams
        for kind in slow:
            assert [_comparable(o) for o in fast[kind]] == [_comparable(o) for o in slow[kind]], (kind, streams)
        assert "".join(c["text"] for c in fast["char"]).startswith("Hello (world)Kerned")


def _objects_both_ways(data: bytes, pages: int | None = None) -> list[tuple[dict, dict, bool]]:
    """Each page's objects (the first `pages` only, when given) by `parse_objects_fast` and by
    pdfplumber's own `parse_objects`, and whether the characters were made as they were drawn (no
    layout kept on the page)."""
    out = []
    mine, theirs = pdf_structure.open_plumber(data), pdf_structure.open_plumber(data)
    with mine, theirs:
        for k in range(len(mine.pages[:pages])):
            fast = pdf_structure.parse_objects_fast(mine.pages[k])
            out.append((fast, theirs.pages[k].parse_objects(), not hasattr(mine.pages[k], "_layout")))
    return out


def _assert_same_objects(fast: dict, slow: dict, where) -> None:
    assert sorted(fast) == sorted(slow), where
    for kind, theirs_of_kind in slow.items():
        assert [_comparable(o) for o in fast[kind]] == [_comparable(o) for o in theirs_of_kind], (kind, where)
    for mine, theirs in zip(fast.get("char", ()), slow.get("char", ()), strict=True):
        assert list(mine) == list(theirs), where  # the same keys in the same order


@pytest.mark.parametrize("path", PDFS, ids=[p.stem for p in PDFS])
def test_the_characters_made_as_drawn_are_pdfplumbers_own(path):
    # The characters made at once by the fused device (no LTChar) equal pdfplumber's own dicts,
    # key for key and in order, on the first pages of every benchmark PDF (fonts of every kind
    # they use: Type 1, TrueType, CID, subsets; right-to-left text; form XObjects).
    for k, (fast, slow, fused) in enumerate(_objects_both_ways(path.read_bytes(), pages=2)):
        assert fused, (path.name, k)
        _assert_same_objects(fast, slow, (path.name, k))


def test_a_vertical_font_and_a_font_named_by_a_string_read_as_pdfplumber_reads_them():
    # Writing downwards (Identity-V): the box from the font's vertical metrics, made as drawn. A
    # font whose name is a string (bytes to pdfminer): the page is laid out again the plain way,
    # and pdfplumber decodes the name.
    vertical = make_content_pdf([b"BT /F1 12 Tf 300 700 Td <000100020003> Tj ET"], VERTICAL_FONT)
    [(fast, slow, fused)] = _objects_both_ways(vertical)
    assert fused and len(fast["char"]) == 3
    _assert_same_objects(fast, slow, "vertical")
    odd = make_content_pdf([b"BT /F1 12 Tf 72 720 Td (Odd font) Tj ET"], STRING_NAMED_FONT)
    [(fast, slow, fused)] = _objects_both_ways(odd)
    assert not fused and fast["char"][0]["fontname"] == "Odd Name"
    _assert_same_objects(fast, slow, "string-named")


@pytest.mark.parametrize("path", PDFS[:3], ids=[p.stem for p in PDFS[:3]])
def test_characters_from_pdfminers_ltchars_are_pdfplumbers_own(path):
    # A page already laid out with pdfminer's LTChars (as after a font named by a string) has its
    # characters made from them by the same maker: pdfplumber's dicts, key for key and in order.
    data = path.read_bytes()
    mine, theirs = pdf_structure.open_plumber(data), pdf_structure.open_plumber(data)
    with mine, theirs:
        page = mine.pages[0]
        layout, fused = pdf_content.page_layout(page)
        assert fused is None and page._layout is layout
        _assert_same_objects(pdf_structure.parse_objects_fast(page), theirs.pages[0].parse_objects(), path.name)


def _comparable(obj):
    """A page object to compare across two opens of a PDF: streams and references by their object
    numbers (the objects themselves are each open's own), an inline image's stream (no number)
    by what it holds, its name (its stream's id) left out."""
    from pdfminer.pdftypes import PDFObjRef

    if isinstance(obj, dict):
        inline = obj.get("object_type") == "image" and getattr(obj.get("stream"), "objid", 0) is None
        return {k: _comparable(v) for k, v in obj.items() if not (inline and k == "name")}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_comparable(v) for v in obj)
    if isinstance(obj, PDFStream):
        if obj.objid is None:
            return ("inline stream", _comparable(obj.attrs), obj.rawdata)
        return ("stream", obj.objid)
    if isinstance(obj, PDFObjRef):
        return ("ref", obj.objid)
    return obj


def test_each_operator_is_looked_up_once(monkeypatch):
    calls = []
    real = pdf_content.FastInterpreter._method_of

    def counting(self, keyword):
        calls.append(keyword)
        return real(self, keyword)

    monkeypatch.setattr(pdf_content.FastInterpreter, "_methods", {})
    monkeypatch.setattr(pdf_content.FastInterpreter, "_method_of", counting)
    with pdf_structure.open_plumber(make_content_pdf([b"BT /F1 12 Tf (a) Tj (b) Tj (c) Tj ET"])) as pdf:
        pdf_structure.parse_objects_fast(pdf.pages[0])
    assert sorted(k.name for k in calls) == [b"BT", b"ET", b"Tf", b"Tj"]
