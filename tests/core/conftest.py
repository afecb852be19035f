"""Core test fixtures: a private embedding cache folder, and the real model loaded once."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def _private_cache_dir(tmp_path_factory):
    """Nothing a test embeds lands in the user's cache folder."""
    from inspector.core import cache

    old = os.environ.get(cache.ENV_VAR)
    os.environ[cache.ENV_VAR] = str(tmp_path_factory.mktemp("chunk-inspector-cache"))
    cache.set_default_cache(None)
    yield
    cache.set_default_cache(None)
    if old is None:
        os.environ.pop(cache.ENV_VAR, None)
    else:
        os.environ[cache.ENV_VAR] = old


@pytest.fixture(scope="session")
def minilm():
    """The bundled all-MiniLM-L6-v2, loaded once per session (slow tests only)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from inspector.core.embedding import MiniLMEmbedder

    emb = MiniLMEmbedder()
    emb.load()
    return emb
