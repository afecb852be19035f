"""The retrievers by name: one `Literal` type for the seams that take one, one tuple (in menu
order) for the menus and for validating a name read from a file or a command line."""

from __future__ import annotations

from typing import Literal, get_args

Retriever = Literal["dense", "bm25", "hybrid"]
RETRIEVERS: tuple[Retriever, ...] = get_args(Retriever)

#: What a retrieval stage's figures are (`RetrievalResult.mode`): the model's own vectors (or BM25
#: chosen by the user), the live preview from piece vectors, or BM25 standing in for dense/hybrid
#: until vectors exist. Here rather than beside the staging that sets them, so that the window
#: compares modes without importing retrieval and evaluation before it shows (issue 31).
EXACT, POOLED, FALLBACK = "exact", "pooled", "fallback"

__all__ = ["Retriever", "RETRIEVERS", "EXACT", "POOLED", "FALLBACK"]
