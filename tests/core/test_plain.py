"""A span of Markdown as a reader sees it (`inspector.core.text.plain`): each kind of inline markup
removed, what it shows kept; every clean run is the very text of the document at its offsets
(hypothesis, over text made of markup characters), so an answer found in one is a substring."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.text.plain import plain, plain_text


@pytest.mark.parametrize("source,shown", [
    ("What is meant by [10X](https://10x.gsa.gov/) here", "What is meant by 10X here"),
    ("a [link](http://x.org/a_(b) \"title\") b", "a link b"),
    ("use [Zendesk][] and [the runbook][rb] now", "use Zendesk and the runbook now"),
    ("an image ![the logo](logo.png) here", "an image the logo here"),
    ("Join [Google Groups]({% page '/google-groups/' %}) today", "Join Google Groups today"),
    ("Ask {{ site.email }} or {% include x.html %} now", "Ask  or  now"),
    ("see <a href=\"/kit\">kit</a> and <PrivateLink url=\"x\">merch</PrivateLink>", "see kit and merch"),
    ("a <!-- hidden --> b", "a  b"),
    ("mail <https://x.org/a> or <me@x.org>", "mail https://x.org/a or me@x.org"),
    ("**bold**, __strong__, *em*, _em_ and ~~gone~~", "bold, strong, em, em and gone"),
    ("snake_case and 2*3 and a * b stay", "snake_case and 2*3 and a * b stay"),
    ("`code **kept** [x](y)` and ``a ` b``", "code **kept** [x](y) and a ` b"),
    ("escaped \\[x\\] and \\*y\\* and AT&amp;T", "escaped [x] and *y* and AT&T"),
    ("a footnote[^1] here", "a footnote here"),
    ("| cell | **40** |", " cell  40 "),
    ("- item one\n  * nested **b**\n> quote\n1. first\n## Title", "item one\nnested b\nquote\nfirst\nTitle"),
    ("in 2024. Then a - b and 3) c", "in 2024. Then a - b and 3) c"),
    ("Flexible spending accounts](https://www.opm.gov/fsa/)\n(FSA) allow", "Flexible spending accounts\n(FSA) allow"),
])
def test_what_a_reader_sees(source, shown):
    assert plain_text(source).text == shown


def test_a_span_that_starts_after_indentation_loses_its_list_marker():
    text = "Intro.\n    - **Term.** The text"
    start = text.index("-")
    p = plain_text(text, start)
    assert p.text == "Term. The text"
    assert p.span(0, 4) == (text.index("Term"), text.index("Term") + 4)


def test_clean_runs_and_spans():
    text = "use [Zendesk][] to manage AT&amp;T"
    p = plain_text(text)
    assert [p.text[i:j] for i, j in p.runs] == ["use ", "Zendesk", " to manage AT", "T"]
    i = p.text.index("Zendesk")
    assert p.span(i, i + 7) == (text.index("Zendesk"), text.index("Zendesk") + 7)
    assert p.span(0, i + 7) is None  # markup between: no substring of the document
    amp = p.text.index("&")
    assert p.span(amp, amp + 1) is None  # an entity reads as "&", the document has "&amp;"
    assert p.at(text.index("to manage")) == p.text.index("to manage")
    assert plain("**[10X](https://10x.gsa.gov/)**") == "10X"


PIECES = list("[]()!*_`~<>{}%|#-+\\&;:/ .\nabc12") + [
    "[a](b)", "{% x %}", "{{ y }}", "<b>", "</b>", "**", "`", "&amp;", "\\[", "- ", "\n> ", "](u)", "][r]"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join), st.data())
def test_every_clean_run_is_the_documents_own_text(text, data):
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    p = plain_text(text, start, end)
    assert len(p.source) == len(p.text)
    assert all(start <= s < end for s in p.source)
    assert list(p.source) == sorted(p.source)
    in_runs: set[int] = set()
    for i, j in p.runs:
        a, b = p.span(i, j)
        assert text[a:b] == p.text[i:j]
        assert j == len(p.text) or p.span(i, j + 1) is None  # maximal
        in_runs.update(range(i, j))
    # Only an entity's character is outside every run.
    assert all(text[p.source[k]] == "&" for k in range(len(p.text)) if k not in in_runs)


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(blacklist_characters="[]()!*_`~<>{}%|#-+\\&", blacklist_categories=("Cs",)),
               max_size=80))
def test_text_without_markup_is_itself(text):
    p = plain_text(text)
    if not any(line.lstrip(" \t")[:1].isdigit() for line in text.split("\n")):  # "1. " starts a list
        assert p.text == text
        assert p.runs == (((0, len(text)),) if text else ())
