"""The view as one standalone HTML page: parsed back with html.parser, its text is the document,
each chunk's runs are exactly its span, everything is escaped and nothing is fetched."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.registry import chunk_document
from inspector.core.documents.document import from_text
from inspector.core.evaluation.config import EvalConfig
from inspector.core.evaluation.gold import answer_spans
from inspector.core.viewmodel.html_export import TextMark, view_html
from inspector.core.workbench import Workbench

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "sample_docs" / "handbook.md"
GOLD = ROOT / "sample_docs" / "handbook.gold.jsonl"
GERMANY = "How long is parental allowance paid in Germany?"


class Page(HTMLParser):
    """What a browser would see: the document's text, its runs with their attributes, every id,
    every link, every tag."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.runs: list[tuple[dict, str]] = []
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.tags: list[str] = []
        self.scripts: list[str] = []
        self._in_doc = 0
        self._span: dict | None = None
        self._in_script = False
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if "id" in a:
            assert a["id"] not in self.ids, f"duplicate id {a['id']}"
            self.ids.add(a["id"])
        if tag == "a":
            self.links.append(a.get("href", ""))
        if tag == "script":
            self._in_script = True
        if tag == "pre" and a.get("id") == "doc":
            self._in_doc = 1
        elif self._in_doc:
            self._in_doc += 1
            if tag == "span":
                self._span = a
                self.runs.append((a, ""))

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False
        if self._in_doc:
            self._in_doc -= 1
            self._span = None

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)
        if self._in_doc:
            assert self._span is not None, f"text outside a run: {data!r}"
            self.text.append(data)
            attrs, old = self.runs[-1]
            self.runs[-1] = (attrs, old + data)

    def chunk_text(self, cid: int) -> str:
        return "".join(t for a, t in self.runs if str(cid) in a.get("data-c", "").split())


@pytest.fixture(scope="module")
def handbook():
    wb = Workbench()
    wb.open([HANDBOOK])
    wb.load_gold(GOLD)
    cfg = EvalConfig("markdown", {}, 5, "bm25")
    doc = wb.documents[0]
    chunks = wb.chunk(doc, "markdown", cfg.params)
    report = wb.evaluate(cfg)
    hits = wb.ask(GERMANY, cfg)
    q = next(x for x in wb.gold.questions if x.question == GERMANY)
    return doc, chunks, report, cfg, hits, answer_spans(doc, q)


def test_the_handbook_page_holds_the_text_the_chunks_the_hits_and_the_gold_set(handbook):
    doc, chunks, report, cfg, hits, answers = handbook
    html = view_html(doc, chunks, hits=hits, question=GERMANY, answers=answers, report=report, config=cfg,
                     mode="exact")
    page = Page(html)
    assert "".join(page.text) == doc.text
    for c in chunks:
        assert page.chunk_text(c.id) == doc.text[c.start:c.end]
        assert f"c{c.id}" in page.ids  # its boundary marker, which links point to
    # Every in-page link lands on an element; nothing points outside the page.
    for href in page.links:
        assert href.startswith("#") and href[1:] in page.ids, href
    # The hits: outlined runs and a rank badge each.
    hit_runs = [a for a, _t in page.runs if "hit" in a.get("class", "").split()]
    assert hit_runs
    badges = [a["data-rank"] for a, _t in page.runs if "badge" in a.get("class", "")]
    assert {b.split()[0] for b in badges} == {f"#{h.rank}" for h in hits}
    # The answer is highlighted.
    ans = "".join(t for a, t in page.runs if "ans" in a.get("class", "").split())
    assert "14 months" in ans
    # The gold figures and one row per question.
    assert f"{report.hit_rate * 100:.1f} %" in html
    assert html.count('<tr><td class="n">') >= len(report.questions)
    for r in report.questions:
        assert r.question.question.replace("'", "&#x27;").replace('"', "&quot;") in html
    assert "Marks (" not in html  # none given: no section


def test_standalone_no_external_resources(handbook):
    doc, chunks, report, cfg, hits, answers = handbook
    html = view_html(doc, chunks, hits=hits, question=GERMANY, report=report, config=cfg)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html)
    assert "@import" not in html and "url(" not in html
    assert html.startswith("<!DOCTYPE html>") and '<meta charset="utf-8">' in html
    page = Page(html)
    assert page.tags.count("script") == 1 and page.tags.count("style") == 1
    assert not {"link", "img", "iframe", "object"} & set(page.tags)


def test_escaping_of_markup_in_the_document_and_in_questions():
    text = ('# <b>Bold</b> & "quoted"\n\n<script>alert("x")</script> and </pre> here.\n\n'
            "Tom's café & co: 3 < 4 > 2 🚀 done.\n")
    doc = from_text(text, "evil<doc>.md")
    chunks = chunk_document(doc, "fixed_chars", {"size": 23, "overlap": 7})
    html = view_html(doc, chunks, question="<script>q()</script>",
                     marks=[TextMark(10, 30, "<i>finding</i>", "odd\"kind")])
    assert "<script>alert" not in html and "</pre> here" not in html and "<script>q()" not in html
    assert "<b>Bold" not in html and "<i>finding" not in html
    page = Page(html)
    assert "".join(page.text) == doc.text
    for c in chunks:
        assert page.chunk_text(c.id) == doc.text[c.start:c.end]
    assert page.tags.count("script") == 1  # ours alone
    assert 'alert("x")' not in "".join(page.scripts)
    marked = "".join(t for a, t in page.runs if "mk" in a.get("class", "").split())
    assert marked == doc.text[10:30]
    assert "Marks (1)" in html


def test_overlaps_and_the_embedder_tail_are_marked():
    doc = from_text("word " * 200, "w.txt")
    chunks = list(chunk_document(doc, "fixed_chars", {"size": 100, "overlap": 30}))
    chunks[1] = Chunk(chunks[1].id, chunks[1].start, chunks[1].end, 0, truncated_at=chunks[1].start + 50)
    page = Page(view_html(doc, chunks))
    overlap = [a for a, _t in page.runs if "ov" in a.get("class", "").split()]
    assert overlap and all(len(a["data-c"].split()) == 2 for a in overlap)
    tail = "".join(t for a, t in page.runs if "tail" in a.get("class", "").split())
    assert tail and tail == doc.text[chunks[1].start + 50:chunks[1].end]
    assert "".join(page.text) == doc.text


@settings(max_examples=80, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("ab <>&\"'\n\t") + ["é", "🚀", "\u2029"]), min_size=1, max_size=120),
       data=st.data())
def test_any_text_and_spans_come_back_exactly(text, data):
    doc = from_text(text, "t.txt")
    n = len(doc.text)
    spans = data.draw(st.lists(st.tuples(st.integers(0, n), st.integers(0, n)).map(lambda t: (min(t), max(t))),
                               max_size=12))
    chunks = [Chunk(i, a, b, 0) for i, (a, b) in enumerate(spans)]
    marks = [TextMark(a, b, "m") for a, b in data.draw(st.lists(
        st.tuples(st.integers(0, n), st.integers(0, n)).map(lambda t: (min(t), max(t))), max_size=3)) if a < b]
    page = Page(view_html(doc, chunks, marks=marks))
    assert "".join(page.text) == doc.text
    for c in chunks:
        assert page.chunk_text(c.id) == doc.text[c.start:c.end]


# -- the command line -------------------------------------------------------------------------------

def test_cli_html_writes_the_page_with_hits_and_gold(tmp_path, capsys):
    from inspector.cli import main

    out = tmp_path / "sub" / "handbook.html"
    assert main(["html", str(HANDBOOK), "--strategy", "recursive", "--size", "200", "--gold", str(GOLD),
                 "--question", GERMANY, "--retriever", "bm25", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert str(out) in err and "5 hits" in err and "hit rate@5" in err
    html = out.read_text(encoding="utf-8")
    page = Page(html)
    doc_text = HANDBOOK.read_text(encoding="utf-8")
    assert "".join(page.text) == doc_text
    assert "recursive size=200 overlap=0 k=5 bm25" in html
    assert any("hit" in a.get("class", "").split() for a, _t in page.runs)
    assert "14 months" in "".join(t for a, t in page.runs if "ans" in a.get("class", "").split())
    assert html.count('<span class="miss">') + html.count('<span class="hitw">') == 64
    assert not list(tmp_path.glob("sub/.*.tmp"))  # written atomically, nothing left behind


def test_cli_html_without_gold_or_question(tmp_path, capsys):
    from inspector.cli import main

    out = tmp_path / "plain.html"
    assert main(["html", str(HANDBOOK), "--strategy", "fixed_chars", "--size", "400", "--overlap", "40",
                 "-o", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert "fixed_chars size=400 overlap=40" in html and "Gold set</h2>" not in html
    page = Page(html)
    assert "".join(page.text) == HANDBOOK.read_text(encoding="utf-8")
    assert any("ov" in a.get("class", "").split() for a, _t in page.runs)


def test_cli_html_errors_are_one_line(tmp_path, capsys):
    from inspector.cli import main

    assert main(["html", str(ROOT / "sample_docs"), "-o", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err
    assert main(["html", str(HANDBOOK), "--strategy", "nope", "-o", str(tmp_path / "x.html")]) == 2
    with pytest.raises(SystemExit) as exit_:  # -o is required: argparse's one line
        main(["html", str(HANDBOOK)])
    assert exit_.value.code == 2
    assert not (tmp_path / "x.html").exists()


def test_a_bm25_page_says_bm25_answered_not_embeddings(handbook):
    """Issue 26: the page of a BM25 configuration named no retriever, and the report named
    embeddings; the line says what answered."""
    doc, chunks, report, cfg, hits, answers = handbook
    html = view_html(doc, chunks, report=report, config=cfg, mode="exact")
    assert "Retrieval: BM25 keyword scores (no embeddings)" in html and "exact embeddings" not in html
    dense = EvalConfig("markdown", {}, 5, "dense")
    assert "Retrieval: dense, exact embeddings" in view_html(doc, chunks, report=report, config=dense, mode="exact")


def test_a_corpus_page_says_its_figures_are_the_corpus_s(handbook):
    """Issue 26: the page of one document of a corpus showed the corpus's hit rate under the
    document's name. The title and a line under it say whose figures they are."""
    doc, chunks, report, cfg, hits, answers = handbook
    alone = view_html(doc, chunks, hits=hits, question=GERMANY, report=report, config=cfg)
    assert "corpus" not in alone and f"<title>{doc.name} — Chunk Inspector</title>" in alone
    html = view_html(doc, chunks, hits=hits, question=GERMANY, report=report, config=cfg, corpus_size=3)
    assert f"<title>{doc.name} — one document of a corpus of 3 — Chunk Inspector</title>" in html
    assert f"<h1>{doc.name} — one document of a corpus of 3</h1>" in html
    assert ("over the whole corpus of 3 documents; the text shown is one of them, handbook.md" in html
            and 'id="corpus-note"' in html)
    assert "<h2>Gold set · all 3 documents</h2>" in html
    page = Page(html)
    assert "".join(page.text) == doc.text  # the note is outside the document's text
    # The text alone, with no figures or question: nothing to say about the corpus.
    assert "corpus" not in view_html(doc, chunks, corpus_size=3)
