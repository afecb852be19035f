"""`markdown`: structure first, size second, and never more than the embedder reads.

Headings stay attached to the text after them (a heading with no text of its own joins the next
section's chunk), and so does a lead-in, the paragraph ending in ":" that introduces a list, table
or code block. Blocks are packed up to the soft cap; tables, code blocks, lists and quotes stay
whole up to the hard cap; a bigger block is split between its rows, items or lines (a table's
header row and a list's lead-in sentence are carried in every later piece's context prefix), a long
paragraph between sentences, and only as a last resort between words. A chunk is over budget only
above the hard cap.

`fit_embedder` (on by default) makes the embedder's limit a second budget: no chunk's embedded
text (context prefix + span) is longer than the model reads (256 word pieces for all-MiniLM-L6-v2),
so a block that would be is split as above. Testers found every miss of this strategy in chunks
the embedder cut short. `min_tokens` (at most half of `size`) is the floor below which a chunk
merges into its neighbour while its section goes on: forward into the block that follows, else
back into the chunk before.
"""

from __future__ import annotations

from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.common import SpanContext, trim
from inspector.core.chunking.fit import EmbedBudget, budgeted_context, fit_spans, split_to_fit, token_reach
from inspector.core.documents.document import Document
from inspector.core.runtime.lru import SizedLRU
from inspector.core.text.structure import Block, line_starts, sentence_spans
from inspector.core.text.wordpieces import prefix_pieces

ATOMIC = frozenset({"table", "code", "list", "blockquote", "html", "front_matter"})

#: Blocks a lead-in paragraph (one ending in ":") introduces.
INTRODUCED = frozenset({"list", "table", "code"})

#: Closing marks after a lead-in's colon ("**Note:**", "(as follows:)").
_LEAD_CLOSERS = frozenset("*_)]`\"'\u2019\u201d \t")

_CUT = frozenset({"cut_mid_sentence"})

# One planned chunk: start, end, flags, prefix extra (table header, list lead-in).
_Plan = tuple[int, int, frozenset[str], str]


#: Unit ends of the blocks split so far, per document (content hash): they depend on the text
#: alone, not on the sizes, so a slider drag finds them made. At most 16 documents and ~16 M
#: characters of them (sized by the document's length).
_UNITS: SizedLRU[dict[tuple[int, int], tuple[int, ...]]] = SizedLRU(16, 16_000_000)


def _unit_ends(ctx: SpanContext, block: Block) -> tuple[int, ...]:
    """Where a block may be split (`_find_unit_ends`), remembered per document and block: a long
    paragraph's sentences were found again at every slider step, ~15% of a `markdown` re-chunk of
    a document of long paragraphs (Chroma's corpora; issue 31's second look at real text)."""
    doc = ctx.doc
    known = _UNITS.get_or_make((doc.sha256, doc.kind), dict, len(doc.text))
    key = (block.start, block.end)
    ends = known.get(key)
    if ends is None:
        ends = known[key] = tuple(_find_unit_ends(ctx, block))
    return ends


def _find_unit_ends(ctx: SpanContext, block: Block) -> list[int]:
    """Where a block may be split: after its rows, items, lines or sentences."""
    text = ctx.text
    if block.kind == "table" and len(block.children) > 1:
        # The header row and the delimiter line travel together as the first unit.
        ends = [trim(text, block.start, block.children[1].start)[1]] + [c.end for c in block.children[1:]]
    elif block.kind == "list" and len(block.children) > 1:
        ends = [c.end for c in block.children]
    elif block.kind == "paragraph":
        ends = [b for _a, b in sentence_spans(text, block.start, block.end)]
    else:
        # Lines for code, quotes, HTML, front matter and single-item lists.
        ls = line_starts(text[block.start:block.end])
        ends = []
        for i in range(len(ls) - 1):
            a, b = trim(text, block.start + ls[i], block.start + ls[i + 1])
            if a < b:
                ends.append(b)
    ends = sorted({e for e in ends if block.start < e <= block.end})
    if not ends or ends[-1] != block.end:
        ends.append(block.end)
    return ends


def is_lead_in(text: str, block: Block, nxt: Block | None) -> bool:
    """A paragraph ending in ":" right before a list, table or code block: it introduces that block
    and means nothing without it."""
    if block.kind != "paragraph" or nxt is None or nxt.kind not in INTRODUCED:
        return False
    b = block.end
    while b > block.start and text[b - 1] in _LEAD_CLOSERS:
        b -= 1
    return b > block.start and text[b - 1] == ":"


class _Planner:
    """Blocks in, planned chunks out. One chunk is open at a time: [start, end), of which
    [start, content_end) is content; headings, and a lead-in waiting for its block, are not, and
    travel on with the block that follows."""

    def __init__(self, ctx: SpanContext, size: int, hard_cap: int, budget: EmbedBudget | None,
                 min_tokens: int) -> None:
        self.ctx, self.text, self.count = ctx, ctx.text, ctx.count
        # The floor never passes half the soft cap: asking for tiny chunks gets tiny chunks.
        self.size, self.hard_cap, self.budget = size, hard_cap, budget
        self.min_tokens = min(min_tokens, size // 2)
        self.plans: list[_Plan] = []
        #: Plans of headings alone (the document ends with headings): they join the chunk before.
        self.bare: set[int] = set()
        self._reset()

    def _reset(self) -> None:
        self.start: int | None = None
        self.end = 0
        self.content_end: int | None = None
        self.lead: Block | None = None
        #: When the open chunk ends with a table, list or code block after other content: where
        #: that block (with its lead-in) starts, and where the content before it ends.
        self.tail: tuple[int, int] | None = None
        self.flags: frozenset[str] = frozenset()
        self.extra = ""

    def fits(self, a: int, b: int, extra: str, cap: int) -> bool:
        """Within `cap` cl100k tokens and, when fitting, within the embedder's limit."""
        if self.count(a, b) > cap:
            return False
        return self.budget is None or self.budget.fits(a, b, extra)

    def close(self) -> None:
        if self.start is not None:
            if self.content_end is None:
                self.bare.add(len(self.plans))
            self.plans.append((self.start, self.end, self.flags, self.extra))
        self._reset()

    def heading(self, block: Block) -> None:
        if self.content_end is not None:
            self.close()
        if self.start is None:
            self.start = block.start
        self.end = block.end

    def _hand_over(self, block: Block) -> tuple[int, frozenset[str], str, int | None]:
        """The open chunk ends before `block`: emit its content and return what travels on with
        the block: (start, flags, prefix extra, end of the content carried along or None)."""
        if self.start is None:
            return block.start, frozenset(), "", None
        if self.content_end is None or self.count(self.start, self.content_end) < self.min_tokens:
            # Headings and a lead-in, or a stub while the section goes on: all of it travels.
            carried = (self.start, self.flags, self.extra, self.content_end)
            self._reset()
            return carried
        first = self.lead.start if self.lead is not None else block.start
        self.plans.append((self.start, self.content_end, self.flags, self.extra))
        self._reset()
        return first, frozenset(), "", None

    def _rebalance(self, block: Block, lead: bool) -> bool:
        """A paragraph straight after a table, list or code block (its caveat: "the fees in the table
        above are waived ...") that does not fit the open chunk takes that block along into a chunk
        of their own, when the text before the block can stand alone (not a stub) and the two fit.
        Otherwise the budget would part the caveat from its table."""
        if block.kind != "paragraph" or lead or self.tail is None or self.start is None:
            return False
        tail_start, before_end = self.tail
        if (self.count(self.start, before_end) < max(self.min_tokens, 1)
                or not self.fits(tail_start, block.end, "", self.size)):
            return False
        self.plans.append((self.start, before_end, self.flags, self.extra))
        self._reset()
        self.start, self.end, self.content_end = tail_start, block.end, block.end
        return True

    def _carry(self, lead: Block | None, block: Block) -> tuple[str, int]:
        """Context carried into later pieces of a split block: the lead-in's last sentence and a
        table's header row (prefix text, cl100k tokens it takes from the soft cap)."""
        text = self.text
        parts: list[str] = []
        tokens = 0
        limit = self.budget.limit if self.budget is not None else None
        if lead is not None:
            a, b = sentence_spans(text, lead.start, lead.end)[-1]
            sentence = " ".join(text[a:b].split())
            # Only what leaves the pieces room for their own text.
            if limit is None or prefix_pieces(sentence) <= limit // 4:
                parts.append(sentence)
                tokens += self.count(a, b) + 1
        if block.kind == "table" and len(block.children) > 1:
            ha, hb = trim(text, block.start, block.children[1].start)
            header = text[ha:hb]
            if limit is None or prefix_pieces(header) <= limit // 2:
                parts.append(header)
                tokens += self.count(ha, hb) + 1
        return "\n".join(parts), tokens

    def block(self, block: Block, nxt: Block | None) -> None:
        lead = is_lead_in(self.text, block, nxt)
        if self.start is not None and self.fits(self.start, block.end, self.extra, self.size):
            self.end = block.end
            if lead:
                self.lead = block
                return
            if block.kind in ATOMIC and self.content_end is not None:
                self.tail = (self.lead.start if self.lead is not None else block.start, self.content_end)
            else:
                self.tail = None
            self.content_end, self.lead = block.end, None
            return
        if self._rebalance(block, lead):
            return
        introducer = self.lead
        first, flags, first_extra, carried_end = self._hand_over(block)
        size = self.size
        whole_cap = self.hard_cap if block.kind in ATOMIC else size
        if self.fits(first, block.end, first_extra, whole_cap):
            # Fits, or an atomic block kept whole between the soft and the hard cap: it stays
            # alone so it does not drag neighbours over the soft cap.
            self.start, self.end, self.flags, self.extra = first, block.end, flags, first_extra
            self.content_end, self.lead = (carried_end, block) if lead else (block.end, None)
            if self.count(first, block.end) > size:
                self.close()
            return
        extra, extra_tokens = self._carry(introducer, block)
        later_cap = max(size - extra_tokens, 1)

        def fits(a: int, b: int, k: int) -> bool:
            return self.fits(a, b, first_extra, size) if k == 0 else self.fits(a, b, extra, later_cap)

        def relaxed(a: int, b: int, k: int) -> bool:
            return self.count(a, b) <= (size if k == 0 else later_cap)

        def reach(s: int, k: int, strict: bool) -> tuple[int, int]:
            piece_extra = first_extra if k == 0 else extra
            return token_reach(self.ctx, self.budget, s, size if k == 0 else later_cap,
                               self.ctx.prefix_for(s, len(self.text), piece_extra), strict)

        pieces = fit_spans(self.text, first, _unit_ends(self.ctx, block), fits, relaxed,
                           first_floor=block.start, reach=reach)
        for k, (a, b, cut) in enumerate(pieces):
            piece_flags = (flags if k == 0 else frozenset()) | (_CUT if cut else frozenset())
            piece_extra = first_extra if k == 0 else extra
            if k < len(pieces) - 1:
                self.plans.append((a, b, piece_flags, piece_extra))
                continue
            # The last piece stays open: a short paragraph after a table (its caveat) can join it.
            self.start, self.end, self.flags, self.extra = a, b, piece_flags, piece_extra
            if lead:
                # The tail of a long lead-in: it travels with the block it introduces.
                self.content_end, self.lead = (carried_end if k == 0 else None), block
            else:
                self.content_end, self.lead = b, None
            if self.count(a, b) > size:
                self.close()

    def merge_stubs(self) -> tuple[list[_Plan], list[bool]]:
        """Chunks below the floor that did not travel forward (their section ended) join the chunk
        before them when it is the same section and the two fit the hard cap; so does a run of
        headings with nothing after it. Also says which plans were measured against the budget
        (all but a run of headings left alone)."""
        ctx = self.ctx
        out: list[_Plan] = []
        measured: list[bool] = []
        for k, plan in enumerate(self.plans):
            a, b, flags, _extra = plan
            if out:
                stub = self.count(a, b) < self.min_tokens and not ctx.has_heading_inside(a, b)
                pa, _pb, pflags, pextra = out[-1]
                if (stub or k in self.bare) and self.fits(pa, b, pextra, self.hard_cap):
                    out[-1] = (pa, b, pflags | flags, pextra)
                    measured[-1] = True
                    continue
            out.append(plan)
            measured.append(k not in self.bare)
        return out, measured


def plan_markdown(ctx: SpanContext, size: int, hard_cap: int, budget: EmbedBudget | None = None,
                  min_tokens: int = 0) -> tuple[list[_Plan], list[bool]]:
    """The chunk plan for a Markdown document (spans before final trimming), and which plans were
    measured against the budgets."""
    planner = _Planner(ctx, size, hard_cap, budget, min_tokens)
    blocks = ctx.structure.blocks
    for i, block in enumerate(blocks):
        if block.kind == "heading":
            planner.heading(block)
        else:
            planner.block(block, blocks[i + 1] if i + 1 < len(blocks) else None)
    planner.close()
    return planner.merge_stubs()


def _fit(ctx: SpanContext, budget: EmbedBudget, cap: int, spans: list[tuple[int, int]],
         flags: list[frozenset[str]], extras: list[str], checked: list[bool]) -> tuple[list, list, list]:
    """Last guard of the budget: a final span over it (text outside every block joined it, or a
    plain-text document) is cut between lines, sentences, then words. Spans `checked` already
    (trimmed plans) are taken as they are."""
    out_spans, out_flags, out_extras = [], [], []
    count = ctx.count
    for (a, b), f, extra, ok in zip(spans, flags, extras, checked, strict=True):
        if ok or budget.fits(a, b, extra):
            out_spans.append((a, b))
            out_flags.append(f)
            out_extras.append(extra)
            continue

        def fits(x: int, y: int, _k: int, extra: str = extra) -> bool:
            return count(x, y) <= cap and budget.fits(x, y, extra)

        def reach(x: int, _k: int, strict: bool, extra: str = extra) -> tuple[int, int]:
            return token_reach(ctx, budget, x, cap, ctx.prefix_for(x, len(ctx.text), extra), strict)

        for x, y, cut in split_to_fit(ctx, a, b, fits, lambda x, y, _k: count(x, y) <= cap, reach):
            x, y = trim(ctx.text, x, y)
            if x < y:
                out_spans.append((x, y))
                out_flags.append(f | _CUT if cut else f)
                out_extras.append(extra)
    return out_spans, out_flags, out_extras


def markdown(doc: Document, params: dict) -> tuple[Chunk, ...]:
    ctx, budget = budgeted_context(doc, params["fit_embedder"], blocks=True)
    size, hard_cap = params["size"], params["hard_cap"]
    text = ctx.text
    if doc.kind != "markdown" or not ctx.structure.blocks:
        from inspector.core.chunking.recursive import recursive_spans

        spans = recursive_spans(text, 0, len(text), ctx.count, size, 0, lengths=ctx.counts)
        flags: list[frozenset[str]] = [frozenset()] * len(spans)
        extras = [""] * len(spans)
        checked = [False] * len(spans)
    else:
        plans, measured = plan_markdown(ctx, size, hard_cap, budget, params["min_tokens"])
        # Contiguity: each chunk starts where the previous one ended (then trimmed), so text outside
        # every block (link definitions, stray lines) is never dropped.
        spans, flags, extras, checked = [], [], [], []
        prev_end = 0
        for k, ((a, b, f, extra), was_measured) in enumerate(zip(plans, measured, strict=True)):
            end = len(text) if k == len(plans) - 1 else b
            ta, tb = trim(text, min(prev_end, a), end)
            prev_end = max(b, prev_end)
            if ta < tb:
                spans.append((ta, tb))
                flags.append(f)
                extras.append(extra)
                # Planned spans were measured (trimming adds no word piece); grown ones were not.
                checked.append(was_measured and a <= ta and tb <= b)
    if budget is not None:
        spans, flags, extras = _fit(ctx, budget, hard_cap, spans, flags, extras, checked)
    return tuple(ctx.make(spans, budget=hard_cap, extra_flags=flags, prefix_extra=extras))
