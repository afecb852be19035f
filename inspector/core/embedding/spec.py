"""Which embedding model: the user's choice as a spec string, and the embedder it makes.

    minilm              the bundled all-MiniLM-L6-v2 (the default)
    hash                the deterministic test embedder (no model)
    st:NAME_OR_PATH     any sentence-transformers model: a local folder or a hub name
    openai:MODEL        an OpenAI-compatible /v1/embeddings endpoint
    static:PATH         a static model folder (sentence-transformers StaticEmbedding, model2vec)

The options that go with a spec (the CLI's --embed-url, --embed-key-env, --embed-tokenizer,
--embed-max-tokens, --embed-dimensions, --trust-remote-code) are fields beside it, not part of its
text: `EmbedderSpec.text` is what a report names and what `parse_embedder_spec` reads back.
`embedder_info` is the `embedder` object every report carries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from inspector.core.errors import InputError

KINDS = ("minilm", "hash", "st", "openai", "static")
_NAMED = {"st": "st:NAME_OR_PATH", "openai": "openai:MODEL", "static": "static:PATH"}
_USE = "use minilm, hash, st:NAME_OR_PATH, openai:MODEL or static:PATH"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

#: Which options each kind reads (the key's variable is always allowed: it has a default).
_OPTIONS = {
    "minilm": frozenset(),
    "hash": frozenset(),
    "st": frozenset({"max_tokens", "trust_remote_code"}),
    "openai": frozenset({"url", "tokenizer", "max_tokens", "dimensions"}),
    "static": frozenset({"max_tokens"}),
}


def options_read_by(kind: str) -> frozenset[str]:
    """The options an embedder of `kind` reads (none for a kind that is not known)."""
    return _OPTIONS.get(kind, frozenset())


#: Kinds that name a model of their own (its tokenizer and limit count the word pieces).
MODEL_KINDS = ("st", "openai", "static")
_FLAGS = {"url": "--embed-url", "tokenizer": "--embed-tokenizer", "max_tokens": "--embed-max-tokens",
          "dimensions": "--embed-dimensions", "trust_remote_code": "--trust-remote-code"}


@dataclass(frozen=True, slots=True)
class EmbedderSpec:
    """An embedding model the user chose, before anything is loaded."""

    kind: str
    """"minilm", "hash", "st", "openai" or "static"."""
    name: str = ""
    """The model: a folder or hub name ("st"), a model name ("openai"), a folder ("static"); ""
    for minilm and hash."""
    url: str | None = None
    """The endpoint's base URL ("openai"; None: OpenAI's own)."""
    key_env: str = DEFAULT_KEY_ENV
    """The environment variable holding the API key ("openai"). The key itself is never held here."""
    tokenizer: str | None = None
    """How an HTTP model counts its input ("cl100k_base", "o200k_base"; None: by its name)."""
    max_tokens: int | None = None
    """Tokens the model reads per text (None: the model's own limit)."""
    dimensions: int | None = None
    """Vector size asked of the endpoint (text-embedding-3 can shorten its vectors)."""
    trust_remote_code: bool = False
    """Whether a sentence-transformers model may run code it ships ("st")."""

    @property
    def text(self) -> str:
        """The spec as the user writes it ("st:BAAI/bge-small-en-v1.5"); parses back to this spec
        with the same options."""
        return f"{self.kind}:{self.name}" if self.name else self.kind

    @property
    def names_model(self) -> bool:
        """Whether it names a model of its own (st:, openai:, static:), whose tokenizer and limit
        count the word pieces."""
        return self.kind in MODEL_KINDS

    @property
    def short_name(self) -> str:
        """Short name for a status bar or a column head: "MiniLM", "two-layer-minilm" (an st:
        folder's or hub name's last part), "openai:text-embedding-3-small"."""
        if self.kind == "minilm":
            return "MiniLM"
        if self.kind in ("st", "static"):
            from inspector.core.embedding.embedder import model_short_name

            return model_short_name(self.name)
        return self.text

    def options(self) -> dict[str, Any]:
        """The options set away from their defaults, by the names `parse_embedder_spec` takes."""
        out: dict[str, Any] = {}
        for name in ("url", "tokenizer", "max_tokens", "dimensions"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.key_env != DEFAULT_KEY_ENV:
            out["key_env"] = self.key_env
        if self.trust_remote_code:
            out["trust_remote_code"] = True
        return out

    def to_dict(self) -> dict[str, Any]:
        """{"spec": text, ...options}: how a configuration file names it (never a key)."""
        return {"spec": self.text, **self.options()}

    @classmethod
    def from_dict(cls, data: Any) -> EmbedderSpec:
        """The spec of `to_dict`'s shape, or of a plain spec string (InputError otherwise)."""
        if isinstance(data, str):
            return parse_embedder_spec(data)
        if not isinstance(data, dict) or not isinstance(data.get("spec"), str):
            raise InputError('an embedder must be a spec string or an object {"spec": ...}')
        extra = sorted(set(data) - {"spec", "url", "key_env", "tokenizer", "max_tokens", "dimensions",
                                    "trust_remote_code"})
        if extra:
            raise InputError(f"unknown embedder option {extra[0]!r}")
        options = {k: v for k, v in data.items() if k != "spec"}
        return parse_embedder_spec(data["spec"], **options)

    def label(self) -> str:
        """Short text for tables: the spec, and the endpoint when it is not the default."""
        return self.text + (f" at {self.url}" if self.url else "")


def _positive(value: Any, option: str) -> int | None:
    if value is None:
        return None
    try:
        n = int(value)
        ok = n >= 1 and float(value) == n
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise InputError(f"{_FLAGS[option]} must be a whole number of at least 1, got {value!r}")
    return n


def parse_embedder_spec(text: str, *, url: str | None = None, key_env: str | None = None,
                        tokenizer: str | None = None, max_tokens: int | None = None,
                        dimensions: int | None = None, trust_remote_code: bool = False) -> EmbedderSpec:
    """The spec in `text` with its options checked; an InputError of one line when anything is
    malformed (an unknown kind, a missing name, an option the kind does not read)."""
    raw = (text or "").strip()
    if not raw:
        raise InputError(f"the embedder spec is empty ({_USE})")
    kind, sep, name = raw.partition(":")
    kind, name = kind.strip().lower(), name.strip()
    if kind not in KINDS:
        raise InputError(f"unknown embedder {raw!r} ({_USE})")
    if kind in _NAMED and not name:
        raise InputError(f"{kind}: needs a model name ({_NAMED[kind]})")
    if kind not in _NAMED and sep:
        raise InputError(f"{kind} takes no model name, got {raw!r} ({_USE})")
    given = {"url": url, "tokenizer": tokenizer, "max_tokens": max_tokens, "dimensions": dimensions,
             "trust_remote_code": trust_remote_code or None}
    for option, value in given.items():
        if value is not None and option not in _OPTIONS[kind]:
            names = [_NAMED.get(k, k) for k, opts in _OPTIONS.items() if option in opts]
            readers = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 2 else names)
            raise InputError(f"{_FLAGS[option]} applies to {readers} embedders, not {kind}")
    if url is not None:
        url = url.strip()
        if not re.match(r"^https?://[^\s/]+", url):
            raise InputError(f"--embed-url must be an http:// or https:// address, got {url!r}")
    env = key_env.strip() if key_env is not None else DEFAULT_KEY_ENV
    if not _ENV_NAME.match(env):
        # Never echoed: a key pasted here by mistake must not reach a terminal or a log.
        raise InputError("--embed-key-env must name an environment variable (letters, digits and _), "
                         "not hold the key itself")
    if tokenizer is not None:
        tokenizer = tokenizer.strip()
        if not tokenizer:
            raise InputError("--embed-tokenizer is empty")
    return EmbedderSpec(kind, name, url, env, tokenizer, _positive(max_tokens, "max_tokens"),
                        _positive(dimensions, "dimensions"), bool(trust_remote_code))


def make_embedder(spec: EmbedderSpec | str, *, device: str = "auto", dtype: str = "float32",
                  batch_size: int | None = None) -> Any:
    """The embedder a spec names. `minilm` is the process-wide bundled model set to this device
    and precision (semantic chunking and retrieval share it); `st:` resolves its folder or hub
    name now (an InputError if it cannot) and loads the model on first use; `openai:` reads its
    key from the environment when it first calls the endpoint."""
    if isinstance(spec, str):
        spec = parse_embedder_spec(spec)
    embedder = _make(spec, device=device, dtype=dtype, batch_size=batch_size)
    embedder.spec = spec  # which spec made it: a configuration naming the same spec finds it
    return embedder


def _make(spec: EmbedderSpec, *, device: str, dtype: str, batch_size: int | None) -> Any:
    if spec.kind == "minilm":
        from inspector.core.embedding.embedder import configure_default_embedder

        return configure_default_embedder(device=device, dtype=dtype, batch_size=batch_size)
    if spec.kind == "hash":
        from inspector.core.embedding.embedder import HashEmbedder

        return HashEmbedder()
    if spec.kind == "st":
        from inspector.core.embedding.st_embedder import SentenceTransformerEmbedder
        from inspector.core.embedding.static_model import StaticEmbedder, static_module_folder

        if static_module_folder(spec.name) is not None:  # a static folder named st: (the window's
            return StaticEmbedder(spec.name, device=device, dtype=dtype,  # folder field) loads as one
                                  batch_size=batch_size, max_seq_length=spec.max_tokens)

        return SentenceTransformerEmbedder(spec.name, device=device, dtype=dtype, batch_size=batch_size,
                                           trust_remote_code=spec.trust_remote_code,
                                           max_seq_length=spec.max_tokens)
    if spec.kind == "openai":
        try:
            from inspector.core.embedding.remote import OpenAIEmbedder  # type: ignore[import-not-found,unused-ignore]
        except ModuleNotFoundError as exc:
            if exc.name not in ("inspector.core.embedding.remote",):
                raise
            raise InputError("openai: embedder not available in this build") from None
        return OpenAIEmbedder(model=spec.name, url=spec.url, key_env=spec.key_env, tokenizer=spec.tokenizer,
                              max_tokens=spec.max_tokens, dimensions=spec.dimensions)
    if spec.kind == "static":
        from inspector.core.embedding.static_model import StaticEmbedder

        return StaticEmbedder(spec.name, device=device, dtype=dtype, batch_size=batch_size,
                              max_seq_length=spec.max_tokens)
    raise InputError(f"unknown embedder {spec.kind!r} ({_USE})")  # a spec made by hand


def embedder_info(embedder: Any, spec_text: str | None = None) -> dict[str, Any]:
    """The report's `embedder` object: {"spec", "model_id", "dims", "max_tokens", "tokenizer",
    "backend"}, from the embedder's own `info()` when it has one. `spec_text` (what the user
    typed) overrides the spec the embedder names itself by. Never holds a key."""
    own = getattr(embedder, "info", None)
    info: dict[str, Any] = dict(own()) if callable(own) else {}
    out = {
        "spec": info.get("spec"),
        "model_id": info.get("model_id", str(getattr(embedder, "model_id", ""))),
        "dims": info.get("dims", getattr(embedder, "dim", 0)),
        "max_tokens": info.get("max_tokens", getattr(embedder, "max_seq_length", None)),
        "tokenizer": info.get("tokenizer"),
        "backend": info.get("backend", getattr(embedder, "backend", None)),
    }
    made_by = getattr(embedder, "spec", None)
    if spec_text is not None:
        out["spec"] = spec_text
    elif out["spec"] is None and isinstance(made_by, EmbedderSpec):
        out["spec"] = made_by.text
    if out["dims"] is not None:  # None: an HTTP model not asked yet (nothing sent to learn its size)
        out["dims"] = int(out["dims"])
    if out["max_tokens"] is not None:
        out["max_tokens"] = int(out["max_tokens"])
    return out


__all__ = ["EmbedderSpec", "KINDS", "MODEL_KINDS", "embedder_info", "make_embedder", "parse_embedder_spec"]
