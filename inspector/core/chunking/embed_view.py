"""The embedding view: what the model reads of a chunk, the text rather than its markup (issue 29).

A chunk is a span of the document (`doc.text[start:end]`) and stays one. What is embedded (and
BM25-indexed) is its context prefix and a *view* of the span text:

- `raw` (as before): the span text as written.
- `clean`: the span text with Markdown's link targets dropped and the link text kept
  (`[text](url)` and `![alt](url)` become `text` and `alt`, `[text][ref]` becomes `text`, an HTML
  `<a href="...">text</a>` becomes `text`), reference definitions (`[ref]: url` lines) dropped,
  table padding collapsed (runs of spaces in table rows become one, delimiter rows `|---|---|`
  dropped), and a table chunk that lost its table's header row gets that row again in front of
  its text (unless the prefix already carries it, as `markdown`'s does).

Across nine public handbook pages a quarter of the default chunks' word pieces were link targets,
reference labels and column padding, half of them in table chunks (issue 29); `benchmarks/
embed_view.py` measures what the clean view changes. The view is a pure function of the span text,
the prefix and the header row, so the embedding cache (keyed by the embedded text) serves each view
its own vectors, and the Reader and `ask`'s JSON show `Chunk.embedded_text`, exactly what was sent.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Iterable

from inspector.core.chunking.chunk import Chunk
from inspector.core.documents.document import Document

VIEWS = ("raw", "clean")

#: Meta keys a chunk carries when its embedded text is a view of its span (`with_view`).
VIEW_KEY = "embed_view"
HEADER_KEY = "table_header"

# [text](target "title") and ![alt](target): the target may hold one level of parentheses.
_INLINE = re.compile(r"(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\(\s*<?(?:[^()\s<>]|\([^()\s]*\))*>?"
                     r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?\s*\)")
# [text][ref] and [text][] (full and collapsed reference links).
_REFERENCE = re.compile(r"\[((?:[^\[\]\n]|\[[^\[\]\n]*\])+)\]\[[^\[\]\n]*\]")
# A reference definition line: up to three spaces, [label]: target, optional title.
_DEFINITION = re.compile(r"^ {0,3}\[[^\]\n]+\]:[ \t]*\S+.*(?:\n|$)", re.MULTILINE)
_ANCHOR = re.compile(r"<a\s[^>]*>(.*?)</a\s*>", re.IGNORECASE | re.DOTALL)
_DELIMITER_ROW = re.compile(r"^[ \t>]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_SPACES = re.compile(r"[ \t]{2,}")


def _table_line(line: str) -> bool:
    return "|" in line


def clean_text(text: str) -> str:
    """The `clean` view of Markdown text (see the module's docstring). Deterministic; the text of
    every link is kept."""
    text = _DEFINITION.sub("", text)
    text = _ANCHOR.sub(lambda m: m.group(1), text)
    # Inline links may sit inside an image's alt text or a link's text: repeat until none is left.
    for _ in range(4):
        new = _INLINE.sub(lambda m: m.group(2), text)
        new = _REFERENCE.sub(lambda m: m.group(1), new)
        if new == text:
            break
        text = new
    if "|" not in text:
        return text
    lines = []
    for line in text.split("\n"):
        if _table_line(line):
            if "-" in line and _DELIMITER_ROW.match(line):
                continue
            line = _SPACES.sub(" ", line)
        lines.append(line)
    return "\n".join(lines)


def view_text(body: str, prefix: str, view: str, header: str = "") -> tuple[str, str]:
    """(prefix, body) as the model reads them under `view`; `header`: the table header row a
    table chunk lost (added in front of the body when the prefix does not carry it already)."""
    if view != "clean":
        return prefix, body
    clean_prefix = clean_text(prefix) if prefix else prefix
    if header:
        clean_header = clean_text(header).strip()
        if clean_header and " ".join(clean_header.split()) not in " ".join(clean_prefix.split()):
            body = f"{header}\n{body}"
    return clean_prefix, clean_text(body)


def with_view(doc: Document, chunks: Iterable[Chunk], view: str) -> tuple[Chunk, ...]:
    """`chunks` marked to be embedded under `view` (spans unchanged); a chunk inside a table whose
    header row lies before it carries that row (`meta["table_header"]`)."""
    if view not in VIEWS:
        raise ValueError(f"embed view must be one of {', '.join(VIEWS)}, got {view!r}")
    chunks = tuple(chunks)
    if view == "raw":
        return chunks
    from inspector.core.text.structure import structure_of

    headers: list[tuple[int, int, str]] = []  # (first row after the header, table end, header)
    for b in structure_of(doc).blocks:
        if b.kind == "table" and b.children:
            head = b.children[0]
            headers.append((head.end, b.end, doc.text[head.start:head.end]))
    out = []
    for c in chunks:
        meta = dict(c.meta)
        meta[VIEW_KEY] = view
        for after, end, header in headers:
            if c.start >= after and c.start < end:
                meta[HEADER_KEY] = header
                break
        out.append(replace(c, meta=meta))
    return tuple(out)
