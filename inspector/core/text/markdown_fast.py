"""The Markdown structure from a compiled parser, identical to markdown-it-py's (issue 31).

markdown-it-py's block parse was half of a document's first chunking (~380 ms of CPU for 1 MB).
markdown-it-pyrs (markdown-it.rs, compiled) builds the same tree in ~75 ms, but it is a different
implementation and disagrees on a few constructs (found by the property test in
tests/core/test_structure_fast.py against the reference):
- a table as the lazy continuation of a block quote's paragraph, and other lazy lines of quotes
  (`"> q\\n| a | b |\\n|---|---|"`: markdown-it-py keeps the table in the quote);
- a table whose delimiter row has no pipe (`"|>x\\n---"`: a table to markdown-it-py, a setext
  heading to markdown-it.rs).

So the compiled parser reads the whole text, and markdown-it-py (the reference) re-reads only the
regions around the lines where such a construct could start (`_SUSPECT_RE`), each region cut at
clean boundaries: a line after a blank line that starts, in its first column, with a letter or `#`.
At such a line every block of both parsers is closed (a paragraph, table, quote or HTML block of
kinds 6-7 ends at a blank line; a list or indented code needs indentation to go on; a quote needs
`>`), except a fenced code block or an HTML block of kinds 1-5 still open: a region whose parse
leaves one open up to its end is grown to the next boundary. Blocks outside the regions come from
the compiled parse, blocks inside from the reference's parse of the region alone (shifted), so the
result is the reference's Structure wherever the two parsers agree on the rest.

`parse` returns None when markdown-it-pyrs is not installed: then markdown-it-py parses it all.
"""

from __future__ import annotations

import bisect
import re

import numpy as np

from inspector.core.runtime.slices import Utf8Map
from inspector.core.text.markdown_blocks import (
    Block,
    _front_matter_title,
    _parser,
    blocks_of_tokens,
    line_starts,
    rstrip_ends,
)

#: markdown-it.rs with its block rules only: inline parsing (emphasis, links...) builds nodes
#: nothing here reads (a heading's title is its raw inline text, as with markdown-it-py's rule off).
_BLOCK_RULES = ["blockquote", "code", "fence", "heading", "hr", "lheading", "list", "paragraph",
                "reference", "html_block", "table", "front_matter"]

_compiled = None


def _compiled_parser():
    global _compiled
    if _compiled is None:
        try:
            from markdown_it_pyrs import MarkdownIt
        except ImportError:
            _compiled = False
        else:
            _compiled = MarkdownIt("zero").enable_many(_BLOCK_RULES)
    return _compiled or None


#: Lines where the parsers may disagree: a `>` after nothing but indentation and list markers (a
#: block quote, maybe in a list item); the first line of a link reference definition; a
#: delimiter-like row (`|`, `-`, `:` and blanks) under a line
#: when one of the two has a pipe and the other not, or neither has one and the row a colon
#: ("a\n:-" is a table to markdown-it.rs, a paragraph to markdown-it-py). And front matter.
#: Also a line with white space other than blanks and line breaks (a form feed, a no-break space)
#: that holds a pipe or nothing else: the two parsers trim such lines differently in a table.
#: (Each expression starts with a line break, the text's first line is tried on its own: a literal
#: first character lets the regular-expression engine skip ahead, ~10x sooner than `^` at every
#: position.)
_QUOTE_RE = re.compile(r"\n[ \t\-+*0-9.)]*>")
_DELIMITER_RE = re.compile(r"\n[ \t]*[-:|][-:| \t]*(?=\n|\Z)")
#: The first line of what may be a link reference definition (after indentation and list or quote
#: markers): a label and a colon, or a "[" whose label may go on over the next line. The parsers
#: differ on some ("[a]:\n-" is a definition to markdown-it.rs, a heading "[a]:" to markdown-it-py),
#: and markdown-it.rs leaves no node where it reads one.
_DEFINITION_RE = re.compile(r"\n[ \t\-+*0-9.)>]*\[(?:[^\]\n]*\]:|[^\]\n]*(?=\n|\Z))")
#: Every character but " ", "\t" and "\n" that Python's `str.isspace` (a superset of Rust's
#: `char::is_whitespace`) takes for white space (tests/core/test_structure_fast.py checks the list).
ODD_SPACES = ("\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
              "\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def _suspect_offsets(text: str) -> list[int]:
    """Offsets in the lines where the parsers may disagree (`_QUOTE_RE` and the rules above), but
    for plain quotes and plain front matter (`_plain_quotes`, `_plain_front_matter`)."""
    out = _plain_quotes(text, [m.start() for m in _QUOTE_RE.finditer("\n" + text)])  # quote lines' starts
    out += [m.start() for m in _DEFINITION_RE.finditer("\n" + text)]  # where each such line starts
    if text.startswith("---") and not _plain_front_matter(text):
        out.append(0)  # front matter: its closing line is read differently ("---0" closes it to markdown-it.rs)
    for m in _DELIMITER_RE.finditer(text):
        prev = text.rfind("\n", 0, m.start()) + 1
        row = m.group()
        head_pipe = "|" in text[prev:m.start()]
        if head_pipe != ("|" in row) or (not head_pipe and ":" in row):
            out.append(prev)
    # Each character looked for on its own (a substring search, ~0.2 ms a megabyte): a character
    # class over the whole text took ~25 ms.
    present = [c for c in ODD_SPACES if c in text]
    if present:
        search = re.compile("[" + "".join(present) + "]").search
        odd = search(text)
        while odd is not None:
            a = text.rfind("\n", 0, odd.start()) + 1
            b = text.find("\n", odd.start())
            b = len(text) if b < 0 else b
            line = text[a:b]
            if "|" in line or line.isspace():
                out.append(a)
            odd = search(text, b)
    out.sort()
    return out


#: What a plain quote line's text may not begin with (after "> "): what may start another block
#: in the quote (a list, a heading, a fence, a table, HTML, indented code...) or be read otherwise.
_QUOTE_LEADS = frozenset(" \t-+*0123456789>#`~<_=:|\\[!")


def _plain_quote_line(line: str) -> bool:
    """A line of nothing but a paragraph's text in a quote: ">" alone, or "> " and text that opens
    no block, with no pipe (no table) and no white space but blanks."""
    if line == ">":
        return True
    return (len(line) > 2 and line[0] == ">" and line[1] == " " and line[2] not in _QUOTE_LEADS
            and "|" not in line and all(c == " " or not c.isspace() for c in line))


def _line_at(text: str, a: int) -> str:
    """The line that starts at offset `a` (without its line break)."""
    e = text.find("\n", a)
    return text[a:] if e < 0 else text[a:e]


def _plain_quotes(text: str, starts: list[int]) -> list[int]:
    """The quote lines (their starts, in order) that are not in a plain quote: a run of quote lines,
    each `_plain_quote_line`, with an empty line (or the text's edge) before and after. Such a
    quote has no lazy line (where the two parsers part: a table or paragraph line with no ">"
    going on with a quote) and nothing in it but paragraphs, which both read alike. Issue 31: the
    sample handbook's one quote sent its region to markdown-it-py, and the first paint imported
    markdown-it-py for it (~35 ms)."""
    out: list[int] = []
    k = 0
    while k < len(starts):
        run = [starts[k]]
        k += 1
        while k < len(starts) and text.find("\n", run[-1]) + 1 == starts[k]:  # the next line quotes too
            run.append(starts[k])
            k += 1
        a = run[0]
        end = text.find("\n", run[-1])  # the run's last line break (-1: the text's end)
        before = a in (0, 1) or text[a - 2] == "\n"
        after = end < 0 or end + 1 == len(text) or text[end + 1] == "\n"
        if not (before and after and all(_plain_quote_line(_line_at(text, s)) for s in run)):
            out.extend(run)
    return out


#: Lines of front matter looked at by `_plain_front_matter` at most.
FRONT_MATTER_LINES = 64


def _plain_front_matter(text: str) -> bool:
    """Front matter both parsers read alike: "---" alone on the first line, lines that each begin
    with an ASCII letter, then "---" alone (markdown-it-py's closing rules for "...", indented and
    longer marker lines, and markdown-it.rs's for "---" with text after it, never come into it)."""
    if not text.startswith("---\n"):
        return False
    a = 4
    for _ in range(FRONT_MATTER_LINES):
        line = _line_at(text, a)
        if line == "---":
            return True
        if not (line[:1].isascii() and line[:1].isalpha()) or a + len(line) >= len(text):
            return False
        a += len(line) + 1
    return False


#: One suspect line in this many lines or more: markdown-it-py parses the whole text (a text of
#: quotes was 15% slower with both parsers than with the reference alone).
DENSE_SUSPECTS = 20

_SIMPLE = {"code_block": "code", "html_block": "html", "hr": "hr"}  # a paragraph is made in `parse`'s loop
#: Blocks markdown-it-py leaves open at the end of a region it parses (which then grows). Not front
#: matter: markdown-it-py makes none without its closing line, so `_regions` grows a region that
#: may hold it on another rule (`_FM_CLOSE_RE`).
_OPEN_AT_END = ("fence", "html_block")


def parse(text: str):
    """(blocks, raw headings, front matter title) of `text`, as `structure.parse_markdown` makes
    them with markdown-it-py; None without markdown-it-pyrs."""
    md = _compiled_parser()
    if md is None or "\r" in text or "\0" in text:
        # Line breaks are "\n" only to markdown-it-py (the loader normalizes them); NUL becomes
        # U+FFFD (three bytes for one) in markdown-it.rs's source map.
        return None

    suspect = _suspect_offsets(text)
    ls = line_starts(text)
    if len(suspect) * DENSE_SUSPECTS > len(ls):
        return None  # mostly quotes (a mail thread): the reference would re-read most of it anyway
    try:
        root = md.tree(text)
    except UnicodeEncodeError:  # a lone surrogate (a text made in memory): no UTF-8 for markdown-it.rs
        return None
    nodes, offsets = _read_nodes(root)
    if nodes is None:
        return None
    first_line, end_line, span_starts, span_ends = _spans(text, ls, offsets)
    node_map = []  # index of each node's own map among all maps
    m = 0
    for _name, _node, nchild in nodes:
        node_map.append(m)
        m += 1 + nchild
    starts = [first_line[i] for i in node_map]  # first line of each node
    tables = [(first_line[node_map[k]], end_line[node_map[k]]) for k, node in enumerate(nodes) if node[0] == "table"]
    regions = _regions(text, ls, starts, suspect, _table_suspects(text, ls, tables))

    blocks: list[Block] = []
    headings_raw: list[tuple[int, str, int, int]] = []
    fm_title: str | None = None
    r = 0
    k = 0
    while k < len(nodes):
        if r < len(regions) and starts[k] >= regions[r][0]:
            s_line, e_line, tokens = regions[r]
            fm_title = blocks_of_tokens(tokens, text, ls, s_line, blocks, headings_raw) or fm_title
            while k < len(nodes) and starts[k] < e_line:
                k += 1
            r += 1
            continue
        name, node, nchild = nodes[k]
        i = node_map[k]
        k += 1
        if name == "paragraph":  # most blocks: no call, no attribute of the node read
            blocks.append(Block("paragraph", span_starts[i], span_ends[i]))
            continue
        block = _block(name, node, span_starts, span_ends, i, nchild)
        blocks.append(block)
        if block.kind == "heading":
            headings_raw.append((block.level, block.info, block.start, block.end))
        elif block.kind == "front_matter":
            fm_title = _front_matter_title(str(node.meta.get("content", "")))  # type: ignore[attr-defined]
    # A region may hold text after the compiled parse's last node (trailing suspect lines).
    while r < len(regions):
        fm_title = blocks_of_tokens(regions[r][2], text, ls, regions[r][0], blocks, headings_raw) or fm_title
        r += 1
    return blocks, headings_raw, fm_title


_KNOWN = frozenset(("paragraph", "heading", "lheading", "fence", "bullet_list", "ordered_list", "table",
                    "blockquote", "front_matter", *_SIMPLE))


def _read_nodes(root) -> tuple[list[tuple[str, object, int]] | None, list[int]]:
    """The top-level nodes as (name, node, number of child maps) and every source map needed, as
    byte offsets, in one pass (each attribute read builds new Python objects); None for the nodes
    when one is of a kind this conversion does not know (the reference then parses it all)."""
    nodes: list[tuple[str, object, int]] = []
    offsets: list[int] = []
    for node in root.children:
        name = node.name
        srcmap = node.srcmap
        if srcmap is None or name == "definition":  # a reference definition: no block to either parser
            continue
        if name not in _KNOWN:
            return None, offsets
        offsets += srcmap
        if name in ("bullet_list", "ordered_list"):
            maps = [it.srcmap for it in node.children]
        elif name == "table":
            maps = [row.srcmap for part in node.children for row in part.children]
        else:
            nodes.append((name, node, 0))
            continue
        if any(m is None for m in maps):
            return None, offsets
        for m in maps:
            offsets += m
        nodes.append((name, node, len(maps)))
    return nodes, offsets


def _spans(text: str, ls: list[int], offsets: list[int]):
    """First line of each (start, end) byte-offset pair, the line after its last, and the pairs'
    block spans as two lists (starts, ends).
    A map covers its lines whole (as markdown-it-py's line maps do): from the start of its first
    line to the start of the line after its last, trimmed at the end of white space (as
    `_rstrip_end`). Byte offsets go to characters and lines for all pairs at once."""
    byte_offsets = np.asarray(offsets, dtype=np.int64)
    # Through the continuation bytes, for the offsets only: a count at every byte (a 160 MB array
    # for 20 MB, filled afresh) took 0.4-0.75 s (issue 31).
    chars = Utf8Map(text).char_at(byte_offsets)
    ls_np = np.asarray(ls, dtype=np.int64)
    first = chars[0::2]
    last_char = np.maximum(chars[1::2] - 1, first)
    line_a = np.searchsorted(ls_np, first, side="right") - 1
    line_b = np.minimum(np.searchsorted(ls_np, last_char, side="right"), len(ls) - 1)
    starts = ls_np[line_a].tolist()
    ends = ls_np[line_b].tolist()
    rstrip_ends(text, starts, ends)
    return line_a.tolist(), line_b.tolist(), starts, ends


def _block(name: str, node, starts: list[int], ends: list[int], i: int, nchild: int) -> Block:
    """The Block of one top-level node (its map is the i-th, its children's the next `nchild`)."""
    a, b = starts[i], ends[i]
    if name in ("heading", "lheading"):
        children = node.children
        if len(children) == 1:
            title = children[0].meta.get("content", "").strip()
        else:
            title = "".join(c.meta.get("content", "") for c in children).strip()
        return Block("heading", a, b, node.meta["level"], (), title)
    if name in _SIMPLE:
        return Block(_SIMPLE[name], a, b)
    if name == "fence":
        return Block("code", a, b, info=str(node.meta.get("info", "")).strip())
    if name in ("bullet_list", "ordered_list"):
        marker = str(node.meta.get("marker", ""))
        items = tuple([Block("list_item", starts[c], ends[c], 1, (), marker) for c in range(i + 1, i + 1 + nchild)])
        return Block("list", a, b, children=items, info=marker)
    if name == "table":
        rows = tuple([Block("table_row", starts[c], ends[c], 0 if c == i + 1 else 1)
                      for c in range(i + 1, i + 1 + nchild)])
        return Block("table", a, b, children=rows)
    if name == "blockquote":
        return Block("blockquote", a, b, info=">")
    return Block("front_matter", a, b)


def _is_blank(text: str, a: int, b: int) -> bool:
    return not text[a:b].strip(" \t\n")


#: First characters of a table's body line (or of the line after the table) that may start
#: another block: the two parsers end a table at different such lines ("-" alone ends it to
#: markdown-it-py, not to markdown-it.rs), so such a table is read by the reference.
_BLOCK_STARTS = frozenset(" \t-+*0123456789>#`~<_=:")


def _table_suspects(text: str, ls: list[int], tables: list[tuple[int, int]]) -> list[int]:
    """The first line of each table (from the compiled parse: first line, line after its last)
    whose body, or the line after it, starts with a character of _BLOCK_STARTS."""
    nlines = len(ls) - 1
    out = []
    for a, b in tables:
        for line in range(a + 2, min(b + 1, nlines)):
            if ls[line] < len(text) and text[ls[line]] in _BLOCK_STARTS:
                out.append(a)
                break
    return out


#: Lines that may close front matter to markdown-it-py (a superset: dashes alone, or "...", with
#: white space around).
_FM_CLOSE_RE = re.compile(r"(?m)^[^\S\n]*(?:-+|\.\.\.)[^\S\n]*$")


def _regions(text: str, ls: list[int], starts: list[int], suspect: list[int],
             more: list[int]) -> list[tuple[int, int, list]]:
    """(first line, end line, markdown-it-py tokens) of each region the reference parses: around
    the suspect offsets (`_suspect_offsets`) and the lines `more`."""
    suspects = sorted([bisect.bisect_right(ls, a) - 1 for a in suspect] + more)
    if not suspects:
        return []
    nlines = len(ls) - 1
    # Clean boundaries: lines where the compiled parse starts a node, after a blank line, with a
    # letter or `#` in the first column (line 0 too: a region from there is the text's own start).
    bounds = [0]
    for line in starts:
        c = text[ls[line]]
        if line > bounds[-1] and c.isascii() and (c.isalpha() or c == "#") \
                and _is_blank(text, ls[line - 1], ls[line]):
            bounds.append(line)
    bounds.append(nlines)
    out: list[tuple[int, int, list]] = []
    parser = _parser()
    may_open = text.startswith("---")  # front matter, to markdown-it-py, if a line closes it
    for line in suspects:
        if out and line < out[-1][1]:
            continue
        i = bisect.bisect_right(bounds, line) - 1
        s = bounds[i]
        j = i + 1
        step = 1
        while True:
            e = bounds[j]
            tokens = parser.parse(text[ls[s]:ls[e]])
            count = e - s
            # A region from the text's start grows while its parse has no front matter and a line
            # that may close it lies beyond: markdown-it-py makes none where it finds no closing
            # line, so a region cut short of that line read the front matter as a rule and a
            # paragraph ("---\n--- x\n\ntitle: x\n---": found by hypothesis).
            fm_open = (may_open and s == 0 and e < nlines and not any(t.type == "front_matter" for t in tokens)
                       and _FM_CLOSE_RE.search(text, ls[e]) is not None)
            if e >= nlines or not (fm_open or any(t.level == 0 and t.type in _OPEN_AT_END and t.map is not None
                                                  and t.map[1] >= count for t in tokens)):
                break
            # Grown by a doubling number of boundaries: a block left open by many is parsed a
            # few times, not once per boundary.
            j = min(j + step, len(bounds) - 1)
            step *= 2
        out.append((s, e, tokens))
    return out
