"""`parent_child`: small children are matched, their big parents are returned.

Parents come from the `markdown` strategy (or `recursive` for plain text) at `parent_size`;
children are the `recursive` split of each parent at `child_size`. Both are spans; every child
carries its parent's id, and its context prefix is its parent's.
"""

from __future__ import annotations

from dataclasses import replace

from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.common import SpanContext
from inspector.core.chunking.params import Param, Strategy
from inspector.core.chunking.recursive import recursive_spans
from inspector.core.documents.document import Document


def parent_child(doc: Document, params: dict) -> tuple[Chunk, ...]:
    from inspector.core.chunking.markdown import markdown

    ctx = SpanContext(doc)
    psize = params["parent_size"]
    parents = markdown(doc, {"size": psize, "hard_cap": psize})
    out: list[Chunk] = []
    for parent in parents:
        pid = len(out)
        out.append(replace(parent, id=pid, role="parent"))
        spans = recursive_spans(doc.text, parent.start, parent.end, ctx.count,
                                params["child_size"], params["child_overlap"])
        children = ctx.make(spans, budget=params["child_size"], role="child", first_id=len(out),
                            parent_ids=[pid] * len(spans))
        out.extend(replace(c, prefix=parent.prefix) for c in children)
    return tuple(out)


STRATEGY = Strategy(
    "parent_child", parent_child,
    (
    Param("parent_size", "tokens", 1024, 32, 16384, 16, "Size of the parents returned to the model",
          role="size", practical=(64, 8192), scale="log2"),
    Param("child_size", "tokens", 128, 16, 4096, 8, "Size of the children that are matched",
          less_than="parent_size", practical=(16, 2048), scale="log2"),
    Param("child_overlap", "tokens", 0, 0, 2048, 8, "Overlap between neighbouring children",
          role="overlap", less_than="child_size", scale="log2", practical_share=0.5),
),
    "Small children (matched) inside big parents (returned); both are spans of the text.",
)
