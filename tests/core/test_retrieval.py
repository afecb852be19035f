"""Dense, BM25 and hybrid retrieval, filters and parent_child, on a hand-made corpus (HashEmbedder)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.common import SpanContext
from inspector.core.chunking.registry import chunk_document
from inspector.core.documents.document import from_text
from inspector.core.embedding.embedder import HashEmbedder
from inspector.core.retrieval.index import RRF_K, Hit, build_index
from inspector.core.text.structure import paragraph_spans

HANDBOOK = """# Handbook

## Parental leave

### Germany

Employees in Germany receive parental leave of 14 months with Elterngeld paid by the state.

### France

Employees in France receive parental leave of 16 weeks, the congé maternité.

## Expenses

Submit expense receipts within 30 days to get a refund from finance.

## Remote work

Remote work is allowed two days per week after approval by your manager.
"""

TRAVEL = """# Travel

Book travel through the portal. Trains are preferred over flights for trips under 500 km.

Hotel costs are refunded up to a nightly limit that depends on the city.
"""


class Counting:
    def __init__(self, inner):
        self.inner, self.model_id = inner, inner.model_id
        self.dim, self.max_seq_length = inner.dim, inner.max_seq_length
        self.calls = 0

    def encode(self, texts):
        self.calls += 1
        return self.inner.encode(texts)


def _paragraph_chunks(doc) -> tuple[Chunk, ...]:
    """One chunk per paragraph, heading lines dropped (the heading path carries them)."""
    ctx = SpanContext(doc)
    spans = [(a, b) for a, b in paragraph_spans(doc.text) if not doc.text[a:b].startswith("#")]
    return tuple(ctx.make(spans))


@pytest.fixture(scope="module")
def corpus():
    hb = from_text(HANDBOOK, "handbook.md")
    tr = from_text(TRAVEL, "travel.md")
    chunks = {hb.doc_id: _paragraph_chunks(hb), tr.doc_id: _paragraph_chunks(tr)}
    return [hb, tr], chunks


@pytest.fixture(scope="module")
def index(corpus):
    docs, chunks = corpus
    return build_index(docs, chunks, HashEmbedder())


def _paths(hits: list[Hit]) -> list[tuple[str, ...]]:
    return [h.chunk.heading_path for h in hits]


def _check_ranked(hits: list[Hit], retriever: str) -> None:
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert all(h.retriever == retriever for h in hits)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize("retriever", ["dense", "bm25", "hybrid"])
def test_each_retriever_finds_the_right_section(index, retriever):
    cases = {"parental leave Germany Elterngeld": ("Handbook", "Parental leave", "Germany"),
             "France congé maternité weeks": ("Handbook", "Parental leave", "France"),
             "expense receipts refund": ("Handbook", "Expenses"),
             "remote work days per week": ("Handbook", "Remote work")}
    for query, path in cases.items():
        hits = index.search(query, k=3, retriever=retriever)
        _check_ranked(hits, retriever)
        assert hits[0].chunk.heading_path == path, (query, _paths(hits))
        assert hits[0].chunk is hits[0].matched


def test_dense_scores_are_cosines(index, corpus):
    docs, _ = corpus
    emb = HashEmbedder()
    hits = index.search("parental leave", k=len(index))
    q = emb.encode(["parental leave"])[0]
    for h in hits:
        v = emb.encode([h.chunk.embedded_text(index.docs[h.chunk.doc_id])])[0]
        assert h.score == pytest.approx(float(q @ v), abs=1e-5)
    assert len(hits) == len(index) == 6


def test_bm25_skips_chunks_without_a_shared_word(index):
    assert index.search("zeppelin quasar", retriever="bm25") == []
    hits = index.search("Elterngeld", k=5, retriever="bm25")
    assert [h.chunk.heading_path[-1] for h in hits] == ["Germany"]


def test_hybrid_is_reciprocal_rank_fusion(index):
    q = "refund of hotel costs and receipts"
    n = len(index)
    dense = index.search(q, k=n, retriever="dense")
    bm25 = index.search(q, k=n, retriever="bm25")
    fused: dict[str, float] = {}
    for ranking in (dense, bm25):
        for h in ranking:
            fused[h.chunk.key] = fused.get(h.chunk.key, 0.0) + 1.0 / (RRF_K + h.rank)
    hybrid = index.search(q, k=n, retriever="hybrid")
    _check_ranked(hybrid, "hybrid")
    assert {h.chunk.key: h.score for h in hybrid} == pytest.approx(fused)
    assert [h.chunk.key for h in hybrid] == sorted(fused, key=lambda key: -fused[key])


def test_filters_by_document_and_heading(index):
    hits = index.search("refund refunded", k=10, retriever="bm25", docs=["travel.md"])
    assert hits and {h.chunk.doc_id for h in hits} == {"travel.md"}
    hits = index.search("refund refunded", k=10, retriever="bm25")
    assert {h.chunk.doc_id for h in hits} == {"handbook.md", "travel.md"}
    hits = index.search("leave", k=10, retriever="dense", heading_prefix=["Handbook", "Parental leave"])
    assert sorted(h.chunk.heading_path[-1] for h in hits) == ["France", "Germany"]
    assert index.search("leave", retriever="hybrid", heading_prefix=("Handbook", "Nowhere")) == []
    assert index.search("leave", docs=["unknown.md"]) == []
    assert index.search("leave", docs=[]) == []
    hits = index.search("leave", k=10, docs=["handbook.md"], heading_prefix=["Handbook", "Expenses"])
    assert _paths(hits) == [("Handbook", "Expenses")]


def test_parent_child_returns_each_parent_once(corpus):
    docs, _ = corpus
    hb = docs[0]
    pc = chunk_document(hb, "parent_child", {"parent_size": 64, "child_size": 16, "child_overlap": 0})
    parents = [c for c in pc if c.role == "parent"]
    children = [c for c in pc if c.role == "child"]
    assert len(parents) >= 2 and len(children) > len(parents)
    index = build_index([hb], {hb.doc_id: pc}, HashEmbedder())
    assert len(index) == len(children)
    for retriever in ("dense", "bm25", "hybrid"):
        hits = index.search("parental leave Germany Elterngeld months", k=len(parents), retriever=retriever)
        _check_ranked(hits, retriever)
        assert all(h.chunk.role == "parent" and h.matched.role == "child" for h in hits)
        assert all(h.matched.parent_id == h.chunk.id for h in hits)
        ids = [h.chunk.id for h in hits]
        assert len(ids) == len(set(ids))
        if retriever != "bm25":
            assert len(hits) == len(parents)


def test_parent_rank_follows_its_best_child():
    text = "Germany leave.\n\nGermany leave months.\n\nGermany leave weeks.\n\nFrance holidays."
    doc = from_text(text, "pc.md")
    ctx = SpanContext(doc)
    spans = paragraph_spans(text)
    parents = ctx.make([(spans[0][0], spans[2][1]), spans[3]], role="parent")
    children = ctx.make(spans, role="child", first_id=2, parent_ids=[0, 0, 0, 1])
    index = build_index([doc], {doc.doc_id: tuple(parents + children)}, HashEmbedder())
    hits = index.search("Germany leave", k=2)
    assert [(h.rank, h.chunk.id) for h in hits] == [(1, 0), (2, 1)]
    assert hits[1].matched.id == 5
    assert [h.chunk.id for h in index.search("Germany leave", k=1)] == [0]


def test_dense_needs_an_embedder_and_bm25_does_not(corpus):
    docs, chunks = corpus
    index = build_index(docs, chunks, None)
    with pytest.raises(ValueError, match="embedder"):
        index.search("leave", retriever="dense")
    with pytest.raises(ValueError, match="embedder"):
        index.search("leave", retriever="hybrid")
    assert index.search("Elterngeld", retriever="bm25")[0].chunk.heading_path[-1] == "Germany"


def test_bad_arguments_are_rejected(index, corpus):
    docs, chunks = corpus
    with pytest.raises(ValueError, match="retriever"):
        index.search("x", retriever="sparse")
    with pytest.raises(ValueError, match="k must be"):
        index.search("x", k=0)
    with pytest.raises(ValueError, match="vectors of shape"):
        build_index(docs, chunks, HashEmbedder(), vectors=np.ones((2, 256)))
    with pytest.raises(ValueError, match="not among the documents"):
        build_index(docs[:1], chunks, HashEmbedder())


def test_precomputed_vectors_and_query_vectors(index, corpus):
    docs, chunks = corpus
    emb = HashEmbedder()
    texts = [c.embedded_text(d) for d in docs for c in chunks[d.doc_id]]
    again = build_index(docs, chunks, emb, vectors=emb.encode(texts) * 3.0)  # renormalized
    q = "parental leave"
    assert [(h.chunk.key, round(h.score, 5)) for h in again.search(q, k=4)] == \
           [(h.chunk.key, round(h.score, 5)) for h in index.search(q, k=4)]
    assert again.search_vector(emb.encode([q])[0], k=4) == again.search(q, k=4)


def test_prefix_switch_changes_what_is_embedded(corpus):
    docs, chunks = corpus
    with_p = build_index(docs, chunks, HashEmbedder())
    without = build_index(docs, chunks, HashEmbedder(), with_prefix=False)
    key = chunks["handbook.md"][0]
    assert with_p.texts[0].startswith("Handbook > Parental leave > Germany\n\n")
    assert without.texts[0] == key.text(docs[0])
    # The heading words help only when the prefix is embedded.
    assert with_p.search("Handbook Expenses", k=1, retriever="bm25")[0].chunk.heading_path[-1] == "Expenses"


def test_query_vectors_are_remembered(corpus):
    docs, chunks = corpus
    emb = Counting(HashEmbedder())
    index = build_index(docs, chunks, emb)
    assert emb.calls == 1
    index.search("parental leave")
    index.search("parental leave", retriever="hybrid")
    assert emb.calls == 2


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 60), k=st.integers(1, 70), dim=st.sampled_from([4, 64]),
       keep=st.sampled_from([None, ["a.md"], ["b.md"], ["a.md", "b.md"]]))
def test_dense_ranking_equals_a_full_sort(seed, n, k, dim, keep):
    rng = np.random.default_rng(seed)
    docs = [from_text("x " * 200, "a.md"), from_text("y " * 200, "b.md")]
    owner = rng.integers(0, 2, n)
    chunks = {d.doc_id: tuple(Chunk(id=i, start=i, end=i + 1, token_count=1, doc_id=d.doc_id)
                              for i in range(n) if owner[i] == j) for j, d in enumerate(docs)}
    order = [c for d in docs for c in chunks[d.doc_id]]  # index rows: chunks in mapping order
    # Signed one-hot rows: every score is exactly +-q[j]/|q| whatever the summation order, and
    # with dim=4 most scores tie, so the tie order (by row) is checked too.
    axis = rng.integers(0, dim, n)
    sign = rng.choice([-2.0, 3.0], n)
    vecs = np.zeros((n, dim), np.float32)
    vecs[np.arange(n), axis] = sign
    index = build_index(docs, chunks, None, vectors=vecs)
    q = rng.normal(size=dim).astype(np.float32)
    hits = index.search_vector(q, k=k, docs=keep)
    qn = q / np.float32(np.linalg.norm(q))
    scores = np.sign(sign) * qn[axis]
    allowed = [r for r, c in enumerate(order) if keep is None or c.doc_id in keep]
    expected = sorted(allowed, key=lambda r: (-scores[r], r))[:k]
    assert [h.chunk.key for h in hits] == [order[r].key for r in expected]
    np.testing.assert_allclose([h.score for h in hits], scores[expected], rtol=1e-6)


# -- memory: what an index keeps (issue 17's soak) ------------------------------------------------
def test_index_keeps_no_copies_of_its_texts(corpus):
    """The embedded texts are spans of the documents; with a large overlap they add up to many
    times the documents, and the window caches several indexes. An index made them once for the
    embedder and keeps none (it reads them from the documents when BM25 is first built)."""
    docs, chunks = corpus
    index = build_index(docs, chunks, HashEmbedder())
    index.search("parental leave", 3, "bm25")
    kept = [v for v in vars(index).values() if isinstance(v, (list, tuple))
            and v and all(isinstance(t, str) for t in v)]
    assert kept == []
    assert index.texts == [c.embedded_text(index.docs[c.doc_id]) for c in index.entries]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet="ab cD\u00e9\u00df1_.", max_size=40), min_size=1, max_size=12),
       st.text(alphabet="ab cD\u00e9\u00df1_.", min_size=1, max_size=12))
def test_bm25_from_ids_scores_as_bm25s_from_tokens(texts, query):
    """`bm25_corpus` (ids made one text at a time) gives bm25s the same index as its own
    tokens path, so every score is the same."""
    import bm25s

    from inspector.core.retrieval.index import bm25_corpus, bm25_tokens

    tokens = [bm25_tokens(t) for t in texts]
    q = bm25_tokens(query)
    if not any(tokens) or not q:
        return  # bm25s cannot index a corpus without a word (the index never asks it to)
    a, b = bm25s.BM25(), bm25s.BM25()
    a.index(tokens, show_progress=False)
    b.index(bm25_corpus(texts), show_progress=False)
    np.testing.assert_allclose(b.get_scores(q), a.get_scores(q), rtol=1e-6, atol=1e-7)


def test_the_exact_index_of_a_bm25_request_is_the_one_dense_finds():
    """`Workbench.exact_index` (the Embedding Map's Compute vectors under BM25, issue 26): the
    vectors of every chunk the request searches, a corpus's other documents included, in the BM25
    index's row order; a dense request on the same chunks is answered from it, not embedded again."""
    from inspector.core.workbench import RetrievalRequest, Workbench

    doc = from_text(HANDBOOK, "handbook.md")
    other = from_text("# Notes\n\nThe canteen opens at eight.\n\nParking is behind the building.\n", "notes.md")
    wb = Workbench([doc, other], lazy_model=False)
    chunks = chunk_document(doc, "paragraph")

    def request(retriever: str) -> RetrievalRequest:
        return RetrievalRequest(doc, chunks, 1, "paragraph", {}, True, "Who approves leave?", 3, retriever,
                                documents=(doc, other), exact=True)

    def run(req):
        return list(wb.stages(req, lambda: False, lambda *_a: None))[-1]

    bm25 = run(request("bm25"))
    assert bm25.index.vectors is None
    with pytest.raises(ValueError, match="not loaded"):
        wb.exact_index(request("bm25"))
    wb.embedder = HashEmbedder()
    seen: list[tuple[int, int]] = []
    index = wb.exact_index(request("bm25"), progress=lambda d, t: seen.append((d, t)))
    assert [(c.doc_id, c.id) for c in index.entries] == [(c.doc_id, c.id) for c in bm25.index.entries]
    assert set(index.docs) == {"handbook.md", "notes.md"}
    assert index.vectors.shape == (len(bm25.index.entries), wb.embedder.dim) and seen
    dense = run(request("dense"))
    assert dense.index is index and dense.mode == "exact"


def test_default_retriever_is_one_value():
    """The door hands out the retrievers' module's DEFAULT_RETRIEVER (light: the window reads it
    before it shows, issue 31); `EvalConfig`'s default is the same retriever."""
    from inspector.core import api
    from inspector.core.evaluation import config
    from inspector.core.retrieval import kinds

    assert api.DEFAULT_RETRIEVER is kinds.DEFAULT_RETRIEVER
    assert config.DEFAULT_RETRIEVER == kinds.DEFAULT_RETRIEVER == config.EvalConfig("markdown").retriever
