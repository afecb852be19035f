"""Retrieval metrics for a gold set: hit@k, MRR, Chroma's character-level recall/precision/IoU, a
diagnosis for every miss, and what the index costs.

A hit is decided on span text only: an answer (lower-cased, whitespace collapsed) occurs inside
the span of a returned chunk (the parent, for `parent_child`). The answer's occurrences are found
once per document by a normalized search of the document text; a chunk holds the answer when an
occurrence lies inside its span, which is the same as the answer occurring in its span text.
Questions that carry only reference spans (Chroma's CSV) are hits when a returned chunk overlaps a
reference.

Recall, precision and IoU follow `BaseEvaluation._scores_from_dataset_and_retrievals` of Chroma's
chunking_evaluation, down to its helpers: the numerator is the union of the intersections of the
retrieved chunks (of the question's document) with the references; recall divides it by the summed
reference lengths, precision by the summed lengths of ALL k retrieved chunks (overlaps counted
twice, chunks of other documents included), and IoU by that same sum plus the reference characters
no retrieved chunk touched ("unused highlights").

What the model is handed costs tokens: every question records the cl100k tokens of its top-k
chunks (`context_tokens`, so that a hit rate bought with big chunks shows its price), and with a
context `budget` the top-k chunks are packed into that many tokens (`budget.pack`: whole chunks in
rank order, the one crossing the budget cut there) and `budget_hit` says whether the answer lies
in the text actually sent. Packing takes the top-k list only, as a pipeline with a fixed k does:
a budget larger than the k chunks stays partly empty.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from inspector.core.chunking.chunk import Chunk
from inspector.core.documents.document import Document
from inspector.core.evaluation.budget import document_cut, pack
from inspector.core.evaluation.gold import (
    GoldQuestion,
    GoldSet,
    normalize,
    normalized_text,
)
from inspector.core.retrieval.kinds import Retriever

if TYPE_CHECKING:
    import numpy as np

    from inspector.core.embedding.embedder import Embedder
    from inspector.core.retrieval.index import SearchIndex
else:
    from inspector.core.runtime.lazy_numpy import np

#: How deep a miss is searched again to tell a ranking miss from "not in top N".
DEEP_K = 50


class HitLike(Protocol):
    """What evaluation reads from a retrieval hit (`inspector.core.retrieval.index.Hit`)."""

    @property
    def chunk(self) -> Chunk: ...


SearchFn = Callable[[GoldQuestion, int], Sequence[Any]]


# -- Chroma's span arithmetic, as their evaluation_utils has it --------------------------------------

Range = tuple[int, int]


def sum_of_ranges(ranges: Iterable[Range]) -> int:
    return sum(end - start for start, end in ranges)


def union_ranges(ranges: Sequence[Range]) -> list[Range]:
    """Sorted, overlapping or touching ranges merged."""
    if not ranges:
        return []
    ordered = sorted(ranges, key=lambda r: r[0])
    merged = [ordered[0]]
    for start, end in ordered[1:]:
        last_start, last_end = merged[-1]
        if start <= last_end:
            merged[-1] = (last_start, max(last_end, end))
        else:
            merged.append((start, end))
    return merged


def intersect_two_ranges(a: Range, b: Range) -> Range | None:
    """The intersection, or None. Touching ranges give an empty (s, s) intersection, as in Chroma."""
    start, end = max(a[0], b[0]), min(a[1], b[1])
    return (start, end) if start <= end else None


def difference(ranges: Sequence[Range], target: Range) -> list[Range]:
    """`ranges` with `target` cut out of each (Chroma's `difference`)."""
    out: list[Range] = []
    t_start, t_end = target
    for start, end in ranges:
        if end < t_start or start > t_end:
            out.append((start, end))
        elif start < t_start and end > t_end:
            out.append((start, t_start))
            out.append((t_end, end))
        elif start < t_start:
            out.append((start, t_start))
        elif end > t_end:
            out.append((t_end, end))
    return out


@dataclass(frozen=True, slots=True)
class SpanScores:
    recall: float
    precision: float
    iou: float


def span_scores(retrieved: Sequence[tuple[str, int, int]], references: Sequence[Range],
                doc_id: str) -> SpanScores:
    """Chroma's recall, precision and IoU for one question.

    `retrieved` are (doc_id, start, end) of the k returned chunks in rank order; `references` are
    spans into document `doc_id`."""
    numerator_sets: list[Range] = []
    unused = list(references)
    for chunk_doc, c_start, c_end in retrieved:
        if chunk_doc != doc_id:
            continue
        for ref in references:
            inter = intersect_two_ranges((c_start, c_end), ref)
            if inter is not None:
                unused = difference(unused, inter)
                numerator_sets = union_ranges([inter] + numerator_sets)
    numerator = sum_of_ranges(numerator_sets)
    recall_den = sum_of_ranges(references)
    precision_den = sum_of_ranges((a, b) for _d, a, b in retrieved)
    iou_den = precision_den + sum_of_ranges(unused)
    return SpanScores(recall=numerator / recall_den if recall_den else 0.0,
                      precision=numerator / precision_den if precision_den else 0.0,
                      iou=numerator / iou_den if iou_den else 0.0)


# -- results ----------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Diagnosis:
    """Why a question missed."""

    kind: str
    """"split" (the answer straddles chunk boundaries), "ranking" (a chunk holds it but ranked
    below k), "absent" (the answer is not in the document) or "uncovered" (in the text but in no
    chunk at all)."""
    message: str
    """One line for people, e.g. "split by a boundary: the answer straddles chunks 11 and 12"."""
    chunks: tuple[str, ...] = ()
    """Keys of the chunks concerned: the straddled ones, or the chunk that holds the answer."""
    deep_rank: int | None = None
    """For ranking misses: the rank of the holding chunk in a search `deep_k` deep, if found."""


@dataclass(frozen=True, slots=True)
class QuestionResult:
    """One question's outcome."""

    question: GoldQuestion
    hit: bool
    """Some answer occurs in a returned chunk's span among the top k."""
    rank: int | None
    """1-based rank of the first returned chunk holding an answer (None: not in the top k)."""
    retrieved: tuple[str, ...]
    """Keys ("doc#id") of the returned chunks, best first."""
    recall: float | None = None
    precision: float | None = None
    iou: float | None = None
    diagnosis: Diagnosis | None = None
    """Set for every miss."""
    context_tokens: int | None = None
    """cl100k tokens of the top-k returned chunks' span text: what the model is handed."""
    budget_hit: bool | None = None
    """With a context budget: some answer lies inside the text sent (an occurrence inside one
    sent span; for reference-only questions, a sent span overlaps a reference). None without."""
    tokens_sent: int | None = None
    """With a context budget: tokens sent (at most the budget). None without."""

    @property
    def reciprocal_rank(self) -> float:
        return 1.0 / self.rank if self.rank else 0.0


@dataclass(frozen=True, slots=True)
class IndexCost:
    """What an index of these chunks costs."""

    chunks: int
    """Chunks that are embedded (children, for parent_child)."""
    embedded_tokens: int
    """Sum of the embedded chunks' token counts (span text, cl100k)."""
    document_tokens: int
    """Tokens of the documents themselves."""

    @property
    def inflation(self) -> float:
        """Embedded tokens per document token: above 1 from overlap, below from dropped text."""
        return self.embedded_tokens / self.document_tokens if self.document_tokens else 0.0


#: The metrics measured on the questions with reference spans alone (`Report.span_scope`).
SPAN_METRICS = ("recall", "precision", "iou")


@dataclass(frozen=True, slots=True)
class Report:
    """A gold set scored against one index configuration."""

    k: int
    hit_rate: float
    """Share of questions with a hit in the top k."""
    mrr: float
    """Mean reciprocal rank of the first hit (0 for misses beyond k)."""
    recall: float | None
    """Mean Chroma recall over questions with reference spans (None when none has any)."""
    precision: float | None
    iou: float | None
    questions: tuple[QuestionResult, ...]
    cost: IndexCost
    seconds: float = 0.0
    """Wall time of the evaluation (searches included)."""
    context_tokens_mean: float | None = None
    """Mean cl100k tokens of the top-k returned chunks per question (what the model is handed)."""
    budget: int | None = None
    """Context budget in cl100k tokens the top-k chunks were packed into (None: no budget)."""
    hit_at_budget: float | None = None
    """Share of questions whose answer lies in the text sent within the budget."""
    tokens_sent_mean: float | None = None
    """Mean tokens sent per question within the budget."""

    @property
    def hits(self) -> int:
        return sum(1 for q in self.questions if q.hit)

    @property
    def span_questions(self) -> int:
        """Questions with reference spans: those recall, precision and IoU are the means of."""
        return sum(1 for q in self.questions if q.recall is not None)

    def span_scope(self) -> str:
        """"" when the span metrics are over every question (or none has spans), else whose
        means they are: "11 of 64 questions". A gold set that gives spans for some questions and
        an answer string alone for the rest (the sample handbook's) showed a recall of 1.000
        beside a hit rate of 95 % (61/64), over 11 questions and 64, said nowhere."""
        m, n = self.span_questions, len(self.questions)
        return f"{m} of {n} questions" if 0 < m < n else ""

    def misses(self) -> tuple[QuestionResult, ...]:
        return tuple(q for q in self.questions if not q.hit)


# -- searching --------------------------------------------------------------------------------------

class IndexSearch:
    """`search(question, k)` over a retrieval `Index`: honours a question's `source` when the
    corpus holds several documents, and `many(questions, k)` embeds every question in one batch
    (one model call instead of one per question), then searches with the vectors; a later, deeper
    search of the same question reuses its vector."""

    def __init__(self, index: SearchIndex, *, retriever: Retriever = "dense", multi_doc: bool = True,
                 heading_prefix: Sequence[str] | None = None) -> None:
        self.index = index
        self.retriever = retriever
        self.multi_doc = multi_doc
        self.heading_prefix = heading_prefix
        self._vectors: dict[str, Any] = {}

    def _docs(self, q: GoldQuestion) -> list[str] | None:
        return [q.source] if self.multi_doc and q.source else None

    def _embedder(self) -> Embedder | None:
        """The model that embeds the questions (None: BM25, or an index without vectors)."""
        return getattr(self.index, "embedder", None) if self.retriever != "bm25" else None

    def embed(self, questions: Sequence[GoldQuestion]) -> None:
        """Embed the questions not embedded yet, as one batch."""
        embedder = self._embedder()
        if embedder is None:
            return
        todo = list(dict.fromkeys(q.question for q in questions if q.question not in self._vectors))
        if not todo:
            return
        from inspector.core.embedding.embedder import embed_texts, query_side

        vecs = embed_texts(query_side(embedder), todo, getattr(self.index, "cache", None), flush=False)
        self._vectors.update(zip(todo, vecs, strict=True))

    def __call__(self, q: GoldQuestion, k: int) -> list[Any]:
        kwargs: dict[str, Any] = {}
        vec = self._vectors.get(q.question)
        if vec is not None:
            kwargs["query_vector"] = vec
        return list(self.index.search(q.question, k, self.retriever, self._docs(q),
                                      self.heading_prefix, **kwargs))

    def many(self, questions: Sequence[GoldQuestion], k: int) -> list[list[Any]]:
        self.embed(questions)
        return [self(q, k) for q in questions]


def _search_all(search: SearchFn, questions: Sequence[GoldQuestion], k: int) -> list[list[Any]]:
    many = getattr(search, "many", None)
    if many is not None:
        return [list(h) for h in many(questions, k)]
    return [list(search(q, k)) for q in questions]


# -- evaluation -------------------------------------------------------------------------------------

class _Corpus:
    """Documents and chunks by doc_id, with each answer's occurrences cached."""

    def __init__(self, docs: Sequence[Document] | Mapping[str, Document],
                 chunks_by_doc: Mapping[str, Sequence[Chunk]]) -> None:
        items = docs.values() if isinstance(docs, Mapping) else docs
        self.docs: dict[str, Document] = {d.doc_id: d for d in items}
        self.chunks = {doc_id: tuple(cs) for doc_id, cs in chunks_by_doc.items()}
        # Chunks a search can return: everything but parent_child's children, which are matched
        # and replaced by their parents.
        self.returnable = {doc_id: tuple(c for c in cs if c.role != "child")
                           for doc_id, cs in self.chunks.items()}
        self._bounds = {doc_id: (np.fromiter((c.start for c in cs), np.int64, len(cs)),
                                 np.fromiter((c.end for c in cs), np.int64, len(cs)))
                        for doc_id, cs in self.returnable.items()}
        self._occ: dict[tuple[str, str], list[tuple[int, int]]] = {}

    def chunks_where(self, doc_id: str, spans: Sequence[tuple[int, int]], *, contain: bool) -> list[Chunk]:
        """Returnable chunks of a document that contain (or, `contain=False`, overlap) any span,
        in document order; vectorized, since a corpus may hold many thousands of chunks."""
        bounds = self._bounds.get(doc_id)
        if bounds is None or not spans:
            return []
        starts, ends = bounds
        mask = np.zeros(len(starts), dtype=bool)
        for a, b in spans:
            mask |= ((starts <= a) & (ends >= b)) if contain else ((starts < b) & (ends > a))
        cs = self.returnable[doc_id]
        return sorted((cs[i] for i in np.flatnonzero(mask)), key=lambda c: (c.start, c.end, c.id))

    def pool(self, q: GoldQuestion) -> list[str]:
        if q.source and q.source in self.docs:
            return [q.source]
        return list(self.docs)

    def occurrences(self, q: GoldQuestion) -> dict[str, list[tuple[int, int]]]:
        """Where the question's answers occur, by document (original-text spans)."""
        out: dict[str, list[tuple[int, int]]] = {}
        for doc_id in self.pool(q):
            spans: list[tuple[int, int]] = []
            for a in q.answers:
                key = (doc_id, normalize(a))
                hit = self._occ.get(key)
                if hit is None:
                    hit = normalized_text(self.docs[doc_id]).find_all(key[1])
                    self._occ[key] = hit
                spans.extend(hit)
            if spans:
                out[doc_id] = spans
        return out


def _contains_any(start: int, end: int, spans: Sequence[tuple[int, int]]) -> bool:
    return any(start <= a and b <= end for a, b in spans)


def _overlaps_any(start: int, end: int, spans: Sequence[tuple[int, int]]) -> bool:
    return any(start < b and a < end for a, b in spans)


def _holds(c: Chunk, spans: Sequence[tuple[int, int]]) -> bool:
    return _contains_any(c.start, c.end, spans)


def _overlaps(c: Chunk, spans: Sequence[tuple[int, int]]) -> bool:
    return _overlaps_any(c.start, c.end, spans)


def _matcher(q: GoldQuestion, corpus: _Corpus) -> tuple[Callable[[Chunk], bool], dict[str, list[tuple[int, int]]]]:
    """A predicate "this returned chunk answers q", and the spans it looks for, by document."""
    if q.answers:
        occ = corpus.occurrences(q)
        return (lambda c: c.doc_id in occ and _holds(c, occ[c.doc_id])), occ
    refs: dict[str, list[tuple[int, int]]] = {}
    if q.references:
        doc_id = q.source if q.source else next(iter(corpus.docs), "")
        refs[doc_id] = list(q.references)
    return (lambda c: c.doc_id in refs and _overlaps(c, refs[c.doc_id])), refs


def unread_answers(questions: Sequence[GoldQuestion], docs: Sequence[Document] | Mapping[str, Document],
                   chunks_by_doc: Mapping[str, Sequence[Chunk]]) -> list[bool | None]:
    """Per question, whether its answer lies only in text the embedder never reads: True when
    chunks hold it (as a hit counts it: an answer string inside the chunk, a reference span
    overlapping it) but none holds it in the part before its `truncated_at`; False when one
    does; None when no embedded chunk holds it. The gold set's view of the embedder's cut
    (`findings.cut_evidence`): a cut that costs retrieval shows as those questions missed more
    often than the others."""
    corpus = _Corpus(docs, chunks_by_doc)
    embedded = {doc_id: [c for c in cs if c.role != "parent"] for doc_id, cs in corpus.chunks.items()}
    out: list[bool | None] = []
    for q in questions:
        _match, spans = _matcher(q, corpus)
        within = _contains_any if q.answers else _overlaps_any  # as `_matcher` counts a hit
        held = read = False
        for doc_id, sp in spans.items():
            for c in embedded.get(doc_id, ()):
                if not within(c.start, c.end, sp):
                    continue
                held = True
                cut = c.truncated_at if c.truncated_at is not None and c.start <= c.truncated_at < c.end else c.end
                if within(c.start, cut, sp):
                    read = True
                    break
            if read:
                break
        out.append(None if not held else not read)
    return out


def _ids(chunks: Sequence[Chunk], multi: bool) -> str:
    names = [c.key if multi else str(c.id) for c in chunks]
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def _diagnose(q: GoldQuestion, corpus: _Corpus, matches: Callable[[Chunk], bool],
              spans: dict[str, list[tuple[int, int]]], holders: list[Chunk],
              deep: Sequence[Any] | None, deep_k: int) -> Diagnosis:
    multi = len(corpus.docs) > 1
    where = "the document" if (q.source or not multi) else "any document"
    if not spans:
        if not q.answers:
            return Diagnosis("absent", "no reference span to look for")
        return Diagnosis("absent", f"answer not in {where}")
    if not holders:
        doc_id, occ = next(iter(spans.items()))
        a, b = min(occ)
        straddled = corpus.chunks_where(doc_id, [(a, b)], contain=False)
        if not straddled:
            return Diagnosis("uncovered", f"the answer is in {where} ({a}..{b}) but in no chunk")
        if len(straddled) == 1:
            return Diagnosis("uncovered", f"the answer is only partly inside chunk "
                             f"{_ids(straddled, multi)}; the rest is in no chunk",
                             tuple(c.key for c in straddled))
        return Diagnosis("split", f"split by a boundary: the answer straddles chunks "
                         f"{_ids(straddled, multi)}", tuple(c.key for c in straddled))
    for rank, h in enumerate(deep or (), 1):
        if matches(h.chunk):
            return Diagnosis("ranking", f"ranking miss: chunk {_ids([h.chunk], multi)} holds it, "
                             f"ranked {rank}", (h.chunk.key,), rank)
    first = sorted(holders, key=lambda c: (c.doc_id, c.start))
    return Diagnosis("ranking", f"ranking miss: chunk {_ids(first[:1], multi)} holds it, "
                     f"not in top {deep_k}", tuple(c.key for c in first))


def _sent_holds(sent: Sequence[tuple[str, int, int]], spans: Mapping[str, Sequence[tuple[int, int]]],
                contain: bool) -> bool:
    """Some sent span contains (or, `contain=False`, overlaps) one of the spans looked for."""
    for doc_id, s, e in sent:
        for a, b in spans.get(doc_id, ()):
            if (s <= a and b <= e) if contain else (s < b and a < e):
                return True
    return False


def evaluate(gold: GoldSet | Sequence[GoldQuestion], docs: Sequence[Document] | Mapping[str, Document],
             chunks_by_doc: Mapping[str, Sequence[Chunk]], search: SearchFn, k: int = 5, *,
             deep_k: int = DEEP_K, results: Sequence[Sequence[Any]] | None = None,
             budget: int | None = None) -> Report:
    """Score a gold set. `search(question, k)` returns hits best first (anything with `.chunk`);
    if it has a `many(questions, k)` method all questions are searched in one batch.
    `results` (hits per question, at least k deep) skips the first search, for a sweep over k.
    `budget` (cl100k tokens) packs each question's top-k chunks into a context of that size and
    scores whether the answer is in what is sent (`hit_at_budget`)."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if budget is not None and budget < 1:
        raise ValueError(f"the budget must be at least 1 token, got {budget}")
    t0 = time.perf_counter()
    questions = tuple(gold.questions if isinstance(gold, GoldSet) else gold)
    corpus = _Corpus(docs, chunks_by_doc)
    found = [list(r) for r in results] if results is not None else _search_all(search, questions, k)
    if len(found) != len(questions):
        raise ValueError(f"{len(found)} result lists for {len(questions)} questions")

    partial: list[tuple[GoldQuestion, tuple[Chunk, ...], int | None, Callable[[Chunk], bool],
                        dict[str, list[tuple[int, int]]], SpanScores | None]] = []
    for q, hits in zip(questions, found, strict=True):
        top = tuple(h.chunk for h in hits[:k])
        matches, spans = _matcher(q, corpus)
        rank = next((i for i, c in enumerate(top, 1) if matches(c)), None)
        scores = None
        if q.references:
            ref_doc = q.source if q.source else next(iter(corpus.docs), "")
            scores = span_scores([(c.doc_id, c.start, c.end) for c in top], q.references, ref_doc)
        partial.append((q, top, rank, matches, spans, scores))

    # A miss whose answer some chunk holds is searched again, deeper, to tell how far down it is.
    holders: dict[int, list[Chunk]] = {}
    for i, (q, _top, rank, _m, spans, _s) in enumerate(partial):
        if rank is None and spans:
            contain = bool(q.answers)  # answers must lie inside a chunk; references overlap it
            holders[i] = [c for doc_id, sp in spans.items()
                          for c in corpus.chunks_where(doc_id, sp, contain=contain)]
    deep_ids = [i for i, hs in holders.items() if hs and deep_k > k]
    deep_found: dict[int, list[Any]] = {}
    if deep_ids:
        deep_found = dict(zip(deep_ids, _search_all(search, [questions[i] for i in deep_ids], deep_k), strict=True))

    cut_at = document_cut(corpus.docs) if budget is not None else None
    out: list[QuestionResult] = []
    for i, (q, top, rank, matches, spans, scores) in enumerate(partial):
        diagnosis = None
        if rank is None:
            diagnosis = _diagnose(q, corpus, matches, spans, holders.get(i, []),
                                  deep_found.get(i), max(deep_k, k))
        budget_hit = tokens_sent = None
        if budget is not None and cut_at is not None:
            packed = pack(top, budget, cut_at)
            tokens_sent = packed.tokens
            # The budget can only lose what the top k held: no need to look when they missed.
            budget_hit = rank is not None and _sent_holds(packed.spans, spans, bool(q.answers))
        out.append(QuestionResult(
            question=q, hit=rank is not None, rank=rank,
            retrieved=tuple(c.key for c in top),
            recall=scores.recall if scores else None,
            precision=scores.precision if scores else None,
            iou=scores.iou if scores else None,
            diagnosis=diagnosis,
            context_tokens=sum(c.token_count for c in top),
            budget_hit=budget_hit, tokens_sent=tokens_sent))

    cost = index_cost(corpus.docs.values(), chunks_by_doc)
    return aggregate(out, k, cost, seconds=time.perf_counter() - t0, budget=budget)


def aggregate(results: Sequence[QuestionResult], k: int, cost: IndexCost, *, seconds: float = 0.0,
              budget: int | None = None) -> Report:
    """A report's figures from its questions' outcomes (`evaluate`'s last step; also a report cut
    down to the questions two reports share, `compare.compare_shared`)."""
    out = tuple(results)
    n = len(out)
    with_refs = [r for r in out if r.recall is not None]

    def mean(values: list[float]) -> float | None:
        return sum(values) / len(values) if values else None

    return Report(
        k=k,
        hit_rate=sum(1 for r in out if r.hit) / n if n else 0.0,
        mrr=sum(r.reciprocal_rank for r in out) / n if n else 0.0,
        recall=mean([r.recall for r in with_refs if r.recall is not None]),
        precision=mean([r.precision for r in with_refs if r.precision is not None]),
        iou=mean([r.iou for r in with_refs if r.iou is not None]),
        questions=out,
        cost=cost,
        seconds=seconds,
        context_tokens_mean=sum(r.context_tokens or 0 for r in out) / n if n else 0.0,
        budget=budget,
        hit_at_budget=(sum(1 for r in out if r.budget_hit) / n if n else 0.0) if budget is not None else None,
        tokens_sent_mean=(sum(r.tokens_sent or 0 for r in out) / n if n else 0.0) if budget is not None else None,
    )


def index_cost(docs: Iterable[Document], chunks_by_doc: Mapping[str, Sequence[Chunk]]) -> IndexCost:
    """Chunk count, embedded tokens and document tokens of an index over these chunks."""
    from inspector.core.text.tokens import token_index

    embedded = [c for cs in chunks_by_doc.values() for c in cs if c.role != "parent"]
    doc_tokens = sum(len(token_index(d)) for d in docs if d.doc_id in chunks_by_doc)
    return IndexCost(chunks=len(embedded), embedded_tokens=sum(c.token_count for c in embedded),
                     document_tokens=doc_tokens)


__all__ = ["evaluate", "aggregate", "unread_answers", "SPAN_METRICS", "Report", "QuestionResult", "Diagnosis",
           "IndexCost", "IndexSearch", "span_scores", "SpanScores", "index_cost", "DEEP_K",
           "union_ranges", "intersect_two_ranges", "difference", "sum_of_ranges"]
