"""The `semantic` strategy embeds its sentences with the model the user chose (issue 28: "the
embedding model is the user's choice, everywhere"), not always with the bundled MiniLM: with a
second real model (the bundled one's first two layers, tests/support/models.py) its breaks move,
and each model's distances and sentence vectors are kept apart."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from inspector.cli import main
from inspector.core.chunking import semantic as sem
from inspector.core.chunking.registry import chunk_document
from inspector.core.documents.document import from_text
from inspector.core.embedding.cache import EmbeddingCache
from inspector.core.embedding.embedder import cache_namespace, text_key
from inspector.core.embedding.spec import make_embedder
from inspector.core.workbench import Workbench

pytestmark = pytest.mark.slow

HANDBOOK = Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md"
PARAMS = {"threshold": 80, "min_size": 16, "max_size": 256}


def _excerpt() -> str:
    text = HANDBOOK.read_text(encoding="utf-8")
    return text[:text.index("\n\n", 9000)] + "\n"  # a dozen sections: enough breaks to differ


@pytest.fixture(scope="module")
def two_layer(two_layer_model):
    return make_embedder(f"st:{two_layer_model}", device="cpu")


def test_breaks_follow_the_workbenchs_model_and_are_kept_per_model(minilm, two_layer, tmp_path):
    doc = from_text(_excerpt(), "handbook.md")
    cache = EmbeddingCache(tmp_path / "cache")
    sem.set_semantic_cache(cache)
    try:
        wb = Workbench([doc], embedder=minilm)
        wb.set_embedder(minilm)
        assert sem.semantic_embedder() is minilm
        with_minilm = [(c.start, c.end) for c in chunk_document(doc, "semantic", PARAMS)]
        wb.set_embedder(two_layer)  # what Settings > Embedding Model and --embedder do
        assert sem.semantic_embedder() is two_layer
        with_two = [(c.start, c.end) for c in chunk_document(doc, "semantic", PARAMS)]
        assert with_minilm != with_two  # other sentence vectors, other breaks
        # Both cover the same text, in order (only the breaks moved).
        assert with_minilm[0][0] == with_two[0][0] and with_minilm[-1][1] == with_two[-1][1]

        # Distances are remembered per model: each model's are found under its own key.
        spans = sem.sentence_units(sem.SpanContext(doc))[0]
        keys = [(doc.sha256, doc.kind, cache_namespace(e), id(e)) for e in (minilm, two_layer)]
        assert keys[0] != keys[1]
        d_minilm, d_two = (sem._DISTANCES.lookup(k) for k in keys)
        assert d_minilm is not None and d_two is not None and not np.allclose(d_minilm, d_two, atol=1e-3)
        # Sentence vectors sit in the cache under each model's namespace, never shared.
        first = doc.text[spans[0][0]:spans[0][1]]
        a, b = (cache.get(cache_namespace(e), text_key(first), e.dim) for e in (minilm, two_layer))
        assert a is not None and b is not None and not np.allclose(a, b, atol=1e-2)
        # Going back to MiniLM gives MiniLM's chunks again (nothing of the other model is served).
        wb.set_embedder(minilm)
        assert [(c.start, c.end) for c in chunk_document(doc, "semantic", PARAMS)] == with_minilm
    finally:
        sem.set_semantic_cache(None)


def test_chunks_on_the_command_line_uses_the_chosen_model(capsys, two_layer_model, tmp_path):
    path = tmp_path / "handbook.md"
    path.write_text(_excerpt(), encoding="utf-8")
    flags = ["--param", "threshold=80", "--param", "min_size=16", "--size", "256"]

    def spans(*extra: str) -> list[tuple[int, int]]:
        assert main(["chunks", str(path), "--strategy", "semantic", "--format", "jsonl", "--device", "cpu",
                     *flags, *extra]) == 0
        recs = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
        return [(r["metadata"]["start_index"], r["metadata"]["end_index"]) for r in recs]

    before = sem.chosen_semantic_embedder()
    two = spans("--embedder", f"st:{two_layer_model}")
    assert sem.chosen_semantic_embedder() is before  # the command put the process's choice back
    minilm = spans()
    assert two != minilm
    assert spans("--embedder", f"st:{two_layer_model}") == two
