"""`runtime.keptfiles`: a kept file is read only when it is one its folder writes, and whatever a
reader finds in one it cannot take is never raised to the caller; keys cover the code that made
the data."""

from __future__ import annotations

import marshal
import os
import threading
from pathlib import Path

from inspector.core.runtime import keptfiles, slices
from inspector.core.runtime.keptfiles import KeptFolder
from inspector.core.text import piececache, structurecache, tokens

FILES = KeptFolder("test", ".kept", b"CITEST01", 1 << 20)
SHA = "ab" * 32
KEY = "cd" * 32


def test_a_named_pipe_where_a_file_should_be_is_not_waited_on(tmp_path):
    path = FILES.path(SHA, KEY, tmp_path)
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    got: list[object] = []
    reader = threading.Thread(target=lambda: got.append(FILES.read(SHA, KEY, tmp_path)), daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive() and got == [None]
    assert not path.exists()


def test_a_file_larger_than_the_folder_bound_is_removed_unread(tmp_path):
    """Checked before its size is allocated (a huge sparse file put there asked for all of it)."""
    payload = [b"x" * FILES.max_bytes]
    assert FILES.write(SHA, KEY, payload, tmp_path, max_bytes=2 * FILES.max_bytes)  # intact, too big
    path = FILES.path(SHA, KEY, tmp_path)
    assert FILES.read(SHA, KEY, tmp_path) is None
    assert not path.exists()
    assert FILES.write(SHA, KEY, [b"x" * 100], tmp_path) and FILES.read(SHA, KEY, tmp_path) == b"x" * 100


def test_whatever_a_reader_raises_is_a_file_refused(tmp_path):
    assert FILES.write(SHA, KEY, [b"payload"], tmp_path)

    def raises(_payload):
        raise OverflowError("cannot convert float infinity to integer")

    assert FILES.load(SHA, KEY, raises, tmp_path) is None
    assert not FILES.path(SHA, KEY, tmp_path).exists()


def test_headings_a_parse_cannot_give_are_refused():
    block = ("paragraph", 0, 5, 0, "", ())
    for headings in ([(1, "H", float("inf"), 3)], [(1, "H", 0, 101)], [(1, "H", -1, 3)], [(9, "H", 0, 3)],
                     [(1, "H", 50, 60), (1, "G", 10, 20)], [(1, 7, 0, 3)]):
        assert structurecache.decode(marshal.dumps(((block,), tuple(headings), None)), 100) is None, headings
    assert structurecache.decode(marshal.dumps(((block,), ((1, "H", 0, 3),), None)), 100) is not None


def test_a_key_changes_with_the_code_and_versions_it_names(tmp_path):
    source = tmp_path / "module.py"
    source.write_text("one")
    key = keptfiles.code_key(b"M", packages=("numpy",), parts=("x",), files=(source,))
    assert key == keptfiles.code_key(b"M", packages=("numpy",), parts=("x",), files=(source,))
    source.write_text("two")
    assert keptfiles.code_key(b"M", packages=("numpy",), parts=("x",), files=(source,)) != key
    assert keptfiles.code_key(b"M", packages=("numpy", "regex"), parts=("x",), files=(source,)) != key


def test_every_key_reads_the_offsets_code(monkeypatch):
    """The token index and the structure's block spans convert offsets with `runtime.slices`: a
    change there must miss what the old code kept."""
    seen: list[tuple[Path, ...]] = []
    original = keptfiles.code_key

    def spy(magic, **kw):
        seen.append(tuple(kw.get("files", ())))
        return original(magic, **kw)

    monkeypatch.setattr(keptfiles, "code_key", spy)
    for key in (tokens.index_key, structurecache.structure_key, piececache.piece_key):
        key.cache_clear()
    try:
        tokens.index_key()
        structurecache.structure_key()
    finally:
        for key in (tokens.index_key, structurecache.structure_key, piececache.piece_key):
            key.cache_clear()
    assert len(seen) == 2 and all(Path(slices.__file__) in files for files in seen)


def _spy_evictions(monkeypatch) -> list[int]:
    scans: list[int] = []
    evict = KeptFolder.evict

    def counted(self, *args, **kwargs):
        scans.append(1)
        return evict(self, *args, **kwargs)

    monkeypatch.setattr(KeptFolder, "evict", counted)
    return scans


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.glob(f"*{FILES.suffix}"))


def test_the_folder_is_scanned_only_when_its_known_size_may_pass_the_bound(tmp_path, monkeypatch):
    scans = _spy_evictions(monkeypatch)
    bound = 10_000
    for i in range(40):
        assert FILES.write(f"{i:064x}", KEY, [b"x" * 900], tmp_path, max_bytes=bound)
        assert _folder_bytes(FILES.folder(tmp_path)) <= bound
    # A file is 912 bytes with its magic and checksum: ten fill the bound. A scan when the known
    # size would pass it, which brings the folder down to LOW_WATER of it (nine files): every
    # second write once full, not every write (with LOW_WATER 1.0, 31 scans).
    assert len(scans) == 16
    assert 9 <= len(list(FILES.folder(tmp_path).glob(f"*{FILES.suffix}"))) <= 10


def test_another_process_s_files_are_counted_at_the_next_scan(tmp_path, monkeypatch):
    scans = _spy_evictions(monkeypatch)
    assert FILES.write("a" * 64, KEY, [b"x" * 100], tmp_path, max_bytes=10_000)
    folder = FILES.folder(tmp_path)
    for i in range(5):  # written by another process: this one does not know of them
        (folder / f"{i:064x}-{KEY[:16]}{FILES.suffix}").write_bytes(b"y" * 3_000)
    assert FILES.write("b" * 64, KEY, [b"x" * 100], tmp_path, max_bytes=10_000)
    assert len(scans) == 1  # within RESCAN_S of the last scan, and the known size under the bound
    monkeypatch.setattr(keptfiles, "RESCAN_S", 0.0)
    assert FILES.write("c" * 64, KEY, [b"x" * 100], tmp_path, max_bytes=10_000)
    assert len(scans) == 2 and _folder_bytes(folder) <= 10_000
    assert FILES.path("c" * 64, KEY, tmp_path).exists()


def test_forget_empties_what_is_known_of_the_folder(tmp_path, monkeypatch):
    scans = _spy_evictions(monkeypatch)
    FILES.write("a" * 64, KEY, [b"x" * 100], tmp_path)
    FILES.forget(tmp_path)
    FILES.write("b" * 64, KEY, [b"x" * 100], tmp_path)
    assert len(scans) == 2
