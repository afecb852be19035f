"""What decides a score besides the gold set and the documents: `EvalConfig`, and where a
strategy keeps its size and overlap."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_args

from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.params import with_size_overlap
from inspector.core.chunking.registry import get_strategy
from inspector.core.documents.document import Document
from inspector.core.embedding.spec import EmbedderSpec
from inspector.core.errors import InputError
from inspector.core.retrieval.kinds import DEFAULT_RETRIEVER as _DEFAULT_RETRIEVER
from inspector.core.retrieval.kinds import RETRIEVERS, Retriever
from inspector.core.text.embed_view import VIEWS, EmbedView

if TYPE_CHECKING:
    from inspector.core.retrieval.index import SearchIndex

#: The retriever a configuration, the command line and a first-run window start with. Chosen by a
#: rule fixed before measuring (benchmarks/defaults.py's step 2, re-run with paraphrased questions
#: by benchmarks/retriever_paraphrase.py; benchmarks/README.md, "The default retriever, decided
#: again with paraphrased questions"): with the public set's paraphrased questions as a fourth
#: tuning set, BM25's pooled hit@5 is 4.8 points below dense's [-8.3, -1.3] and 28 points worse on
#: paraphrased questions (0.650 vs 0.933), hybrid +1.3 [-1.1, +3.5] within noise, so dense stays
#: the default (issue 29; BM25 had been chosen on questions that reuse the page's words, issue 12).
#: Held out: paraphrased test questions dense 0.828 vs BM25 0.500 hit@5. Declared beside the
#: retrievers (`retrieval.kinds`, which the window reads before it shows), one value for both.
DEFAULT_RETRIEVER: Retriever = _DEFAULT_RETRIEVER


#: Which vectors a configuration's index holds: "exact" or "pooled" (`EvalConfig.embedding`).
Embedding = Literal["exact", "pooled"]
EMBEDDINGS: tuple[Embedding, ...] = get_args(Embedding)

#: What the model reads of each chunk's span: "raw" (the text as written) or "clean" (link targets,
#: reference definitions and table padding dropped, a lost table header row repeated:
#: `inspector.core.chunking.embed_view`). Chunks stay spans of the document; a `fit_embedder`
#: budget counts the view's text (`ChunkStore.chunk`).
EMBED_VIEWS: tuple[EmbedView, ...] = VIEWS

#: The embedding view a configuration starts with (benchmarks/embed_view.py; benchmarks/README.md,
#: "Embedding view").
DEFAULT_EMBED_VIEW: EmbedView = "raw"


#: `index_factory(docs, chunks_by_doc, config) -> index` (anything with `search`); the default
#: builds `inspector.core.retrieval.index.build_index`.
IndexFactory = Callable[[Sequence[Document], Mapping[str, tuple[Chunk, ...]], "EvalConfig"], "SearchIndex"]


Progress = Callable[[int, int, str], None]


Cancel = Callable[[], bool]


@dataclass(frozen=True, slots=True)
class EvalConfig:
    """Everything that decides a score besides the gold set and the documents."""

    strategy: str = "markdown"
    params: Mapping[str, Any] = field(default_factory=dict)
    """Strategy parameters, validated (defaults filled in)."""
    k: int = 5
    retriever: Retriever = DEFAULT_RETRIEVER
    """"dense", "bm25" or "hybrid" (`DEFAULT_RETRIEVER` unless given)."""
    with_prefix: bool | None = None
    """Embed the heading-path prefix beside each chunk's text; None takes the strategy's default
    (`Strategy.prefix_default`) and is resolved to a bool on construction."""
    embedding: Embedding = "exact"
    """"exact": each chunk's text through the model, as a production pipeline does (truncated at
    the model's limit); "pooled": the live preview from piece vectors (`inspector.core.retrieval.pooled`)."""
    describe: bool = False
    """Add a contextual description (title > path, the section's first sentence, key words:
    `inspector.core.chunking.descriptions`) to each chunk's prefix before embedding, so its
    effect on the hit rate can be measured ("contextual retrieval" without an LLM)."""
    embedder: EmbedderSpec | None = None
    """The embedding model of dense and hybrid retrieval; None: the one the run was given (the
    workbench's, `--embedder`). Set when models are compared on the same chunks (`compare
    --against-embedder`, `sweep --embedders`): chunks never depend on it, only vectors do."""
    embed_view: EmbedView = DEFAULT_EMBED_VIEW
    """What the model (and BM25) reads of each span: "raw" or "clean" (`EMBED_VIEWS`); the
    spans, and so the hit test and the text handed to the LLM, are the same under both."""

    def __post_init__(self) -> None:
        strat = get_strategy(self.strategy)
        object.__setattr__(self, "params", dict(strat.validate(self.params)))
        if self.with_prefix is None:
            object.__setattr__(self, "with_prefix", strat.prefix_default)
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise ValueError(f"k must be a whole number of at least 1, got {self.k!r}")
        if self.retriever not in RETRIEVERS:
            raise ValueError(f"retriever must be one of {', '.join(RETRIEVERS)}, got {self.retriever!r}")
        if self.embedding not in EMBEDDINGS:
            raise ValueError(f"embedding must be one of {', '.join(EMBEDDINGS)}, got {self.embedding!r}")
        if self.embed_view not in EMBED_VIEWS:
            raise ValueError(f"embed_view must be one of {', '.join(EMBED_VIEWS)}, got {self.embed_view!r}")

    def __hash__(self) -> int:
        return hash((self.strategy, tuple(sorted(self.params.items())), self.k, self.retriever,
                     self.with_prefix, self.embedding, self.describe, self.embedder, self.embed_view))

    @property
    def chunking_key(self) -> tuple:
        """Configurations with equal keys share chunks and index (they differ in k only)."""
        return (self.strategy, tuple(sorted(self.params.items())), self.retriever, self.with_prefix,
                self.embedding, self.describe, self.embedder if self.retriever != "bm25" else None,
                self.embed_view)

    def label(self) -> str:
        """Short text for tables: "markdown size=400 hard_cap=1000 k=5 dense". Switches and
        floors left at their defaults (e.g. markdown's fit_embedder, min_tokens) are not spelled
        out; every numeric parameter with a role or a constraint is."""
        strat = get_strategy(self.strategy)
        quiet = {p.name for p in strat.params
                 if (p.kind == "bool" or (not p.role and not p.less_than and not p.at_least
                                          and not any(p.name in (q.less_than, q.at_least)
                                                      for q in strat.params)))
                 and p.name in self.params and self.params[p.name] == p.default}
        params = " ".join(f"{k}={v}" for k, v in self.params.items() if k not in quiet)
        prefix = "" if self.with_prefix else " no-prefix"
        pooled = " pooled" if self.embedding == "pooled" and self.retriever != "bm25" else ""
        described = " described" if self.describe else ""
        if self.embed_view != DEFAULT_EMBED_VIEW:
            described += f" view={self.embed_view}"
        model = f" @{self.embedder.label()}" if self.embedder is not None and self.retriever != "bm25" else ""
        return (f"{self.strategy}{' ' + params if params else ''} k={self.k} {self.retriever}{prefix}{pooled}"
                f"{described}{model}")

    def to_dict(self) -> dict[str, Any]:
        """The shape `--config` files use (the window exports it); `describe` only when on."""
        out = {"strategy": self.strategy, "params": dict(self.params), "k": self.k,
               "retriever": self.retriever, "with_prefix": self.with_prefix,
               "embedding": self.embedding}
        if self.describe:
            out["describe"] = True
        if self.embed_view != "raw" or DEFAULT_EMBED_VIEW != "raw":
            out["embed_view"] = self.embed_view
        if self.embedder is not None:
            out["embedder"] = self.embedder.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: Any, *, path: str | None = None) -> EvalConfig:
        """Validate a config object (InputError naming the field)."""
        if not isinstance(data, dict):
            raise InputError("a config must be a JSON object", path=path)
        known = {"strategy", "params", "k", "retriever", "with_prefix", "embedding", "describe", "embedder",
                 "embed_view"}
        extra = sorted(set(data) - known)
        if extra:
            raise InputError(f"unknown key (known: {', '.join(sorted(known))})", path=path,
                             field=extra[0])
        kwargs: dict[str, Any] = {}
        if "strategy" in data:
            if not isinstance(data["strategy"], str):
                raise InputError("must be a string", path=path, field="strategy")
            kwargs["strategy"] = data["strategy"]
        if "params" in data:
            if not isinstance(data["params"], dict):
                raise InputError("must be an object", path=path, field="params")
            kwargs["params"] = data["params"]
        if "k" in data:
            if isinstance(data["k"], bool) or not isinstance(data["k"], int) or data["k"] < 1:
                raise InputError(f"must be a whole number of at least 1, got {data['k']!r}",
                                 path=path, field="k")
            kwargs["k"] = data["k"]
        for name, choices in (("retriever", RETRIEVERS), ("embedding", EMBEDDINGS), ("embed_view", EMBED_VIEWS)):
            if name in data:
                if data[name] not in choices:
                    raise InputError(f"must be one of {', '.join(choices)}, got {data[name]!r}",
                                     path=path, field=name)
                kwargs[name] = data[name]
        for name in ("with_prefix", "describe"):
            if name in data:
                if not isinstance(data[name], bool):
                    raise InputError("must be true or false", path=path, field=name)
                kwargs[name] = data[name]
        if data.get("embedder") is not None:
            try:
                kwargs["embedder"] = EmbedderSpec.from_dict(data["embedder"])
            except InputError as exc:
                raise InputError(exc.problem, path=path,
                                 field="embedder") from None
        try:
            return cls(**kwargs)
        except ValueError as exc:
            fld = "strategy" if "unknown strategy" in str(exc) else "params"
            raise InputError(str(exc), path=path, field=fld) from None

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)


def sized_params(strategy: str, size: int | None = None, overlap: int | None = None,
                 base: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A strategy's params (by name) with a generic size and overlap put where its declarations say
    (the "size"/"overlap" roles); see `inspector.core.chunking.params.with_size_overlap`."""
    return with_size_overlap(get_strategy(strategy), size, overlap, base)


def _role_units(strategy: str) -> tuple[str | None, str | None]:
    """The units of a strategy's size and overlap roles (None for a role it lacks)."""
    strat = get_strategy(strategy)
    size, overlap = strat.param_for_role("size"), strat.param_for_role("overlap")
    return (size.unit if size else None), (overlap.unit if overlap else None)


def unit_note(strategy: str) -> str:
    """The units a strategy takes a grid's sizes and overlaps in: "tokens", "characters",
    "tokens, overlap in sentences"; "" without a size. A grid's sizes go to every strategy in its
    own unit (`sized_params`): 128 is 128 characters for fixed_chars and 128 tokens for recursive."""
    size, overlap = _role_units(strategy)
    if size is None:
        return ""
    return size if overlap in (None, size) else f"{size}, overlap in {overlap}"


def units_sentence(strategies: Sequence[str], sizes: Sequence[int | None] = (),
                   chars_per_token: float | None = None) -> str:
    """When these strategies take a grid's sizes in different units, which takes which and, with
    the document's characters per token, what the first size is in the other unit ("" when they
    agree). Why: a sweep of fixed_chars beside recursive at 128 compared 128 characters with 128
    tokens, and fixed_chars read as the worse strategy where its chunks were only ~4x smaller."""
    units: dict[str, list[str]] = {}
    for name in dict.fromkeys(strategies):
        unit = _role_units(name)[0]
        if unit is not None:
            units.setdefault(unit, []).append(name)
    if len(units) < 2:
        return ""
    text = "Sizes are in each strategy's own unit: " + "; ".join(
        f"{unit} for {', '.join(names)}" for unit, names in units.items()) + "."
    size = next((s for s in sizes if s), None)
    if chars_per_token and size and set(units) == {"tokens", "characters"}:
        text += (f" This document has {chars_per_token:.1f} characters a token: {size:,} tokens are about "
                 f"{round(size * chars_per_token):,} characters, {size:,} characters about "
                 f"{round(size / chars_per_token):,} tokens.")
    return text
