"""The user's embedding model on the command line (issue 28): `--embedder SPEC` with its options on
every command that embeds, through real parts: an OpenAI-compatible server on 127.0.0.1 (its
401 and 429 included), a second real sentence-transformers model in a folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.core.embedding.embedder import HashEmbedder
from tests.support.openai_server import OpenAIServer

DATA = Path(__file__).resolve().parents[1] / "data" / "gold"
SECRET = "sk-test-9f8e7d6c5b4a-never-shown"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def run_json(capsys, *argv: str) -> dict:
    code, out, err = run(capsys, *argv, "--format", "json")
    assert code == 0, err
    return json.loads(out)


@pytest.fixture()
def hash_server():
    """The server answering with the test embedder's vectors (fast; the wire format is real)."""
    with OpenAIServer(HashEmbedder(), models=("hash-model",), count_tokens=lambda t: len(t.split()) + 2) as server:
        yield server


def _openai(server: OpenAIServer, *more: str) -> list[str]:
    return ["--embedder", "openai:hash-model", "--embed-url", server.url, *more]


# -- openai: a real endpoint ------------------------------------------------------------------------

def test_openai_endpoint_ranks_as_the_same_model_in_process(capsys, hash_server, corpus, gold):
    common = ["eval", str(corpus), "--gold", str(gold), "--retriever", "dense", "--strategy", "paragraph"]
    local = run_json(capsys, *common, "--embedder", "hash")
    remote = run_json(capsys, *common, *_openai(hash_server))
    assert [q["retrieved_ids"] for q in remote["questions"]] == [q["retrieved_ids"] for q in local["questions"]]
    assert remote["hit_rate"] == local["hit_rate"]
    info = remote["embedder"]
    assert info["spec"] == "openai:hash-model" and info["backend"] == "http"
    assert info["model_id"] == f"openai:hash-model@{hash_server.url}"
    assert info["dims"] == HashEmbedder().dim and info["max_tokens"] == 8191 and info["tokenizer"] == "cl100k_base"
    assert set(info) == {"spec", "model_id", "dims", "max_tokens", "tokenizer", "backend"}
    assert local["embedder"]["spec"] == "hash"
    assert hash_server.posts("/embeddings"), "nothing reached the endpoint"


def test_a_refused_key_is_one_line_without_the_key(capsys, corpus, gold, monkeypatch):
    monkeypatch.setenv("MY_EMBED_KEY", SECRET)
    with OpenAIServer(HashEmbedder(), models=("hash-model",), key="sk-the-right-one") as server:
        code, out, err = run(capsys, "ask", str(corpus), "-q", "maternity leave in France", "--retriever", "dense",
                             *_openai(server, "--embed-key-env", "MY_EMBED_KEY"))
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ") and "Traceback" not in err
    assert "401" in err
    # OpenAI's 401 echoes the key it was sent (the test server does too): never shown.
    assert SECRET not in err and SECRET not in out and SECRET[:12] not in err


def test_a_rate_limit_with_retry_after_is_waited_out(capsys, hash_server, corpus, gold):
    hash_server.fail_next("429", 1, retry_after=0.05)
    data = run_json(capsys, "ask", str(corpus), "-q", "How long is maternity leave in France?",
                    "--retriever", "dense", "--strategy", "paragraph", *_openai(hash_server))
    statuses = [s.status for s in hash_server.posts("/embeddings")]
    assert statuses[0] == 429 and statuses[-1] == 200
    assert data["hits"] and data["embedder"]["spec"] == "openai:hash-model"


def test_an_unreachable_endpoint_is_one_line(capsys, corpus):
    with OpenAIServer(HashEmbedder()) as server:
        url = server.url  # a port that was just served and is now closed
    code, _out, err = run(capsys, "ask", str(corpus), "-q", "leave", "--retriever", "dense",
                          "--embedder", "openai:m", "--embed-url", url)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "cannot reach" in err


def test_an_unknown_model_names_what_the_endpoint_serves(capsys, hash_server, corpus):
    code, _out, err = run(capsys, "ask", str(corpus), "-q", "leave", "--retriever", "dense",
                          "--embedder", "openai:nope", "--embed-url", hash_server.url)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "'nope'" in err and "hash-model" in err


@pytest.mark.parametrize("argv,needle", [
    (["--embedder", "bert"], "unknown embedder 'bert'"),
    (["--embedder", "st:"], "needs a model name"),
    (["--embedder", "hash", "--embed-url", "http://127.0.0.1:9"], "--embed-url applies to openai:MODEL"),
    (["--embedder", "openai:m", "--embed-key-env", "sk-pasted-key-by-mistake"], "must name an environment variable"),
    (["--embedder", "st:/no/such/folder"], "no model folder"),
    (["--embedder", "openai:m", "--embed-max-tokens", "0"], "--embed-max-tokens must be"),
])
def test_bad_embedder_flags_are_one_line(capsys, corpus, gold, argv, needle):
    code, _out, err = run(capsys, "eval", str(corpus), "--gold", str(gold), "--retriever", "dense", *argv)
    assert code == 2, err
    assert needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "sk-pasted-key-by-mistake" not in err


# -- the model's own word pieces ------------------------------------------------------------------------

def test_chunks_count_word_pieces_with_the_chosen_models_tokenizer(capsys, corpus):
    doc = str(corpus / "leave.md")
    bundled = json.loads(run(capsys, "chunks", doc, "--format", "json")[1])
    cl100k = json.loads(run(capsys, "chunks", doc, "--format", "json", "--embedder", "openai:text-embedding-3-small",
                            "--embed-url", "http://127.0.0.1:9/v1")[1])
    assert [r["page_content"] for r in cl100k] == [r["page_content"] for r in bundled]
    # MiniLM's WordPiece adds [CLS]/[SEP]; cl100k adds nothing and splits words otherwise.
    assert [r["metadata"]["word_pieces"] for r in cl100k] != [r["metadata"]["word_pieces"] for r in bundled]
    # A limit of 8 tokens: every chunk of more is flagged as cut by the embedder.
    short = json.loads(run(capsys, "chunks", doc, "--format", "json", "--strategy", "paragraph",
                           "--embedder", "openai:m", "--embed-url", "http://127.0.0.1:9/v1",
                           "--embed-max-tokens", "8")[1])
    assert all(r["metadata"]["truncated_by_embedder"] == (r["metadata"]["word_pieces"] > 8) for r in short)
    assert any(r["metadata"]["truncated_by_embedder"] for r in short)
    # Nothing was sent (counting needs no endpoint), and the next command counts as MiniLM again.
    assert json.loads(run(capsys, "chunks", doc, "--format", "json")[1]) == bundled


# -- st: a second real model ------------------------------------------------------------------------

def test_a_sentence_transformers_folder_ranks_otherwise_than_minilm(capsys, two_layer_model, corpus):
    q = "How long is parental allowance paid in Germany?"
    common = ["ask", str(corpus), "-q", q, "--retriever", "dense", "--strategy", "fixed_chars", "--size", "120",
              "--overlap", "0", "--k", "10"]
    minilm = run_json(capsys, *common)
    two = run_json(capsys, *common, "--embedder", f"st:{two_layer_model}")
    assert [h["chunk"] for h in two["hits"]] != [h["chunk"] for h in minilm["hits"]]
    info = two["embedder"]
    assert info["spec"] == f"st:{two_layer_model}" and info["dims"] == 384 and info["backend"] == "torch"
    assert info["max_tokens"] == minilm["embedder"]["max_tokens"] == 256
    assert minilm["embedder"]["spec"] == "minilm"


# -- rerankers ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cross_encoder(tmp_path_factory) -> Path:
    from tests.support.models import tiny_cross_encoder

    return tiny_cross_encoder(tmp_path_factory)


def _shortest_first(query: str, texts) -> list[float]:
    """A real (if blunt) relevance rule the test server scores by: shorter texts first."""
    return [-float(len(t)) for t in texts]


SMALL = ["--strategy", "fixed_chars", "--size", "120", "--overlap", "0", "--retriever", "bm25"]


def test_ask_with_a_cross_encoder_shows_each_hits_rank_before_and_after(capsys, cross_encoder, corpus):
    q = "How long is parental allowance paid in Germany?"
    plain = run_json(capsys, "ask", str(corpus), "-q", q, *SMALL, "--k", "10")
    data = run_json(capsys, "ask", str(corpus), "-q", q, *SMALL, "--k", "3", "--reranker", f"st-ce:{cross_encoder}",
                    "--rerank-depth", "10")
    hits = data["hits"]
    assert [h["rank"] for h in hits] == [1, 2, 3]
    # Each hit is the retriever's hit of its rank_before, now reordered by the cross-encoder.
    by_rank = {h["rank"]: h["chunk"] for h in plain["hits"]}
    assert all(by_rank[h["rank_before"]] == h["chunk"] for h in hits)
    assert [h["rank_before"] for h in hits] != [1, 2, 3]
    assert data["reranker"]["depth"] == 10 and str(cross_encoder) in json.dumps(data["reranker"])
    code, out, _err = run(capsys, "ask", str(corpus), "-q", q, *SMALL, "--k", "3",
                          "--reranker", f"st-ce:{cross_encoder}", "--rerank-depth", "10")
    assert code == 0 and f"(retriever #{hits[0]['rank_before']} \u2192 #1)" in out


def test_eval_reports_hit_rate_and_mrr_before_and_after_an_http_reranker(capsys, corpus, gold):
    common = ["eval", str(corpus), "--gold", str(gold), *SMALL, "--k", "2"]
    plain = run_json(capsys, *common)
    with OpenAIServer(scorer=_shortest_first) as server:
        data = run_json(capsys, *common, "--reranker", f"http:{server.root}/rerank", "--rerank-depth", "8")
        assert server.posts("/rerank")
    r = data["rerank"]
    assert r["before"] == {"hit_rate": round(plain["hit_rate"], 4), "mrr": round(plain["mrr"], 4)}
    assert r["depth"] == 8 and r["k"] == 2 and r["pairs"] > 0
    assert set(r["paired"]) == {"hit_rate", "mrr"}
    assert r["paired"]["hit_rate"]["verdict"] in ("better", "worse", "within noise")
    assert r["after"]["hit_rate"] == pytest.approx(r["paired"]["hit_rate"]["after"], abs=1e-4)
    assert r["ceiling"] >= r["after"]["hit_rate"]
    assert len(r["moves"]) == len(plain["questions"])
    assert plain["rerank"] is None


@pytest.mark.parametrize("argv,needle", [
    (["--rerank-depth", "5"], "--rerank-depth needs --reranker"),
    (["--reranker", "cohere:x"], "unknown reranker 'cohere:x'"),
    (["--reranker", "st-ce:/no/such/folder"], "no such folder"),
    (["--reranker", "http:http://127.0.0.1:9/rerank", "--rerank-depth", "1"], "below k"),
])
def test_bad_reranker_flags_are_one_line(capsys, corpus, gold, argv, needle):
    code, _out, err = run(capsys, "eval", str(corpus), "--gold", str(gold), "--retriever", "bm25", *argv)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err


# -- the user's vector store ------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "sample_docs" / "handbook.md"
HANDBOOK_GOLD = ROOT / "sample_docs" / "handbook.gold.jsonl"
STRAY = "00000000-0000-4000-8000-00000000f00d"


@pytest.fixture()
def forget_stores():
    """Each --store registers its chunks as a strategy: the tests after do not see it."""
    from inspector.core.chunking.external import remove_external
    from inspector.core.stores import source

    yield
    for name in list(source._SOURCES):
        remove_external(name)
        source._SOURCES.pop(name, None)


def _records(dim: int | None = None, stray: bool = False):
    import numpy as np

    from tests.support.stores import langchain_records

    emb = HashEmbedder() if dim is None else HashEmbedder(dim=dim)
    recs = langchain_records(HANDBOOK, emb)
    if stray:  # a record of a document that was never opened: reported, never dropped silently
        recs.ids.append(STRAY)
        recs.texts.append("Quarterly revenue rose in every region.")
        recs.metadatas.append({"source": "/elsewhere/finance.md"})
        recs.vectors = np.vstack([recs.vectors, emb.encode(recs.texts[-1:])]).astype(np.float32)
    return recs


@pytest.mark.parametrize("kind", ["chroma", "lancedb", "qdrant"])
def test_eval_scores_a_langchain_filled_store_on_its_own_vectors(capsys, tmp_path, kind, forget_stores):
    from tests.support.stores import WRITERS

    recs = _records(stray=True)
    spec = WRITERS[kind](tmp_path / kind, recs)
    code, out, err = run(capsys, "eval", str(HANDBOOK), "--gold", str(HANDBOOK_GOLD), "--store", spec,
                         "--embedder", "hash", "--k", "5", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    store = data["store"]
    assert store["records"] == len(recs.ids) and store["placed"] == len(recs.ids) - 1
    assert [(u["id"], u["reason"]) for u in store["unplaced"]] == [(STRAY, "source not opened")]
    assert f"record {STRAY} not placed (source not opened)" in err
    assert data["config"]["retriever"] == "dense" and data["config"]["strategy"] == f"store:{store['spec']}"
    assert data["cost"]["chunks"] == store["placed"] and len(data["questions"]) == 64
    assert data["embedder"]["spec"] == "hash"


def test_chunks_and_ask_read_the_store(capsys, tmp_path, forget_stores):
    from tests.support.stores import write_chroma

    recs = _records()
    spec = write_chroma(tmp_path / "chroma", recs)
    code, out, err = run(capsys, "chunks", str(HANDBOOK), "--store", spec, "--format", "jsonl")
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    text = HANDBOOK.read_text(encoding="utf-8")
    assert sorted(r["metadata"]["store_id"] for r in rows) == sorted(recs.ids)
    assert all(text[r["metadata"]["start_index"]:r["metadata"]["end_index"]] == r["page_content"] for r in rows)
    assert f"placed {len(recs.ids)} of {len(recs.ids)} records" in err
    data = run_json(capsys, "ask", str(HANDBOOK), "-q", "How long is parental leave?", "--store", spec,
                    "--embedder", "hash")
    assert len(data["hits"]) == 5 and all(h["rank_before"] is None for h in data["hits"])
    assert data["store"]["placed"] == len(recs.ids) and data["config"]["retriever"] == "dense"


def test_a_store_of_another_vector_size_is_one_line(capsys, tmp_path, forget_stores):
    from tests.support.stores import write_chroma

    spec = write_chroma(tmp_path / "chroma", _records(dim=32))
    code, _out, err = run(capsys, "eval", str(HANDBOOK), "--gold", str(HANDBOOK_GOLD), "--store", spec,
                          "--embedder", "hash")
    assert code == 2 and len(err.strip().splitlines()[-1:]) == 1 and "32 dimensions" in err.splitlines()[-1]
    assert err.splitlines()[-1].startswith("error: ") and "Traceback" not in err


@pytest.mark.parametrize("argv,needle", [
    (["--store", "pinecone:x:y"], "unknown store kind 'pinecone'"),
    (["--store", "chroma:/no/such/folder:langchain"], "no such folder"),
    (["--store-source-key", "path"], "--store-source-key needs --store"),
    (["--store", "chroma:/x:y", "--strategy", "paragraph"], "both choose the chunks"),
])
def test_bad_store_flags_are_one_line(capsys, argv, needle, forget_stores):
    code, _out, err = run(capsys, "eval", str(HANDBOOK), "--gold", str(HANDBOOK_GOLD), "--embedder", "hash", *argv)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err
