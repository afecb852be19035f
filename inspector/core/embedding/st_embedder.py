"""Any sentence-transformers model as the embedder (`--embedder st:NAME_OR_PATH`).

A local folder, or a name on the Hugging Face hub (`BAAI/bge-small-en-v1.5`): from the local
cache first, downloaded only when the hub can be reached (never in the app's offline tests). The
model runs its own pipeline (`encode_document` / `encode_query` with `normalize_embeddings`), so a
CLS-pooled model (bge) or one with prompts (e5's "query: ", nomic's "search_query: ") gets the
vectors its authors meant. Where it runs, in which precision and batch size, and how fast, is the
bundled model's machinery (`MiniLMEmbedder`, whose subclass this is).

What identifies the model (`model_id`, and so the vector cache's namespace): a hub model's name
and revision; a folder's resolved path and a fingerprint of its files, so that a model retrained
into the same folder never reads the vectors of the one before.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from inspector.core.embedding.embedder import MiniLMEmbedder, model_short_name
from inspector.core.embedding.model_folder import FolderInfo, folder_identity, read_folder
from inspector.core.errors import InputError

#: A hub repository id: "name" or "owner/name" (letters, digits, "-", "_", ".").
_HUB_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?$")

#: What a download leaves out: other runtimes' copies of the weights.
_NOT_NEEDED = ["*.onnx", "onnx/*", "openvino/*", "*.h5", "*.msgpack", "*.ot", "tf_model*", "flax_model*",
               "rust_model*", "coreml/*", "*.mlmodel"]


def _hub_offline() -> str:
    """Why this process may not reach the hub ("" if it may): the offline switches, which the app
    sets unless the user set them first (HF_HUB_OFFLINE=0 allows a download)."""
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if os.environ.get(var, "").strip().lower() in ("1", "true", "yes", "on"):
            return f"{var} is set; {var}=0 allows a download"
    try:
        from huggingface_hub import constants
    except ImportError:
        return "huggingface_hub is not installed"
    return "the hub library started offline" if constants.HF_HUB_OFFLINE else ""


def _cached_snapshot(name: str, revision: str | None) -> Path | None:
    """The hub model's folder in the local cache, or None (looked up without the network)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return None
    for filename in ("modules.json", "config.json"):
        found = try_to_load_from_cache(name, filename, revision=revision)
        if isinstance(found, str):
            return Path(found).parent
    return None


def _download(name: str, revision: str | None) -> Path:
    missing = f"model {name} is not in the local cache and the hub cannot be reached"
    offline = _hub_offline()
    if offline:
        raise InputError(f"{missing} ({offline})")
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(name, revision=revision, ignore_patterns=_NOT_NEEDED))
    except ImportError:
        raise InputError(missing) from None
    except Exception as exc:  # noqa: BLE001  (the hub's errors are many; each is one line here)
        kind = type(exc).__name__
        if kind in ("RepositoryNotFoundError", "GatedRepoError", "RevisionNotFoundError"):
            raise InputError(f"model {name} was not found on the hub ({kind})") from None
        raise InputError(f"{missing} ({kind})") from None


def resolve_model(name_or_path: str, revision: str | None = None) -> tuple[Path, str]:
    """(the model's folder, its model_id) for a folder or a hub name; an InputError otherwise."""
    text = str(name_or_path).strip()
    if not text:
        raise InputError("st: needs a model name or folder (st:NAME_OR_PATH)")
    path = Path(text).expanduser()
    if path.is_dir():
        if not ((path / "modules.json").is_file() or (path / "config.json").is_file()):
            raise InputError(f"no sentence-transformers model in {path.resolve()} "
                             f"(it has neither modules.json nor config.json)")
        return path.resolve(), folder_identity(path)
    if not _HUB_NAME.match(text) or text.startswith((".", "~")):
        raise InputError(f"no model folder at {path}")
    folder = _cached_snapshot(text, revision) or _download(text, revision)
    return folder, f"{text}@{folder.name}"  # the snapshot folder is named by its commit


def _specials_around(folder: Path) -> bool:
    """Whether the tokenizer puts one special token before a text and one after it ([CLS] ...
    [SEP], <s> ... </s>): what the pooled preview's arithmetic assumes."""
    from inspector.core.text.wordpieces import special_tokens_of, tokenizer

    if not (folder / "tokenizer.json").is_file() or special_tokens_of(folder) != 2:
        return False
    mask = tokenizer(folder).encode("a b", add_special_tokens=True).special_tokens_mask
    return len(mask) >= 3 and mask[0] == 1 and mask[-1] == 1 and not any(mask[1:-1])


class SentenceTransformerEmbedder(MiniLMEmbedder):
    """A sentence-transformers model from a folder or the hub, on the bundled model's device,
    precision and batch machinery (torch only: OpenVINO's conversion is the bundled model's).

    `encode` embeds documents (the model's document prompt, if it has one), `encode_queries`
    questions (its query prompt). `encode_pooled` and `token_states` (the pooled preview's token
    vectors) exist only where they reproduce the model: a transformer, mean pooling and at most a
    Normalize, one special token at each end, no document prompt. Elsewhere they are absent and
    the preview falls back to sentence vectors (`retrieval.pooled.piece_encoder_for`).

    `dim` and `max_seq_length` come from the config files when they say (no torch needed);
    `max_seq_length` may be set lower or higher (`max_seq_length=`, the spec's max_tokens)."""

    sets_word_pieces = False

    def __init__(self, name_or_path: str | os.PathLike[str], *, device: str = "auto", dtype: str = "float32",
                 batch_size: int | None = None, trust_remote_code: bool = False,
                 max_seq_length: int | None = None, revision: str | None = None) -> None:
        name = str(name_or_path).strip()
        folder, model_id = resolve_model(name, revision)
        info = read_folder(folder)
        if info.remote_code and not trust_remote_code:
            raise InputError(f"model {name} runs code of its own when it loads; "
                             f"allow it with --trust-remote-code if you trust its authors")
        super().__init__(batch_size=batch_size, device=device, dtype=dtype, model_path=folder, backend="torch")
        self.name = name
        """What the user named: the folder or hub name after "st:"."""
        self.revision = revision
        self.trust_remote_code = bool(trust_remote_code)
        self.model_id = model_id
        self.folder_info: FolderInfo = info
        self._max_tokens = int(max_seq_length) if max_seq_length else None
        self.max_seq_length = self._max_tokens or info.max_seq_length or self.max_seq_length
        self.document_prompt = info.document_prompt
        self.query_prompt = info.query_prompt
        self.mean_pooled = (info.kinds[:2] == ("Transformer", "Pooling")
                            and set(info.kinds[2:]) <= {"Normalize"} and info.pooling == ("mean",)
                            and not self.document_prompt and _specials_around(folder))
        """Whether the pooled preview's token vectors reproduce this model (see the class)."""
        self._piece_spec: tuple[str, str, int, int] | None = None
        if info.dim is not None:
            self.dim = info.dim
        else:
            self.load()  # an output size the config files do not give: the model says it

    # -- what it is ------------------------------------------------------------------------------
    @property
    def spec_text(self) -> str:
        return f"st:{self.name}"

    @property
    def short_name(self) -> str:
        """"bge-small-en-v1.5" for BAAI/bge-small-en-v1.5 or a folder of that name."""
        return model_short_name(self.name)

    def describe(self) -> str:
        """"bge-small-en-v1.5 on cpu, float32"."""
        from inspector.core.embedding.device import describe

        return f"{self.short_name} on {describe(self.device, self.dtype, self.backend or 'torch')}"

    @property
    def piece_spec(self) -> tuple[str, str, int, int]:
        """Its own tokenizer and limit; the specials are its post-processor's plus the pieces of
        its document prompt (both reach the model with every chunk). InputError when the folder
        has no tokenizer.json (its pieces cannot be counted)."""
        if self._piece_spec is None:
            from inspector.core.text.wordpieces import hf_piece_spec

            self._piece_spec = tuple(hf_piece_spec(self.model_path, self.max_seq_length,  # type: ignore[assignment]
                                                   prompt=self.document_prompt))
        assert self._piece_spec is not None
        return self._piece_spec

    def info(self) -> dict[str, Any]:
        return {"spec": self.spec_text, "model_id": self.model_id, "dims": int(self.dim),
                "max_tokens": int(self.max_seq_length), "tokenizer": self.name, "backend": "torch"}

    def __reduce__(self) -> tuple[Any, ...]:
        # Made again where it is unpickled (a Ray worker): the same folder gives the same model_id.
        return (_rebuild, (self.name, self.device_spec, self.dtype_spec, self._batch_size,
                           self.trust_remote_code, self._max_tokens, self.revision))

    # -- the token vectors of the pooled preview, only where they are the model's ----------------
    @property
    def encode_pooled(self) -> Any:
        if not self.mean_pooled:
            raise AttributeError(f"{self.name}: its pooling is not a plain mean of token vectors")
        return super().encode_pooled

    @property
    def token_states(self) -> Any:
        if not self.mean_pooled:
            raise AttributeError(f"{self.name}: its pooling is not a plain mean of token vectors")
        return super().token_states

    # -- loading and encoding --------------------------------------------------------------------
    def _load_torch(self) -> Any:
        model = super()._load_torch()
        if self._max_tokens:
            model.max_seq_length = self._max_tokens
        return model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Normalized float32 vectors of documents (chunks), by the model's own pipeline."""
        return self._encode(texts, query=False)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Normalized float32 vectors of questions (the model's query prompt, if any)."""
        return self._encode(texts, query=True)

    def _encode(self, texts: Sequence[str], *, query: bool) -> np.ndarray:
        from inspector.core.embedding.throughput import cost_units

        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self.load()
        prompt = self.query_prompt if query else self.document_prompt
        # encode_query / encode_document also route asymmetric models (a Router module); an
        # explicit prompt ("" included) keeps the model's default prompt from applying to both.
        method = getattr(model, "encode_query" if query else "encode_document", None) or model.encode
        t0 = time.perf_counter()
        with self._encode_lock, self._torch_threads(len(texts)):
            vecs = method(texts, prompt=prompt, batch_size=int(self.batch_size), normalize_embeddings=True,
                          convert_to_numpy=True, show_progress_bar=False)
        self.throughput.record(cost_units(texts, self.max_seq_length), time.perf_counter() - t0)
        return np.ascontiguousarray(vecs, dtype=np.float32)


def _rebuild(name: str, device: str, dtype: str, batch_size: int | None, trust_remote_code: bool,
             max_tokens: int | None, revision: str | None) -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(name, device=device, dtype=dtype, batch_size=batch_size,
                                       trust_remote_code=trust_remote_code, max_seq_length=max_tokens,
                                       revision=revision)


__all__ = ["SentenceTransformerEmbedder", "resolve_model"]
