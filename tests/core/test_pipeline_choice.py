"""The user's pipeline in the workbench: a configuration names its embedding model, questions go
through a model's query side, a reranker reorders `ask`, and a vector store's records are a
strategy scored on the store's own vectors (issue 28)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from inspector.core.chunking.external import remove_external
from inspector.core.documents.document import load_document
from inspector.core.embedding.cache import EmbeddingCache
from inspector.core.embedding.embedder import HashEmbedder, cache_namespace, query_side
from inspector.core.embedding.spec import EmbedderSpec, parse_embedder_spec
from inspector.core.errors import InputError
from inspector.core.evaluation.config import EvalConfig
from inspector.core.evaluation.gold import load_gold
from inspector.core.text.wordpieces import current_piece_spec, use_piece_spec
from inspector.core.workbench import Workbench
from tests.support.stores import langchain_records, write_chroma

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "sample_docs" / "handbook.md"
GOLD = ROOT / "sample_docs" / "handbook.gold.jsonl"


@pytest.fixture(scope="module")
def handbook():
    return load_document(HANDBOOK)


def bench(handbook, embedder=None):
    docs = [handbook]
    return Workbench(docs, load_gold(GOLD, docs), embedder=embedder if embedder is not None else HashEmbedder())


# -- a configuration names its model -------------------------------------------------------------

def test_a_config_names_its_embedder_and_round_trips_through_a_file():
    spec = parse_embedder_spec("openai:text-embedding-3-small", url="http://127.0.0.1:9/v1",
                               key_env="MY_KEY", max_tokens=512)
    config = EvalConfig("markdown", retriever="dense", embedder=spec)
    data = config.to_dict()
    assert data["embedder"] == {"spec": "openai:text-embedding-3-small", "url": "http://127.0.0.1:9/v1",
                                "max_tokens": 512, "key_env": "MY_KEY"}
    assert EvalConfig.from_dict(data) == config
    assert config.label().endswith("dense @openai:text-embedding-3-small at http://127.0.0.1:9/v1")
    # Another model is another index; under BM25 the model changes nothing.
    assert config.chunking_key != replace(config, embedder=None).chunking_key
    bm25 = replace(config, retriever="bm25")
    assert bm25.chunking_key == replace(bm25, embedder=None).chunking_key
    assert "@" not in bm25.label()


def test_a_bad_embedder_in_a_config_file_names_the_field():
    with pytest.raises(InputError) as err:
        EvalConfig.from_dict({"strategy": "markdown", "embedder": {"spec": "nope:x"}}, path="c.json")
    assert "c.json" in str(err.value) and "embedder" in str(err.value) and "unknown embedder" in str(err.value)
    with pytest.raises(InputError):
        EvalConfig.from_dict({"embedder": {"spec": "hash", "password": "x"}})


def test_models_compared_on_the_same_chunks_give_their_own_figures(handbook):
    """`compare --against-embedder`: the same chunks, the second model's index."""
    wb = bench(handbook)
    a = EvalConfig("markdown", retriever="dense", k=3)
    other = HashEmbedder(dim=64)  # a real second model: another vector space
    other_spec = EmbedderSpec("hash")
    wb.index_store._models.put(other_spec, other)
    b = replace(a, embedder=other_spec)
    assert wb.chunks_for(a) == wb.chunks_for(b)
    index_b = wb.build_index(b, wb.chunks_for(b))
    assert index_b.embedder is other and index_b.vectors.shape[1] == 64
    cmp = wb.compare(a, b)
    assert cmp.before.hit_rate != cmp.after.hit_rate or cmp.before.mrr != cmp.after.mrr


def test_a_config_naming_a_spec_makes_that_model_once(handbook):
    wb = bench(handbook)
    config = EvalConfig("markdown", retriever="dense", embedder=parse_embedder_spec("hash"))
    first = wb.index_store.model_for(config)
    assert isinstance(first, HashEmbedder) and first is not wb.embedder
    assert wb.index_store.model_for(config) is first
    assert wb.index_store.model_for(replace(config, retriever="bm25")) is None


# -- the query side ------------------------------------------------------------------------------

class PromptedEmbedder(HashEmbedder):
    """A model with a query prompt (as e5's "query: "): questions are embedded with it."""

    def encode_queries(self, texts):
        return self.encode([f"query: {t}" for t in texts])


def test_questions_go_through_the_query_side_in_a_namespace_of_their_own(handbook, tmp_path):
    emb = PromptedEmbedder()
    cache = EmbeddingCache(tmp_path / "cache")
    wb = Workbench([handbook], embedder=emb, cache=cache)
    config = EvalConfig("markdown", retriever="dense", k=3)
    index = wb.build_index(config, wb.chunks_for(config))
    q = "How long is parental leave in Germany?"
    assert np.allclose(index.embed_query(q), emb.encode_queries([q])[0])
    assert not np.allclose(index.embed_query(q), emb.encode([q])[0])
    side = query_side(emb)
    assert cache_namespace(side) != cache_namespace(emb)
    # A model without a query side embeds questions as texts.
    assert query_side(HashEmbedder()).__class__ is HashEmbedder


# -- a reranker in `ask` ---------------------------------------------------------------------------

class ReverseReranker:
    """A real (if perverse) reranker: scores a text by its position from the end of the pool."""

    model_id = "reverse"

    def score(self, query, texts):
        return np.arange(len(texts), dtype=np.float64)


def test_ask_with_a_reranker_reorders_the_retrievers_top_depth(handbook):
    wb = bench(handbook)
    config = EvalConfig("markdown", retriever="bm25", k=3)
    q = "How long is parental leave in Germany?"
    plain = wb.ask(q, replace(config, k=6))
    reranked = wb.ask(q, config, reranker=ReverseReranker(), rerank_depth=6)
    assert [h.chunk.id for h in reranked] == [h.chunk.id for h in plain[::-1][:3]]
    assert [h.rank_before for h in reranked] == [6, 5, 4]
    assert [h.rank for h in reranked] == [1, 2, 3]


def test_rerank_figures_through_the_workbench(handbook):
    wb = bench(handbook)
    figures = wb.rerank(EvalConfig("markdown", retriever="bm25", k=3), ReverseReranker(), depth=5)
    assert figures.before.hit_rate >= figures.after.hit_rate  # the perverse reranker can only hurt


# -- the user's store as a strategy ------------------------------------------------------------------

def test_a_store_is_a_strategy_scored_on_its_own_vectors(handbook, tmp_path):
    emb = HashEmbedder()
    recs = langchain_records(HANDBOOK, emb)
    spec = write_chroma(tmp_path / "chroma", recs)
    wb = bench(handbook, emb)
    source = wb.open_store(spec)
    try:
        assert source.placement.placed == len(recs.ids) and not source.placement.unplaced
        config = EvalConfig(source.strategy, retriever="dense", k=5)
        assert config.with_prefix is False  # the store holds texts alone
        chunks = wb.chunks_for(config)[handbook.doc_id]
        index = wb.build_index(config, wb.chunks_for(config))
        # The index's rows are the store's vectors, in the order of the placed chunks.
        rows = [source.placement.row_of(c) for c in chunks]
        assert np.allclose(index.vectors, recs.vectors[rows] / np.linalg.norm(recs.vectors[rows], axis=1)[:, None])
        report = wb.evaluate(config)
        ours = wb.evaluate(EvalConfig("recursive", {"size": 200, "overlap": 0}, retriever="dense", k=5))
        assert len(report.questions) == len(ours.questions) == 64
        cmp = wb.compare(config, EvalConfig("markdown", retriever="dense", k=5))
        assert cmp.before.hit_rate == report.hit_rate
    finally:
        remove_external(source.strategy)


def test_a_store_filled_by_another_model_is_refused_with_the_sizes(handbook, tmp_path):
    recs = langchain_records(HANDBOOK, HashEmbedder(dim=32))
    spec = write_chroma(tmp_path / "chroma", recs)
    wb = bench(handbook, HashEmbedder(dim=256))
    source = wb.open_store(spec)
    try:
        with pytest.raises(InputError, match="32 dimensions"):
            wb.evaluate(EvalConfig(source.strategy, retriever="dense"))
        # BM25 over the store's texts needs no vectors of the right size.
        assert len(wb.evaluate(EvalConfig(source.strategy, retriever="bm25")).questions) == 64
    finally:
        remove_external(source.strategy)


# -- the model's word pieces follow the chosen model ----------------------------------------------------

def test_set_embedder_moves_word_pieces_to_its_tokenizer(handbook):
    class OpenAIish(HashEmbedder):
        piece_spec = ("tiktoken", "cl100k_base", 8191, 0)

    wb = bench(handbook)
    before = current_piece_spec()
    try:
        config = EvalConfig("markdown", retriever="dense")
        minilm_chunks = wb.chunks_for(config)
        wb.set_embedder(OpenAIish())
        assert current_piece_spec().kind == "tiktoken" and current_piece_spec().limit == 8191
        cl100k_chunks = wb.chunks_for(config)
        # fit_embedder no longer cuts at 256 word pieces: no chunk is flagged as truncated.
        assert not any("truncated_by_embedder" in c.flags for cs in cl100k_chunks.values() for c in cs)
        assert cl100k_chunks is not minilm_chunks
    finally:
        use_piece_spec(before)
