"""The embedder's limit as a budget, and no stubs: `markdown` and `parent_child` never hand the
model more word pieces than it reads, and never make a chunk of a heading and its lead-in alone.

Counted with the real MiniLM tokenizer (no model is loaded): a chunk's embedded text is its context
prefix, a blank line and its span, [CLS]/[SEP] included, as `Chunk.embedded_text` builds it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.chunking.annotate import annotate
from inspector.core.chunking.chunk import STUB_TOKENS
from inspector.core.chunking.registry import chunk_document, get_strategy
from inspector.core.chunking.stats import chunk_stats
from inspector.core.documents.document import from_text
from inspector.core.text.structure import structure_of
from inspector.core.text.wordpieces import max_seq_length, tokenizer

HANDBOOK = Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md"

WORDS = ["leave", "Germany", "membership", "organisation", "quarterly", "reimbursement", "14",
         "café", "naïve", "Elterngeld", "2025-03-17", "€1,250", "x"]

word = st.sampled_from(WORDS)
sentence = st.builds(lambda ws: " ".join(ws).capitalize() + ".", st.lists(word, min_size=3, max_size=18))
url = st.builds(lambda host, path: f"https://{host}.example.org/{path}",
                st.sampled_from(["www", "docs", "members", "eu-portal"]),
                st.text(alphabet="abcdefghijk0123456789-_/", min_size=4, max_size=48))
cell = st.one_of(url, word, st.builds(" ".join, st.lists(word, min_size=1, max_size=4)))


@st.composite
def wide_table(draw) -> str:
    """A GFM table with URLs and column padding (what 600+ word pieces look like)."""
    cols = draw(st.integers(2, 5))
    rows = draw(st.lists(st.lists(cell, min_size=cols, max_size=cols), min_size=1, max_size=40))
    header = [draw(word) + f" {i}" for i in range(cols)]
    width = draw(st.integers(0, 40))

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(width) for c in cells) + " |"

    return "\n".join([line(header), "|" + "|".join("---" for _ in header) + "|"] + [line(r) for r in rows])


long_list = st.builds(lambda items, marker: "\n".join(f"{marker} {it}" for it in items),
                      st.lists(st.builds(" ".join, st.lists(sentence | url, min_size=1, max_size=4)),
                               min_size=1, max_size=40),
                      st.sampled_from(["-", "*", "1."]))
code = st.builds(lambda lines: "```text\n" + "\n".join(lines) + "\n```",
                 st.lists(st.builds(lambda u, w: f"fetch({u!r}, {w!r})", url, word), min_size=1, max_size=60))
long_paragraph = st.builds(" ".join, st.lists(sentence | url, min_size=1, max_size=40))
lead_in = st.sampled_from(["We are involved in the following organizations:",
                           "Follow these steps:", "**Note:**", "The rates are as follows:"])
heading = st.builds(lambda lvl, ws: "#" * lvl + " " + " ".join(ws).capitalize(), st.integers(1, 4),
                    st.lists(word, min_size=1, max_size=3))
big_block = st.one_of(wide_table(), long_list, code, long_paragraph)


@st.composite
def section(draw) -> str:
    parts = [draw(heading)]
    if draw(st.booleans()):
        parts.append(draw(long_paragraph))
    block = draw(big_block)
    if draw(st.booleans()) and not block[0].isalpha():
        parts.append(draw(lead_in))
    parts.append(block)
    if draw(st.booleans()):
        parts.append(draw(sentence))
    return "\n\n".join(parts)


documents = st.builds("\n\n".join, st.lists(section(), min_size=1, max_size=5))


def _embedded_pieces(doc, c) -> int:
    return len(tokenizer().encode(c.embedded_text(doc)).ids)


@pytest.mark.parametrize("name", ["markdown", "parent_child"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=documents)
def test_no_embedded_chunk_is_longer_than_the_embedder_reads(name, text):
    doc = from_text(text, "t.md")
    limit = max_seq_length()
    chunks = chunk_document(doc, name)
    measured = annotate(doc, chunks, with_prefix=get_strategy(name).prefix_default)
    for c in measured:
        if c.role == "parent":
            continue  # returned to the model, never embedded
        assert c.embed_tokens == _embedded_pieces(doc, c) <= limit, (c, doc.text[c.start:c.end])
        assert "truncated_by_embedder" not in c.flags


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=documents)
def test_without_fitting_blocks_stay_whole_up_to_the_hard_cap(text):
    """The old behaviour: tables, lists and code kept whole, however many word pieces."""
    doc = from_text(text, "t.md")
    chunks = chunk_document(doc, "markdown", {"fit_embedder": False, "hard_cap": 16384})
    for b in structure_of(doc).blocks:
        if b.kind in ("table", "list", "code"):
            assert any(c.start <= b.start and b.end <= c.end for c in chunks), b


def test_a_long_url_table_is_split_to_fit_with_its_header_carried_and_whole_without_fitting():
    rows = "\n".join(f"| Member {i:<20} | https://members.example.org/directory/{i:04d}/profile-page | "
                     f"{'active' if i % 2 else 'pending':<30} |" for i in range(40))
    text = ("# Handbook\n\n### Organizations\n\nWe are involved in the following organizations:\n\n"
            "| Name | Link | Status |\n|---|---|---|\n" + rows + "\n")
    doc = from_text(text, "orgs.md")
    unfitted = annotate(doc, chunk_document(doc, "markdown", {"fit_embedder": False, "hard_cap": 16384}))
    assert len(unfitted) == 1 and "truncated_by_embedder" in unfitted[0].flags
    fitted = annotate(doc, chunk_document(doc, "markdown"))
    assert len(fitted) > 2
    assert all(c.embed_tokens <= max_seq_length() for c in fitted)
    first, *later = fitted
    assert doc.text[first.start:first.end].startswith("# Handbook\n\n### Organizations\n\nWe are involved")
    assert "| Member 0" in doc.text[first.start:first.end]
    for c in later:
        body = doc.text[c.start:c.end]
        assert body.startswith("| Member") and body.endswith("|")
        # The lead-in and the header row travel in the prefix of every later piece.
        assert c.prefix.endswith("We are involved in the following organizations:\n"
                                 "| Name | Link | Status |\n|---|---|---|")


# -- no stubs ------------------------------------------------------------------------------------

@st.composite
def introduced_sections(draw) -> tuple[str, list[tuple[str, str]]]:
    """Sections of heading + lead-in + list or table; returns the text and (lead-in, block start)."""
    parts, pairs = [], []
    for _ in range(draw(st.integers(1, 5))):
        lead = draw(lead_in)
        block = draw(st.one_of(wide_table(), long_list))
        parts.append(f"{draw(heading)}\n\n{lead}\n\n{block}")
        pairs.append((lead, block.split("\n", 1)[0]))
    return "\n\n".join(parts), pairs


def _lines_only_headings_and_lead_ins(body: str) -> bool:
    return all(not line.strip() or line.lstrip().startswith("#") or line.rstrip().endswith(":")
               for line in body.splitlines())


@pytest.mark.parametrize("params", [{}, {"fit_embedder": False}, {"size": 64, "hard_cap": 64},
                                    {"min_tokens": 0}])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=introduced_sections())
def test_headings_and_lead_ins_travel_with_what_they_introduce(params, case):
    text, pairs = case
    doc = from_text(text, "t.md")
    chunks = chunk_document(doc, "markdown", params)
    for c in chunks:
        assert not _lines_only_headings_and_lead_ins(doc.text[c.start:c.end]), doc.text[c.start:c.end]
    pos = 0
    for lead, first_line in pairs:
        at = doc.text.index(lead, pos)
        starts = doc.text.index(first_line, at + len(lead))
        holding = [c for c in chunks if c.start <= at and at + len(lead) <= c.end]
        assert holding and any(c.start <= starts < c.end for c in holding), (lead, first_line)
        pos = starts


def test_a_short_paragraph_joins_the_block_that_follows_in_its_section():
    items = "\n".join(f"- Step {i}: open https://portal.example.org/forms/{i:03d}/submit and confirm the entry."
                      for i in range(30))
    text = f"# H\n\n## Expenses\n\nKeep every receipt.\n\n{items}\n"
    doc = from_text(text, "e.md")
    merged = chunk_document(doc, "markdown")
    assert "stub" not in merged[0].flags and "- Step 0" in doc.text[merged[0].start:merged[0].end]
    alone = chunk_document(doc, "markdown", {"min_tokens": 0})
    assert doc.text[alone[0].start:alone[0].end] == "# H\n\n## Expenses\n\nKeep every receipt."
    assert "stub" in alone[0].flags


def test_every_strategy_flags_stubs_and_stats_count_them():
    doc = from_text("# T\n\nOne line.\n\n" + "A longer paragraph with several words in it. " * 30, "s.md")
    for name in ("fixed_tokens", "paragraph", "recursive", "sentences", "markdown"):
        chunks = chunk_document(doc, name)
        stats = chunk_stats(doc, chunks)
        stubs = sum(c.token_count < STUB_TOKENS for c in chunks)
        assert stats.flag_counts["stub"] == stubs
        assert stats.share("stub") == pytest.approx(stubs / len(chunks))
    assert chunk_stats(doc, chunk_document(doc, "paragraph")).flag_counts["stub"] >= 1


def test_handbook_markdown_defaults_fit_the_embedder():
    from inspector.core.documents.document import load_document

    doc = load_document(HANDBOOK)
    chunks = annotate(doc, chunk_document(doc, "markdown"))
    assert all("truncated_by_embedder" not in c.flags for c in chunks)
    # The old default lost text on this very document.
    old = annotate(doc, chunk_document(doc, "markdown", {"fit_embedder": False, "min_tokens": 0}))
    assert any("truncated_by_embedder" in c.flags for c in old)


# -- the command line ------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_chunks_json_carries_word_pieces_and_truncation(capsys, fmt):
    from inspector.cli import main

    assert main(["chunks", str(HANDBOOK), "--strategy", "fixed_tokens", "--size", "400", "--format", fmt]) == 0
    out = capsys.readouterr().out
    records = json.loads(out) if fmt == "json" else [json.loads(line) for line in out.splitlines()]
    text = HANDBOOK.read_text(encoding="utf-8")
    truncated = 0
    for r in records:
        m = r["metadata"]
        body = text[m["start_index"]:m["end_index"]]
        # fixed_tokens embeds no prefix by default.
        assert m["word_pieces"] == m["embed_tokens"] == len(tokenizer().encode(body).ids)
        assert m["truncated_by_embedder"] == (m["word_pieces"] > max_seq_length()) \
            == ("truncated_by_embedder" in m["flags"])
        assert m["embed_dropped"] == max(0, m["word_pieces"] - max_seq_length())
        truncated += m["truncated_by_embedder"]
    assert truncated > 0


def test_chunks_table_shows_word_pieces(capsys):
    from inspector.cli import main

    assert main(["chunks", str(HANDBOOK), "--strategy", "markdown"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:5] == ["id", "start", "end", "tokens", "WP"]
    assert all(int(line.split()[4]) <= max_seq_length() for line in lines[1:-1])


# -- the word-piece index built while the text encodes (issue 31) ----------------------------------
def _ascii_handbook(copies: int = 1) -> str:
    """The handbook without its few characters beyond ASCII: its word pieces all take the ASCII
    path (no encode of the tokenizer's on the encoding threads)."""
    text = HANDBOOK.read_text(encoding="utf-8").encode("ascii", "ignore").decode("ascii")
    return "\n\n".join([text] * copies)


@pytest.mark.parametrize("strategy", ["markdown", "parent_child"])
def test_the_word_piece_index_is_built_while_the_text_encodes(monkeypatch, strategy):
    """Issue 31: with `fit_embedder` on, the word-piece index (mostly Python) is built on the
    calling thread while the document's text encodes on the encoding threads (which hold no GIL),
    not after the token index on one core while the other idles. Every slice is held until the
    index is built: with the index built after the token index, they would wait out the bound and
    find it not built (checked). With `fit_embedder` off, no index is built. The chunks are the
    same either way: the one cached index counts them."""
    import threading

    from inspector.core.runtime import offload
    from inspector.core.text import structure, tokens, wordpieces

    monkeypatch.setattr(offload, "cores", lambda: 2)
    monkeypatch.setattr(tokens, "ENCODE_THREADS", 2)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    built = threading.Event()
    seen: list[bool] = []
    real_init = wordpieces.WordPieceIndex.__init__
    encode_array = tokens._encode_array

    def building(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        built.set()

    def held(part: str):
        seen.append(built.wait(20))
        return encode_array(part)

    monkeypatch.setattr(wordpieces.WordPieceIndex, "__init__", building)
    doc = from_text(_ascii_handbook(2), "ascii.md")
    assert len(doc.text) >= tokens.OVERLAP_AT_LEAST
    tokens._INDEXES.clear()
    structure._STRUCTURES.clear()
    wordpieces._INDEXES.clear()
    monkeypatch.setattr(tokens, "_encode_array", held)
    params = {p.name: p.default for p in get_strategy(strategy).params}
    assert params["fit_embedder"] is True
    chunks = get_strategy(strategy)(doc, params)
    assert seen and all(seen), seen
    monkeypatch.setattr(tokens, "_encode_array", encode_array)
    # The same chunks as a call that finds every index cached.
    assert get_strategy(strategy)(doc, params) == chunks
    # fit_embedder off: no index built, meanwhile or after.
    built.clear()
    tokens._INDEXES.clear()
    wordpieces._INDEXES.clear()
    get_strategy(strategy)(doc, {**params, "fit_embedder": False})
    assert not built.is_set()


def test_the_index_built_ahead_is_the_one_the_budget_counts_with(restore_pieces):
    """`prepare_budget` builds the index an `EmbedBudget` of the document then takes from the
    cache: the raw text's, or under the "clean" view the clean text's. Where pieces are counted
    with cl100k, the budget's index is the chunkers' token index, which `SpanContext` is building
    when `prepare_budget` runs: nothing is built there (a token index built from within its own
    build would be a second one)."""
    from inspector.core.chunking.common import SpanContext
    from inspector.core.chunking.fit import EmbedBudget, counting_view, prepare_budget
    from inspector.core.text import tokens, wordpieces

    doc = from_text(HANDBOOK.read_text(encoding="utf-8"), "handbook.md")
    for view in ("raw", "clean"):
        wordpieces._INDEXES.clear()
        with counting_view(view):
            prepare_budget(doc)
            assert len(wordpieces._INDEXES) == 1
            ahead = next(iter(wordpieces._INDEXES.values()))
            assert EmbedBudget(SpanContext(doc)).index is ahead
            assert len(wordpieces._INDEXES) == 1
        assert (ahead.text == doc.text) is (view == "raw")
    # A text over BUDGET_AHEAD_AT_MOST: nothing ahead (the peak memory), the budget builds its own.
    wordpieces._INDEXES.clear()
    with pytest.MonkeyPatch.context() as mp:
        from inspector.core.chunking import fit

        mp.setattr(fit, "BUDGET_AHEAD_AT_MOST", len(doc.text) - 1)
        prepare_budget(doc)
        assert len(wordpieces._INDEXES) == 0
        assert EmbedBudget(SpanContext(doc)).index is next(iter(wordpieces._INDEXES.values()))
    wordpieces.use_piece_spec(("tiktoken", "cl100k_base", 8191, 0))
    tokens._INDEXES.clear()
    prepare_budget(doc)
    assert tokens._INDEXES.lookup(doc.sha256) is None
    assert EmbedBudget(SpanContext(doc)).index is tokens._INDEXES.lookup(doc.sha256)


def test_an_error_in_the_index_built_ahead_reaches_the_caller_from_the_budget(monkeypatch):
    """The word-piece index failing while the text encodes costs nothing else: the error reaches
    the caller from `EmbedBudget`, as before, and the token index and structure stay cached
    (raised meanwhile, it would have discarded the token index: checked)."""
    from inspector.core.chunking import fit
    from inspector.core.text import structure, tokens

    def broken(_doc):
        raise RuntimeError("no word pieces today")

    monkeypatch.setattr(fit, "wordpiece_index", broken)
    doc = from_text(_ascii_handbook(1) + "\n\nAn error of its own.\n", "broken.md")
    tokens._INDEXES.clear()
    structure._STRUCTURES.clear()
    params = {p.name: p.default for p in get_strategy("markdown").params}
    with pytest.raises(RuntimeError, match="no word pieces today"):
        get_strategy("markdown")(doc, params)
    assert tokens._INDEXES.lookup(doc.sha256) is not None
    monkeypatch.undo()
    assert get_strategy("markdown")(doc, params)
