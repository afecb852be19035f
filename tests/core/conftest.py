"""Core test fixtures: the real model loaded once, the two-document corpus and its gold set (the
private cache folder is in tests/conftest.py)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "gold"


@pytest.fixture(scope="session")
def minilm():
    """The bundled all-MiniLM-L6-v2, loaded once per session (slow tests only)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from inspector.core.embedding.embedder import MiniLMEmbedder

    emb = MiniLMEmbedder()
    emb.load()
    return emb


@pytest.fixture()
def corpus(tmp_path) -> Path:
    """A copy of tests/data/gold/corpus (two documents) the test may change."""
    folder = tmp_path / "corpus"
    shutil.copytree(DATA / "corpus", folder)
    return folder


@pytest.fixture()
def gold(tmp_path) -> Path:
    """A copy of tests/data/gold/good.gold.jsonl (questions about the two-document corpus)."""
    p = tmp_path / "g.gold.jsonl"
    shutil.copy(DATA / "good.gold.jsonl", p)
    return p


@pytest.fixture(scope="session")
def two_layer_model(tmp_path_factory) -> Path:
    """A second real sentence-transformers model: the bundled one's first two layers, saved to a
    folder once per session (tests/support/models.py)."""
    from tests.support.models import two_layer_minilm

    return two_layer_minilm(tmp_path_factory)


@pytest.fixture()
def restore_pieces():
    """Tests that point word-piece counts at another model get the bundled model's back."""
    from inspector.core.text import wordpieces

    yield
    wordpieces.use_piece_spec(None)


@pytest.fixture(scope="session")
def static_model(tmp_path_factory) -> Path:
    """A real static model (StaticEmbedding over the bundled model's input embeddings), saved to a
    folder once per session (tests/support/models.py)."""
    from tests.support.models import static_minilm

    return static_minilm(tmp_path_factory)


@pytest.fixture()
def kept_on_disk(monkeypatch, tmp_path):
    """A document's data kept on disk (`keptfiles`: token indexes, structures), which the suite
    runs without, in a cache folder of this test's own, for short texts too, written at once; no
    index, structure or word-piece index in memory before or after. Yields the cache folder."""
    from inspector.core.runtime import keptfiles
    from inspector.core.text import structure, tokens, wordpieces

    monkeypatch.setenv(keptfiles.ENV_VAR, "1")
    monkeypatch.setenv("CHUNK_INSPECTOR_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(keptfiles, "PERSIST_AT_LEAST", 1)
    monkeypatch.setattr(keptfiles, "IN_BACKGROUND", False)  # written before the call returns
    caches = (tokens._INDEXES, structure._STRUCTURES, structure._OUTLINES, wordpieces._INDEXES)
    for cache in caches:
        cache.clear()
    yield tmp_path
    for cache in caches:
        cache.clear()


@pytest.fixture()
def kept(kept_on_disk, request):
    """The folder of the test module's kind of kept data (its `KEPT`), the cache on (`kept_on_disk`)."""
    return request.module.KEPT.folder(kept_on_disk)
