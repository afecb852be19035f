"""The heading filter's one matching rule: which heading paths a typed "A > B" names.

People type part of a heading, not all of it: "parental > germ" should find the chunks under
"Employee Handbook > Parental leave > Germany", as a file dialog finds "Documents" from "doc".
The rule, shared by retrieval (`Index.search(heading_prefix=...)`), the command line's
`ask --heading`, and the window's completer, so what the completer offers is what the filter keeps:

* A typed path is split on ">" into segments; blank segments are dropped.
* Segment i matches the path's title i when, compared case-insensitively with runs of whitespace
  as one space, the title starts with it or one of the title's words does ("germ" matches
  "Germany", "leave" matches "Parental leave", "parental le" matches "Parental leave").
* Segments match from the top of the path, in order, with no gaps; a path with fewer titles than
  typed segments does not match. A path matches when its first titles match (a prefix), so
  "Parental leave" keeps every chunk under that section, sub-sections included.

The document title a single top-level heading gives ("Employee Handbook") is often left out by
the user, since every chunk shares it: `resolve_heading_filter` puts it back when only that makes
the typed path match, so the filter handed to retrieval is always anchored at the top.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

_SPACE = re.compile(r"\s+")
SEPARATOR = " > "


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def parse_heading_filter(text: str) -> tuple[str, ...]:
    """The segments of a typed heading path ("a > b >" gives ("a", "b"))."""
    return tuple(s for s in (_SPACE.sub(" ", p).strip() for p in text.split(">")) if s)


def segment_matches(title: str, typed: str) -> bool:
    """Whether one typed segment names `title`: the title, or one of its words, starts with it
    (case-insensitive, whitespace runs as one space). An empty segment matches every title."""
    t, q = _norm(title), _norm(typed)
    if not q or t.startswith(q):
        return True
    return any(t.startswith(q, m.start()) for m in re.finditer(r"(?<=[\s\-/(&,:])\w", t))


def heading_matches(path: Sequence[str], prefix: Sequence[str]) -> bool:
    """Whether a chunk with heading path `path` lies under the typed `prefix` (see the module's
    rule). An empty prefix matches every path."""
    if len(prefix) > len(path):
        return False
    # The prefix may be shorter than the path: only its segments are compared.
    return all(segment_matches(title, typed) for title, typed in zip(path, prefix, strict=False))


def sole_title(paths: Iterable[Sequence[str]]) -> str | None:
    """The one top-level title every titled path starts with, or None when there are several (or
    none)."""
    tops = {p[0] for p in paths if p}
    return next(iter(tops)) if len(tops) == 1 else None


def resolve_heading_filter(text: str | Sequence[str], paths: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """The typed filter as a prefix anchored at the top: the sole document title is put in front
    when the segments match no path from the top but do match below that title. Left as typed
    otherwise (it may then match nothing, which the user sees as no hits)."""
    parts = parse_heading_filter(text) if isinstance(text, str) else tuple(text)
    if not parts:
        return ()
    paths = [tuple(p) for p in paths]
    if any(heading_matches(p, parts) for p in paths):
        return parts
    title = sole_title(paths)
    if title is not None and any(heading_matches(p, (title, *parts)) for p in paths):
        return (title, *parts)
    return parts


def display_path(path: Sequence[str], title: str | None) -> str:
    """A heading path as the filter field shows it: "A > B", without the sole title."""
    shown = tuple(path[1:]) if title is not None and path and path[0] == title and len(path) > 1 else tuple(path)
    return SEPARATOR.join(shown)


def heading_completions(text: str, paths: Sequence[Sequence[str]], limit: int = 200) -> list[str]:
    """What the completer offers for `text`: each heading path (in document order, once) that the
    typed segments match, as `display_path` writes it, so choosing one filters by exactly that
    section. Empty text offers every path."""
    unique = list(dict.fromkeys(tuple(p) for p in paths if p))
    title = sole_title(unique)
    parts = parse_heading_filter(text)
    full = resolve_heading_filter(parts, unique) if parts else ()
    out: list[str] = []
    seen: set[str] = set()
    for p in unique:
        if full and not heading_matches(p, full):
            continue
        shown = display_path(p, title)
        if shown and shown not in seen:
            seen.add(shown)
            out.append(shown)
            if len(out) >= limit:
                break
    return out


__all__ = ["parse_heading_filter", "segment_matches", "heading_matches", "resolve_heading_filter",
           "heading_completions", "display_path", "sole_title", "SEPARATOR"]
