"""The embedding view (issue 29): what the model and BM25 read of a chunk can be its text without
the Markdown link targets, reference definitions and table padding, with a lost table header row
repeated; the spans on the document never change, and every reader of `Chunk.embedded_text` (the
index, BM25 in or out of the helper process, `ask`'s JSON, the Reader) sees exactly what was sent."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.chunking.embed_view import clean_span, clean_text, view_spans, view_text, with_view
from inspector.core.documents.document import from_text
from inspector.core.errors import InputError
from inspector.core.evaluation.config import EvalConfig
from inspector.core.retrieval.index import _span_text, bm25_model_of_spans, build_index
from inspector.core.workbench import Workbench

WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
LINK_TEXT = st.lists(WORDS, min_size=1, max_size=4).map(" ".join)
URL = st.builds(lambda host, path: f"https://{host}.example.org/{path}_(v2)?q=1",
                st.text(alphabet="qxzj", min_size=3, max_size=8), st.text(alphabet="qxzj0123", min_size=1, max_size=8))


@st.composite
def markdown_with_links(draw):
    parts, links = [], []
    for _ in range(draw(st.integers(1, 5))):
        parts.append(draw(LINK_TEXT))
        text, url = draw(LINK_TEXT), draw(URL)
        kind = draw(st.sampled_from(["inline", "image", "titled", "reference"]))
        if kind == "inline":
            parts.append(f"[{text}]({url})")
        elif kind == "image":
            parts.append(f"![{text}]({url})")
        elif kind == "titled":
            parts.append(f'[{text}]({url} "a title")')
        else:
            label = draw(WORDS)
            parts.append(f"[{text}][{label}]")
            parts.append(f"\n\n[{label}]: {url}\n")
        links.append((text, url))
    return " ".join(parts), links


@given(markdown_with_links())
def test_clean_keeps_link_text_drops_every_target_and_is_deterministic(case):
    text, links = case
    out = clean_text(text)
    assert out == clean_text(text)
    for link_text, url in links:
        assert link_text in out
        assert url not in out
        assert "](" not in out


@given(st.text(max_size=300))
def test_clean_never_adds_text_and_is_idempotent_on_plain_prose(text):
    out = clean_text(text)
    assert out == clean_text(text)
    assert len(out) <= len(text)
    if not any(ch in text for ch in "[]|<"):
        assert out == text


def test_tables_lose_padding_and_delimiter_rows_reference_definitions_go():
    text = ("|**Day**   |**Hours** |\n| -------- | ---------|\n| Monday   | 10       |\n\n"
            "See [the page][p].\n\n[p]: https://example.org/page\n")
    assert clean_text(text) == "|**Day** |**Hours** |\n| Monday | 10 |\n\nSee the page.\n\n"


def test_html_anchor_keeps_its_text():
    assert clean_text('use this <a href="https://x.org/s">leave chart</a>.') == "use this leave chart."


DOC = ("# Handbook\n\n## Leave\n\nRead the [leave policy](https://example.org/policy/leave) and the "
       "[FAQ][faq] before asking.\n\n[faq]: https://example.org/faq\n\n## Hours\n\n"
       "| Day | Hours |\n| --- | --- |\n" + "".join(f"| Day{i:02d}      | {i} hours       |\n" for i in range(60)))


def test_spans_are_unchanged_and_split_table_chunks_get_their_header_back():
    doc = from_text(DOC, "hb.md")
    wb = Workbench(embedder=None, lazy_model=False)
    wb.set_documents([doc])
    raw = EvalConfig("fixed_tokens", {"size": 64, "overlap": 0}, 5, "bm25")
    clean = EvalConfig("fixed_tokens", {"size": 64, "overlap": 0}, 5, "bm25", embed_view="clean")
    a, b = wb.chunks_for(raw)["hb.md"], wb.chunks_for(clean)["hb.md"]
    assert [(c.start, c.end, c.prefix) for c in a] == [(c.start, c.end, c.prefix) for c in b]
    texts = [c.embedded_text(doc, with_prefix=False) for c in b]
    assert all("https://" not in t for t in texts)
    assert any("leave policy" in t for t in texts)
    later = [c for c in b if c.start > DOC.index("| Day05")]
    assert later and all(t.startswith("| Day | Hours |") for t in (c.embedded_text(doc, with_prefix=False)
                                                                   for c in later))
    assert all("  " not in t.split("\n", 1)[1] for t in (c.embedded_text(doc, with_prefix=False) for c in later))
    # The raw view is what it always was: the span text.
    assert [c.embedded_text(doc, with_prefix=False) for c in a] == [c.text(doc) for c in a]


def test_a_header_already_in_the_prefix_is_not_repeated():
    prefix, body = view_text("| 3 | 4 |", 0, 9, "Doc > Hours\n| Day | Hours |", "clean", "| Day   | Hours |")
    assert body == "| 3 | 4 |"
    prefix, body = view_text("| 3 | 4 |", 0, 9, "Doc > Hours", "clean", "| Day   | Hours |")
    assert body == "| Day | Hours |\n| 3 | 4 |"


def test_bm25_indexes_the_text_the_model_reads_in_and_out_of_the_helper():
    doc = from_text(DOC, "hb.md")
    wb = Workbench(embedder=None, lazy_model=False)
    wb.set_documents([doc])
    chunks = wb.chunks_for(EvalConfig("markdown", {"size": 64}, 5, "bm25", embed_view="clean"))
    index = build_index([doc], chunks, None, with_prefix=True)
    assert index.texts == [c.embedded_text(doc, with_prefix=True) for c in index.entries]
    spans = [(c.doc_id, c.start, c.end, c.prefix, c.meta.get("embed_view", ""), c.meta.get("table_header", ""))
             for c in index.entries]
    assert [_span_text({"hb.md": doc.text}, s) for s in spans] == index.texts
    assert bm25_model_of_spans({"hb.md": doc.text}, spans) is not None
    # A word found only in link targets matches under the raw view and no longer under the clean one.
    raw = build_index([doc], wb.chunks_for(EvalConfig("markdown", {"size": 64}, 5, "bm25")), None)
    assert raw.search("example", k=3, retriever="bm25")
    assert index.search("example", k=3, retriever="bm25") == []


def test_config_declares_the_view_validates_it_and_keys_chunks_by_it():
    raw, clean = EvalConfig(), EvalConfig(embed_view="clean")
    assert raw.chunking_key != clean.chunking_key and hash(raw) != hash(clean)
    assert "view=clean" in clean.label() or "view=raw" in raw.label()
    assert EvalConfig.from_dict(clean.to_dict()) == clean
    with pytest.raises(ValueError):
        EvalConfig(embed_view="tidy")
    with pytest.raises(InputError) as err:
        EvalConfig.from_dict({"embed_view": "tidy"}, path="c.json")
    assert "embed_view" in str(err.value)
    with pytest.raises(ValueError):
        with_view(from_text("x", "x.md"), (), "tidy")


def test_cli_ask_json_text_is_the_clean_view(capsys, tmp_path):
    from inspector.cli import main

    (tmp_path / "hb.md").write_text(DOC, encoding="utf-8")
    code = main(["ask", str(tmp_path / "hb.md"), "-q", "leave policy FAQ", "--retriever", "bm25",
                 "--embed-view", "clean", "--format", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    data = json.loads(out.out)
    assert data["config"]["embed_view"] == "clean"
    assert data["hits"] and any("leave policy" in h["text"] for h in data["hits"])
    assert all("https://" not in h["text"] for h in data["hits"])
    assert all(DOC[h["start"]:h["end"]] for h in data["hits"])


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(markdown_with_links(), min_size=1, max_size=4), st.sampled_from(["markdown", "fixed_tokens"]))
def test_spans_never_change_and_no_inline_url_reaches_the_model(sections, strategy):
    text = "# Doc\n\n" + "".join(f"## Part {i}\n\n{body}\n\n| a | b |\n| --- | --- |\n| 1   | 2   |\n\n"
                               for i, (body, _links) in enumerate(sections))
    doc = from_text(text, "d.md")
    wb = Workbench(embedder=None, lazy_model=False)
    wb.set_documents([doc])
    params = {"size": 32} if strategy == "markdown" else {"size": 32, "overlap": 0}
    raw = wb.chunks_for(EvalConfig(strategy, params, 5, "bm25"))["d.md"]
    clean = wb.chunks_for(EvalConfig(strategy, params, 5, "bm25", embed_view="clean"))["d.md"]
    assert [(c.start, c.end, c.prefix, c.flags) for c in raw] == [(c.start, c.end, c.prefix, c.flags) for c in clean]
    sent = "\n".join(c.embedded_text(doc, with_prefix=True) for c in clean)
    for _body, links in sections:
        for _link_text, url in links:
            assert url not in sent


def test_embedded_tokens_count_the_view_so_link_targets_do_not_flag_truncation():
    """A chunk over the embedder's 256 word pieces only because of its link targets is flagged
    (and its reading cut) under raw, and not under clean, whose embed_tokens are the pieces of
    the text sent: `annotate` and the live preview's `read_ends` agree (issue 29)."""
    from inspector.core.chunking.annotate import annotate, read_ends
    from inspector.core.chunking.chunk import Chunk
    from inspector.core.text.wordpieces import count_text, special_tokens

    links = " ".join(f"[step {i}](https://docs.example.org/handbook/section-{i}/very-long-path-name-{i}.html)"
                     for i in range(30))
    doc = from_text(f"Follow these steps: {links}. Then stop.\n", "links.md")
    chunk = Chunk(0, 0, len(doc.text), 0)
    raw = annotate(doc, [chunk])[0]
    assert "truncated_by_embedder" in raw.flags and raw.truncated_at is not None
    clean = annotate(doc, with_view(doc, [chunk], "clean"))[0]
    sent = clean.embedded_text(doc)
    assert "https" not in sent
    assert clean.embed_tokens == special_tokens() + count_text(sent) < raw.embed_tokens
    assert "truncated_by_embedder" not in clean.flags and clean.truncated_at is None
    assert list(read_ends(doc, with_view(doc, [chunk], "clean"))) == [chunk.end]
    assert list(read_ends(doc, [chunk])) == [raw.truncated_at]
    # A tighter limit cuts the clean view too: where reading stops is where its pieces run out.
    short = annotate(doc, with_view(doc, [chunk], "clean"), limit=40)[0]
    assert "truncated_by_embedder" in short.flags
    cut = short.truncated_at
    assert cut is not None and chunk.start < cut < chunk.end
    head = with_view(doc, [Chunk(0, 0, cut, 0)], "clean")[0]
    assert special_tokens() + count_text(head.embedded_text(doc)) <= 40
    assert list(read_ends(doc, with_view(doc, [chunk], "clean"), limit=40)) == [cut]


def test_findings_judge_truncation_on_the_text_the_view_sends():
    """`findings` (the advice's first list) measures chunks marked with a view on their view:
    measurements made on the span as written are reset by `with_view` (issue 29)."""
    from inspector.core.chunking.annotate import annotate
    from inspector.core.chunking.chunk import Chunk
    from inspector.core.evaluation.findings import findings

    links = " ".join(f"[step {i}](https://docs.example.org/handbook/section-{i}/very-long-path-name-{i}.html)"
                     for i in range(30))
    doc = from_text(f"Follow these steps: {links}. Then stop.\n", "links.md")
    measured = annotate(doc, [Chunk(0, 0, len(doc.text), 0)])
    assert "truncated_by_embedder" in measured[0].flags
    viewed = with_view(doc, measured, "clean")
    assert viewed[0].embed_tokens is None and "truncated_by_embedder" not in viewed[0].flags
    kinds = {f.kind for f in findings([doc], {doc.doc_id: viewed}, EvalConfig(embed_view="clean"))}
    assert "truncated_by_embedder" not in kinds
    kinds_raw = {f.kind for f in findings([doc], {doc.doc_id: measured}, EvalConfig())}
    assert "truncated_by_embedder" in kinds_raw


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(markdown_with_links(), st.data())
def test_reference_spans_land_on_the_same_text_in_the_view(case, data):
    """A reference span laid onto the clean body covers exactly the clean view of the span's part
    inside the chunk, so the Reader can mark it (issue 29)."""
    text, _links = case
    n = len(text)
    start = data.draw(st.integers(0, n - 1))
    end = data.draw(st.integers(start + 1, n))
    a = data.draw(st.integers(0, n - 1))
    b = data.draw(st.integers(a + 1, n))
    body = view_text(text, start, end, "", "clean")[1]
    got = view_spans(text, start, end, [(a, b)], "", "clean")
    inside = clean_span(text, max(a, start), min(b, end)) if a < end and b > start else ""
    assert [body[s:e] for s, e in got] == ([inside] if inside else [])
    raw = view_spans(text, start, end, [(a, b)], "", "raw")
    assert [text[start + s:start + e] for s, e in raw] == ([text[max(a, start):min(b, end)]]
                                                          if a < end and b > start else [])


def test_reference_spans_move_past_the_header_row_put_in_front():
    table = "| Day   | Hours |\n|---|---|\n| Mon   | 8     |\n| Tue   | 6     |\n"
    start = table.index("| Tue")
    prefix, body = view_text(table, start, len(table), "", "clean", "| Day   | Hours |")
    assert body.startswith("| Day | Hours |\n")
    ref = (table.index("6"), table.index("6") + 1)
    (s, e), = view_spans(table, start, len(table), [ref], "", "clean", "| Day   | Hours |")
    assert body[s:e] == "6"


def _link_sections(n: int = 4) -> str:
    """Sections whose prose fits the embedder's 256 word pieces and whose link targets do not."""
    out = []
    for s in range(n):
        links = " ".join(f"[step {i}](https://docs.example.org/handbook/section-{s}/very-long-path-name-{i}.html)"
                         for i in range(12))
        prose = " ".join(f"Sentence {i} of part {s} explains the leave policy in plain words." for i in range(6))
        out.append(f"## Part {s}\n\n{prose} Follow these steps: {links}. Then stop.\n")
    return "# Handbook\n\n" + "\n".join(out)


def test_fit_embedder_counts_the_clean_view_it_sends():
    """Under the clean view `fit_embedder` budgets the pieces of what is sent (the view's prefix
    and text), as `annotate` counts them: a section whose link targets alone push it over the
    limit stays whole, and every chunk still fits (issue 29). Before, the budget counted the span
    as written, and the clean view's chunks were the raw view's."""
    from inspector.core.chunking.annotate import annotate
    from inspector.core.text.wordpieces import max_seq_length

    doc = from_text(_link_sections(), "links.md")
    wb = Workbench(embedder=None, lazy_model=False)
    wb.set_documents([doc])
    params = {"size": 1024, "hard_cap": 2048}
    raw = wb.chunks_for(EvalConfig("markdown", params, 5, "bm25"))["links.md"]
    clean = wb.chunks_for(EvalConfig("markdown", params, 5, "bm25", embed_view="clean"))["links.md"]
    limit = max_seq_length()
    assert all(c.embed_tokens is None or c.embed_tokens <= limit for c in annotate(doc, raw))
    sent = annotate(doc, clean)
    assert all(c.embed_tokens <= limit for c in sent)  # the view's own count, what is sent
    assert len(clean) < len(raw)  # the link targets no longer split a section
    # One chunk a section (the first with the title), each to its end; raw splits every one in three.
    assert len(clean) == 4 and all(doc.text[c.start:c.end].rstrip().endswith("Then stop.") for c in clean)
    assert len(raw) == 12
    # The chunk store keys the chunks by the view only where a budget counts it.
    off = {"size": 1024, "hard_cap": 2048, "fit_embedder": False}
    viewed = wb.chunks_for(EvalConfig("markdown", off, 5, "bm25", embed_view="clean"))["links.md"]
    assert wb.chunks_for(EvalConfig("markdown", off, 5, "bm25"))["links.md"] == tuple(map(replace_meta, viewed))


def replace_meta(c):
    """`c` without the view's marks (`with_view`): the span and prefix the strategy made."""
    from dataclasses import replace

    meta = {k: v for k, v in c.meta.items() if k not in ("embed_view", "table_header")}
    return replace(c, meta=meta)


def test_the_windows_stages_count_the_view_as_the_store_does():
    """The window's staged chunking (`ChunkStore.stages`) makes the clean view's chunks the
    sweeps and the CLI make (`ChunkStore.chunk`)."""
    from inspector.core.workbench.chunk_store import ChunkStore

    doc = from_text(_link_sections(), "links.md")
    store = ChunkStore()
    params = {"size": 1024, "hard_cap": 2048}
    stages = list(store.stages(doc, "markdown", params, with_prefix=True, cancelled=lambda: False,
                               shape=lambda stage, _first: stage, view="clean"))
    spans = [(c.start, c.end) for c in stages[0].chunks]
    assert spans == [(c.start, c.end) for c in store.chunk(doc, "markdown", params, view="clean")]
    assert spans != [(c.start, c.end) for c in store.chunk(doc, "markdown", params)]


def test_a_table_piece_the_view_gives_its_header_back_is_no_split_table_finding():
    """Under the clean view a table piece that lost its header row gets it back in front of its
    rows (`with_view`), so the findings no longer count it as values without column names."""
    from pathlib import Path

    from inspector.core.documents.document import load_document
    from inspector.core.evaluation.findings import findings

    doc = load_document(Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md")
    wb = Workbench(embedder=None, lazy_model=False)
    wb.set_documents([doc])
    found = {}
    for view in ("raw", "clean"):
        cfg = EvalConfig("fixed_tokens", {"size": 512, "overlap": 0}, 5, "bm25", embed_view=view)
        found[view] = {f.kind: f for f in findings([doc], wb.chunks_for(cfg), cfg)}
    assert "split_table_without_header" in found["raw"]
    assert "split_table_without_header" not in found["clean"]


@pytest.mark.parametrize("strategy", ["fixed_tokens", "markdown"])
def test_the_windows_stages_measure_the_views_text_once_here_and_in_the_helper(strategy):
    """Under the clean view both stages of the window's chunking carry the view, and the word
    pieces of stage two are those of the view's text, whether this process or the helper's job
    measures them (the window no longer measures the raw text first and then the view again)."""
    from inspector.core.chunking import helper_jobs
    from inspector.core.chunking.annotate import annotate
    from inspector.core.chunking.chunk import anchored
    from inspector.core.chunking.registry import chunk_document
    from inspector.core.workbench.chunk_store import ChunkStore

    doc = from_text("# Links\n\n" + "\n\n".join(
        f"Rule {i}: see [the guide](https://example.org/a/very/long/path/to/rule/{i}/index.html) and "
        f"[the form](https://example.org/forms/{i})." for i in range(40)) + "\n", "links.md")
    params = {"size": 64, "overlap": 0} if strategy == "fixed_tokens" else {"fit_embedder": False}
    (first, _), (complete, _) = ChunkStore().stages(doc, strategy, params, with_prefix=True, cancelled=lambda: False,
                                                    shape=lambda s, f: (s, f), view="clean")
    expected = annotate(doc, with_view(doc, anchored(chunk_document(doc, strategy, params), True), "clean"))
    assert all(c.meta.get("embed_view") == "clean" for c in first.chunks)
    assert complete.chunks == expected
    assert [c.embed_tokens for c in complete.chunks] == [c.embed_tokens for c in expected]
    key = helper_jobs.doc_key(doc)
    one = helper_jobs.chunk_stage(key, doc, strategy, params, None, True, "clean")
    two = helper_jobs.annotate_stage(key, doc, strategy, params, None, True, one.stats.document_tokens, "clean")
    assert one.chunks.unpack() == first.chunks
    assert two.chunks.unpack() == expected
    assert [c.embed_tokens for c in two.chunks.unpack()] == [c.embed_tokens for c in expected]
    raw = annotate(doc, chunk_document(doc, strategy, params))
    assert sum(c.embed_tokens or 0 for c in expected) < sum(c.embed_tokens or 0 for c in raw)


def test_a_truncated_table_piece_under_the_clean_view_shows_where_the_embedder_stops():
    """The detail pane and the Reader read `Chunk.embedded_parts`: under the clean view a table piece
    whose prefix repeats the header row still gets its cut (it was lost when the part read was
    viewed without the prefix, which put the header in front of it and not of the body)."""
    from inspector.core.chunking.annotate import annotate
    from inspector.core.chunking.registry import chunk_document

    rows = "\n".join(f"| item {i} with [a link](https://example.org/x/{i}) | "
                     + " ".join(f"word{j}" for j in range(40)) + f" | {i} |" for i in range(30))
    doc = from_text("# Fees\n\n| Item | Description | Cost |\n|---|---|---|\n" + rows + "\n", "fees.md")
    params = {"size": 2000, "hard_cap": 2000, "fit_embedder": False}
    chunks = annotate(doc, with_view(doc, chunk_document(doc, "markdown", params), "clean"))
    pieces = [c for c in chunks if c.meta.get("table_header") and c.truncated_at is not None]
    assert pieces and all("| Item |" in c.prefix for c in pieces)
    for c in pieces:
        prefix, body, cut = c.embedded_parts(doc)
        assert c.embedded_text(doc) == f"{prefix}\n\n{body}"
        assert cut is not None and 0 < cut < len(body)
        assert "https://" not in body  # the clean view's text, not the span's
        read = view_text(doc.text, c.start, c.truncated_at, c.prefix, "clean", c.meta["table_header"])[1]
        assert body[:cut] == read
    raw = annotate(doc, chunk_document(doc, "markdown", params))
    for c in (c for c in raw if c.truncated_at is not None):
        prefix, body, cut = c.embedded_parts(doc)
        assert body == doc.text[c.start:c.end] and cut == c.truncated_at - c.start
