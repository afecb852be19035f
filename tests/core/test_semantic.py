"""The `semantic` chunker with the deterministic HashEmbedder: invariants and where it breaks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.chunking import semantic as sem
from inspector.core.chunking.registry import chunk_document, get_strategy
from inspector.core.documents.document import from_text
from inspector.core.embedding.cache import EmbeddingCache
from inspector.core.embedding.embedder import HashEmbedder, default_embedder
from inspector.core.text.structure import sentence_spans
from inspector.core.text.tokens import count_text
from tests.core.strategies_for_tests import any_text


class Counting(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def encode(self, texts):
        self.texts.extend(texts)
        return super().encode(texts)


@pytest.fixture(autouse=True)
def hash_embedder(tmp_path_factory):
    emb = Counting()
    sem.set_semantic_embedder(emb)
    sem.set_semantic_cache(EmbeddingCache(tmp_path_factory.mktemp("semantic-cache")))
    yield emb
    sem.set_semantic_embedder(None)
    sem.set_semantic_cache(None)


GARDEN = ["Tomatoes need sun and water in the garden.", "Water the tomatoes and the garden beds daily.",
          "Garden beds with tomatoes need compost and sun."]
TAXES = ["File the tax return before the April deadline.", "The tax return deadline is in April for taxes.",
         "Late tax returns after the deadline pay a fine."]


def _uncovered(text: str, chunks) -> list[int]:
    covered = bytearray(len(text))
    for c in chunks:
        covered[c.start:c.end] = b"\x01" * (c.end - c.start)
    return [i for i, ch in enumerate(text) if not ch.isspace() and not covered[i]]


params = st.integers(1, 300).flatmap(lambda mx: st.fixed_dictionaries({
    "max_size": st.just(mx), "min_size": st.integers(0, mx - 1), "threshold": st.integers(1, 99)}))


@settings(max_examples=60, deadline=None)
@given(text=any_text, p=params)
def test_spans_in_order_covering_exact_and_within_max(text, p):
    doc = from_text(text, "t.md")
    chunks = chunk_document(doc, "semantic", p)
    assert [c.id for c in chunks] == list(range(len(chunks)))
    for a, b in itertools.pairwise(chunks):
        assert a.end <= b.start
    assert _uncovered(doc.text, chunks) == []
    for c in chunks:
        body = doc.text[c.start:c.end]
        assert body.strip()  # token windows of an oversize sentence may start with a space
        assert c.token_count == count_text(body)
        # The only exception: one code point that alone is more tokens than the budget.
        assert c.token_count <= p["max_size"] or c.end - c.start == 1
        assert ("over_budget" in c.flags) == (c.token_count > p["max_size"])
    assert chunk_document(doc, "semantic", p) == chunks


def test_breaks_where_the_topic_changes():
    text = " ".join(GARDEN + TAXES)
    doc = from_text(text, "t.txt")
    chunks = chunk_document(doc, "semantic", {"threshold": 80, "min_size": 0, "max_size": 1000})
    assert [doc.text[c.start:c.end] for c in chunks] == [" ".join(GARDEN), " ".join(TAXES)]


def test_a_lower_threshold_never_makes_fewer_chunks():
    text = " ".join(s for pair in zip(GARDEN, TAXES, GARDEN[::-1], strict=True) for s in pair)
    doc = from_text(text, "t.txt")
    counts = [len(chunk_document(doc, "semantic", {"threshold": t, "min_size": 0, "max_size": 2000}))
              for t in range(99, 0, -7)]
    assert counts == sorted(counts) and counts[0] < counts[-1]


def test_min_size_holds_back_breaks_and_the_short_tail_is_merged():
    text = " ".join(GARDEN + TAXES + GARDEN[:1])
    doc = from_text(text, "t.txt")
    loose = chunk_document(doc, "semantic", {"threshold": 60, "min_size": 0, "max_size": 1000})
    tight = chunk_document(doc, "semantic", {"threshold": 60, "min_size": 25, "max_size": 1000})
    assert len(loose) >= 3
    assert all(c.token_count >= 25 for c in tight)
    assert len(tight) < len(loose)


def test_max_size_is_respected_at_the_widest_gap():
    text = " ".join(GARDEN + TAXES)
    doc = from_text(text, "t.txt")
    # No semantic break is allowed (threshold 99, one gap at most above it), yet all six
    # sentences do not fit: the cut goes where the topic changes, not at the overflow.
    size = count_text(" ".join(GARDEN + TAXES[:2]))
    chunks = chunk_document(doc, "semantic", {"threshold": 99, "min_size": 0, "max_size": size})
    assert doc.text[chunks[0].start:chunks[0].end] == " ".join(GARDEN)


def test_oversize_sentence_is_cut_into_windows():
    long = "word " * 300 + "end."
    doc = from_text(GARDEN[0] + " " + long + " " + TAXES[0], "t.txt")
    chunks = chunk_document(doc, "semantic", {"threshold": 90, "min_size": 0, "max_size": 50})
    assert all(c.token_count <= 50 for c in chunks)
    assert sum("cut_mid_sentence" in c.flags for c in chunks) >= 6


def test_a_heading_stays_with_its_text():
    text = "# Garden\n\n" + " ".join(GARDEN) + "\n\n## Taxes\n\n" + " ".join(TAXES) + "\n"
    doc = from_text(text, "t.md")
    headings = {"# Garden", "## Taxes"}
    for t in (10, 30, 50, 70, 90):
        chunks = chunk_document(doc, "semantic", {"threshold": t, "min_size": 0, "max_size": 1000})
        for c in chunks:
            last = sentence_spans(doc.text, c.start, c.end, markdown=True)[-1]
            assert doc.text[last[0]:last[1]] not in headings, (t, doc.text[c.start:c.end])


def test_sentence_vectors_come_from_the_cache(hash_embedder):
    doc = from_text(" ".join(GARDEN + TAXES), "t.txt")
    chunk_document(doc, "semantic", {})
    assert sorted(hash_embedder.texts) == sorted(GARDEN + TAXES)
    hash_embedder.texts.clear()
    sem._DISTANCES.clear()  # past the per-document memo: the cache must answer
    chunk_document(doc, "semantic", {"threshold": 50})
    assert hash_embedder.texts == []


def test_distances_are_one_minus_cosine():
    doc = from_text(" ".join(GARDEN + TAXES), "t.txt")
    spans = sentence_spans(doc.text)
    d = sem.adjacent_distances(doc, spans)
    v = HashEmbedder().encode(GARDEN + TAXES)
    np.testing.assert_allclose(d, 1 - np.sum(v[:-1] * v[1:], axis=1), atol=1e-6)
    assert int(np.argmax(d)) == 2  # between the last garden and the first tax sentence


def test_registration_and_parameter_checks():
    s = get_strategy("semantic")
    assert s.needs_embedder
    assert {p.name: p.default for p in s.params} == {"threshold": 90, "min_size": 64, "max_size": 256}
    with pytest.raises(ValueError, match="min_size"):
        s.validate({"min_size": 300, "max_size": 200})
    with pytest.raises(ValueError, match="threshold"):
        s.validate({"threshold": 100})
    assert chunk_document(from_text("", "e.md"), "semantic", {}) == ()


def test_default_embedder_is_the_lazy_minilm():
    sem.set_semantic_embedder(None)
    emb = sem.semantic_embedder()
    assert emb is default_embedder() and emb.model_id.endswith("all-MiniLM-L6-v2")
