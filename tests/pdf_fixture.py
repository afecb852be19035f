"""A minimal valid PDF writer for tests (pypdf reads PDFs but does not write text ones)."""

from __future__ import annotations


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
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, len(objs), xref)
    return bytes(out)


PDF_PAGES = [
    ["Parental leave policy", "Employees in Germany get fourteen weeks.", "The rest follows below."],
    ["Refunds are issued within 14 days.", "Receipts are required for every refund."],
    ["Travel is booked through the portal.", "Economy class is the default."],
]
