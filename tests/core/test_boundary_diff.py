"""Boundaries of two chunkings compared: kept, moved (mutual nearest neighbours), added, removed."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.chunking.registry import chunk_document
from inspector.core.documents.document import from_text
from inspector.core.viewmodel.boundary_diff import BoundaryDiff, Move, boundaries, boundary_diff

SPANS = st.lists(st.tuples(st.integers(0, 400), st.integers(0, 60)).map(lambda t: (t[0], t[0] + t[1])),
                 max_size=40)


def _starts(spans):
    return [(a, a + 1) for a in spans]


def test_a_worked_example():
    before = _starts([0, 100, 200, 300, 500])
    after = _starts([0, 120, 200, 260, 400, 700])
    d = boundary_diff(before, after)
    assert d.kept == (0, 200)
    # 100 -> 120: each is the other's nearest. 300's nearest is 260 and 260's is 300.
    assert d.moved == (Move(100, 120), Move(300, 260))
    assert [m.distance for m in d.moved] == [20, 40]
    # 500's nearest current boundary is 400, whose nearest baseline boundary is 300 (taken): removed.
    assert d.removed == (500,) and d.added == (400, 700)
    assert d.counts() == {"kept": 2, "moved": 2, "added": 2, "removed": 1}
    assert d.summary() == "2 kept · 2 moved (median 30 characters) · 2 added · 1 removed"


def test_a_boundary_next_to_a_kept_one_is_removed_not_moved():
    d = boundary_diff(_starts([0, 100, 105]), _starts([0, 105]))
    assert d == BoundaryDiff(kept=(0, 105), moved=(), added=(), removed=(100,))


def test_boundaries_are_distinct_starts_of_non_empty_spans():
    assert boundaries([(5, 9), (0, 3), (5, 7), (8, 8)]) == (0, 5)


def test_empty_sides():
    assert boundary_diff([], _starts([3, 1])) == BoundaryDiff((), (), (1, 3), ())
    assert boundary_diff(_starts([2]), []) == BoundaryDiff((), (), (), (2,))
    assert boundary_diff([], []).unchanged


@settings(max_examples=300)
@given(before=SPANS, after=SPANS)
def test_every_boundary_lands_in_exactly_one_group(before, after):
    d = boundary_diff(before, after)
    b, a = boundaries(before), boundaries(after)
    assert sorted(d.kept + d.removed + tuple(m.before for m in d.moved)) == list(b)
    assert sorted(d.kept + d.added + tuple(m.after for m in d.moved)) == list(a)
    assert set(d.kept) == set(a) & set(b)
    assert all(m.distance > 0 for m in d.moved)
    for group in (d.kept, d.added, d.removed):
        assert list(group) == sorted(set(group))


@settings(max_examples=300)
@given(before=SPANS, after=SPANS)
def test_a_move_has_nothing_between_its_ends_and_moves_never_cross(before, after):
    d = boundary_diff(before, after)
    everything = set(boundaries(before)) | set(boundaries(after))
    for m in d.moved:
        lo, hi = sorted((m.before, m.after))
        assert not any(lo < x < hi for x in everything)
    assert [m.after for m in d.moved] == sorted(m.after for m in d.moved)
    assert [m.before for m in d.moved] == sorted(m.before for m in d.moved)


@settings(max_examples=300)
@given(before=SPANS, after=SPANS)
def test_swapping_the_sides_swaps_added_and_removed(before, after):
    d, r = boundary_diff(before, after), boundary_diff(after, before)
    assert r.kept == d.kept and r.added == d.removed and r.removed == d.added
    assert r.moved == tuple(Move(m.after, m.before) for m in d.moved)


@settings(max_examples=200)
@given(spans=SPANS)
def test_same_chunks_are_all_kept(spans):
    d = boundary_diff(spans, list(reversed(spans)))
    assert d.unchanged and d.kept == boundaries(spans)


@settings(max_examples=200)
@given(gaps=st.lists(st.integers(10, 80), min_size=1, max_size=30), shift=st.integers(1, 4))
def test_a_small_shift_moves_every_boundary_by_it(gaps, shift):
    starts = [sum(gaps[:i + 1]) for i in range(len(gaps))]
    d = boundary_diff(_starts(starts), _starts([s + shift for s in starts]))
    assert d.moved == tuple(Move(s, s + shift) for s in starts)
    assert not (d.kept or d.added or d.removed)


def test_two_strategies_on_real_text():
    doc = from_text("# T\n\n" + "\n\n".join(f"Paragraph {i} has a few words in it." for i in range(40)), "t.md")
    a = chunk_document(doc, "fixed_chars", {"size": 200, "overlap": 0})
    b = chunk_document(doc, "paragraph", {})
    d = boundary_diff([(c.start, c.end) for c in a], [(c.start, c.end) for c in b])
    assert d.kept and d.moved and d.added  # paragraphs are finer than 200-character windows
    assert len(d.kept) + len(d.moved) + len(d.removed) == len(boundaries((c.start, c.end) for c in a))
