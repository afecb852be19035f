"""A long document's word-piece index kept on disk (`inspector.core.text.piececache`), and the
writer thread that keeps every such file off the first chunking's path (`keptfiles.write_later`)."""

from __future__ import annotations

import hashlib
import json
import multiprocessing as mp
import os
import random
import shutil
import threading
from pathlib import Path

import numpy as np

from inspector.core.chunking.registry import get_strategy
from inspector.core.documents.document import from_text
from inspector.core.runtime import keptfiles
from inspector.core.text import piececache, structurecache, tokencache, tokens, wordpieces
from inspector.core.text.tokens import index_key
from inspector.core.text.wordpieces import WordPieceIndex, count_text, model_path, wordpiece_index

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "sample_docs" / "handbook.md"


#: The folder the `kept` fixture (tests/core/conftest.py) yields.
KEPT = piececache.FILES


def _text() -> str:
    return HANDBOOK.read_text(encoding="utf-8") * 2 + "café naïve Straße 🚀 日本語のテキスト\n"


def test_a_document_opened_again_reads_its_word_pieces(kept, monkeypatch):
    text = _text()
    built = wordpiece_index(from_text(text, "a.md"))
    assert isinstance(built, WordPieceIndex)
    (path,) = kept.glob(f"*{piececache.FILES.suffix}")
    wordpieces._INDEXES.clear()
    made: list[int] = []
    original = WordPieceIndex.__init__
    monkeypatch.setattr(WordPieceIndex, "__init__", lambda self, *a: made.append(1) or original(self, *a))
    again = wordpiece_index(from_text(text, "b.md"))
    assert made == [] and again is not built
    for a, b in zip(built.words(), again.words(), strict=True):
        assert np.array_equal(a, b)
    rng = random.Random(5)
    for _ in range(200):
        a = rng.randrange(len(text))
        b = min(len(text), a + rng.randrange(1, 2500))
        assert again.count(a, b) == count_text(text[a:b]) == built.count(a, b)
    # Another tokenizer is another key: not this file.
    bundled = wordpieces._loaded_tokenizer(model_path())[1]
    assert piececache.piece_key(bundled) != piececache.piece_key(hashlib.sha256(b"another tokenizer").hexdigest())
    # A damaged file is never read: built again, and kept again.
    good = path.read_bytes()
    path.write_bytes(good[:50] + bytes([good[50] ^ 4]) + good[51:])
    wordpieces._INDEXES.clear()
    wordpiece_index(from_text(text, "c.md"))
    assert len(made) == 1 and path.read_bytes() == good


def test_a_tokenizer_replaced_while_the_process_runs_keys_nothing_it_did_not_count(kept, tmp_path):
    """The word pieces a process counts come from the tokenizer it loaded, so they are kept under
    that tokenizer's bytes, not under those of a tokenizer.json replaced on disk since."""
    model = tmp_path / "model"
    model.mkdir()
    for name in ("tokenizer.json", "config.json", "tokenizer_config.json", "sentence_bert_config.json"):
        if (model_path() / name).is_file():
            shutil.copy(model_path() / name, model)
    first = "Hello World. Chunking Inspector Reads Capitalised Words.\n" * 20
    second = "Another Document With Many Capitalised Words, Zebra Quokka Xylophone.\n" * 20
    folder = model.resolve()
    try:
        wordpieces.use_piece_spec(wordpieces.hf_piece_spec(model))
        wordpiece_index(from_text(first, "one.md"))  # the tokenizer loaded: lowercase
        spec = json.loads((model / "tokenizer.json").read_text(encoding="utf-8"))
        spec["normalizer"]["lowercase"] = False  # replaced on disk: a cased variant
        (model / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
        old = wordpiece_index(from_text(second, "two.md"))  # counted by the tokenizer still loaded
        # A later process loads the new file: it must count afresh, not read what the old one counted.
        wordpieces._loaded_tokenizer.cache_clear()
        wordpieces._INDEXES.clear()
        new = wordpiece_index(from_text(second, "two.md"))
        truth = wordpieces._HFCounter(wordpieces._tokenizer_at(folder), True).count(second)
        assert int(new.word_pieces_prefix[-1]) == truth != int(old.word_pieces_prefix[-1])
    finally:
        wordpieces.use_piece_spec(None)
        wordpieces._loaded_tokenizer.cache_clear()


def test_words_that_no_index_holds_are_refused(kept):
    n = 100
    starts, ends, pieces = np.array([0, 10, 5]), np.array([4, 12, 8]), np.array([1, 1, 1])
    assert piececache.decode(b"".join(bytes(p) for p in piececache.encode(n, starts, ends, pieces)), n) is None
    starts, ends = np.array([0, 5, 10]), np.array([4, 8, 101])
    assert piececache.decode(b"".join(bytes(p) for p in piececache.encode(n, starts, ends, pieces)), n) is None
    ends = np.array([4, 8, 12])
    assert piececache.decode(b"".join(bytes(p) for p in piececache.encode(n, starts, ends, -pieces)), n) is None
    assert piececache.decode(b"".join(bytes(p) for p in piececache.encode(n, starts, ends, pieces)), n) is not None


def test_markdown_chunks_from_kept_data_are_the_built_ones(kept):
    text = _text()
    strategy = get_strategy("markdown")
    params = {p.name: p.default for p in strategy.params}
    assert params.get("fit_embedder")
    built = strategy(from_text(text, "h.md"), params)
    folders = {p.name for p in kept.parent.iterdir()}
    assert {tokencache.FILES.name, structurecache.FILES.name, piececache.FILES.name} <= folders
    for cache in (tokens._INDEXES, wordpieces._INDEXES):
        cache.clear()
    from inspector.core.text import structure

    structure._STRUCTURES.clear()
    from inspector.core.chunking import fit, markdown

    markdown._UNITS.clear()
    fit._WIDEST.clear()
    assert strategy(from_text(text, "h.md"), params) == built


def test_files_are_written_off_the_callers_path_and_flushed(kept, monkeypatch):
    monkeypatch.setattr(keptfiles, "IN_BACKGROUND", True)
    release = threading.Event()
    original = tokencache.encode

    def slow(*args):
        assert release.wait(10)
        return original(*args)

    monkeypatch.setattr(tokencache, "encode", slow)
    text = _text()
    tokens.token_index(from_text(text))  # returns while the writer waits
    folder = kept.parent / tokencache.FILES.name
    assert not list(folder.glob(f"*{tokencache.FILES.suffix}"))
    release.set()
    keptfiles.flush(10)
    (path,) = folder.glob(f"*{tokencache.FILES.suffix}")
    assert tokencache.FILES.load(from_text(text).sha256, index_key(),
                                 lambda payload: tokencache.decode(payload, len(text))) is not None
    # `forget` waits for a pending write: a file landing after it would answer the next "first" chunking.
    release.clear()
    tokens._INDEXES.clear()
    path.unlink()
    tokens.token_index(from_text(text))
    threading.Timer(0.2, release.set).start()
    tokencache.FILES.forget()
    keptfiles.flush(10)
    assert not list(folder.glob(f"*{tokencache.FILES.suffix}"))


def _build_and_exit(folder: str, text: str) -> None:
    os.environ["CHUNK_INSPECTOR_CACHE_DIR"] = folder
    os.environ[keptfiles.ENV_VAR] = "1"
    tokens.token_index(from_text(text))  # the file is handed to the writer thread; the process ends


def test_a_child_process_writes_its_files_before_it_exits(tmp_path):
    text = _text()
    child = mp.get_context("spawn").Process(target=_build_and_exit, args=(str(tmp_path), text))
    child.start()
    child.join(120)
    assert child.exitcode == 0
    (path,) = (tmp_path / tokencache.FILES.name).glob(f"*{tokencache.FILES.suffix}")
    assert tokencache.FILES.read(from_text(text).sha256, index_key(), tmp_path) is not None
