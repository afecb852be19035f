"""Strategy parameters as declarations, and strategies as pure functions that carry them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from inspector.core.chunking.chunk import Chunk
from inspector.core.documents.document import Document


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
