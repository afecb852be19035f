"""The reference reading of Markdown blocks: markdown-it-py's block tokens turned into `Block`
spans of the text (a `line_starts` table turns its line maps into code-point offsets once), with
the headings and the front matter's title. `structure.parse_markdown` reads a document with it,
and `markdown_fast` uses it for the regions the compiled parser cannot be trusted with.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BLOCK_KINDS = ("heading", "paragraph", "list", "list_item", "table", "table_row", "code",
               "blockquote", "front_matter", "html", "hr")


@dataclass(frozen=True, slots=True)
class Block:
    """A structural block of a Markdown document as a span of its text."""

    kind: str
    """One of BLOCK_KINDS."""
    start: int
    """Code-point offset of the block's first character."""
    end: int
    """Offset just past the block's last non-whitespace character."""
    level: int = 0
    """Heading level (1-6); nesting depth for list items."""
    children: tuple[Block, ...] = ()
    """List items of a list; rows of a table (the header row first, marked by level=0)."""
    info: str = ""
    """Heading text, code fence language, or list marker."""


def line_starts(text: str) -> list[int]:
    """Offsets where each line starts; one extra entry at len(text) for the end."""
    starts = [0]
    find = text.find
    i = find("\n")
    while i != -1:
        starts.append(i + 1)
        i = find("\n", i + 1)
    if starts[-1] != len(text):
        starts.append(len(text))
    return starts


def _rstrip_end(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


def rstrip_ends(text: str, starts: list[int], ends: list[int]) -> None:
    """`_rstrip_end` of every span (starts[i], ends[i]), `ends` changed in place: one call for all
    (a call per span was a third of the compiled parse's conversion, issue 31)."""
    for i, b in enumerate(ends):
        a = starts[i]
        if b > a and text[b - 1].isspace():
            b -= 1
            while b > a and text[b - 1].isspace():
                b -= 1
            ends[i] = b


_md_parser = None


def _parser():
    global _md_parser
    if _md_parser is None:
        # html_block stays a block (shown as text, never rendered); tables are GFM.
        # Without markdown-it's `normalize` rule: document text has no CR left (the loader
        # normalizes newlines), and the rule's two regular-expression passes over the whole text
        # hold the GIL for ~300 ms on 20 MB. (It would also turn NUL into U+FFFD: one character
        # for one, so offsets are the same either way.)
        # Without the `inline` rule either (issue 31): it parses the inline Markdown of every
        # paragraph, cell and heading (emphasis, links, code spans) into child tokens nothing here
        # reads, ~40% of the parse; a heading's title is its inline token's `content`, which the
        # block rules set (tests/core/test_structure.py compares with the full parse).
        _md_parser = reference_parser().disable("inline")
    return _md_parser


def reference_parser():
    """markdown-it-py with the inline rule (the parse before issue 31): what tests compare with."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin

    return MarkdownIt("commonmark", {"html": True}).enable("table").use(front_matter_plugin).disable("normalize")


_TITLE_RE = re.compile(r"^title:\s*(.+?)\s*$", re.MULTILINE)


def _front_matter_title(yaml_text: str) -> str | None:
    m = _TITLE_RE.search(yaml_text)
    if not m:
        return None
    value = m.group(1).strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return value or None


def blocks_of_tokens(tokens, text: str, ls: list[int], line0: int, blocks: list[Block],
                     headings_raw: list[tuple[int, str, int, int]]) -> str | None:
    """Append the top-level blocks (and headings) of markdown-it-py's `tokens` to `blocks` (and
    `headings_raw`); returns the front matter's title. `tokens` may be the parse of a region of
    `text` that starts at line `line0` (`ls`: the whole text's line starts): its line maps are
    shifted by `line0`."""
    nlines = len(ls) - 1

    def span(m: list[int]) -> tuple[int, int]:
        a = ls[min(m[0] + line0, nlines)]
        b = ls[min(m[1] + line0, nlines)]
        return a, _rstrip_end(text, a, b)

    fm_title: str | None = None
    i = 0
    n = len(tokens)
    while i < n:
        t = tokens[i]
        if t.level != 0 or t.map is None:
            i += 1
            continue
        a, b = span(t.map)
        typ = t.type
        if typ == "heading_open":
            title = tokens[i + 1].content.strip() if i + 1 < n else ""
            level = int(t.tag[1])
            blocks.append(Block("heading", a, b, level=level, info=title))
            headings_raw.append((level, title, a, b))
            i += 3
            continue
        if typ == "front_matter":
            blocks.append(Block("front_matter", a, b))
            fm_title = _front_matter_title(t.content)
        elif typ == "paragraph_open":
            blocks.append(Block("paragraph", a, b))
        elif typ in ("fence", "code_block"):
            blocks.append(Block("code", a, b, info=t.info.strip() if typ == "fence" else ""))
        elif typ == "html_block":
            blocks.append(Block("html", a, b))
        elif typ == "hr":
            blocks.append(Block("hr", a, b))
        elif typ in ("bullet_list_open", "ordered_list_open", "blockquote_open", "table_open"):
            close = typ.replace("_open", "_close")
            depth = 0
            children: list[Block] = []
            j = i
            while j < n:
                tj = tokens[j]
                if tj.type == typ:
                    depth += 1
                elif tj.type == close:
                    depth -= 1
                    if depth == 0:
                        break
                # Direct children only: list items one level below, table rows anywhere inside.
                if typ in ("bullet_list_open", "ordered_list_open") and tj.type == "list_item_open" \
                        and tj.level == 1 and tj.map is not None:
                    ca, cb = span(tj.map)
                    children.append(Block("list_item", ca, cb, level=1, info=tj.markup))
                elif typ == "table_open" and tj.type == "tr_open" and tj.map is not None:
                    ca, cb = span(tj.map)
                    children.append(Block("table_row", ca, cb, level=0 if not children else 1))
                j += 1
            kind = {"bullet_list_open": "list", "ordered_list_open": "list",
                    "blockquote_open": "blockquote", "table_open": "table"}[typ]
            blocks.append(Block(kind, a, b, children=tuple(children), info=t.markup))
            i = j + 1
            continue
        i += 1
    return fm_title
