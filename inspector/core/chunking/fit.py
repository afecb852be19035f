"""Fitting chunks to the embedder: its word-piece limit as a budget, and a splitter that keeps to it.

all-MiniLM-L6-v2 reads 256 word pieces ([CLS]/[SEP] and the context prefix included) and silently
drops the rest. A structure-aware chunker that keeps a URL-heavy table whole up to 512 cl100k tokens
hands it 600+ word pieces: the answer in the tail never reaches the vector (testers measured 7 of 12
such answers found, against 28 of 28 in chunks read whole). So the limit is treated as a budget
while chunks are planned, counted exactly and cheaply with the document's `WordPieceIndex`, the
same count `annotate` reports afterwards.

`fit_spans` covers a stretch of text with consecutive pieces that each satisfy a caller's
predicate, cutting where structure allows: at the given unit ends (rows, items, lines), else at
sentence and line ends, else between words, and only as a last resort between code points.
"""

from __future__ import annotations

import bisect
import contextlib
import re
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar

from inspector.core.chunking.common import SpanContext, context_prefix, trim
from inspector.core.documents.document import Document
from inspector.core.runtime.lru import SizedLRU
from inspector.core.text.embed_view import CleanMap, clean_map, clean_text
from inspector.core.text.structure import sentence_spans
from inspector.core.text.tokens import TokenIndex
from inspector.core.text.wordpieces import (
    PieceIndex,
    WordPieceIndex,
    counts_with_token_index,
    current_piece_spec,
    embedded_pieces,
    max_seq_length,
    prefix_pieces,
    special_tokens,
    wordpiece_index,
)

#: (start, end, cut): a piece, and whether it ends between words or code points (mid-sentence).
Piece = tuple[int, int, bool]

_WORD_RE = re.compile(r"\S+")
_LINE_END_RE = re.compile(r"\S(?=[ \t]*\n)")


def _widest_prefix(ctx: SpanContext, view: str = "raw") -> int:
    title = ctx.outline.title
    prefixes = {context_prefix(title, path) for path in {()} | {h.path for h in ctx.outline.headings}}
    if view == "clean":
        prefixes = {clean_text(p) for p in prefixes}
    return max((prefix_pieces(p) for p in prefixes if p), default=0)


#: The embedding view whose text `EmbedBudget`s count (issue 29): "raw" (the span as written) or
#: "clean" (`inspector.core.text.embed_view`). Set around a strategy's call by whoever knows the
#: configuration's view (`ChunkStore`), as `counting_view(view)`.
_COUNTED_VIEW: ContextVar[str] = ContextVar("counted_view", default="raw")


@contextlib.contextmanager
def counting_view(view: str) -> Iterator[None]:
    """Within: `fit_embedder` budgets count the word pieces of `view`'s text of a span, what is
    sent to the model, instead of the span as written (the clean view drops link targets and
    table padding, so a chunk can hold more text and still fit)."""
    token = _COUNTED_VIEW.set(view)
    try:
        yield
    finally:
        _COUNTED_VIEW.reset(token)


#: Word pieces of each document's longest context prefix (by content, kind and name: the title;
#: and by the piece model that counts them).
_WIDEST: SizedLRU[int] = SizedLRU(64, 64)


def _counted_document(doc: Document, view: str) -> tuple[Document, CleanMap | None]:
    """The document whose pieces an `EmbedBudget` under `view` counts (under "clean", the clean
    view of the text, a document of its own), and the map of its offsets (None: the same)."""
    if view != "clean":
        return doc, None
    cmap = clean_map(doc.text)
    return Document(text=cmap.clean, name=doc.name, kind=doc.kind, doc_id=doc.doc_id), cmap


#: Characters up to which `prepare_budget` builds the word-piece index beside the encode (at most
#: ~27 MB more at the peak, ~6.7 bytes a character).
BUDGET_AHEAD_AT_MOST = 4_000_000


def prepare_budget(doc: Document) -> None:
    """Build the piece index that an `EmbedBudget` of `doc` will count with (it is cached), for a
    strategy's context to run beside the document's encode (`budgeted_context`).

    Why (issue 31): the word-piece index is mostly Python (runs, a table of distinct words), built
    after the token index on one core while the other idled; built while the token index's text
    encodes on the encoding threads, which hold no GIL, the two share the cores. Nothing is built
    where the piece model counts with the chunkers' own token index (cl100k): that index is the one
    being built. An error here is left to `EmbedBudget`, which meets it again where it always did:
    raised here, it would cost the token index being built (an error in the work meanwhile
    leaves nothing cached). Not for a text over BUDGET_AHEAD_AT_MOST characters: the index's arrays
    then stand beside the token index's while it is made, where they came after its temporaries
    were gone (a 10 MB document: peak 491 -> 558 MB)."""
    if counts_with_token_index() or len(doc.text) > BUDGET_AHEAD_AT_MOST:
        return
    try:
        wordpiece_index(_counted_document(doc, _COUNTED_VIEW.get())[0])
    except Exception:  # noqa: BLE001  (the budget's own error, raised again by EmbedBudget)
        return


class EmbedBudget:
    """The embedder's limit for one document: word pieces of a span's embedded text (context
    prefix, blank line, span; [CLS]/[SEP] included), counted as `annotate` counts them."""

    def __init__(self, ctx: SpanContext, limit: int | None = None) -> None:
        self.ctx = ctx
        self.limit = max_seq_length() if limit is None else limit
        self.specials = special_tokens()
        doc = ctx.doc
        self.view = _COUNTED_VIEW.get()
        """The view whose text is counted (`counting_view`): under "clean", the pieces of the clean
        view of prefix and span, counted on one index of the whole document's clean text."""
        doc, self._map = _counted_document(doc, self.view)
        self.index: PieceIndex = wordpiece_index(doc)
        """The pieces of the text counted: the document's, or under "clean" its clean text's (whose
        offsets `_at` gives)."""
        # The longest prefix any span can get (title > heading path): a span that fits beside it
        # fits beside its own, so most checks need no heading path at all.
        self._widest_prefix = _WIDEST.get_or_make(
            (ctx.doc.sha256, ctx.doc.kind, ctx.doc.name, current_piece_spec().counts, self.view),
            lambda: _widest_prefix(ctx, self.view), 1)

    def _at(self, x: int) -> int:
        return x if self._map is None else self._map.at(x)

    def _prefix(self, prefix: str) -> str:
        return clean_text(prefix) if self._map is not None and prefix else prefix

    def pieces(self, start: int, end: int, extra: str = "") -> int:
        """Embedded word pieces of text[start:end] with the prefix `SpanContext.make` gives it."""
        return self.pieces_with_prefix(self.ctx.prefix_for(start, end, extra), start, end)

    def pieces_with_prefix(self, prefix: str, start: int, end: int) -> int:
        """Embedded word pieces of text[start:end] under a given prefix (a child's is its parent's)."""
        return embedded_pieces(self.index, self._prefix(prefix), self._at(start), self._at(end))

    def fits(self, start: int, end: int, extra: str = "") -> bool:
        if not isinstance(self.index, WordPieceIndex):
            # Other tokenizers (cl100k's) may merge a prefix's parts: no shortcut, the exact count.
            return self.pieces(start, end, extra) <= self.limit
        body = self.index.count(self._at(start), self._at(end))
        # The prefix is its heading part and `extra` on a line of their own: the pieces add up.
        extra_pieces = prefix_pieces(self._prefix(extra)) if extra else 0
        if self.specials + self._widest_prefix + extra_pieces + body <= self.limit:
            return True
        prefix = self._prefix(self.ctx.prefix_for(start, end, extra))
        return self.specials + (prefix_pieces(prefix) if prefix else 0) + body <= self.limit


def _farthest(cands: Sequence[int], lo: int, hi: int, ok: Callable[[int], bool], hint: int) -> int | None:
    """Index of the farthest candidate in cands[lo:hi] that `ok` accepts, or None if it accepts
    none. Galloping out from `hint` (the estimated answer), then bisecting: a piece costs a few
    exact counts however long the run, and never a count of a span far longer than the piece."""
    if hi <= lo:
        return None
    hint = min(max(hint, lo), hi - 1)
    if ok(cands[hint]):
        good, step = hint, 1
        while True:
            probe = min(good + step, hi - 1)
            if probe == good:
                return good
            if not ok(cands[probe]):
                bad = probe
                break
            good, step = probe, step * 2
    else:
        bad, step = hint, 1
        while True:
            if bad == lo:
                return None
            probe = max(bad - step, lo)
            if ok(cands[probe]):
                good = probe
                break
            bad, step = probe, step * 2
    while bad - good > 1:
        mid = (good + bad) // 2
        if ok(cands[mid]):
            good = mid
        else:
            bad = mid
    return good



def budgeted_context(doc: Document, fit_embedder: bool, *, blocks: bool = False
                     ) -> tuple[SpanContext, EmbedBudget | None]:
    """The chunkers' context of `doc` (`blocks`: as `SpanContext`'s) and, with `fit_embedder`, the
    embedder's budget for it, its piece index built while the text encodes (`prepare_budget`)."""
    if not fit_embedder:
        return SpanContext(doc, blocks=blocks), None
    ctx = SpanContext(doc, lambda: prepare_budget(doc), blocks=blocks)
    return ctx, EmbedBudget(ctx)


def token_reach(ctx: SpanContext, budget: EmbedBudget | None, s: int, cap: int, prefix: str,
                strict: bool) -> tuple[int, int]:
    """How far a piece from `s` can go, estimated from the document's own tokens: where `cap`
    cl100k tokens (and, when strict, the word pieces left beside `prefix`) run out, and a
    horizon twice as far plus a margin, past which nothing is counted. A span's edges tokenize a
    little differently than inside the document, hence an estimate, not a bound; a horizon set
    too short could only make a piece shorter than it might be, never let one break its budget."""
    ti = ctx.tokens
    t0 = ti.token_at_or_after(s)
    est = ti.char_of_token(t0 + cap)
    horizon = ti.char_of_token(t0 + 2 * cap + 16)
    if budget is not None and budget.view != "raw":
        # The budget counts another text (the clean view's): its index does not say where the
        # document's offsets run out; the cap's estimate and horizon alone (never too short for it).
        pass
    elif strict and budget is not None and isinstance(budget.index, TokenIndex):
        # The model counts cl100k tokens too: where its room runs out, read off the same index.
        room = max(budget.limit - embedded_pieces(budget.index, prefix, s, s), 0)
        est = min(est, ti.char_of_token(t0 + room))
        horizon = min(horizon, max(ti.char_of_token(t0 + 2 * room + 16), s + 1))
    elif strict and budget is not None and isinstance(budget.index, WordPieceIndex):
        idx = budget.index
        room = budget.limit - embedded_pieces(idx, prefix, s, s)
        w0 = bisect.bisect_right(idx.word_ends, s)  # the word holding `s`, or the next one
        base = int(idx.word_pieces_prefix[w0])
        n_words = len(idx.word_ends)
        for target, which in ((max(room, 0), 0), (2 * max(room, 0) + 16, 1)):
            w = int(idx.word_pieces_prefix.searchsorted(base + target, side="right")) - 1
            if w > w0:  # noqa: SIM108  (the else arm needs its comment; a nested ternary hides it)
                at = idx.word_ends[w - 1]
            else:
                # Not even the first word fits whole: no estimate inside a word, its end it is.
                at = idx.word_ends[w0] if w0 < n_words else len(ctx.text)
            if which == 0:
                est = min(est, at)
            else:
                horizon = min(horizon, max(at, s + 1))
    return est, horizon


def _skip_space(text: str, i: int, end: int) -> int:
    while i < end and text[i].isspace():
        i += 1
    return i


#: (start, piece index, strict) -> (estimated farthest end, farthest end worth counting).
Reach = Callable[[int, int, bool], tuple[int, int]]


def fit_spans(text: str, start: int, unit_ends: Sequence[int], fits: Callable[[int, int, int], bool],
              relaxed: Callable[[int, int, int], bool] | None = None, first_floor: int = -1,
              reach: Reach | None = None) -> list[Piece]:
    """Consecutive pieces covering text[start:unit_ends[-1]] (whitespace between them left out),
    each accepted by `fits(a, b, k)` for the k-th piece, or by `relaxed` where nothing is (a prefix
    that alone fills the budget), or one code point where neither accepts anything.

    A piece ends at the farthest unit end it can; when not even the first unit fits, inside it at
    the farthest sentence or line end, else word end, else code point. The first piece ends after
    `first_floor` if anything allows it: text carried in front of the units (a heading, a lead-in)
    then travels with the start of what it introduces instead of standing alone. The predicates
    see trimmed spans and are assumed monotone in the end (a longer span never fits where a
    shorter did not); every piece returned was accepted as it is, whatever they do.

    `reach` estimates from the document's own tokens how far a piece can go (for `fits` when
    strict, for `relaxed` when not): the search starts there and counts nothing beyond the
    horizon, which keeps a megabyte without a break from being re-tokenized for every piece."""
    if not unit_ends:
        return []
    end = unit_ends[-1]
    finer: dict[int, tuple[list[int], list[int]]] = {}
    out: list[Piece] = []
    preds = (fits, relaxed) if relaxed is not None else (fits,)
    s = _skip_space(text, start, end)
    while s < end:
        k = len(out)
        i = bisect.bisect_right(unit_ends, s)
        u = unit_ends[i]
        floors = (first_floor, s) if k == 0 and first_floor > s else (s,)
        piece: tuple[int, bool] | None = None
        for n, pred in enumerate(preds):
            def ok(b: int, pred=pred, s=s, k=k) -> bool:
                return pred(s, _rtrim(text, s, b), k)
            est, horizon = reach(s, k, n == 0) if reach is not None else (end, end)
            for floor in floors:
                piece = _cut(text, s, u, i, unit_ends, finer, ok, floor, est, max(horizon, s + 1))
                if piece is not None:
                    break
            if piece is not None:
                break
        p, cut = piece if piece is not None else (s + 1, True)
        out.append((s, p, cut))
        s = _skip_space(text, p, end)
    return out


def _rtrim(text: str, a: int, b: int) -> int:
    while b > a and text[b - 1].isspace():
        b -= 1
    return b


def _search(cands: Sequence[int], ok: Callable[[int], bool], after: int, est: int, horizon: int) -> int | None:
    """The farthest candidate in (after, horizon] that `ok` accepts, searched from `est`."""
    lo = bisect.bisect_right(cands, after)
    hi = bisect.bisect_right(cands, horizon)
    j = _farthest(cands, lo, hi, ok, bisect.bisect_right(cands, est) - 1)
    return cands[j] if j is not None else None


def _cut(text: str, s: int, u: int, i: int, unit_ends: Sequence[int],
         finer: dict[int, tuple[list[int], list[int]]], ok: Callable[[int], bool],
         floor: int, est: int, horizon: int) -> tuple[int, bool] | None:
    """Where the piece starting at `s` ends, after `floor`: (end, cut mid-sentence), or None if
    nothing fits."""
    after = max(s, floor)
    p = _search(unit_ends, ok, after, est, horizon)
    if p is not None:
        return p, False
    if u <= floor:
        return None
    levels = finer.get(i)
    if levels is None:
        # Sentence and line ends of the unit, then word ends; from the first `s` that needed them
        # (later pieces of the same unit start further on and bisect into the same lists).
        ends = {b for _a, b in sentence_spans(text, s, u)}
        ends.update(m.end() for m in _LINE_END_RE.finditer(text, s, u))
        levels = finer[i] = (sorted(e for e in ends if e < u), [m.end() for m in _WORD_RE.finditer(text, s, u)])
    for cands, cut in ((levels[0], False), (levels[1], True)):
        p = _search(cands, ok, after, est, horizon)
        if p is not None:
            return p, cut
    p = _search(range(after + 1, u + 1), ok, after, est, horizon)
    return (p, True) if p is not None else None


def split_to_fit(ctx: SpanContext, a: int, b: int, fits: Callable[[int, int, int], bool],
                 relaxed: Callable[[int, int, int], bool] | None = None,
                 reach: Reach | None = None) -> list[Piece]:
    """A span that breaks a budget, cut into pieces that keep it: between lines where possible."""
    text = ctx.text
    ends = [m.end() for m in _LINE_END_RE.finditer(text, a, b)]
    ta, tb = trim(text, a, b)
    if not ends or ends[-1] != tb:
        ends.append(tb)
    return fit_spans(text, ta, [e for e in ends if e > ta], fits, relaxed, reach=reach)
