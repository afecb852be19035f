"""Metrics against hand-computed values: hit@k, MRR, Chroma's recall/precision/IoU, diagnoses, cost."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.registry import chunk_document
from inspector.core.documents.document import Document, load_document
from inspector.core.embedding.embedder import HashEmbedder
from inspector.core.evaluation.gold import GoldQuestion, load_gold
from inspector.core.evaluation.metrics import (
    IndexSearch,
    evaluate,
    index_cost,
    span_scores,
)
from inspector.core.evaluation.report import report_dict
from inspector.core.retrieval.index import Hit, build_index
from inspector.core.text.tokens import token_index

ROOT = Path(__file__).resolve().parents[2]

#            0         1         2         3         4         5         6
#            0123456789012345678901234567890123456789012345678901234567890123456789
TEXT = ("Leave in France lasts 16 weeks. Germany pays Elterngeld for 14\nmonths. "
        "Oslo per diem is 79 euro. Zurich hotel cap is 270 euro.")


def doc(text: str = TEXT, name: str = "d.md") -> Document:
    return Document(text=text, name=name)


def chunk(i: int, start: int, end: int, doc_id: str = "d.md", **kw) -> Chunk:
    return Chunk(id=i, start=start, end=end, token_count=end - start, doc_id=doc_id, **kw)


class FakeSearch:
    """Returns fixed chunk ids per question, best first; records the depths asked for."""

    def __init__(self, chunks: dict[str, tuple[Chunk, ...]], ranking: dict[str, list[int]],
                 doc_id: str = "d.md") -> None:
        self.by_id = {c.id: c for c in chunks[doc_id]}
        self.ranking = ranking
        self.calls: list[tuple[str, int]] = []

    def __call__(self, q: GoldQuestion, k: int) -> list[Hit]:
        self.calls.append((q.question, k))
        ids = self.ranking.get(q.question, [])[:k]
        return [Hit(self.by_id[i], self.by_id[i], r, 1.0 / r, "dense") for r, i in enumerate(ids, 1)]


def q(text: str, *answers: str, refs=(), source: str | None = None) -> GoldQuestion:
    return GoldQuestion(question=text, answers=answers, references=tuple(refs), source=source)


# -- Chroma's span metrics, hand-computed -----------------------------------------------------------

def test_span_scores_overlapping_chunks():
    # Reference 10..30; chunks 0..20 and 15..40 overlap each other and the reference.
    # Intersections 10..20 and 15..30 merge to 10..30: numerator 20.
    # Recall 20/20; precision 20 / (20 + 25) (overlap counted twice); IoU 20 / (45 + 0 unused).
    s = span_scores([("d", 0, 20), ("d", 15, 40)], [(10, 30)], "d")
    assert s.recall == 1.0
    assert s.precision == pytest.approx(20 / 45)
    assert s.iou == pytest.approx(20 / 45)


def test_span_scores_partial_cover_and_other_documents():
    # References 0..10 and 50..60; one chunk 5..55 and a chunk of another document (20 chars).
    # Numerator: 5..10 and 50..55 = 10. Unused highlights: 0..5 and 55..60 = 10.
    # Precision counts the other document's chunk: 10 / (50 + 20). IoU: 10 / (70 + 10).
    s = span_scores([("d", 5, 55), ("other", 100, 120)], [(0, 10), (50, 60)], "d")
    assert s.recall == pytest.approx(0.5)
    assert s.precision == pytest.approx(10 / 70)
    assert s.iou == pytest.approx(10 / 80)


def test_span_scores_touching_and_empty():
    s = span_scores([("d", 30, 40)], [(10, 30)], "d")  # touches, shares no character
    assert (s.recall, s.precision, s.iou) == (0.0, 0.0, 0.0)
    s = span_scores([], [(10, 30)], "d")
    assert (s.recall, s.precision, s.iou) == (0.0, 0.0, 0.0)


def test_span_scores_overlapping_references_follow_chroma():
    # References 0..10 and 5..15 overlap. Chunk 0..10. Numerator: union of 0..10 and 5..10 = 10.
    # Recall divides by the summed reference lengths (20), not their union (15): 0.5.
    # Unused highlights: 0..10 is used up, 5..15 keeps 10..15 (5): IoU = 10 / (10 + 5).
    s = span_scores([("d", 0, 10)], [(0, 10), (5, 15)], "d")
    assert s.recall == pytest.approx(0.5)
    assert s.precision == 1.0
    assert s.iou == pytest.approx(10 / 15)


spans = st.tuples(st.integers(0, 80), st.integers(1, 40)).map(lambda t: (t[0], t[0] + t[1]))


@given(st.lists(spans, max_size=6), st.lists(spans, min_size=1, max_size=4, unique=True))
def test_span_scores_match_a_character_set_oracle(retrieved, references):
    """With non-overlapping references, Chroma's numbers equal the plain set definitions."""
    refs = []
    for a, b in sorted(references):
        if not refs or a >= refs[-1][1]:
            refs.append((a, b))
    chars_ref = {i for a, b in refs for i in range(a, b)}
    chars_ret = {i for a, b in retrieved for i in range(a, b)}
    num = len(chars_ref & chars_ret)
    total_ref = sum(b - a for a, b in refs)
    total_ret = sum(b - a for a, b in retrieved)
    s = span_scores([("d", a, b) for a, b in retrieved], refs, "d")
    assert s.recall == pytest.approx(num / total_ref)
    assert s.precision == pytest.approx(num / total_ret if total_ret else 0.0)
    den = total_ret + total_ref - num
    assert s.iou == pytest.approx(num / den if den else 0.0)


# -- hit@k and MRR ----------------------------------------------------------------------------------

def three_chunks() -> dict[str, tuple[Chunk, ...]]:
    # 0: "Leave in France lasts 16 weeks. Germany pays Elterngeld for 14"   (0..62)
    # 1: "\nmonths. Oslo per diem is 79 euro."                               (62..96)
    # 2: " Zurich hotel cap is 270 euro."                                    (96..end)
    return {"d.md": (chunk(0, 0, 62), chunk(1, 62, 96), chunk(2, 96, len(TEXT)))}


def test_hit_rank_and_mrr():
    chunks = three_chunks()
    gold = [q("france", "16 WEEKS"), q("oslo", "per   diem is 79"), q("zurich", "270 euro"),
            q("mars", "on mars")]
    search = FakeSearch(chunks, {"france": [1, 0, 2], "oslo": [1], "zurich": [0, 1, 2],
                                 "mars": [0, 1]})
    r = evaluate(gold, [doc()], chunks, search, k=2)
    assert [(x.hit, x.rank) for x in r.questions] == [(True, 2), (True, 1), (False, None), (False, None)]
    assert r.hit_rate == 0.5
    assert r.mrr == pytest.approx((1 / 2 + 1) / 4)
    assert r.questions[0].retrieved == ("d.md#1", "d.md#0")
    assert r.recall is None and r.precision is None and r.iou is None
    assert r.k == 2 and r.hits == 2


def test_only_the_top_k_count_even_if_search_returns_more():
    chunks = three_chunks()

    def greedy(question, k):  # ignores k
        return [Hit(c, c, i, 0.0, "bm25") for i, c in enumerate(reversed(chunks["d.md"]), 1)]

    r = evaluate([q("france", "16 weeks")], [doc()], chunks, greedy, k=1, deep_k=1)
    assert not r.questions[0].hit and r.questions[0].retrieved == ("d.md#2",)


def test_answer_in_prefix_only_is_no_hit():
    chunks = {"d.md": (chunk(0, 96, len(TEXT), prefix="France 16 weeks"),)}
    search = FakeSearch(chunks, {"france": [0]})
    r = evaluate([q("france", "16 weeks")], [doc()], chunks, search, k=1)
    assert not r.questions[0].hit


def test_any_of_several_answers_counts():
    chunks = three_chunks()
    search = FakeSearch(chunks, {"zurich": [2]})
    r = evaluate([q("zurich", "two hundred seventy", "270 euro")], [doc()], chunks, search, k=1)
    assert r.questions[0].rank == 1


def test_reference_spans_give_recall_precision_iou():
    chunks = three_chunks()
    oslo = TEXT.index("Oslo per diem")
    ref = (oslo, oslo + len("Oslo per diem is 79 euro."))  # 71..96, inside chunk 1 (62..96)
    search = FakeSearch(chunks, {"oslo": [1, 2]})
    r = evaluate([q("oslo", "79 euro", refs=[ref])], [doc()], chunks, search, k=2)
    res = r.questions[0]
    assert res.recall == 1.0
    assert res.precision == pytest.approx(25 / (34 + (len(TEXT) - 96)))
    assert res.iou == res.precision
    assert r.recall == 1.0 and r.iou == res.iou


def test_reference_only_questions_hit_on_overlap():
    chunks = three_chunks()
    search = FakeSearch(chunks, {"a": [2, 1], "b": [2]})
    gold = [q("a", refs=[(70, 80)]), q("b", refs=[(70, 80)])]
    r = evaluate(gold, [doc()], chunks, search, k=2, deep_k=3)
    assert (r.questions[0].hit, r.questions[0].rank) == (True, 2)
    assert not r.questions[1].hit
    assert r.questions[1].diagnosis.kind == "ranking"


def test_k_must_be_positive():
    chunks = three_chunks()
    with pytest.raises(ValueError, match="k must be at least 1"):
        evaluate([q("x", "y")], [doc()], chunks, FakeSearch(chunks, {}), k=0)


# -- diagnoses --------------------------------------------------------------------------------------

def test_split_by_a_boundary_names_the_chunks():
    chunks = three_chunks()  # "14\nmonths" straddles chunks 0 and 1
    search = FakeSearch(chunks, {"germany": [2, 0, 1]})
    r = evaluate([q("germany", "14 months")], [doc()], chunks, search, k=3)
    res = r.questions[0]
    assert not res.hit
    d = res.diagnosis
    assert d.kind == "split"
    assert d.chunks == ("d.md#0", "d.md#1")
    assert d.message == "split by a boundary: the answer straddles chunks 0 and 1"
    assert search.calls == [("germany", 3)]  # no deeper search: no chunk holds the answer


def test_ranking_miss_gives_the_deep_rank():
    chunks = {"d.md": tuple(chunk(i, i * 10, i * 10 + 10) for i in range(len(TEXT) // 10))}
    holder = next(c.id for c in chunks["d.md"] if "Oslo" in TEXT[c.start:c.end])
    others = [c.id for c in chunks["d.md"] if c.id != holder]
    search = FakeSearch(chunks, {"oslo": others[:6] + [holder] + others[6:]})
    r = evaluate([q("oslo", "Oslo")], [doc()], chunks, search, k=5)
    d = r.questions[0].diagnosis
    assert d.kind == "ranking" and d.deep_rank == 7
    assert d.message == f"ranking miss: chunk {holder} holds it, ranked 7"
    assert search.calls == [("oslo", 5), ("oslo", 50)]


def test_ranking_miss_not_in_top_50():
    chunks = three_chunks()
    search = FakeSearch(chunks, {"zurich": [0, 1]})
    r = evaluate([q("zurich", "270 euro")], [doc()], chunks, search, k=2)
    d = r.questions[0].diagnosis
    assert d.kind == "ranking" and d.deep_rank is None
    assert d.message == "ranking miss: chunk 2 holds it, not in top 50"
    assert d.chunks == ("d.md#2",)


def test_answer_not_in_the_document():
    chunks = three_chunks()
    r = evaluate([q("mars", "on Mars")], [doc()], chunks, FakeSearch(chunks, {"mars": [0]}), k=1)
    d = r.questions[0].diagnosis
    assert d.kind == "absent" and d.message == "answer not in the document"


def test_answer_in_no_chunk_at_all():
    chunks = {"d.md": (chunk(0, 0, 30),)}
    r = evaluate([q("z", "270 euro")], [doc()], chunks, FakeSearch(chunks, {"z": [0]}), k=1)
    assert r.questions[0].diagnosis.kind == "uncovered"


def test_parent_child_hits_on_the_parent():
    # Parent 0 covers 0..96; children 1 (0..62) and 2 (62..96) split "14\nmonths".
    parent = chunk(0, 0, 96, role="parent")
    kids = (chunk(1, 0, 62, role="child", parent_id=0), chunk(2, 62, 96, role="child", parent_id=0))
    tail = chunk(3, 96, len(TEXT))
    chunks = {"d.md": (parent, *kids, tail)}

    def search(question, k):
        hits = [Hit(parent, kids[1], 1, 1.0, "dense"), Hit(tail, tail, 2, 0.5, "dense")]
        return hits[:k] if question.question == "germany" else hits[::-1][:k]

    r = evaluate([q("germany", "14 months"), q("again", "14 months")], [doc()], chunks, search, k=1)
    assert r.questions[0].hit and r.questions[0].retrieved == ("d.md#0",)
    d = r.questions[1].diagnosis
    # The parent holds it, so this is a ranking miss, not a split between the children.
    assert d.kind == "ranking" and d.chunks == ("d.md#0",) and d.deep_rank == 2
    # Cost counts what is embedded: the children and the plain chunk.
    assert r.cost.chunks == 3
    assert r.cost.embedded_tokens == 62 + 34 + (len(TEXT) - 96)


def test_several_documents_name_chunks_by_key():
    a, b = doc(name="a.md"), doc(name="b.md")
    chunks = {"a.md": (chunk(0, 0, 62, "a.md"), chunk(1, 62, len(TEXT), "a.md")),
              "b.md": (chunk(0, 0, len(TEXT), "b.md"),)}
    search = FakeSearch(chunks, {"germany": [0]}, doc_id="a.md")
    r = evaluate([q("germany", "14 months", source="a.md")], [a, b], chunks, search, k=1)
    assert r.questions[0].diagnosis.message == (
        "split by a boundary: the answer straddles chunks a.md#0 and a.md#1")


# -- searching through a real index -----------------------------------------------------------------

class CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def encode(self, texts):
        self.calls += 1
        return super().encode(texts)


def test_index_search_batches_queries_and_honours_source():
    a = Document(text="The per diem in Oslo is 79 euro.", name="a.md")
    b = Document(text="The per diem in Oslo is 85 euro in winter.", name="b.md")
    chunks = {d.doc_id: chunk_document(d, "paragraph") for d in (a, b)}
    emb = CountingEmbedder()
    index = build_index([a, b], chunks, emb)
    before = emb.calls
    search = IndexSearch(index, retriever="dense", multi_doc=True)
    gold = [q("Oslo per diem in winter?", "79 euro", source="a.md"),
            q("Oslo per diem?", "85 euro", source="b.md"),
            q("Paris per diem?", "nothing here")]
    r = evaluate(gold, [a, b], chunks, search, k=1)
    assert emb.calls == before + 1  # every question embedded in one batch, reused by deep searches
    assert [x.retrieved for x in r.questions[:2]] == [("a.md#0",), ("b.md#0",)]
    assert r.hit_rate == pytest.approx(2 / 3)


def test_index_search_bm25_needs_no_embedder():
    a = Document(text="Zurich hotel cap is 270 euro.\n\nOslo per diem is 79 euro.", name="a.md")
    chunks = {"a.md": chunk_document(a, "paragraph")}
    index = build_index([a], chunks, None)
    r = evaluate([q("zurich hotel", "270 euro")], [a], chunks,
                 IndexSearch(index, retriever="bm25", multi_doc=False), k=1)
    assert r.questions[0].rank == 1


# -- cost -------------------------------------------------------------------------------------------

def test_index_cost_and_overlap_inflation():
    d = load_document(ROOT / "sample_docs" / "handbook.md")
    plain = {d.doc_id: chunk_document(d, "fixed_tokens", {"size": 256, "overlap": 0})}
    over = {d.doc_id: chunk_document(d, "fixed_tokens", {"size": 256, "overlap": 128})}
    c0, c1 = index_cost([d], plain), index_cost([d], over)
    assert c0.document_tokens == len(token_index(d))
    assert c0.chunks == len(plain[d.doc_id])
    assert c0.embedded_tokens == sum(c.token_count for c in plain[d.doc_id])
    assert c0.inflation == pytest.approx(1.0, abs=0.02)
    assert c1.inflation == pytest.approx(2.0, abs=0.1)


# -- JSON shape and speed ---------------------------------------------------------------------------

def test_report_dict_shape():
    chunks = three_chunks()
    search = FakeSearch(chunks, {"germany": [2]})
    data = report_dict(evaluate([q("germany", "14 months", refs=[(45, 70)])], [doc()], chunks,
                                search, k=1))
    assert {"hit_rate", "mrr", "k", "recall", "precision", "iou", "questions", "cost"} <= set(data)
    (item,) = data["questions"]
    assert item["question"] == "germany" and item["hit"] is False and item["rank"] is None
    assert item["diagnosis"].startswith("split by a boundary")
    assert item["retrieved"] == ["d.md#2"] and item["retrieved_ids"] == [2]
    assert {"chunks", "embedded_tokens", "document_tokens", "inflation"} <= set(data["cost"])


def test_hundred_questions_with_warm_embeddings_take_under_200ms():
    d = load_document(ROOT / "sample_docs" / "handbook.md")
    gold = load_gold(ROOT / "sample_docs" / "handbook.gold.jsonl", [d])
    questions = [GoldQuestion(question=f"{x.question} ({i})", answers=x.answers, source=x.source,
                              references=x.references)
                 for i, x in enumerate((gold.questions * 2)[:100])]
    chunks = {d.doc_id: chunk_document(d, "markdown")}
    index = build_index([d], chunks, HashEmbedder())
    search = IndexSearch(index, retriever="dense", multi_doc=False)
    search.embed(questions)  # warm: the question vectors exist
    evaluate(questions, [d], chunks, search, k=5)  # warm caches (normalized text, occurrences)
    best = min(_timed(lambda: evaluate(questions, [d], chunks, search, k=5)) for _ in range(3))
    assert best < 0.2, f"100 questions took {best * 1000:.0f} ms"


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t
