"""`sentences`: whole sentences packed up to a token budget; overlap counted in sentences."""

from __future__ import annotations

from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.common import SpanContext
from inspector.core.chunking.fixed_tokens import token_windows
from inspector.core.documents.document import Document
from inspector.core.runtime.lru import SizedLRU
from inspector.core.text.structure import sentence_spans

#: Sentence units of at most 16 documents and 32 M characters.
_UNITS: SizedLRU[tuple[list[tuple[int, int]], list[int]]] = SizedLRU(16, 32_000_000)


def sentence_units(ctx: SpanContext) -> tuple[list[tuple[int, int]], list[int]]:
    """Sentence spans and their token counts, computed once per document content."""
    def make() -> tuple[list[tuple[int, int]], list[int]]:
        spans = sentence_spans(ctx.text, markdown=ctx.doc.kind == "markdown")
        return spans, ctx.counts(spans)

    return _UNITS.get_or_make(ctx.doc.sha256 + ctx.doc.kind, make, len(ctx.text))


def pack_units(ctx: SpanContext, spans: list[tuple[int, int]], counts: list[int], size: int,
               overlap: int) -> tuple[list[tuple[int, int]], list[frozenset[str]]]:
    """Greedy packing of consecutive units up to `size` tokens (exact count of the packed span),
    restarting `overlap` units back; a unit over budget is cut into token windows."""
    out: list[tuple[int, int]] = []
    flags: list[frozenset[str]] = []
    n = len(spans)
    i = 0
    while i < n:
        if counts[i] > size:
            for a, b in token_windows(ctx.tokens, spans[i][0], spans[i][1], size, 0):
                out.append((a, b))
                flags.append(frozenset({"cut_mid_sentence"}))
            i += 1
            continue
        j = i + 1
        est = counts[i]
        while j < n and counts[j] <= size:
            est += counts[j] + 1
            if est > size and ctx.count(spans[i][0], spans[j][1]) > size:
                break
            j += 1
        # The estimate may undercount the joints: trust only an exact count.
        while j - 1 > i and ctx.count(spans[i][0], spans[j - 1][1]) > size:
            j -= 1
        out.append((spans[i][0], spans[j - 1][1]))
        flags.append(frozenset())
        if j >= n:
            break
        i = max(j - overlap, i + 1)
    return out, flags


def sentences(doc: Document, params: dict) -> tuple[Chunk, ...]:
    ctx = SpanContext(doc)
    spans, counts = sentence_units(ctx)
    packed, flags = pack_units(ctx, spans, counts, params["size"], params["overlap"])
    return tuple(ctx.make(packed, budget=params["size"], extra_flags=flags))
