"""What is wrong with a configuration's chunks, found without a gold set.

A gold set tells whether one configuration retrieves better than another, but it takes questions,
and with 30 of them the difference between a broken and a good pipeline can still look like
noise (issue 29: from `fixed_tokens` 512/0, 46 of 50 chunks cut by the embedder, the advice said
"keep current" on every split while the default gained 13-17 points on unseen questions). Some
faults need no questions at all: the embedder silently drops the tail of a chunk longer than its
limit, a stub of a heading outranks the section it introduces, a table piece without its header
row has no column names, a chunk without its heading path loses the topic, overlap pays twice for
the same text, duplicated chunks crowd out others in the top k. Each is measured on the chunks
themselves and reported with the setting that removes it.

`findings(docs, chunks_by_doc, config)` -> tuple of `Finding`, the most harmful first, each saying
how much it affects `config.retriever` (`affects`: the embedder's cut touches dense fully, hybrid
partly, BM25 not at all); `fixed_by(current, candidate)` names the faults a candidate removes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from inspector.core.chunking.annotate import annotate
from inspector.core.chunking.chunk import STUB_TOKENS, Chunk
from inspector.core.chunking.registry import get_strategy
from inspector.core.documents.document import Document
from inspector.core.text.embed_view import HEADER_KEY, VIEW_KEY
from inspector.core.text.structure import structure_of

if TYPE_CHECKING:
    from inspector.core.evaluation.config import EvalConfig
    from inspector.core.evaluation.metrics import QuestionResult

#: Kinds in the order they are listed (the most harmful first).
KINDS = ("truncated_by_embedder", "split_table_without_header", "no_heading_context", "stub",
         "duplicated_text", "overlap_inflation")

#: A kind is reported at or above this share of the chunks (for overlap: extra embedded text
#: over the document's). Below it the fault is rare enough to be a matter of taste.
THRESHOLDS: Mapping[str, float] = {
    "truncated_by_embedder": 0.05,
    "split_table_without_header": 0.02,
    "no_heading_context": 0.25,
    "stub": 0.15,
    "duplicated_text": 0.03,
    "overlap_inflation": 0.20,
}

#: How much a fault touches a retriever: "full" (everything the retriever reads has it), "partial"
#: (one of its halves reads it), "none" (the retriever never reads what is wrong).
AFFECTS = ("full", "partial", "none")


def affects(kind: str, retriever: str) -> str:
    """How much a finding of `kind` touches `retriever` (one of `AFFECTS`).

    Only the embedder's cut depends on the retriever: BM25 indexes the whole span, so the tail the
    embedder drops costs it nothing, and hybrid reads the whole span in its BM25 half and the cut
    vector in its dense half. Measured (benchmarks/README.md, "Advice from a broken start"): on
    the public set the default beats `fixed_tokens` 512/0 and `fixed_chars` 2000/0 on unseen
    questions by +12.6 and +13.5 points with dense, +3.4 and +5.3 with hybrid, +0.2 and +2.7 with
    BM25; on Chroma's small corpora the cut starts beat the default with every retriever (BM25
    by 3.9 points). The other faults are in the text both halves read."""
    if kind != "truncated_by_embedder" or retriever == "dense":
        return "full"
    return "partial" if retriever == "hybrid" else "none"


def affects_note(f: Finding, retriever: str) -> str:
    """"" for a fault that touches everything `retriever` reads, else why it touches it less."""
    if f.affects == "partial":
        return (f"partly affects {retriever}: only its dense half reads the cut vector, its BM25 half "
                "reads the whole chunk")
    if f.affects == "none":
        return f"does not affect {retriever}: it reads the whole chunk"
    return ""


@dataclass(frozen=True, slots=True)
class Finding:
    """One fault of the current chunks and the setting that removes it."""

    kind: str
    """One of `KINDS`."""
    share: float
    """Share of the embedded chunks with the fault (0..1); for overlap_inflation the extra
    embedded text over the document's own (0.5: half the document embedded twice)."""
    detail: str
    """What was measured, in a sentence: counts and what the fault costs."""
    fix: str
    """The setting that removes it, in words a user can apply ("size <= 180 tokens ...")."""
    fix_params: Mapping[str, Any] | None = None
    """The strategy parameters (or {"with_prefix": True}) of `fix`, when it is one setting."""
    affects: str = "full"
    """How much the fault touches the retriever it was measured for (`affects()`): "full" and
    "partial" findings can license a switch (a partial one only with a likely gain, see
    `evaluator.recommend`), a "none" finding is listed but never does."""
    retriever: str = ""
    """The retriever `affects` is about (the configuration's)."""
    evidence: CutEvidence | None = None
    """What the gold set shows of the fault, where it can (`cut_evidence`, the embedder's cut
    only): how often the questions answered only in the text the embedder never reads were hit,
    against the others. Information beside the finding, not a reason to switch (measured: it
    separated no corpus where the cut costs from one where it does not)."""

    @property
    def counts(self) -> bool:
        """The fault may license a switch: it touches the retriever."""
        return self.affects != "none"

    @property
    def note(self) -> str:
        """"" when the fault touches everything the retriever reads and the gold set has no
        figure on it, else clauses saying how much it touches it and what the gold set shows."""
        parts = [affects_note(self, self.retriever)]
        if self.evidence is not None and self.counts:
            parts.append(f"on the gold set, {self.evidence.text()}")
        return "; ".join(p for p in parts if p)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "share": round(self.share, 4), "detail": self.detail, "fix": self.fix,
                "fix_params": None if self.fix_params is None else dict(self.fix_params),
                "affects": self.affects, "retriever": self.retriever, "note": self.note or None,
                "evidence": None if self.evidence is None else self.evidence.to_dict()}


_WS = re.compile(r"\s+")


def _size_param(config: EvalConfig) -> tuple[str | None, str, Any]:
    """(name, unit, value) of the strategy's size parameter, (None, "", None) without one."""
    p = get_strategy(config.strategy).param_for_role("size")
    if p is None:
        return None, "", None
    return p.name, p.unit, config.params.get(p.name)


def _length_in(c: Chunk, unit: str) -> float | None:
    if unit.startswith("token"):
        return float(c.token_count)
    if unit.startswith("char"):
        return float(c.end - c.start)
    return None


def _round_down(x: float) -> int:
    """A round size at or below x (multiples of 16 under 256, of 32 above: the slider's notches)."""
    step = 16 if x < 256 else 32
    return max(step, int(x // step) * step)


def _truncation(chunks: Sequence[Chunk], config: EvalConfig, limit: int | None) -> Finding | None:
    counted = [c for c in chunks if c.role != "parent"]
    cut = [c for c in counted if "truncated_by_embedder" in c.flags]
    if not counted or len(cut) / len(counted) < THRESHOLDS["truncated_by_embedder"]:
        return None
    pieces = sum(c.embed_tokens or 0 for c in counted)
    dropped = sum(c.embed_dropped for c in counted)
    detail = (f"{len(cut)} of {len(counted)} chunks are longer than the embedder reads "
              f"({limit} word pieces); it never reads {dropped / pieces:.0%} of the embedded text"
              if pieces else f"{len(cut)} of {len(counted)} chunks are cut by the embedder")
    name, unit, size = _size_param(config)
    fix_params: dict[str, Any] | None = None
    fix = "a smaller chunk size, or markdown (it keeps chunks within the embedder's limit)"
    if name is not None and isinstance(size, int | float) and limit:
        # Word pieces per unit of size, measured on these chunks; keep room for the prefix.
        ratios = sorted((c.embed_tokens or 0) / length for c in counted
                        if (length := _length_in(c, unit)) and c.embed_tokens)
        if ratios:
            ratio = ratios[int(0.9 * (len(ratios) - 1))]
            fit = _round_down(0.9 * limit / ratio)
            if fit < size:
                fix_params = {name: fit}
                fix = (f"{name} <= {fit} {unit} (its chunks fit the embedder's {limit} word pieces), "
                       "or markdown")
    return Finding("truncated_by_embedder", len(cut) / len(counted), detail, fix, fix_params)


def _table_headers(doc: Document) -> list[tuple[int, int, str]]:
    """(start, end, header line) of every table of the document."""
    out = []
    for b in structure_of(doc).blocks:
        if b.kind == "table":
            line_end = doc.text.find("\n", b.start, b.end)
            header = doc.text[b.start:line_end if line_end >= 0 else b.end].strip()
            out.append((b.start, b.end, header))
    return out


def _headerless(doc: Document, chunks: Sequence[Chunk], with_prefix: bool) -> int:
    """Chunks holding rows of a table but neither its header row in the span nor, embedded, in
    the prefix: rows without column names."""
    tables = _table_headers(doc)
    if not tables:
        return 0
    n = 0
    for c in chunks:
        if c.role == "parent" or "split_table" not in c.flags:
            continue
        if c.meta and c.meta.get(HEADER_KEY) and c.meta.get(VIEW_KEY, "raw") != "raw":
            continue  # the embedding view puts the lost header row back in front of the rows

        for start, end, header in tables:
            if start < c.end and end > c.start and start < c.start:
                # The table starts before the chunk: its header row is not in the span.
                if not (with_prefix and header and header in c.prefix):
                    n += 1
                break
    return n


@dataclass(frozen=True, slots=True)
class _Measured:
    """What the finding steps read: the annotated chunks of every document, and the counts that
    need the documents themselves (tables, heading paths, the document's own tokens)."""

    docs: Sequence[Document]
    chunks_by_doc: Mapping[str, Sequence[Chunk]]
    """As annotated here (word pieces filled in), by document id."""
    counted: Sequence[Chunk]
    """The embedded chunks (parents excluded), over all documents."""
    headerless: int
    no_context: int
    doc_tokens: int


def annotated(docs: Sequence[Document], chunks_by_doc: Mapping[str, Sequence[Chunk]], with_prefix: bool,
              limit: int) -> dict[str, Sequence[Chunk]]:
    """The documents' chunks measured in the embedder's word pieces (`annotate`: what is sent,
    where the embedder stops reading), as `findings` and `cut_evidence` read them; chunks that
    already are are kept as they are. Documents without chunks are left out."""
    out: dict[str, Sequence[Chunk]] = {}
    for doc in docs:
        chunks = chunks_by_doc.get(doc.doc_id, ())
        if not chunks:
            continue
        if any(c.embed_tokens is None for c in chunks if c.role != "parent"):
            chunks = annotate(doc, chunks, with_prefix=with_prefix, limit=limit)
        out[doc.doc_id] = chunks
    return out


def _measure(docs: Sequence[Document], chunks_by_doc: Mapping[str, Sequence[Chunk]], with_prefix: bool,
             limit: int) -> _Measured:
    from inspector.core.text.tokens import token_index

    annotated_by_doc = annotated(docs, chunks_by_doc, with_prefix, limit)
    headerless = no_context = doc_tokens = 0
    for doc in docs:
        chunks = annotated_by_doc.get(doc.doc_id)
        if chunks is None:
            continue
        doc_tokens += len(token_index(doc))
        headerless += _headerless(doc, chunks, with_prefix)
        no_context += sum(1 for c in chunks if c.role != "parent" and "no_heading" in c.flags
                          and c.heading_path and not (with_prefix and c.prefix))
    counted = [c for chunks in annotated_by_doc.values() for c in chunks if c.role != "parent"]
    return _Measured(docs, annotated_by_doc, counted, headerless, no_context, doc_tokens)


def _split_tables(m: _Measured, config: EvalConfig) -> Finding | None:
    n = len(m.counted)
    if m.headerless / n < THRESHOLDS["split_table_without_header"]:
        return None
    fix = ("markdown (it keeps a table whole or repeats its header row in each piece's prefix)"
           if config.strategy != "markdown" else "embed the prefix (with_prefix on)")
    return Finding("split_table_without_header", m.headerless / n,
                   f"{m.headerless} of {n} chunks hold table rows without the table's header row, "
                   "so the model sees values without column names", fix,
                   {"with_prefix": True} if config.strategy == "markdown" else None)


def _no_heading_context(m: _Measured, config: EvalConfig) -> Finding | None:
    n = len(m.counted)
    if m.no_context / n < THRESHOLDS["no_heading_context"]:
        return None
    if not config.with_prefix:
        fix, params = "embed the heading path (with_prefix on)", {"with_prefix": True}
    else:
        fix, params = "markdown (its chunks start at headings and carry their path)", None
    return Finding("no_heading_context", m.no_context / n,
                   f"{m.no_context} of {n} chunks lie under a heading but carry neither it nor "
                   "its path, so a question naming the section's topic may miss them", fix, params)


def _stubs(m: _Measured, config: EvalConfig) -> Finding | None:
    n = len(m.counted)
    stubs = sum(1 for c in m.counted if c.token_count < STUB_TOKENS)
    if stubs / n < THRESHOLDS["stub"]:
        return None
    name, _unit, _size = _size_param(config)
    floor = config.params.get("min_tokens")
    params: dict[str, Any] | None = None
    if isinstance(floor, int) and floor < STUB_TOKENS:
        fix, params = f"min_tokens >= {STUB_TOKENS} (merges stubs into a neighbour)", {"min_tokens": STUB_TOKENS}
    elif name is not None:
        fix = f"a larger {name}, or markdown (it merges stubs into a neighbour)"
    else:
        fix = "markdown (it merges stubs into a neighbour)"
    return Finding("stub", stubs / n,
                   f"{stubs} of {n} chunks are under {STUB_TOKENS} tokens: a heading or a lead-in "
                   "alone, whose short vectors outrank the content they introduce", fix, params)


def _duplicates(m: _Measured, config: EvalConfig) -> Finding | None:
    n = len(m.counted)
    seen: set[str] = set()
    dupes = 0
    for doc in m.docs:
        for c in m.chunks_by_doc.get(doc.doc_id, ()):
            if c.role == "parent":
                continue
            key = _WS.sub(" ", doc.text[c.start:c.end]).strip().lower()
            if key in seen:
                dupes += 1
            seen.add(key)
    if dupes / n < THRESHOLDS["duplicated_text"]:
        return None
    return Finding("duplicated_text", dupes / n,
                   f"{dupes} of {n} chunks repeat another chunk's text word for word; copies take "
                   "places in the top k that other chunks could fill",
                   "remove the repeated passages from the documents (boilerplate, navigation)")


def _overlap(m: _Measured, config: EvalConfig) -> Finding | None:
    embedded = sum(c.token_count for c in m.counted)
    extra = embedded / m.doc_tokens - 1.0 if m.doc_tokens else 0.0
    if extra < THRESHOLDS["overlap_inflation"]:
        return None
    o = get_strategy(config.strategy).param_for_role("overlap")
    overlap = config.params.get(o.name) if o is not None else None
    params: dict[str, Any] | None = None
    if o is not None and overlap:
        fix, params = f"{o.name} = 0 (or smaller)", {o.name: 0}
    else:
        fix = "a strategy without overlap"
    return Finding("overlap_inflation", extra,
                   f"{embedded:,} tokens embedded for a {m.doc_tokens:,}-token text: "
                   f"{extra:.0%} of it paid for twice (indexing cost, near-duplicate hits)", fix, params)


def findings(docs: Sequence[Document], chunks_by_doc: Mapping[str, Sequence[Chunk]],
             config: EvalConfig, *, limit: int | None = None) -> tuple[Finding, ...]:
    """The faults of `config`'s chunks of `docs` (`chunks_by_doc`, as the chunk store gives them),
    the most harmful first, each saying how much it `affects` `config.retriever`. Chunks are
    measured in the embedder's word pieces here (`annotate`) unless they already are; `limit`:
    the embedder's, default the loaded model's."""
    from inspector.core.text.wordpieces import max_seq_length

    limit = max_seq_length() if limit is None else limit
    m = _measure(docs, chunks_by_doc, bool(config.with_prefix), limit)
    if not m.counted:
        return ()
    found = [_truncation(m.counted, config, limit)]
    found += [step(m, config) for step in (_split_tables, _no_heading_context, _stubs, _duplicates, _overlap)]
    out = [replace(f, affects=affects(f.kind, config.retriever), retriever=config.retriever)
           for f in found if f is not None]
    return tuple(sorted(out, key=lambda f: KINDS.index(f.kind)))


@dataclass(frozen=True, slots=True)
class CutEvidence:
    """The gold set's figures on the embedder's cut: hits of the questions whose answer lies only
    in text the embedder never reads (`tail`), and of those whose answer it reads (`read`), in the
    configuration's own retrieval results."""

    tail_hits: int
    tail: int
    read_hits: int
    read: int

    def gap(self) -> tuple[float, float, float] | None:
        """How much more often the other questions were hit than the tail ones (points of hit
        rate, read - tail) and its 95 % bootstrap interval (each group's questions drawn with
        replacement on their own: the groups are different questions); None with a group empty."""
        if not self.tail or not self.read:
            return None
        from inspector.core.evaluation.uncertainty import LEVEL, resampled_means

        def means(hits: int, n: int, seed: int) -> np.ndarray:
            return resampled_means(np.array([1.0] * hits + [0.0] * (n - hits))[None, :], seed=seed)[:, 0]

        diff = means(self.read_hits, self.read, 1) - means(self.tail_hits, self.tail, 2)
        tail = (1.0 - LEVEL) / 2.0
        lo, hi = np.quantile(diff, [tail, 1.0 - tail])
        return self.read_hits / self.read - self.tail_hits / self.tail, float(lo), float(hi)

    def text(self) -> str:
        def rate(h: int, n: int) -> str:
            return f"{h} of {n}" + (f" ({h / n:.0%})" if n else "")
        out = (f"questions answered only in the text it never reads were hit {rate(self.tail_hits, self.tail)}, "
               f"the others {rate(self.read_hits, self.read)}")
        gap = self.gap()
        if gap is not None:
            out += (f": the others {100 * gap[0]:+.0f} pts, 95% interval "
                    f"[{100 * gap[1]:+.0f}, {100 * gap[2]:+.0f}]")
        return out

    def to_dict(self) -> dict[str, Any]:
        gap = self.gap()
        return {"tail_hits": self.tail_hits, "tail": self.tail, "read_hits": self.read_hits, "read": self.read,
                "gap": None if gap is None else round(gap[0], 4),
                "gap_ci": None if gap is None else [round(gap[1], 4), round(gap[2], 4)]}


def cut_evidence(docs: Sequence[Document], chunks_by_doc: Mapping[str, Sequence[Chunk]], config: EvalConfig,
                 results: Sequence[QuestionResult], *, limit: int | None = None) -> CutEvidence:
    """What `config`'s own retrieval results (`results`, one per gold question, scored on
    `chunks_by_doc`) show of the embedder's cut: how many questions have their answer only in the
    tails it drops, and how often those were hit against the others. A finding measured without
    questions cannot say whether the tails hold what users ask about; this says it for the user's
    own questions. It is shown, not weighed: on Chroma's small corpora, where the cut starts beat
    the default, and on the public set, where they lose 13 points, the tail questions were hit
    less often alike (56-82 % against 92-100 % with dense; benchmarks/README.md, issue 29)."""
    from inspector.core.evaluation.metrics import unread_answers
    from inspector.core.text.wordpieces import max_seq_length

    limit = max_seq_length() if limit is None else limit
    chunks = annotated(docs, chunks_by_doc, bool(config.with_prefix), limit)
    where = unread_answers([r.question for r in results], docs, chunks)
    tail = [r.hit for r, w in zip(results, where, strict=True) if w is True]
    read = [r.hit for r, w in zip(results, where, strict=True) if w is False]
    return CutEvidence(sum(tail), len(tail), sum(read), len(read))


def with_evidence(found: Sequence[Finding], evidence: CutEvidence | None) -> tuple[Finding, ...]:
    """`found` with the gold set's figures on the embedder's cut beside its finding."""
    if evidence is None:
        return tuple(found)
    return tuple(replace(f, evidence=evidence) if f.kind == "truncated_by_embedder" else f for f in found)


def fixed_by(current: Sequence[Finding], candidate: Sequence[Finding]) -> tuple[str, ...]:
    """Kinds among `current`'s findings that `candidate` no longer has, or has at under half the
    share (a fault much reduced counts as fixed)."""
    theirs = {f.kind: f.share for f in candidate}
    return tuple(f.kind for f in current if theirs.get(f.kind, 0.0) < 0.5 * f.share)


def findings_text(found: Sequence[Finding], *, indent: str = "  ") -> str:
    """One line per finding: share, what was measured, the fix."""
    if not found:
        return f"{indent}none: no chunk is cut by the embedder, and stubs, split tables, overlap and copies are rare"
    return "\n".join(f"{indent}{f.kind} ({f.share:.0%}): {f.detail}"
                     f"{f' ({f.note})' if f.note else ''}. Fix: {f.fix}." for f in found)


__all__ = ["AFFECTS", "KINDS", "THRESHOLDS", "CutEvidence", "Finding", "affects", "annotated", "cut_evidence",
           "findings",
           "findings_text", "fixed_by", "with_evidence"]
