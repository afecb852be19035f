"""An embedding model behind an OpenAI-compatible `POST /embeddings` endpoint.

OpenAI itself, Azure OpenAI and gateways in front of it, Ollama, vLLM, Hugging Face TEI, LM Studio,
infinity and LiteLLM all answer the same request:

    POST {url}/embeddings   {"model": M, "input": [...], "encoding_format": "float"[, "dimensions": D]}
    ->  {"data": [{"index": i, "embedding": [...]}, ...], "usage": {"prompt_tokens": N, ...}}

**The URL rule.** `url` defaults to OpenAI's, https://api.openai.com/v1. A URL without a path gets
`/v1` (http://localhost:11434 is Ollama's http://localhost:11434/v1); a URL with a path is used as
given, so a gateway mounted elsewhere works (Azure: https://RES.openai.azure.com/openai/deployments/
NAME); a trailing `/embeddings` is dropped (users paste the whole endpoint). Without a scheme, a
host on this machine is http and any other https.

**The key** is read from the environment variable named by `key_env` each time a request is sent
(or given as `key=`, held in memory only: the window's field), and never appears in a repr, an
error, a log line, `info()` or a file (`inspector.core.embedding.endpoint` scrubs what servers
echo). OpenAI's API and hosts named "azure" need one: without it nothing is sent and the error
says which variable to set; elsewhere a key is optional. Azure takes it in an `api-key` header:
chosen by a host name containing "azure", or by `auth="api-key"` for a gateway on another name;
its `?api-version=` comes from the URL's query or `api_version=`.

**What the model reads.** Each input is counted with the model's tokenizer: cl100k_base (offline)
unless `tokenizer` says otherwise, which is the tokenizer of OpenAI's embedding models and an
estimate for others; `tokenizer="hf:FOLDER"` counts with the tokenizer.json of a local model
folder (the model a local server runs). An input longer than `max_tokens` (default: 8,191, OpenAI's
limit, with a tiktoken encoding; the folder's max_seq_length with "hf:"; give it for other models
counted with cl100k) is cut at the last token that fits before it is
sent: OpenAI rejects longer inputs and other servers cut or reject them, so cutting here makes
what the model reads known: `piece_spec` describes exactly that cut. Empty inputs are sent as one
space (OpenAI rejects empty strings; both are "no words" to a model).

**Requests.** Inputs go in requests of at most `batch_size` inputs (2,048 for OpenAI, 32 elsewhere:
TEI's default client batch limit) and `max_batch_tokens` tokens (300,000 for OpenAI, 65,536
elsewhere), `concurrency` requests in flight on a thread pool; 429 and 5xx answers, dropped
connections and timeouts are retried with backoff honouring Retry-After (see `endpoint`); the
current `inspector.core.runtime.cancel` scope is asked between requests. `progress(done, total, eta_s)`
reports texts done with an ETA from this call's measured pace. `tokens_used` sums the tokens the
endpoint billed (`usage.prompt_tokens`, else `total_tokens`); `unbilled_requests` counts answers
without usage.

**Vectors** come back in input order (answers carry `index`), float32, L2-normalized (OpenAI's are
already; Ollama's need not be), float lists or base64. `dim` is learned by one probe request the
first time a (URL, model, dimensions) is used and remembered in `endpoints.json` in the cache
folder (no key in it), so later sessions send nothing until there is work.

`model_id` is "openai:MODEL@URL" (+ "#dimensions=D"): vectors of the same model name from two
endpoints are never mixed in the cache.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from inspector.core.embedding.endpoint import (
    Endpoint,
    HttpStatusError,
    one_line,
    run_bounded,
    split_url,
)
from inspector.core.errors import InputError
from inspector.core.runtime.cancel import current as _current_cancel

log = logging.getLogger(__name__)

OPENAI_URL = "https://api.openai.com/v1"
OPENAI_HOST = "api.openai.com"
OPENAI_MAX_TOKENS = 8191
"""What OpenAI's embedding models read per input (text-embedding-3-*, ada-002)."""
MAX_INPUTS = 2048
"""OpenAI's limit on inputs per request."""
OPENAI_BATCH_TOKENS = 300_000
"""OpenAI's limit on the tokens of one request (all inputs together)."""
LOCAL_BATCH_INPUTS = 32
"""Inputs per request elsewhere: TEI's default --max-client-batch-size (it refuses more)."""
LOCAL_BATCH_TOKENS = 65_536
DEFAULT_TOKENIZER = "cl100k_base"
PROBE_TEXT = "dimension probe"
DIMS_FILE = "endpoints.json"
"""Vector sizes learned by probing, per URL, model and dimensions (in the cache folder)."""

ProgressFn = Callable[[int, int, "float | None"], None]

_TOO_LONG = re.compile(r"context length|too long|maximum.{0,40}tokens|must have less than|exceed", re.I)
_NO_MODEL = re.compile(r"model.{0,80}(not found|does not exist|unknown|not available|no such|not served|"
                       r"not loaded|not supported)|(unknown|invalid|no such) model", re.I)


def is_openai_model(model: str) -> bool:
    """OpenAI's embedding models (cl100k_base, 8,191 tokens)."""
    m = model.lower()
    return m.startswith("text-embedding-") or m.endswith("ada-002")


# -- the tokenizer: how the model counts, and where an input is cut ------------------------------
class Pieces:
    """A tokenizer the remote model counts with: a tiktoken encoding ("cl100k_base") or a local
    tokenizer.json ("hf:FOLDER"). Counts here never include special tokens; `specials` says how
    many the model adds ([CLS] and [SEP]: 2 for BERT-like models, 0 for OpenAI's)."""

    def __init__(self, spec: str) -> None:
        spec = spec.strip()
        self._tk: Any = None
        self._enc: Any = None
        if spec.startswith("hf:"):
            path = Path(spec[3:]).expanduser()
            folder = path.parent if path.name == "tokenizer.json" else path
            file = folder / "tokenizer.json"
            if not file.is_file():
                raise InputError(f"tokenizer {spec!r}: no tokenizer.json in {folder}")
            from tokenizers import Tokenizer

            tk = Tokenizer.from_file(str(file))
            tk.no_truncation()
            tk.no_padding()
            self._tk = tk
            self.kind, self.source = "hf", str(folder)
            self.name = f"hf:{folder}"
            self.specials = max(0, len(tk.encode("a", add_special_tokens=True).ids)
                                - len(tk.encode("a", add_special_tokens=False).ids))
        else:
            name = spec.removesuffix("_offline")
            if name == "cl100k_base":
                from inspector.core.text.tokens import encoding

                self._enc = encoding()  # the offline copy: tiktoken's own loader would download
            else:
                try:
                    import tiktoken

                    self._enc = tiktoken.get_encoding(name)
                except Exception as exc:  # noqa: BLE001  (unknown name, or a download that cannot happen)
                    raise InputError(f"tokenizer {spec!r} is not available here "
                                     f"(use cl100k_base or hf:FOLDER): {one_line(str(exc), 80)}") from None
            self.kind, self.source, self.name, self.specials = "tiktoken", name, name, 0

    def limit_from_folder(self) -> int | None:
        """What the model in an "hf:" folder reads, specials included (its sentence-transformers
        max_seq_length, else the tokenizer's model_max_length), None when neither says."""
        if self.kind != "hf":
            return None
        folder = Path(self.source)
        for name, key in (("sentence_bert_config.json", "max_seq_length"),
                          ("tokenizer_config.json", "model_max_length")):
            try:
                v = json.loads((folder / name).read_text(encoding="utf-8")).get(key)
            except (OSError, ValueError, AttributeError):
                continue
            if isinstance(v, (int, float)) and 0 < v < 1_000_000:
                return int(v)
        return None

    def count(self, text: str) -> int:
        if self._tk is not None:
            return len(self._tk.encode(text, add_special_tokens=False).ids)
        return len(self._enc.encode_ordinary(text))

    def counts(self, texts: Sequence[str]) -> list[int]:
        if self._tk is not None:  # one call, the tokenizer's threads, the GIL let go
            return [len(e.ids) for e in self._tk.encode_batch(list(texts), add_special_tokens=False)]
        return [len(self._enc.encode_ordinary(t)) for t in texts]

    def _cut_once(self, text: str, n: int) -> str:
        if n <= 0:
            return ""
        if self._tk is not None:
            enc = self._tk.encode(text, add_special_tokens=False)
            if len(enc.ids) <= n:
                return text
            return text[: enc.offsets[n - 1][1]]
        ids = self._enc.encode_ordinary(text)
        if len(ids) <= n:
            return text
        _decoded, starts = self._enc.decode_with_offsets(ids)
        return text[: min(int(starts[n]), len(text))]

    def cut(self, text: str, n: int) -> str:
        """The longest prefix of `text`, cut after a token, that counts at most `n` tokens. A cut
        inside a word may tokenize differently on its own, so the prefix is counted again and
        shortened until it fits."""
        out = self._cut_once(text, n)
        for _ in range(16):
            c = self.count(out)
            if c <= n:
                return out
            out = self._cut_once(out, n - (c - n))
        return ""


# -- vector sizes learned by probing, remembered across sessions --------------------------------
_DIMS_LOCK = threading.Lock()


def _dims_path() -> Path:
    from inspector.core.runtime.cachedir import default_cache_dir

    return default_cache_dir() / DIMS_FILE


def _read_dims() -> dict[str, Any]:
    try:
        data = json.loads(_dims_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def remembered_dim(key: str) -> int | None:
    """The vector size remembered for this endpoint key (None when never probed)."""
    with _DIMS_LOCK:
        rec = _read_dims().get(key)
    try:
        dim = int(rec["dim"]) if isinstance(rec, dict) else 0
    except (KeyError, TypeError, ValueError):
        return None
    return dim if dim > 0 else None


def remember_dim(key: str, dim: int | None) -> None:
    """Write (or with None drop) one endpoint's vector size; an unwritable folder is shrugged off."""
    from inspector.core.runtime.atomic import atomic_write_text

    with _DIMS_LOCK:
        data = _read_dims()
        if dim is None:
            if data.pop(key, None) is None:
                return
        else:
            data[key] = {"dim": int(dim), "probed_at": round(time.time())}
        try:
            atomic_write_text(_dims_path(), json.dumps(data, indent=1, sort_keys=True))
        except OSError as exc:
            log.info("endpoint sizes not saved: %s", exc)


# -- the embedder --------------------------------------------------------------------------------
class OpenAIEmbedder:
    """An embedding model served over HTTP by an OpenAI-compatible endpoint (module docstring).

    Nothing is sent on construction. `load()` learns `dim` (one probe request unless remembered);
    reading `dim` calls it. `encode(texts)` returns L2-normalized float32 rows in input order.
    """

    backend = "http"
    device = "remote"
    dtype = "float32"

    def __init__(self, model: str, url: str | None = None, key_env: str | None = "OPENAI_API_KEY",
                 tokenizer: str | None = None, max_tokens: int | None = None, dimensions: int | None = None,
                 *, key: str | None = None, batch_size: int | None = None, max_batch_tokens: int | None = None,
                 concurrency: int = 4, timeout: float = 60.0, max_retries: int = 6, auth: str | None = None,
                 api_version: str | None = None, progress: ProgressFn | None = None,
                 sleep: Callable[[float], None] | None = None) -> None:
        from inspector.core.embedding.throughput import Throughput

        model = (model or "").strip()
        if not model:
            raise InputError("openai: needs a model name (openai:text-embedding-3-small)")
        self.model = model
        parsed = split_url(url or OPENAI_URL, default_path="/v1", drop_suffixes=("/embeddings",))
        if api_version and not any(k == "api-version" for k, _ in parsed.query):
            parsed = dataclasses.replace(parsed, query=(*parsed.query, ("api-version", api_version)))
        azure = "azure" in parsed.host
        self.url = parsed.shown
        """The endpoint as shown (no credentials, no query): part of `model_id`."""
        if dimensions is not None and int(dimensions) < 1:
            raise InputError(f"dimensions must be a positive number, got {dimensions}")
        self.dimensions = int(dimensions) if dimensions is not None else None
        if batch_size is not None and not 1 <= int(batch_size) <= MAX_INPUTS:
            raise InputError(f"batch_size must be 1 to {MAX_INPUTS:,} inputs per request, got {batch_size}")
        if int(concurrency) < 1:
            raise InputError(f"concurrency must be at least 1, got {concurrency}")
        openai = parsed.host == OPENAI_HOST
        self.concurrency = int(concurrency)
        big = openai or azure  # OpenAI's own limits; a local server gets smaller requests
        self.request_inputs = int(batch_size or (MAX_INPUTS if big else LOCAL_BATCH_INPUTS))
        """Inputs per request at most."""
        self.max_batch_tokens = int(max_batch_tokens or (OPENAI_BATCH_TOKENS if big else LOCAL_BATCH_TOKENS))
        """Tokens per request at most (a single longer input goes alone)."""
        self.pieces = Pieces(tokenizer or DEFAULT_TOKENIZER)
        self.counts_estimated = tokenizer is None and not is_openai_model(model)
        """True when cl100k_base counts for a model that is not OpenAI's (give tokenizer="hf:...")."""
        limit = max_tokens or self.pieces.limit_from_folder() or (
            OPENAI_MAX_TOKENS if self.pieces.kind == "tiktoken" else None)
        if limit is None:
            raise InputError(f"cannot tell how many tokens the model of {self.pieces.name} reads: give max_tokens")
        if int(limit) <= self.pieces.specials:
            raise InputError(f"max_tokens must be more than {self.pieces.specials}, got {limit}")
        self.max_tokens = int(limit)
        """Tokens the model reads per input, specials included; longer inputs are cut to it."""
        self.key_env = key_env or None
        self._endpoint = Endpoint(parsed, key=key, key_env=self.key_env,
                                  auth=auth or ("api-key" if azure else "bearer"),
                                  key_required=openai or azure, timeout=timeout, max_retries=max_retries,
                                  connections=self.concurrency + 1, sleep=sleep)
        self.model_id = f"openai:{model}@{self.url}" + (f"#dimensions={self.dimensions}" if self.dimensions else "")
        self.progress = progress
        self.throughput = Throughput()
        self.tokens_used = 0
        """Tokens the endpoint billed (its usage figures), summed over every request."""
        self.unbilled_requests = 0
        """Requests answered without usage figures."""
        self._dim: int | None = None
        self._lock = threading.Lock()
        self._load_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self.model!r}, url={self.url!r}, key_env={self.key_env!r})"

    __str__ = __repr__

    # -- what it is ------------------------------------------------------------------------------
    @property
    def max_seq_length(self) -> int:
        """The Embedder protocol's name for `max_tokens`."""
        return self.max_tokens

    @property
    def batch_size(self) -> int:
        """Texts per `encode` call for `embed_texts`: one request's worth for every request in
        flight, so that a call keeps `concurrency` requests busy."""
        return self.request_inputs * self.concurrency

    @property
    def piece_spec(self) -> tuple[str, str, int, int]:
        """(kind, source, limit, specials): ("tiktoken", "cl100k_base", 8191, 0) or ("hf", folder,
        max_tokens, 2)."""
        return (self.pieces.kind, self.pieces.source, self.max_tokens, self.pieces.specials)

    @property
    def waits(self) -> list[tuple[str, float]]:
        """(why, seconds) of every wait before a retry (see `endpoint.Endpoint.waits`)."""
        return self._endpoint.waits

    @property
    def loaded(self) -> bool:
        return self._dim is not None

    @property
    def dim(self) -> int:
        """Vector size: remembered, else learned by a probe request (`load`)."""
        if self._dim is None:
            self.load()
        assert self._dim is not None
        return self._dim

    def describe(self) -> str:
        """One line for the status bar."""
        dims = f", {self._dim} dims" if self._dim else ""
        est = f", tokens estimated with {self.pieces.name}" if self.counts_estimated else ""
        return f"{self.model} at {self.url} over HTTP ({self.concurrency} in flight{dims}{est})"

    def info(self) -> dict[str, Any]:
        """The report's `embedder` object (no key, no query string)."""
        return {"spec": f"openai:{self.model}", "model_id": self.model_id, "dims": self._dim,
                "max_tokens": self.max_tokens, "tokenizer": self.pieces.name, "backend": "http"}

    def close(self) -> None:
        """Close the kept-alive connections (they reopen on the next request)."""
        self._endpoint.close()

    # -- loading: the vector size ----------------------------------------------------------------
    def _dims_key(self) -> str:
        return f"{self.url}|{self.model}|{self.dimensions or '-'}"

    def load(self) -> OpenAIEmbedder:
        """Learn `dim` (once; remembered across sessions). Raises InputError for a refused key,
        an unknown model or an unreachable host."""
        with self._load_lock:
            if self._dim is not None:
                return self
            dim = remembered_dim(self._dims_key())
            if dim is None:
                vecs = self._request([PROBE_TEXT], _current_cancel())
                dim = int(vecs.shape[1])
                if self.dimensions is not None and dim != self.dimensions:
                    raise InputError(f"{self.url} answered vectors of {dim} dimensions for model "
                                     f"{self.model!r}, {self.dimensions} were asked for")
                remember_dim(self._dims_key(), dim)
            self._dim = dim
            return self

    # -- embedding ---------------------------------------------------------------------------------
    def prepare(self, texts: Sequence[str]) -> tuple[list[str], list[int]]:
        """What is sent for `texts` (each cut to what the model reads; empty ones as a space) and
        the tokens of each, specials included."""
        budget = self.max_tokens - self.pieces.specials
        sent = [t if t.strip() else " " for t in texts]
        counts = self.pieces.counts(sent)
        for i, c in enumerate(counts):
            if c > budget:
                sent[i] = self.pieces.cut(sent[i], budget) or " "
                counts[i] = self.pieces.count(sent[i])
        return sent, [c + self.pieces.specials for c in counts]

    def batches(self, counts: Sequence[int]) -> list[tuple[int, int]]:
        """[start, end) ranges of consecutive inputs, each at most `request_inputs` inputs and
        `max_batch_tokens` tokens (an input longer than that goes alone)."""
        out: list[tuple[int, int]] = []
        start, tokens = 0, 0
        for i, c in enumerate(counts):
            if i > start and (i - start >= self.request_inputs or tokens + c > self.max_batch_tokens):
                out.append((start, i))
                start, tokens = i, 0
            tokens += c
        if start < len(counts):
            out.append((start, len(counts)))
        return out

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalized float32 row per text, in order. Checks the cancel scope between
        requests (Cancelled), reports `progress`; see the module docstring."""
        from inspector.core.embedding.throughput import Eta, cost_units

        texts = list(texts)
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        cancel = _current_cancel()
        dim = self.dim
        sent, counts = self.prepare(texts)
        ranges = self.batches(counts)
        out = np.empty((len(texts), dim), dtype=np.float32)
        total = len(texts)
        done = 0
        eta = Eta()
        eta.update(0, total)
        t0 = time.perf_counter()

        def job(a: int, b: int) -> Callable[[], np.ndarray]:
            return lambda: self._request(sent[a:b], cancel)

        def finished(i: int, vecs: np.ndarray) -> None:
            nonlocal done
            a, b = ranges[i]
            out[a:b] = vecs
            done += b - a
            if self.progress is not None:
                self.progress(done, total, eta.update(done, total))

        run_bounded([job(a, b) for a, b in ranges], self.concurrency, cancel=cancel, on_done=finished)
        self.throughput.record(cost_units(texts, self.max_tokens), time.perf_counter() - t0)
        return out

    def _request(self, inputs: list[str], cancel: Callable[[], bool] | None) -> np.ndarray:
        """One POST /embeddings: normalized float32 rows for `inputs`, in their order."""
        body: dict[str, Any] = {"model": self.model, "input": inputs, "encoding_format": "float"}
        if self.dimensions is not None:
            body["dimensions"] = self.dimensions
        try:
            payload = self._endpoint.request("POST", "/embeddings", body, what="an embeddings response",
                                             cancel=cancel)
        except HttpStatusError as exc:
            raise self._explain(exc) from None
        vecs, tokens = self._parse(payload, len(inputs))
        with self._lock:
            if tokens is None:
                self.unbilled_requests += 1
            else:
                self.tokens_used += tokens
        return vecs

    def _parse(self, payload: Any, n: int) -> tuple[np.ndarray, int | None]:
        def bad(why: str) -> InputError:
            return self._endpoint.malformed(why, "an embeddings response")

        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise bad(json.dumps(payload)[:200])
        if len(data) != n:
            raise bad(f"{len(data)} vectors for {n} inputs")
        rows: list[tuple[int, np.ndarray]] = []
        for pos, item in enumerate(data):
            emb = item.get("embedding") if isinstance(item, dict) else None
            idx = item.get("index", pos) if isinstance(item, dict) else pos
            if isinstance(emb, str):
                try:
                    vec = np.frombuffer(base64.b64decode(emb, validate=True), dtype="<f4")
                except ValueError:
                    raise bad(f"a base64 vector that does not decode: {emb[:40]}") from None
            elif isinstance(emb, list) and emb and all(isinstance(x, (int, float)) for x in emb):
                vec = np.asarray(emb, dtype=np.float32)
            else:
                raise bad(json.dumps(item)[:200])
            if not isinstance(idx, int):
                raise bad(f"index {idx!r}")
            rows.append((idx, vec))
        rows.sort(key=lambda r: r[0])
        if [r[0] for r in rows] != list(range(n)):
            raise bad(f"indexes {sorted(r[0] for r in rows)[:8]} for {n} inputs")
        sizes = {len(r[1]) for r in rows}
        if len(sizes) != 1:
            raise bad(f"vectors of different lengths {sorted(sizes)}")
        mat = np.stack([r[1] for r in rows]).astype(np.float32, copy=False)
        if not np.isfinite(mat).all():
            raise bad("vectors holding NaN or infinity")
        if self._dim is not None and mat.shape[1] != self._dim:
            remember_dim(self._dims_key(), None)  # the model behind the URL changed: probe next time
            raise InputError(f"{self.url} answered vectors of {mat.shape[1]} dimensions for model "
                             f"{self.model!r}, {self._dim} before: the model behind it changed")
        norms = np.linalg.norm(mat, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        mat = np.ascontiguousarray(mat / norms, dtype=np.float32)
        usage = payload.get("usage")
        tokens = None
        if isinstance(usage, dict):
            v = usage.get("prompt_tokens", usage.get("total_tokens"))
            tokens = int(v) if isinstance(v, (int, float)) else None
        return mat, tokens

    def _explain(self, exc: HttpStatusError) -> InputError:
        """The error a user reads for a refused request: an unknown model named as such."""
        status, msg = exc.status, exc.server_message
        if status == 404 or (status in (400, 422) and _NO_MODEL.search(msg) and not _TOO_LONG.search(msg)):
            served = self._served_models()
            also = f"; it serves {', '.join(served[:8])}" if served else ""
            return InputError(f"model {self.model!r} is not served at {self.url} ({status}: {msg}{also})")
        if status == 413 or (status in (400, 422) and _TOO_LONG.search(msg)):
            return InputError(f"{exc.one_line()} (an input is longer than the model reads: "
                              f"set max_tokens, now {self.max_tokens:,})")
        return exc

    def _served_models(self) -> list[str]:
        """Model names GET /models lists ([] when the endpoint does not say)."""
        try:
            data = self._endpoint.request("GET", "/models", what="a model list")
        except InputError:
            return []
        items = data.get("data") if isinstance(data, dict) else None
        if not isinstance(items, list):
            return []
        return [str(m["id"]) for m in items if isinstance(m, dict) and m.get("id")]


__all__ = ["OpenAIEmbedder", "Pieces", "is_openai_model", "remembered_dim", "remember_dim",
           "OPENAI_URL", "OPENAI_MAX_TOKENS", "MAX_INPUTS"]
