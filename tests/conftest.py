"""Shared test settings: offline, offscreen, a private cache folder."""

from __future__ import annotations

import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# `make test` runs two pytest-xdist workers (one per core): each worker's torch, OpenMP and BLAS
# get one thread, or the two workers' pools would fight over the two cores. Set before anything
# imports torch; the subprocesses a test starts inherit it.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if XDIST_WORKER:
    for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("ci", deadline=None, max_examples=60,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile("ci")


def pytest_configure(config):
    if XDIST_WORKER and "torch" in sys.modules:  # already imported (a plugin): set it directly
        sys.modules["torch"].set_num_threads(1)


def pytest_collection_modifyitems(config, items):
    """Under `--dist loadgroup`, every test of a module that starts a Ray cluster runs in one
    worker: its module-scoped cluster starts once, and never beside a second one."""
    for item in items:
        if "ray_cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("ray"))


@pytest.fixture(scope="session", autouse=True)
def _private_cache_dir(tmp_path_factory):
    """Nothing a test embeds lands in the user's cache folder. And no document's data is kept on disk
    (`keptfiles`: token indexes, structures; tested on their own): a test that times or watches a
    document's first chunking (its encode threads, its work meanwhile) must build it, whichever
    test of the session opened the same text before."""
    from inspector.core.embedding import cache
    from inspector.core.runtime import cachedir, keptfiles

    saved = {var: os.environ.get(var) for var in (cachedir.ENV_VAR, keptfiles.ENV_VAR)}
    os.environ[cachedir.ENV_VAR] = str(tmp_path_factory.mktemp("chunk-inspector-cache"))
    os.environ[keptfiles.ENV_VAR] = "0"
    cache.set_default_cache(None)
    yield
    cache.set_default_cache(None)
    for var, old in saved.items():
        if old is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = old


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
