"""The retrievers by name: one `Literal` type for the seams that take one, one tuple (in menu
order) for the menus and for validating a name read from a file or a command line."""

from __future__ import annotations

from typing import Literal, TypeGuard, get_args

Retriever = Literal["dense", "bm25", "hybrid"]
RETRIEVERS: tuple[Retriever, ...] = get_args(Retriever)


#: The retriever a first-run window, the command line and a configuration start with: dense
#: (issue 29; `evaluation.config` says why, and its `DEFAULT_RETRIEVER`, `EvalConfig`'s default, is
#: held to this one by test_default_retriever_is_one_value). The window's door (`api`) reads it
#: here, where it loads without numpy before the window shows (issue 31).
DEFAULT_RETRIEVER: Retriever = "dense"


def is_retriever(name: object) -> TypeGuard[Retriever]:
    """`name` is one of `RETRIEVERS` (a name read from settings, a menu or a command line)."""
    return name in RETRIEVERS


#: What a retrieval stage's figures are (`RetrievalResult.mode`): the model's own vectors (or BM25
#: chosen by the user), the live preview from piece vectors, or BM25 standing in for dense/hybrid
#: until vectors exist. Here rather than beside the staging that sets them, so that the window
#: compares modes without importing retrieval and evaluation before it shows (issue 31).
Mode = Literal["exact", "pooled", "fallback"]
EXACT: Mode = "exact"
POOLED: Mode = "pooled"
FALLBACK: Mode = "fallback"

__all__ = ["Retriever", "RETRIEVERS", "DEFAULT_RETRIEVER", "is_retriever", "Mode", "EXACT", "POOLED", "FALLBACK"]
