"""A context budget packs the top-k chunks by hand-counted cl100k tokens; the answer must be sent."""

from __future__ import annotations

import pytest

from inspector.core.chunking.chunk import Chunk
from inspector.core.documents.document import Document
from inspector.core.evaluation.budget import document_cut, pack
from inspector.core.evaluation.gold import GoldQuestion
from inspector.core.evaluation.metrics import evaluate
from inspector.core.evaluation.report import report_dict
from inspector.core.retrieval.index import Hit
from inspector.core.text.tokens import token_index

# cl100k, each sentence encoded on its own:
# A "Oslo per diem is 79 euro."                       10: Os|lo| per| di|em| is| |79| euro|.
# B " The hotel cap in Zurich is 270 euro per night."  12:  The| hotel| cap| in| Zurich| is| |270| euro| per| night|.
# C " Germany pays Elterngeld for 14 months."          11:  Germany| pays| El|ter|ng|eld| for| |14| months|.
A = "Oslo per diem is 79 euro."
B = " The hotel cap in Zurich is 270 euro per night."
C = " Germany pays Elterngeld for 14 months."
TEXT = A + B + C
DOC = Document(text=TEXT, name="d.md")
A0, B0, C0 = 0, len(A), len(A) + len(B)


def chunk(i: int, start: int, end: int, **kw) -> Chunk:
    return Chunk(id=i, start=start, end=end, token_count=token_index(DOC).count(start, end),
                 doc_id="d.md", **kw)


def chunks() -> dict[str, tuple[Chunk, ...]]:
    return {"d.md": (chunk(0, A0, B0), chunk(1, B0, C0), chunk(2, C0, len(TEXT)))}


def ranked(order: list[int]):
    by_id = {c.id: c for c in chunks()["d.md"]}

    def search(q: GoldQuestion, k: int) -> list[Hit]:
        return [Hit(by_id[i], by_id[i], r, 1.0, "dense") for r, i in enumerate(order[:k], 1)]

    return search


def test_the_hand_counts_hold():
    assert [c.token_count for c in chunks()["d.md"]] == [10, 12, 11]


# -- pack -------------------------------------------------------------------------------------------

def fake_cut(c: Chunk, n: int) -> int:
    return c.start + n  # one "token" per character, for arithmetic by hand


def plain(i: int, start: int, end: int) -> Chunk:
    return Chunk(id=i, start=start, end=end, token_count=end - start, doc_id="d")


def test_pack_whole_chunks_then_the_cut_then_nothing():
    cs = [plain(0, 0, 10), plain(1, 100, 120), plain(2, 200, 230)]
    p = pack(cs, 25, fake_cut)
    assert p.spans == (("d", 0, 10), ("d", 100, 115)) and p.tokens == 25
    assert (p.whole, p.cut) == (1, True)
    p = pack(cs, 30, fake_cut)  # the second fills the budget exactly: nothing of the third
    assert p.spans == (("d", 0, 10), ("d", 100, 120)) and p.tokens == 30 and not p.cut
    p = pack(cs, 5, fake_cut)
    assert p.spans == (("d", 0, 5),) and p.tokens == 5 and p.whole == 0
    p = pack(cs, 1000, fake_cut)  # only the top k: the rest of the budget stays empty
    assert len(p.spans) == 3 and p.tokens == 60 and not p.cut
    assert pack(cs, 0, fake_cut).spans == ()
    assert pack([], 50, fake_cut).tokens == 0
    with pytest.raises(ValueError):
        pack(cs, -1, fake_cut)


def test_a_cut_that_keeps_no_character_sends_and_counts_nothing():
    cs = [plain(0, 0, 10), plain(1, 100, 120)]
    p = pack(cs, 12, lambda c, n: c.start)
    assert p.spans == (("d", 0, 10),) and p.tokens == 10 and not p.cut


def test_document_cut_uses_the_span_encoded_on_its_own():
    b = chunks()["d.md"][1]
    cut = document_cut({"d.md": DOC})
    assert TEXT[b.start:cut(b, 9)] == " The hotel cap in Zurich is 270 euro"
    assert TEXT[b.start:cut(b, 8)] == " The hotel cap in Zurich is 270"
    assert cut(b, 12) == b.end


# -- evaluate with a budget -------------------------------------------------------------------------

@pytest.mark.parametrize("budget, sent_hit, tokens", [
    (22, True, 22),   # A and B whole
    (19, True, 19),   # A whole, B's first 9 tokens end with "270 euro"
    (18, False, 18),  # ... its first 8 end with "270": the answer is cut
    (10, False, 10),  # A fills it: nothing of B
    (5, False, 5),    # A cut
    (100, True, 22),  # more than the top k hold: only what they hold is sent
])
def test_budget_cuts_the_second_chunk_before_or_after_the_answer(budget, sent_hit, tokens):
    gold = [GoldQuestion("zurich hotel cap?", ("270 euro",))]
    r = evaluate(gold, [DOC], chunks(), ranked([0, 1, 2]), k=2, budget=budget)
    res = r.questions[0]
    assert res.hit and res.rank == 2
    assert (res.budget_hit, res.tokens_sent) == (sent_hit, tokens)
    assert res.context_tokens == 22
    assert r.budget == budget and r.hit_at_budget == (1.0 if sent_hit else 0.0)
    assert r.tokens_sent_mean == tokens


def test_reference_only_questions_need_a_sent_span_overlapping_the_reference():
    ref = (TEXT.index("270"), TEXT.index("270") + len("270 euro"))
    gold = [GoldQuestion("zurich?", references=(ref,), source="d.md")]
    r17 = evaluate(gold, [DOC], chunks(), ranked([0, 1]), k=2, budget=17)
    r18 = evaluate(gold, [DOC], chunks(), ranked([0, 1]), k=2, budget=18)
    assert r17.questions[0].hit and not r17.questions[0].budget_hit  # sent text ends right before "270"
    assert r18.questions[0].budget_hit


def test_parent_child_packs_the_parents():
    # Parent 1 is B + C (23 tokens); its children are B and C. The matched child C (11 tokens)
    # would fit in 20 tokens, but the model is handed the parent: cut after B and 8 tokens of C.
    parent = chunk(1, B0, len(TEXT), role="parent")
    kids = (chunk(2, B0, C0, role="child", parent_id=1), chunk(3, C0, len(TEXT), role="child", parent_id=1))
    cs = {"d.md": (chunk(0, A0, B0), parent, *kids)}
    assert parent.token_count == 23

    def search(q, k):
        return [Hit(parent, kids[1], 1, 1.0, "dense")][:k]

    gold = [GoldQuestion("germany?", ("14 months",))]
    for budget, expected in ((20, False), (21, False), (22, True), (23, True)):
        r = evaluate(gold, [DOC], cs, search, k=1, budget=budget)
        res = r.questions[0]
        assert res.hit and res.budget_hit is expected, budget
        assert res.context_tokens == 23 and res.tokens_sent == min(budget, 23)


def test_a_miss_is_a_miss_at_any_budget():
    gold = [GoldQuestion("germany?", ("14 months",))]
    r = evaluate(gold, [DOC], chunks(), ranked([0, 1]), k=2, budget=1000)
    assert not r.questions[0].hit and r.questions[0].budget_hit is False
    assert r.hit_at_budget == 0.0


def test_without_a_budget_only_the_context_size_is_recorded():
    gold = [GoldQuestion("zurich", ("270 euro",)), GoldQuestion("oslo", ("79 euro",))]
    r = evaluate(gold, [DOC], chunks(), ranked([1, 2]), k=2)
    assert r.budget is None and r.hit_at_budget is None and r.tokens_sent_mean is None
    assert all(q.budget_hit is None and q.tokens_sent is None for q in r.questions)
    assert [q.context_tokens for q in r.questions] == [23, 23]
    assert r.context_tokens_mean == 23
    with pytest.raises(ValueError, match="budget"):
        evaluate(gold, [DOC], chunks(), ranked([1, 2]), k=2, budget=0)


def test_budget_reaches_report_dict():
    gold = [GoldQuestion("zurich", ("270 euro",)), GoldQuestion("germany", ("14 months",))]
    r = evaluate(gold, [DOC], chunks(), ranked([0, 1]), k=2, budget=19)
    data = report_dict(r)
    assert data["budget"] == 19 and data["hit_at_budget"] == 0.5 and data["tokens_sent_mean"] == 19
    assert data["context_tokens_mean"] == 22
    assert [(q["budget_hit"], q["tokens_sent"], q["context_tokens"]) for q in data["questions"]] == [
        (True, 19, 22), (False, 19, 22)]
    low, high = data["hit_at_budget_ci"]
    assert 0.0 <= low <= 0.5 <= high <= 1.0
    plain_data = report_dict(evaluate(gold, [DOC], chunks(), ranked([0, 1]), k=2))
    assert plain_data["budget"] is None and plain_data["hit_at_budget_ci"] is None
