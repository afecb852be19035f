"""The retrievers by name: one `Literal` type for the seams that take one, one tuple (in menu
order) for the menus and for validating a name read from a file or a command line."""

from __future__ import annotations

from typing import Literal, TypeGuard, get_args

Retriever = Literal["dense", "bm25", "hybrid"]
RETRIEVERS: tuple[Retriever, ...] = get_args(Retriever)


def is_retriever(name: object) -> TypeGuard[Retriever]:
    """`name` is one of `RETRIEVERS` (a name read from settings, a menu or a command line)."""
    return name in RETRIEVERS


__all__ = ["Retriever", "RETRIEVERS", "is_retriever"]
