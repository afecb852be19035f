"""A real OpenAI-compatible embeddings and rerank server on 127.0.0.1, for tests and benchmarks.

It speaks the wire format the clients meet in the field, over a real socket, through the stdlib's
ThreadingHTTPServer (one thread per connection, HTTP/1.1 keep-alive):

* `POST /v1/embeddings` (and `/embeddings`): OpenAI's request and answer, the vectors computed by
  the embedder it is given (the bundled MiniLM by default), `usage` counting the model's own word
  pieces ([CLS] and [SEP] included, at most what it reads), `dimensions` (vectors cut and
  normalized again, as OpenAI's text-embedding-3 do), `encoding_format: "base64"`; OpenAI's
  refusals: an unknown model (404, `model_not_found`), an empty input, too many inputs, an input
  over `max_input_tokens` ("maximum context length").
* `POST /rerank` and `/v1/rerank`: the Cohere/Jina form vLLM and infinity answer
  ({"query", "documents", "top_n"} -> {"results": [{"index", "relevance_score"}]}) and TEI's
  ({"query", "texts"} -> [{"index", "score"}]), scored by the `scorer(query, texts)` it is given.
  `rerank_style` makes it one server or the other ("tei" refuses the Cohere form with axum's 422,
  "cohere" refuses TEI's with a 400), or both ("both", told apart by the body).
* `GET /v1/models`: the models it serves.

With a `key`, every request must carry it (`Authorization: Bearer KEY` or Azure's `api-key: KEY`);
a wrong one gets OpenAI's 401, which echoes the key it was sent (as OpenAI echoes part of it).

`fail_next(kind, n)` makes the next n POSTs fail: "429" (with `retry_after` seconds or HTTP-date
text, and/or `retry_after_ms`), "500"/"502"/"503"/"504", "401", "malformed" (a 200 whose body is
not an embeddings answer), "delay" (then a normal answer: after `seconds`, or, given `hold` (a
`threading.Event` the test sets, or a `threading.Barrier` the held requests meet at), once it is
released, `seconds` being then only the most it waits), "drop" (the connection closed without
an answer). Every request is recorded in `seen` with the server's own monotonic
timestamps, its inputs and tokens; `max_in_flight` is the most POSTs it was answering at once.

    with OpenAIServer(MiniLMEmbedder()) as server:
        OpenAIEmbedder("all-MiniLM-L6-v2", url=server.url, ...)

Leaving the block stops it; so does `lifetime` seconds (a leaked server never outlives a test
run), and its threads are daemons. `python tests/support/openai_server.py` serves the bundled
MiniLM until interrupted (the benchmark runs it so, in a process of its own).
"""

from __future__ import annotations

import base64
import contextlib
import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import numpy as np

DEFAULT_MODEL = "all-MiniLM-L6-v2"
RETRY_KINDS = ("429", "500", "502", "503", "504")
FAULT_KINDS = (*RETRY_KINDS, "401", "malformed", "delay", "drop")


@dataclass
class Seen:
    """One request as the server saw it."""

    method: str
    path: str
    query: dict[str, str]
    arrived: float
    """time.monotonic() when its body had been read."""
    auth: str | None = None
    """"bearer", "api-key" or None: how a key came (never the key itself)."""
    model: str | None = None
    inputs: list[str] = field(default_factory=list)
    """Embedding inputs, or the documents/texts of a rerank request."""
    tokens: int = 0
    """Word pieces of the inputs as the model reads them (what `usage` reports)."""
    body: dict[str, Any] = field(default_factory=dict)
    status: int | None = None
    fault: str | None = None
    finished: float | None = None


@dataclass
class _Fault:
    kind: str
    retry_after: float | str | None = None
    retry_after_ms: float | None = None
    seconds: float = 0.0
    hold: threading.Event | threading.Barrier | None = None


class _Http(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: OpenAIServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return  # the client gave up on this answer (a timeout, a cancel): nothing to report
        super().handle_error(request, client_address)


class OpenAIServer:
    """The server (module docstring). `embedder`: anything with `encode(texts)` (default: the
    bundled MiniLM, loaded on first use); `scorer(query, texts) -> floats` for /rerank."""

    def __init__(self, embedder: Any = None, *, models: Sequence[str] = (DEFAULT_MODEL,), key: str | None = None,
                 scorer: Callable[[str, Sequence[str]], Sequence[float]] | None = None,
                 rerank_style: str = "both", count_tokens: Callable[[str], int] | None = None,
                 max_input_tokens: int | None = None, max_inputs: int = 2048, base64_vectors: bool = False,
                 reverse_order: bool = False, usage: bool = True, lifetime: float = 600.0) -> None:
        if rerank_style not in ("both", "cohere", "tei"):
            raise ValueError(f"rerank_style {rerank_style!r}")
        self._embedder = embedder
        self.models = tuple(models)
        self.key = key
        self.scorer = scorer
        self.rerank_style = rerank_style
        self._count_tokens = count_tokens
        self.max_input_tokens = max_input_tokens
        self.max_inputs = max_inputs
        self.base64_vectors = base64_vectors
        """Answer base64 even when floats are asked for (some gateways do)."""
        self.reverse_order = reverse_order
        """Answer `data` last input first (clients must sort by `index`)."""
        self.usage = usage
        self.lifetime = lifetime
        self.seen: list[Seen] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._faults: deque[_Fault] = deque()
        self._lock = threading.Lock()
        self._embed_lock = threading.Lock()
        self._httpd: _Http | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None
        self.stopped = threading.Event()
        """Set once the server has stopped (by `stop`, or at the end of its `lifetime`)."""

    # -- life ----------------------------------------------------------------------------------
    def start(self) -> OpenAIServer:
        httpd = _Http(("127.0.0.1", 0), _Handler)
        httpd.owner = self
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="openai-server", daemon=True)
        self._thread.start()
        self._timer = threading.Timer(self.lifetime, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        self.stopped.set()
        if self._timer is not None and self._timer is not threading.current_thread():
            self._timer.cancel()
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "the server is not running"
        return int(self._httpd.server_address[1])

    @property
    def root(self) -> str:
        """http://127.0.0.1:PORT (no path)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """http://127.0.0.1:PORT/v1: what an OpenAI client is given."""
        return self.root + "/v1"

    # -- what tests set and read --------------------------------------------------------------
    def fail_next(self, kind: str, n: int = 1, *, retry_after: float | str | None = None,
                  retry_after_ms: float | None = None, seconds: float = 0.0,
                  hold: threading.Event | threading.Barrier | None = None) -> None:
        """The next `n` POSTs fail as `kind` (see the module docstring)."""
        if kind not in FAULT_KINDS:
            raise ValueError(f"fault {kind!r} (one of {', '.join(FAULT_KINDS)})")
        with self._lock:
            self._faults.extend(_Fault(kind, retry_after, retry_after_ms, seconds, hold) for _ in range(n))

    def posts(self, path_end: str = "") -> list[Seen]:
        """The POSTs seen so far (those whose path ends with `path_end`)."""
        with self._lock:
            return [s for s in self.seen if s.method == "POST" and s.path.endswith(path_end)]

    @property
    def embedder(self) -> Any:
        if self._embedder is None:
            from inspector.core.embedding.embedder import MiniLMEmbedder

            self._embedder = MiniLMEmbedder()
        return self._embedder

    def count_tokens(self, text: str) -> int:
        """Word pieces the model reads of `text` ([CLS]/[SEP] included), else words."""
        if self._count_tokens is not None:
            return self._count_tokens(text)
        path = getattr(self.embedder, "model_path", None)
        if path is None:
            return len(text.split())
        from inspector.core.text.wordpieces import tokenizer

        n = len(tokenizer(path).encode(text, add_special_tokens=True).ids)
        return min(n, int(getattr(self.embedder, "max_seq_length", n)))

    # -- bookkeeping ---------------------------------------------------------------------------
    def _arrive(self, seen: Seen, post: bool) -> _Fault | None:
        with self._lock:
            self.seen.append(seen)
            if not post:
                return None
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            return self._faults.popleft() if self._faults else None

    def _leave(self, seen: Seen, post: bool) -> None:
        with self._lock:
            seen.finished = time.monotonic()
            if post:
                self.in_flight -= 1

    # -- answers -------------------------------------------------------------------------------
    def embeddings(self, body: dict[str, Any], seen: Seen) -> tuple[int, Any]:
        model = body.get("model")
        seen.model = model
        if model not in self.models:
            return 404, _openai_error(f"The model `{model}` does not exist or you do not have access to it.",
                                      "invalid_request_error", "model_not_found")
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not isinstance(inputs, list) or not inputs or not all(isinstance(t, str) for t in inputs):
            return 400, _openai_error("'$.input' is invalid. Please check the API reference: "
                                      "https://platform.openai.com/docs/api-reference.", "invalid_request_error")
        seen.inputs = list(inputs)
        if len(inputs) > self.max_inputs:
            return 400, _openai_error(f"'$.input' is invalid: at most {self.max_inputs} inputs.",
                                      "invalid_request_error")
        if any(t == "" for t in inputs):
            return 400, _openai_error("'$.input' is invalid. Please check the API reference: "
                                      "https://platform.openai.com/docs/api-reference.", "invalid_request_error")
        counts = [self.count_tokens(t) for t in inputs]
        seen.tokens = sum(counts)
        if self.max_input_tokens is not None and max(counts) > self.max_input_tokens:
            return 400, _openai_error(
                f"This model's maximum context length is {self.max_input_tokens} tokens, however you "
                f"requested {max(counts)} tokens in your prompt; please reduce your prompt.", "invalid_request_error")
        with self._embed_lock:
            vecs = np.asarray(self.embedder.encode(inputs), dtype=np.float32)
        dims = body.get("dimensions")
        if dims is not None:
            if not isinstance(dims, int) or not 0 < dims <= vecs.shape[1]:
                return 400, _openai_error(f"dimensions must be 1 to {vecs.shape[1]}", "invalid_request_error")
            vecs = vecs[:, :dims]
            vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        as_b64 = self.base64_vectors or body.get("encoding_format") == "base64"
        data = [{"object": "embedding", "index": i,
                 "embedding": (base64.b64encode(v.astype("<f4").tobytes()).decode("ascii") if as_b64
                               else [float(x) for x in v])}
                for i, v in enumerate(vecs)]
        if self.reverse_order:
            data.reverse()
        out: dict[str, Any] = {"object": "list", "data": data, "model": model}
        if self.usage:
            out["usage"] = {"prompt_tokens": seen.tokens, "total_tokens": seen.tokens}
        return 200, out

    def rerank(self, body: dict[str, Any], seen: Seen) -> tuple[int, Any]:
        style = "cohere" if "documents" in body else "tei" if "texts" in body else None
        if self.rerank_style == "tei" and style != "tei":
            return 422, "Failed to deserialize the JSON body into the target type: missing field `texts` at line 1"
        if self.rerank_style == "cohere" and style != "cohere":
            return 400, {"object": "error", "message": "[{'type': 'missing', 'loc': ('body', 'documents'), "
                         "'msg': 'Field required'}]", "type": "BadRequestError", "param": None, "code": 400}
        if style is None:
            return 422, "Failed to deserialize the JSON body into the target type: missing field `texts`"
        if self.scorer is None:
            return 500, {"error": "no scorer configured"}
        query = body.get("query")
        texts = body.get("documents" if style == "cohere" else "texts")
        texts = [t.get("text", "") if isinstance(t, dict) else t for t in (texts or [])]
        if not isinstance(query, str) or not all(isinstance(t, str) for t in texts):
            return 400, {"error": "query must be a string and documents strings"}
        seen.model = body.get("model")
        seen.inputs = list(texts)
        seen.tokens = sum(self.count_tokens(query + " " + t) for t in texts)
        scores = [float(s) for s in self.scorer(query, texts)]
        order = sorted(range(len(texts)), key=lambda i: -scores[i])
        if style == "tei":
            return 200, [{"index": i, "score": scores[i]} | ({"text": texts[i]} if body.get("return_text") else {})
                         for i in order]
        top_n = body.get("top_n") or len(texts)
        results = [{"index": i, "relevance_score": scores[i]}
                   | ({"document": {"text": texts[i]}} if body.get("return_documents") else {})
                   for i in order[:top_n]]
        return 200, {"id": f"rerank-{uuid.uuid4().hex[:12]}", "model": seen.model, "results": results,
                     "usage": {"total_tokens": seen.tokens}}


def _openai_error(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Http

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  (the stdlib's name)
        pass  # tests read `seen`, not stderr

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        if isinstance(payload, (bytes, str)):
            data = payload.encode("utf-8") if isinstance(payload, str) else payload
            ctype = "text/plain; charset=utf-8"
        else:
            data = json.dumps(payload).encode("utf-8")
            ctype = "application/json"
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _auth(self, seen: Seen) -> str | None:
        """The key sent (None without), noting how it came."""
        bearer = self.headers.get("Authorization", "")
        if bearer.lower().startswith("bearer "):
            seen.auth = "bearer"
            return bearer[7:].strip()
        if self.headers.get("api-key") is not None:
            seen.auth = "api-key"
            return self.headers["api-key"].strip()
        return None

    def _refuse_key(self, sent: str | None) -> None:
        msg = (f"Incorrect API key provided: {sent}. You can find your API key at "
               "https://platform.openai.com/account/api-keys." if sent else
               "You didn't provide an API key. You need to provide your API key in an Authorization header.")
        self._send(401, _openai_error(msg, "invalid_request_error", "invalid_api_key"))

    def do_GET(self) -> None:  # noqa: N802  (the stdlib's name)
        owner = self.server.owner
        parts = urlsplit(self.path)
        seen = Seen("GET", parts.path, dict(parse_qsl(parts.query)), time.monotonic())
        owner._arrive(seen, post=False)
        try:
            sent = self._auth(seen)
            if owner.key is not None and sent != owner.key:
                seen.status = 401
                return self._refuse_key(sent)
            if parts.path.rstrip("/") in ("/v1/models", "/models"):
                seen.status = 200
                return self._send(200, {"object": "list", "data": [
                    {"id": m, "object": "model", "created": 0, "owned_by": "chunk-inspector-tests"}
                    for m in owner.models]})
            seen.status = 404
            self._send(404, {"error": {"message": f"no route {parts.path}", "type": "not_found"}})
        finally:
            owner._leave(seen, post=False)

    def do_POST(self) -> None:  # noqa: N802  (the stdlib's name)
        owner = self.server.owner
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        seen = Seen("POST", parts.path, dict(parse_qsl(parts.query)), time.monotonic())
        fault = owner._arrive(seen, post=True)
        try:
            sent = self._auth(seen)
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = None
            seen.body = body if isinstance(body, dict) else {}
            sent_inputs = seen.body.get("input", seen.body.get("documents", seen.body.get("texts")))
            seen.inputs = [sent_inputs] if isinstance(sent_inputs, str) else list(sent_inputs or [])
            if fault is not None:
                seen.fault = fault.kind
                if self._fault(fault, seen, sent):
                    return
            if owner.key is not None and sent != owner.key:
                seen.status = 401
                return self._refuse_key(sent)
            if not isinstance(body, dict):
                seen.status = 400
                return self._send(400, _openai_error("We could not parse the JSON body of your request.",
                                                     "invalid_request_error"))
            path = parts.path.rstrip("/")
            if path in ("/v1/embeddings", "/embeddings"):
                status, payload = owner.embeddings(body, seen)
            elif path in ("/rerank", "/v1/rerank"):
                status, payload = owner.rerank(body, seen)
            else:
                status, payload = 404, {"error": {"message": f"no route {parts.path}", "type": "not_found"}}
            seen.status = status
            self._send(status, payload)
        finally:
            owner._leave(seen, post=True)

    def _fault(self, fault: _Fault, seen: Seen, sent: str | None) -> bool:
        """Act out a fault; True when the request is answered (or dropped) by it."""
        kind = fault.kind
        if kind == "delay":
            if fault.hold is None:
                time.sleep(fault.seconds)
            else:
                # Not released in time: answered anyway (the test then sees too few at once).
                with contextlib.suppress(threading.BrokenBarrierError):
                    fault.hold.wait(fault.seconds)
            return False
        if kind == "drop":
            seen.status = 0
            self.close_connection = True
            self.connection.shutdown(2)  # closed without a status line: the client's read fails
            return True
        if kind == "401":
            seen.status = 401
            self._refuse_key(sent)
            return True
        if kind == "malformed":
            seen.status = 200
            self._send(200, "<html><body>502 Bad Gateway (nginx)</body></html>")
            return True
        headers: dict[str, str] = {}
        if fault.retry_after is not None:
            headers["Retry-After"] = str(fault.retry_after)
        if fault.retry_after_ms is not None:
            headers["retry-after-ms"] = str(fault.retry_after_ms)
        status = int(kind)
        message = ("Rate limit reached for requests. Please try again later." if status == 429
                   else "The server had an error while processing your request.")
        seen.status = status
        self._send(status, _openai_error(message, "requests" if status == 429 else "server_error"), headers)
        return True


def main(argv: Sequence[str] | None = None) -> int:
    """Serve the bundled MiniLM until interrupted; prints the URL on its first line."""
    import argparse
    import os
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--key", default=None)
    ap.add_argument("--lifetime", type=float, default=3600.0)
    args = ap.parse_args(argv)
    from inspector.core.embedding.embedder import MiniLMEmbedder

    emb = MiniLMEmbedder()
    emb.load()
    server = OpenAIServer(emb, key=args.key, lifetime=args.lifetime).start()
    print(f"listening on {server.url}", flush=True)
    try:
        server.stopped.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
