"""A page's content streams read into pdfminer's objects without pdfminer's parser (issue 31).

Why: opening a PDF for the first time is the slowest thing a user waits for (a 288-page PDF
took 8.6 s on two cores), and most of it was pdfminer reading the content streams: its parser is a
state machine that takes one token per call through several Python calls each (`nexttoken`,
`nextobject`, a debug log call per token). Here one regular expression finds the tokens, and the
same objects come out: numbers, booleans, strings, names (pdfminer's interned `PSLiteral`),
operators (its interned `PSKeyword`), arrays and dictionaries, in the same order, including
pdfminer's own readings of odd input (an unknown escape in a string drops its character, a lone
`>` is nothing, a hex string's odd last digit is that digit's value). `FastInterpreter` runs the
operators as pdfminer's interpreter does, with each operator's method looked up once.

An inline image (`BI`...`ID` data `EI`) is read as pdfminer reads it: its data from three bytes
after the ID to the first "EI" and whitespace that its loop finds, its reads of the stream
starting again there (`_inline_data`). Where the reading could differ from pdfminer's, it gives
way to pdfminer's parser for the whole call (`content_objects` answers None): a string, hex
string, name or inline image that a content stream's end cuts (pdfminer joins it with the next
stream), an unbalanced array or dictionary, an octal escape over 255, an image inside an array,
one whose data ends at "~>" (ASCII85), an ID without its BI.

`page_layout` lays a page out with that interpreter and, when asked, makes each character into
pdfplumber's dict as it is drawn (`_CharDevice`), without pdfminer's `LTChar`.

Tests compare the two readings on generated streams and on every page of the benchmark PDFs, and
the page objects with pdfplumber's own (tests/core/test_pdf_content.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from pdfminer.pdffont import PDFUnicodeNotDefined
from pdfminer.pdfinterp import PDFPageInterpreter
from pdfminer.psparser import KWD, LIT, PSKeyword, literal_name
from pdfminer.utils import choplist
from pdfplumber.page import PDFPageAggregatorWithMarkedContent
from pdfplumber.utils.exceptions import PdfminerException

# One token, after the whitespace before it, from where the previous one ended. Groups: 1 a
# comment, 2 a name's characters up to an escape (`#`) or its end, 3 a number, 4 an operator or
# true/false, 5 a string without escapes or parentheses inside, 6 "<<" or ">>", 7 a hex string's
# digits and spaces (its end, when there is one, is the next token's start: pdfminer reads a hex
# string up to the first other character, and reads that character anew), 8 any other character:
# "(" a string read by `_string`, ">" nothing, NUL nothing, the rest an operator of that one
# character ("[", "]", "{", "}", "'", '"'...). None of them: only whitespace was left. `\s` is
# pdfminer's whitespace.
_TOKEN = re.compile(
    rb"\s*(?:"
    rb"(%[^\r\n]*)"
    rb"|/([^#/%\[\]()<>{}\s]*)"
    rb"|([-+0-9][0-9]*(?:\.[0-9]*)?|\.[0-9]*)"
    rb"|([A-Za-z][^#/%\[\]()<>{}\s]*)"
    rb"|\(([^()\\]*)\)"
    rb"|(<<|>>)"
    rb"|<([0-9A-Fa-f\s]*)"
    rb"|(.))?",
    re.DOTALL,
)
_NAME_REST = re.compile(rb"[^#/%\[\]()<>{}\s]*")
_HEX_DIGIT = re.compile(rb"[0-9A-Fa-f]")
_STRING_STOP = re.compile(rb"[()\\]")
_SPACES = re.compile(rb"\s")
_HEX_PAIR = re.compile(rb"[0-9a-fA-F]{2}|.", re.DOTALL)
_ESCAPES = {ord("b"): 8, ord("t"): 9, ord("n"): 10, ord("f"): 12, ord("r"): 13,
            ord("("): 40, ord(")"): 41, ord("\\"): 92}
_OCTAL = frozenset(b"01234567")

#: pdfminer reads a stream 4,096 bytes at a time (`PSBaseParser.BUFSIZ`); its one reading that
#: depends on where a read ends: a backslash then CR then LF in a string skips both when the LF is
#: in the same read, and keeps the LF when the CR ends the read.
_BUFSIZ = 4096

_ARRAY_BEGIN, _ARRAY_END = KWD(b"["), KWD(b"]")
_PROC_BEGIN, _PROC_END = KWD(b"{"), KWD(b"}")
_DICT_BEGIN, _DICT_END = KWD(b"<<"), KWD(b">>")
_BI, _ID, _EI = KWD(b"BI"), KWD(b"ID"), KWD(b"EI")
_TRUE, _FALSE = b"true", b"false"


class _GiveWay(Exception):
    """This reading could differ from pdfminer's: its parser reads the streams."""


def _name(data: bytes, start: int, end: int) -> tuple[Any, int]:
    """A name's value (pdfminer's `LIT`) from its characters at data[start:end] on, its escapes
    (`#` and up to two hex digits; `#` without one is dropped) decoded; and where it ends."""
    out = bytearray(data[start:end])
    i = end
    n = len(data)
    while i < n and data[i] == 0x23:  # '#'
        i += 1
        digits = i
        while i < n and i - digits < 2 and _HEX_DIGIT.match(data, i, i + 1):
            i += 1
        if i > digits:
            out.append(int(data[digits:i], 16))
        m = _NAME_REST.match(data, i)
        assert m is not None
        out += m.group()
        i = m.end()
    raw = bytes(out)
    try:
        name: str | bytes = raw.decode("utf-8")
    except UnicodeDecodeError:
        name = raw
    return LIT(name), i


def _string(data: bytes, i: int, base: int = 0) -> tuple[bytes, int]:
    """A literal string's bytes from just after its "(" at i, and where it ends (after its ")"),
    as pdfminer reads them; `_GiveWay` when the stream ends first. `base`: where pdfminer's
    4,096-byte reads of the stream began (0, or where it went back to after an inline image)."""
    out = bytearray()
    depth = 1
    n = len(data)
    find = _STRING_STOP.search
    while True:
        m = find(data, i)
        if m is None:
            raise _GiveWay
        j = m.start()
        out += data[i:j]
        c = data[j]
        if c == 0x5C:  # backslash
            k = j + 1
            if k >= n:
                raise _GiveWay
            e = data[k]
            if e in _OCTAL:
                q = k
                while q < n and q - k < 3 and data[q] in _OCTAL:
                    q += 1
                if q >= n:
                    raise _GiveWay
                code = int(data[k:q], 8)
                if code > 255:
                    raise _GiveWay  # pdfminer fails an assertion
                out.append(code)
                i = q
            elif e in _ESCAPES:
                out.append(_ESCAPES[e])
                i = k + 1
            elif e == 0x0D and k + 1 < n and data[k + 1] == 0x0A and (k - base) % _BUFSIZ != _BUFSIZ - 1:
                i = k + 2  # a line continuation (CR LF)
            else:
                i = k + 1  # the character after the backslash is dropped (pdfminer's reading)
            continue
        if c == 0x28:  # (
            depth += 1
            out.append(c)
        else:  # )
            depth -= 1
            if depth == 0:
                return bytes(out), j + 1
            out.append(c)
        i = j + 1


def _hex(digits: bytes) -> bytes:
    """A hex string's bytes from its digits and spaces: pairs of digits, and a last odd digit
    as its own value (pdfminer's reading)."""
    digits = _SPACES.sub(b"", digits)
    if len(digits) % 2 == 0:
        return bytes.fromhex(digits.decode("ascii"))
    return _HEX_PAIR.sub(lambda m: bytes((int(m.group(0), 16),)), digits)


class _InlineData:
    """An inline image's data, read at its ID (`_inline_data`): a token of its own."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


def _inline_data(data: bytes, start: int) -> tuple[bytes, int]:
    """An inline image's data from `start` (three bytes after its ID, where pdfminer's
    `get_inline_data` begins) and where reading goes on: pdfminer's loop, to "EI" and one
    whitespace byte, a match restarting at the byte after a mismatch; one line end before "EI"
    dropped. `_GiveWay` when the stream ends first (pdfminer reads on into the next)."""
    n = len(data)
    p = start
    i = 0
    while i <= 2:
        if i:
            if p >= n:
                raise _GiveWay
            c = data[p]
            p += 1
            i = i + 1 if (i >= 2 and c in _SPACE_BYTES) or (i < 2 and c == b"EI"[i]) else 0
        else:
            j = data.find(b"E", p)
            if j < 0:
                raise _GiveWay
            p, i = j + 1, 1
    raw = data[start:p][:-3]
    return _LINE_END.sub(b"", raw), p


_SPACE_BYTES = frozenset(b" \t\n\r\x0b\x0c")  # bytes.isspace
_LINE_END = re.compile(rb"(\x0d\x0a|[\x0d\x0a])$")


def _tokens(data: bytes, last: bool, out: list) -> None:
    """Append the tokens of one content stream to `out`; `last`: no stream follows it."""
    n = len(data)
    pos = 0
    match = _TOKEN.match
    append = out.append
    kwd = _KEYWORDS
    base = 0  # where pdfminer's reads of this stream began (`_string`)
    image = False  # a BI read, its ID not yet
    while pos < n:
        m = match(data, pos)
        assert m is not None  # every alternative is optional
        kind = m.lastindex
        end = m.end()
        if kind == 3:
            text = m.group(3)
            try:  # noqa: SIM105  (a number a token: a context manager costs a call each)
                append(float(text) if b"." in text else int(text))
            except ValueError:  # a sign or a point alone: no token
                pass
        elif kind == 4:
            text = m.group(4)
            k = kwd.get(text)
            if k is None:
                k = kwd[text] = True if text == _TRUE else False if text == _FALSE else KWD(text)
            if k is _BI:
                image = True
            elif k is _ID:
                if not image:
                    raise _GiveWay  # an ID without its BI: pdfminer reads on past it
                # pdfminer goes back to three bytes after the ID and reads the data from there;
                # its reads of the stream begin there afterwards.
                image = False
                base = m.start(4) + 3
                raw, end = _inline_data(data, base)
                append(_InlineData(raw))
                pos = end
                continue
            append(k)
        elif kind == 5:
            append(m.group(5))
        elif kind is not None and kind != 1:  # kind 1, a comment, and None, whitespace to the end: nothing
            end = _other_token(data, m, last, append, base)
        pos = end
    if image:
        raise _GiveWay  # a BI whose ID another stream holds


def _other_token(data: bytes, m: re.Match[bytes], last: bool, append: Callable[[Any], None], base: int) -> int:
    """`_tokens`' less frequent kinds of token (a name, "<<" or ">>", a hex string, a string with
    escapes or parentheses, one character), appended; where the token ends."""
    n = len(data)
    kind = m.lastindex
    end = m.end()
    if kind == 2:
        if end < n and data[end] == 0x23:
            lit, end = _name(data, m.start(2), end)
            if end >= n:  # pdfminer reads on into the next stream, or drops a name its escape ends
                raise _GiveWay
            append(lit)
            return end
        if end == m.start(2) and end == n and not last:
            raise _GiveWay  # "/" ending a stream: pdfminer reads on into the next
        text = m.group(2)
        try:
            append(LIT(text.decode("utf-8")))
        except UnicodeDecodeError:
            append(LIT(text))
    elif kind == 6:
        append(_DICT_BEGIN if m.group(6) == b"<<" else _DICT_END)
    elif kind == 7:
        if end >= n:
            raise _GiveWay  # a hex string (or a "<") that the stream ends
        append(_hex(m.group(7)))
    else:
        c = data[end - 1]
        if c == 0x28:  # (
            text, end = _string(data, end, base)
            append(text)
        elif c == 0x3E:  # a lone ">": nothing, unless it ends a stream (read on by pdfminer)
            if end >= n and not last:
                raise _GiveWay
        elif c != 0:
            append(KWD(bytes((c,))))
    return end


#: Operators and true/false by their bytes (pdfminer's interned keywords, looked up once).
_KEYWORDS: dict[bytes, Any] = {}


def content_objects(streams: Sequence[bytes]) -> list | None:
    """The objects pdfminer's `PDFContentParser` gives for these content streams (their decoded
    bytes, in order), in its order; None where this reading could differ from its (see the
    module's note: then pdfminer's parser is to read them)."""
    tokens: list = []
    try:
        for k, data in enumerate(streams):
            _tokens(data, k == len(streams) - 1, tokens)
    except _GiveWay:
        return None
    out: list = []
    stack: list[tuple[str, list]] = []  # (kind, the objects of the array or dictionary begun)
    cur = out
    for t in tokens:
        if t.__class__ is PSKeyword:
            if t is _ARRAY_BEGIN or t is _PROC_BEGIN or t is _DICT_BEGIN:
                stack.append(("a" if t is _ARRAY_BEGIN else "p" if t is _PROC_BEGIN else "d", cur))
                cur = []
                continue
            if t is _ARRAY_END or t is _PROC_END or t is _DICT_END:
                kind = "a" if t is _ARRAY_END else "p" if t is _PROC_END else "d"
                if not stack or stack[-1][0] != kind:
                    return None  # pdfminer's type mismatch: left to it
                objs = cur
                cur = stack.pop()[1]
                if kind == "d":
                    if len(objs) % 2:
                        return None  # pdfminer raises
                    cur.append({literal_name(k): v for k, v in choplist(2, objs) if v is not None})
                else:
                    cur.append(objs)
                continue
            if t is _BI:
                if stack:
                    return None  # an image inside an array: pdfminer's reading of it is its own
                stack.append(("inline", cur))
                cur = []
                continue
        elif t.__class__ is _InlineData:
            if not stack or stack[-1][0] != "inline" or len(cur) % 2:
                return None
            image = _inline_image(cur, t.data)
            if image is None:
                return None
            cur = stack.pop()[1]
            cur += (image, _EI)
            continue
        cur.append(t)
    if stack:
        return None  # an array or dictionary the streams leave open: its objects are lost there
    return out


def _inline_image(objs: list, data: bytes) -> Any:
    """pdfminer's stream of an inline image (its dictionary's keys read as names, its values
    resolved, the data), None where the data would end at "~>" rather than "EI" (ASCII85)."""
    from pdfminer.pdfinterp import LITERALS_ASCII85_DECODE
    from pdfminer.pdftypes import PDFStream, resolve1
    from pdfminer.psparser import PSLiteral

    d = {literal_name(k): resolve1(v) for k, v in choplist(2, objs)}
    found = d.get("F")
    if found is not None:
        if isinstance(found, PSLiteral):
            found = [found]
        if found[0] in LITERALS_ASCII85_DECODE:
            return None
    return PDFStream(d, data)


class FastInterpreter(PDFPageInterpreter):
    """pdfminer's page interpreter, its content streams read by `content_objects` (pdfminer's
    parser where that gives way) and each operator's method looked up once per interpreter
    class. The same calls with the same arguments in the same order as pdfminer's `execute`."""

    _methods: dict[PSKeyword, tuple[str, int] | None] = {}

    def execute(self, streams: Sequence[object]) -> None:
        from pdfminer import settings
        from pdfminer.pdftypes import stream_value

        if settings.STRICT or not hasattr(self, "stream_ids") or not hasattr(self, "parent_stream_ids"):
            return super().execute(streams)
        # The streams pdfminer's `execute` reads: indirect ones, not being read further up.
        valid = []
        for obj in streams:
            stream = stream_value(obj)
            if stream.objid is None or stream.objid in self.parent_stream_ids:
                return super().execute(streams)  # pdfminer's warnings and its own choice
            valid.append(stream)
        objects = content_objects([s.get_data() for s in valid])
        if objects is None:
            return super().execute(streams)
        self.stream_ids.clear()
        self.stream_ids.update(s.objid for s in valid if s.objid is not None)
        methods = type(self)._methods
        push = self.push
        for obj in objects:
            if obj.__class__ is not PSKeyword:
                push(obj)
                continue
            if obj in methods:
                found = methods[obj]
            else:
                found = methods[obj] = self._method_of(obj)
            if found is None:
                continue
            name, nargs = found
            func = getattr(self, name)
            if nargs:
                args = self.pop(nargs)
                if len(args) == nargs:
                    func(*args)
            else:
                func()
        return None

    def _method_of(self, keyword: PSKeyword) -> tuple[str, int] | None:
        name = str(keyword.name, "utf-8", "ignore")
        method = "do_" + name.replace("*", "_a").replace('"', "_w").replace("'", "_q")
        func = getattr(self, method, None)
        if func is None:
            return None
        return method, func.__code__.co_argcount - 1


#: What a fused character is made into: (matrix, fontname, adv, upright, x0, y0, x1, y1, width,
#: height, size, mcid, tag, ncs, graphicstate, text) -> the page object pdfplumber makes of it.
CharMaker = Callable[..., dict]


def page_layout(page, chars: CharMaker | None = None) -> tuple[Any, list[dict] | None]:
    """pdfplumber's `page.layout` (pdfminer's layout of the page, kept on the page as pdfplumber
    keeps it), its content read by `FastInterpreter`: the body of pdfplumber's property with the
    interpreter swapped; and None.

    With `chars`, each character is made by it at once into the dict pdfplumber would make of
    the `LTChar` pdfminer makes (`_CharDevice`: the same arithmetic as `LTChar`'s, without the
    object), and those dicts come second, in the order the characters were drawn (the layout's
    own order: a form's characters come where the form ends); the layout then holds no
    characters and is not kept on the page. Not with pdfminer's layout analysis (`laparams`), nor
    where a font's name is not text (the page is then laid out again the plain way, and None
    comes second)."""
    if hasattr(page, "_layout"):
        return page._layout, None
    if chars is not None and page.pdf.laparams is None:
        fused = _CharDevice(page.pdf.rsrcmgr, page.page_number, chars)
        _lay_out(page, fused)
        if fused.fused:
            return fused.get_result(), fused.made
    device = PDFPageAggregatorWithMarkedContent(page.pdf.rsrcmgr, pageno=page.page_number,
                                                laparams=page.pdf.laparams)
    _lay_out(page, device)
    page._layout = device.get_result()
    return page._layout, None


def _lay_out(page, device) -> None:
    """The page's content run through `FastInterpreter` into `device`; pdfminer's failures
    raised as pdfplumber raises them from its `layout`."""
    try:
        FastInterpreter(page.pdf.rsrcmgr, device).process_page(page.page_obj)
    except Exception as e:
        raise PdfminerException(e) from e


class _CharDevice(PDFPageAggregatorWithMarkedContent):
    """pdfplumber's device with `render_char` as pdfminer's `PDFLayoutAnalyzer.render_char` and
    `LTChar.__init__` compute it (the text, the advance, the box through the matrix, upright,
    size) and pdfplumber's marked-content tags, handed to `make` instead of kept as an `LTChar`
    (`made`, in order); where a font's name is not text, `fused` turns False and the page is to be
    laid out again."""

    def __init__(self, rsrcmgr, pageno: int, make: CharMaker) -> None:
        super().__init__(rsrcmgr, pageno=pageno, laparams=None)
        self.make = make
        self.made: list[dict] = []
        self.fused = True
        self.glyphs: dict[Any, dict[int, tuple]] = {}
        """Per font, per glyph: what the font says of it (`render_char`)."""

    def render_char(self, matrix, font, fontsize, scaling, rise, cid, ncs, graphicstate) -> float:
        fontname = font.fontname
        if not self.fused or type(fontname) is not str:
            self.fused = False
            return super().render_char(matrix, font, fontsize, scaling, rise, cid, ncs, graphicstate)
        # What the font says of a glyph depends on the font and the glyph alone: asked once
        # per page (five method calls a character fewer).
        glyphs = self.glyphs.get(font)
        if glyphs is None:
            glyphs = self.glyphs[font] = {}
        glyph = glyphs.get(cid)
        if glyph is None:
            try:
                text = font.to_unichr(cid)
                assert isinstance(text, str), str(type(text))
            except PDFUnicodeNotDefined:
                text = self.handle_undefined_char(font, cid)
            glyph = glyphs[cid] = (text, font.char_width(cid), font.char_disp(cid), font.is_vertical(),
                                   font.get_descent())
        text, textwidth, textdisp, vertical, font_descent = glyph
        adv = textwidth * fontsize * scaling
        if vertical:
            assert isinstance(textdisp, tuple)
            (vx, vy) = textdisp
            vx = fontsize * 0.5 if vx is None else vx * fontsize * 0.001
            vy = (1000 - vy) * fontsize * 0.001
            bbox = (-vx, vy + rise + adv, -vx + fontsize, vy + rise)
        else:
            descent = font_descent * fontsize
            bbox = (0, descent + rise, adv, descent + rise + fontsize)
        (a, b, c, d, e, f) = matrix
        upright = a * d * scaling > 0 and b * c <= 0
        # pdfminer's `apply_matrix_rect(matrix, bbox)` written out (five calls a character
        # fewer): its four corners through `apply_matrix_pt`, the same sums in the same order.
        (bx0, by0, bx1, by1) = bbox
        left1, bottom1 = a * bx0 + c * by0 + e, b * bx0 + d * by0 + f
        right1, bottom2 = a * bx1 + c * by0 + e, b * bx1 + d * by0 + f
        right2, top1 = a * bx1 + c * by1 + e, b * bx1 + d * by1 + f
        left2, top2 = a * bx0 + c * by1 + e, b * bx0 + d * by1 + f
        x0, y0 = min(left1, left2, right1, right2), min(bottom1, bottom2, top1, top2)
        x1, y1 = max(left1, left2, right1, right2), max(bottom1, bottom2, top1, top2)
        if x1 < x0:
            (x0, x1) = (x1, x0)
        if y1 < y0:
            (y0, y1) = (y1, y0)
        width, height = x1 - x0, y1 - y0
        self.made.append(self.make(matrix, fontname, adv, upright, x0, y0, x1, y1, width, height,
                                   width if vertical else height, self.cur_mcid, self.cur_tag, ncs,
                                   graphicstate, text))
        return adv
