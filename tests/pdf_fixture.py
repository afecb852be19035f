"""A minimal valid PDF writer for tests (pypdf reads PDFs but does not write text ones)."""

from __future__ import annotations


def _pdf_file(objs: list[bytes], root: int) -> bytes:
    """A PDF of these objects (numbered from 1, in order) with a correct cross-reference table
    (byte offsets of every object) and `root` as its catalog."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, root, xref)
    return bytes(out)


def make_pdf(pages: list[list[str]]) -> bytes:
    """A minimal valid PDF: one Helvetica text line per entry, one content stream per page,
    with a correct cross-reference table (byte offsets of every object)."""
    n = len(pages)
    pages_num = 2 + 2 * n
    objs: list[bytes] = [b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    for i, lines in enumerate(pages):
        ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"]
        for ln in lines:
            esc = ln.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(f"({esc}) Tj T*")
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1")
        objs.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        objs.append(b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
                    b"/Resources << /Font << /F1 1 0 R >> >> >>" % (pages_num, 2 + 2 * i))
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(n)).encode()
    objs.append(b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % n)
    objs.append(b"<< /Type /Catalog /Pages %d 0 R >>" % pages_num)
    return _pdf_file(objs, len(objs))


PDF_PAGES = [
    ["Parental leave policy", "Employees in Germany get fourteen weeks.", "The rest follows below."],
    ["Refunds are issued within 14 days.", "Receipts are required for every refund."],
    ["Travel is booked through the portal.", "Economy class is the default."],
]


#: Fonts `make_layout_pdf` can set text in: regular, bold, italic, monospace.
FONTS = {"R": "Helvetica", "B": "Helvetica-Bold", "I": "Helvetica-Oblique", "M": "Courier"}


def make_layout_pdf(pages: list[list[tuple]], outline: list[tuple[str, int]] | None = None) -> bytes:
    """A PDF with placed text and ruling lines, for layout tests. Each page is a list of
    ("text", x, top, size, font, string[, gray]) with font one of FONTS' keys, `top` measured from
    the top of a 612 x 792 page and gray its fill (0 black, 1 white; black when left out),
    ("up", x, bottom, size, font, string) for text turned to read bottom to top,
    ("rule", x0, top0, x1, top1) for a stroked line or ("fill", x0, top0, x1, top1, gray) for a
    filled box. `outline`: (title, page index) bookmarks."""
    n = len(pages)
    font_ids = {k: 1 + i for i, k in enumerate(FONTS)}
    objs: list[bytes] = [b"<< /Type /Font /Subtype /Type1 /BaseFont /%s /Encoding /WinAnsiEncoding >>" % v.encode()
                         for v in FONTS.values()]
    first_page = len(objs) + 1
    pages_num = len(objs) + 2 * n + 1
    res = b" ".join(b"/F%s %d 0 R" % (k.encode(), font_ids[k]) for k in FONTS)
    for i, items in enumerate(pages):
        ops = []
        for it in items:
            if it[0] == "text":
                _kind, x, top, size, font, s, *gray = it
                esc = s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
                op = f"BT /F{font} {size} Tf {x} {792 - top - size} Td ({esc}) Tj ET"
                ops.append(f"q {gray[0]} g {op} Q" if gray else op)
            elif it[0] == "fill":  # a filled box in a shade of gray (0 black, 1 white)
                _kind, x0, t0, x1, t1, gray = it
                ops.append(f"q {gray} g {x0} {792 - t1} {x1 - x0} {t1 - t0} re f Q")
            elif it[0] == "up":  # text turned 90 degrees, reading bottom to top from (x, bottom)
                _kind, x, bottom, size, font, s = it
                esc = s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
                ops.append(f"BT /F{font} {size} Tf 0 1 -1 0 {x} {792 - bottom} Tm ({esc}) Tj ET")
            else:
                _kind, x0, t0, x1, t1 = it
                ops.append(f"0.5 w {x0} {792 - t0} m {x1} {792 - t1} l S")
        stream = "\n".join(ops).encode("cp1252")  # WinAnsiEncoding: "•" is a byte there
        objs.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        objs.append(b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
                    b"/Resources << /Font << %s >> >> >>" % (pages_num, first_page + 2 * i, res))
    kids = " ".join(f"{first_page + 1 + 2 * i} 0 R" for i in range(n)).encode()
    objs.append(b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % n)
    catalog = b"<< /Type /Catalog /Pages %d 0 R" % pages_num
    if outline:
        root = len(objs) + 2  # after the catalog
        items = []
        for k, (title, page) in enumerate(outline):
            me = root + 1 + k
            links = b""
            if k > 0:
                links += b" /Prev %d 0 R" % (me - 1)
            if k < len(outline) - 1:
                links += b" /Next %d 0 R" % (me + 1)
            items.append(b"<< /Title (%s) /Parent %d 0 R /Dest [%d 0 R /XYZ 0 792 0]%s >>"
                         % (title.encode("latin-1"), root, first_page + 1 + 2 * page, links))
        catalog += b" /Outlines %d 0 R /PageMode /UseOutlines" % root
        objs.append(catalog + b" >>")
        objs.append(b"<< /Type /Outlines /First %d 0 R /Last %d 0 R /Count %d >>"
                    % (root + 1, root + len(outline), len(outline)))
        objs.extend(items)
        root_id = root - 1
    else:
        objs.append(catalog + b" >>")
        root_id = len(objs)
    return _pdf_file(objs, root_id)


def text_lines(x: float, top: float, lines: list[str], size: float = 10, font: str = "R",
               leading: float = 1.25) -> list[tuple]:
    """Lines of one paragraph as `make_layout_pdf` items."""
    return [("text", x, top + k * size * leading, size, font, ln) for k, ln in enumerate(lines)]


def grid(x0: float, top: float, widths: list[float], rows: list[list[str]], height: float = 18,
         size: float = 9) -> list[tuple]:
    """A table ruled on every side: cell texts and the lines around them."""
    items: list[tuple] = []
    xs = [x0]
    for w in widths:
        xs.append(xs[-1] + w)
    bottom = top + height * len(rows)
    for r, row in enumerate(rows):
        y = top + r * height
        items.append(("rule", xs[0], y, xs[-1], y))
        for c, cell in enumerate(row):
            items.append(("text", xs[c] + 3, y + (height - size) / 2, size, "R", cell))
    items.append(("rule", xs[0], bottom, xs[-1], bottom))
    for x in xs:
        items.append(("rule", x, top, x, bottom))
    return items


#: Fonts for `make_content_pdf`: a font whose name (in its descriptor) is a string, not a name,
#: and a vertical one (Identity-V, a CID font without a file: writing downwards).
STRING_NAMED_FONT = (b"<< /Type /Font /Subtype /Type1 /BaseFont /OddFont /Encoding /WinAnsiEncoding "
                     b"/FontDescriptor << /Type /FontDescriptor /FontName (Odd Name) /Flags 32 /Ascent 718 "
                     b"/Descent -207 /ItalicAngle 0 /StemV 88 /FontBBox [-166 -225 1000 931] >> >>")
VERTICAL_FONT = (b"<< /Type /Font /Subtype /Type0 /BaseFont /Vert /Encoding /Identity-V /DescendantFonts "
                 b"[<< /Type /Font /Subtype /CIDFontType0 /BaseFont /Vert /CIDSystemInfo << /Registry (Adobe) "
                 b"/Ordering (Identity) /Supplement 0 >> /DW 1000 /W2 [1 3 -800 500 880] /FontDescriptor "
                 b"<< /Type /FontDescriptor /FontName /Vert /Flags 4 /Ascent 880 /Descent -120 /ItalicAngle 0 "
                 b"/StemV 80 /FontBBox [0 -120 1000 880] >> >>] >>")


def make_content_pdf(streams: list[bytes], font: bytes | None = None) -> bytes:
    """A one-page PDF whose content is the given streams, in order (an array of them), with
    Helvetica as /F1 (or `font`, a font dictionary): for tests of how content streams are read."""
    objs: list[bytes] = [font or b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"]
    first = len(objs) + 1
    for data in streams:
        objs.append(b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream")
    page, pages = len(objs) + 1, len(objs) + 2
    contents = b" ".join(b"%d 0 R" % (first + i) for i in range(len(streams)))
    objs.append(b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents [%s] "
                b"/Resources << /Font << /F1 1 0 R >> >> >>" % (pages, contents))
    objs.append(b"<< /Type /Pages /Kids [%d 0 R] /Count 1 >>" % page)
    objs.append(b"<< /Type /Catalog /Pages %d 0 R >>" % pages)
    return _pdf_file(objs, len(objs))
