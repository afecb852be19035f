"""Chunk statistics against hand-computed and brute-force figures."""

from __future__ import annotations

import itertools
import statistics
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.registry import chunk_document
from inspector.core.chunking.stats import chunk_stats, histogram, nice_width
from inspector.core.documents.document import from_text, load_document
from inspector.core.text.tokens import count_text

ROOT = Path(__file__).resolve().parents[2]


def _chunk(i, tokens, flags=(), role="chunk", embed=None, dropped=0):
    return Chunk(id=i, start=i, end=i + 1, token_count=tokens, flags=frozenset(flags), role=role,
                 embed_tokens=embed, embed_dropped=dropped)


def test_figures_on_hand_made_chunks():
    doc = from_text("x" * 10)
    chunks = [_chunk(0, 10, {"no_heading"}), _chunk(1, 20, {"no_heading", "cut_mid_sentence"}),
              _chunk(2, 30), _chunk(3, 40, {"truncated_by_embedder"}, embed=300, dropped=44),
              _chunk(4, 100, role="parent")]
    s = chunk_stats(doc, chunks, document_tokens=80)
    assert (s.count, s.parents) == (4, 1)
    assert (s.min_tokens, s.max_tokens, s.median_tokens, s.mean_tokens) == (10, 40, 25.0, 25.0)
    assert s.p95_tokens == np.percentile([10, 20, 30, 40], 95) == 38.5
    assert s.total_tokens == 100 and s.inflation == 100 / 80
    assert s.share("no_heading") == 0.5 and s.share("cut_mid_sentence") == 0.25
    assert s.share("truncated_by_embedder") == 0.25 and s.share("split_table") == 0.0
    assert s.embedded_word_pieces == 300 and s.dropped_word_pieces == 44
    assert sum(s.bin_counts) == 4


def test_no_chunks():
    s = chunk_stats(from_text("hello"), [], document_tokens=1)
    assert s.count == 0 and s.share("no_heading") == 0.0 and s.bin_counts == () and s.embedded_word_pieces is None


def test_overlap_inflates_the_token_total():
    doc = load_document(ROOT / "sample_docs" / "handbook.md")
    plain = chunk_stats(doc, chunk_document(doc, "fixed_tokens", {"size": 200, "overlap": 0}))
    overlapped = chunk_stats(doc, chunk_document(doc, "fixed_tokens", {"size": 200, "overlap": 50}))
    assert plain.document_tokens == count_text(doc.text)
    assert 0.97 < plain.inflation <= 1.01
    assert overlapped.inflation > 1.25  # a quarter of every window is repeated
    assert overlapped.count > plain.count


def test_real_strategy_matches_brute_force():
    doc = load_document(ROOT / "sample_docs" / "handbook.md")
    chunks = chunk_document(doc, "markdown", {"size": 300, "hard_cap": 600})
    s = chunk_stats(doc, chunks)
    tokens = [c.token_count for c in chunks]
    assert s.count == len(chunks)
    assert s.median_tokens == statistics.median(tokens) and s.max_tokens == max(tokens)
    for flag in ("no_heading", "cut_mid_sentence", "split_table", "over_budget"):
        assert s.flag_counts[flag] == sum(flag in c.flags for c in chunks)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 5000), min_size=1, max_size=200))
def test_histogram_puts_each_value_in_one_round_bin(values):
    edges, counts = histogram(values)
    assert len(edges) == len(counts) + 1 and sum(counts) == len(values)
    width = edges[1] - edges[0]
    assert all(b - a == width for a, b in itertools.pairwise(edges))
    assert str(width).rstrip("0") in ("1", "2", "5")
    assert edges[0] <= min(values) and max(values) < edges[-1]
    for (a, b), c in zip(itertools.pairwise(edges), counts, strict=True):
        assert c == sum(a <= v < b for v in values)
    assert len(counts) <= 2 * 20 + 1


def test_nice_width():
    assert [nice_width(x) for x in (0, 10, 100, 390, 1000, 7000)] == [1, 1, 5, 20, 50, 500]
