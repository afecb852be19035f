"""Overlap as data: chunk spans cut into non-overlapping runs, and bisection over them.

The document view paints runs, never raw chunks: a run covered by one chunk gets that chunk's
colour, a run covered by two or more is an overlap region and is painted as one. Computing the runs
here (pure, tested) keeps the paint code free of interval arithmetic, and lets the view find what is
on screen by bisection instead of walking every chunk (Qt Creator's search overlay does the same).
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Sequence
from typing import NamedTuple


class Segment(NamedTuple):
    """A maximal run of text covered by the same set of chunks. (A named tuple rather than a
    frozen dataclass: thousands are made on every slider move, and a tuple is built in C.)"""

    start: int
    """Code-point offset where the run starts."""
    end: int
    """Offset just past the run (start < end)."""
    chunk_ids: tuple[int, ...]
    """Ids of the chunks covering the run, ascending; two or more ids mark an overlap region."""

    @property
    def is_overlap(self) -> bool:
        return len(self.chunk_ids) > 1


_seg = tuple.__new__  # builds a Segment in C (its generated __new__ is a Python function)


def segments(spans: Sequence[tuple[int, int]], ids: Sequence[int] | None = None) -> tuple[Segment, ...]:
    """Non-overlapping runs, in text order, labelled with the chunks covering them.

    `spans` are (start, end) pairs; `ids[k]` labels span k (default: k). Empty spans cover nothing;
    text covered by no span yields no run. O(n log n) for n spans (plus the size of the labels).
    """
    labels = list(range(len(spans))) if ids is None else list(ids)
    if len(labels) != len(spans):
        raise ValueError(f"{len(spans)} spans but {len(labels)} ids")
    # Fast path: spans in order without overlap (most strategies without overlap) are their own runs.
    prev_end = -1
    ordered = True
    for a, b in spans:
        if a < prev_end or a > b:
            ordered = False
            break
        if a < b:
            prev_end = b
    if ordered:
        return tuple(_seg(Segment, (a, b, (k,))) for (a, b), k in zip(spans, labels, strict=True) if a < b)
    # Sweep: at equal positions ends come before starts, so touching spans do not overlap.
    events: list[tuple[int, int, int]] = []
    for (a, b), k in zip(spans, labels, strict=True):
        if a < b:
            events.append((a, 1, k))
            events.append((b, 0, k))
    events.sort()
    out: list[Segment] = []
    active: dict[int, int] = {}  # id -> how many of its spans are open (ids may repeat)
    pos = 0
    labels_now: tuple[int, ...] = ()
    i = 0
    n = len(events)
    while i < n:
        p = events[i][0]
        if labels_now and p > pos:
            out.append(_seg(Segment, (pos, p, labels_now)))
        while i < n and events[i][0] == p:
            _, is_start, k = events[i]
            if is_start:
                active[k] = active.get(k, 0) + 1
            else:
                left = active[k] - 1
                if left:
                    active[k] = left
                else:
                    del active[k]
            i += 1
        pos = p
        labels_now = tuple(sorted(active))
    return tuple(out)


def visible_chunks(sorted_starts: Sequence[int], ends_prefix_max: Sequence[int], lo: int, hi: int,
                   ends: Sequence[int] | None = None) -> list[int]:
    """Indices (into the start-sorted order) of the spans that intersect [lo, hi).

    `sorted_starts` ascending; `ends_prefix_max[i]` is the largest end among spans 0..i, which is
    non-decreasing, so both bounds are bisections. Spans strictly between the bounds can still end
    before `lo` when a long span precedes them (a parent around its children); pass `ends` to filter
    those out exactly.
    """
    j = bisect.bisect_left(sorted_starts, hi)
    i = bisect.bisect_right(ends_prefix_max, lo, 0, j)
    if ends is None:
        return list(range(i, j))
    return [k for k in range(i, j) if ends[k] > lo]


def lanes(spans: Sequence[tuple[int, int]]) -> tuple[int, ...]:
    """A lane per span such that overlapping spans never share one, using as few lanes as possible
    (greedy interval partitioning). Non-overlapping spans all get lane 0."""
    order = sorted(range(len(spans)), key=lambda k: (spans[k][0], -spans[k][1]))
    out = [0] * len(spans)
    busy: list[tuple[int, int]] = []  # (end, lane) of spans still open
    free: list[int] = []
    used = 0
    for k in order:
        a, b = spans[k]
        if b <= a:  # an empty span covers nothing and needs no lane of its own
            continue
        while busy and busy[0][0] <= a:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            lane = heapq.heappop(free)
        else:
            lane = used
            used += 1
        out[k] = lane
        heapq.heappush(busy, (b, lane))
    return tuple(out)


class SpanIndex:
    """Chunk spans prepared for bisection: runs, visible-range queries and hit tests.

    Built once per chunking result (on the worker thread); queried on every paint. The runs are
    made for the range asked (`segments_in`), from the chunks that intersect it, not kept for the
    whole document: with a large overlap every run lists hundreds of chunks, and all of them
    together were the largest allocation of a slider move (+177 MB on a 40 KB page in the soak,
    issue 17), though only a screenful is ever painted.
    """

    __slots__ = ("ids", "starts", "ends", "ends_max", "sorted_ends", "lanes", "lane_count", "_pos")

    def __init__(self, spans: Sequence[tuple[int, int]], ids: Sequence[int] | None = None) -> None:
        labels = list(range(len(spans))) if ids is None else list(ids)
        if len(labels) != len(spans):
            raise ValueError(f"{len(spans)} spans but {len(labels)} ids")
        order = sorted(range(len(spans)), key=lambda k: (spans[k][0], spans[k][1]))
        self.ids: list[int] = [labels[k] for k in order]
        """Chunk ids in start order."""
        self.starts: list[int] = [spans[k][0] for k in order]
        self.ends: list[int] = [spans[k][1] for k in order]
        self.ends_max: list[int] = []
        m = -1
        for e in self.ends:
            m = e if e > m else m
            self.ends_max.append(m)
        self.sorted_ends: list[int] = sorted(b for a, b in spans if a < b)
        """Ends of the non-empty spans, ascending (where a run left of a range ends)."""
        self._pos = {cid: k for k, cid in enumerate(self.ids)}
        self.lanes: dict[int, int] = dict(zip(labels, lanes(spans), strict=True))
        """Lane of each chunk id: overlapping chunks get different lanes (gutter bars)."""
        self.lane_count: int = max(self.lanes.values(), default=-1) + 1
        """Lanes in use (0 for no spans): the gutter asks at every paint, so it is counted here once."""

    @property
    def segments(self) -> tuple[Segment, ...]:
        """Every run of the document (made on each call: for tests and whole-document exports)."""
        return segments(list(zip(self.starts, self.ends, strict=True)), self.ids)

    def __len__(self) -> int:
        return len(self.ids)

    def chunks_in(self, lo: int, hi: int) -> list[int]:
        """Ids of chunks intersecting [lo, hi), in start order."""
        return [self.ids[k] for k in visible_chunks(self.starts, self.ends_max, lo, hi, self.ends)]

    def segments_in(self, lo: int, hi: int) -> tuple[Segment, ...]:
        """Runs intersecting [lo, hi), in text order, as `segments` would cut them. Every boundary
        inside the range belongs to a chunk that intersects it, so the sweep over those chunks
        alone cuts the same runs there; only the first run's start and the last run's end can lie
        at a boundary of a chunk outside the range, and they are found by bisection."""
        if hi <= lo:
            return ()
        ks = visible_chunks(self.starts, self.ends_max, lo, hi, self.ends)
        if not ks:
            return ()
        runs = segments([(self.starts[k], self.ends[k]) for k in ks], [self.ids[k] for k in ks])
        out = [r for r in runs if r.start < hi and r.end > lo]
        if not out:
            return ()
        first = out[0]
        if first.start < lo:  # a chunk left of the range may end between the run's start and lo
            i = bisect.bisect_right(self.sorted_ends, lo) - 1
            if i >= 0 and self.sorted_ends[i] > first.start:
                out[0] = _seg(Segment, (self.sorted_ends[i], first.end, first.chunk_ids))
        last = out[-1]
        if last.end > hi:  # and one right of it may start between hi and the run's end
            j = bisect.bisect_left(self.starts, hi)
            while j < len(self.starts) and self.starts[j] >= self.ends[j]:
                j += 1  # empty spans cut nothing
            if j < len(self.starts) and self.starts[j] < last.end:
                out[-1] = _seg(Segment, (last.start, self.starts[j], last.chunk_ids))
        return tuple(out)

    def ids_at(self, pos: int) -> tuple[int, ...]:
        """Ids of the chunks covering offset `pos`, ascending (empty between chunks)."""
        ks = visible_chunks(self.starts, self.ends_max, pos, pos + 1, self.ends)
        return tuple(sorted({self.ids[k] for k in ks}))

    def rank(self, chunk_id: int) -> int:
        """Position of a chunk in start order (-1 if unknown)."""
        return self._pos.get(chunk_id, -1)
