"""Shared caches hammered from several threads give the same results as one thread.

The window's runners (chunking, retrieval, pooled vectors, sweeps, corpus counts) call the core at
once; every memo they reach is the core's locked LRU (`inspector.core.runtime.lru.SizedLRU`), sized small
here so that evictions race with lookups too."""

from __future__ import annotations

import random
import threading

import pytest

from inspector.core.chunking.annotate import annotate
from inspector.core.documents.document import from_text
from inspector.core.evaluation.gold import GoldQuestion, normalized_text
from inspector.core.runtime.lru import SizedLRU
from inspector.core.text.structure import structure_of
from inspector.core.text.tokens import token_index
from inspector.core.workbench import Workbench
from tests.core.embedders_for_tests import run_threads

DOCS = [from_text(f"# Doc {i}\n\n" + "".join(f"## Part {j}\n\nLeave rule {i}.{j} applies for {j + 3} weeks. "
                                                  f"Details follow here.\n\n| a | b |\n|---|---|\n| {i} | {j} |\n\n"
                                                  for j in range(12)), f"d{i}.md") for i in range(6)]


def _work(doc, wb: Workbench) -> tuple:
    chunks = wb.chunk(doc, "markdown", {"size": 64, "hard_cap": 128})
    return (
        normalized_text(doc).text[:200],
        len(token_index(doc)),
        len(structure_of(doc).headings),
        tuple((c.start, c.end, c.token_count) for c in chunks),
        tuple(c.embed_tokens for c in annotate(doc, chunks)),
        tuple(h.chunk.key for h in wb.ask(f"How many weeks for rule {doc.doc_id}?",
                                          _bm25(), docs=[doc.doc_id])),
    )


def _bm25():
    from inspector.core.evaluation.config import EvalConfig

    return EvalConfig("markdown", {"size": 64, "hard_cap": 128}, 3, "bm25")


def test_caches_hammered_from_threads_agree_with_one_thread():
    expected = {d.doc_id: _work(d, Workbench(DOCS)) for d in DOCS}
    wb = Workbench(DOCS)
    wb.chunk_store._cache = SizedLRU(2, 10_000)  # evictions race with lookups
    got: dict[str, list[tuple]] = {d.doc_id: [] for d in DOCS}
    errors: list[BaseException] = []

    def run(seed: int) -> None:
        rng = random.Random(seed)
        try:
            for _ in range(12):
                doc = rng.choice(DOCS)
                got[doc.doc_id].append(_work(doc, wb))
        except BaseException as exc:  # noqa: BLE001  (reported below)
            errors.append(exc)

    run_threads(run)
    assert not errors, errors
    assert sum(len(v) for v in got.values()) == 72
    for doc_id, results in got.items():
        assert all(r == expected[doc_id] for r in results)


def test_sized_lru_under_threads_stays_bounded_and_consistent():
    lru: SizedLRU[int] = SizedLRU(8, 100)
    errors: list[BaseException] = []

    def run(seed: int) -> None:
        rng = random.Random(seed)
        try:
            for _ in range(2000):
                k = rng.randrange(20)
                v = lru.get_or_make(k, lambda k=k: k * k, rng.randrange(1, 30))
                assert v == k * k
                hit = lru.lookup(rng.randrange(20))
                assert hit is None or isinstance(hit, int)
                lru.put(rng.randrange(20, 40), 0, 5)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert len(lru) <= 8 and (len(lru) == 1 or lru.total_size() <= 100)


@pytest.mark.parametrize("question", [GoldQuestion("rule d1.md", ("Leave rule 1.3",))])
def test_workbench_evaluates_the_same_from_threads(question):
    wb = Workbench(DOCS, [question])
    one = wb.evaluate(_bm25()).hit_rate
    out: list[float] = []
    threads = [threading.Thread(target=lambda: out.append(wb.evaluate(_bm25()).hit_rate)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert out == [one] * 4


def test_a_chunk_tuples_fingerprint_is_kept_and_told_apart():
    from dataclasses import replace

    from inspector.core.chunking.chunk import Chunk
    from inspector.core.workbench.chunk_store import _FINGERPRINTS, chunks_fingerprint

    a = tuple(Chunk(i, i * 10, i * 10 + 10, 3) for i in range(100))
    fp = chunks_fingerprint(a)
    assert _FINGERPRINTS.lookup(id(a))[1] == fp and chunks_fingerprint(a) == fp
    b = a[:50] + (replace(a[50], end=a[50].end + 1),) + a[51:]
    assert chunks_fingerprint(b) != fp
    assert chunks_fingerprint(list(a)) == fp  # lists are hashed each time, to the same value
    assert chunks_fingerprint(tuple(list(a))) == fp
