"""Strategy parameters as declarations, and strategies as pure functions that carry them.

A parameter declares, besides its unit and range, what the rest of the program needs to know
about it (STYLE.md lesson 17, "declare once, read everywhere"):

- its *role*: "size" or "overlap" marks the generic knob that `--size`/`--overlap`, a sweep axis
  and the suggested sweep grid address, whatever the parameter is called (`parent_size` for
  parent_child, `max_size` for semantic);
- its *constraints* against another parameter of the same unit: `less_than` (strictly smaller,
  "overlap below size") and `at_least` (">=", "the hard cap is at least the soft cap");
- its *slider*: the `practical` range the slider spans (16..4096 tokens, where sizes are chosen,
  not the valid 1..8192), the `scale` that maps its travel to round values, and for an overlap
  the `practical_share` of the size its slider reaches. These only shape the control
  (`inspector.core.viewmodel.scale`); validation reads `minimum`/`maximum` alone.

`Strategy.validate` enforces the declared constraints, the strategy panel keeps its sliders
consistent from them, and `with_size_overlap` puts a generic size/overlap into the right
parameters. `Strategy.check` stays as an escape hatch for rules a declaration cannot say.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: the declarations load without numpy (issue 31)
    from inspector.core.chunking.chunk import Chunk
    from inspector.core.documents.document import Document

#: The roles a parameter can declare ("" for none).
ROLES = ("size", "overlap")

#: How a slider's travel maps to values ("" chooses from the range; see `Param.scale`).
SCALES = ("", "linear", "log2", "log10")


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
    role: str = ""
    """"size", "overlap" or "": the generic knob `--size`/`--overlap`, a sweep axis and the
    suggested grid address. At most one parameter of a strategy holds each role. A strategy that
    declares no "size" (or "overlap") role lends it to a parameter named exactly "size" (or
    "overlap"): see `infer_roles`."""
    less_than: str | None = None
    """Name of a parameter (same unit) this one must stay strictly below: overlap < size."""
    at_least: str | None = None
    """Name of a parameter (same unit) this one must be at least: hard_cap >= size."""
    practical: tuple[int | float, int | float] | None = None
    """(low, high): the range the slider spans, where real choices are made. A 1..8192 slider
    some 180 pixels wide moves ~45 tokens a pixel; 16..4096 on a log scale gives every round size
    its own notch. The spin box still takes any value from `minimum` to `maximum`. None: the
    slider spans the whole valid range."""
    scale: str = ""
    """How the slider's travel maps to values, so each notch is a value people pick: "log2"
    (token sizes: powers of two and three quarter-steps between, 64 80 96 112 128 ...), "log10"
    (character sizes: 1 1.2 1.5 2 2.5 3 4 5 6 8 times a power of ten), "linear" (one step a
    notch), or "" (linear up to 300 steps, else a log scale chosen from the step)."""
    practical_share: float = 0.0
    """With `less_than`: the slider ends at this share of the other parameter's current value
    (0.5: an overlap slider reaches half the size, past which every text is embedded twice or
    more); the spin box still goes up to the constraint. 0: no such end."""

    @property
    def kind(self) -> str:
        if isinstance(self.default, bool):
            return "bool"
        if isinstance(self.default, str):
            return "choice"
        return "int" if isinstance(self.default, int) else "float"

    @property
    def numeric(self) -> bool:
        return self.kind in ("int", "float")


@dataclass(frozen=True, slots=True)
class Constraint:
    """One declared cross-parameter rule, read as `lesser < greater` (strict) or `lesser <= greater`."""

    lesser: str
    greater: str
    strict: bool
    """True for `less_than` (declared on the lesser), False for `at_least` (declared on the greater)."""

    def holds(self, values: Mapping[str, Any]) -> bool:
        a, b = values[self.lesser], values[self.greater]
        return a < b if self.strict else a <= b

    def message(self, strategy: str, values: Mapping[str, Any]) -> str:
        """The wording the strategies used when each checked its own rules (tests and users read it)."""
        a, b = values[self.lesser], values[self.greater]
        if self.strict:
            return f"{strategy}: {self.lesser} ({a}) must be smaller than {self.greater} ({b})"
        return f"{strategy}: {self.greater} ({b}) must be at least {self.lesser} ({a})"


def infer_roles(params: tuple[Param, ...]) -> tuple[Param, ...]:
    """Roles for strategies written before roles existed (plug-ins, strategy files, callables).

    When no parameter declares the "size" role, a numeric parameter named exactly "size" takes
    it; likewise "overlap". An "overlap" that gets its role this way and declares no constraint
    also gets `less_than="size"` when a numeric "size" of the same unit exists: the rule
    `Strategy.validate` applied to every strategy by name before constraints were declared.
    Declared roles and constraints are never changed.
    """
    declared = {p.role for p in params if p.role}
    by_name = {p.name: p for p in params}
    out: list[Param] = []
    for p in params:
        if not p.role and p.name in ROLES and p.name not in declared and p.numeric:
            p = replace(p, role=p.name)
            size = by_name.get("size")
            if (p.name == "overlap" and p.less_than is None and p.at_least is None
                    and size is not None and size.numeric and size.unit == p.unit):
                p = replace(p, less_than="size")
        out.append(p)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Strategy:
    """A registered chunking strategy: a pure function of (document, params)."""

    name: str
    func: Callable[[Document, dict[str, Any]], tuple[Chunk, ...]]
    """The pure function; it receives validated params (defaults filled in, types checked)."""
    params: tuple[Param, ...]
    description: str
    needs_embedder: bool = False
    check: Callable[[dict[str, Any]], None] | None = None
    """Rules a declaration cannot say (raise ValueError), run after the per-parameter checks and
    the declared constraints. The built-ins need none; it is there for external strategies."""
    prefix_default: bool = True
    """Whether the context prefix is embedded by default. Off for the naive strategies, which stand
    for pipelines that embed raw text (LangChain's splitters add no heading path); on for the
    structure-aware ones. Either way it can be switched, so its effect can be measured."""

    def __post_init__(self) -> None:
        params = infer_roles(tuple(self.params))
        object.__setattr__(self, "params", params)
        by_name = {p.name: p for p in params}
        if len(by_name) != len(params):
            raise ValueError(f"strategy '{self.name}': parameter names must be unique")
        seen: dict[str, str] = {}
        for p in params:
            if p.role and p.role not in ROLES:
                raise ValueError(f"strategy '{self.name}': {p.name} has role {p.role!r} "
                                 f"(known: {', '.join(ROLES)}, or none)")
            if p.role in seen:
                raise ValueError(f"strategy '{self.name}': both {seen[p.role]} and {p.name} have "
                                 f"role {p.role!r}")
            if p.role:
                seen[p.role] = p.name
                if not p.numeric:
                    raise ValueError(f"strategy '{self.name}': {p.name} has role {p.role!r} but is "
                                     f"not a number")
            _check_slider(self.name, p)
            for field, other in (("less_than", p.less_than), ("at_least", p.at_least)):
                if other is None:
                    continue
                q = by_name.get(other)
                if q is None or q is p:
                    raise ValueError(f"strategy '{self.name}': {p.name} {field} {other!r}, which "
                                     f"is not another parameter")
                if not (p.numeric and q.numeric) or p.unit != q.unit:
                    raise ValueError(f"strategy '{self.name}': {p.name} {field} {other}: both must "
                                     f"be numbers in the same unit")

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def param_for_role(self, role: str) -> Param | None:
        """The parameter holding `role` ("size" or "overlap"), or None when the strategy has none."""
        return next((p for p in self.params if role and p.role == role), None)

    def constraints(self) -> tuple[Constraint, ...]:
        """The declared cross-parameter rules, the most dependent first (last declared first):
        when several are broken, the one reported is the one the strategies checked first
        before the rules were declared (child_overlap before child_size)."""
        out: list[Constraint] = []
        for p in reversed(self.params):
            if p.less_than is not None:
                out.append(Constraint(p.name, p.less_than, True))
            if p.at_least is not None:
                out.append(Constraint(p.at_least, p.name, False))
        return tuple(out)

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
        for c in self.constraints():
            if not c.holds(merged):
                raise ValueError(c.message(self.name, merged))
        if self.check is not None:
            self.check(merged)
        return merged

    def __call__(self, doc: Document, params: Mapping[str, Any] | None = None) -> tuple[Chunk, ...]:
        return self.func(doc, self.validate(params))


def _check_slider(strategy: str, p: Param) -> None:
    """The slider fields are consistent with the valid range (they never widen it)."""
    if p.scale not in SCALES:
        raise ValueError(f"strategy '{strategy}': {p.name} has scale {p.scale!r} "
                         f"(known: {', '.join(s for s in SCALES if s)}, or none)")
    if p.practical is not None:
        lo, hi = p.practical
        if not p.numeric or not (p.minimum <= lo <= hi <= p.maximum):
            raise ValueError(f"strategy '{strategy}': {p.name} practical range {p.practical} must lie "
                             f"within {p.minimum}..{p.maximum}")
    if p.practical_share < 0 or (p.practical_share and p.less_than is None):
        raise ValueError(f"strategy '{strategy}': {p.name} practical_share needs less_than and a "
                         f"share above 0")


def with_size_overlap(strategy: Strategy, size: int | None = None, overlap: int | None = None,
                      base: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """`base` with a generic size and overlap put into the parameters holding those roles, validated.

    This is what `eval --size/--overlap`, `compare --against`, the sweep grid and the sweep dialog
    mean by "size 400, overlap 40" for any strategy:

    - `size` goes to the "size" role (ValueError "strategy 'x' has no size parameter" when there
      is none); `overlap` to the "overlap" role ("... has no overlap parameter"), except that an
      overlap of 0 is accepted by a strategy without one (nothing overlaps anyway);
    - a parameter the caller did not set (absent from `base`) that is declared `at_least` a value
      placed here follows it up: markdown's hard_cap becomes max(its default, size), so
      `--size 2000` works without also naming the hard cap. A value the caller set is left as is;
    - parameters that must stay *below* the new value (`less_than`, parent_child's child_size under
      a small parent_size) are never lowered: a child size silently shrunk to fit would be a
      different configuration from the one asked for. `validate` then raises its usual
      message, e.g. "parent_child: child_size (128) must be smaller than parent_size (64)".
    """
    params = dict(base or {})
    placed: set[str] = set()
    if size is not None:
        p = strategy.param_for_role("size")
        if p is None:
            raise ValueError(f"strategy '{strategy.name}' has no size parameter")
        params[p.name] = size
        placed.add(p.name)
    if overlap is not None:
        p = strategy.param_for_role("overlap")
        if p is None:
            if overlap != 0:
                raise ValueError(f"strategy '{strategy.name}' has no overlap parameter")
        else:
            params[p.name] = overlap
            placed.add(p.name)
    given = set(base or {})
    changed = True
    while changed:  # followers of followers, whatever order they were declared in
        changed = False
        for q in strategy.params:
            if q.at_least in placed and q.name not in given and q.name not in placed:
                params[q.name] = max(q.default, params[q.at_least])
                placed.add(q.name)
                changed = True
    return strategy.validate(params)
