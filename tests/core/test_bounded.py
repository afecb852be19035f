"""Nothing hangs: chunk counts and work are bounded, inputs that could loop forever terminate, and
the per-document caches stay LRU-bounded.

No test asserts a wall time. The bounds are on WORK: at most 2 chunks per character plus 1, and
characters sent to the tokenizer per character of input; pytest-timeout stops anything that loops.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from inspector.core.chunking.params import Strategy
from inspector.core.chunking.registry import chunk_document, get_strategy
from inspector.core.documents.document import from_text
from inspector.core.text import tokens
from tests.core.strategies_for_tests import markdown_text
from tests.core.test_bad_inputs import check_spans, chunkers
from tests.core.test_fuzz import unicode_text


def _partner(name: str) -> str | None:
    """The size an overlap or cap is measured against: overlap -> size, child_overlap -> child_size."""
    if name.endswith("overlap"):
        return name[: -len("overlap")] + "size"
    return None


@st.composite
def params_for(draw, strat: Strategy) -> dict:
    """Random parameters from the strategy's own declarations: any value in range, small ones
    often (sizes from the declared minimum, 1 for most), overlaps up to size - 1."""
    out: dict = {}
    for p in strat.params:
        if p.kind == "int":
            lo, hi = int(p.minimum), int(p.maximum)
            out[p.name] = draw(st.integers(lo, min(hi, lo + 40)) | st.integers(lo, hi))
        elif p.kind == "float":
            out[p.name] = draw(st.floats(p.minimum, p.maximum))
        elif p.kind == "bool":
            out[p.name] = draw(st.booleans())
        elif p.choices:
            out[p.name] = draw(st.sampled_from(p.choices))
    declared = {p.name: p for p in strat.params}
    for name in list(out):
        size = _partner(name)
        if size in out:
            top = min(out[size] - 1, int(declared[name].maximum))
            # The largest overlap drawn on purpose as well: by chance alone it was missed in one
            # run of 300 examples (test_parameter_generator_reaches_the_extremes).
            out[name] = draw(st.integers(0, top) | st.just(top))
    if "hard_cap" in out and "size" in out:
        out["hard_cap"] = max(out["hard_cap"], out["size"])
    if "parent_size" in out and "child_size" in out and out["parent_size"] <= out["child_size"]:
        out["parent_size"] = min(out["child_size"] + draw(st.integers(1, 64)), 16384)
    try:
        return strat.validate(out)
    except ValueError:
        assume(False)
        raise


@pytest.mark.timeout(240)
@pytest.mark.parametrize("name", chunkers())
@settings(max_examples=50)
@given(data=st.data(), text=unicode_text | markdown_text)
def test_random_parameters_and_texts_give_bounded_chunks(name, data, text):
    strat = get_strategy(name)
    params = data.draw(params_for(strat), label="params")
    doc = from_text(text, data.draw(st.sampled_from(["t.md", "t.txt"]), label="name"))
    chunks = chunk_document(doc, name, params)
    assert len(chunks) <= 2 * len(doc.text) + 1
    check_spans(doc, chunks)


def test_parameter_generator_reaches_the_extremes():
    """The generator above really draws size 1 with overlap 0 and overlaps of size - 1."""
    strat = get_strategy("fixed_tokens")
    seen = set()

    @settings(max_examples=300, database=None)
    @given(params_for(strat))
    def collect(p):
        seen.add((p["size"] == 1, p["overlap"] == p["size"] - 1))

    collect()
    assert (True, True) in seen and (False, True) in seen and (False, False) in seen


# -- inputs that could loop forever -----------------------------------------------------------------

N = 100_000
_rng = random.Random(7)
#: 100 KB inputs built to hit every degenerate path: no separator at all, characters the
#: tokenizer splits inside, nothing but breaks, runs the pre-tokenizer takes in odd steps.
PATHOLOGICAL = {
    "no_space_line": "x" * N,
    "astral_only": "🚀" * (N // 2),
    "combining_run": "e" + "\u0301" * (N - 1),
    "newlines_only": "\n" * N,
    "lone_cr_lines": "a\r" * (N // 2),
    "digit_run": "7" * N,
    "tiny_sentences": "a. " * (N // 3),
    "sparse_words": (" " * 999 + "x") * (N // 1000),
    "hash_run": "#" * N,
    "pipe_run": "|" * N,
    "bullet_run": "- " * (N // 2),
    "markdown_soup": "".join(_rng.choice("ab \n.🚀é\u0301\r|#-`>") for _ in range(N)),
}


@pytest.fixture
def counted_tokenizer():
    """Counts the characters sent to the tokenizer for span counts (the document's own one-time
    encode is not included: it is linear by construction)."""
    real = tokens.count_text
    sent = [0]

    def counting(text: str) -> int:
        sent[0] += len(text)
        return real(text)

    tokens.count_text = counting  # _count looks the name up in the module at call time
    yield sent
    tokens.count_text = real


@pytest.mark.timeout(240)
@pytest.mark.parametrize("case", sorted(PATHOLOGICAL))
def test_100kb_degenerate_inputs_finish_with_bounded_work(case, counted_tokenizer):
    doc = from_text(PATHOLOGICAL[case], f"{case}.md")
    for name in chunkers():
        counted_tokenizer[0] = 0
        chunks = chunk_document(doc, name)
        assert len(chunks) <= 2 * len(doc.text) + 1
        check_spans(doc, chunks, recount=20)
        # Span counts re-encode only the edges of spans: a few characters per input character at
        # default parameters (measured <= 5), never a re-encode of whole chunks per step.
        assert counted_tokenizer[0] <= 10 * len(doc.text), (name, counted_tokenizer[0] / len(doc.text))


#: The parameters that make the most chunks: the smallest size, the largest overlap.
EXTREMES = {
    "fixed_chars": [{"size": 1, "overlap": 0}, {"size": 16, "overlap": 15}],
    "fixed_tokens": [{"size": 1, "overlap": 0}, {"size": 16, "overlap": 15}],
    "recursive": [{"size": 1, "overlap": 0}, {"size": 16, "overlap": 15}],
    "sentences": [{"size": 1, "overlap": 20}],
    "markdown": [{"size": 16, "hard_cap": 16}],
    "parent_child": [{"parent_size": 32, "child_size": 16, "child_overlap": 15}],
    "paragraph": [{}],
}


def test_extremes_cover_every_strategy():
    assert set(chunkers()) <= set(EXTREMES), "add the new strategy's extreme parameters"


@pytest.mark.timeout(240)
@pytest.mark.parametrize("case", ["no_space_line", "astral_only", "markdown_soup", "combining_run"])
def test_extreme_parameters_on_degenerate_inputs_terminate_bounded(case):
    doc = from_text(PATHOLOGICAL[case][:10_000], f"{case}.md")
    for name in chunkers():
        for params in EXTREMES.get(name, [{}]):
            chunks = chunk_document(doc, name, params)
            assert len(chunks) <= 2 * len(doc.text) + 1, (name, params, len(chunks))
            check_spans(doc, chunks, recount=20)


#: Markdown that nests or opens without closing: parser recursion and backtracking must stay bounded.
STRUCTURE_BOMBS = {
    "list_300_deep": "".join("  " * d + f"- level {d}\n" for d in range(300)),
    "quote_5000_deep": ">" * 5000 + " deep\n",
    "brackets_20000": "[" * 20_000 + "x" + "]" * 20_000,
    "emphasis_10000": "*a **b " * 10_000,
    "backticks_50000": "`" * 50_000,
    "table_2000_columns": "|" + "a|" * 2000 + "\n|" + "-|" * 2000 + "\n" + ("|" + "x|" * 2000 + "\n") * 10,
    "fences_unclosed_5000": "```\n" * 5000,
    "html_comment_unclosed": "<!--" + " text" * 20_000,
    "link_defs_5000": "".join(f"[r{i}]: http://example.com/{i}\n" for i in range(5000)),
}


@pytest.mark.timeout(240)
@pytest.mark.parametrize("case", sorted(STRUCTURE_BOMBS))
def test_nesting_and_unclosed_markdown_chunk_in_bounded_work(case):
    doc = from_text(STRUCTURE_BOMBS[case], f"{case}.md")
    for name in chunkers():
        chunks = chunk_document(doc, name)
        check_spans(doc, chunks, recount=20)


# -- caches ----------------------------------------------------------------------------------------

def test_per_document_caches_stay_bounded():
    from inspector.core.chunking import sentences
    from inspector.core.text import structure

    for k in range(60):
        doc = from_text(f"# Doc {k}\n\nSentence one of {k}. Sentence two.\n", f"d{k}.md")
        for name in ("markdown", "sentences", "fixed_tokens"):
            chunk_document(doc, name)
    assert 0 < len(tokens._INDEXES) <= 16
    assert 0 < len(structure._STRUCTURES) <= 32
    assert 0 < len(sentences._UNITS) <= 16


def test_word_piece_indexes_stay_bounded():
    from inspector.core.chunking.annotate import annotate
    from inspector.core.text import wordpieces

    for k in range(20):
        doc = from_text(f"# Doc {k}\n\nParental leave number {k}.\n", f"w{k}.md")
        annotate(doc, chunk_document(doc, "markdown"))
    assert 0 < len(wordpieces._INDEXES) <= 8


def test_the_workbench_remembers_chunks_up_to_a_number_of_chunks(monkeypatch):
    """Sized by chunks, not by documents' characters: a sweep of small chunkings of one document
    no longer fills 64 entries of tens of thousands of chunks (issue 17's soak)."""
    from inspector.core.runtime.lru import SizedLRU
    from inspector.core.workbench import Workbench, chunk_store

    monkeypatch.setattr(chunk_store, "CHUNK_CACHE_CHUNKS", 300)
    rules = "".join(f"Rule {k} grants {k % 9 + 1} weeks of leave. " for k in range(400))
    doc = from_text("# Leave\n\n" + rules, "l.md")
    wb = Workbench([doc])
    held = []
    for size in range(40, 200, 8):
        chunks = wb.chunk(doc, "fixed_tokens", {"size": size, "overlap": 0})
        held.append(len(chunks))
        total = sum(len(v) for v in wb.chunk_store._cache.values())
        assert total <= 300 or len(wb.chunk_store._cache) == 1  # the most recent chunking is always kept
    assert len(wb.chunk_store._cache) < len(held)  # older chunkings were let go
    assert wb.chunk(doc, "fixed_tokens", {"size": 192, "overlap": 0}) is wb.chunk(doc, "fixed_tokens",
                                                                                    {"size": 192, "overlap": 0})
    lru: SizedLRU[list[int]] = SizedLRU(8, 10)
    lru.get_or_make("a", lambda: [1] * 6, len)
    lru.get_or_make("b", lambda: [1] * 6, len)
    assert list(lru) == ["b"]  # 12 > 10: "a" went
