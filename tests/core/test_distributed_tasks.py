"""The Ray engine's tasks as plain functions (no cluster): what travels to a worker and what a
worker keeps between tasks."""

from __future__ import annotations

import pickle

import pytest

from inspector.core.chunking.semantic import chosen_semantic_embedder, semantic_embedder, set_semantic_embedder
from inspector.core.distributed import tasks
from inspector.core.documents.document import Document
from inspector.core.embedding.embedder import HashEmbedder
from inspector.core.evaluation.config import EvalConfig


@pytest.fixture
def fresh_worker(monkeypatch):
    """A worker process's state as new: no embedder kept, the semantic strategy's model put back."""
    from inspector.core.runtime.lru import SizedLRU

    monkeypatch.setattr(tasks, "_WORKER_EMBEDDERS", SizedLRU(tasks.WORKER_EMBEDDERS_KEPT, tasks.WORKER_EMBEDDERS_KEPT))
    before = chosen_semantic_embedder()
    yield
    set_semantic_embedder(before)


def _doc(i: int) -> Document:
    text = "\n\n".join(f"Section {i}.{j} talks about topic {j % 3}. It has a second sentence on {j}."
                       for j in range(12))
    return Document(text=text, name=f"d{i}.md", doc_id=f"d{i}.md")


def test_a_worker_loads_a_travelling_model_once_not_once_per_document(fresh_worker):
    """Each task's spec arrives unpickled, a new embedder object each time: the semantic strategy
    with a model other than the bundled one (st:, static:, openai:) loaded it once per document
    chunked. Now each worker keeps the one it made, and the chunks stay the same."""
    from inspector.core.chunking.registry import get_strategy

    spec = tasks.EmbedderSpec.of(HashEmbedder(dim=64))
    assert not spec.minilm
    cfg = EvalConfig("semantic", {})
    used, chunks = [], []
    for i in range(3):
        travelled = pickle.loads(pickle.dumps(spec))  # as Ray hands it to the task
        out = tasks.chunk_document(_doc(i), [cfg], [], [get_strategy("semantic")], travelled)
        used.append(semantic_embedder())
        chunks.append(out[0])
    assert used[0] is used[1] is used[2] and isinstance(used[0], HashEmbedder)
    assert all(chunks)
    # The same chunks as a worker that made a new embedder for the document.
    tasks._WORKER_EMBEDDERS.clear()
    again = tasks.chunk_document(_doc(2), [cfg], [], [get_strategy("semantic")], pickle.loads(pickle.dumps(spec)))
    assert semantic_embedder() is not used[0] and again[0] == chunks[2]


def test_a_worker_keeps_a_few_models_the_most_recent(fresh_worker):
    specs = [tasks.EmbedderSpec.of(HashEmbedder(dim=d)) for d in (16, 32, 48, 64)]
    made = [pickle.loads(pickle.dumps(s)).worker_copy() for s in specs]
    assert len(tasks._WORKER_EMBEDDERS) == tasks.WORKER_EMBEDDERS_KEPT == 3
    assert pickle.loads(pickle.dumps(specs[3])).worker_copy() is made[3]  # kept
    assert pickle.loads(pickle.dumps(specs[0])).worker_copy() is not made[0]  # the oldest went first
    assert [k[1] for k in tasks._WORKER_EMBEDDERS] == [48, 64, 16]
