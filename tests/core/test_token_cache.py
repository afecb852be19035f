"""A long document's token index kept on disk (`inspector.core.text.tokencache`): read back, it is
the index the text builds; a file that does not check out is never read; the folder stays bounded."""

from __future__ import annotations

import os
import random
import time

import numpy as np
from hypothesis import given, settings

from inspector.core.chunking.registry import get_strategy
from inspector.core.documents.document import from_text
from inspector.core.runtime import keptfiles
from inspector.core.text import tokencache, tokens
from inspector.core.text.tokens import TokenIndex, count_text, index_key, token_index
from tests.core.strategies_for_tests import any_text

HANDBOOK = os.path.join(os.path.dirname(__file__), "..", "..", "sample_docs", "handbook.md")


#: The folder the `kept` fixture (tests/core/conftest.py) yields.
KEPT = tokencache.FILES


def _read(sha256: str, text_len: int, key: str):
    """The arrays kept for a text, as `token_index` reads them (None: none that check out)."""
    return tokencache.FILES.load(sha256, key, lambda payload: tokencache.decode(payload, text_len))


def _write(sha256: str, text_len: int, key: str, arrays, max_bytes: int) -> bool:
    return tokencache.FILES.write(sha256, key, tokencache.encode(text_len, arrays), max_bytes=max_bytes)


def _builds(monkeypatch) -> list[int]:
    """Counts the indexes built from text (not read back)."""
    built: list[int] = []
    original = TokenIndex.__init__

    def init(self, text, meanwhile=None, **kwargs):
        built.append(len(text))
        original(self, text, meanwhile, **kwargs)

    monkeypatch.setattr(TokenIndex, "__init__", init)
    return built


def _same(a: TokenIndex, b: TokenIndex) -> None:
    assert np.array_equal(a.tokens, b.tokens)
    for name, arr in a.arrays().items():
        assert np.array_equal(arr, b.arrays()[name]), name
    assert list(a._blocks) == list(b._blocks)
    assert (a._odd is None) == (b._odd is None)


def _text(copies: int = 3) -> str:
    with open(HANDBOOK, encoding="utf-8") as fh:
        return fh.read() * copies


def test_a_document_opened_again_reads_its_index_and_counts_the_same(kept, monkeypatch):
    text = _text() + "café 🚀 naïve 1234567 \U0003d000:L\n"  # beyond ASCII, and an odd character
    built = TokenIndex(text)
    assert built._odd is not None
    first = token_index(from_text(text, "a.md"))
    files = list(kept.glob(f"*{tokencache.FILES.suffix}"))
    assert len(files) == 1 and files[0].name.startswith(from_text(text).sha256)
    tokens._INDEXES.clear()
    builds = _builds(monkeypatch)
    ran: list[int] = []
    again = token_index(from_text(text, "b.md"), lambda: ran.append(1))
    assert builds == [] and ran == [1]  # read, not built; the work meanwhile done once all the same
    assert again is not first
    _same(again, built)
    rng = random.Random(3)
    for _ in range(300):
        a = rng.randrange(len(text))
        b = min(len(text), a + rng.randrange(1, 3000))
        assert again.count(a, b) == count_text(text[a:b])
        n = rng.randrange(1, 50)
        assert again.offset_after(a, b, n) == built.offset_after(a, b, n)
        assert again.token_at_or_after(a) == built.token_at_or_after(a)


def test_chunks_from_a_read_index_are_the_built_ones(kept):
    text = _text()
    for name in ("recursive", "fixed_tokens", "markdown"):
        strategy = get_strategy(name)
        params = {p.name: p.default for p in strategy.params}
        tokens._INDEXES.clear()
        tokencache.FILES.forget()
        built = strategy(from_text(text, "h.md"), params)
        tokens._INDEXES.clear()
        assert list(kept.glob(f"*{tokencache.FILES.suffix}"))
        read = strategy(from_text(text, "h.md"), params)
        assert read == built, name


@settings(max_examples=60, deadline=None)
@given(text=any_text)
def test_arrays_read_back_make_the_built_index(text):
    built = TokenIndex(text)
    data = b"".join(bytes(p) for p in tokencache.encode(len(text), built.arrays()))
    arrays = tokencache.decode(data, len(text))
    assert arrays is not None
    _same(TokenIndex.restored(text, arrays), built)


def test_a_file_that_does_not_check_out_is_never_read(kept, monkeypatch):
    text = _text(2)
    doc = from_text(text)
    reference = token_index(doc)
    (path,) = kept.glob(f"*{tokencache.FILES.suffix}")
    good = path.read_bytes()
    builds = _builds(monkeypatch)
    damaged = {
        "a flipped byte": good[:200] + bytes([good[200] ^ 1]) + good[201:],
        "cut short": good[:-9],
        "another magic": b"X" + good[1:],
        "empty": b"",
    }
    for what, data in damaged.items():
        path.write_bytes(data)
        tokens._INDEXES.clear()
        index = token_index(from_text(text))
        _same(index, reference)
        assert path.read_bytes() == good, what  # built again and kept again
    assert len(builds) == len(damaged)
    # Another key (another encoding, format or version) is another file: not this one.
    assert _read(doc.sha256, len(text), "cd" * 32) is None
    # The right length and checksum over values no index holds: refused, not counted from.
    payload = good[len(tokencache.MAGIC):-4]
    assert tokencache.decode(payload, len(text)) is not None
    assert tokencache.decode(payload, len(text) + 1) is None
    arrays = reference.arrays()
    arrays["char_starts"] = arrays["char_starts"][::-1].copy()
    assert tokencache.decode(b"".join(bytes(p) for p in tokencache.encode(len(text), arrays)), len(text)) is None
    # Such a payload in a file whose checksum is right: refused all the same, and removed.
    assert tokencache.FILES.write(doc.sha256, index_key(), tokencache.encode(len(text), arrays))
    assert _read(doc.sha256, len(text), index_key()) is None
    assert not path.exists()


def test_off_by_the_environment_and_for_short_texts(kept, monkeypatch):
    monkeypatch.setenv(keptfiles.ENV_VAR, "0")
    token_index(from_text(_text(1)))
    assert not kept.exists() or not list(kept.iterdir())
    monkeypatch.setenv(keptfiles.ENV_VAR, "1")
    monkeypatch.setattr(keptfiles, "PERSIST_AT_LEAST", 10_000)
    token_index(from_text("short text " * 100))
    assert not kept.exists() or not list(kept.iterdir())
    assert not keptfiles.wanted(9_999) and keptfiles.wanted(10_000)


def test_an_unwritable_folder_costs_only_the_build(kept, monkeypatch):
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text("a file where the folder should be")
    text = _text(1)
    index = token_index(from_text(text))
    assert index.count(0, len(text)) == count_text(text)


def test_the_folder_keeps_the_most_recently_used_within_its_bound(kept, monkeypatch):
    texts = [_text(1) + f"\n\ncopy {i}\n" for i in range(4)]
    for text in texts:
        token_index(from_text(text))
    sizes = {p.name: p.stat().st_size for p in kept.glob(f"*{tokencache.FILES.suffix}")}
    assert len(sizes) == 4
    # The first is read again (so used most recently), then a fifth is written under a bound of three.
    old = time.time() - 100
    for i, p in enumerate(sorted(kept.glob(f"*{tokencache.FILES.suffix}"))):
        os.utime(p, (old + i, old + i))
    tokens._INDEXES.clear()
    first = from_text(texts[0])
    assert _read(first.sha256, len(texts[0]), index_key()) is not None
    stale = kept / ".x.tokens.1234.tmp"
    stale.write_bytes(b"left by a killed writer")
    os.utime(stale, (old - keptfiles.STALE_TMP_S, old - keptfiles.STALE_TMP_S))
    one = max(sizes.values())
    fifth = _text(1) + "\n\ncopy 4\n"
    doc = from_text(fifth)
    assert _write(doc.sha256, len(fifth), index_key(), TokenIndex(fifth).arrays(), max_bytes=3 * one)
    names = {p.name.split("-")[0] for p in kept.glob(f"*{tokencache.FILES.suffix}")}
    # Past its bound, the folder is brought down to LOW_WATER of it: two files of about `one`.
    assert len(names) == 2
    assert first.sha256 in names and doc.sha256 in names
    assert not stale.exists()


def test_an_index_larger_than_the_bound_is_not_written(kept):
    text = _text(1)
    doc = from_text(text)
    arrays = TokenIndex(text).arrays()
    size = sum(len(p) for p in tokencache.encode(len(text), arrays))
    assert not _write(doc.sha256, len(text), index_key(), arrays, max_bytes=size)
    assert not kept.exists() or not list(kept.iterdir())
    assert _write(doc.sha256, len(text), index_key(), arrays, max_bytes=size + 12)


def test_forget_removes_every_kept_index(kept):
    token_index(from_text(_text(1)))
    assert list(kept.glob(f"*{tokencache.FILES.suffix}"))
    tokencache.FILES.forget()
    assert not list(kept.glob(f"*{tokencache.FILES.suffix}"))


def test_the_key_changes_with_what_the_index_depends_on(monkeypatch):
    key = index_key()
    assert len(key) == 64 and key == index_key()
    index_key.cache_clear()
    try:
        monkeypatch.setattr("unicodedata.unidata_version", "0.0.0")
        assert index_key() != key
    finally:
        monkeypatch.undo()
        index_key.cache_clear()
    assert index_key() == key
