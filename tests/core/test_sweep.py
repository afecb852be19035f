"""Configurations: validation, compare (deltas, fixed, broke), sweep (grid, order, progress, cancel)."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.core.chunking.registry import chunk_document
from inspector.core.documents.document import load_paths
from inspector.core.errors import InputError
from inspector.core.evaluation.compare import compare_reports
from inspector.core.evaluation.config import EvalConfig, sized_params
from inspector.core.evaluation.gold import GoldQuestion, load_gold
from inspector.core.evaluation.metrics import evaluate
from inspector.core.evaluation.sweep import grid
from inspector.core.retrieval.index import Hit, build_index
from inspector.core.workbench import Workbench

CORPUS = Path(__file__).resolve().parents[1] / "data" / "gold" / "corpus"
GOLD = Path(__file__).resolve().parents[1] / "data" / "gold" / "good.gold.jsonl"


@pytest.fixture(scope="module")
def docs():
    return load_paths([CORPUS]).documents


@pytest.fixture(scope="module")
def gold(docs):
    return load_gold(GOLD, docs)


# -- configurations ---------------------------------------------------------------------------------

def test_config_validates_and_round_trips():
    c = EvalConfig("recursive", {"size": 128}, k=3, retriever="bm25", with_prefix=False)
    assert c.params == {"size": 128, "overlap": 0}
    assert EvalConfig.from_dict(c.to_dict()) == c
    assert c.label() == "recursive size=128 overlap=0 k=3 bm25 no-prefix"
    with pytest.raises(ValueError, match="k must be"):
        EvalConfig(k=0)
    with pytest.raises(ValueError, match="retriever must be one of"):
        EvalConfig(retriever="sparse")


@pytest.mark.parametrize("data, field, words", [
    ([], None, "must be a JSON object"),
    ({"strategy": "markdown", "colour": 1}, "colour", "unknown key"),
    ({"strategy": 5}, "strategy", "must be a string"),
    ({"strategy": "nope"}, "strategy", "unknown strategy 'nope'"),
    ({"params": [1]}, "params", "must be an object"),
    ({"strategy": "recursive", "params": {"size": 0}}, "params", "must be between"),
    ({"strategy": "recursive", "params": {"width": 3}}, "params", "has no parameter 'width'"),
    ({"k": 0}, "k", "at least 1"),
    ({"k": True}, "k", "whole number"),
    ({"retriever": "sparse"}, "retriever", "must be one of"),
    ({"with_prefix": "yes"}, "with_prefix", "true or false"),
])
def test_config_errors_name_the_field(data, field, words):
    with pytest.raises(InputError) as info:
        EvalConfig.from_dict(data, path="c.json")
    assert info.value.field == field and words in info.value.problem
    assert info.value.one_line().startswith("c.json: ")


def test_sized_params_puts_size_and_overlap_where_the_strategy_keeps_them():
    assert sized_params("recursive", 128, 16) == {"size": 128, "overlap": 16}
    pc = sized_params("parent_child", 512, 16)
    assert pc["parent_size"] == 512 and pc["child_overlap"] == 16
    md = sized_params("markdown", 2048)
    assert md["size"] == 2048 and md["hard_cap"] >= 2048
    assert sized_params("paragraph", None, 0) == {}
    with pytest.raises(ValueError, match="no size parameter"):
        sized_params("paragraph", 128)
    with pytest.raises(ValueError, match="no overlap parameter"):
        sized_params("markdown", 128, 16)
    with pytest.raises(ValueError, match="must be smaller than size"):
        sized_params("recursive", 64, 64)


def test_grid_dedupes_and_lists_skipped_points():
    configs, skipped = grid(["recursive", "paragraph", "markdown"], [64, 128], [0, 64], [1, 5],
                            retriever="bm25")
    labels = [c.label() for c in configs]
    assert len(labels) == len(set(labels))
    # recursive: (64,0), (128,0), (128,64) x 2 ks; paragraph: 1 x 2 ks; markdown: 2 sizes x 2 ks.
    assert len(configs) == 3 * 2 + 2 + 2 * 2
    assert sum(1 for c in configs if c.strategy == "paragraph") == 2
    reasons = dict(skipped)
    assert "must be smaller than size" in reasons["recursive size=64 overlap=64"]
    assert "no overlap parameter" in reasons["markdown size=64 overlap=64"]
    with pytest.raises(ValueError, match="unknown strategy"):
        grid(["nope"])


def test_grid_sizes_go_to_the_size_role():
    configs, skipped = grid(["parent_child", "semantic"], [64, 512], [0, 16], retriever="bm25")
    got = sorted((c.strategy, tuple(sorted(c.params.items()))) for c in configs)
    assert got == sorted([
        ("parent_child", (("child_overlap", 0), ("child_size", 128), ("fit_embedder", True), ("parent_size", 512))),
        ("parent_child", (("child_overlap", 16), ("child_size", 128), ("fit_embedder", True),
                          ("parent_size", 512))),
        ("semantic", (("max_size", 512), ("min_size", 64), ("threshold", 90))),
    ])
    reasons = dict(skipped)
    assert reasons["parent_child size=64 overlap=0"] == ("parent_child: child_size (128) must be smaller "
                                                         "than parent_size (64)")
    assert reasons["semantic size=64 overlap=0"] == "semantic: min_size (64) must be smaller than max_size (64)"
    assert reasons["semantic size=512 overlap=16"] == "strategy 'semantic' has no overlap parameter"


# -- compare ----------------------------------------------------------------------------------------

def _scripted(ranks: dict[str, list[int]], chunks):
    """A search that returns the chunk holding the answer at the scripted rank, or never."""
    def search(question: GoldQuestion, k: int):
        all_chunks = [c for cs in chunks.values() for c in cs]
        holder = next((c for c in all_chunks if question.answers[0].lower()
                       in " ".join(_text(c).lower().split())), None)
        rank = ranks.get(question.question)
        order = [c for c in all_chunks if c is not holder]
        if rank is not None and holder is not None:
            order.insert(rank - 1, holder)
        return [Hit(c, c, i, 0.0, "dense") for i, c in enumerate(order[:k], 1)]
    return search


_DOCS = {}


def _text(c):
    return _DOCS[c.doc_id].text[c.start:c.end]


def test_compare_reports_deltas_fixed_and_broke(docs):
    _DOCS.update({d.doc_id: d for d in docs})
    chunks = {d.doc_id: chunk_document(d, "paragraph") for d in docs}
    qs = [GoldQuestion("a", ("14 months",)), GoldQuestion("b", ("16 weeks",)),
          GoldQuestion("c", ("€79",))]
    before = evaluate(qs, docs, chunks, _scripted({"a": 1, "b": None, "c": 2}, chunks), k=1)
    after = evaluate(qs, docs, chunks, _scripted({"a": None, "b": 1, "c": 1}, chunks), k=1)
    cmp = compare_reports(before, after)
    assert [c.question.question for c in cmp.fixed] == ["b", "c"]
    assert [c.question.question for c in cmp.broke] == ["a"]
    assert cmp.delta("hit_rate") == pytest.approx(2 / 3 - 1 / 3)
    assert cmp.delta("mrr") == pytest.approx(2 / 3 - 1 / 3)
    assert cmp.delta("chunks") == 0
    assert cmp.delta("iou") is None  # no reference spans
    assert cmp.fixed[0].before.diagnosis is not None and cmp.fixed[0].after.diagnosis is None
    with pytest.raises(ValueError, match="different gold sets"):
        compare_reports(before, evaluate(qs[:2], docs, chunks, _scripted({}, chunks), k=1))


def test_compare_runs_both_configurations(docs, gold):
    a = EvalConfig("fixed_chars", {"size": 40, "overlap": 0}, k=1, retriever="bm25")
    b = EvalConfig("paragraph", {}, k=1, retriever="bm25")
    seen = []
    cmp = Workbench(docs, gold).compare(a, b, progress=lambda d, t, label: seen.append((d, t)))
    assert seen[0] == (0, 2) and seen[-1] == (2, 2)
    assert cmp.before_config == a and cmp.after_config == b
    assert cmp.before.cost.chunks != cmp.after.cost.chunks
    fixed = {c.question.question for c in cmp.fixed}
    broke = {c.question.question for c in cmp.broke}
    for x, y in zip(cmp.before.questions, cmp.after.questions, strict=True):
        assert (x.question.question in fixed) == (not x.hit and y.hit)
        assert (x.question.question in broke) == (x.hit and not y.hit)


# -- sweep ------------------------------------------------------------------------------------------

class SizeOracle:
    """A fake index factory: the bigger the chunk size, the better the scripted rank. Counts builds."""

    def __init__(self) -> None:
        self.builds = 0

    def __call__(self, docs, chunks_by_doc, config):
        self.builds += 1
        size = config.params.get("size", 0)
        rank = {32: None, 64: 3, 128: 1}.get(size)
        _DOCS.update({d.doc_id: d for d in docs})
        outer = self

        class Index:
            def search(self, query, k, retriever, docs=None, heading_prefix=None, **kw):
                qq = GoldQuestion(query, (outer.answers[query],))
                return _scripted({query: rank}, chunks_by_doc)(qq, k)

        return Index()


def test_sweep_orders_best_first_and_shares_an_index_across_k(docs):
    qs = [GoldQuestion("a", ("14 months",)), GoldQuestion("b", ("16 weeks",))]
    oracle = SizeOracle()
    oracle.answers = {x.question: x.answers[0] for x in qs}
    configs, skipped = grid(["fixed_chars"], [32, 64, 128], [0], [1, 5])
    progress = []
    result = Workbench(docs, qs, index_factory=oracle).sweep(
        configs, progress=lambda d, t, label: progress.append((d, t, label)))
    assert oracle.builds == 3  # one index per size, shared by k=1 and k=5
    order = [(r.config.params["size"], r.config.k) for r in result.rows]
    # size 128 hits both at rank 1; size 64 holds "14 months" at rank 3 (a hit only with k=5) and
    # splits "16 weeks"; size 32 never hits.
    assert order[:2] == [(128, 1), (128, 5)]
    assert order[2] == (64, 5)
    assert set(order[3:]) == {(64, 1), (32, 1), (32, 5)}
    hit_rates = [r.report.hit_rate for r in result.rows]
    assert hit_rates == sorted(hit_rates, reverse=True)
    assert not result.cancelled
    assert [p[0] for p in progress] == [0, 2, 4, 6] and progress[-1][:2] == (6, 6)


def test_sweep_cancel_keeps_finished_rows(docs):
    qs = [GoldQuestion("a", ("14 months",))]
    oracle = SizeOracle()
    oracle.answers = {"a": "14 months"}
    configs, _ = grid(["fixed_chars"], [32, 64, 128], [0], [1])
    result = Workbench(docs, qs, index_factory=oracle).sweep(configs, cancel=lambda: oracle.builds >= 2)
    assert result.cancelled
    assert len(result.rows) == 1 and oracle.builds == 2


def test_sweep_grid_with_bm25_end_to_end(docs, gold):
    configs, skipped = grid(["fixed_chars", "paragraph"], [40, 400], [0], [1, 3], retriever="bm25")
    result = Workbench(docs, gold).sweep(configs, skipped=skipped)
    assert len(result.rows) == 2 * 2 + 2
    keys = [(-r.report.hit_rate, -r.report.mrr) for r in result.rows]
    assert keys == sorted(keys)
    for row in result.rows:
        assert row.report.k == row.config.k
        assert len(row.report.questions) == len(gold)
    # The same configuration evaluated on its own gives the same numbers as inside the sweep.
    top = result.rows[0]
    chunks = {d.doc_id: chunk_document(d, top.config.strategy, top.config.params) for d in docs}
    from inspector.core.evaluation.metrics import IndexSearch

    alone = evaluate(gold, docs, chunks, IndexSearch(build_index(docs, chunks, None), retriever="bm25"),
                     top.config.k)
    assert (alone.hit_rate, alone.mrr, alone.recall) == (top.report.hit_rate, top.report.mrr,
                                                         top.report.recall)
