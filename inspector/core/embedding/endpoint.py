"""Calling an HTTP endpoint that answers JSON: the plumbing the remote embedder and the HTTP
reranker share (`inspector.core.embedding.remote`, `inspector.core.retrieval.rerank_http`).

What it does for them, once:

* **Retries.** 429, 500, 502, 503 and 504, dropped connections, read errors and timeouts are
  retried up to `max_retries` times with exponential backoff and jitter (0.5 s, 1 s, 2 s, ... at
  most 30 s, each drawn between half and all of that, so that clients rate-limited together do not
  come back together). A `Retry-After` header (seconds or an HTTP date) or OpenAI's
  `retry-after-ms` is honoured instead: the wait is exactly what the server asked for. A server
  asking for more than `max_wait` seconds (a daily quota spent) is an error, not a hang. A refused
  connection or an unknown host is retried twice only: a wrong URL should fail in about a second,
  a restarting server still gets its chance.
* **Cancellation.** Waits between tries are cut short when the caller's cancel callable says so
  (`Cancelled`); `run_bounded` checks it between requests.
* **Bounded concurrency.** `run_bounded` keeps at most N requests in flight on a thread pool and
  hands each result to the calling thread in completion order (progress callbacks run there).
* **Errors in one line.** Everything a user can cause (a refused key, an unreachable host, a body
  that is not JSON) is an `InputError` whose one line names the endpoint and the problem, with the
  server's own message when it sent one.
* **The key stays secret.** It is read when a request is sent (from the environment variable
  named by `key_env`, or held in memory when given directly, as the window does), goes into one
  header, and is scrubbed from every message built from what the server answered (OpenAI's 401
  echoes part of it). The URL shown in messages and model ids has no user name, password or query
  string (gateways that take a key in the query keep it there).

httpx, not urllib: its `Client` keeps connections alive across requests and is safe to share
between the pool's threads (urllib opens a connection, and for https a TLS handshake, per request:
~100 ms each against a remote endpoint), and it separates connect and read timeouts.
"""

from __future__ import annotations

import email.utils
import json
import logging
import os
import random
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from inspector.core.errors import InputError
from inspector.core.runtime.cancel import Cancelled

log = logging.getLogger(__name__)

T = TypeVar("T")

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
"""Answers worth asking again: rate limits and a server (or its gateway) in trouble."""
BACKOFF_S = 0.5
"""First wait without a Retry-After; doubled at each try."""
MAX_BACKOFF_S = 30.0
MAX_WAIT_S = 120.0
"""Longest Retry-After honoured; a server asking for more gets an error instead of a hang."""
CONNECT_RETRIES = 2
"""Tries again after a refused connection or an unknown host (a wrong URL fails fast)."""
EXCERPT = 160
"""Characters of a server's answer quoted in an error."""
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0", "host.docker.internal"})

_MASKED = re.compile(r"\S*\*{3,}\S*")  # OpenAI's 401 shows the key as sk-abc*****wxyz
_SK = re.compile(r"\b(sk|rk|pk)-[A-Za-z0-9_\-]{8,}")
_SPACE = re.compile(r"\s+")


class HttpStatusError(InputError):
    """The endpoint answered with a status that is not retried (or ran out of tries)."""

    def __init__(self, problem: str, *, status: int, server_message: str) -> None:
        self.status = status
        self.server_message = server_message
        super().__init__(problem)


def one_line(text: str, limit: int = EXCERPT) -> str:
    """`text` with its whitespace collapsed, cut to `limit` characters."""
    text = _SPACE.sub(" ", str(text)).strip()
    return text if len(text) <= limit else text[:limit - 1] + "…"


def is_local(host: str) -> bool:
    """True for this machine (the key is optional there)."""
    h = host.lower().strip("[]")
    return h in LOCAL_HOSTS or h.startswith("127.") or h.endswith(".localhost")


@dataclass(frozen=True, slots=True)
class Url:
    """A URL split into what is sent and what is shown."""

    base: str
    """scheme://[user:password@]host[:port]/path, no trailing slash: what requests go to."""
    shown: str
    """The same without user name, password, query or default port, host lower-cased: what
    messages and model ids name (it never holds a secret)."""
    host: str
    query: tuple[tuple[str, str], ...]
    """Query parameters sent with every request (`?api-version=...`)."""


def split_url(url: str, *, default_path: str = "", drop_suffixes: Sequence[str] = ()) -> Url:
    """Parse an endpoint URL: a missing scheme is http for this machine and https otherwise; a
    URL without a path gets `default_path`; one of `drop_suffixes` at the end of the path is
    removed (users paste the full endpoint, ".../v1/embeddings"). InputError when it is no URL."""
    raw = str(url).strip()
    if not raw:
        raise InputError("the endpoint URL is empty")
    if "://" not in raw:
        host_part = raw.split("/", 1)[0].split("@")[-1].rsplit(":", 1)[0]
        raw = ("http://" if is_local(host_part) else "https://") + raw
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"not an http(s) URL: {one_line(_strip_secrets(raw), 80)}")
    try:
        port = parts.port
    except ValueError as exc:
        raise InputError(f"not an http(s) URL: {one_line(_strip_secrets(raw), 80)} ({exc})") from None
    path = parts.path.rstrip("/")
    for suffix in drop_suffixes:
        if path.endswith(suffix):
            path = path[: -len(suffix)].rstrip("/")
            break
    if not path:
        path = default_path
    host = parts.hostname.lower()
    default_port = {"http": 80, "https": 443}[parts.scheme]
    netloc_shown = (f"[{host}]" if ":" in host else host) + (f":{port}" if port and port != default_port else "")
    base = urlunsplit((parts.scheme, parts.netloc, path, "", ""))
    shown = urlunsplit((parts.scheme, netloc_shown, path, "", ""))
    return Url(base=base, shown=shown, host=host, query=tuple(parse_qsl(parts.query, keep_blank_values=True)))


def _strip_secrets(url: str) -> str:
    """A URL without its user info and query (for messages about a URL that did not parse)."""
    url = re.sub(r"//[^/@]*@", "//", url)
    return url.split("?", 1)[0]


class _Secret:
    """A key held in memory: never shown by repr or str, never pickled."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "<key hidden>"

    __str__ = __repr__

    def __reduce__(self) -> Any:
        raise TypeError("an API key is not pickled")


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asks to wait: `retry-after-ms` (OpenAI's), else `Retry-After` as
    seconds or as an HTTP date (RFC 9110); None when it says nothing usable."""
    lower = {k.lower(): v for k, v in headers.items()}
    ms = lower.get("retry-after-ms")
    if ms is not None:
        try:
            v = float(ms) / 1000.0
            if v >= 0:
                return v
        except ValueError:
            pass
    ra = lower.get("retry-after")
    if ra is None:
        return None
    ra = ra.strip()
    try:
        v = float(ra)
        return v if v >= 0 else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(ra)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    now_dt = datetime.fromtimestamp(time.time() if now is None else now, tz=UTC)
    return max(0.0, (when - now_dt).total_seconds())


def server_message(text: str) -> str:
    """The human part of an error body: OpenAI's {"error": {"message"}}, TEI's and Ollama's
    {"error": "..."}, vLLM's {"message"}, FastAPI's {"detail"}, else the text itself."""
    try:
        data = json.loads(text)
    except ValueError:
        return one_line(text)
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict) and err.get("message"):
            return one_line(str(err["message"]))
        for key in ("error", "message", "detail"):
            if data.get(key):
                v = data[key]
                return one_line(v if isinstance(v, str) else json.dumps(v))
    return one_line(text)


class Endpoint:
    """One HTTP(S) endpoint called with JSON: headers, key, retries, timeouts, errors.

    `url` is parsed by `split_url` (the caller decides its default path). `auth`: "bearer"
    (`Authorization: Bearer KEY`) or "api-key" (Azure's `api-key: KEY` header). `key_required`:
    a missing key is an error before anything is sent (OpenAI's own API), else requests go without
    one (servers on this machine rarely want one). `sleep(seconds)` replaces the cancellable wait
    between tries (tests record the waits instead of spending them).
    """

    def __init__(self, url: Url, *, key: str | None = None, key_env: str | None = None,
                 auth: str = "bearer", key_required: bool = False, timeout: float = 60.0,
                 max_retries: int = 6, connections: int = 8, max_wait: float = MAX_WAIT_S,
                 sleep: Callable[[float], None] | None = None, rng: random.Random | None = None) -> None:
        if auth not in ("bearer", "api-key"):
            raise InputError(f"unknown auth {auth!r} (use bearer or api-key)")
        if timeout <= 0:
            raise InputError(f"the timeout must be positive, got {timeout}")
        if max_retries < 0:
            raise InputError(f"max_retries must be 0 or more, got {max_retries}")
        self.url = url
        self.key_env = key_env
        self._key = _Secret(key) if key else None
        self.auth = auth
        self.key_required = key_required
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.max_wait = float(max_wait)
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._connections = max(1, int(connections))
        self._client: Any = None
        self._lock = threading.Lock()
        self.waits: list[tuple[str, float]] = []
        """(why, seconds) of every wait before a retry, in order (what the logs say too)."""
        self.requests = 0
        """Requests sent (tries included)."""

    def __repr__(self) -> str:
        return f"Endpoint({self.url.shown!r}, key_env={self.key_env!r}, auth={self.auth!r})"

    # -- the key ---------------------------------------------------------------------------------
    def _key_value(self) -> str | None:
        if self._key is not None:
            return self._key.reveal()
        if self.key_env:
            v = os.environ.get(self.key_env, "").strip()
            return v or None
        return None

    def _key_name(self) -> str:
        if self._key is not None:
            return "the key given"
        return f"the key in ${self.key_env}" if self.key_env else "no key"

    def scrub(self, text: str) -> str:
        """`text` without the key (whole or masked the way OpenAI echoes it)."""
        key = self._key_value()
        if key:
            text = text.replace(key, "[key hidden]")
        text = _MASKED.sub("[key hidden]", text)
        return _SK.sub("[key hidden]", text)

    def headers(self) -> dict[str, str]:
        """The request headers, the key's among them (built per request, never kept)."""
        h = {"Content-Type": "application/json", "Accept": "application/json",
             "User-Agent": "chunk-inspector"}
        key = self._key_value()
        if key is None:
            if self.key_required:
                where = (f"set the environment variable {self.key_env}" if self.key_env
                         else "give a key")
                raise InputError(f"{self.url.shown} needs an API key: {where} "
                                 "(it is read when a request is sent and never saved)")
            return h
        if self.auth == "api-key":
            h["api-key"] = key
        else:
            h["Authorization"] = f"Bearer {key}"
        return h

    # -- the connection --------------------------------------------------------------------------
    def client(self) -> Any:
        with self._lock:
            if self._client is None:
                import httpx

                self._client = httpx.Client(
                    timeout=httpx.Timeout(self.timeout, connect=min(self.timeout, 10.0)),
                    limits=httpx.Limits(max_connections=self._connections,
                                        max_keepalive_connections=self._connections),
                    follow_redirects=False,
                    # A proxy from the environment (a company's HTTP_PROXY) cannot reach this
                    # machine's Ollama or vLLM: requests to it go direct, NO_PROXY or not.
                    trust_env=not is_local(self.url.host))
            return self._client

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    # -- one call, with its retries --------------------------------------------------------------
    def _backoff(self, attempt: int) -> float:
        cap = min(MAX_BACKOFF_S, BACKOFF_S * (2 ** attempt))
        return cap * (0.5 + 0.5 * self._rng.random())

    def _wait(self, seconds: float, why: str, cancel: Callable[[], bool] | None) -> None:
        self.waits.append((why, seconds))
        if self._sleep is not None:
            self._sleep(seconds)
        else:
            end = time.monotonic() + seconds
            while True:
                left = end - time.monotonic()
                if left <= 0:
                    break
                if cancel is not None and cancel():
                    raise Cancelled()
                time.sleep(min(left, 0.1))
        if cancel is not None and cancel():
            raise Cancelled()

    def request(self, method: str, path: str, body: Any = None, *, what: str = "a JSON answer",
                cancel: Callable[[], bool] | None = None) -> Any:
        """Send `body` as JSON to base URL + `path` and return the decoded answer, retrying what
        is worth retrying. Raises HttpStatusError for a status it gives up on, InputError for an
        unreachable host or an answer that is not JSON ("... is not `what`"), Cancelled."""
        import httpx

        url = self.url.base + path
        params = list(self.url.query)
        attempt = 0
        connect_fails = 0
        while True:
            if cancel is not None and cancel():
                raise Cancelled()
            headers = self.headers()
            with self._lock:
                self.requests += 1
            try:
                resp = self.client().request(method, url, params=params or None, headers=headers,
                                             content=None if body is None else json.dumps(body))
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                connect_fails += 1
                if connect_fails > min(CONNECT_RETRIES, self.max_retries):
                    raise InputError(f"cannot reach {self.url.shown}: {self._reason(exc)}") from None
                self._retry_wait(attempt, f"cannot connect ({type(exc).__name__})", None, cancel)
                attempt += 1
                continue
            except httpx.TimeoutException:
                if attempt >= self.max_retries:
                    raise InputError(f"{self.url.shown} did not answer within {self.timeout:g} s "
                                     f"({attempt + 1} tries)") from None
                self._retry_wait(attempt, "timed out", None, cancel)
                attempt += 1
                continue
            except httpx.TransportError as exc:  # dropped connection, broken answer
                if attempt >= self.max_retries:
                    raise InputError(f"cannot reach {self.url.shown}: {self._reason(exc)}") from None
                self._retry_wait(attempt, f"connection lost ({type(exc).__name__})", None, cancel)
                attempt += 1
                continue
            status = resp.status_code
            if status in RETRY_STATUSES and attempt < self.max_retries:
                self._retry_wait(attempt, f"answered {status}", resp, cancel)
                attempt += 1
                continue
            if status >= 400:
                raise self.status_error(status, resp.text, tries=attempt + 1)
            try:
                return resp.json()
            except ValueError:
                raise self.malformed(resp.text, what) from None

    def _reason(self, exc: Exception) -> str:
        return self.scrub(one_line(str(exc) or type(exc).__name__))

    def _retry_wait(self, attempt: int, why: str, resp: Any, cancel: Callable[[], bool] | None) -> None:
        asked = retry_after_seconds(resp.headers) if resp is not None else None
        if asked is not None and asked > self.max_wait:
            msg = self.scrub(server_message(resp.text))
            raise HttpStatusError(f"{self.url.shown} asks to wait {asked:,.0f} s before the next request "
                                  f"({resp.status_code}): {msg}", status=resp.status_code, server_message=msg)
        seconds = asked if asked is not None else self._backoff(attempt)
        log.info("%s %s; try %d of %d in %.2f s%s", self.url.shown, why, attempt + 2, self.max_retries + 1,
                 seconds, " (as asked by Retry-After)" if asked is not None else "")
        self._wait(seconds, why, cancel)

    def status_error(self, status: int, text: str, *, tries: int = 1) -> HttpStatusError:
        """The one-line error for an answer with this status."""
        msg = self.scrub(server_message(text))
        if status in (401, 403):
            if self._key_value() is None:
                hint = f"; set ${self.key_env}" if self.key_env else ""
                problem = f"the endpoint {self.url.shown} wants a key ({status}): {msg}{hint}"
            else:
                problem = f"the endpoint {self.url.shown} refused {self._key_name()} ({status}): {msg}"
        elif status in RETRY_STATUSES:
            problem = f"{self.url.shown} answered {status} {tries} times: {msg}"
        else:
            problem = f"{self.url.shown} refused the request ({status}): {msg}"
        return HttpStatusError(problem, status=status, server_message=msg)

    def malformed(self, text: str, what: str) -> InputError:
        """'URL answered with something that is not WHAT: <excerpt>'."""
        excerpt = self.scrub(one_line(text, 80)) or "an empty body"
        return InputError(f"{self.url.shown} answered with something that is not {what}: {excerpt}")


def run_bounded(jobs: Sequence[Callable[[], T]], concurrency: int, *,
                cancel: Callable[[], bool] | None = None,
                on_done: Callable[[int, T], None] | None = None) -> list[T]:
    """Run `jobs` with at most `concurrency` in flight and return their results in job order.

    `on_done(i, result)` runs on the calling thread as each job finishes. Between finishing one
    and starting the next, `cancel()` is asked: True raises Cancelled; jobs still in flight are
    abandoned (their threads finish on their own, their results are dropped). The first job to
    raise stops the rest the same way and its error is raised."""
    n = len(jobs)
    results: list[Any] = [None] * n
    if n == 0:
        return results
    if concurrency <= 1 or n == 1:
        for i, job in enumerate(jobs):
            if cancel is not None and cancel():
                raise Cancelled()
            results[i] = job()
            if on_done is not None:
                on_done(i, results[i])
        return results
    pool = ThreadPoolExecutor(max_workers=min(concurrency, n), thread_name_prefix="endpoint")
    running: dict[Future[Any], int] = {}
    nxt = 0
    try:
        while nxt < n and len(running) < concurrency:
            if cancel is not None and cancel():
                raise Cancelled()
            running[pool.submit(jobs[nxt])] = nxt
            nxt += 1
        while running:
            done, _ = wait(list(running), return_when=FIRST_COMPLETED)
            for fut in done:
                i = running.pop(fut)
                results[i] = fut.result()
                if on_done is not None:
                    on_done(i, results[i])
            while nxt < n and len(running) < concurrency:
                if cancel is not None and cancel():
                    raise Cancelled()
                running[pool.submit(jobs[nxt])] = nxt
                nxt += 1
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return results


__all__ = ["Endpoint", "HttpStatusError", "Url", "split_url", "run_bounded", "retry_after_seconds",
           "server_message", "one_line", "is_local", "RETRY_STATUSES"]
