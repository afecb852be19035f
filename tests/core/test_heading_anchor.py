"""`no_heading` says that nothing the model reads names a chunk's section. A chunk inside a
section whose context prefix (title > heading path) is embedded with it is not flagged, in every
place the window and the CLI get flags from: stage one of the window's chunking (in this process
and in the helper's job), the word-piece annotation, and the statistics built from them. Without
the prefix the flag stays, as it must for the naive strategies' Germany trap."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.core.chunking import helper_jobs
from inspector.core.chunking.annotate import annotate
from inspector.core.chunking.chunk import anchored
from inspector.core.chunking.registry import chunk_document
from inspector.core.documents.document import load_document
from inspector.core.workbench.chunk_store import ChunkStore

HANDBOOK = Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md"


@pytest.fixture(scope="module")
def doc():
    return load_document(HANDBOOK)


def _flagged(chunks):
    return [c for c in chunks if "no_heading" in c.flags]


def _under_a_heading(chunks):
    return [c for c in _flagged(chunks) if c.heading_path]


@pytest.mark.parametrize("strategy,params", [("markdown", {}), ("fixed_chars", {"size": 500, "overlap": 0})])
def test_the_embedded_prefix_names_the_section(doc, strategy, params):
    raw = chunk_document(doc, strategy, params)
    under = [c for c in _flagged(raw) if c.heading_path]
    assert under, "the strategy leaves chunks inside sections without a heading of their own"
    with_prefix = annotate(doc, raw, with_prefix=True)
    without = annotate(doc, raw, with_prefix=False)
    assert not [c for c in _flagged(with_prefix) if c.heading_path]
    assert [c.id for c in _flagged(without)] == [c.id for c in _flagged(raw)]
    # only the flag changes: spans, counts and every other flag stay
    for a, b in zip(with_prefix, without, strict=True):
        assert (a.start, a.end, a.token_count, a.heading_path) == (b.start, b.end, b.token_count, b.heading_path)
        assert a.flags - {"no_heading"} == b.flags - {"no_heading"}


def test_the_germany_fact_without_a_prefix_is_still_flagged(doc):
    raw = chunk_document(doc, "fixed_chars", {"size": 500, "overlap": 0})
    at = doc.text.index("14 months")
    (c,) = [c for c in annotate(doc, raw, with_prefix=False) if c.start <= at < c.end]
    assert "no_heading" in c.flags and c.heading_path[-1] == "Germany"


def test_text_before_the_first_heading_keeps_the_flag(doc):
    first = annotate(doc, chunk_document(doc, "markdown", {}), with_prefix=True)[0]
    assert first.start < doc.text.index("\n#") and not first.heading_path and "no_heading" in first.flags


@pytest.mark.parametrize("with_prefix", [True, False])
def test_stage_one_already_shows_the_flags_of_stage_two(doc, with_prefix):
    """No flag (and no 'No heading' share in the statistics) flips when the word pieces arrive."""
    (first, _), (complete, _) = ChunkStore().stages(doc, "markdown", {}, with_prefix=with_prefix,
                                                    cancelled=lambda: False, shape=lambda s, f: (s, f))
    assert [c.flags - {"truncated_by_embedder"} for c in first.chunks] == \
        [c.flags - {"truncated_by_embedder"} for c in complete.chunks]
    assert first.stats.share("no_heading") == complete.stats.share("no_heading")
    assert bool(_under_a_heading(first.chunks)) != with_prefix
    n = len(first.chunks)
    assert first.stats.share("no_heading") * n == pytest.approx(len(_flagged(first.chunks)))


def test_the_helpers_stage_one_is_anchored_too(doc):
    key = helper_jobs.doc_key(doc)
    shown = helper_jobs.chunk_stage(key, doc, "markdown", {}, None, True).chunks.unpack()
    plain = helper_jobs.chunk_stage(key, doc, "markdown", {}, None, False).chunks.unpack()
    assert shown == anchored(plain, True) and _under_a_heading(plain) and not _under_a_heading(shown)
