"""The strategy registry: the built-ins, declared in `builtins` (their functions imported when
they first run), plus what users register at run time (plug-ins, strategy files, imported chunks).
Importing it imports no chunker and no numpy (issue 31: the window reads the declarations before
it shows)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from inspector.core.chunking.builtins import BUILTINS
from inspector.core.chunking.params import Strategy

if TYPE_CHECKING:
    from inspector.core.chunking.chunk import Chunk
    from inspector.core.documents.document import Document

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
