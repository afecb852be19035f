"""The corpus: the documents a workbench covers, the gold set, and which questions are about which
documents. Plain state, replaced whole and never mutated, so a job that started keeps a
consistent view while the window opens other files."""

from __future__ import annotations

import os
from collections.abc import Sequence

from inspector.core.documents.document import Document, LoadResult, load_paths
from inspector.core.evaluation.gold import GoldQuestion, GoldSet, load_gold

Gold = GoldSet | Sequence[GoldQuestion] | None
"""A gold set as a workbench is handed one: loaded from a file, a plain list of questions, or none."""


def questions_of(gold: Gold) -> tuple[GoldQuestion, ...]:
    """Every question of a gold set, whichever form it was handed in."""
    if gold is None:
        return ()
    return tuple(gold.questions if isinstance(gold, GoldSet) else gold)


class Corpus:
    """The documents and the gold set (each replaced whole, never mutated)."""

    def __init__(self, documents: Sequence[Document] = (), gold: Gold = None) -> None:
        self.documents: tuple[Document, ...] = tuple(documents)
        self.gold: Gold = gold

    def open(self, paths: Sequence[str | os.PathLike[str]], *, encoding: str | None = None) -> LoadResult:
        """Load files and folders as the corpus; returns what loaded and the problems. `encoding`
        forces a codec for plain-text files (None: detect; a guess is noted in each document's meta)."""
        loaded = load_paths(list(paths), encoding=encoding)
        self.set_documents(loaded.documents)
        return loaded

    def set_documents(self, documents: Sequence[Document]) -> None:
        self.documents = tuple(documents)

    def load_gold(self, path: str | os.PathLike[str]) -> GoldSet:
        """Read a gold file against the corpus (InputError naming file, line and field)."""
        gold = load_gold(path, self.documents)
        self.gold = gold
        return gold

    def set_gold(self, gold: Gold) -> None:
        self.gold = gold

    def questions(self, docs: Sequence[Document] | None = None) -> tuple[GoldQuestion, ...]:
        """The gold questions about these documents (all of the corpus by default): those naming
        no source, or a source among them."""
        qs = questions_of(self.gold)
        if docs is None:
            return qs
        ids = {d.doc_id for d in docs}
        return tuple(q for q in qs if q.source is None or q.source in ids)


__all__ = ["Corpus", "Gold", "questions_of"]
