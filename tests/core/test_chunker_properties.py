"""Invariants every built-in chunker keeps, over random Markdown and text (hypothesis)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.chunking.chunk import STUB_TOKENS
from inspector.core.chunking.registry import chunk_document, get_strategy
from inspector.core.documents.document import from_text
from inspector.core.text.tokens import count_text, token_index
from tests.core.strategies_for_tests import any_text

STRATEGY_PARAMS = {
    "paragraph": st.just({}),
    "fixed_chars": st.integers(1, 400).flatmap(
        lambda s: st.fixed_dictionaries({"size": st.just(s), "overlap": st.integers(0, s - 1)})),
    "fixed_tokens": st.integers(1, 120).flatmap(
        lambda s: st.fixed_dictionaries({"size": st.just(s), "overlap": st.integers(0, s - 1)})),
    "sentences": st.fixed_dictionaries({"size": st.integers(1, 200), "overlap": st.integers(0, 3)}),
    "recursive": st.integers(1, 200).flatmap(
        lambda s: st.fixed_dictionaries({"size": st.just(s), "overlap": st.integers(0, s - 1)})),
    "markdown": st.integers(16, 300).flatmap(
        lambda s: st.fixed_dictionaries({"size": st.just(s), "hard_cap": st.integers(s, 2 * s),
                                         "fit_embedder": st.booleans(), "min_tokens": st.integers(0, 64)})),
    "parent_child": st.integers(16, 100).flatmap(
        lambda c: st.fixed_dictionaries({"child_size": st.just(c), "child_overlap": st.integers(0, c - 1),
                                         "parent_size": st.integers(max(c + 1, 32), 4 * c + 64),
                                         "fit_embedder": st.booleans()})),
}

#: Which parameter bounds a strategy's chunks (by role), for the over_budget flag.
BUDGET = {("fixed_tokens", "chunk"): "size", ("sentences", "chunk"): "size",
          ("recursive", "chunk"): "size", ("markdown", "chunk"): "hard_cap",
          ("parent_child", "child"): "child_size", ("parent_child", "parent"): "parent_size"}


def _budget(name, params, chunk):
    key = BUDGET.get((name, chunk.role))
    return params[key] if key else None


def _covered(text: str, chunks) -> list[int]:
    covered = bytearray(len(text))
    for c in chunks:
        covered[c.start:c.end] = b"\x01" * (c.end - c.start)
    return [i for i, ch in enumerate(text) if not ch.isspace() and not covered[i]]


@pytest.mark.parametrize("name", list(STRATEGY_PARAMS))
@settings(max_examples=150)
@given(data=st.data(), text=any_text)
def test_spans_in_order_in_bounds_covering_and_exact(name, data, text):
    params = data.draw(STRATEGY_PARAMS[name])
    doc = from_text(text, "t.md")
    chunks = chunk_document(doc, name, params)
    for role in ("chunk", "parent", "child"):
        group = [c for c in chunks if c.role == role]
        starts = [c.start for c in group]
        assert starts == sorted(starts)
        if group:
            assert _covered(doc.text, group) == [], f"{role}s leave text uncovered"
    assert [c.id for c in chunks] == list(range(len(chunks)))
    for c in chunks:
        assert 0 <= c.start < c.end <= len(doc.text)
        assert not doc.text[c.start:c.end].isspace()
        assert c.token_count == count_text(doc.text[c.start:c.end])
        budget = _budget(name, params, c)
        assert ("over_budget" in c.flags) == (budget is not None and c.token_count > budget)
        assert ("stub" in c.flags) == (c.token_count < STUB_TOKENS)
    # Bounded output: never more chunks than characters (times the overlap factor).
    assert len(chunks) <= 2 * len(doc.text) + 1
    # Deterministic.
    assert chunk_document(doc, name, params) == chunks


@pytest.mark.parametrize("name", ["fixed_tokens", "sentences"])
@given(data=st.data(), text=any_text)
def test_token_budget_respected(name, data, text):
    params = data.draw(STRATEGY_PARAMS[name])
    chunks = chunk_document(from_text(text), name, params)
    # The only exception: one code point that alone is more tokens than the budget (size 1).
    assert all(c.token_count <= params["size"] or c.end - c.start == 1 for c in chunks)


@given(text=any_text, data=st.data())
def test_parent_child_children_inside_their_parents(text, data):
    params = data.draw(STRATEGY_PARAMS["parent_child"])
    chunks = chunk_document(from_text(text), "parent_child", params)
    by_id = {c.id: c for c in chunks}
    for c in chunks:
        if c.role == "child":
            p = by_id[c.parent_id]
            assert p.role == "parent" and p.start <= c.start and c.end <= p.end
            assert c.prefix == p.prefix
        else:
            assert c.role == "parent" and c.parent_id is None


@given(text=any_text, data=st.data())
def test_fixed_chars_windows_overlap_exactly(text, data):
    params = data.draw(STRATEGY_PARAMS["fixed_chars"])
    size, overlap = params["size"], params["overlap"]
    chunks = chunk_document(from_text(text), "fixed_chars", params)
    for a, b in itertools.pairwise(chunks):
        if b.start - a.start == size - overlap:  # neighbours (no blank window skipped between)
            assert a.end - b.start == overlap
        assert (b.start - a.start) % (size - overlap) == 0
    for c in chunks[:-1]:
        assert c.end - c.start == size


ASCII_TEXT = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126) | st.sampled_from("\n\n "),
                     min_size=1, max_size=600)


@given(text=ASCII_TEXT, data=st.data())
def test_fixed_tokens_neighbours_share_exactly_overlap_document_tokens(text, data):
    params = data.draw(STRATEGY_PARAMS["fixed_tokens"])
    doc = from_text(text)
    ti = token_index(doc)
    chunks = chunk_document(doc, "fixed_tokens", params)
    for a, b in itertools.pairwise(chunks):
        if b.start < a.end:
            shared = ti.token_at_or_after(a.end) - ti.token_at_or_after(b.start)
            assert shared <= params["overlap"]
            if a.token_count == params["size"]:
                assert shared == params["overlap"]
        elif params["overlap"] == 0:
            assert doc.text[a.end:b.start].strip() == ""


@pytest.mark.parametrize("name,params", [
    ("fixed_chars", {"size": 100, "overlap": 100}), ("fixed_chars", {"size": 0}),
    ("fixed_tokens", {"size": 10, "overlap": 12}), ("fixed_tokens", {"size": -1}),
    ("recursive", {"size": 50, "overlap": 50}), ("sentences", {"size": 0}),
    ("markdown", {"size": 400, "hard_cap": 100}), ("fixed_chars", {"size": "big"}),
    ("fixed_chars", {"bogus": 1}), ("parent_child", {"parent_size": 100, "child_size": 200}),
    ("parent_child", {"child_size": 64, "child_overlap": 64}), ("fixed_tokens", {"size": 10.5}),
])
def test_invalid_parameters_are_rejected(name, params):
    with pytest.raises(ValueError):
        get_strategy(name)(from_text("some text. more text."), params)


def test_unknown_strategy_is_rejected():
    with pytest.raises(ValueError, match="unknown strategy"):
        chunk_document(from_text("x"), "nope", {})


def test_tiny_windows_with_huge_overlap_finish_and_stay_bounded():
    doc = from_text("word " * 2000)
    chunks = chunk_document(doc, "fixed_tokens", {"size": 2, "overlap": 1})
    assert 1000 <= len(chunks) <= 2 * len(doc.text)
    chunks = chunk_document(doc, "fixed_chars", {"size": 2, "overlap": 1})
    assert len(chunks) <= len(doc.text)


def test_fast_chunk_constructor_makes_the_same_object():
    from inspector.core.chunking.chunk import Chunk, new_chunk

    args = dict(id=3, start=5, end=9, token_count=2, heading_path=("A", "B"), prefix="T > A > B",
                parent_id=1, flags=frozenset({"no_heading"}), role="child", doc_id="d.md", meta={"page": 2})
    fast = new_chunk(**args)
    assert fast == Chunk(**args) and repr(fast) == repr(Chunk(**args)) and hash(fast) == hash(Chunk(**args))
    assert fast.embed_tokens is None and fast.embed_dropped == 0 and fast.truncated_at is None
    try:
        fast.start = 0  # still frozen
    except AttributeError:
        pass
    else:
        raise AssertionError("a chunk must stay immutable")
