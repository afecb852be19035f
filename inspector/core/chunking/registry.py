"""The strategy registry: the built-ins, listed explicitly, plus what users register at run time
(plug-ins, strategy files, imported chunks). Importing a strategy module has no side effect."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inspector.core.chunking import (
    fixed_chars,
    fixed_tokens,
    markdown,
    paragraph,
    parent_child,
    recursive,
    semantic,
    sentences,
)
from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.params import Strategy
from inspector.core.documents.document import Document

#: The built-in strategies, in the order the window and `strategies` list them.
BUILTINS: tuple[Strategy, ...] = (
    fixed_chars.STRATEGY,
    fixed_tokens.STRATEGY,
    markdown.STRATEGY,
    paragraph.STRATEGY,
    recursive.STRATEGY,
    parent_child.STRATEGY,
    sentences.STRATEGY,
    semantic.STRATEGY,
)

_REGISTRY: dict[str, Strategy] = {s.name: s for s in BUILTINS}


def register_strategy(strategy: Strategy) -> None:
    """Add (or replace) a strategy under its name."""
    _REGISTRY[strategy.name] = strategy


def unregister(name: str) -> None:
    _REGISTRY.pop(name, None)


def strategies() -> dict[str, Strategy]:
    """All registered strategies by name: the built-ins first, then the user's."""
    return dict(_REGISTRY)


def get_strategy(name: str) -> Strategy:
    if name not in _REGISTRY:
        raise ValueError(f"unknown strategy '{name}' (known: {', '.join(_REGISTRY)})")
    return _REGISTRY[name]


def chunk_document(doc: Document, strategy: str, params: Mapping[str, Any] | None = None) -> tuple[Chunk, ...]:
    """Run a strategy by name."""
    return get_strategy(strategy)(doc, params)
