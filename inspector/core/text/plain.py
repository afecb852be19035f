"""A span of Markdown as a reader sees it: inline markup removed, every remaining character mapped
back to its offset in the source.

Drafted questions are read by people: "What is meant by “[10X](https://10x.gsa.gov/)”?" is
markup, not a question. Their answers, though, must stay exact substrings of the document (a hit
is decided by finding the answer in a chunk), so the plain text keeps, for each character, where
it came from: a run of plain characters whose sources are consecutive and equal to them is a
piece of the document with no markup inside (`Plain.runs`), which an answer may be.

Removed: link and image syntax (the link text or alt text stays; targets, reference labels and
footnote marks go; a bracket is markup in Markdown, an escaped one `\\[` is text), template tags
(`{% ... %}`, `{{ ... }}`, as Jekyll and Liquid pages carry them), HTML tags and comments (an
autolink `<https://...>` keeps its address), code ticks (the code stays), emphasis and
strikethrough markers, escapes (the escaped character stays), table pipes, and the markers a line
starts with (heading #, list bullets and numbers, block quote >). Entities (`&amp;`) read as their
character, which differs from the source there: such a character is never part of a clean run.
Whitespace is kept as it is, so plain text still splits into the same lines.

This is not a Markdown renderer (nested emphasis rules, link reference resolution): it is a rule
per kind of mark, enough for a question to read as text, and it works on any span, including
one that starts or ends inside a link, as a sentence of a document may.
"""

from __future__ import annotations

import bisect
import html
import re
from dataclasses import dataclass
from functools import lru_cache

_LINE_MARKS = (r"[ \t]*(?:(?:>[ \t]?)+(?:#{1,6}[ \t]+|[-*+][ \t]+|\d{1,9}[.)][ \t]+)?"
               r"|(?:#{1,6}[ \t]+|[-*+][ \t]+|\d{1,9}[.)][ \t]+)(?:>[ \t]?)*)")
_LINE_MARKS_RE = re.compile(_LINE_MARKS)

# One pattern, tried at every position, earliest alternative first; what each group leaves is in
# `_shown`. A code span comes first: what is inside it is code, shown as written.
_TOKEN_RE = re.compile(
    r"(?P<code>(?P<ticks>`+)(?P<body>.+?)(?P=ticks))"
    r"|(?P<escape>\\[!-/:-@\[-`{-~])"
    r"|(?P<template>\{%.*?(?:%\}|$)|\{\{.*?(?:\}\}|$))"
    r"|(?P<comment><!--.*?(?:-->|$))"
    r"|(?P<autolink><(?:https?|ftp|mailto):[^<>\s]+>|<[^<>\s@]+@[^<>\s@]+\.[^<>\s@]+>)"
    r"|(?P<tag></?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>)"
    r"|(?P<footnote>\[\^[^\]\s]+\]:?)"
    r"|(?P<target>\]\((?:\{%.*?%\}|\{\{.*?\}\}|[^()\s]|\([^()\s]*\))*(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\))"
    r"|(?P<reflabel>\]\[[^\[\]\n]*\])"
    r"|(?P<bracket>!\[|[\[\]])"
    r"|(?P<entity>&(?:#\d{1,7}|#x[0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});)"
    # The marks a line starts with, only there ("a - b" and "in 2024. Then" keep theirs).
    r"|(?P<line>^" + _LINE_MARKS + ")"
    r"|(?P<strong>\*\*|__|~~)"
    r"|(?P<tick>`+)"
    r"|(?P<pipe>\|)"
    r"|(?P<em>(?<![\w*])\*(?=[^\s*])|(?<=[^\s*])\*(?![\w*])|(?<![\w_])_(?=[^\s_])|(?<=[^\s_])_(?![\w_]))",
    re.MULTILINE | re.DOTALL)


@dataclass(frozen=True, slots=True)
class Plain:
    """Plain text of a span of a document, with where each character came from."""

    text: str
    """What a reader sees: the span with its inline markup removed."""
    source: tuple[int, ...]
    """Offset in the document of each character of `text` (for an entity, its '&')."""
    runs: tuple[tuple[int, int], ...]
    """Maximal runs [i, j) of `text` that are clean pieces of the document: the very characters
    at consecutive offsets, nothing removed between them (an entity's character is in none)."""

    def span(self, i: int, j: int) -> tuple[int, int] | None:
        """The document span of plain text [i, j) if it is a clean piece of the document, else None."""
        if not 0 <= i < j <= len(self.text):
            return None
        k = bisect.bisect_right(self.runs, (i, len(self.text) + 1)) - 1
        if k < 0 or j > self.runs[k][1]:
            return None
        return self.source[i], self.source[j - 1] + 1

    def at(self, offset: int) -> int:
        """Index in `text` of the first character at or after document `offset`."""
        return bisect.bisect_left(self.source, offset)


def _at_line_start(text: str, i: int) -> bool:
    """Whether only spaces stand between the line's start and `i`."""
    return not text[text.rfind("\n", 0, i) + 1:i].strip(" \t")


def _shown(m: re.Match[str]) -> tuple[str, int]:
    """(what the reader sees of a token, where that starts inside the token)."""
    kind = m.lastgroup
    if kind == "code":
        return m.group("body"), len(m.group("ticks"))
    if kind == "escape":
        return m.group()[1], 1
    if kind == "autolink":
        return m.group()[1:-1], 1
    if kind == "entity":
        return html.unescape(m.group()), 0
    return "", 0


def plain_text(text: str, start: int = 0, end: int | None = None) -> Plain:
    """`text[start:end]` as a reader sees it (see the module's docstring)."""
    end = len(text) if end is None else end
    out: list[str] = []
    source: list[int] = []
    runs: list[tuple[int, int]] = []
    n = 0  # characters of plain text so far

    def keep(a: int, b: int) -> None:
        """Document text [a, b) shown as it is: one clean run, or the end of the last one."""
        nonlocal n
        if a >= b:
            return
        if runs and runs[-1][1] == n and source[-1] == a - 1:
            runs[-1] = (runs[-1][0], n + b - a)
        else:
            runs.append((n, n + b - a))
        out.append(text[a:b])
        source.extend(range(a, b))
        n += b - a

    pos = start
    if _at_line_start(text, start):  # `^` holds after a newline; a span may start after indentation
        marks = _LINE_MARKS_RE.match(text, start, end)
        if marks is not None:
            pos = marks.end()
    for m in _TOKEN_RE.finditer(text, pos, end):
        keep(pos, m.start())
        shown, at = _shown(m)
        if m.lastgroup == "entity":  # read as its character, which is not the document's there
            out.append(shown)
            source.extend([m.start()] * len(shown))
            n += len(shown)
        else:
            keep(m.start() + at, m.start() + at + len(shown))
        pos = m.end()
    keep(pos, end)
    return Plain("".join(out), tuple(source), tuple(runs))


@lru_cache(maxsize=4096)
def plain(text: str) -> str:
    """Just the plain text of a short string (a heading's title, a table cell; remembered, as a
    title is read for every draft under it)."""
    return plain_text(text).text


__all__ = ["Plain", "plain", "plain_text"]
