"""The heading filter's matching rule (`inspector.core.text.heading_filter`), and retrieval using it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from inspector.core.documents.document import from_text
from inspector.core.text.heading_filter import (
    display_path,
    heading_completions,
    heading_matches,
    parse_heading_filter,
    resolve_heading_filter,
    segment_matches,
)

GERMANY = ("Employee Handbook", "Parental leave", "Germany")
FRANCE = ("Employee Handbook", "Parental leave", "France")
SICK = ("Employee Handbook", "Sick leave", "Sick children")
TRAVEL = ("Employee Handbook", "Travel and expenses", "Hotels")
PATHS = [("Employee Handbook",), ("Employee Handbook", "Parental leave"), FRANCE, GERMANY,
         ("Employee Handbook", "Sick leave"), SICK, ("Employee Handbook", "Travel and expenses"), TRAVEL]


def test_parse_drops_blank_segments_and_collapses_spaces():
    assert parse_heading_filter(" Parental   leave >  Germ > ") == ("Parental leave", "Germ")
    assert parse_heading_filter(">>  ") == ()


def test_a_segment_matches_by_the_start_of_the_title_or_of_a_word_any_case():
    assert segment_matches("Germany", "germ")
    assert segment_matches("Parental leave", "PARENTAL LE")
    assert segment_matches("Parental leave", "leave")  # a word's start
    assert segment_matches("Travel and expenses", "exp")
    assert not segment_matches("Germany", "many")  # inside a word: no
    assert not segment_matches("Parental leave", "leave now")


def test_paths_match_from_the_top_with_a_partial_last_segment():
    assert heading_matches(GERMANY, ("employee handbook", "parental leave", "Germ"))
    assert heading_matches(GERMANY, ("Employee", "Parental"))  # a prefix of the path
    assert not heading_matches(FRANCE, ("Employee Handbook", "Parental leave", "Germ"))
    assert not heading_matches(("Employee Handbook", "Parental leave"), ("Employee Handbook", "Parental leave", "G"))
    assert not heading_matches(GERMANY, ("Parental leave", "Germany"))  # anchored at the top
    assert heading_matches(GERMANY, ())


def test_the_sole_title_is_optional():
    assert resolve_heading_filter("Leave > Germ", PATHS) == ("Employee Handbook", "Leave", "Germ")
    assert resolve_heading_filter("parental > germ", PATHS) == ("Employee Handbook", "parental", "germ")
    assert resolve_heading_filter("Employee Handbook > Parental leave", PATHS) == ("Employee Handbook",
                                                                                   "Parental leave")
    # Two top-level titles: nothing to put in front.
    two = [("Leave", "Germany"), ("Travel", "Germany")]
    assert resolve_heading_filter("Germany", two) == ("Germany",)
    assert resolve_heading_filter("", PATHS) == ()


def test_completions_are_what_the_filter_keeps():
    offered = heading_completions("leave > ", PATHS)
    assert offered == ["Parental leave", "Parental leave > France", "Parental leave > Germany", "Sick leave",
                       "Sick leave > Sick children"]
    assert heading_completions("Parental leave > Germ", PATHS) == ["Parental leave > Germany"]
    assert heading_completions("", PATHS)[:2] == ["Employee Handbook", "Parental leave"]
    assert display_path(GERMANY, "Employee Handbook") == "Parental leave > Germany"
    # Choosing an offered completion filters by exactly that section.
    for text in heading_completions("", PATHS):
        full = resolve_heading_filter(text, PATHS)
        assert any(heading_matches(p, full) for p in PATHS)


_title = st.text(alphabet="abcdeFGH ", min_size=1, max_size=10).filter(lambda t: t.strip())


@given(st.lists(_title, min_size=1, max_size=4), st.integers(0, 3), st.integers(1, 10))
def test_any_path_matches_its_own_prefixes_cut_anywhere(path, n, cut):
    """A path always matches its first titles, the last one cut short, in any case."""
    n = min(n, len(path) - 1)
    prefix = [t.upper() for t in path[:n]] + [path[n].strip()[:cut]]
    assert heading_matches(tuple(path), tuple(prefix))


def test_retrieval_filters_by_a_partial_heading(tmp_path):
    from inspector.core.chunking.registry import chunk_document
    from inspector.core.retrieval.index import build_index

    text = ("# Handbook\n\n## Parental leave\n\n### Germany\n\nElterngeld is paid for 14 months.\n\n"
            "### France\n\nLeave is 16 weeks.\n\n## Sick leave\n\nCall in sick before nine.\n")
    doc = from_text(text, "hb.md")
    chunks = chunk_document(doc, "markdown", {"size": 16, "hard_cap": 64, "min_tokens": 0})
    index = build_index([doc], {doc.doc_id: chunks}, None)
    under = index.search("leave weeks months", k=10, retriever="bm25",
                         heading_prefix=("handbook", "parental", "germ"))
    assert under and {h.chunk.heading_path for h in under} == {("Handbook", "Parental leave", "Germany")}
    leave = index.search("leave weeks months sick", k=10, retriever="bm25", heading_prefix=("Handbook", "leave"))
    assert {h.chunk.heading_path[1] for h in leave} == {"Parental leave", "Sick leave"}


def test_cli_ask_heading_by_prefix_with_the_title_left_out(capsys, tmp_path):
    import json

    from inspector.cli import main

    (tmp_path / "hb.md").write_text("# Handbook\n\n## Parental leave\n\n### Germany\n\nElterngeld is paid for up to "
                                    "14 months.\n\n### France\n\nLeave is 16 weeks, paid by the state.\n\n"
                                    "## Sick leave\n\nCall in sick before nine; leave is paid.\n", encoding="utf-8")
    code = main(["ask", str(tmp_path / "hb.md"), "-q", "how long is leave paid", "--retriever", "bm25",
                 "--strategy", "markdown", "--size", "16", "--param", "hard_cap=64", "--param", "min_tokens=0",
                 "--heading", "leave > germ", "--format", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    data = json.loads(out.out)
    assert data["filters"]["heading_prefix"] == ["Handbook", "leave", "germ"]
    assert data["hits"] and all(h["heading_path"] == ["Handbook", "Parental leave", "Germany"] for h in data["hits"])


def _completions_by_the_rule(text: str, paths, limit: int = 200) -> list[str]:
    """The completer's answer with the module's rule applied path by path (`heading_completions`
    before `HeadingCatalog`): the reference the catalog must equal."""
    from inspector.core.text.heading_filter import sole_title

    unique = list(dict.fromkeys(tuple(p) for p in paths if p))
    title = sole_title(unique)
    parts = parse_heading_filter(text)
    full = resolve_heading_filter(parts, unique) if parts else ()
    out: list[str] = []
    for p in unique:
        if full and not heading_matches(p, full):
            continue
        shown = display_path(p, title)
        if shown and shown not in out:
            out.append(shown)
            if len(out) >= limit:
                break
    return out


_WORDS = st.sampled_from(["Leave", "leave", "Parental", "Germany", "Germ", "ger", "Straße", "STRASSE", "sick-pay",
                          "(3)", "A/B", "&co", "x:y", "  ", "Ünter", "ǅ", "über", "-", "1", "e", "ss", "ß", "",
                          "\U0010ffff", "a\U0010ffff", "a\U0010fffe"])
_TITLES = st.lists(_WORDS, min_size=1, max_size=4).map(" ".join)
_PATHS = st.lists(st.lists(_TITLES, min_size=1, max_size=4).map(tuple), max_size=25)
_TYPED = st.lists(st.lists(_WORDS, max_size=3).map(" ".join), max_size=4).map(" > ".join)


@given(paths=_PATHS, typed=st.lists(_TYPED, min_size=1, max_size=6), limit=st.sampled_from([200, 3]))
def test_the_catalog_answers_as_the_rule(paths, typed, limit):
    """`HeadingCatalog` (the window's completer, at every keystroke) gives the completions and
    the resolved filter the rule gives, path by path, for any typed text, asked in any order."""
    from inspector.core.text.heading_filter import HeadingCatalog

    catalog = HeadingCatalog(paths)
    for text in [*typed, *typed]:  # the second round from the catalog's remembered segments
        assert catalog.completions(text, limit) == _completions_by_the_rule(text, paths, limit), text
        assert catalog.resolve(text) == resolve_heading_filter(text, paths), text
    assert heading_completions(typed[0], paths, limit) == _completions_by_the_rule(typed[0], paths, limit)


def test_the_catalog_answers_as_the_rule_on_the_corpora_headings():
    from pathlib import Path

    from inspector.core.text.heading_filter import HeadingCatalog
    from inspector.core.text.structure import outline_of

    root = Path(__file__).resolve().parents[2]
    files = [root / "sample_docs" / "handbook.md", *sorted((root / "benchmarks" / "data").rglob("*.md"))[:8]]
    typed = ["p", "parental > g", "leave", "e", "employee > p > ger", "sick", "the", "1", "x > y", "(", "über"]
    for f in files:
        paths = [h.path for h in outline_of(from_text(f.read_text(encoding="utf-8"), f.name)).headings if h.path]
        catalog = HeadingCatalog(paths)
        for text in typed:
            assert catalog.completions(text) == _completions_by_the_rule(text, paths), (f.name, text)
            assert catalog.resolve(text) == resolve_heading_filter(text, paths), (f.name, text)


def test_the_catalog_finds_titles_past_the_last_code_point():
    """A typed segment ending in U+10FFFF: the titles it starts are found by their prefix (no
    string one past it exists to bisect to)."""
    from inspector.core.text.heading_filter import HeadingCatalog

    paths = [("A\U0010ffff\U0010ffffx",), ("Ab",), ("a\U0010ffff",), ("c a\U0010ffffz",)]
    catalog = HeadingCatalog(paths)
    for typed in ("a\U0010ffff", "a", "ab", "c", "a\U0010ffff\U0010ffff"):
        assert catalog.completions(typed) == _completions_by_the_rule(typed, paths), typed
    assert catalog.completions("a\U0010ffff") == ["A\U0010ffff\U0010ffffx", "a\U0010ffff", "c a\U0010ffffz"]


def test_a_documents_catalog_is_made_once_and_answers_as_the_rule():
    """`heading_catalog_of` (the window's chunking thread makes it, the completer reads it; issue
    31): one catalog per document, made of its outline's paths, answering as the rule does; a
    document of other content has its own."""
    from pathlib import Path

    from inspector.core.text import heading_filter
    from inspector.core.text.heading_filter import heading_catalog_of
    from inspector.core.text.structure import outline_of

    text = (Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md").read_text(encoding="utf-8")
    doc = from_text(text, "handbook.md")
    heading_filter._CATALOGS.clear()
    catalog = heading_catalog_of(doc)
    assert heading_catalog_of(from_text(text, "handbook.md")) is catalog
    paths = [h.path for h in outline_of(doc).headings if h.path]
    assert catalog.paths == paths and len(paths) > 100
    for typed in ("parental > ger", "leave", "p", "no such heading"):
        assert catalog.completions(typed) == _completions_by_the_rule(typed, paths), typed
    other = heading_catalog_of(from_text("# Only\n\nText.\n", "other.md"))
    assert other is not catalog and other.paths == [("Only",)]


def test_a_catalog_asked_for_while_it_is_made_is_waited_for(monkeypatch):
    """The completer's first keystroke may come while the chunking thread makes the catalog: it
    waits for that one (one making, the same catalog) rather than make a second beside it."""
    import threading

    from inspector.core.text import heading_filter
    from inspector.core.text.heading_filter import heading_catalog_of

    heading_filter._CATALOGS.clear()
    inside, go = threading.Event(), threading.Event()
    made: list[str] = []
    real = heading_filter.HeadingCatalog.__init__

    def slow(self, paths):
        made.append(threading.current_thread().name)
        inside.set()
        go.wait(10)
        real(self, paths)

    monkeypatch.setattr(heading_filter.HeadingCatalog, "__init__", slow)
    doc = from_text("# A\n\n## B\n\nText.\n", "a.md")
    got: dict[str, object] = {}
    first = threading.Thread(target=lambda: got.setdefault("first", heading_catalog_of(doc)), name="chunks")
    first.start()
    assert inside.wait(10)
    second = threading.Thread(target=lambda: got.setdefault("second", heading_catalog_of(doc)), name="gui")
    second.start()
    second.join(0.2)
    assert second.is_alive()  # waiting for the first making
    go.set()
    first.join(10)
    second.join(10)
    assert made == ["chunks"] and got["first"] is got["second"]
    assert heading_catalog_of(doc).paths == [("A",), ("A", "B")]


_TWO_TITLES = {
    "a.md": "# Handbook A\n\n## Parental leave\n\n### Germany\n\nIn A, parental leave is paid for 14 months.\n\n"
            "## Travel\n\nTrains only, paid leave for travel days.\n",
    "b.md": "# Policy B\n\n## Parental leave\n\n### France\n\nIn B, parental leave is paid for 16 weeks.\n\n"
            "## Travel\n\nPlanes allowed, no leave.\n",
}


def test_each_documents_own_title_may_be_left_out(tmp_path):
    """Two documents with titles of their own: "parental" keeps both documents' "Parental leave"
    (each document's title is put back on its own); a typed title keeps its document alone; a
    path that matches from the top in one document is not given the other's title."""
    from inspector.core.chunking.registry import chunk_document
    from inspector.core.retrieval.index import build_index

    docs = [from_text(text, name) for name, text in _TWO_TITLES.items()]
    chunks = {d.doc_id: chunk_document(d, "markdown", {"size": 16, "hard_cap": 64, "min_tokens": 0}) for d in docs}
    index = build_index(docs, chunks, None)

    def kept(prefix):
        hits = index.search("parental leave paid weeks months travel", k=20, retriever="bm25", heading_prefix=prefix)
        return {(h.chunk.doc_id, h.chunk.heading_path) for h in hits}

    assert kept(("parental",)) == {("a.md", ("Handbook A", "Parental leave", "Germany")),
                                   ("b.md", ("Policy B", "Parental leave", "France"))}
    assert kept(("parental", "fr")) == {("b.md", ("Policy B", "Parental leave", "France"))}
    assert kept(("handbook", "parental")) == {("a.md", ("Handbook A", "Parental leave", "Germany"))}
    assert kept(("policy",)) == {(d, p) for d, p in kept(None) if d == "b.md"}
    # One document, as before: the title put back, or typed.
    single = build_index(docs[:1], {"a.md": chunks["a.md"]}, None)
    for prefix in (("parental",), ("Handbook A", "parental")):
        hits = single.search("parental leave paid", k=20, retriever="bm25", heading_prefix=prefix)
        assert hits and {h.chunk.heading_path for h in hits} == {("Handbook A", "Parental leave", "Germany")}


def test_cli_ask_heading_over_documents_with_titles_of_their_own(capsys, tmp_path):
    import json

    from inspector.cli import main

    for name, text in _TWO_TITLES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    code = main(["ask", str(tmp_path), "-q", "how long is parental leave paid", "--retriever", "bm25",
                 "--strategy", "markdown", "--size", "16", "--param", "hard_cap=64", "--param", "min_tokens=0",
                 "--heading", "parental", "--format", "json", "--k", "10"])
    out = capsys.readouterr()
    assert code == 0, out.err
    hits = json.loads(out.out)["hits"]
    assert {tuple(h["heading_path"]) for h in hits} == {("Handbook A", "Parental leave", "Germany"),
                                                        ("Policy B", "Parental leave", "France")}


def test_completions_over_several_documents_are_each_documents_in_order_once():
    """The completer over a folder (`completions_over`): each document's completions as its own
    catalog writes them, in the catalogs' order, a path two documents share once, at most `limit`."""
    from inspector.core.text.heading_filter import HeadingCatalog, completions_over, heading_catalog_of

    a, b = (heading_catalog_of(from_text(text, name)) for name, text in _TWO_TITLES.items())
    assert completions_over([a, b], "parental") == [*a.completions("parental"), "Parental leave > France"]
    assert completions_over([b, a], "parental")[0] == "Parental leave"
    assert completions_over([a, b], "") == list(dict.fromkeys([*a.completions(""), *b.completions("")]))
    assert completions_over([a, b], "", limit=3) == completions_over([a, b], "")[:3]
    assert completions_over([], "p") == [] and completions_over([HeadingCatalog(())], "p") == []
