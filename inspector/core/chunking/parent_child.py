"""`parent_child`: small children are matched, their big parents are returned.

Parents come from the `markdown` strategy (or `recursive` for plain text) at `parent_size`;
children are the `recursive` split of each parent at `child_size`. Both are spans; every child
carries its parent's id, and its context prefix is its parent's.

Children are what gets embedded, so with `fit_embedder` (the default) a child whose embedded text
(its parent's prefix + its span) is longer than the embedder reads is cut further, between lines,
sentences, then words. Parents are returned to the model, never embedded: they keep their size.
"""

from __future__ import annotations

from dataclasses import replace

from inspector.core.chunking.chunk import STUB_TOKENS, Chunk
from inspector.core.chunking.common import SpanContext, trim
from inspector.core.chunking.fit import EmbedBudget, budgeted_context, split_to_fit, token_reach
from inspector.core.chunking.recursive import recursive_spans
from inspector.core.documents.document import Document


def _fit_children(ctx: SpanContext, budget: EmbedBudget, prefix: str, size: int,
                  spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Children cut further where the embedder would read only part of them; in order of start
    (pieces of one child may start after the next, overlapping child did)."""
    count = ctx.count

    def fits(a: int, b: int, _k: int) -> bool:
        return count(a, b) <= size and budget.pieces_with_prefix(prefix, a, b) <= budget.limit

    out: set[tuple[int, int]] = set()
    split = False
    for a, b in spans:
        if budget.pieces_with_prefix(prefix, a, b) <= budget.limit:
            out.add((a, b))
            continue
        split = True
        for x, y, _cut in split_to_fit(ctx, a, b, fits, lambda x, y, _k: count(x, y) <= size,
                                       lambda x, _k, strict: token_reach(ctx, budget, x, size, prefix, strict)):
            x, y = trim(ctx.text, x, y)
            if x < y:
                out.add((x, y))
    return sorted(out) if split else spans


def parent_child(doc: Document, params: dict) -> tuple[Chunk, ...]:
    from inspector.core.chunking.markdown import markdown

    ctx, budget = budgeted_context(doc, params["fit_embedder"], blocks=True)  # markdown reads them
    psize, csize = params["parent_size"], params["child_size"]
    parents = markdown(doc, {"size": psize, "hard_cap": psize, "fit_embedder": False,
                             "min_tokens": STUB_TOKENS})
    out: list[Chunk] = []
    for parent in parents:
        pid = len(out)
        out.append(replace(parent, id=pid, role="parent"))
        spans = recursive_spans(doc.text, parent.start, parent.end, ctx.count, csize, params["child_overlap"],
                                lengths=ctx.counts)
        if budget is not None:
            spans = _fit_children(ctx, budget, parent.prefix, csize, spans)
        children = ctx.make(spans, budget=params["child_size"], role="child", first_id=len(out),
                            parent_ids=[pid] * len(spans))
        out.extend(replace(c, prefix=parent.prefix) for c in children)
    return tuple(out)
