"""The HTTP reranker against a real /rerank server on 127.0.0.1 (tests/support/openai_server.py),
in the Cohere/Jina form (vLLM, infinity) and TEI's, through the client code users run."""

from __future__ import annotations

import json
import logging
import socket
import threading

import numpy as np
import pytest

from inspector.core.embedding.embedder import HashEmbedder
from inspector.core.errors import InputError
from inspector.core.retrieval.rerank_http import HttpReranker
from inspector.core.runtime.cancel import Cancelled, cancel_scope
from tests.support.openai_server import OpenAIServer

KEY = "sk-rerank-Ux7distinctiveKEY0042qq"
KEY_ENV = "CI_RERANK_KEY"
_HASH = HashEmbedder(64)


def scorer(query: str, texts) -> list[float]:
    """A deterministic scorer: cosine of hashed words (the server's "model")."""
    q = _HASH.encode_one(query)
    return [float(_HASH.encode_one(t) @ q) for t in texts]


QUERY = "parental leave in Germany"
TEXTS = ["Parental leave in Germany lasts 14 months.", "Travel expenses are refunded.",
         "Leave in France: 16 weeks.", "Germany pays Elterngeld during parental leave.", ""]


class Waits:
    def __init__(self) -> None:
        self.seconds: list[float] = []

    def __call__(self, s: float) -> None:
        self.seconds.append(s)


def reranker(server: OpenAIServer, **kw) -> HttpReranker:
    kw.setdefault("sleep", Waits())
    return HttpReranker(kw.pop("url", server.root), **kw)


@pytest.mark.parametrize("style", ["cohere", "tei"])
def test_scores_are_the_servers_in_input_order(style):
    with OpenAIServer(scorer=scorer, rerank_style=style) as server:
        rr = reranker(server, model="bge-reranker")
        got = rr.score(QUERY, TEXTS)
        again = rr.score(QUERY, TEXTS[::-1])
        posts = server.posts("/rerank")
    assert isinstance(got, np.ndarray) and got.shape == (len(TEXTS),)
    assert np.allclose(got, scorer(QUERY, TEXTS))
    assert np.allclose(again, got[::-1])
    assert rr.style == style
    # Cohere's form first; a TEI server refuses it (axum's 422) and is asked in its own form, once.
    assert len(posts) == (2 if style == "cohere" else 3)
    if style == "tei":
        assert [p.status for p in posts] == [422, 200, 200]
        assert set(posts[-1].body) == {"query", "texts", "truncate"}
    else:
        assert posts[0].body == {"query": QUERY, "documents": TEXTS, "top_n": 5, "model": "bge-reranker"}


def test_the_style_given_is_used_without_asking():
    with OpenAIServer(scorer=scorer, rerank_style="tei") as server:
        rr = reranker(server, style="tei")
        rr.score(QUERY, TEXTS)
        assert [p.status for p in server.posts()] == [200]


def test_texts_go_in_batches_and_come_back_in_order():
    texts = [f"text {i} about leave" if i % 3 else f"Germany parental leave {i}" for i in range(70)]
    with OpenAIServer(scorer=scorer, rerank_style="cohere") as server:
        rr = reranker(server, batch_size=32, concurrency=2)
        got = rr.score(QUERY, texts)
        sizes = [len(p.inputs) for p in server.posts()]
        assert server.max_in_flight <= 2
    assert sorted(sizes) == [6, 32, 32]
    assert np.allclose(got, scorer(QUERY, texts))


def test_url_rules():
    assert HttpReranker("http://localhost:8080").url == "http://localhost:8080/rerank"
    assert HttpReranker("http://localhost:8000/v1/").url == "http://localhost:8000/v1/rerank"
    assert HttpReranker("https://api.jina.ai/v1/rerank").url == "https://api.jina.ai/v1/rerank"
    rr = HttpReranker("localhost:7997", model="mxbai")
    assert rr.model_id == "http:http://localhost:7997/rerank#mxbai"
    assert rr.info() == {"spec": "http:http://localhost:7997/rerank", "model_id": rr.model_id, "model": "mxbai",
                         "style": None, "backend": "http"}
    with pytest.raises(InputError, match="unknown rerank style"):
        HttpReranker("http://x", style="bm25")


def test_v1_path_is_served_too():
    with OpenAIServer(scorer=scorer) as server:
        got = reranker(server, url=server.url).score(QUERY, TEXTS)
        assert server.posts()[-1].path == "/v1/rerank"
    assert np.allclose(got, scorer(QUERY, TEXTS))


def test_retries_honour_retry_after():
    with OpenAIServer(scorer=scorer, rerank_style="cohere") as server:
        rr = reranker(server)
        server.fail_next("429", retry_after=2)
        server.fail_next("503")
        got = rr.score(QUERY, TEXTS)
        assert [p.status for p in server.posts()] == [429, 503, 200]
    assert rr.waits[0] == ("answered 429", 2.0)
    assert rr.waits[1][0] == "answered 503" and 0.5 <= rr.waits[1][1] <= 1.0  # half to all of 1 s
    assert np.allclose(got, scorer(QUERY, TEXTS))


def test_a_refused_key_is_one_line_and_never_shown(monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv(KEY_ENV, KEY)
    with OpenAIServer(scorer=scorer, key="other") as server:
        rr = reranker(server, key_env=KEY_ENV)
        with pytest.raises(InputError) as err:
            rr.score(QUERY, TEXTS)
        url = rr.url
        assert [p.status for p in server.posts()] == [401]  # a wrong key is not "the other form"
    msg = str(err.value)
    assert msg.startswith(f"the endpoint {url} refused the key in ${KEY_ENV} (401): Incorrect API key")
    for text in (msg, repr(rr), json.dumps(rr.info()), rr.describe(), caplog.text, repr(vars(rr))):
        assert KEY not in text


def test_a_right_key_works():
    with OpenAIServer(scorer=scorer, key=KEY) as server:
        got = reranker(server, key=KEY).score(QUERY, TEXTS)
        assert server.posts()[-1].auth == "bearer"
    assert np.allclose(got, scorer(QUERY, TEXTS))


def test_no_rerank_endpoint_names_both_refusals():
    with OpenAIServer(scorer=scorer) as server:
        rr = reranker(server, url=server.root + "/nothing/here")
        with pytest.raises(InputError) as err:
            rr.score(QUERY, TEXTS)
    assert str(err.value) == (f"{rr.url} took neither rerank request: the Cohere/Jina form (404: no route "
                              "/nothing/here/rerank), TEI's (404: no route /nothing/here/rerank)")


def test_malformed_body():
    with OpenAIServer(scorer=scorer) as server:
        rr = reranker(server)
        server.fail_next("malformed")
        with pytest.raises(InputError, match=r"answered with something that is not a rerank response: <html>"):
            rr.score(QUERY, TEXTS)


def test_unreachable_host():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rr = HttpReranker(f"http://127.0.0.1:{port}", sleep=Waits())
    with pytest.raises(InputError, match=rf"^cannot reach http://127.0.0.1:{port}/rerank: .*[Rr]efused"):
        rr.score(QUERY, TEXTS)


def test_cancel_stops_between_requests():
    with OpenAIServer(scorer=scorer, rerank_style="cohere") as server:
        rr = reranker(server, batch_size=2, concurrency=1, style="cohere")
        with cancel_scope(lambda: len(server.posts()) >= 2), pytest.raises(Cancelled):
            rr.score(QUERY, [f"t{i}" for i in range(10)])
        assert len(server.posts()) == 2


def test_concurrency_is_bounded():
    with OpenAIServer(scorer=scorer, rerank_style="tei") as server:
        rr = reranker(server, batch_size=1, concurrency=3, style="tei")
        # Each request is held until three of them are in the server at once (30 s at most):
        # nine texts, three rounds of three.
        server.fail_next("delay", n=9, seconds=30, hold=threading.Barrier(3))
        rr.score(QUERY, [f"t{i}" for i in range(9)])
        assert server.max_in_flight == 3
