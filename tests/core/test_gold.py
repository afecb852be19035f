"""Gold sets: the three formats, every validation error (file, line, field), warnings, appending."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inspector.core.documents.document import Document, load_document, load_paths
from inspector.core.errors import InputError
from inspector.core.evaluation.gold import (
    GoldQuestion,
    append_question,
    load_gold,
    locate_passage,
    normalize,
    normalized_text,
    resolve_source,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "gold"
CORPUS = DATA / "corpus"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def docs() -> tuple[Document, ...]:
    return load_paths([CORPUS]).documents


@pytest.fixture(scope="module")
def leave(docs) -> Document:
    return next(d for d in docs if d.doc_id == "leave.md")


@pytest.fixture(scope="module")
def travel(docs) -> Document:
    return next(d for d in docs if d.doc_id == "travel.md")


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8", newline="")
    return p


def jsonl(*objs) -> str:
    return "".join((o if isinstance(o, str) else json.dumps(o, ensure_ascii=False)) + "\n" for o in objs)


# -- the three formats ------------------------------------------------------------------------------

def test_jsonl_fixture(docs, leave, travel):
    gold = load_gold(DATA / "good.gold.jsonl", docs)
    assert gold.format == "jsonl"
    assert [q.line for q in gold.questions] == [1, 2, 4, 5]  # line 3 is blank
    germany, france, zurich, oslo = gold.questions
    assert germany.answers == ("14 months",)
    assert germany.source == "leave.md"
    (a, b), = germany.references
    assert leave.text[a:b].startswith("Parental allowance (Elterngeld)")
    # A passage given as {"content"} and one given as a plain string are placed in the source.
    assert france.answers == ("16 weeks", "sixteen weeks")
    (a, b), = france.references
    assert leave.text[a:b] == "Statutory maternity leave in France is 16 weeks for the first child."
    (a, b), = zurich.references
    assert travel.text[a:b] == "Hotel caps per night: Copenhagen €215, Zürich €270."
    assert oslo.source is None and oslo.references == ()
    assert gold.warnings == () and all(q.warnings == () for q in gold.questions)
    assert gold.has_references


def test_simple_csv_fixture(docs):
    gold = load_gold(DATA / "simple.csv", docs)
    assert gold.format == "csv"
    assert [(q.question, q.answers, q.source, q.line) for q in gold.questions] == [
        ("How long is parental allowance paid in Germany?", ("14 months",), "leave.md", 2),
        ("Hotel cap, Zürich?", ("€270",), "travel.md", 3),
    ]
    assert not gold.has_references


def test_csv_without_source_column(tmp_path, docs):
    p = write(tmp_path, "g.csv", "question,answer\nWhere?,Oslo\n")
    (q,) = load_gold(p, docs).questions
    assert q.source is None and q.answers == ("Oslo",)


def test_chroma_csv_fixture(docs, leave, travel):
    gold = load_gold(DATA / "chroma.csv", docs)
    assert gold.format == "chroma"
    oslo, france = gold.questions
    assert oslo.source == "travel.md"  # corpus_id "travel" is the file stem
    assert oslo.answers == ()
    assert [travel.text[a:b] for a, b in oslo.references] == ["The daily per diem in Oslo is €79."]
    assert france.line == 3  # the quoted question spans lines 3-4
    assert france.question == "How long is\nmaternity leave in France?"
    assert len(france.references) == 2
    assert leave.text[slice(*france.references[1])].endswith("when both parents share it.")
    assert gold.warnings == ()


def test_chroma_csv_content_mismatch_is_a_warning(tmp_path, docs):
    refs = json.dumps([{"content": "something else", "start_index": 0, "end_index": 6}])
    p = write(tmp_path, "q.csv", f'question,references,corpus_id\nQ?,"{refs.replace(chr(34), 2 * chr(34))}",leave.md\n')
    gold = load_gold(p, docs)
    assert gold.questions[0].references == ((0, 6),)
    assert "differs from its 'content'" in gold.questions[0].warnings[0]
    assert gold.warnings[0].line == 2


def test_sample_handbook_gold_loads():
    doc = load_document(ROOT / "sample_docs" / "handbook.md")
    gold = load_gold(ROOT / "sample_docs" / "handbook.gold.jsonl", [doc])
    assert len(gold) >= 30
    assert gold.warnings == ()
    for q in gold.questions:
        for a, b in q.references:
            assert 0 <= a < b <= len(doc.text)


# -- errors name file, line and field --------------------------------------------------------------

GOOD = {"question": "How long?", "answer": "14 months", "source": "leave.md"}

JSONL_ERRORS = [
    # (lines of the file, line, field, words in the problem)
    ([GOOD, '{"question": "x", "answer": '], 2, None, "broken JSON"),
    ([GOOD, "[1, 2]"], 2, None, "expected a JSON object"),
    ([{"answer": "x"}], 1, "question", "missing"),
    ([{"question": 5, "answer": "x"}], 1, "question", "must be a string"),
    ([{"question": "  ", "answer": "x"}], 1, "question", "empty question"),
    ([{"question": "q"}], 1, "answer", "missing"),
    ([{"question": "q", "answer": ""}], 1, "answer", "empty answer"),
    ([{"question": "q", "answer": "   "}], 1, "answer", "empty answer"),
    ([{"question": "q", "answer": []}], 1, "answer", "empty list"),
    ([{"question": "q", "answer": ["ok", 3]}], 1, "answer[1]", "must be a string"),
    ([{"question": "q", "answer": {"a": 1}}], 1, "answer", "string or a list"),
    ([GOOD, GOOD, {**GOOD, "source": "nowhere.md"}], 3, "source", "unknown document 'nowhere.md'"),
    ([{**GOOD, "source": 7}], 1, "source", "must be a string"),
    ([{**GOOD, "references": {"start": 1}}], 1, "references", "must be a list"),
    ([{**GOOD, "references": [{"start": 5, "end": 5}]}], 1, "references[0]", "start (5) must be smaller than end (5)"),
    ([{**GOOD, "references": [{"start": 0, "end": 4}, {"start": 9, "end": 3}]}], 1, "references[1]",
     "smaller than end"),
    ([{**GOOD, "references": [{"start": -1, "end": 4}]}], 1, "references[0]", "out of range"),
    ([{**GOOD, "references": [{"start": 0, "end": 100000}]}], 1, "references[0]", "out of range"),
    ([{**GOOD, "references": [{"start": "0", "end": 4}]}], 1, "references[0]", "'start' must be a whole number"),
    ([{**GOOD, "references": [{"start": 0}]}], 1, "references[0]", "missing 'end'"),
    ([{**GOOD, "references": [{"foo": 1}]}], 1, "references[0]", "needs 'start' and 'end', or 'content'"),
    ([{**GOOD, "references": [7]}], 1, "references[0]", "must be"),
    ([{**GOOD, "references": [{"content": ""}]}], 1, "references[0]", "empty passage"),
    ([{"question": "q", "answer": "x", "references": [{"start": 0, "end": 4}]}], 1, "source",
     "several documents are open"),
]


@pytest.mark.parametrize("lines, line, field, words", JSONL_ERRORS)
def test_jsonl_errors(tmp_path, docs, lines, line, field, words):
    p = write(tmp_path, "bad.gold.jsonl", jsonl(*lines))
    with pytest.raises(InputError) as info:
        load_gold(p, docs)
    exc = info.value
    assert exc.path == str(p) and exc.line == line and exc.field == field
    assert words in exc.problem
    text = exc.one_line()
    assert "\n" not in text
    assert text.startswith(f"{p}:{line}: ")
    if field:
        assert f"field '{field}': " in text


CSV_ERRORS = [
    ("question;answer\nq;a\n", 1, None, "CSV header must be"),
    ("question,answer,notes\nq,a,n\n", 1, None, "CSV header must be"),
    ("question,answer\nq,a\nq2\n", 3, None, "expected 2 columns, got 1"),
    ("question,answer\nq,a\n,a\n", 3, "question", "empty question"),
    ("question,answer\nq,\n", 2, "answer", "empty answer"),
    ("question,answer,source\nq,a,elsewhere.md\n", 2, "source", "unknown document"),
    ('question,references,corpus_id\nq,"[{""start_index"": 0, ""end_index"": 3}]",nowhere\n', 2,
     "corpus_id", "unknown document 'nowhere'"),
    ('question,references,corpus_id\nq,"[{""start_index"": 0,",leave\n', 2, "references", "broken JSON"),
    ('question,references,corpus_id\nq,"[]",leave\n', 2, "references", "non-empty JSON list"),
    ('question,references,corpus_id\nq,"[{""start_index"": 9, ""end_index"": 2}]",leave\n', 2,
     "references[0]", "smaller than end"),
    ('question,references,corpus_id\nq,"[{""start_index"": 0, ""end_index"": 99999}]",leave\n', 2,
     "references[0]", "out of range"),
    ('question,references,corpus_id\nq,"[{""start_index"": 0, ""end_index"": 3}]",\n', 2,
     "corpus_id", "missing"),
    ('question,references,corpus_id,extra\nq,"[]",leave,x\n', 1, None, "CSV header must be"),
]


@pytest.mark.parametrize("text, line, field, words", CSV_ERRORS)
def test_csv_errors(tmp_path, docs, text, line, field, words):
    p = write(tmp_path, "bad.csv", text)
    with pytest.raises(InputError) as info:
        load_gold(p, docs)
    exc = info.value
    assert (exc.path, exc.line, exc.field) == (str(p), line, field)
    assert words in exc.problem
    assert exc.one_line().startswith(f"{p}:{line}: ")


@pytest.mark.parametrize("name, content, words", [
    ("gold.txt", "question,answer\n", "unsupported gold file type '.txt'"),
    ("empty.jsonl", "\n\n", "holds no questions"),
    ("header_only.csv", "question,answer\n", "holds no questions"),
    ("binary.jsonl", "\x89PNG\r\n\x1a\n" + "\x00" * 50, "binary"),
])
def test_file_level_errors(tmp_path, docs, name, content, words):
    p = write(tmp_path, name, content)
    with pytest.raises(InputError) as info:
        load_gold(p, docs)
    assert info.value.path == str(p)
    assert words in info.value.problem


def test_missing_file(tmp_path, docs):
    with pytest.raises(InputError, match="no such file"):
        load_gold(tmp_path / "nope.jsonl", docs)


# -- warnings: kept and listed ----------------------------------------------------------------------

def test_answer_nowhere_in_corpus_is_a_warning(tmp_path, docs):
    p = write(tmp_path, "g.jsonl", jsonl(GOOD, {"question": "Mars?", "answer": "on Mars"},
                                         {**GOOD, "answer": "Zürich"}))
    gold = load_gold(p, docs)
    assert len(gold) == 3
    assert gold.questions[0].warnings == ()
    assert gold.questions[1].warnings == ("answer 'on Mars' occurs nowhere in the corpus",)
    # Zürich is in travel.md, but the question names leave.md.
    assert gold.questions[2].warnings == ("answer 'Zürich' occurs nowhere in leave.md",)
    assert [(w.line, w.path) for w in gold.warnings] == [(2, str(p)), (3, str(p))]


def test_answers_match_case_and_whitespace_insensitively(tmp_path, docs):
    p = write(tmp_path, "g.jsonl", jsonl({**GOOD, "answer": "14   MONTHS when\nboth"}))
    assert load_gold(p, docs).warnings == ()


def test_passages_not_found_once_are_warnings(tmp_path, docs, travel):
    twice = "Book trains when the trip takes less than six hours door to door."
    p = write(tmp_path, "g.jsonl", jsonl(
        {"question": "Train?", "answer": "six hours", "source": "travel.md",
         "references": [twice, {"content": "Not in the text at all."},
                        "The daily  per diem in\nOslo is €79."]}))
    (q,) = load_gold(p, docs).questions
    assert "occurs 2 times in travel.md" in q.warnings[0] and "reference dropped" in q.warnings[0]
    assert "does not occur in travel.md" in q.warnings[1]
    # Whitespace differences are forgiven; the span is the original text's.
    (a, b), = q.references
    assert travel.text[a:b] == "The daily per diem in Oslo is €79."


def test_single_document_needs_no_source_for_references(tmp_path, leave):
    p = write(tmp_path, "g.jsonl", jsonl({"question": "q", "answer": "16 weeks",
                                          "references": [{"start": 20, "end": 88}]}))
    (q,) = load_gold(p, [leave]).questions
    assert q.source == "leave.md" and q.references == ((20, 88),)


def test_references_without_answer(tmp_path, docs):
    p = write(tmp_path, "g.jsonl", jsonl({"question": "q", "source": "leave.md",
                                          "references": [{"start": 20, "end": 88}]}))
    (q,) = load_gold(p, docs).questions
    assert q.answers == () and q.references == ((20, 88),)


# -- naming documents -------------------------------------------------------------------------------

def test_resolve_source_by_name_path_and_stem(tmp_path):
    a = Document(text="x", name="handbook.md", doc_id="policies/handbook.md",
                 path=str(tmp_path / "policies/handbook.md"))
    b = Document(text="y", name="notes.txt", doc_id="notes.txt")
    docs = [a, b]
    assert resolve_source("policies/handbook.md", docs) is a
    assert resolve_source("handbook.md", docs) is a
    assert resolve_source("handbook", docs) is a
    assert resolve_source("notes", docs) is b
    assert resolve_source("corpus/policies/handbook.md", docs) is a
    assert resolve_source("policies/handbook.md", docs, tmp_path) is a
    with pytest.raises(ValueError, match="unknown document 'x.md'"):
        resolve_source("x.md", docs)
    c = Document(text="z", name="handbook.md", doc_id="archive/handbook.md")
    with pytest.raises(ValueError, match="names several documents"):
        resolve_source("handbook.md", [a, c])


# -- normalized search ------------------------------------------------------------------------------

def test_normalized_text_maps_back_to_the_original():
    doc = Document(text="  Hello\n\n  WORLD  and İstanbul ", name="t.md")
    nt = normalized_text(doc)
    assert nt.text == normalize(doc.text)
    (a, b), = nt.find_all("hello world")
    assert doc.text[a:b] == "Hello\n\n  WORLD"
    (a, b), = nt.find_all(normalize("İstanbul"))
    assert doc.text[a:b] == "İstanbul"
    assert nt.find_all("xyz") == []


@given(st.text(alphabet=st.sampled_from(list("ab \n\tAB€")), max_size=60), st.data())
def test_normalized_find_all_round_trips(text, data):
    doc = Document(text=text, name="t.md")
    nt = normalized_text(doc)
    assert nt.text == normalize(text)
    if not text.strip():
        return
    a = data.draw(st.integers(0, len(text) - 1))
    b = data.draw(st.integers(a + 1, len(text)))
    needle = normalize(text[a:b])
    spans = nt.find_all(needle)
    if needle:
        assert spans, "a piece of the text is always found"
        for x, y in spans:
            assert normalize(text[x:y]) == needle


def test_locate_passage(leave):
    span, why = locate_passage(leave, "## Germany")
    assert span is not None and leave.text[span[0]:span[1]] == "## Germany" and why == ""
    assert locate_passage(leave, "leave")[0] is None  # several times
    assert "does not occur" in locate_passage(leave, "Mars")[1]


# -- appending --------------------------------------------------------------------------------------

def test_append_question_round_trips(tmp_path, docs):
    p = write(tmp_path, "g.jsonl", json.dumps(GOOD))  # no trailing newline
    q = GoldQuestion(question="What about Oslo?", answers=("€79", "79 euro"), source="travel.md",
                     references=((63, 97),))
    append_question(p, q)
    append_question(p, GoldQuestion(question="France?", answers=("16 weeks",)))
    gold = load_gold(p, docs)
    assert len(gold) == 3
    second = gold.questions[1]
    assert (second.question, second.answers, second.source, second.references, second.line) == (
        "What about Oslo?", ("€79", "79 euro"), "travel.md", ((63, 97),), 2)
    assert gold.questions[2].answers == ("16 weeks",)
    assert [f.name for f in tmp_path.iterdir()] == ["g.jsonl"]  # no temporary file left behind


def test_append_creates_the_file(tmp_path, docs):
    p = tmp_path / "new" / "g.jsonl"
    append_question(p, GoldQuestion(question="France?", answers=("16 weeks",)))
    assert p.read_text(encoding="utf-8") == '{"question": "France?", "answer": "16 weeks"}\n'


def test_append_is_atomic(tmp_path, monkeypatch):
    p = write(tmp_path, "g.jsonl", jsonl(GOOD))
    before = p.read_bytes()

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        append_question(p, GoldQuestion(question="q", answers=("a",)))
    assert p.read_bytes() == before
    assert [f.name for f in tmp_path.iterdir()] == ["g.jsonl"]


@pytest.mark.parametrize("name, q, words", [
    ("g.csv", GoldQuestion(question="q", answers=("a",)), "only be appended to a .jsonl"),
    ("g.jsonl", GoldQuestion(question=" ", answers=("a",)), "empty question"),
    ("g.jsonl", GoldQuestion(question="q"), "needs an answer or a reference"),
    ("g.jsonl", GoldQuestion(question="q", answers=(" ",)), "empty answer"),
    ("g.jsonl", GoldQuestion(question="q", answers=("a",), references=((5, 2),)), "smaller than end"),
])
def test_append_rejects(tmp_path, name, q, words):
    with pytest.raises(InputError, match=words):
        append_question(tmp_path / name, q)
    assert not (tmp_path / name).exists()
