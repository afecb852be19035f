"""What a sentence-transformers model folder says about itself, read from its config files without
torch: its identity (for the vector cache), its output size, its pooling and its prompts.

Both layouts are read: sentence-transformers 2-4 (`pooling_mode_mean_tokens: true`,
`word_embedding_dimension`, `max_seq_length` in sentence_bert_config.json) and 5+
(`pooling_mode: "mean"`, `embedding_dimension`, the limit as the tokenizer's model_max_length).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.core.text.wordpieces import folder_max_seq_length

#: Legacy pooling flags and the mode each stands for (sentence-transformers' own table).
_LEGACY_POOLING = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}

#: JSON files up to this size are fingerprinted by content; anything bigger (weights, the
#: tokenizer's vocabulary) by name, size and modification time.
_CONTENT_LIMIT = 256 * 1024


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True, slots=True)
class Module:
    """One entry of modules.json."""

    kind: str
    """The class name: "Transformer", "Pooling", "Normalize", "Dense", ... (the last part of its type)."""
    path: str
    """Its subfolder ("" for the transformer at the top)."""
    builtin: bool
    """Whether sentence-transformers itself defines it (else the model ships its code)."""


@dataclass(frozen=True, slots=True)
class FolderInfo:
    """A model folder's description, from its config files."""

    modules: tuple[Module, ...]
    """modules.json in order; a plain transformers folder reads as Transformer + mean Pooling, as
    sentence-transformers loads it."""
    dim: int | None
    """Length of its output vectors, None when a module's size is not written down."""
    pooling: tuple[str, ...]
    """The Pooling module's modes ("mean", "cls", ...); () without one."""
    include_prompt: bool
    """Whether prompt tokens are pooled with the text (False for instruction models)."""
    max_seq_length: int | None
    """Tokens it reads per text, special tokens included (None: not written down)."""
    prompts: dict[str, str] = field(default_factory=dict)
    """Its prompts by name ("query", "document", "passage", ...)."""
    remote_code: bool = False
    """Whether loading it runs code shipped with the model (config.json auto_map, own modules)."""

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(m.kind for m in self.modules)

    @property
    def document_prompt(self) -> str:
        """What sentence-transformers' encode_document puts in front of a text ("" for none)."""
        for name in ("document", "passage", "corpus"):
            if name in self.prompts:
                return self.prompts[name]
        return ""

    @property
    def query_prompt(self) -> str:
        """What encode_query puts in front of a question ("" for none)."""
        return self.prompts.get("query", "")


def _modules(folder: Path) -> tuple[Module, ...]:
    entries = _read_json(folder / "modules.json")
    if not isinstance(entries, list):
        return (Module("Transformer", "", True), Module("Pooling", "", True))
    out = []
    for entry in entries:
        entry = _dict(entry)
        kind_path = str(entry.get("type", ""))
        out.append(Module(kind_path.rsplit(".", 1)[-1], str(entry.get("path", "")),
                          kind_path.startswith("sentence_transformers.")))
    return tuple(out)


def _pooling(cfg: dict[str, Any]) -> tuple[str, ...]:
    mode = cfg.get("pooling_mode")
    if isinstance(mode, str):
        return (mode,)
    if isinstance(mode, list):
        return tuple(str(m) for m in mode)
    return tuple(m for key, m in _LEGACY_POOLING.items() if cfg.get(key) is True)


def _hidden_size(cfg: dict[str, Any]) -> int | None:
    for key in ("hidden_size", "d_model", "dim", "n_embd", "hidden_dim"):
        if isinstance(cfg.get(key), int):
            return int(cfg[key])
    text = _dict(cfg.get("text_config"))
    return _hidden_size(text) if text else None


def read_folder(path: str | os.PathLike[str]) -> FolderInfo:
    """The folder's description. Never imports torch."""
    folder = Path(path)
    modules = _modules(folder)
    has_modules_json = (folder / "modules.json").is_file()
    dim: int | None = None
    known = True
    pooling: tuple[str, ...] = ()
    include_prompt = True
    for m in modules:
        sub = folder / m.path
        cfg = _dict(_read_json(sub / "config.json"))
        if m.kind == "Transformer":
            dim = _hidden_size(cfg)
        elif m.kind == "Pooling":
            if not has_modules_json:  # sentence-transformers' default for a plain transformers folder
                pooling = ("mean",)
                continue
            pooling = _pooling(cfg) or ("mean",)
            include_prompt = bool(cfg.get("include_prompt", True))
            size = cfg.get("embedding_dimension", cfg.get("word_embedding_dimension", dim))
            dim = int(size) * len(pooling) if isinstance(size, int) else None
        elif m.kind == "Dense":
            dim = int(cfg["out_features"]) if isinstance(cfg.get("out_features"), int) else None
        elif m.kind != "Normalize":
            known = False  # a module whose output size is not written down the same way
    st_cfg = _dict(_read_json(folder / "config_sentence_transformers.json"))
    prompts = {str(k): str(v) for k, v in _dict(st_cfg.get("prompts")).items() if isinstance(v, str)}
    remote = ("auto_map" in _dict(_read_json(folder / "config.json"))
              or any(not m.builtin for m in modules if has_modules_json))
    return FolderInfo(modules, dim if known else None, pooling, include_prompt,
                      folder_max_seq_length(folder), prompts, remote)


def fingerprint(path: str | os.PathLike[str]) -> str:
    """A short hash of what makes the folder's vectors: its config files by content, its weights
    and tokenizer by name, size and modification time (not read: a model is hundreds of MB).
    A model retrained into the same folder gets a new fingerprint."""
    folder = Path(path).resolve()
    h = hashlib.sha256()
    subfolders = sorted({""} | {m.path for m in _modules(folder)})
    for sub in subfolders:
        where = folder / sub
        if not where.is_dir():
            continue
        for p in sorted(where.iterdir()):
            if p.name.startswith(".") or p.suffix.lower() == ".md" or not p.is_file():
                continue
            rel = p.relative_to(folder).as_posix()
            st = p.stat()
            h.update(rel.encode("utf-8", "surrogatepass") + b"\0")
            if p.suffix == ".json" and st.st_size <= _CONTENT_LIMIT:
                h.update(p.read_bytes())
            else:
                h.update(f"{st.st_size}:{st.st_mtime_ns}".encode())
            h.update(b"\0")
    return h.hexdigest()[:12]


def folder_identity(path: str | os.PathLike[str]) -> str:
    """A model folder's `model_id`: its resolved path and its fingerprint ("/models/bge#3fa1c2e09b7d")."""
    folder = Path(path).expanduser().resolve()
    return f"{folder}#{fingerprint(folder)}"


__all__ = ["FolderInfo", "Module", "fingerprint", "folder_identity", "read_folder"]
