"""Shared test settings: offline, offscreen, a private cache folder."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("ci", deadline=None, max_examples=60,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile("ci")


@pytest.fixture(scope="session", autouse=True)
def _private_cache_dir(tmp_path_factory):
    """Nothing a test embeds lands in the user's cache folder."""
    from inspector.core.embedding import cache

    old = os.environ.get(cache.ENV_VAR)
    os.environ[cache.ENV_VAR] = str(tmp_path_factory.mktemp("chunk-inspector-cache"))
    cache.set_default_cache(None)
    yield
    cache.set_default_cache(None)
    if old is None:
        os.environ.pop(cache.ENV_VAR, None)
    else:
        os.environ[cache.ENV_VAR] = old


@pytest.fixture()
def keep_default_embedder():
    """--device flags and the window's device setting reconfigure the process-wide embedder: the
    tests after get theirs back."""
    from inspector.core.embedding import embedder as mod

    saved, settings = mod._DEFAULT, dict(mod._DEFAULT_SETTINGS)
    yield
    mod._DEFAULT = saved
    mod._DEFAULT_SETTINGS.clear()
    mod._DEFAULT_SETTINGS.update(settings)


@pytest.fixture(autouse=True)
def _semantic_model_reset():
    """A test that chose an embedding model (Workbench.set_embedder, --embedder) also chose the
    semantic strategy's: the tests after get the default back."""
    yield
    from inspector.core.chunking import semantic

    semantic.set_semantic_embedder(None)
