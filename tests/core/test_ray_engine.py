"""`--engine ray`: the same reports as the local engine, one-line errors, and a cache left whole
by a cancel or a Ctrl-C. One local two-worker cluster serves every test here (Ray starts slowly)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from inspector.cli import main
from inspector.core.embedding.cache import EmbeddingCache, text_key
from inspector.core.embedding.embedder import HashEmbedder, cache_namespace
from inspector.core.evaluation.config import EvalConfig
from inspector.core.runtime.cancel import Cancelled
from inspector.core.workbench import Workbench

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "gold"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ray_cluster():
    """One local cluster of two CPUs for this module, shut down at its end (not the session's:
    its processes would sit beside every later test on a small machine)."""
    from inspector.core.distributed import start_local

    session = start_local(2)
    yield session
    session.close()


def run_json(capsys, *argv: str) -> dict:
    code = main(list(argv) + ["--format", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def both_engines(capsys, *argv: str) -> tuple[dict, dict, str]:
    local = run_json(capsys, *argv)
    code = main(list(argv) + ["--format", "json", "--engine", "ray", "--workers", "2"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return local, json.loads(out.out), out.err


# -- same results -----------------------------------------------------------------------------------

@pytest.mark.parametrize("retriever", ["bm25", "dense"])
def test_eval_same_report_as_local(ray_cluster, capsys, corpus, gold, retriever):
    local, ray_, err = both_engines(capsys, "eval", str(corpus), "--gold", str(gold), "--strategy", "recursive",
                                    "--size", "48", "--k", "2", "--retriever", retriever, "--embedder", "hash")
    assert ray_ == local
    assert local["questions"]  # the gold set was scored, not an empty report twice
    assert "ray: chunking 2/2 documents" in err and "ray: evaluating 1/1 configurations" in err
    if retriever == "dense":
        assert "texts" in err  # the embedding stage reported its counts


def test_eval_with_the_model_same_report_as_local(ray_cluster, capsys, corpus, gold):
    """The bundled model, each engine on a cold embedding cache: the actors' vectors score as
    the local process's."""
    from inspector.core.embedding.cache import default_cache
    from inspector.core.embedding.embedder import default_embedder

    argv = ["eval", str(corpus), "--gold", str(gold), "--strategy", "recursive", "--size", "64", "--k", "2",
            "--retriever", "dense", "--device", "cpu"]
    namespace = cache_namespace(default_embedder())
    default_cache().clear(namespace)
    local = run_json(capsys, *argv)
    default_cache().clear(namespace)
    code = main(argv + ["--format", "json", "--engine", "ray", "--workers", "1"])  # one model load
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "ray: embedding" in out.err  # the actors embedded: nothing was cached
    assert json.loads(out.out) == local


def test_sweep_same_rows_and_recommendation_as_local(ray_cluster, capsys, corpus, gold):
    """Pooled rows (piece tables built on the actors), two confirmed exactly, and the
    cross-validated recommendation: all as the local engine's. Each engine starts without stored
    piece tables, so the actors build theirs rather than reading the local engine's (nor the local
    engine an earlier test's, kept in memory)."""
    from inspector.core.retrieval import pooled
    from inspector.core.runtime.cachedir import default_cache_dir

    pooled._POOLED.clear()

    argv = ["sweep", str(corpus), "--gold", str(gold), "--strategies", "recursive,fixed_tokens",
            "--sizes", "32,64", "--ks", "1,3", "--retriever", "hybrid", "--embedding", "pooled",
            "--confirm", "2", "--against", "markdown", "--embedder", "hash", "--format", "json"]
    tables = default_cache_dir() / "pooled"
    shutil.rmtree(tables, ignore_errors=True)
    local = run_json(capsys, *argv[:-2])
    assert any(tables.rglob("*.npz"))  # the local engine stored its tables ...
    shutil.rmtree(tables)  # ... and the Ray engine does not get to read them
    code = main(argv + ["--engine", "ray", "--workers", "2"])
    out = capsys.readouterr()
    assert code == 0, out.err
    ray_, err = json.loads(out.out), out.err
    assert len(list(tables.rglob("*.npz"))) == 2  # built on the actors, stored by the driver
    assert ray_ == local
    assert len(local["rows"]) >= 8 and local["recommendation"] is not None
    assert sum(1 for r in local["rows"] if r.get("exact")) == 2
    assert "ray: pieces 2/2 documents" in err


def test_a_worker_death_is_reported_on_stderr_not_in_the_report(ray_cluster, capsys, monkeypatch):
    """A worker that dies mid-task makes Ray's driver print "(raylet) A worker died or was killed
    ..." from a thread of its own. On stdout, that broke a `--format json` sweep's report in CI;
    it belongs on stderr. A real worker dies here (os._exit in a task), and the message, which
    arrives when Ray delivers it, is awaited (a signal set once Ray's printer has printed it) and
    looked for on stderr."""
    import threading

    ray = ray_cluster.ray
    printer = ray._private.worker.print_to_stdstream  # the engine's hook, which delegates to Ray's
    printed = threading.Event()

    def noting(data, *args, **kwargs):
        printer(data, *args, **kwargs)
        if any("worker died" in line.lower() for line in data.get("lines", ())):
            printed.set()

    monkeypatch.setattr(ray._private.worker, "print_to_stdstream", noting)

    @ray.remote(max_retries=0)
    def die() -> None:
        os._exit(1)

    capsys.readouterr()
    with pytest.raises(ray.exceptions.WorkerCrashedError):
        ray.get(die.remote(), timeout=60)
    assert printed.wait(60), "Ray printed no message about the worker's death"
    got = capsys.readouterr()
    out, err = got.out, got.err
    assert "worker died" in err.lower(), (out, err)
    assert "raylet" not in out and "worker died" not in out.lower(), out
    # Only the cluster's messages move: a worker's own printed line, through the same printer
    # (as `log_to_driver=True` would send it), stays on stdout.
    ray._private.worker.print_to_stdstream({"lines": ["a worker's print"], "pid": 4242, "ip": "127.0.0.1",
                                            "is_err": False}, ignore_prefix=False)
    got = capsys.readouterr()
    assert "a worker's print" in got.out and "a worker's print" not in got.err


def test_sweep_over_two_models_same_as_local(ray_cluster, capsys, two_layer_model, corpus, gold):
    """`sweep --embedders` on the Ray engine: each model's grid is embedded by that model on the
    actors (a sentence-transformers folder travels as itself), so both tables, each model's best
    and the verdict on whether the best changes are the local engine's."""
    argv = ["sweep", str(corpus), "--gold", str(gold), "--strategies", "recursive,fixed_tokens",
            "--sizes", "32,64", "--ks", "1,3", "--embedders", f"hash,st:{two_layer_model}", "--device", "cpu"]
    local, ray_, err = both_engines(capsys, *argv)
    assert [m["embedder"]["spec"] for m in local["models"]] == ["hash", f"st:{two_layer_model}"]
    # The two models rank differently here, so a Ray run that embedded with one model twice
    # could not give the local report.
    assert local["models"][0]["rows"] != local["models"][1]["rows"]
    assert ray_ == local
    assert "ray: chunking" in err and "ray: evaluating" in err


def test_compare_bm25_same_as_local(ray_cluster, capsys, corpus, gold):
    local, ray_, err = both_engines(capsys, "compare", str(corpus), "--gold", str(gold), "--strategy",
                                    "paragraph", "--against", "fixed_chars:120:0", "--retriever", "bm25")
    assert ray_ == local
    assert "ray: evaluating 2/2 configurations" in err  # A and B, each a task


def test_rerun_answered_from_the_cache_by_either_engine(ray_cluster, tmp_path, corpus, gold):
    """The vectors the Ray workers computed are in the driver's cache folder: a local run and a
    second Ray run, each with a fresh cache object on that folder, embed nothing."""
    from inspector.core.distributed import RayEngine

    config = EvalConfig("fixed_tokens", {"size": 40, "overlap": 8}, 3, "dense")

    def workbench(embedder) -> Workbench:
        wb = Workbench(embedder=embedder, cache=EmbeddingCache(tmp_path / "cache"))
        wb.open([corpus])
        wb.load_gold(gold)
        return wb

    engine = RayEngine(workbench(HashEmbedder()), session=ray_cluster)
    first = engine.evaluate(config)
    assert engine.counts["embedded"] > 0

    calls: list[int] = []

    class Counting(HashEmbedder):
        def encode(self, texts):
            calls.append(len(texts))
            return super().encode(texts)

    local = workbench(Counting()).evaluate(config)
    assert calls == []  # chunks and questions alike came from the cache
    assert [q.rank for q in local.questions] == [q.rank for q in first.questions]
    assert (local.hit_rate, local.mrr) == (first.hit_rate, first.mrr)

    again = RayEngine(workbench(HashEmbedder()), session=ray_cluster)
    second = again.evaluate(config)
    assert again.counts.get("embedded", 0) == 0 and again.counts["cached"] > 0
    assert [q.rank for q in second.questions] == [q.rank for q in first.questions]


# -- Ray stays optional ------------------------------------------------------------------------------

def test_nothing_but_the_ray_engine_imports_ray():
    """Every module of the package (the core, the command line, the window) imports without Ray,
    and a command on the local engine runs without it: Ray loads only for `--engine ray`."""
    code = textwrap.dedent("""
        import importlib, pkgutil, sys
        import inspector
        for info in pkgutil.walk_packages(inspector.__path__, "inspector."):
            importlib.import_module(info.name)
        from inspector.cli import main
        assert main(["eval", sys.argv[1], "--gold", sys.argv[2], "--retriever", "bm25"]) == 0
        bad = sorted(m for m in sys.modules if m.split(".")[0] == "ray")
        assert not bad, bad[:5]
    """)
    proc = subprocess.run([sys.executable, "-c", code, str(DATA / "corpus"), str(DATA / "good.gold.jsonl")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"})
    assert proc.returncode == 0, proc.stderr[-3000:]


# -- errors -----------------------------------------------------------------------------------------

def test_missing_ray_is_one_line(monkeypatch, capsys, corpus, gold):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    monkeypatch.setitem(sys.modules, "ray.data", None)
    code = main(["eval", str(corpus), "--gold", str(gold), "--retriever", "bm25", "--engine", "ray"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1
    assert "needs Ray" in err and "pip install 'chunk-inspector[ray]'" in err


def test_unreachable_address_is_one_line(capsys, corpus, gold):
    code = main(["sweep", str(corpus), "--gold", str(gold), "--retriever", "bm25", "--strategies", "paragraph",
                 "--engine", "ray", "--address", "127.0.0.1:1"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.splitlines() == [err] and "cannot reach the Ray cluster at 127.0.0.1:1" in err


def test_address_needs_the_ray_engine(capsys, corpus, gold):
    code = main(["eval", str(corpus), "--gold", str(gold), "--retriever", "bm25", "--address", "127.0.0.1:1"])
    assert code == 2
    assert "--address and --workers need --engine ray" in capsys.readouterr().err


def test_ctrl_c_is_one_line_and_status_130(monkeypatch, capsys, corpus, gold):
    def interrupted(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(Workbench, "evaluate", interrupted)
    code = main(["eval", str(corpus), "--gold", str(gold), "--retriever", "bm25"])
    err = capsys.readouterr().err.strip()
    assert code == 130 and err.splitlines() == [err] and "cancelled" in err


# -- cancelling leaves the cache whole --------------------------------------------------------------

def _cache_records(folder: Path, embedder: HashEmbedder, texts: list[str]) -> tuple[EmbeddingCache, dict]:
    """A fresh cache on the folder (it verifies every record's CRC on load) and what it holds of
    these texts."""
    cache = EmbeddingCache(folder)
    found = cache.get_many(cache_namespace(embedder), [text_key(t) for t in texts], embedder.dim)
    return cache, found


def _corpus_texts(corpus: Path, config: EvalConfig) -> list[str]:
    wb = Workbench()
    wb.open([corpus])
    return sorted({c.embedded_text(d, with_prefix=bool(config.with_prefix))
                   for d in wb.documents for c in wb.chunks_for(config)[d.doc_id] if c.role != "parent"})


def _assert_whole(cache: EmbeddingCache, found: dict, texts: list[str], embedder: HashEmbedder) -> None:
    assert cache.damaged == 0
    by_key = {text_key(t): t for t in texts}
    for key, vec in found.items():
        np.testing.assert_array_equal(vec, embedder.encode_one(by_key[key]))


def test_cancel_mid_embedding_leaves_whole_records(ray_cluster, tmp_path, corpus, gold):
    from inspector.core.distributed import RayEngine

    config = EvalConfig("fixed_tokens", {"size": 8, "overlap": 0}, 3, "dense")
    emb = HashEmbedder()
    emb.batch_size = 2  # many small batches, so the cancel lands mid-stage
    wb = Workbench(embedder=emb, cache=EmbeddingCache(tmp_path / "cache"))
    wb.open([corpus])
    wb.load_gold(gold)
    seen: list[tuple[str, int]] = []
    engine = RayEngine(wb, session=ray_cluster, progress=lambda s, d, n: seen.append((s, d)),
                       cancel=lambda: any(s == "embedding" and d > 0 for s, d in seen))
    with pytest.raises(Cancelled):
        engine.evaluate(config)
    texts = _corpus_texts(corpus, config)
    cache, found = _cache_records(tmp_path / "cache", emb, texts)
    _assert_whole(cache, found, texts, emb)
    assert 0 < len(found) < len(texts)


def test_an_interrupted_run_leaves_no_ray_data_thread_behind(ray_cluster, tmp_path, corpus, gold):
    """Ctrl-C mid-embedding, with the traceback kept (as a driver's `except KeyboardInterrupt:` keeps
    it while it shuts Ray down): the engine closed its batch iterator, so the threaded iterator's
    workers end, and `settle_data_threads` stops the block prefetcher. A thread of either still
    calling into Ray after `ray.shutdown()` ended the driver with status 1 instead of 130."""
    import threading

    from inspector.core.distributed import RayEngine
    from inspector.core.distributed.cluster import settle_data_threads

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "embedding" and done > 0:
            raise KeyboardInterrupt  # where Ctrl-C lands: the driver's thread, between batches

    emb = HashEmbedder()
    emb.batch_size = 2
    wb = Workbench(embedder=emb, cache=EmbeddingCache(tmp_path / "cache"))
    wb.open([corpus])
    wb.load_gold(gold)
    engine = RayEngine(wb, session=ray_cluster, progress=progress)
    with pytest.raises(KeyboardInterrupt) as interrupted:
        engine.evaluate(EvalConfig("fixed_tokens", {"size": 8, "overlap": 0}, 3, "dense"))
    assert interrupted.tb is not None  # the frames (and the iteration's objects) are still held
    assert settle_data_threads(timeout=30) == []
    assert not [t.name for t in threading.enumerate() if t.name in ("Prefetcher", "iter_threaded")]


_SIGINT_SCRIPT = """
import os, sys, time
sys.path.insert(0, {root!r})
from inspector.core.distributed import RayEngine
from inspector.core.embedding.cache import EmbeddingCache
from inspector.core.embedding.embedder import HashEmbedder
from inspector.core.evaluation.config import EvalConfig
from inspector.core.workbench import Workbench

DRIVER, SEEN, GO_ON = os.getpid(), {seen!r}, {go_on!r}

# On the workers: once the driver has had a batch back (SEEN exists), no batch is embedded any
# more until GO_ON exists (made after the driver has exited) or HOLD_S have passed, so the Ctrl-C
# lands while embedding is unfinished, whatever the machine's speed. The hold is kept well under
# the test's wait for the driver's exit: a driver whose interrupt takes effect only once batches in
# flight come back waits out the hold (seen once under load: progress went on after the SIGINT,
# and a 60 s hold outlasted the test's 60 s wait).
HOLD_S = 15

class SlowHash(HashEmbedder):
    def encode(self, texts):
        if os.getpid() != DRIVER:
            time.sleep(0.02)
            end = time.monotonic() + HOLD_S
            while os.path.exists(SEEN) and not os.path.exists(GO_ON) and time.monotonic() < end:
                time.sleep(0.005)
        return super().encode(texts)

def progress(stage, done, total):
    print("progress", stage, done, total, flush=True)
    if stage == "embedding" and done > 0 and not os.path.exists(SEEN):
        open(SEEN, "w").close()

emb = SlowHash()
emb.batch_size = 2
wb = Workbench(embedder=emb, cache=EmbeddingCache({cache!r}))
wb.open([{corpus!r}])
wb.load_gold({gold!r})
engine = RayEngine(wb, address={address!r}, workers=2, progress=progress)
try:
    engine.evaluate(EvalConfig("fixed_tokens", {{"size": 8, "overlap": 0}}, 3, "dense"))
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
finally:
    engine.close()
"""


def test_sigint_to_a_driver_mid_embedding_leaves_whole_records(ray_cluster, tmp_path, corpus, gold):
    """Ctrl-C as a terminal sends it: SIGINT to a driver that joined the cluster by address."""
    script = tmp_path / "driver.py"
    cache_dir = tmp_path / "cache"
    go_on = tmp_path / "go-on"
    script.write_text(textwrap.dedent(_SIGINT_SCRIPT.format(
        root=str(ROOT), cache=str(cache_dir), corpus=str(corpus), gold=str(gold),
        seen=str(tmp_path / "seen"), go_on=str(go_on),
        address=ray_cluster.ray.get_runtime_context().gcs_address)), encoding="utf-8")
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=str(ROOT), env=dict(os.environ))
    lines: list[str] = []
    deadline = time.monotonic() + 90
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.strip())
            parts = line.split()
            if parts[:2] == ["progress", "embedding"] and int(parts[2]) > 0:
                proc.send_signal(signal.SIGINT)
                break
            assert time.monotonic() < deadline, lines
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
        go_on.touch()  # workers the cluster still runs for the gone driver end their batch
    lines += out.split()
    assert proc.returncode == 130, (lines, err[-2000:])
    assert "interrupted" in lines and "finished" not in lines
    config = EvalConfig("fixed_tokens", {"size": 8, "overlap": 0}, 3, "dense")
    texts = _corpus_texts(corpus, config)
    emb = HashEmbedder()
    cache, found = _cache_records(cache_dir, emb, texts)
    _assert_whole(cache, found, texts, emb)
    assert 0 < len(found) < len(texts)


def test_the_workers_keep_the_drivers_switches_and_cache_folder(monkeypatch, tmp_path):
    """A local cluster's workers read and write the driver's cache folder, and keep (or not, as
    the driver says) a long document's token index, structure and word pieces there."""
    from inspector.core.distributed.cluster import runtime_env
    from inspector.core.runtime import cachedir, keptfiles

    monkeypatch.setenv(cachedir.ENV_VAR, str(tmp_path))
    monkeypatch.setenv(keptfiles.ENV_VAR, "0")
    local = runtime_env(remote=False)["env_vars"]
    assert local[cachedir.ENV_VAR] == str(tmp_path) and local[keptfiles.ENV_VAR] == "0"
    remote = runtime_env(remote=True)["env_vars"]
    assert cachedir.ENV_VAR not in remote and remote[keptfiles.ENV_VAR] == "0"
