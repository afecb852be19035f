"""A Markdown text's headings, tables and front-matter title without a parse (issue 31).

`fixed_tokens`, `recursive` and the other strategies that cut without reading blocks need only
what `SpanContext` reads of the structure: the top-level headings (their lines and titles, for
heading paths and prefixes), the top-level tables' spans (the `split_table` flag) and the title.
The compiled parser builds the whole block tree for that (the handbook x11: ~80 ms, 45 of them
in markdown-it.rs); this scanner reads the lines once (~12 ms) and follows only what can hide or
make a heading or a table: paragraphs (a setext underline; a table, heading or other block
interrupting one), lists (by indentation and marker), fenced and indented code (a tab counted to
the next multiple of four columns), HTML blocks, block quotes (to the blank line or block after
them) and front matter, each as markdown-it-py's block rules read it.

It answers only where it is sure to agree with markdown-it-py, the reference
(`markdown_blocks.reference_parser`). At a construct it does not follow (a tab after a list
marker, an empty list item, a line that may go on lazily with a list item's paragraph or a quote
and then matters, front matter that is not plain, a link reference definition before a block)
`outline` returns None and the caller parses the text (`structure.outline_of`). A property test
(tests/core/test_outline.py: hypothesis over generated Markdown, and every corpus in
benchmarks/data) proves the headings, table spans and title equal the reference's wherever it
answers, and that it answers for the corpora.
"""

from __future__ import annotations

import re
from itertools import accumulate

from inspector.core.text.markdown_blocks import _front_matter_title, _rstrip_end
from inspector.core.text.markdown_fast import _plain_front_matter

#: (level, title, start, end) of each top-level heading, as `structure._markdown_parts` gives them.
RawHeading = tuple[int, str, int, int]

#: markdown-it-py's `mdTrim` characters (its MD_TRIM_CHARS; tests compare). All of them are white
#: space to Python's `str.strip` too, so a title trimmed by both is `str.strip`'s alone.
MD_TRIM = ("\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
           "\u2028\u2029\u202f\u205f\u3000")
_ORDERED_RE = re.compile(r"[0-9]{1,9}[.)](?=[ \t]|$)")
_HR_RE = re.compile(r"(?:\*[ \t]*){3,}$|(?:-[ \t]*){3,}$|(?:_[ \t]*){3,}$")
_UNDERLINE_RE = re.compile(r"(?:=+|-+)[ \t]*$")
_TABLE_DELIMITER_CELL_RE = re.compile(r"^:?-+:?$")
#: markdown-it-py's block names (HTML blocks of kind 6; tests compare with its own list).
BLOCK_NAMES = (
    "address article aside base basefont blockquote body caption center col colgroup dd details dialog dir div dl "
    "dt fieldset figcaption figure footer form frame frameset h1 h2 h3 h4 h5 h6 head header hr html iframe legend "
    "li link main menu menuitem nav noframes ol optgroup option p param search section summary table tbody td "
    "tfoot th thead title tr track ul").split()
# markdown-it-py's open and closing tags (common/html_re.py; tests compare).
_ATTR_VALUE = "(?:[^\"'=<>`\\x00-\\x20]+|'[^']*'|\"[^\"]*\")"
_ATTRIBUTE = "(?:\\s+[a-zA-Z_:][a-zA-Z0-9:._-]*(?:\\s*=\\s*" + _ATTR_VALUE + ")?)"
OPEN_CLOSE_TAG = ("^(?:<[A-Za-z][A-Za-z0-9\\-]*" + _ATTRIBUTE + "*\\s*\\/?>|<\\/[A-Za-z][A-Za-z0-9\\-]*\\s*>)")
#: markdown-it-py's HTML blocks (rules_block/html_block.py): (start, end, may interrupt a paragraph),
#: kinds 1 to 7.
HTML_SEQUENCES: tuple[tuple[re.Pattern[str], re.Pattern[str], bool], ...] = (
    (re.compile(r"^<(?a:(script|pre|style|textarea))(?=(\s|>|$))", re.IGNORECASE),
     re.compile(r"<\/(?a:(script|pre|style|textarea))>", re.IGNORECASE), True),
    (re.compile(r"^<!--"), re.compile(r"-->"), True),
    (re.compile(r"^<\?"), re.compile(r"\?>"), True),
    (re.compile(r"^<![A-Za-z]"), re.compile(r">"), True),
    (re.compile(r"^<!\[CDATA\["), re.compile(r"\]\]>"), True),
    (re.compile("^</?(?a:(" + "|".join(BLOCK_NAMES) + "))(?=(\\s|/?>|$))", re.IGNORECASE), re.compile(r"^$"), True),
    (re.compile(OPEN_CLOSE_TAG + "\\s*$"), re.compile(r"^$"), False),
)

#: First characters (after indentation) of a line that may begin a block other than a paragraph.
_BLOCK_CHARS = frozenset("#>-+*_=|<`~[0123456789")
#: Cells a table may autocomplete before markdown-it-py ends it (its MAX_AUTOCOMPLETED_CELLS).
_MAX_CELLS = 0x10000

# Scanner states.
_TOP, _PARA, _LIST, _LAZY = range(4)


class _Undecided(Exception):
    """A construct this scanner does not read: the caller parses the text."""


def outline(text: str) -> tuple[list[RawHeading], list[tuple[int, int]], str | None] | None:
    """(top-level headings, top-level tables' spans, the front matter's title) of a Markdown
    text, as markdown-it-py reads them; None where this scanner cannot be sure of that."""
    if "\r" in text or "\0" in text:
        return None
    try:
        return _Scan(text).run()
    except _Undecided:
        return None


def _indent(line: str) -> tuple[int, str]:
    """The column the line's text starts at (a tab goes on to the next multiple of four, as in
    markdown-it-py at the top level) and the rest of the line. A line indented with a tab is
    indented four columns or more: code, or a paragraph's or list item's continuation, never a
    block start this scanner reads."""
    rest = line.lstrip(" ")
    if rest[:1] != "\t":
        return len(line) - len(rest), rest
    rest = line.lstrip(" \t")
    col = 0
    for ch in line[:len(line) - len(rest)]:
        col = col + 1 if ch == " " else col + 4 - col % 4
    return col, rest


def _is_blank(line: str) -> bool:
    return not line.strip(" \t")


def _escaped_split(s: str) -> list[str]:
    """markdown-it-py's `escapedSplit`: cells split at pipes not escaped by a backslash."""
    out: list[str] = []
    current = ""
    last = 0
    escaped = False
    for pos, ch in enumerate(s):
        if ch == "|":
            if not escaped:
                out.append(current + s[last:pos])
                current = ""
                last = pos + 1
            else:
                current += s[last:pos - 1]
                last = pos
        escaped = ch == "\\"
    out.append(current + s[last:])
    return out


def _cells(row: str) -> int:
    """Cells of a table row (trimmed, as markdown-it-py counts them)."""
    cols = _escaped_split(row.strip(MD_TRIM))
    if cols and cols[0] == "":
        cols.pop(0)
    if cols and cols[-1] == "":
        cols.pop()
    return len(cols)


def _table_columns(head: str, delim: str) -> int:
    """The columns of a table whose header line is `head` and delimiter line `delim` (0: the two
    lines start no table), as markdown-it-py's table rule decides at the top level."""
    if not delim or delim[0] not in "|-: \t" or "|" not in head:  # most lines: no copy made
        return 0
    d_indent = len(delim) - len(delim.lstrip(" \t"))
    d = delim[d_indent:]
    if d_indent >= 4 or len(d) < 2 or d[0] not in "|-:" or (d[1] not in "|-: \t") or (d[0] == "-" and d[1] in " \t"):
        return 0
    if d.strip("|-: \t"):
        return 0
    if "\t" in delim[:d_indent] or "\t" in head[:len(head) - len(head.lstrip(" \t"))]:
        return 0  # indented four columns or more: code, not a table's line
    aligns = 0
    columns = d.split("|")
    for i, col in enumerate(columns):
        t = col.strip(" \t")
        if not t:
            if i == 0 or i == len(columns) - 1:
                continue
            return 0
        if not _TABLE_DELIMITER_CELL_RE.search(t):
            return 0
        aligns += 1
    h_indent = len(head) - len(head.lstrip(" \t"))
    if h_indent >= 4:
        return 0
    if "|" not in head[h_indent:].strip(MD_TRIM):
        return 0
    count = _cells(head[h_indent:])
    return count if count and count == aligns else 0


def _atx(rest: str) -> tuple[int, str] | None:
    """(level, title) of an ATX heading line (`rest`: after its indentation), else None."""
    level = 0
    while level < len(rest) and rest[level] == "#":
        level += 1
    if not 1 <= level <= 6 or (level < len(rest) and rest[level] not in " \t"):
        return None
    end = len(rest.rstrip(" \t"))
    tmp = end
    while tmp > level and rest[tmp - 1] == "#":
        tmp -= 1
    if tmp > level and rest[tmp - 1] in " \t":
        end = tmp
    return level, rest[level:end].strip()


def _list_marker(rest: str) -> tuple[int, bool, bool] | None:
    """(width of the marker, ordered, ordered and numbered 1) of a list item's first line, else
    None. An item with nothing after its marker is not decided (it may end at a blank line)."""
    c = rest[:1]
    if c and c in "-+*":
        if len(rest) > 1 and rest[1] not in " \t":
            return None
        width, ordered, one = 1, False, False
    elif c.isdigit():
        m = _ORDERED_RE.match(rest)
        if m is None:
            return None
        width, ordered, one = m.end(), True, int(rest[:m.end() - 1]) == 1
    else:
        return None
    after = rest[width:]
    if not after.strip(" \t"):
        raise _Undecided  # an empty item
    if after[:1] == "\t" or "\t" in after[:len(after) - len(after.lstrip(" \t"))]:
        raise _Undecided  # a tab after the marker: tab stops
    return width, ordered, one


def _content_offset(indent: int, width: int, rest: str) -> int:
    """The column a list item's content starts at (markdown-it-py: 1 to 4 blanks after the
    marker; more and the content is indented code, one blank after the marker)."""
    spaces = len(rest) - width - len(rest[width:].lstrip(" "))
    return indent + width + (spaces if 1 <= spaces <= 4 else 1)


def _html_kind(rest: str, in_paragraph: bool) -> tuple[re.Pattern[str], re.Pattern[str], bool] | None:
    """markdown-it-py's HTML block sequence a line (after its indentation) starts, else None; in a
    paragraph only those that may interrupt it."""
    if rest[:1] != "<":
        return None
    for seq in HTML_SEQUENCES:
        if seq[0].search(rest):
            return seq if seq[2] or not in_paragraph else None
    return None


def _block_start(rest: str) -> bool:
    """Whether a line (after its indentation) may start a block other than a paragraph, or end
    one as a setext underline: what a line must not be where two readings of it are kept."""
    c = rest[:1]
    if c not in _BLOCK_CHARS or c in "[|":
        return False
    return bool(_UNDERLINE_RE.match(rest) or _html_kind(rest, False) or _ends_table(rest))


def _ends_table(rest: str) -> bool:
    """Whether a line (after at most three blanks) ends a table before it: markdown-it-py's
    terminators of a table (a fence, a quote, a rule, a list item, an HTML block of kinds 1-6, an
    ATX heading)."""
    c = rest[:1]
    if c not in _BLOCK_CHARS or c in "[|=":
        return False
    if c == ">" or _HR_RE.match(rest) or _fence(rest) or _html_kind(rest, True):
        return True
    if c == "#":
        return _atx(rest) is not None
    if c in "-+*":
        return len(rest) == 1 or rest[1] in " \t"
    return _ORDERED_RE.match(rest) is not None


def _fence(rest: str) -> tuple[str, int] | None:
    """(marker, length) of a fence's opening line, else None (markdown-it-py's fence rule: three
    or more backticks or tildes, and no backtick in a backtick fence's info)."""
    c = rest[:1]
    if c not in ("`", "~"):
        return None
    n = len(rest) - len(rest.lstrip(c))
    if n < 3 or (c == "`" and "`" in rest[n:]):
        return None
    return c, n


class _Scan:
    def __init__(self, text: str) -> None:
        self.text = text
        lines = text.split("\n")
        if text.endswith("\n"):
            lines.pop()
        self.lines = lines if text else []
        # Line k starts at cum[k] + k (the line breaks before it): a sum made in C, not a search.
        self.cum = list(accumulate(map(len, self.lines), initial=0))
        self.headings: list[RawHeading] = []
        self.tables: list[tuple[int, int]] = []
        self.state = _TOP
        self.after_blank = True  # the line before is blank (or the text's start)
        self.offset = 0  # in a list: its current item's content column
        self.marker = ""  # in a list: its marker's character ("-", "+", "*"; "." or ")" after a number)
        self.para_start = 0  # in a paragraph: its first line
        self.para_ref = False  # in a paragraph: it begins with "[" (maybe a link reference definition)

    def _span(self, first: int, after: int) -> tuple[int, int]:
        """The span of lines [first, after) as the structure gives a block: from the first line's
        start to the last non-white-space character."""
        n = len(self.text)
        a = min(self.cum[first] + first, n)
        return a, _rstrip_end(self.text, a, min(self.cum[after] + after, n))

    def _heading(self, level: int, title: str, first: int, after: int) -> None:
        a, b = self._span(first, after)
        self.headings.append((level, title, a, b))

    def _table(self, i: int, columns: int) -> int:
        """Record the table whose header is line i; the line after it."""
        lines = self.lines
        n = len(lines)
        j = i + 2
        while j < n:
            line = lines[j]
            if not line.strip(MD_TRIM):
                break
            indent, rest = _indent(line)
            if indent >= 4 or _ends_table(rest):
                break
            j += 1
        if (j - i - 2) * columns > _MAX_CELLS:
            raise _Undecided
        self.tables.append(self._span(i, j))
        return j

    def _table_at(self, i: int) -> int:
        """The columns of a table starting at line i (0: none)."""
        if i + 1 >= len(self.lines) or "|" not in self.lines[i]:
            return 0
        return _table_columns(self.lines[i], self.lines[i + 1])

    def _code_end(self, i: int) -> int:
        """The line after the indented code block starting at line i."""
        lines = self.lines
        j = i + 1
        while j < len(lines) and (_is_blank(lines[j]) or _indent(lines[j])[0] >= 4):
            j += 1
        return j

    def _fence_end(self, i: int, marker: str, length: int) -> int:
        """The line after the fenced block opened at line i (its closing line, or the text's end)."""
        lines = self.lines
        j = i + 1
        while j < len(lines):
            line = lines[j]
            rest = line.lstrip(" ")
            if len(line) - len(rest) < 4 and rest.startswith(marker * length) \
                    and not rest.lstrip(marker).strip(" \t"):
                return j + 1
            j += 1
        return j

    def _quote_end(self, i: int) -> int:
        """The line after a block quote starting at line i: its lines all begin with ">" (after at
        most three blanks), and a blank line, the text's end or a line that starts another block
        (markdown-it-py's terminators) follows. Any other line may go on with the quote lazily: not
        decided."""
        lines = self.lines
        j = i + 1
        while j < len(lines):
            indent, rest = _indent(lines[j])
            if indent >= 4 or rest[:1] != ">":
                break
            j += 1
        if j < len(lines) and not _is_blank(lines[j]):
            indent, rest = _indent(lines[j])
            if indent >= 4 or not _ends_table(rest):  # the quote's terminators are the table's
                raise _Undecided
        return j

    def _html_end(self, i: int, rest: str, seq: tuple[re.Pattern[str], re.Pattern[str], bool]) -> int:
        """The line after the HTML block of kind `seq` starting at line i (`rest`: after its
        indentation), as markdown-it-py's html_block rule ends it at the top level."""
        if seq[1].search(rest):
            return i + 1
        lines = self.lines
        end = seq[1]
        j = i + 1
        while j < len(lines):
            text = lines[j].lstrip(" \t")
            if end.search(text):
                return j + 1 if text else j
            j += 1
        return j

    def _front_matter(self) -> tuple[int, str | None]:
        """The line after the front matter (0: none) and its title."""
        if not self.text.startswith("---"):
            return 0, None
        if not _plain_front_matter(self.text):
            raise _Undecided
        j = 1
        while self.lines[j] != "---":
            j += 1
        return j + 1, _front_matter_title("\n".join(self.lines[1:j]))

    def run(self) -> tuple[list[RawHeading], list[tuple[int, int]], str | None]:
        lines = self.lines
        n = len(lines)
        i, fm_title = self._front_matter()
        self.state = _TOP
        self.after_blank = True
        while i < n:
            line = lines[i]
            first = line[:1]
            # Most lines start with neither a blank nor a tab: nothing of them copied to find out.
            if not first or (first in " \t" and _is_blank(line)):
                if self.state == _PARA:
                    self.state = _TOP
                self.after_blank = True
                i += 1
                continue
            indent, rest = _indent(line) if first in " \t" else (0, line)
            state = self.state
            if state == _PARA:
                # A paragraph's next line, the commonest line of all, decided first: indented, or
                # text that starts no table (no pipe, or a next line that is no delimiter row).
                if indent >= 4:
                    i += 1
                    continue
                if rest[0] not in _BLOCK_CHARS:
                    after = lines[i + 1][:1] if i + 1 < n else ""
                    if "|" not in line or not after or after not in "|-: \t":
                        i += 1
                        continue
                nxt = self._in_paragraph(i, indent, rest)
            elif state == _LIST:
                nxt = self._in_list(i, indent, rest)
            elif state == _LAZY:
                nxt = self._in_lazy(i, indent, rest)
            else:
                nxt = None
            if nxt is None:  # the line starts a block of its own
                self.state = _TOP
                nxt = self._block(i, indent, rest)
            self.after_blank = False
            i = nxt
        return self.headings, self.tables, fm_title

    # Each reads line i (`indent` blanks, then `rest`) in its state and returns the next line to
    # read, with `self.state` set; None: the line starts a block (`_block`).

    def _in_paragraph(self, i: int, indent: int, rest: str) -> int | None:
        """A line after a top-level paragraph's line: markdown-it-py's lheading, then the
        paragraph's terminators (a table, fence, quote, rule, list, HTML block of kinds 1-6, ATX
        heading)."""
        if self.para_ref:
            # After a link reference definition a new block starts where a paragraph goes on (an
            # HTML block of kind 7, an ordered list from 2, a setext heading's text cut short);
            # another "[" line (a definition, or text) starts none of them.
            if rest[0] == "[" and "|" not in rest:
                return i + 1
            raise _Undecided
        if rest[0] not in _BLOCK_CHARS:  # a line of text with a pipe: only a table may start here
            return None if self._table_at(i) else i + 1
        if _UNDERLINE_RE.match(rest):
            title = "\n".join(self.lines[self.para_start:i]).strip()
            self._heading(1 if rest[0] == "=" else 2, title, self.para_start, i + 1)
            self.state = _TOP
            return i + 1
        if self._table_at(i):  # the first of the terminators: "2) a | b" over a delimiter row is a table
            return None
        marker = _list_marker(rest) if rest[0] in "-+*0123456789" and not _HR_RE.match(rest) else None
        if marker and marker[1] and not marker[2]:
            return i + 1  # an ordered item not numbered 1 does not interrupt a paragraph
        if marker or _ends_table(rest) or _html_kind(rest, True):
            return None
        return i + 1

    def _in_list(self, i: int, indent: int, rest: str) -> int | None:
        """A line after a top-level list's line (`self.offset`: its current item's content
        column)."""
        if indent >= self.offset:
            return i + 1  # the item's own content, whatever it is
        if indent >= 4:
            raise _Undecided
        marker = _list_marker(rest) if not _HR_RE.match(rest) else None
        if marker:
            if rest[marker[0] - 1] != self.marker:
                return None  # another list: a block of its own, a table first ("- a | b" over a delimiter row)
            self.offset = _content_offset(indent, marker[0], rest)
            return i + 1
        if self.after_blank:
            return None  # the list has ended
        # No blank line before: a heading, rule, fence or quote ends the list; a line of text
        # goes on with the item's paragraph lazily, or starts one after the list.
        if (_UNDERLINE_RE.match(rest) and not _HR_RE.match(rest)) or _html_kind(rest, False) or self._table_at(i):
            raise _Undecided
        if _HR_RE.match(rest) or _fence(rest) or _atx(rest) or rest[0] == ">":
            return None
        self.state = _LAZY
        return i + 1

    def _in_lazy(self, i: int, indent: int, rest: str) -> int | None:
        """A line after one that is a list item's paragraph going on lazily, or a top-level
        paragraph after the list: only what both readings agree on is decided."""
        if self._table_at(i):  # after the list ("- a | b": its next item) or in a paragraph after it
            raise _Undecided
        if self.after_blank:
            if indent:
                raise _Undecided
            return None
        if indent == 0 and ((_HR_RE.match(rest) and rest[0] != "-") or _fence(rest) or _atx(rest)):
            return None
        if not _block_start(rest):
            return i + 1
        marker = None if indent or _HR_RE.match(rest) else _list_marker(rest)
        if marker is None or (marker[1] and not marker[2]):
            raise _Undecided
        return None

    def _block(self, i: int, indent: int, rest: str) -> int:
        """Line i starts a top-level block: markdown-it-py's rules in their order (table, code,
        fence, quote, rule, list, reference, HTML block, heading, paragraph), each tried only on
        the lines whose first character it may start with."""
        c = rest[0]
        if "|" in rest and indent < 4:
            columns = self._table_at(i)
            if columns:
                return self._table(i, columns)
        if c in _BLOCK_CHARS or indent >= 4:
            if indent >= 4:
                return self._code_end(i)
            if c == "#":
                atx = _atx(rest)
                if atx:
                    self._heading(*atx, i, i + 1)
                    return i + 1
            elif c in "`~":
                fence = _fence(rest)
                if fence:
                    return self._fence_end(i, *fence)
            elif c == ">":
                return self._quote_end(i)
            elif c == "<":
                seq = _html_kind(rest, False)
                if seq:
                    return self._html_end(i, rest, seq)
            elif not (c in "-*_" and _HR_RE.match(rest)):
                marker = _list_marker(rest) if c in "-+*0123456789" else None
                if marker:
                    self.offset = _content_offset(indent, marker[0], rest)
                    self.marker = rest[marker[0] - 1]
                    self.state = _LIST
                    return i + 1
            else:
                return i + 1  # a rule
        self.state = _PARA
        self.para_start = i
        # Maybe a link reference definition ("[label]:", the label perhaps going on over lines).
        self.para_ref = rest[0] == "[" and ("]:" in rest or "]" not in rest)
        return i + 1
