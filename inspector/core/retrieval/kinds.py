"""The retrievers by name: one `Literal` type for the seams that take one, one tuple (in menu
order) for the menus and for validating a name read from a file or a command line."""

from __future__ import annotations

from typing import Literal, get_args

Retriever = Literal["dense", "bm25", "hybrid"]
RETRIEVERS: tuple[Retriever, ...] = get_args(Retriever)

__all__ = ["Retriever", "RETRIEVERS"]
