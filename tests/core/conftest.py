"""Core test fixtures: the real model loaded once (the private cache folder is in tests/conftest.py)."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def minilm():
    """The bundled all-MiniLM-L6-v2, loaded once per session (slow tests only)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from inspector.core.embedding.embedder import MiniLMEmbedder

    emb = MiniLMEmbedder()
    emb.load()
    return emb
