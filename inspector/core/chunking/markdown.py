"""`markdown`: structure first, size second.

Headings stay attached to the text after them (a heading with no text of its own joins the next
section's chunk); blocks are packed up to the soft cap; tables, code blocks, lists and quotes stay
whole up to the hard cap; a bigger block is split between its rows, items or lines (a table's
header row is carried in every later piece's context prefix), a long paragraph between sentences,
and only a single unit over the soft cap is cut into token windows. A chunk is over budget only
above the hard cap.
"""

from __future__ import annotations

from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.common import SpanContext, trim
from inspector.core.chunking.fixed_tokens import token_windows
from inspector.core.chunking.params import Param, Strategy
from inspector.core.documents.document import Document
from inspector.core.text.structure import Block, line_starts, sentence_spans

ATOMIC = frozenset({"table", "code", "list", "blockquote", "html", "front_matter"})

# One planned chunk: start, end, flags, prefix extra (table header for continued tables).
_Plan = tuple[int, int, frozenset[str], str]


def _units_of(ctx: SpanContext, block: Block) -> list[tuple[int, int]]:
    """Where a block may be split: rows, items, lines or sentences."""
    text = ctx.text
    if block.kind == "table" and len(block.children) > 1:
        # The header row and the delimiter line travel together as the first unit.
        first = (block.start, block.children[1].start)
        return [first] + [(c.start, c.end) for c in block.children[1:]]
    if block.kind == "list" and len(block.children) > 1:
        return [(c.start, c.end) for c in block.children]
    if block.kind == "paragraph":
        return sentence_spans(text, block.start, block.end)
    # Lines for code, quotes, HTML, front matter and single-item lists.
    ls = line_starts(text[block.start:block.end])
    units = []
    for i in range(len(ls) - 1):
        a, b = trim(text, block.start + ls[i], block.start + ls[i + 1])
        if a < b:
            units.append((a, b))
    return units or [(block.start, block.end)]


def _split_unit(ctx: SpanContext, a: int, b: int, size: int) -> list[tuple[int, int, bool]]:
    """A unit over the soft cap: its sentences if it has several, else token windows."""
    sents = sentence_spans(ctx.text, a, b)
    if len(sents) > 1:
        out: list[tuple[int, int, bool]] = []
        for sa, sb in sents:
            if ctx.count(sa, sb) > size:
                out.extend((x, y, True) for x, y in token_windows(ctx.tokens, sa, sb, size, 0))
            else:
                out.append((sa, sb, False))
        return out
    return [(x, y, True) for x, y in token_windows(ctx.tokens, a, b, size, 0)]


def _pack(ctx: SpanContext, units: list[tuple[int, int]], first_start: int, size: int,
          header: str, header_tokens: int) -> list[_Plan]:
    """Consecutive units packed up to `size`; the first piece starts at `first_start` (so it keeps
    the heading run before the block); later pieces of a table carry the header in the prefix."""
    fine: list[tuple[int, int, bool]] = []
    for a, b in units:
        if ctx.count(a, b) > size:
            fine.extend(_split_unit(ctx, a, b, size))
        else:
            fine.append((a, b, False))
    plans: list[_Plan] = []
    i = 0
    n = len(fine)
    start = first_start
    while i < n:
        budget = size if not plans else max(size - header_tokens, 1)
        j = i + 1
        while j < n and ctx.count(start, fine[j][1]) <= budget:
            j += 1
        cut = any(f for _a, _b, f in fine[i:j])
        plans.append((start, fine[j - 1][1], frozenset({"cut_mid_sentence"}) if cut else frozenset(),
                      header if plans else ""))
        if j < n:
            start = fine[j - 1][1]
        i = j
    return plans


def plan_markdown(ctx: SpanContext, size: int, hard_cap: int) -> list[_Plan]:
    """The chunk plan for a Markdown document (spans before final trimming)."""
    blocks = ctx.structure.blocks
    plans: list[_Plan] = []
    cur_start: int | None = None
    cur_end = 0
    cur_content = False
    cur_flags: frozenset[str] = frozenset()
    cur_extra = ""

    def close() -> None:
        nonlocal cur_start, cur_content, cur_flags, cur_extra
        if cur_start is not None:
            plans.append((cur_start, cur_end, cur_flags, cur_extra))
        cur_start, cur_content, cur_flags, cur_extra = None, False, frozenset(), ""

    for block in blocks:
        if block.kind == "heading":
            if cur_content:
                close()
            if cur_start is None:
                cur_start = block.start
            cur_end = block.end
            continue
        if cur_start is not None and ctx.count(cur_start, block.end) <= size:
            cur_end, cur_content = block.end, True
            continue
        if cur_content:
            close()
        first = cur_start if cur_start is not None else block.start
        whole = ctx.count(first, block.end)
        if whole <= size or (block.kind in ATOMIC and whole <= hard_cap):
            # Fits, or an atomic block kept whole between the soft and the hard cap: it stays
            # alone so it does not drag neighbours over the soft cap.
            cur_start, cur_end, cur_content = first, block.end, True
            if whole > size:
                close()
            continue
        header, header_tokens = "", 0
        if block.kind == "table" and len(block.children) > 1:
            ha, hb = trim(ctx.text, block.start, block.children[1].start)
            header = ctx.text[ha:hb]
            header_tokens = ctx.count(ha, hb) + 1
        pieces = _pack(ctx, _units_of(ctx, block), first, size, header, header_tokens)
        cur_start = None
        for piece in pieces[:-1]:
            plans.append(piece)
        last = pieces[-1]
        # The last piece stays open: a short paragraph after a table (its caveat) can join it.
        cur_start, cur_end, cur_flags, cur_extra = last[0], last[1], last[2], last[3]
        cur_content = True
        if ctx.count(last[0], last[1]) > size:
            close()
    close()
    return plans


def markdown(doc: Document, params: dict) -> tuple[Chunk, ...]:
    ctx = SpanContext(doc)
    size, hard_cap = params["size"], params["hard_cap"]
    if doc.kind != "markdown" or not ctx.structure.blocks:
        from inspector.core.chunking.recursive import recursive_spans

        fallback = recursive_spans(doc.text, 0, len(doc.text), ctx.count, size, 0)
        return tuple(ctx.make(fallback, budget=hard_cap))
    plans = plan_markdown(ctx, size, hard_cap)
    # Contiguity: each chunk starts where the previous one ended (then trimmed), so text outside
    # every block (link definitions, stray lines) is never dropped.
    text = ctx.text
    spans: list[tuple[int, int]] = []
    flags: list[frozenset[str]] = []
    extras: list[str] = []
    prev_end = 0
    for k, (a, b, f, extra) in enumerate(plans):
        end = len(text) if k == len(plans) - 1 else b
        ta, tb = trim(text, min(prev_end, a), end)
        prev_end = max(b, prev_end)
        if ta < tb:
            spans.append((ta, tb))
            flags.append(f)
            extras.append(extra)
    return tuple(ctx.make(spans, budget=hard_cap, extra_flags=flags, prefix_extra=extras))


STRATEGY = Strategy(
    "markdown", markdown,
    (
    Param("size", "tokens", 256, 16, 8192, 8, "Soft cap: blocks are packed up to this many tokens",
          role="size", practical=(16, 4096), scale="log2"),
    Param("hard_cap", "tokens", 512, 16, 16384, 8,
          "Tables, code, lists and quotes stay whole up to this; chunks above it are over budget",
          at_least="size", practical=(64, 8192), scale="log2"),
),
    "Structure first, size second: headings attached to their sections, tables, code and lists kept "
   "whole up to a hard cap, big tables split between rows with the header carried along.",
)
