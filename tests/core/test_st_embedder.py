"""`st:` embedders with real sentence-transformers models made inside the tests from the bundled one
(tests/support/models.py): a second model that ranks differently, kept apart in the cache, its
CLS-pooled and prompted variants embedded by their own pipelines, and the pooled preview offered
only where it reproduces the model."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from inspector.core.embedding.cache import EmbeddingCache
from inspector.core.embedding.embedder import cache_namespace, embed_texts
from inspector.core.embedding.spec import embedder_info, make_embedder
from inspector.core.retrieval.pooled import MiniLMPieceEncoder, VectorPieceEncoder, piece_encoder_for
from tests.support.models import variant

pytestmark = pytest.mark.slow

TEXTS = [
    "Statutory maternity leave in France is 16 weeks for the first child.",
    "The other parent gets 25 days of paternity leave.",
    "Employees in Germany can take parental leave (Elternzeit) of up to 3 years.",
    "Parental allowance (Elterngeld) is paid for up to 14 months when both parents share it.",
    "Book flights through the travel portal at least two weeks before departure.",
    "Hotel costs are reimbursed up to 150 euros per night in most cities.",
    "Train travel in first class is allowed for journeys longer than four hours.",
    "Submit your expense report within 30 days of returning from a trip.",
]


@pytest.fixture(scope="module")
def two_layer(two_layer_model):
    emb = make_embedder(f"st:{two_layer_model}", device="cpu")
    emb.load()
    return emb


def ranking(emb, query: str) -> list[int]:
    scores = emb.encode(TEXTS) @ emb.encode_queries([query])[0] if hasattr(emb, "encode_queries") \
        else emb.encode(TEXTS) @ emb.encode([query])[0]
    return np.argsort(-scores, kind="stable").tolist()


def test_the_two_layer_model_ranks_differently_from_minilm(minilm, two_layer):
    """The issue's premise: a figure measured with one model does not hold for another. Top hits
    are different texts for these questions (MiniLM's top hit leads by 0.13-0.34 in cosine, the
    two-layer model's by 0.03: never a tie that float noise could flip)."""
    assert ranking(minilm, "Who pays for my hotel?")[0] == 5  # hotel costs
    assert ranking(two_layer, "Who pays for my hotel?")[0] == 7  # the expense report
    assert ranking(minilm, "How long can a father stay home after a birth?")[0] == 1  # paternity
    assert ranking(two_layer, "How long can a father stay home after a birth?")[0] == 0  # maternity
    a, b = minilm.encode(TEXTS), two_layer.encode(TEXTS)
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
    assert float(np.min(np.sum(a * b, axis=1))) < 0.9  # other vectors, not MiniLM's


def test_its_vectors_never_come_from_minilms_cache(minilm, two_layer, tmp_path):
    assert two_layer.model_id != minilm.model_id and str(two_layer.model_path) in two_layer.model_id
    assert cache_namespace(two_layer) != cache_namespace(minilm)
    cache = EmbeddingCache(tmp_path / "cache")
    first = embed_texts(minilm, TEXTS, cache)
    second = embed_texts(two_layer, TEXTS, cache)  # same texts, same cache: its own vectors
    assert np.allclose(second, two_layer.encode(TEXTS), atol=1e-5)
    assert not np.allclose(first, second, atol=1e-2)
    assert np.allclose(embed_texts(minilm, TEXTS, cache), first)


def test_the_pooled_preview_reproduces_a_mean_pooled_model(two_layer):
    """Its pooling is MiniLM's (mean, [CLS]/[SEP] around the text): token vectors are offered,
    and pooling them back gives the model's own vectors."""
    enc = piece_encoder_for(two_layer)
    assert isinstance(enc, MiniLMPieceEncoder) and two_layer.mean_pooled
    means, counts, specials = enc.encode_pieces(TEXTS[:3])
    pooled = (means * counts[:, None] + specials) / (counts[:, None] + 2)
    pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
    assert np.allclose(pooled, two_layer.encode(TEXTS[:3]), atol=1e-5)


def test_a_cls_pooled_model_gets_exact_vectors_and_no_token_preview(two_layer_model, tmp_path):
    from sentence_transformers import SentenceTransformer

    folder = variant(two_layer_model, tmp_path / "cls", pooling="cls")
    emb = make_embedder(f"st:{folder}", device="cpu")
    assert not hasattr(emb, "encode_pooled") and not emb.mean_pooled
    assert isinstance(piece_encoder_for(emb), VectorPieceEncoder)
    reference = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    expected = reference.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    assert np.allclose(emb.encode(TEXTS), expected, atol=1e-5)
    mean = make_embedder(f"st:{two_layer_model}", device="cpu")
    assert emb.model_id != mean.model_id  # same weights, other pooling: another model
    assert not np.allclose(emb.encode(TEXTS[:2]), mean.encode(TEXTS[:2]), atol=1e-2)


def test_prompts_go_to_queries_and_documents_as_the_model_says(two_layer_model, tmp_path):
    from sentence_transformers import SentenceTransformer

    folder = variant(two_layer_model, tmp_path / "e5-style", prompts={"query": "query: ", "document": "passage: "})
    emb = make_embedder(f"st:{folder}", device="cpu")
    reference = SentenceTransformer(str(folder), device="cpu", local_files_only=True)

    def plain(texts):
        return reference.encode(texts, prompt="", normalize_embeddings=True, convert_to_numpy=True)

    assert np.allclose(emb.encode_queries(["hotel costs"]), plain(["query: hotel costs"]), atol=1e-5)
    assert np.allclose(emb.encode(TEXTS[:2]), plain([f"passage: {t}" for t in TEXTS[:2]]), atol=1e-5)
    assert not emb.mean_pooled  # the document prompt is pooled too: the preview would miss it
    assert emb.piece_spec[3] == 2 + 2  # [CLS], [SEP] and "passage", ":" before every chunk
    info = embedder_info(emb)
    assert info["spec"] == f"st:{folder}" and info["dims"] == 384 and info["backend"] == "torch"


def test_an_st_embedder_travels_to_another_process_as_itself(two_layer):
    again = pickle.loads(pickle.dumps(two_layer))
    assert again.model_id == two_layer.model_id and not again.loaded
    assert np.allclose(again.encode(TEXTS[:2]), two_layer.encode(TEXTS[:2]), atol=1e-6)
