"""A corpus chunked in the pool's processes (`ChunkStore.chunk_each`, `Offload.call_each`, issue
31): the same chunks, spans, counts and heading paths as chunked here, one document's failure
reported with that document, and cancellation."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.documents.document import load_paths
from inspector.core.runtime import offload
from inspector.core.runtime.cancel import Cancelled, cancel_scope
from inspector.core.workbench.chunk_store import ChunkStore
from tests.core import offload_jobs as jobs
from tests.core.strategies_for_tests import any_text

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pool():
    p = offload.corpus_pool()
    yield p
    offload.shutdown_corpus_pool()


def _same(a, b) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x == y  # every field but meta: id, span, counts, heading path, prefix, flags, role ...
        assert dict(x.meta) == dict(y.meta)


def _both(folder: Path, strategy: str, params: dict | None):
    docs = load_paths([folder]).documents
    serial = dict((i, (c, e)) for i, c, e in ChunkStore().chunk_each(docs, strategy, params, parallel=False))
    parallel = dict((i, (c, e)) for i, c, e in ChunkStore().chunk_each(docs, strategy, params, parallel=True))
    return docs, serial, parallel


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(any_text, min_size=2, max_size=4),
       strategy=st.sampled_from(["fixed_tokens", "recursive", "markdown", "sentences"]))
def test_a_generated_folder_chunks_the_same_in_the_pool(pool, tmp_path_factory, texts, strategy):
    folder = tmp_path_factory.mktemp("corpus")
    for n, text in enumerate(texts):
        (folder / f"doc{n}.md").write_text(text, encoding="utf-8", errors="surrogatepass")
    docs, serial, parallel = _both(folder, strategy, None)
    assert set(serial) == set(parallel) == set(range(len(docs)))
    for i in serial:
        (a, ea), (b, eb) = serial[i], parallel[i]
        assert (ea is None) == (eb is None), (ea, eb)
        if ea is not None:
            assert type(ea) is type(eb) and str(ea) == str(eb)
        else:
            _same(a, b)


@pytest.mark.parametrize("strategy,params", [("fixed_tokens", {"size": 256, "overlap": 32}),
                                             ("recursive", None), ("markdown", None)])
def test_the_bundled_corpora_chunk_the_same_in_the_pool(pool, tmp_path, strategy, params):
    # The public pages and the sample handbook: real headings, tables and lists.
    pages = sorted((ROOT / "benchmarks" / "data" / "public").glob("*/*.md"))
    for src in [*pages, ROOT / "sample_docs" / "handbook.md"]:
        (tmp_path / src.name).write_bytes(src.read_bytes())
    docs, serial, parallel = _both(tmp_path, strategy, params)
    assert len(docs) >= 6
    for i in serial:
        assert serial[i][1] is None and parallel[i][1] is None
        _same(serial[i][0], parallel[i][0])
        assert any(c.heading_path for c in parallel[i][0])


def test_chunks_made_in_the_pool_are_remembered(pool, tmp_path):
    for n in range(3):
        (tmp_path / f"d{n}.md").write_text(f"# Title {n}\n\n" + "word " * 500, encoding="utf-8")
    docs = load_paths([tmp_path]).documents
    store = ChunkStore()
    calls = pool.calls
    first = {i: c for i, c, _e in store.chunk_each(docs, "fixed_tokens", {"size": 64}, parallel=True)}
    assert pool.calls == calls + 3
    again = {i: c for i, c, _e in store.chunk_each(docs, "fixed_tokens", {"size": 64}, parallel=True)}
    assert pool.calls == calls + 3  # nothing sent again
    assert all(again[i] is first[i] for i in first)
    assert store.chunk(docs[1], "fixed_tokens", {"size": 64}) is first[1]


def test_each_failure_comes_back_with_its_call_and_the_rest_still_run(pool):
    got = sorted(pool.call_each(jobs.add, [(1, 2), (1, "x"), (3, 4)]), key=lambda r: r[0])
    assert [(i, r) for i, r, _e in got] == [(0, 3), (1, None), (2, 7)]
    assert isinstance(got[1][2], TypeError) and got[0][2] is None and got[2][2] is None


def test_cancelling_stops_the_calls_and_leaves_the_pool_usable(pool):
    pool.call_each(jobs.pid, [()])  # a generator: nothing runs yet
    list(pool.call_each(jobs.pid, [(), ()]))  # started
    stop = threading.Event()
    seen = []
    with cancel_scope(stop.is_set), pytest.raises(Cancelled):
        for i, result, _exc in pool.call_each(jobs.spin, [(0.0,), (60.0,), (60.0,), (60.0,)]):
            seen.append((i, result))
            stop.set()
    assert seen == [(0, "finished")]  # the 60 s calls were stopped, not waited for
    assert sorted(r for _i, r, _e in pool.call_each(jobs.add, [(20, 22), (1, 1)])) == [2, 42]

