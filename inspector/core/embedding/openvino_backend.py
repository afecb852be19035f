"""all-MiniLM-L6-v2 on OpenVINO: the bundled torch weights converted once, run on the CPU.

Why: measured on this project's 2-core machine (benchmarks/embed_devices.py, see
benchmarks/README.md), OpenVINO in float32 embeds the handbook's chunks 2-3.5 times as fast as
torch and its pieces 3-6 times, ONNX Runtime 1.5 and 3 times, and a cached OpenVINO model loads
in ~2 s without importing torch at all (torch and sentence-transformers take 5-12 s). Its
vectors keep cosine >= 0.9999999 with torch's on the handbook's chunks, so they share torch's
embedding cache.

How: the first time, in a process of its own (`convert_in_child`: the window keeps none of the
torch it would take), the sentence-transformers model is loaded with torch from the package
directory and its transformer is converted in memory (`openvino.convert_model`, no network, no
ONNX file), then saved with float32 weights under the user cache folder
(`<cache>/openvino/<key>/`), next to reference vectors of a few probe texts computed by torch.
Every later load compiles the saved model and checks it against those references: a model that
disagrees (another CPU, another OpenVINO) is not used. The precision hint is pinned to f32:
OpenVINO's default on CPUs with bfloat16 units is bf16 (cosine 0.99996 here), which would mix
vectors of another precision into the float32 cache.

Tokenization is the model's own `tokenizer.json` through the `tokenizers` library, truncated at
`max_seq_length` and padded to the longest text of a batch, as sentence-transformers does.
Pooling is the model's mean over the attention mask; `encode_pooled` returns the means and the
word-piece counts, and the caller normalizes (exact vectors) or keeps them (piece vectors).

Any failure here (no openvino, a conversion error, a failed check) raises; the embedder catches
it and runs torch instead (`MiniLMEmbedder.load`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

FORMAT = 1
"""Bumped when what is saved changes (the folder name includes it)."""
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
PROBES = ("Parental leave in Germany is paid for up to 14 months.",
          "How do I claim travel expenses?",
          "| Country | Weeks |\n|---|---|\n| France | 16 |",
          "word " * 300)
"""Texts whose torch vectors are saved with the model and compared at every load (the last one
is longer than the model reads: it checks truncation too)."""
MIN_COSINE = 0.9999
"""The bar a converted model must clear against torch on the probes."""


def available() -> bool:
    """Whether the openvino package is installed (without importing it)."""
    import importlib.util

    try:
        return importlib.util.find_spec("openvino") is not None
    except (ImportError, ValueError):
        return False


def _model_key(model_path: Path) -> str:
    """Folder name for one model's conversion: the weights file (size, mtime), the OpenVINO
    version and this module's format."""
    from importlib.metadata import version

    h = hashlib.sha256()
    h.update(str(model_path.resolve()).encode("utf-8", "surrogatepass"))
    for name in ("model.safetensors", "pytorch_model.bin", "config.json", "tokenizer.json"):
        p = model_path / name
        if p.is_file():
            st = p.stat()
            h.update(f"{name}:{st.st_size}:{st.st_mtime_ns}".encode())
    h.update(f"openvino={version('openvino')}|format={FORMAT}".encode())
    return h.hexdigest()[:16]


def model_folder(model_path: Path, cache_dir: Path | None = None) -> Path:
    """Where the converted model of `model_path` lives."""
    if cache_dir is None:
        from inspector.core.runtime.cachedir import default_cache_dir

        cache_dir = default_cache_dir()
    return Path(cache_dir) / "openvino" / _model_key(model_path)


def _tokenizer(model_path: Path, max_seq_length: int) -> Any:
    from tokenizers import Tokenizer

    tk = Tokenizer.from_file(str(model_path / "tokenizer.json"))
    tk.enable_truncation(max_length=max_seq_length)
    pad_id = tk.token_to_id("[PAD]")
    tk.enable_padding(pad_id=0 if pad_id is None else pad_id, pad_token="[PAD]")
    return tk


def _mean_pool(hidden: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    m = mask.astype(np.float32)[:, :, None]
    counts = mask.sum(axis=1).astype(np.int64)
    sums = (hidden.astype(np.float32) * m).sum(axis=1)
    return sums / np.maximum(counts, 1)[:, None].astype(np.float32), counts


def _normalize(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v, axis=1, keepdims=True)
    n[n == 0] = 1.0
    return (v / n).astype(np.float32)


def convert(torch_model: Any, folder: Path, max_seq_length: int) -> None:
    """Convert a loaded SentenceTransformer's transformer and save it (with probe references)
    atomically into `folder` (a temporary folder renamed into place)."""
    import torch

    ov = import_openvino()

    bert = torch_model[0].auto_model.eval()

    class _Hidden(torch.nn.Module):
        """The transformer with named inputs and its last hidden state as the one output."""

        def __init__(self, m: Any) -> None:
            super().__init__()
            self.m = m

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.m(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).last_hidden_state

    enc = torch_model.tokenizer(["a short example", "a somewhat longer example text to pad"],
                                padding=True, return_tensors="pt")
    import warnings

    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # tracing re-reads the config and chats about it
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracing warnings about shapes the model handles anyway
            ov_model = ov.convert_model(_Hidden(bert), example_input={k: enc[k] for k in INPUTS})
    finally:
        hf_logging.set_verbosity(level)
    reference = torch_model.encode(list(PROBES), normalize_embeddings=True, convert_to_numpy=True,
                                   show_progress_bar=False)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=folder.parent))
    try:
        import io

        from inspector.core.runtime.atomic import atomic_write_bytes, atomic_write_text

        ov.save_model(ov_model, str(tmp / "model.xml"), compress_to_fp16=False)
        buf = io.BytesIO()
        np.save(buf, np.asarray(reference, dtype=np.float32))
        atomic_write_bytes(tmp / "probes.npy", buf.getvalue())
        atomic_write_text(tmp / "info.json", json.dumps({"format": FORMAT, "max_seq_length": max_seq_length,
                                                         "probes": list(PROBES)}))
        try:
            os.replace(tmp, folder)  # the folder appears whole or not at all
        except OSError:  # another process converted it meanwhile: theirs is as good
            if not (folder / "model.xml").is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


CONVERT_TIMEOUT_S = 900.0
"""How long the conversion process may take (13 s on the 2-core machine, model load included)."""


def _convert_main(argv: list[str]) -> int:
    """The conversion process (`python -m inspector.core.embedding.openvino_backend MODEL FOLDER
    MAX_SEQ_LENGTH`): load the torch model and `convert` it. Exit status 0, else 1 with the error
    as the last line of standard error."""
    import sys

    model_path, folder, max_seq_length = argv[0], argv[1], int(argv[2])
    try:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        if not (Path(model_path) / "config.json").is_file():  # said before seconds of imports
            raise FileNotFoundError(f"no model in {model_path} (config.json is missing)")
        from sentence_transformers import SentenceTransformer

        convert(SentenceTransformer(model_path, device="cpu", local_files_only=True), Path(folder), max_seq_length)
    except Exception as exc:  # noqa: BLE001  (everything goes back to the caller as a message)
        print(f"{type(exc).__name__}: {exc}".replace("\n", " "), file=sys.stderr)  # one line, the last
        return 1
    return 0


def convert_in_child(model_path: Path, folder: Path, max_seq_length: int, *,
                     timeout_s: float | None = None) -> None:
    """`convert` in a process of its own, waited for; raises RuntimeError with its error.

    Why: the conversion imports torch and sentence-transformers and traces the model, and the
    process that does it keeps what that took. On a first launch the window's resident set went
    from about 520 MB to 1,290 MB (770 MB of anonymous memory it never gave back) for a model
    that, converted, runs without torch at all. Done in a child, the caller imports neither:
    loading with a conversion, 290 MB at the end instead of 900 MB, in the same 13 s.

    A fresh interpreter (`python -m`), not multiprocessing: a spawned process re-runs the
    caller's main script, which a script without an `if __name__ == "__main__"` guard does not
    survive."""
    import subprocess
    import sys

    import inspector

    env = dict(os.environ)
    root = str(Path(inspector.__file__).resolve().parents[1])  # the package importable as here
    env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])
    try:
        proc = subprocess.run([sys.executable, "-m", __name__, str(model_path), str(folder), str(max_seq_length)],
                              env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=CONVERT_TIMEOUT_S if timeout_s is None else timeout_s)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RuntimeError(f"the model's conversion process did not finish: {exc}") from exc
    if proc.returncode != 0:
        lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        why = lines[-1] if lines else f"exit status {proc.returncode}"
        raise RuntimeError(f"converting the model failed: {why}")


def import_openvino() -> Any:
    """`import openvino`, its usage telemetry declined first.

    Why: importing openvino starts a session of Intel's telemetry (the `openvino_telemetry`
    package) unless the user has a consent file saying no: it writes a client id and usage counts
    under ~/intel and sends an event to Google Analytics from a thread pool. The app runs offline
    and sends nothing anywhere; those sender threads also waited on a network that is not there
    (the tests caught five of them still alive). The consent check answers "declined" for this
    process, so no file is written and nothing is sent; the user's own consent file is untouched.
    """
    try:
        from openvino_telemetry.utils import opt_in_checker
    except ImportError:  # an openvino without telemetry
        pass
    else:
        declined = opt_in_checker.ConsentCheckResult.DECLINED
        opt_in_checker.OptInChecker.check = lambda self, *args, **kwargs: declined
    import openvino

    return openvino


class OpenVINOModel:
    """A compiled OpenVINO MiniLM: texts in, mean-pooled token vectors and counts out."""

    def __init__(self, compiled: Any, tokenizer: Any, dim: int, folder: Path) -> None:
        self.compiled = compiled
        self.tokenizer = tokenizer
        self.dim = dim
        self.folder = folder
        self._lock = threading.Lock()  # one infer request: calls are serialized

    @classmethod
    def load(cls, model_path: Path, max_seq_length: int, dim: int, *,
             cache_dir: Path | None = None) -> OpenVINOModel:
        """The converted model, converting it first if needed, in a process of its own
        (`convert_in_child`). Raises on any failure, including a failed probe check."""
        ov = import_openvino()

        folder = model_folder(model_path, cache_dir)
        if not (folder / "model.xml").is_file() or not (folder / "probes.npy").is_file():
            convert_in_child(model_path, folder, max_seq_length)
        core = ov.Core()
        compiled = core.compile_model(core.read_model(str(folder / "model.xml")), "CPU",
                                      {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": "f32"})
        model = cls(compiled, _tokenizer(model_path, max_seq_length), dim, folder)
        model.check()
        return model

    def check(self) -> float:
        """The smallest cosine between this model's probe vectors and torch's saved ones; raises
        RuntimeError below MIN_COSINE."""
        ref = np.load(self.folder / "probes.npy")
        got = self.encode(list(PROBES))
        cos = float(np.min(np.sum(ref * got, axis=1)))
        if not cos >= MIN_COSINE:
            raise RuntimeError(f"OpenVINO model in {self.folder} disagrees with torch "
                               f"(cosine {cos:.6f} < {MIN_COSINE})")
        return cos

    def encode_pooled(self, texts: Sequence[str], *, specials: bool = False) -> Any:
        """(means float32 [n, dim] before normalization, word-piece counts [n]) for one batch;
        `specials=True` adds each text's [CLS] + [SEP] token vectors (summed)."""
        if not texts:
            empty = (np.zeros((0, self.dim), np.float32), np.zeros(0, np.int64))
            return (*empty, np.zeros((0, self.dim), np.float32)) if specials else empty
        encs = self.tokenizer.encode_batch(list(texts))
        ids = np.asarray([e.ids for e in encs], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in encs], dtype=np.int64)
        types = np.asarray([e.type_ids for e in encs], dtype=np.int64)
        with self._lock:
            hidden = self.compiled({"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
        hidden = np.asarray(hidden)
        means, counts = _mean_pool(hidden, mask)
        if not specials:
            return means, counts
        last = np.maximum(mask.sum(axis=1) - 1, 0)
        pair = (hidden[:, 0] + hidden[np.arange(len(hidden)), last]).astype(np.float32)
        return means, counts, pair

    def token_states(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        """Last hidden states [batch, length, dim] for token ids already made."""
        types = np.zeros_like(input_ids)
        with self._lock:
            hidden = self.compiled({"input_ids": input_ids.astype(np.int64),
                                    "attention_mask": attention_mask.astype(np.int64), "token_type_ids": types})[0]
        return np.asarray(hidden, dtype=np.float32)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Normalized sentence vectors (the model's mean pooling, then Normalize)."""
        means, _counts = self.encode_pooled(texts)
        return _normalize(means)


__all__ = ["OpenVINOModel", "available", "model_folder", "convert", "convert_in_child", "MIN_COSINE"]


if __name__ == "__main__":
    import sys

    sys.exit(_convert_main(sys.argv[1:]))
