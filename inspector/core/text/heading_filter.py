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
the typed path match. Retrieval does so for each document on its own (`Index._heading_mask`), so
in a folder whose documents have titles of their own, "parental" keeps every document's
"Parental leave"; the window resolves a typed path itself only for one document (the only one,
or the one the document filter keeps), and offers the completions of every document it filters.
"""

from __future__ import annotations

import bisect
import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from inspector.core.runtime.lru import SizedLRU

if TYPE_CHECKING:
    from inspector.core.documents.document import Document

_SPACE = re.compile(r"\s+")
#: Where a word starts inside a normalized title (after a space, "-", "/", "(", "&", "," or ":").
_WORD_START = re.compile(r"(?<=[\s\-/(&,:])\w")
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
    return any(t.startswith(q, m.start()) for m in _WORD_START.finditer(t))


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


#: Heading paths the completer offers at most.
COMPLETIONS = 200


def heading_completions(text: str, paths: Sequence[Sequence[str]], limit: int = COMPLETIONS) -> list[str]:
    """What the completer offers for `text`: each heading path (in document order, once) that the
    typed segments match, as `display_path` writes it, so choosing one filters by exactly that
    section. Empty text offers every path. (`HeadingCatalog(paths).completions`: the window keeps
    the catalog of its document and asks it at every keystroke.)"""
    return HeadingCatalog(paths).completions(text, limit)


class HeadingCatalog:
    """A document's heading paths made ready for the filter's rule once. The completer asks at
    every keystroke, and the rule applied afresh normalized every title of every path each time:
    ~14 ms a keystroke for a 1 MB handbook's 1,749 headings, 0.15-0.29 s for 20 MB's 33,231, on
    the GUI thread.

    Here every place a typed segment may match (a normalized title from its start, and from each
    of its word starts: `segment_matches`) is kept in one sorted list, so the titles a segment
    names are a bisection away; and the paths are indexed by their title at each depth, so a
    typed path looks only at the paths its most selective segment names. The answers are
    `heading_completions`' and `resolve_heading_filter`'s (a test compares them on generated
    paths and on the corpora's headings)."""

    def __init__(self, paths: Iterable[Sequence[str]]) -> None:
        self.paths: list[tuple[str, ...]] = list(dict.fromkeys(tuple(p) for p in paths if p))
        self.title = sole_title(self.paths)
        self._shown = [display_path(p, self.title) for p in self.paths]
        titles = list(dict.fromkeys(t for p in self.paths for t in p))
        # A title's normalized text from each place a segment may match, and the title, sorted by
        # the text (a stable sort of positions: equal texts stay in the titles' order). Sorting
        # (text, title number) pairs took half again as long (20 MB, 33,231 titles: 0.21 -> 0.13 s).
        keys: list[str] = []
        owners: list[str] = []
        starts = _WORD_START.finditer
        for t in titles:
            n = _norm(t)
            keys.append(n)
            owners.append(t)
            for m in starts(n):
                keys.append(n[m.start():])
                owners.append(t)
        order = sorted(range(len(keys)), key=keys.__getitem__)
        self._tails = [keys[i] for i in order]
        self._owners = [owners[i] for i in order]
        # The paths by their title at each depth, in order.
        self._at_depth: list[dict[str, list[int]]] = []
        for i, path in enumerate(self.paths):
            for depth, t in enumerate(path):
                if depth == len(self._at_depth):
                    self._at_depth.append({})
                self._at_depth[depth].setdefault(t, []).append(i)
        self._named: dict[str, frozenset[str]] = {}

    def _named_by(self, typed: str) -> frozenset[str] | None:
        """The titles a typed segment names (`segment_matches`); None: every title (a blank one)."""
        q = _norm(typed)
        if not q:
            return None
        named = self._named.get(q)
        if named is None:
            if len(self._named) > 256:
                self._named.clear()
            # The tails that start with `q`: from `q` up to the first string past them all (`q`
            # with its last character one higher; at the last code point, the prefix is checked).
            tails = self._tails
            lo = bisect.bisect_left(tails, q)
            if ord(q[-1]) < 0x10FFFF:
                hi = bisect.bisect_left(tails, q[:-1] + chr(ord(q[-1]) + 1), lo)
            else:
                hi = lo
                while hi < len(tails) and tails[hi].startswith(q):
                    hi += 1
            named = self._named[q] = frozenset(self._owners[lo:hi])
        return named

    def _matching(self, prefix: Sequence[str]) -> Iterator[int]:
        """Indexes of the paths `prefix` matches (`heading_matches`), in order, found as they are
        asked for (the completer stops at its limit; `resolve` at the first)."""
        k = len(prefix)
        if k > len(self._at_depth):
            return
        named = [self._named_by(typed) for typed in prefix]
        # The depth whose named titles hold the fewest paths: its paths are the candidates.
        best: list[int] | None = None
        for depth, n in enumerate(named):
            if n is None:
                continue
            by_title = self._at_depth[depth]
            found = [i for t in n if t in by_title for i in by_title[t]]
            if best is None or len(found) < len(best):
                best = found
        candidates = sorted(best) if best is not None else range(len(self.paths))
        for i in candidates:
            path = self.paths[i]
            if len(path) >= k and all(n is None or path[d] in n for d, n in enumerate(named)):
                yield i

    def resolve(self, text: str | Sequence[str]) -> tuple[str, ...]:
        """`resolve_heading_filter(text, paths)`."""
        parts = parse_heading_filter(text) if isinstance(text, str) else tuple(text)
        if not parts:
            return ()
        if next(self._matching(parts), None) is not None:
            return parts
        if self.title is not None and next(self._matching((self.title, *parts)), None) is not None:
            return (self.title, *parts)
        return parts

    def completions(self, text: str, limit: int = COMPLETIONS) -> list[str]:
        """`heading_completions(text, paths, limit)`."""
        parts = parse_heading_filter(text)
        full = self.resolve(parts) if parts else ()
        out: list[str] = []
        seen: set[str] = set()
        for i in self._matching(full) if full else range(len(self.paths)):
            shown = self._shown[i]
            if shown and shown not in seen:
                seen.add(shown)
                out.append(shown)
                if len(out) >= limit:
                    break
        return out


def completions_over(catalogs: Iterable[HeadingCatalog], text: str, limit: int = COMPLETIONS) -> list[str]:
    """What the completer offers for `text` over several documents: each document's completions
    as its own catalog writes them (its title left out, as retrieval leaves it out for each
    document: `Index._heading_mask`), in the order of `catalogs`, each path once."""
    out: list[str] = []
    seen: set[str] = set()
    for catalog in catalogs:
        for shown in catalog.completions(text, limit):
            if shown not in seen:
                seen.add(shown)
                out.append(shown)
                if len(out) >= limit:
                    return out
    return out


#: Catalogs by document (`heading_catalog_of`), sized by the document's characters: a folder's
#: documents all (the completer offers every document's paths).
_CATALOGS: SizedLRU[HeadingCatalog] = SizedLRU(4096, 64_000_000)
_MAKING: dict[tuple[str, str, str], threading.Lock] = {}
_MAKING_LOCK = threading.Lock()


def heading_catalog_of(doc: Document) -> HeadingCatalog:
    """The catalog of a document's heading paths (its outline's), made once per content hash.

    Why kept (issue 31): the window's completer made it on the GUI thread at the first keystroke
    after a document was shown, 0.29 s for a 20 MB document's 33,231 headings; the chunking
    thread now makes it once the document's chunks are in (`compute_chunks`), and the completer
    finds it here. A thread asking while another makes it waits for that one rather than make a
    second beside it (two makings would hold the GIL by turns, each the slower)."""
    from inspector.core.text.structure import outline_of

    key = (doc.sha256, doc.kind, doc.name)
    kept = _CATALOGS.lookup(key)
    if kept is not None:
        return kept
    with _MAKING_LOCK:
        making = _MAKING.setdefault(key, threading.Lock())
    with making:
        try:
            return _CATALOGS.get_or_make(
                key, lambda: HeadingCatalog(h.path for h in outline_of(doc).headings if h.path), len(doc.text))
        finally:
            with _MAKING_LOCK:
                _MAKING.pop(key, None)


__all__ = ["HeadingCatalog", "heading_catalog_of", "completions_over", "COMPLETIONS", "parse_heading_filter",
           "segment_matches", "heading_matches", "resolve_heading_filter", "heading_completions", "display_path",
           "sole_title", "SEPARATOR"]
