"""The audit core: marks keyed by question and span (re-marking replaces), replay onto new chunks
(properties), the summary's figures, its exports, marks -> gold questions without duplicate lines,
highlights, the audit file (atomic, resumable, stale marks after an edit), and comparing a
baseline on the questions two reports share."""

from __future__ import annotations

import csv
import io
import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.documents.document import Document
from inspector.core.errors import InputError
from inspector.core.evaluation.audit import (
    NOT,
    PARTLY,
    RELEVANT,
    Audit,
    Mark,
    audit_path,
    audit_text,
    export_summary,
    gold_from_audit,
    highlights,
    load_audit,
    load_audits,
    question_terms,
    replay,
    save_audit,
    save_audits,
    summarize,
    summary_csv,
    summary_markdown,
)
from inspector.core.evaluation.compare import aligned, compare_reports, compare_shared
from inspector.core.evaluation.gold import GoldQuestion, add_questions, append_question, load_gold
from inspector.core.evaluation.metrics import IndexCost, QuestionResult, Report, aggregate

Q = "How long is parental allowance paid in Germany?"


def doc(text: str = "x" * 1000, name: str = "a.md", path: str | None = None) -> Document:
    return Document(text=text, name=name, kind="markdown", path=path)


# -- marks ------------------------------------------------------------------------------------------

def test_remarking_replaces_and_unjudged_removes():
    a = Audit().judge(Q, ("a.md", 0, 10), RELEVANT).judge(Q, ("a.md", 10, 20), NOT)
    a = a.judge(Q, ("a.md", 0, 10), PARTLY)
    assert [(m.start, m.judgement) for m in a.marks] == [(0, PARTLY), (10, NOT)]  # in place, once
    a = a.judge(Q, ("a.md", 0, 10), None)
    assert [(m.start, m.judgement) for m in a.marks] == [(10, NOT)]
    assert a.judge(Q, ("a.md", 99, 100), None) is a
    assert a.judge("  " + Q + " ", ("a.md", 10, 20), NOT) is a  # the same question, spaces aside
    with pytest.raises(ValueError):
        a.judge(Q, ("a.md", 5, 5), RELEVANT)
    with pytest.raises(ValueError):
        a.judge(Q, ("a.md", 0, 5), "maybe")


def test_runs_are_unique_per_question_and_config():
    a = Audit().record(Q, "markdown k=5 dense", [("a.md", 0, 10)])
    a = a.record(Q, "markdown k=5 dense", [("a.md", 5, 10)]).record(Q, "fixed_chars k=5 dense", [("a.md", 0, 3)])
    assert len(a.runs) == 2 and a.run_for(Q, "markdown k=5 dense").ranking == (("a.md", 5, 10),)
    assert a.questions == (Q,)


# -- replay -----------------------------------------------------------------------------------------

def _marks(*items):
    return tuple(Mark(Q, "a.md", s, e, j) for s, e, j in items)


@pytest.mark.parametrize("span, expected, how", [
    ((100, 200), RELEVANT, "judged"),       # the very span
    ((50, 250), RELEVANT, "inherited"),     # contains the relevant span
    ((150, 300), None, ""),                  # only overlaps it: new text, unjudged
    ((120, 180), None, ""),                  # inside it: the answer may be cut away
    ((300, 380), NOT, "inherited"),         # inside a span judged not relevant
    ((300, 480), NOT, "inherited"),         # across two touching not-relevant spans
    ((350, 600), None, ""),                  # runs past them into unjudged text
    ((590, 720), PARTLY, "inherited"),      # contains the partly span
    ((40, 720), RELEVANT, "inherited"),     # relevant wins over partly
    ((800, 900), None, ""),                  # nothing judged there
])
def test_replay_rule(span, expected, how):
    marks = _marks((100, 200, RELEVANT), (300, 400, NOT), (400, 500, NOT), (600, 700, PARTLY))
    v = replay(marks, Q, ("a.md", *span))
    assert (v.judgement, v.how) == (expected, how)


def test_replay_ignores_other_questions_and_documents():
    marks = (Mark("other?", "a.md", 0, 10, RELEVANT), Mark(Q, "b.md", 0, 10, RELEVANT))
    assert replay(marks, Q, ("a.md", 0, 10)).judgement is None


SPAN = st.tuples(st.integers(0, 60), st.integers(1, 30)).map(lambda t: (t[0], t[0] + t[1]))
MARK = st.tuples(SPAN, st.sampled_from([RELEVANT, PARTLY, NOT]))
MARKS = st.lists(MARK, max_size=8).map(lambda ms: tuple({s: Mark(Q, "a.md", s[0], s[1], j) for s, j in ms}.values()))


@settings(max_examples=300, deadline=None)
@given(MARKS)
def test_replay_returns_every_mark_on_its_own_span(marks):
    for m in marks:
        assert replay(marks, Q, m.span) == replay(marks, Q, m.span)
        v = replay(marks, Q, m.span)
        assert (v.judgement, v.how) == (m.judgement, "judged")


@settings(max_examples=300, deadline=None)
@given(MARKS, SPAN)
def test_inherited_judgements_have_evidence(marks, span):
    a, b = span
    v = replay(marks, Q, ("a.md", a, b))
    if v.how != "inherited":
        return
    if v.judgement in (RELEVANT, PARTLY):  # it holds a whole span judged so
        assert any(m.judgement == v.judgement and a <= m.start and m.end <= b for m in marks)
    else:  # every character lies in a span judged not relevant, and it holds nothing relevant
        nots = [m for m in marks if m.judgement == NOT]
        assert all(any(m.start <= i < m.end for m in nots) for i in range(a, b))
        assert not any(m.judgement != NOT and a <= m.start and m.end <= b for m in marks)


@settings(max_examples=300, deadline=None)
@given(MARKS, SPAN, st.integers(0, 20), st.integers(0, 20))
def test_relevant_is_kept_by_every_wider_span(marks, span, grow_left, grow_right):
    a, b = span
    wide = (max(0, a - grow_left), b + grow_right)
    exact = {m.span for m in marks}
    if ("a.md", *wide) in exact or ("a.md", a, b) in exact:
        return
    if replay(marks, Q, ("a.md", a, b)).judgement == RELEVANT:
        assert replay(marks, Q, ("a.md", *wide)).judgement == RELEVANT


@settings(max_examples=300, deadline=None)
@given(MARKS, SPAN, st.integers(0, 10), st.integers(0, 10))
def test_not_relevant_is_kept_by_every_narrower_span(marks, span, cut_left, cut_right):
    a, b = span
    narrow = (a + cut_left, b - cut_right)
    if narrow[0] >= narrow[1] or ("a.md", *narrow) in {m.span for m in marks}:
        return
    if any(m.judgement != NOT and narrow[0] <= m.start and m.end <= narrow[1] for m in marks):
        return
    if replay(marks, Q, ("a.md", a, b)).judgement == NOT:
        assert replay(marks, Q, ("a.md", *narrow)).judgement == NOT


@settings(max_examples=200, deadline=None)
@given(MARKS, SPAN)
def test_marks_of_other_questions_never_matter(marks, span):
    noise = tuple(Mark("something else?", m.doc_id, m.start, m.end, RELEVANT) for m in marks)
    assert replay(marks + noise, Q, ("a.md", *span)) == replay(marks, Q, ("a.md", *span))


@settings(max_examples=100, deadline=None)
@given(MARKS)
def test_the_file_round_trips(tmp_path_factory, marks):
    p = tmp_path_factory.mktemp("audit") / "a.audit.jsonl"
    a = Audit(marks=marks).record(Q, "cfg", [("a.md", 0, 5), ("a.md", 9, 12)])
    save_audit(p, a)
    back = load_audit(p)
    assert set(back.marks) == set(a.marks) and back.runs == a.runs


# -- summary ----------------------------------------------------------------------------------------

def test_summary_figures():
    a = Audit().judge(Q, ("a.md", 0, 10), NOT).judge(Q, ("a.md", 10, 20), PARTLY) \
        .judge(Q, ("a.md", 20, 30), RELEVANT).judge("Second?", ("a.md", 0, 10), RELEVANT)
    rankings = {Q: [("a.md", 0, 10), ("a.md", 10, 20), ("a.md", 20, 30), ("a.md", 50, 60)],
                "Second?": [("a.md", 40, 45), ("a.md", 0, 10)]}
    s = summarize(a, rankings, "cfg")
    first, second = s.questions
    assert first.letters() == "NPR?" and second.letters() == "?R"
    assert first.precision == pytest.approx((0 + 0.5 + 1) / 3)  # unjudged left out
    assert (first.judged, first.unjudged, first.first_relevant, first.first_relevant_certain) == (3, 1, 3, True)
    assert (second.first_relevant, second.first_relevant_certain) == (2, False)  # rank 1 is unjudged
    assert s.precision == pytest.approx(((1.5 / 3) + 1.0) / 2)
    assert (s.judged, s.unjudged, s.with_relevant, s.mean_first_relevant) == (4, 2, 2, 2.5)


def test_summary_uses_recorded_runs_and_lists_what_is_not_ranked():
    a = Audit().judge(Q, ("a.md", 0, 10), RELEVANT).record(Q, "cfg", [("a.md", 0, 10)]) \
        .judge("Other?", ("a.md", 0, 10), NOT)
    s = summarize(a, {}, "cfg")
    assert [x.question for x in s.questions] == [Q] and s.not_ranked == ("Other?",)
    assert summarize(a, {}, "another").not_ranked == (Q, "Other?")


def test_exports(tmp_path):
    a = Audit().judge(Q, ("a.md", 0, 10), RELEVANT).judge("A | pipe?", ("a.md", 0, 10), PARTLY)
    s = summarize(a, {Q: [("a.md", 0, 10), ("a.md", 10, 20)], "A | pipe?": [("a.md", 0, 10)]}, "md k=2")
    md = summary_markdown(s)
    assert "relevant = 1, partly = 0.5" in md
    assert f"| {Q} | 2 | 100% | 1 | 1 | `R?` |" in md and "A \\| pipe?" in md
    rows = list(csv.DictReader(io.StringIO(summary_csv(s))))
    assert [r["question"] for r in rows] == [Q, "A | pipe?", "(overall)"]
    assert rows[0]["judged_precision"] == "1.0000" and rows[1]["judged_precision"] == "0.5000"
    assert rows[2]["judged_precision"] == "0.7500" and rows[2]["unjudged"] == "1"
    assert export_summary(tmp_path / "s.csv", s) == "csv" and export_summary(tmp_path / "s.md", s) == "markdown"
    assert (tmp_path / "s.md").read_text(encoding="utf-8") == md
    with pytest.raises(InputError, match="use .csv or .md"):
        export_summary(tmp_path / "s.xlsx", s)


# -- to gold ----------------------------------------------------------------------------------------

def test_marks_become_gold_questions_without_duplicate_lines(tmp_path):
    d = doc("Germany pays parental allowance for 12 months. France pays 16 weeks. " * 3, "h.md")
    a = Audit().judge(Q, ("h.md", 0, 47), RELEVANT).judge(Q, ("h.md", 40, 70), RELEVANT) \
        .judge(Q, ("h.md", 100, 140), PARTLY).judge("Nothing relevant?", ("h.md", 0, 10), NOT)
    prop = gold_from_audit(a, answers={Q: ["12 months"]})
    assert prop.questions == (GoldQuestion(Q, answers=("12 months",), source="h.md", references=((0, 70),)),)
    p = tmp_path / "h.gold.jsonl"
    assert add_questions(p, prop.questions) == ("added",)
    assert add_questions(p, prop.questions) == ("unchanged",)  # saved twice: one line
    more = a.judge(Q, ("h.md", 140, 160), RELEVANT)
    assert add_questions(p, gold_from_audit(more).questions) == ("updated",)
    lines = p.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1
    rec = json.loads(lines[0])
    assert rec["answer"] == "12 months"  # kept from the first save
    assert rec["references"] == [{"start": 0, "end": 70}, {"start": 140, "end": 160}]
    gold = load_gold(p, [d])
    assert gold.questions[0].references == ((0, 70), (140, 160))


def test_gold_from_several_documents_keeps_the_one_with_most_text():
    a = Audit().judge(Q, ("a.md", 0, 10), RELEVANT).judge(Q, ("b.md", 0, 50), RELEVANT)
    prop = gold_from_audit(a)
    assert prop.questions[0].source == "b.md" and "a.md" in prop.notes[0]


def test_saving_the_same_question_twice_updates_its_line(tmp_path):
    p = tmp_path / "g.jsonl"
    p.write_text('{"question": "Who?", "answer": "Ann", "id": 7}\n{"question": "Other?", "answer": "x"}\n',
                 encoding="utf-8")
    assert append_question(p, GoldQuestion("who? ", answers=("Ann",))) == "unchanged"
    assert append_question(p, GoldQuestion("Who?", answers=("Bob",), source="a.md")) == "updated"
    assert append_question(p, GoldQuestion("New?", answers=("y",))) == "added"
    lines = [json.loads(x) for x in p.read_text(encoding="utf-8").splitlines()]
    assert lines[0] == {"question": "Who?", "answer": ["Ann", "Bob"], "id": 7, "source": "a.md"}
    assert [x["question"] for x in lines] == ["Who?", "Other?", "New?"]


# -- highlights -------------------------------------------------------------------------------------

def test_question_terms_drop_stopwords():
    assert question_terms(Q) == ("parental", "allowance", "paid", "germany")


def test_highlights_find_terms_answers_and_references():
    prefix = "Handbook > Leave > Germany"
    body = "Parental allowance is paid for 12\nmonths. Germany's rules."
    text = f"{prefix}\n\n{body}"
    marks = highlights(text, Q, answers=("12 months",), references=((1000, 1008),), span_start=1000,
                       body_at=len(prefix) + 2)
    got = {(text[a:b], kind) for a, b, kind in marks}
    assert ("12\nmonths", "answer") in got  # across a line break, case and spacing aside
    assert ("Parental", "answer") in got  # the reference covers the body's first 8 characters
    assert {("Parental", "term"), ("allowance", "term"), ("paid", "term"), ("Germany", "term")} <= got
    assert not any(t.lower() == "is" for t, _k in got)


# -- the file ---------------------------------------------------------------------------------------

def test_audit_path_and_resume(tmp_path):
    d = doc("Germany pays 12 months." * 10, "h.md", str(tmp_path / "h.md"))
    assert audit_path(d) == tmp_path / "h.audit.jsonl"
    assert audit_path(doc("x", "x.md")) is None
    a = Audit().judge(Q, ("h.md", 0, 23), RELEVANT, text=d.text[0:23], config="markdown k=5 dense")
    save_audit(audit_path(d), a)
    assert [f.name for f in tmp_path.iterdir() if f.name != "h.md"] == ["h.audit.jsonl"]  # no temp left
    back = load_audit(audit_path(d), [d])
    assert back.marks == a.marks and back.stale == () and back.warnings == ()


def test_edited_document_makes_marks_stale_but_keeps_them(tmp_path):
    d = doc("Germany pays 12 months. France pays 16 weeks.", "h.md", str(tmp_path / "h.md"))
    a = Audit().judge(Q, ("h.md", 0, 23), RELEVANT, text=d.text[0:23])
    save_audit(tmp_path / "h.audit.jsonl", a)
    edited = doc("Spain pays 16 weeks. Germany pays 12 months.", "h.md", str(tmp_path / "h.md"))
    back = load_audit(tmp_path / "h.audit.jsonl", [edited])
    assert back.marks == () and len(back.stale) == 1 and "changed" in back.warnings[0]
    save_audit(tmp_path / "h.audit.jsonl", back)
    assert len(load_audit(tmp_path / "h.audit.jsonl").marks) == 1  # still in the file


@pytest.mark.parametrize("line, words", [
    ("{not json", "broken JSON"),
    ('{"kind": "mark", "question": "q", "doc": "a", "start": 5, "end": 2, "judgement": "relevant"}', "empty"),
    ('{"kind": "mark", "question": "q", "doc": "a", "start": 0, "end": 2, "judgement": "yes"}', "judgement"),
    ('{"kind": "mark", "doc": "a", "start": 0, "end": 2, "judgement": "not"}', "question"),
    ('{"kind": "run", "question": "q", "ranking": [["a", 3]]}', "ranking"),
    ('{"kind": "note"}', "unknown kind"),
    ('{"kind": "audit", "version": 99}', "newer"),
])
def test_broken_audit_files_name_the_line(tmp_path, line, words):
    p = tmp_path / "a.audit.jsonl"
    p.write_text('{"kind": "audit", "version": 1}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=words) as err:
        load_audit(p)
    assert err.value.line == 2


def test_a_failed_save_leaves_the_old_file(tmp_path, monkeypatch):
    p = tmp_path / "a.audit.jsonl"
    save_audit(p, Audit().judge(Q, ("a.md", 0, 5), RELEVANT))
    before = p.read_bytes()

    def boom(*_a, **_k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        save_audit(p, Audit().judge(Q, ("a.md", 0, 5), NOT))
    assert p.read_bytes() == before


# -- the files of a corpus: each mark in its own document's file -------------------------------------

LEAVE_TEXT = "Leave taken in a pay period is paid with that period's salary. " * 4
TOCK_TEXT = "The pay period runs from the first to the last day of each month. " * 4


def _corpus_docs(folder, sub: str = "") -> list[Document]:
    """leave.md and tock.md of a folder as a corpus opens them (ids: paths in the folder)."""
    out = []
    for name, text in (("leave.md", LEAVE_TEXT), (f"{sub}tock.md", TOCK_TEXT)):
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        out.append(Document(text=text, name=path.name, path=str(path), doc_id=name))
    return out


def _judged(a: Audit, d: Document, start: int, end: int, j: str, q: str = Q) -> Audit:
    return a.judge(q, (d.doc_id, start, end), j, text=d.text[start:end])


def test_each_mark_goes_to_the_file_of_the_document_it_judges(tmp_path):
    leave, tock = _corpus_docs(tmp_path)
    files = load_audits([leave, tock])
    assert files.audit == Audit() and files.texts == {} and files.problems == {}
    a = _judged(_judged(files.audit, leave, 0, 20, RELEVANT), tock, 5, 30, NOT)
    a = a.record(Q, "markdown k=5 bm25", [("tock.md", 5, 30), ("leave.md", 0, 20)])
    files, failed = save_audits(files, a)
    assert failed == ()
    on_leave, on_tock = load_audit(tmp_path / "leave.audit.jsonl"), load_audit(tmp_path / "tock.audit.jsonl")
    assert [m.doc_id for m in on_leave.marks] == ["leave.md"] and [m.doc_id for m in on_tock.marks] == ["tock.md"]
    assert on_leave.runs == on_tock.runs == a.runs  # both files can summarize the question
    # Read back from either document's point of view: the corpus, or one document alone.
    assert set(load_audits([tock, leave]).audit.marks) == set(a.marks)
    assert load_audits([tock]).audit.marks == tuple(m for m in a.marks if m.doc_id == "tock.md")
    # Nothing changed, nothing written; a file whose marks all go is rewritten, never left behind.
    before = (tmp_path / "leave.audit.jsonl").stat().st_mtime_ns
    files, _ = save_audits(files, a)
    assert (tmp_path / "leave.audit.jsonl").stat().st_mtime_ns == before
    files, _ = save_audits(files, a.judge(Q, ("leave.md", 0, 20), None))
    assert load_audit(tmp_path / "leave.audit.jsonl").marks == ()


def test_marks_kept_in_the_shown_documents_file_move_home_and_the_newer_judgement_wins(tmp_path):
    """Before, every mark went to the shown document's file: leave.audit.jsonl may hold marks on
    tock.md. They load with the corpus, and the first save moves them to tock.audit.jsonl."""
    leave, tock = _corpus_docs(tmp_path)
    old = _judged(_judged(Audit(), leave, 0, 20, RELEVANT), tock, 5, 30, NOT)
    old = _judged(old, tock, 40, 60, PARTLY)
    save_audit(tmp_path / "leave.audit.jsonl", old)
    newer = _judged(Audit(), tock, 40, 60, RELEVANT)  # tock.md judged since, opened alone
    save_audit(tmp_path / "tock.audit.jsonl", newer)
    t = (tmp_path / "leave.audit.jsonl").stat().st_mtime
    os.utime(tmp_path / "tock.audit.jsonl", (t + 10, t + 10))
    files = load_audits([leave, tock])
    got = {(m.doc_id, m.start): m.judgement for m in files.audit.marks}
    assert got == {("leave.md", 0): RELEVANT, ("tock.md", 5): NOT, ("tock.md", 40): RELEVANT}
    files, _ = save_audits(files, files.audit.judge(Q, ("leave.md", 20, 30), NOT))
    assert {m.doc_id for m in load_audit(tmp_path / "leave.audit.jsonl").marks} == {"leave.md"}
    assert {(m.start, m.judgement) for m in load_audit(tmp_path / "tock.audit.jsonl").marks} == {
        (5, NOT), (40, RELEVANT)}


def test_a_document_in_a_subfolder_finds_its_marks_opened_alone_or_in_the_corpus(tmp_path):
    leave, tock = _corpus_docs(tmp_path, sub="time/")
    assert tock.doc_id == "time/tock.md"
    alone = Document(text=tock.text, name="tock.md", path=tock.path)  # its id alone: the file name
    files = load_audits([alone])
    save_audits(files, _judged(files.audit, alone, 0, 20, RELEVANT))
    in_corpus = load_audits([leave, tock]).audit
    assert [(m.doc_id, m.start) for m in in_corpus.marks] == [("time/tock.md", 0)]
    files = load_audits([leave, tock])
    save_audits(files, _judged(files.audit, tock, 30, 50, NOT))
    assert [(m.doc_id, m.start) for m in load_audits([alone]).audit.marks] == [("tock.md", 0), ("tock.md", 30)]


def test_marks_about_documents_not_open_stay_in_their_file(tmp_path):
    leave, tock = _corpus_docs(tmp_path)
    other = Mark(Q, "elsewhere.md", 0, 10, RELEVANT)
    save_audit(tmp_path / "leave.audit.jsonl", Audit(marks=(other,)).record(Q, "c", [("elsewhere.md", 0, 10)]))
    files = load_audits([leave, tock])
    assert files.audit.marks == () and files.audit.runs == ()  # not this corpus's: not summarized
    save_audits(files, _judged(files.audit, leave, 0, 20, NOT))
    back = load_audit(tmp_path / "leave.audit.jsonl")
    assert other in back.marks and len(back.marks) == 2 and back.run_for(Q, "c") is not None


def test_an_unreadable_file_is_never_written_and_the_others_are(tmp_path):
    leave, tock = _corpus_docs(tmp_path)
    (tmp_path / "tock.audit.jsonl").write_text("{broken\n", encoding="utf-8")
    files = load_audits([leave, tock])
    assert list(files.problems) == [tmp_path / "tock.audit.jsonl"]
    assert "tock.audit.jsonl:1" in files.problems[tmp_path / "tock.audit.jsonl"]
    a = _judged(_judged(files.audit, leave, 0, 20, RELEVANT), tock, 0, 20, NOT)
    files, failed = save_audits(files, a)
    assert failed == () and (tmp_path / "tock.audit.jsonl").read_text(encoding="utf-8") == "{broken\n"
    assert [m.doc_id for m in load_audit(tmp_path / "leave.audit.jsonl").marks] == ["leave.md"]


def test_a_mark_moving_home_is_written_there_first(tmp_path, monkeypatch):
    """A crash between the two writes leaves the mark in both files, never in neither."""
    from inspector.core.runtime import atomic

    leave, tock = _corpus_docs(tmp_path)
    save_audit(tmp_path / "leave.audit.jsonl", _judged(Audit(), tock, 5, 30, NOT))
    files = load_audits([leave, tock])
    written: list[str] = []
    real = atomic.atomic_write_text
    monkeypatch.setattr(atomic, "atomic_write_text", lambda p, t: (written.append(os.path.basename(p)), real(p, t)))
    save_audits(files, files.audit.record(Q, "c", [("tock.md", 5, 30)]))
    assert written == ["tock.audit.jsonl", "leave.audit.jsonl"]
    assert (tmp_path / "leave.audit.jsonl").read_text(encoding="utf-8") == audit_text(Audit())


# -- a baseline compared on shared questions ----------------------------------------------------------

def _result(q: str, hit: bool) -> QuestionResult:
    return QuestionResult(GoldQuestion(q, answers=("a",)), hit, 1 if hit else None, ())


def _report(*results: QuestionResult) -> Report:
    return aggregate(results, 5, IndexCost(10, 100, 100))


def test_a_new_question_keeps_the_baseline_comparable():
    before = _report(_result("one", True), _result("two", False))
    after = _report(_result("one", False), _result("two", True), _result("new", True))
    cmp = compare_shared(before, after)
    assert cmp is not None and cmp.left_out == 1
    assert [c.question.question for c in cmp.broke] == ["one"] and [c.question.question for c in cmp.fixed] == ["two"]
    assert cmp.delta("hit_rate") == 0.0  # on the two shared questions: 1/2 -> 1/2, not 1/2 -> 2/3
    assert [r.question.question if r else None for r in aligned(before, after)] == ["one", "two", None]
    same = _report(_result("one", False), _result("two", True))
    assert compare_shared(before, same) == compare_reports(before, same)
    assert compare_shared(before, _report(_result("other", True))) is None
