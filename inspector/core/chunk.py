"""Chunks as spans, strategy parameters as declarations, and the strategy registry."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

from inspector.core.document import Document

#: Flags a chunk can carry (shown in the table and painted on the text).
FLAGS = ("no_heading", "cut_mid_sentence", "split_table", "over_budget", "truncated_by_embedder")

PREFIX_SEPARATOR = " > "


@dataclass(frozen=True, slots=True)
class Chunk:
    """A span of a document's text plus what a retrieval pipeline would attach to it."""

    id: int
    """Position in the strategy's output (0-based); unique within one document's chunks."""
    start: int
    """Code-point offset into `Document.text` where the chunk starts."""
    end: int
    """Offset just past the chunk's last character: the text is `doc.text[start:end]`."""
    token_count: int
    """Exact cl100k count of the span text (`len(enc.encode(text))`)."""
    heading_path: tuple[str, ...] = ()
    """Headings enclosing the chunk's start (Markdown)."""
    prefix: str = ""
    """Context prefix: title > heading path (> table header for split tables). Kept beside the span."""
    parent_id: int | None = None
    """For children of `parent_child`: the id of the parent chunk."""
    flags: frozenset[str] = frozenset()
    """Subset of FLAGS."""
    role: str = "chunk"
    """"chunk", or "parent"/"child" for parent_child."""
    doc_id: str = ""
    """Document the span belongs to (corpus mode)."""
    embed_tokens: int | None = None
    """Word pieces the embedding model sees for prefix + text (incl. [CLS]/[SEP]), when measured."""
    embed_dropped: int = 0
    """Word pieces beyond the model's limit, silently dropped by the embedder."""
    truncated_at: int | None = None
    """Offset in the document where the embedder stops reading (None if nothing is dropped)."""
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    """Extra per-chunk facts (e.g. page number, table header text)."""

    @property
    def key(self) -> str:
        """Corpus-wide identifier, e.g. "handbook.md#12"."""
        return f"{self.doc_id}#{self.id}"

    def text(self, doc: Document) -> str:
        return doc.text[self.start:self.end]

    def embedded_text(self, doc: Document, *, with_prefix: bool = True) -> str:
        """Exactly what is embedded: prefix, a blank line, then the span text."""
        body = doc.text[self.start:self.end]
        if with_prefix and self.prefix:
            return f"{self.prefix}\n\n{body}"
        return body

    def with_flags(self, *add: str) -> Chunk:
        return replace(self, flags=self.flags | frozenset(add))


_CHUNK_FIELDS = tuple(f for f in Chunk.__dataclass_fields__)
_CHUNK_SETTERS = tuple(Chunk.__dict__[name].__set__ for name in _CHUNK_FIELDS)
_new = object.__new__


def new_chunk(id: int, start: int, end: int, token_count: int, heading_path: tuple[str, ...],
              prefix: str, parent_id: int | None, flags: frozenset[str], role: str, doc_id: str,
              meta: Mapping[str, Any]) -> Chunk:
    """The same object `Chunk(...)` makes, in half the time: a frozen dataclass's generated
    `__init__` goes through `object.__setattr__` per field, which dominates building thousands of
    chunks on every slider move. This fills the slots directly (a test checks equality)."""
    c = _new(Chunk)
    for setter, value in zip(_CHUNK_SETTERS, (id, start, end, token_count, heading_path, prefix,
                                              parent_id, flags, role, doc_id, None, 0, None, meta)):
        setter(c, value)
    return c


@dataclass(frozen=True, slots=True)
class Param:
    """A declared strategy parameter; the GUI builds its control from this."""

    name: str
    unit: str
    """"tokens", "characters", "sentences", "percentile" ..."""
    default: int | float | bool | str
    minimum: int | float = 0
    maximum: int | float = 0
    step: int | float = 1
    help: str = ""
    choices: tuple[str, ...] = ()
    """For string parameters: allowed values."""

    @property
    def kind(self) -> str:
        if isinstance(self.default, bool):
            return "bool"
        if isinstance(self.default, str):
            return "choice"
        return "int" if isinstance(self.default, int) else "float"


@dataclass(frozen=True, slots=True)
class Strategy:
    """A registered chunking strategy: a pure function of (document, params)."""

    name: str
    func: Callable[[Document, Mapping[str, Any]], tuple[Chunk, ...]]
    params: tuple[Param, ...]
    description: str
    needs_embedder: bool = False
    check: Callable[[dict[str, Any]], None] | None = None
    """Cross-parameter constraints (raise ValueError), run after the per-parameter checks."""
    prefix_default: bool = True
    """Whether the context prefix is embedded by default. Off for the naive strategies, which stand
    for pipelines that embed raw text (LangChain's splitters add no heading path); on for the
    structure-aware ones. Either way it can be switched, so its effect can be measured."""

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def validate(self, params: Mapping[str, Any] | None) -> dict[str, Any]:
        """Defaults filled in, types checked, ranges and cross-constraints enforced (ValueError)."""
        merged = self.defaults()
        for k, v in (params or {}).items():
            if k not in merged:
                known = ", ".join(merged) or "none"
                raise ValueError(f"strategy '{self.name}' has no parameter '{k}' (known: {known})")
            merged[k] = v
        for p in self.params:
            v = merged[p.name]
            if p.kind in ("int", "float"):
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    try:
                        v = float(v) if p.kind == "float" else int(v)
                    except (TypeError, ValueError):
                        raise ValueError(f"{self.name}: {p.name} must be a number, got {v!r}") from None
                if p.kind == "int":
                    if isinstance(v, float) and not v.is_integer():
                        raise ValueError(f"{self.name}: {p.name} must be a whole number, got {v}")
                    v = int(v)
                if not (p.minimum <= v <= p.maximum):
                    raise ValueError(f"{self.name}: {p.name} must be between {p.minimum} and "
                                     f"{p.maximum} {p.unit}, got {v}")
            elif p.kind == "bool":
                v = bool(v)
            elif p.choices and v not in p.choices:
                raise ValueError(f"{self.name}: {p.name} must be one of {', '.join(p.choices)}, got {v!r}")
            merged[p.name] = v
        units = {p.name: p.unit for p in self.params}
        if ("overlap" in merged and "size" in merged and units["overlap"] == units["size"]
                and merged["overlap"] >= merged["size"]):
            raise ValueError(f"{self.name}: overlap ({merged['overlap']}) must be smaller than size "
                             f"({merged['size']})")
        if self.check is not None:
            self.check(merged)
        return merged

    def __call__(self, doc: Document, params: Mapping[str, Any] | None = None) -> tuple[Chunk, ...]:
        return self.func(doc, self.validate(params))


_REGISTRY: dict[str, Strategy] = {}


def register(name: str, params: tuple[Param, ...], description: str, *, needs_embedder: bool = False,
             check: Callable[[dict[str, Any]], None] | None = None, prefix_default: bool = True):
    """Decorator: register `func(doc, params) -> tuple[Chunk, ...]` under `name`."""

    def deco(func):
        _REGISTRY[name] = Strategy(name, func, params, description, needs_embedder, check, prefix_default)
        return func

    return deco


def register_strategy(strategy: Strategy) -> None:
    _REGISTRY[strategy.name] = strategy


def unregister(name: str) -> None:
    _REGISTRY.pop(name, None)


def strategies() -> dict[str, Strategy]:
    """All registered strategies by name (built-ins are imported on first use)."""
    import inspector.core.chunkers  # noqa: F401  (registers the built-ins)

    return dict(_REGISTRY)


def get_strategy(name: str) -> Strategy:
    all_ = strategies()
    if name not in all_:
        raise ValueError(f"unknown strategy '{name}' (known: {', '.join(all_)})")
    return all_[name]


def chunk_document(doc: Document, strategy: str, params: Mapping[str, Any] | None = None) -> tuple[Chunk, ...]:
    """Run a strategy by name."""
    return get_strategy(strategy)(doc, params)
