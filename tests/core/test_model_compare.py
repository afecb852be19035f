"""Two embedding models on the same chunks (`model_figures`): each model's report is what the
evaluator gives for its own index, the change is paired question by question, BM25 is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.core.chunking.registry import chunk_document
from inspector.core.documents.document import load_document
from inspector.core.embedding.embedder import HashEmbedder
from inspector.core.errors import InputError
from inspector.core.evaluation.gold import load_gold
from inspector.core.evaluation.metrics import IndexSearch, evaluate
from inspector.core.evaluation.model_compare import model_figures
from inspector.core.retrieval.index import build_index

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "sample_docs" / "handbook.md"


@pytest.fixture(scope="module")
def setup():
    doc = load_document(HANDBOOK)
    chunks = {doc.doc_id: chunk_document(doc, "markdown")}
    gold = load_gold(HANDBOOK.with_name("handbook.gold.jsonl"), [doc])
    return doc, chunks, gold


def test_each_models_figures_are_its_own_index_and_the_change_is_paired(setup):
    doc, chunks, gold = setup
    first, second = HashEmbedder(), HashEmbedder(dim=64, trigram_weight=0.0)  # two different models
    index = build_index([doc], chunks, first)
    fig = model_figures(index, gold, second, 5)
    other = build_index([doc], chunks, second)
    want = [evaluate(gold.questions, [doc], chunks, IndexSearch(i, multi_doc=False), 5) for i in (index, other)]
    assert (fig.first.hit_rate, fig.first.mrr) == (want[0].hit_rate, want[0].mrr)
    assert (fig.second.hit_rate, fig.second.mrr) == (want[1].hit_rate, want[1].mrr)
    assert [q.rank for q in fig.first.questions] != [q.rank for q in fig.second.questions]
    d = fig.paired["hit_rate"]
    assert d.delta == pytest.approx(fig.second.hit_rate - fig.first.hit_rate)
    assert d.ci[0] <= d.delta <= d.ci[1] and set(fig.paired) == {"hit_rate", "mrr"}
    assert fig.first_model["model_id"] == first.model_id and fig.second_model["model_id"] == second.model_id
    assert fig.chunks == len(index.entries) and fig.k == 5 and fig.retriever == "dense"


def test_the_same_model_twice_changes_nothing(setup):
    doc, chunks, gold = setup
    emb = HashEmbedder()
    fig = model_figures(build_index([doc], chunks, emb), gold, HashEmbedder(), 5, retriever="hybrid")
    assert fig.second.hit_rate == fig.first.hit_rate and fig.paired["hit_rate"].delta == 0
    assert not fig.comparison.fixed and not fig.comparison.broke


def test_bm25_and_an_index_without_vectors_are_refused(setup):
    doc, chunks, gold = setup
    index = build_index([doc], chunks, HashEmbedder())
    with pytest.raises(InputError, match="BM25 reads no vectors"):
        model_figures(index, gold, HashEmbedder(dim=64), 5, retriever="bm25")
    with pytest.raises(InputError, match="without an embedding model"):
        model_figures(build_index([doc], chunks, None), gold, HashEmbedder(dim=64), 5)
