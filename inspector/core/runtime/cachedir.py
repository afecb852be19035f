"""The app's cache folder on disk: `$CHUNK_INSPECTOR_CACHE_DIR`, else the platform's user cache
folder. Here, below the domain, so that every layer may keep its caches there (the embeddings'
segments, the tokenizer's parsed ranks)."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "CHUNK_INSPECTOR_CACHE_DIR"


def default_cache_dir() -> Path:
    """`$CHUNK_INSPECTOR_CACHE_DIR`, else the platform's user cache folder for the app."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("chunk-inspector"))
