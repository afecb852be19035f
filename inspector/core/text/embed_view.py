"""The embedding view: what the model reads of a chunk, the text rather than its markup (issue 29).
The text side (pure functions of strings); `inspector.core.chunking.embed_view.with_view` marks
chunks with a view.

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

import bisect
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Literal, TypeGuard, get_args

#: The views by name, for the seams that take one.
EmbedView = Literal["raw", "clean"]
VIEWS: tuple[EmbedView, ...] = get_args(EmbedView)


def is_embed_view(name: object) -> TypeGuard[EmbedView]:
    """`name` is one of `VIEWS` (a name read from settings, a menu or a command line)."""
    return name in VIEWS

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


def _drops(text: str, base: int, out: list[tuple[int, int]], depth: int = 0) -> None:
    """Append to `out` the [start, end) ranges (offset by `base`) of `text` the clean view drops."""
    taken: list[tuple[int, int]] = []  # ranges already handled by an earlier pattern

    def free(a: int, b: int) -> bool:
        return all(b <= x or a >= y for x, y in taken)

    for m in _DEFINITION.finditer(text):
        out.append((base + m.start(), base + m.end()))
        taken.append(m.span())
    for m in _ANCHOR.finditer(text):
        if free(*m.span()):
            out.append((base + m.start(), base + m.start(1)))
            out.append((base + m.end(1), base + m.end()))
            taken.append(m.span())
    for pattern in (_INLINE, _REFERENCE):
        group = 2 if pattern is _INLINE else 1
        for m in pattern.finditer(text):
            if not free(*m.span()):
                continue
            out.append((base + m.start(), base + m.start(group)))
            out.append((base + m.end(group), base + m.end()))
            taken.append(m.span())
            if depth < 3 and "[" in m.group(group):
                _drops(m.group(group), base + m.start(group), out, depth + 1)
    if depth or "|" not in text:
        return
    pos = 0
    for line in text.split("\n"):
        end = pos + len(line)
        if "|" in line:
            if "-" in line and _DELIMITER_ROW.match(line):
                out.append((base + pos, base + min(end + 1, len(text))))
            else:
                for m in _SPACES.finditer(line):
                    out.append((base + pos + m.start() + 1, base + pos + m.end()))
        pos = end + 1


@lru_cache(maxsize=16)
def _dropped(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The ranges of `text` the clean view drops, merged and sorted: (starts, ends). Made once per
    text (a document's), so a link or a table row cut by a chunk boundary loses its target or its
    padding on both sides of the cut."""
    ranges: list[tuple[int, int]] = []
    _drops(text, 0, ranges)
    merged: list[list[int]] = []
    for a, b in sorted(r for r in ranges if r[1] > r[0]):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return tuple(a for a, _ in merged), tuple(b for _, b in merged)


def clean_span(text: str, start: int, end: int) -> str:
    """The clean view of `text[start:end]`, judged on the whole `text` (a document's)."""
    starts, ends = _dropped(text)
    parts = []
    pos = start
    i = max(0, bisect.bisect_right(starts, start) - 1)
    while i < len(starts) and starts[i] < end:
        a, b = starts[i], ends[i]
        if b > pos:
            if a > pos:
                parts.append(text[pos:a])
            pos = max(pos, b)
        i += 1
    if pos < end:
        parts.append(text[pos:end])
    return "".join(parts)


def clean_text(text: str) -> str:
    """The `clean` view of Markdown text (see the module's docstring). Deterministic; the text of
    every link is kept."""
    return clean_span(text, 0, len(text))


def view_text(doc_text: str, start: int, end: int, prefix: str, view: str, header: str = "") -> tuple[str, str]:
    """(prefix, body) as the model reads the span doc_text[start:end] under `view`; `header`: the
    table header row a table chunk lost (added in front of the body when the prefix does not carry
    it already)."""
    if view != "clean":
        return prefix, doc_text[start:end]
    clean_prefix = clean_text(prefix) if prefix else prefix
    body = clean_span(doc_text, start, end)
    if header:
        clean_header = clean_text(header).strip()
        if clean_header and " ".join(clean_header.split()) not in " ".join(clean_prefix.split()):
            body = f"{clean_header}\n{body}"
    return clean_prefix, body


def view_spans(doc_text: str, start: int, end: int, spans: Iterable[tuple[int, int]], prefix: str, view: str,
               header: str = "") -> tuple[tuple[int, int], ...]:
    """Document spans (`spans`, e.g. a gold question's reference spans) laid onto the body that
    `view_text` gives for doc_text[start:end]: (start, end) offsets into that body, clipped to the
    chunk, empty ones left out. The clean view only drops characters (judged on the whole text),
    so an offset moves back by what is dropped before it, and forward by the header row put in
    front; a span whose characters are all dropped (a link target) vanishes."""
    if view != "clean":
        clipped = ((max(a, start) - start, min(b, end) - start) for a, b in spans)
        return tuple((a, b) for a, b in clipped if a < b)
    body = view_text(doc_text, start, end, prefix, view, header)[1]
    lead = len(body) - len(clean_span(doc_text, start, end))  # the header row put in front, if any

    def at(x: int) -> int:
        return lead + len(clean_span(doc_text, start, min(max(x, start), end)))

    out = []
    for a, b in spans:
        s, e = at(a), at(b)
        if s < e and a < end and b > start:
            out.append((s, e))
    return tuple(out)


class CleanMap:
    """The clean view of a whole text and where each of its offsets lands there: the clean view of
    text[start:end] is `clean[at(start):at(end)]` (the view only drops characters, judged on the
    whole text), so one word-piece index of `clean` counts the view of every span (the chunkers'
    `fit_embedder` budget under the clean view)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts, self.ends = _dropped(text)
        before = [0]
        for a, b in zip(self.starts, self.ends, strict=True):
            before.append(before[-1] + b - a)
        self._before = before
        """_before[i]: characters dropped in the first i ranges."""
        self.clean = clean_span(text, 0, len(text))

    def at(self, x: int) -> int:
        """Where offset x of the text lands in `clean` (a dropped character: where its range went)."""
        i = bisect.bisect_right(self.starts, x) - 1
        if i >= 0 and x < self.ends[i]:
            return self.starts[i] - self._before[i]
        return x - self._before[i + 1]


@lru_cache(maxsize=8)
def clean_map(text: str) -> CleanMap:
    """`CleanMap` of `text`, made once per text (a document's)."""
    return CleanMap(text)
