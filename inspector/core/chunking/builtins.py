"""The built-in strategies declared: each one's name, parameters and description, with its pure
function named by module and imported when it first runs.

Reading the declarations (the strategy panel's sliders, `strategies`, the CLI's flags) imports
neither numpy nor any chunker: the window builds its controls from them before it shows, and the
chunkers (numpy, the tokenizer's tables, the Markdown parser) load on the worker thread that first
chunks (issue 31). Each function lives in the module named here; `load()` imports them all (the
helper process's warm-up).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from inspector.core.chunking.chunk import STUB_TOKENS
from inspector.core.chunking.params import Param, Strategy

if TYPE_CHECKING:
    from inspector.core.chunking.chunk import Chunk
    from inspector.core.documents.document import Document


@dataclass(frozen=True, slots=True)
class Deferred:
    """A strategy function named by its module and attribute, imported at its first call."""

    module: str
    """Dotted module name, e.g. "inspector.core.chunking.markdown"."""
    name: str
    """The function's name in that module."""

    def resolve(self) -> Any:
        """The function itself (its module imported now if it is not yet)."""
        return getattr(importlib.import_module(self.module), self.name)

    def __call__(self, doc: Document, params: dict[str, Any]) -> tuple[Chunk, ...]:
        result: tuple[Chunk, ...] = self.resolve()(doc, params)
        return result


def _in(module: str, name: str | None = None) -> Deferred:
    return Deferred(f"inspector.core.chunking.{module}", name or module)


FIXED_CHARS = Strategy(
    "fixed_chars", _in("fixed_chars"),
    (
        Param("size", "characters", 500, 1, 20000, 10, "Window length", role="size",
              practical=(50, 10000), scale="log10"),
        Param("overlap", "characters", 0, 0, 10000, 10, "Characters shared by neighbouring windows",
              role="overlap", less_than="size", scale="log10", practical_share=0.5),
    ),
    "Windows of `size` characters stepping by size - overlap; boundaries fall wherever they fall.",
    prefix_default=False,
)

FIXED_TOKENS = Strategy(
    "fixed_tokens", _in("fixed_tokens"),
    (
        Param("size", "tokens", 256, 1, 8192, 8, "Window length in cl100k tokens", role="size",
              practical=(16, 4096), scale="log2"),
        Param("overlap", "tokens", 0, 0, 4096, 8, "Tokens shared by neighbouring windows", role="overlap",
              less_than="size", scale="log2", practical_share=0.5),
    ),
    "Windows of `size` cl100k tokens with `overlap` tokens shared, like LangChain's TokenTextSplitter.",
    prefix_default=False,
)

MARKDOWN = Strategy(
    "markdown", _in("markdown"),
    (
        Param("size", "tokens", 256, 16, 8192, 8, "Soft cap: blocks are packed up to this many tokens",
              role="size", practical=(16, 4096), scale="log2"),
        Param("hard_cap", "tokens", 512, 16, 16384, 8,
              "Tables, code, lists and quotes stay whole up to this; chunks above it are over budget",
              at_least="size", practical=(64, 8192), scale="log2"),
        Param("fit_embedder", "", True,
              help="Split what the embedder would cut short: prefix + chunk within its word-piece limit"),
        Param("min_tokens", "tokens", STUB_TOKENS, 0, 256, 8,
              "Chunks below this (at most size / 2) merge into their neighbour in their section (0: off)"),
    ),
    "Structure first, size second: headings attached to their sections, tables, code and lists kept "
    "whole up to a hard cap and to what the embedder reads, split between rows or items with the "
    "header or lead-in carried along.",
)

PARAGRAPH = Strategy(
    "paragraph", _in("paragraph"),
    (),
    "Split on blank lines: one chunk per paragraph (the naive baseline).",
    prefix_default=False,
)

RECURSIVE = Strategy(
    "recursive", _in("recursive"),
    (
        Param("size", "tokens", 256, 1, 8192, 8, "Token budget per chunk", role="size",
              practical=(16, 4096), scale="log2"),
        Param("overlap", "tokens", 0, 0, 4096, 8, "Tokens of trailing pieces repeated in the next chunk",
              role="overlap", less_than="size", scale="log2", practical_share=0.5),
    ),
    "Separator hierarchy (paragraph, line, sentence, word, character) to a token budget, small "
    "pieces merged; LangChain's RecursiveCharacterTextSplitter on spans.",
    prefix_default=False,
)

PARENT_CHILD = Strategy(
    "parent_child", _in("parent_child"),
    (
        Param("parent_size", "tokens", 1024, 32, 16384, 16, "Size of the parents returned to the model",
              role="size", practical=(64, 8192), scale="log2"),
        Param("child_size", "tokens", 128, 16, 4096, 8, "Size of the children that are matched",
              less_than="parent_size", practical=(16, 2048), scale="log2"),
        Param("child_overlap", "tokens", 0, 0, 2048, 8, "Overlap between neighbouring children",
              role="overlap", less_than="child_size", scale="log2", practical_share=0.5),
        Param("fit_embedder", "", True,
              help="Cut children the embedder would read only in part: prefix + child within its limit"),
    ),
    "Small children (matched) inside big parents (returned); both are spans of the text.",
)

SENTENCES = Strategy(
    "sentences", _in("sentences"),
    (
        Param("size", "tokens", 256, 1, 8192, 8, "Token budget per chunk", role="size",
              practical=(16, 4096), scale="log2"),
        Param("overlap", "sentences", 0, 0, 20, 1, "Sentences repeated at the start of the next chunk",
              role="overlap"),
    ),
    "Whole sentences packed up to a token budget; a sentence over budget is cut into token windows.",
    prefix_default=False,
)

SEMANTIC = Strategy(
    "semantic", _in("semantic"),
    (
        Param("threshold", "percentile", 90, 1, 99, 1,
              "Break at gaps whose sentence distance is above this percentile (90: the 10% largest "
              "drops in similarity); lower means more breaks"),
        Param("min_size", "tokens", 64, 0, 4096, 8, "A chunk is not ended at a break before this size",
              less_than="max_size", practical=(0, 1024), scale="log2"),
        # max_size holds the size role: it is the token budget (`ctx.make(budget=...)`), what
        # `size` means for recursive and sentences, so `--size` and a sweep's sizes set it.
        Param("max_size", "tokens", 256, 1, 8192, 8, "Hard limit; a longer sentence is cut into windows",
              role="size", practical=(16, 4096), scale="log2"),
    ),
    "Breaks where the similarity of neighbouring sentences drops (embeddings), within min and max "
    "token sizes.",
    needs_embedder=True,
)

#: The built-in strategies, in the order the window and `strategies` list them.
BUILTINS: tuple[Strategy, ...] = (
    FIXED_CHARS, FIXED_TOKENS, MARKDOWN, PARAGRAPH, RECURSIVE, PARENT_CHILD, SENTENCES, SEMANTIC,
)


def load() -> None:
    """Import every built-in's function now (the helper process's warm-up, before its first job)."""
    for strategy in BUILTINS:
        if isinstance(strategy.func, Deferred):
            strategy.func.resolve()
