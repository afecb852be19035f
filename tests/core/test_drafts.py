"""Drafted questions: every answer an exact, unique substring at its span and inside its reference;
no duplicates; deterministic; spread over the document; kinds from tables, terms, sections, facts."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.documents.document import Document, load_document
from inspector.core.evaluation.drafts import KINDS, Draft, draft_questions
from inspector.core.evaluation.gold import add_questions, load_gold, normalize, normalized_text

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "sample_docs" / "handbook.md"


@pytest.fixture(scope="module")
def handbook() -> Document:
    return load_document(HANDBOOK)


@pytest.fixture(scope="module")
def all_drafts(handbook) -> tuple[Draft, ...]:
    return draft_questions(handbook)


def check_invariants(doc: Document, drafts: tuple[Draft, ...]) -> None:
    nt = normalized_text(doc)
    for d in drafts:
        a, b = d.answer_span
        assert doc.text[a:b] == d.answer, d
        assert d.reference[0] <= a < b <= d.reference[1] <= len(doc.text), d
        assert d.answer == d.answer.strip() and d.answer
        assert len(nt.find_all(normalize(d.answer))) == 1, d  # a hit can only be this occurrence
        assert d.source == doc.doc_id and d.kind in KINDS
        assert d.question.strip() and normalize(d.question) != normalize(d.answer)
    for key in (lambda d: normalize(d.question), lambda d: normalize(d.answer), lambda d: d.reference):
        counts = Counter(key(d) for d in drafts)
        assert max(counts.values(), default=1) == 1, counts.most_common(3)
    assert [d.answer_span for d in drafts] == sorted(d.answer_span for d in drafts)


def test_handbook_drafts_hold_the_invariants(handbook, all_drafts):
    assert len(all_drafts) > 100
    check_invariants(handbook, all_drafts)
    kinds = Counter(d.kind for d in all_drafts)
    for kind in ("table", "term", "section", "duration", "money", "percent"):
        assert kinds[kind] > 0, kinds


def test_deterministic(handbook, all_drafts):
    again = draft_questions(Document(text=handbook.text, name=handbook.name, kind=handbook.kind))
    assert again == all_drafts
    assert draft_questions(handbook, limit=30) == draft_questions(handbook, limit=30)


def test_expected_drafts_of_the_handbook(all_drafts):
    by_answer = {d.answer: d for d in all_drafts}
    money = by_answer["€1,800"]
    assert money.kind == "money" and money.question.startswith("How much (Parental leave › Germany): ")
    assert "___" in money.question and "€1,800" not in money.question
    assert money.heading_path[-2:] == ("Parental leave", "Germany")
    table = next(d for d in all_drafts if d.kind == "table" and d.answer == "Tumblingerstraße 44, 80337 München")
    assert table.question == "München (HQ) — Address (About Kestrelbrook › Offices and addresses)?"
    term = next(d for d in all_drafts if d.kind == "term" and "Be kind and be clear" in d.question)
    assert term.question == "What is meant by “Be kind and be clear”?"
    assert term.answer.startswith("Kindness without clarity is confusing")
    section = next(d for d in all_drafts if d.kind == "section" and "Who this handbook applies to" in d.question)
    assert section.question == "What is said about Who this handbook applies to (About this handbook)?"


def test_a_repeated_fact_is_widened_until_unique():
    text = ("# Leave\n\nIn France the birth parent gets 16 weeks of leave.\n\n"
            "# Germany\n\nIn Germany mothers get 16 weeks of protection and pay.\n")
    doc = Document(text=text, name="t.md")
    drafts = draft_questions(doc, kinds=("duration",))
    answers = sorted(d.answer for d in drafts)
    # Widened by a content word first ("gets", not "of"): the shortest unique phrase.
    assert answers == ["get 16 weeks", "gets 16 weeks"]
    check_invariants(doc, drafts)


def test_limit_spreads_over_sections(handbook):
    few = draft_questions(handbook, limit=20)
    assert len(few) == 20
    top = {d.heading_path[1] for d in few if len(d.heading_path) > 1}
    assert len(top) >= 10  # one chapter does not take them all
    check_invariants(handbook, few)
    assert draft_questions(handbook, limit=0) == ()


def test_kinds_filter(handbook):
    only = draft_questions(handbook, kinds=("table",))
    assert only and {d.kind for d in only} == {"table"}
    with pytest.raises(ValueError, match="unknown draft kinds: nope"):
        draft_questions(handbook, kinds=("nope",))


def test_plain_text_has_keyword_and_fact_drafts():
    text = ("The committee approved a budget of $4.5 million for the new bridge across the river.\n\n"
            "Construction started on March 3, 2021 and took about eighteen months to finish.\n\n"
            "Engineers praised the elegant cable design chosen by the regional transport authority.\n\n"
            "Around 12,000 vehicles now cross the bridge every single working day.\n")
    doc = Document(text=text, name="bridge.txt", kind="text")
    drafts = draft_questions(doc)
    check_invariants(doc, drafts)
    kinds = {d.kind for d in drafts}
    assert {"money", "keywords"} <= kinds
    kw = next(d for d in drafts if d.kind == "keywords")
    assert kw.question.startswith("What does the text say about ")
    assert all(d.heading_path == () for d in drafts)


def test_accepted_drafts_become_gold_questions_that_load_back(tmp_path, handbook, all_drafts):
    path = tmp_path / "g.jsonl"
    picked = all_drafts[:25]
    assert add_questions(path, [d.to_gold() for d in picked]) == ("added",) * 25
    gold = load_gold(path, [handbook])
    assert [q.question for q in gold.questions] == [d.question for d in picked]
    assert not gold.warnings
    assert all(q.references == (d.reference,) for q, d in zip(gold.questions, picked, strict=True))
    edited = picked[0].to_gold("  A better question?  ")
    assert edited.question == "A better question?" and edited.answers == (picked[0].answer,)


# -- properties ----------------------------------------------------------------------------------------

FRAGMENTS = [
    "# Travel\n", "## Per diem rates\n", "### Germany\n", "## Leave\n",
    "The allowance is €1,800 a month for up to 14 months after the birth.\n",
    "Refunds are possible within 30 calendar days of the charge.\n",
    "About 35 % of staff work remotely, according to the 2024 survey.\n",
    "Kestrel was founded in 2011 by Anna Schmidt and Paul Weber in Munich.\n",
    "The office opens at 08:30–18:00 on working days, except public holidays.\n",
    "| City | Rate | Hotel cap |\n|---|---|---|\n| Berlin | €54 | €150 |\n| Lyon | €49 | €140 |\n",
    "- **Basic.** The entry tier with one plant and five users included.\n",
    "- Rail cards: the company pays for a BahnCard if you travel often.\n",
    "Each laptop weighs 1.4 kg and ships with 16 GB of memory.\n",
    "Short.\n", "\n", "Plain prose with nothing special in it at all, just some words here.\n",
    "On 3 March 2021 the policy changed for 120 employees in six offices.\n",
]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=25), st.sampled_from(["markdown", "text"]),
       st.one_of(st.none(), st.integers(1, 12)))
def test_invariants_hold_on_any_mix(parts, kind, limit):
    doc = Document(text="\n".join(parts), name="mix.md" if kind == "markdown" else "mix.txt", kind=kind)
    drafts = draft_questions(doc, limit=limit)
    check_invariants(doc, drafts)
    if limit is not None:
        assert len(drafts) <= limit
    assert draft_questions(doc, limit=limit) == drafts


# -- drafts read as text: no markup, whole phrases (issue 26, item 8) -------------------------------------

PUBLIC = ROOT / "benchmarks" / "data" / "public"
PUBLIC_DOCS = sorted(p for p in PUBLIC.glob("*/*.md") if p.name not in ("PROVENANCE.md", "README.md"))

#: Markup a reader should never meet in a draft: link syntax, template tags, code ticks, emphasis,
#: HTML tags, reference labels, escapes, a list or quote marker starting an answer. (The cloze's
#: blank "___" is taken out of a question before looking.)
MARKUP = re.compile(r"\]\(|\]\[|\{%|%\}|\{\{|\}\}|`|\*\*|__|~~|<[A-Za-z/!][^>]*>|\[\^|\\[\\`*_|\[\]()#>-]"
                    r"|^\s*(?:[-*+>#]|\d+[.)])\s")
PAIRS = {"(": ")", "[": "]", "{": "}"}


def balanced(s: str) -> bool:
    stack: list[str] = []
    for ch in s:
        if ch in PAIRS:
            stack.append(PAIRS[ch])
        elif ch in PAIRS.values() and (not stack or stack.pop() != ch):
            return False
    return not stack


def unreadable(d: Draft) -> list[str]:
    """What is wrong with a draft as a person reads it (empty: nothing)."""
    wrong = []
    question = d.question.replace("___", "")
    for what, s in (("question", question), ("answer", d.answer)):
        m = MARKUP.search(s)
        if m:
            wrong.append(f"{what} has markup {m.group()!r}")
        if not balanced(s):
            wrong.append(f"{what} has unbalanced brackets")
    return wrong


@pytest.fixture(scope="module", params=PUBLIC_DOCS, ids=lambda p: p.stem)
def public_drafts(request) -> tuple[Document, tuple[Draft, ...]]:
    doc = load_document(request.param)
    return doc, draft_questions(doc)


def test_public_documents_have_no_markup_or_half_brackets_in_drafts(public_drafts):
    """Real pages (links, reference links, HTML components, emphasis, escapes, parentheses): 110
    of 486 drafts had markup or a bracket cut in half ("182 Hours (96", "What is meant by
    “[Overtime and comp time](/travel-and-leave/overtime/)”?"); none may."""
    doc, drafts = public_drafts
    assert len(drafts) >= 50
    check_invariants(doc, drafts)  # answers still exact, unique substrings inside their reference
    bad = [(d.question, d.answer, unreadable(d)) for d in drafts if unreadable(d)]
    assert bad == []


def test_answers_cut_inside_a_parenthesis_are_widened_to_the_whole_phrase():
    doc = load_document(PUBLIC / "tts_leave" / "tts_leave.md")
    answers = {d.answer: d for d in draft_questions(doc, kinds=("duration",))}
    for whole in ("182 Hours (96 Hours Use or Lose)", "up to 13 days (104 hours)", "two weeks (80 hours)"):
        assert whole in answers, sorted(answers)
    d = answers["182 Hours (96 Hours Use or Lose)"]
    assert d.question.endswith('You look in HRLinks and see " ___ ."?')


LINKS = ("# Offices\n\n"
         "- **[10X](https://10x.gsa.gov/).** An incubator that funds ideas from federal employees across teams.\n"
         "- [Overtime and comp time](/travel-and-leave/overtime/): Yes, it can be approved for extra hours.\n\n"
         "## Mailing lists\n\n"
         "Join the [Google Groups]({% page '/google-groups/' %}) list for 18F staff within 30 days of joining.\n\n"
         "Your manager approves up to 13 days (104 hours) of leave a year for bereavement purposes here.\n\n"
         "Later you may take up to 13 days of unpaid leave if your manager agrees with the request.\n\n"
         "Ask {{ site.support_email }} about the 42 laptops we keep, see <a href=\"/kit\">kit</a> **today**.\n")


def test_links_templates_and_tags_are_read_as_text():
    doc = Document(text=LINKS, name="links.md")
    drafts = draft_questions(doc)
    check_invariants(doc, drafts)
    assert [d for d in drafts if unreadable(d)] == []
    questions = {d.question for d in drafts}
    assert "What is meant by “10X”?" in questions
    assert "What is meant by “Overtime and comp time”?" in questions
    by_answer = {d.answer: d for d in drafts}
    assert by_answer["30 days"].question == (
        "How long (Offices › Mailing lists): Join the Google Groups list for 18F staff within ___ of joining?")
    assert "up to 13 days (104 hours)" in by_answer  # widened to the closing bracket, not "13 days (104"
    laptops = by_answer["42 laptops"]
    assert laptops.question == "How many laptops (Offices › Mailing lists): Ask about the ___ we keep, see kit today?"


def test_a_fact_inside_a_link_address_is_no_fact():
    text = ("# Health\n\nOPM provides a detailed [FAQ on eligibility](https://www.opm.gov/Guide-Me/Federal-Employees/) "
            "and the [2024 plans](https://example.gov/plans-2025/30-days) for all federal employees.\n")
    drafts = draft_questions(Document(text=text, name="h.md"))
    assert all("Guide-Me" not in d.answer and "30-days" not in d.answer and "2025" not in d.answer for d in drafts)
    assert all("opm.gov" not in d.question and "example.gov" not in d.question for d in drafts)


MARKUP_FRAGMENTS = FRAGMENTS + [
    "See the [transit benefit](/transit-benefit/) page for the 12 routes we pay for in full.\n",
    "You can receive two weeks (80 hours) of parental bereavement leave for the passing of your child.\n",
    "Use [Zendesk][] to answer within 4 hours, as [the runbook][rb] says (see [^1] for the SLA).\n",
    "[rb]: https://example.com/runbook\n",
    "- **Budget (FY23 only):** each teammate has $2,500 a year to meet with colleagues.\n",
    "If you make the maximum salary ($191,900 in 2024), you cannot receive overtime pay at all.\n",
    "Ask {{ site.email }} or see {% include contact.html %} about the 3 offices in Lyon and Berlin.\n",
    "<PrivateLink url=\"https://x.example\">Merch</PrivateLink> costs up to 50 % less for the 200 employees.\n",
    "| Day | **Hours** |\n|---|---|\n| Monday | **9** |\n| Total | [40](#total) |\n",
    "An escaped \\[bracket\\] and `code (with a paren` then 25 days of leave (paid, in full) per year.\n",
]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(MARKUP_FRAGMENTS), min_size=1, max_size=25), st.one_of(st.none(), st.integers(1, 12)))
def test_no_draft_of_any_mix_has_markup_or_half_brackets(parts, limit):
    doc = Document(text="\n".join(parts), name="mix.md")
    drafts = draft_questions(doc, limit=limit)
    check_invariants(doc, drafts)
    assert [(d.question, d.answer, unreadable(d)) for d in drafts if unreadable(d)] == []
