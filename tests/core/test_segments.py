"""Chunk spans cut into labelled non-overlapping runs, and bisection for the visible range."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.viewmodel.segments import (
    Segment,
    SpanIndex,
    lanes,
    segments,
    visible_chunks,
)


def _coverage(spans, n):
    """Reference: the set of span indices covering each position."""
    return [tuple(k for k, (a, b) in enumerate(spans) if a <= p < b) for p in range(n)]


def test_adjacent_spans_are_their_own_runs():
    assert segments([(0, 5), (5, 9), (12, 14)]) == (
        Segment(0, 5, (0,)), Segment(5, 9, (1,)), Segment(12, 14, (2,)))


def test_overlap_region_carries_both_ids():
    segs = segments([(0, 10), (8, 20), (18, 25)])
    assert segs == (Segment(0, 8, (0,)), Segment(8, 10, (0, 1)), Segment(10, 18, (1,)),
                    Segment(18, 20, (1, 2)), Segment(20, 25, (2,)))
    assert [s.is_overlap for s in segs] == [False, True, False, True, False]


def test_nested_parent_and_children():
    segs = segments([(0, 30), (0, 10), (10, 30)], ids=[7, 8, 9])
    assert segs == (Segment(0, 10, (7, 8)), Segment(10, 30, (7, 9)))


def test_empty_spans_and_gaps():
    assert segments([(3, 3), (5, 8)]) == (Segment(5, 8, (1,)),)
    assert segments([]) == ()


spans_st = st.lists(st.tuples(st.integers(0, 40), st.integers(0, 15)).map(lambda t: (t[0], t[0] + t[1])),
                    max_size=25)


@settings(max_examples=300, deadline=None)
@given(spans_st)
def test_runs_match_brute_force_coverage(spans):
    segs = segments(spans)
    n = max([b for _a, b in spans], default=0)
    cover = _coverage(spans, n)
    # Runs are ordered, disjoint, non-empty and maximal; every covered position is in the run
    # labelled with exactly the spans covering it.
    for s, t in itertools.pairwise(segs):
        assert s.end <= t.start
        assert not (s.end == t.start and s.chunk_ids == t.chunk_ids)
    covered = set()
    for s in segs:
        assert s.start < s.end and s.chunk_ids
        for p in range(s.start, s.end):
            assert cover[p] == s.chunk_ids
            covered.add(p)
    assert covered == {p for p in range(n) if cover[p]}


@settings(max_examples=300, deadline=None)
@given(spans_st, st.integers(0, 60), st.integers(0, 20))
def test_visible_chunks_are_exactly_the_intersecting_ones(spans, lo, width):
    hi = lo + width
    order = sorted(range(len(spans)), key=lambda k: spans[k])
    starts = [spans[k][0] for k in order]
    ends = [spans[k][1] for k in order]
    prefix_max, m = [], -1
    for e in ends:
        m = max(m, e)
        prefix_max.append(m)
    got = visible_chunks(starts, prefix_max, lo, hi, ends)
    want = [i for i in range(len(order)) if starts[i] < hi and ends[i] > lo]
    assert got == want
    # Without `ends` the result is a superset bounded by the bisections.
    assert set(want) <= set(visible_chunks(starts, prefix_max, lo, hi))


@settings(max_examples=500, deadline=None)
@given(spans_st, st.integers(0, 60), st.integers(1, 20))
def test_span_index_queries(spans, lo, width):
    idx = SpanIndex(spans)
    hi = lo + width
    assert set(idx.chunks_in(lo, hi)) == {k for k, (a, b) in enumerate(spans) if a < hi and b > lo}
    assert idx.segments_in(lo, hi) == tuple(s for s in segments(spans) if s.start < hi and s.end > lo)
    n = max([b for _a, b in spans], default=0)
    cover = _coverage(spans, n + 2)
    for p in range(n + 2):
        assert idx.ids_at(p) == cover[p]


@settings(max_examples=200, deadline=None)
@given(spans_st)
def test_lanes_separate_overlapping_spans(spans):
    ln = lanes(spans)
    for i, (a, b) in enumerate(spans):
        for j, (c, d) in enumerate(spans):
            if i < j and a < d and c < b and a < b and c < d:
                assert ln[i] != ln[j]
    # As few lanes as the deepest overlap needs.
    depth = max((len(s.chunk_ids) for s in segments(spans)), default=1)
    assert max(ln, default=0) + 1 <= max(depth, 1)


def test_windows_with_overlap_alternate_lanes():
    assert lanes([(0, 10), (8, 18), (16, 26), (24, 30)]) == (0, 1, 0, 1)
    assert lanes([(0, 5), (5, 9)]) == (0, 0)


@settings(max_examples=300, deadline=None)
@given(spans_st, st.integers(0, 60), st.integers(1, 40), st.data())
def test_runs_of_a_range_are_the_documents_runs_with_any_ids(spans, lo, width, data):
    # Runs are cut for the range asked from the chunks intersecting it; they must be the runs of
    # the whole document, whatever the ids (repeated ones included) and wherever the range falls.
    ids = data.draw(st.lists(st.integers(0, 6), min_size=len(spans), max_size=len(spans)))
    idx = SpanIndex(spans, ids)
    hi = lo + width
    whole = segments(spans, ids)
    assert idx.segments == whole
    assert idx.segments_in(lo, hi) == tuple(s for s in whole if s.start < hi and s.end > lo)
    for p in range(lo, hi):
        want = next((s.chunk_ids for s in whole if s.start <= p < s.end), ())
        assert idx.ids_at(p) == want


def test_one_run_across_the_range_keeps_both_outer_boundaries():
    # A chunk that ends left of the range and one that starts right of it cut the one run around it.
    spans = [(0, 10), (5, 40), (30, 50)]
    idx = SpanIndex(spans)
    assert idx.segments_in(12, 20) == (segments(spans)[2],)
    assert idx.segments_in(12, 20)[0][:2] == (10, 30)
