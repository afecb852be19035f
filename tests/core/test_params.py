"""Parameter declarations: roles, declared cross-parameter constraints, and `with_size_overlap`.

The rules below are written out by hand (not read back from the declarations), so a constraint
dropped from a strategy's `Param`s, or one `validate` stops enforcing, fails here.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.chunking.external import remove_external, strategy_from_callable
from inspector.core.chunking.params import Param, Strategy, with_size_overlap
from inspector.core.chunking.registry import BUILTINS, get_strategy
from inspector.core.documents.document import from_text

#: Per built-in: (lesser, "<" or "<=", greater), as each strategy's own `_check` (and the generic
#: overlap/size rule in `validate`) enforced them before they were declared.
RULES: dict[str, list[tuple[str, str, str]]] = {
    "fixed_chars": [("overlap", "<", "size")],
    "fixed_tokens": [("overlap", "<", "size")],
    "markdown": [("size", "<=", "hard_cap")],
    "paragraph": [],
    "recursive": [("overlap", "<", "size")],
    "parent_child": [("child_overlap", "<", "child_size"), ("child_size", "<", "parent_size")],
    "sentences": [],  # overlap counts sentences, size tokens: no rule between them
    "semantic": [("min_size", "<", "max_size")],
}

#: Per built-in: the parameters holding the "size" and "overlap" roles.
ROLES = {
    "fixed_chars": ("size", "overlap"),
    "fixed_tokens": ("size", "overlap"),
    "markdown": ("size", None),
    "paragraph": (None, None),
    "recursive": ("size", "overlap"),
    "parent_child": ("parent_size", "child_overlap"),
    "sentences": ("size", "overlap"),
    "semantic": ("max_size", None),  # max_size is semantic's token budget
}


def _noop(doc, params):
    return ()


def test_every_builtin_is_covered_and_needs_no_check_function():
    assert {s.name for s in BUILTINS} == set(RULES) == set(ROLES)
    for s in BUILTINS:
        assert s.check is None, f"{s.name}: its rules should be declared, not coded"


@pytest.mark.parametrize("name", sorted(RULES))
def test_declared_constraints_are_the_rules(name):
    strat = get_strategy(name)
    declared = {(c.lesser, "<" if c.strict else "<=", c.greater) for c in strat.constraints()}
    assert declared == set(RULES[name])


@pytest.mark.parametrize("name", sorted(ROLES))
def test_role_lookup(name):
    strat = get_strategy(name)
    size, overlap = ROLES[name]
    assert (strat.param_for_role("size") or Param("", "", 0)).name == (size or "")
    assert (strat.param_for_role("overlap") or Param("", "", 0)).name == (overlap or "")
    assert strat.param_for_role("") is None
    assert sorted(p.name for p in strat.params if p.role) == sorted(n for n in (size, overlap) if n)


def _holds(values: dict, rule: tuple[str, str, str]) -> bool:
    a, op, b = rule
    return values[a] < values[b] if op == "<" else values[a] <= values[b]


@st.composite
def param_dicts(draw, strat: Strategy) -> dict:
    """Values in and just out of range, drawn often from a small shared set so that pairs tie
    (strictness) or cross (order) as often as they are apart."""
    out = {}
    for p in strat.params:
        if p.kind == "bool":  # switches (fit_embedder) take any truth value; nothing to range-check
            out[p.name] = draw(st.booleans())
            continue
        lo, hi = int(p.minimum), int(p.maximum)
        out[p.name] = draw(st.one_of(
            st.integers(lo - 2, hi + 2),
            st.sampled_from([lo, hi, lo - 1, hi + 1, 8, 16, 32, 64, 128, 256, 512, 1024]),
        ))
    return out


@pytest.mark.parametrize("name", sorted(RULES))
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_validate_accepts_exactly_the_values_that_satisfy_ranges_and_rules(name, data):
    strat = get_strategy(name)
    values = data.draw(param_dicts(strat))
    in_range = all(p.kind == "bool" or p.minimum <= values[p.name] <= p.maximum for p in strat.params)
    rules_hold = all(_holds(values, r) for r in RULES[name])
    if in_range and rules_hold:
        assert strat.validate(values) == values
        return
    with pytest.raises(ValueError) as info:
        strat.validate(values)
    if in_range:  # only a cross-parameter rule is broken: the wording the strategies used
        assert "must be smaller than" in str(info.value) or "must be at least" in str(info.value)
        assert str(info.value).startswith(f"{name}: ")


@pytest.mark.parametrize("name, values, message", [
    ("fixed_chars", {"size": 100, "overlap": 100}, "fixed_chars: overlap (100) must be smaller than size (100)"),
    ("fixed_tokens", {"size": 64, "overlap": 80}, "fixed_tokens: overlap (80) must be smaller than size (64)"),
    ("recursive", {"size": 64, "overlap": 64}, "recursive: overlap (64) must be smaller than size (64)"),
    ("markdown", {"size": 1000}, "markdown: hard_cap (512) must be at least size (1000)"),
    ("parent_child", {"parent_size": 100}, "parent_child: child_size (128) must be smaller than parent_size (100)"),
    ("parent_child", {"child_overlap": 128}, "parent_child: child_overlap (128) must be smaller than child_size (128)"),
    # Both broken: the child's overlap is named first, as parent_child's own check did.
    ("parent_child", {"parent_size": 64, "child_overlap": 200},
     "parent_child: child_overlap (200) must be smaller than child_size (128)"),
    ("semantic", {"min_size": 300, "max_size": 200}, "semantic: min_size (300) must be smaller than max_size (200)"),
])
def test_constraint_messages_keep_their_wording(name, values, message):
    with pytest.raises(ValueError) as info:
        get_strategy(name).validate(values)
    assert str(info.value) == message


def test_sentences_overlap_may_exceed_size_in_other_units():
    assert get_strategy("sentences").validate({"size": 1, "overlap": 20}) == {"size": 1, "overlap": 20}


# -- with_size_overlap ---------------------------------------------------------------------------

@pytest.mark.parametrize("name, size, overlap, base, expected", [
    ("fixed_chars", 300, 30, None, {"size": 300, "overlap": 30}),
    ("fixed_chars", 300, None, {"overlap": 50}, {"size": 300, "overlap": 50}),
    ("fixed_tokens", 128, 16, None, {"size": 128, "overlap": 16}),
    ("markdown", 300, None, None, {"size": 300, "hard_cap": 512}),
    ("markdown", 2048, None, None, {"size": 2048, "hard_cap": 2048}),  # the cap follows a bigger size
    ("markdown", 1000, None, {"hard_cap": 2000}, {"size": 1000, "hard_cap": 2000}),
    ("markdown", 300, 0, None, {"size": 300, "hard_cap": 512}),  # overlap 0: nothing to place
    ("paragraph", None, 0, None, {}),
    ("paragraph", None, None, None, {}),
    ("recursive", 128, 16, None, {"size": 128, "overlap": 16}),
    ("parent_child", 512, 16, None, {"parent_size": 512, "child_size": 128, "child_overlap": 16}),
    ("parent_child", 100, None, {"child_size": 64}, {"parent_size": 100, "child_size": 64, "child_overlap": 0}),
    ("sentences", 256, 2, None, {"size": 256, "overlap": 2}),
    ("semantic", 300, None, None, {"threshold": 90, "min_size": 64, "max_size": 300}),
    ("semantic", None, 0, None, {"threshold": 90, "min_size": 64, "max_size": 256}),
])
def test_with_size_overlap_places_values_by_role(name, size, overlap, base, expected):
    # Parameters added after this table (the embedder budget, the stub floor) keep their defaults.
    added = {"markdown": {"fit_embedder": True, "min_tokens": 32}, "parent_child": {"fit_embedder": True}}
    assert with_size_overlap(get_strategy(name), size, overlap, base) == {**expected, **added.get(name, {})}


@pytest.mark.parametrize("name, size, overlap, base, message", [
    ("paragraph", 128, None, None, "strategy 'paragraph' has no size parameter"),
    ("paragraph", None, 16, None, "strategy 'paragraph' has no overlap parameter"),
    ("markdown", 128, 16, None, "strategy 'markdown' has no overlap parameter"),
    ("semantic", 300, 8, None, "strategy 'semantic' has no overlap parameter"),
    ("recursive", 64, 64, None, "recursive: overlap (64) must be smaller than size (64)"),
    ("fixed_chars", 100, None, {"overlap": 150}, "fixed_chars: overlap (150) must be smaller than size (100)"),
    # A cap the caller set is theirs: not raised to fit.
    ("markdown", 1000, None, {"hard_cap": 600}, "markdown: hard_cap (600) must be at least size (1000)"),
    # Dependents that must stay below are not shrunk to fit: a clear error instead.
    ("parent_child", 100, None, None, "parent_child: child_size (128) must be smaller than parent_size (100)"),
    ("parent_child", 512, 128, None, "parent_child: child_overlap (128) must be smaller than child_size (128)"),
    ("semantic", 32, None, None, "semantic: min_size (64) must be smaller than max_size (32)"),
])
def test_with_size_overlap_errors(name, size, overlap, base, message):
    with pytest.raises(ValueError) as info:
        with_size_overlap(get_strategy(name), size, overlap, base)
    assert str(info.value) == message


def test_with_size_overlap_raises_followers_of_followers():
    strat = Strategy("demo_chain", _noop, (
        Param("top", "tokens", 300, 1, 9000, at_least="cap"),  # declared before what it follows
        Param("cap", "tokens", 200, 1, 9000, at_least="body"),
        Param("body", "tokens", 100, 1, 9000, role="size"),
    ), "demo")
    assert with_size_overlap(strat, 250) == {"top": 300, "cap": 250, "body": 250}
    assert with_size_overlap(strat, 1000) == {"top": 1000, "cap": 1000, "body": 1000}
    with pytest.raises(ValueError, match=r"cap \(500\) must be at least body \(1000\)"):
        with_size_overlap(strat, 1000, base={"cap": 500})


# -- roles for strategies that declare none ----------------------------------------------------------

def test_roles_are_inferred_from_the_names_size_and_overlap():
    strat = Strategy("demo_legacy", _noop, (
        Param("size", "tokens", 100, 1, 1000), Param("overlap", "tokens", 0, 0, 500)), "demo")
    assert strat.param_for_role("size").name == "size"
    assert strat.param_for_role("overlap").name == "overlap"
    with pytest.raises(ValueError) as info:
        strat.validate({"size": 100, "overlap": 100})
    assert str(info.value) == "demo_legacy: overlap (100) must be smaller than size (100)"
    assert with_size_overlap(strat, 200, 50) == {"size": 200, "overlap": 50}


def test_inferred_overlap_in_other_units_gets_no_rule():
    strat = Strategy("demo_units", _noop, (
        Param("size", "tokens", 100, 1, 1000), Param("overlap", "sentences", 0, 0, 500)), "demo")
    assert strat.param_for_role("overlap").less_than is None
    assert strat.validate({"size": 10, "overlap": 50}) == {"size": 10, "overlap": 50}


def test_a_declared_role_is_not_overridden_by_a_name():
    strat = Strategy("demo_declared", _noop, (
        Param("chunk_size", "tokens", 100, 1, 1000, role="size"),
        Param("size", "tokens", 5, 1, 1000),
        Param("overlap", "tokens", 0, 0, 500, role="overlap", less_than="chunk_size")), "demo")
    assert strat.param_for_role("size").name == "chunk_size"
    assert next(p for p in strat.params if p.name == "size").role == ""
    assert with_size_overlap(strat, 300, 50) == {"chunk_size": 300, "size": 5, "overlap": 50}


def test_external_callable_with_size_and_overlap_params_takes_generic_values():
    def split(text: str, size: int, overlap: int) -> list[str]:
        step = size - overlap
        return [text[i:i + size] for i in range(0, len(text), step)]

    strat = strategy_from_callable("test_params_windows", split, (
        Param("size", "characters", 10, 1, 100), Param("overlap", "characters", 0, 0, 50)))
    try:
        assert with_size_overlap(strat, 8, 2) == {"size": 8, "overlap": 2}
        doc = from_text("abcdefghijklmnopqrstuvwxyz", "t.txt")
        chunks = get_strategy("test_params_windows")(doc, with_size_overlap(strat, 8, 2))
        assert [c.text(doc) for c in chunks][:2] == ["abcdefgh", "ghijklmn"]
        with pytest.raises(ValueError, match=r"overlap \(8\) must be smaller than size \(8\)"):
            with_size_overlap(strat, 8, 8)
    finally:
        remove_external("test_params_windows")


@pytest.mark.parametrize("params, words", [
    ((Param("a", "tokens", 1, 0, 9, role="width"),), "role 'width'"),
    ((Param("a", "tokens", 1, 0, 9, role="size"), Param("b", "tokens", 1, 0, 9, role="size")),
     "both a and b have role 'size'"),
    ((Param("a", "", "x", choices=("x",), role="size"),), "not a number"),
    ((Param("a", "tokens", 1, 0, 9, less_than="b"),), "not another parameter"),
    ((Param("a", "tokens", 1, 0, 9, at_least="a"),), "not another parameter"),
    ((Param("a", "tokens", 1, 0, 9, less_than="b"), Param("b", "characters", 5, 0, 9)), "same unit"),
    ((Param("a", "tokens", 1, 0, 9), Param("a", "tokens", 1, 0, 9)), "unique"),
])
def test_bad_declarations_are_refused_when_the_strategy_is_made(params, words):
    with pytest.raises(ValueError, match=words):
        Strategy("demo_bad", _noop, params, "demo")
