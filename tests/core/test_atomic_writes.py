"""Nothing lost: a writer killed mid-write leaves the previous file intact.

Every file the app writes goes through `inspector.core.runtime.atomic.atomic_write_bytes/text` (temporary
file in the same folder, fsync, rename). These tests SIGKILL a real process while it writes (in
the middle of the data, and between fsync and rename) and find the old file whole; they do the
same to the embedding cache mid-flush and check the next run loads what is intact and recomputes
the rest. A static scan keeps other writers out of the code.
"""

from __future__ import annotations

import ast
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from inspector.core.embedding.cache import (
    SEGMENT_SUFFIX,
    EmbeddingCache,
    decode_segment,
    encode_segment,
    text_key,
)
from inspector.core.embedding.embedder import HashEmbedder, cache_namespace, embed_texts
from inspector.core.runtime.atomic import atomic_write_bytes, atomic_write_text, atomic_writer
from tests.core.embedders_for_tests import Counting

ROOT = Path(__file__).resolve().parents[2]

# The child slows the file object `atomic_write_bytes` writes through (4 KiB, then a pause) and
# signals through marker files; the temp file, fsync, rename and target are the real ones.
CHILD_PRELUDE = textwrap.dedent("""
    import os, sys, time
    sys.path.insert(0, {root!r})
    from inspector.core.runtime import atomic as export

    MID_WRITE, BEFORE_RENAME = {mid!r}, {before!r}
    real_fdopen, real_replace = os.fdopen, os.replace

    class SlowFile:
        def __init__(self, fh):
            self.fh = fh
        def __enter__(self):
            return self
        def __exit__(self, *exc):
            return self.fh.__exit__(*exc)
        def write(self, data):
            view = memoryview(data)
            for i in range(0, len(view), 4096):
                self.fh.write(view[i:i + 4096])
                self.fh.flush()
                if i == 16 * 4096 and MID_WRITE:
                    open(MID_WRITE, "w").close()
                    sys.stdin.buffer.read(1)  # blocks on the pipe the test never writes: killed here
            return len(view)
        def flush(self):
            self.fh.flush()
        def fileno(self):
            return self.fh.fileno()

    def slow_replace(src, dst):
        if BEFORE_RENAME and str(src).endswith(".tmp"):
            open(BEFORE_RENAME, "w").close()
            sys.stdin.buffer.read(1)  # blocks, killed here: data written and fsynced, not yet renamed
        return real_replace(src, dst)

    export.os.fdopen = lambda fd, mode="r", *a, **k: SlowFile(real_fdopen(fd, mode, *a, **k))
    export.os.replace = slow_replace
""")


def _start(tmp_path: Path, body: str, *, mid_write: bool) -> tuple[subprocess.Popen, Path]:
    marker = tmp_path / ("mid-write.flag" if mid_write else "before-rename.flag")
    script = tmp_path / "writer.py"
    script.write_text(CHILD_PRELUDE.format(root=str(ROOT), mid=str(marker) if mid_write else "",
                                           before="" if mid_write else str(marker)) + textwrap.dedent(body))
    # stdin: a pipe the test holds open and never writes, so the child blocks on it at its kill
    # point (a test that fails first closes it, and the child goes on and ends).
    proc = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return proc, marker


def _kill_when(proc: subprocess.Popen, marker: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not marker.exists():
        if proc.poll() is not None:
            _out, err = proc.communicate()
            raise AssertionError(f"writer ended before the kill (rc {proc.returncode}): {err.decode()}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("writer never reached the kill point")
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(timeout=30) == -signal.SIGKILL
    proc.stdin.close()  # type: ignore[union-attr]
    proc.stdout.close()  # type: ignore[union-attr]
    proc.stderr.close()  # type: ignore[union-attr]


def _temps(folder: Path, name: str) -> list[Path]:
    return sorted(folder.glob(f".{name}.*.tmp"))


OLD = b"old content, complete\n" * 1000
NEW_SIZE = 4 * 1024 * 1024


@pytest.mark.timeout(90)
@pytest.mark.parametrize("mid_write", [True, False], ids=["mid-write", "before-rename"])
def test_writer_killed_leaves_the_previous_file_intact(tmp_path, mid_write):
    work = tmp_path / "out"
    work.mkdir()
    target = work / "chunks.jsonl"
    target.write_bytes(OLD)
    proc, marker = _start(tmp_path, f"""
        export.atomic_write_bytes({str(target)!r}, b"N" * {NEW_SIZE})
    """, mid_write=mid_write)
    _kill_when(proc, marker)

    assert target.read_bytes() == OLD
    # What the killed writer left is a temporary file named so no reader takes it for the target.
    temps = _temps(work, target.name)
    assert len(temps) == 1 and sorted(work.iterdir()) == sorted([target, *temps])
    size = temps[0].stat().st_size
    if mid_write:
        assert 0 < size < NEW_SIZE  # the kill really landed inside the data
    else:
        assert size == NEW_SIZE

    # The next write succeeds next to the leftover and replaces the target whole.
    atomic_write_text(target, "new\n")
    assert target.read_text() == "new\n"


@pytest.mark.timeout(90)
def test_unslowed_huge_write_killed_at_any_moment_is_old_or_new_never_half(tmp_path):
    target = tmp_path / "big.bin"
    target.write_bytes(OLD)
    new = 64 * 1024 * 1024
    script = (f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
              "from inspector.core.runtime.atomic import atomic_write_bytes\n"
              f"atomic_write_bytes({str(target)!r}, b'N' * {new})\n")
    proc = subprocess.Popen([sys.executable, "-c", script])
    # Kill as soon as the temporary file exists: wherever the write is then, the target is whole.
    deadline = time.monotonic() + 60
    while not _temps(tmp_path, target.name) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.0005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    data = target.read_bytes()
    assert data == OLD or data == b"N" * new


def test_failed_write_removes_its_temp_file_and_keeps_the_target(tmp_path, monkeypatch):
    target = tmp_path / "gold.jsonl"
    target.write_bytes(OLD)

    def no_space(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", no_space)
    with pytest.raises(OSError, match="No space"):
        atomic_write_bytes(target, b"new")
    assert target.read_bytes() == OLD
    assert list(tmp_path.iterdir()) == [target]


def test_completed_write_leaves_no_temp_file(tmp_path):
    target = tmp_path / "sub" / "settings.json"
    atomic_write_text(target, "{}")
    atomic_write_text(target, '{"a": 1}')
    assert target.read_text() == '{"a": 1}'
    assert list(target.parent.iterdir()) == [target]


def test_streamed_write_publishes_all_pieces_or_nothing(tmp_path):
    target = tmp_path / "big.bin"
    target.write_bytes(OLD)
    with atomic_writer(target) as fh:
        for i in range(5):
            fh.write(bytes([i]) * 1000)
            assert target.read_bytes() == OLD  # nothing shows until the block ends
    assert target.read_bytes() == b"".join(bytes([i]) * 1000 for i in range(5))
    with pytest.raises(RuntimeError), atomic_writer(target) as fh:
        fh.write(b"half")
        raise RuntimeError("the source went away")
    assert target.read_bytes() == b"".join(bytes([i]) * 1000 for i in range(5))
    assert list(tmp_path.iterdir()) == [target]  # the temporary file is gone


# -- file modes -------------------------------------------------------------------------------------
# mkstemp makes its temporary file 0600, and the rename published that mode: a shared 0644 gold
# file became owner-only after one Quick Question (issue 26, item 4). A write keeps an existing
# file's mode and gives a new file what open() would, 0o666 less the umask.

@pytest.fixture
def umask():
    """Set the process umask for one test and put the old one back."""
    old = os.umask(0o022)
    yield lambda mask: os.umask(mask)
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _write_text(path: Path) -> None:
    atomic_write_text(path, "new\n")


def _write_streamed(path: Path) -> None:
    with atomic_writer(path) as fh:
        fh.write(b"new\n")


WRITERS = pytest.mark.parametrize("write", [_write_text, _write_streamed], ids=["whole", "streamed"])


@WRITERS
@pytest.mark.parametrize("mode", [0o644, 0o664, 0o600, 0o640, 0o755], ids=oct)
def test_a_rewritten_file_keeps_its_mode(tmp_path, umask, write, mode):
    umask(0o077)  # the umask is for new files only: an existing file keeps what it had
    target = tmp_path / "handbook.gold.jsonl"
    target.write_text("old\n")
    target.chmod(mode)
    write(target)
    assert target.read_text() == "new\n" and _mode(target) == mode


@WRITERS
@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077, 0o027], ids=oct)
def test_a_new_file_gets_the_umask(tmp_path, umask, write, mask):
    umask(mask)
    target = tmp_path / "sub" / "new.html"
    write(target)
    assert _mode(target) == 0o666 & ~mask
    with open(tmp_path / "plain", "w"):  # what a plain open() gives, for comparison
        pass
    assert _mode(target) == _mode(tmp_path / "plain")


def test_the_umask_is_read_as_set(umask):
    from inspector.core.runtime.atomic import current_umask

    for mask in (0o022, 0o002, 0o077, 0o000):
        umask(mask)
        assert current_umask() == mask
        assert os.umask(mask) == mask  # reading it left it as it was


def test_gold_audit_and_html_writers_keep_modes(tmp_path, umask):
    """The core writers behind Quick Question and Add Marked as Gold Questions (add_questions, its
    undo remove_question), the audit file and summary, and `inspector html`."""
    from inspector.cli import main
    from inspector.core.evaluation.audit import RELEVANT, Audit, export_summary, save_audit, summarize
    from inspector.core.evaluation.gold import GoldQuestion, add_questions, remove_question

    umask(0o022)
    gold = tmp_path / "handbook.gold.jsonl"
    gold.write_text('{"question": "Old?", "answer": "old", "source": "handbook.md"}\n')
    gold.chmod(0o664)
    q = GoldQuestion("New?", ("new",), "handbook.md")
    assert add_questions(gold, (q,)) == ("added",)
    assert _mode(gold) == 0o664
    assert remove_question(gold, q)
    assert _mode(gold) == 0o664
    fresh = tmp_path / "fresh.gold.jsonl"
    add_questions(fresh, (q,))
    assert _mode(fresh) == 0o644

    audit = Audit().judge("New?", ("handbook.md", 0, 10), RELEVANT)
    audit_file = tmp_path / "handbook.audit.jsonl"
    save_audit(audit_file, audit)
    assert _mode(audit_file) == 0o644
    audit_file.chmod(0o640)
    save_audit(audit_file, audit.judge("New?", ("handbook.md", 10, 20), RELEVANT))
    assert _mode(audit_file) == 0o640
    summary = tmp_path / "summary.csv"
    export_summary(summary, summarize(audit, {}, "cfg"))
    assert _mode(summary) == 0o644

    page = tmp_path / "handbook.html"
    args = ["html", str(ROOT / "sample_docs" / "handbook.md"), "--strategy", "fixed_chars", "-o", str(page)]
    assert main(args) == 0
    assert _mode(page) == 0o644
    page.chmod(0o604)
    assert main(args) == 0
    assert _mode(page) == 0o604


# -- the embedding cache ----------------------------------------------------------------------------

MAKE_FIRST = '[f"first batch sentence {i} about leave" for i in range(300)]'
MAKE_SECOND = '[f"second batch sentence {i} about refunds " * 3 for i in range(3000)]'
FIRST, SECOND = eval(MAKE_FIRST), eval(MAKE_SECOND)  # the child builds the same lists


@pytest.mark.timeout(120)
@pytest.mark.parametrize("mid_write", [True, False], ids=["mid-write", "before-rename"])
def test_cache_killed_mid_flush_loads_what_is_whole_and_recomputes_the_rest(tmp_path, mid_write):
    root = tmp_path / "cache"
    proc, marker = _start(tmp_path, f"""
        from inspector.core.embedding.cache import EmbeddingCache
        from inspector.core.embedding.embedder import HashEmbedder, embed_texts
        first = {MAKE_FIRST}
        second = {MAKE_SECOND}
        cache = EmbeddingCache({str(root)!r})
        # The first flush is let through (a complete segment), the second one is killed.
        slow_fdopen, slow_replace = export.os.fdopen, export.os.replace
        export.os.fdopen, export.os.replace = real_fdopen, real_replace
        embed_texts(HashEmbedder(), first, cache)
        export.os.fdopen, export.os.replace = slow_fdopen, slow_replace
        embed_texts(HashEmbedder(), second, cache)
    """, mid_write=mid_write)
    _kill_when(proc, marker)

    base = HashEmbedder()
    folder = EmbeddingCache(root).model_folder(cache_namespace(base))
    segments = sorted(folder.glob(f"*{SEGMENT_SUFFIX}"))
    leftovers = sorted(p for p in folder.iterdir() if p.suffix == ".tmp")
    assert len(segments) == 1 and len(leftovers) == 1  # the killed flush left only a temp file

    emb = Counting(base)
    cache = EmbeddingCache(root)
    out = embed_texts(emb, FIRST + SECOND, cache)
    np.testing.assert_allclose(out, base.encode(FIRST + SECOND), atol=1e-6)
    assert sorted(emb.texts) == sorted(SECOND)  # the first batch came from disk, the rest anew
    assert cache.damaged == 0  # a leftover temp file is not mistaken for a damaged segment

    again = Counting(base)
    embed_texts(again, FIRST + SECOND, EmbeddingCache(root))
    assert again.texts == []


def _one_segment(root: Path, texts: list[str]) -> Path:
    embed_texts(HashEmbedder(), texts, EmbeddingCache(root))
    folder = EmbeddingCache(root).model_folder(cache_namespace(HashEmbedder()))
    [seg] = sorted(folder.glob(f"*{SEGMENT_SUFFIX}"))
    return seg


TEXTS = [f"cached sentence {i} on topic {i % 5}" for i in range(50)]


def _rewrite_with(seg: Path, mutate) -> None:
    """Re-encode the segment after `mutate(keys, vectors)`: the checksums are valid again, so only
    the value checks stand between a bad vector and a search result."""
    keys, vecs, intact = decode_segment(seg.read_bytes(), HashEmbedder().dim)
    assert intact
    vecs = np.array(vecs)
    mutate(keys, vecs)
    seg.write_bytes(encode_segment(keys, vecs))


@pytest.mark.parametrize("damage", ["nan", "inf", "other_dimension", "huge_count", "garbage",
                                    "truncated_header"])
def test_corrupt_cache_entries_are_recomputed_never_trusted_never_fatal(tmp_path, damage):
    root = tmp_path / "cache"
    seg = _one_segment(root, TEXTS)
    data = seg.read_bytes()
    expected = {"nan": 2, "inf": 1, "other_dimension": len(TEXTS), "huge_count": 0, "garbage": len(TEXTS),
                "truncated_header": len(TEXTS)}[damage]
    if damage == "nan":
        _rewrite_with(seg, lambda k, v: v.__setitem__((slice(3, 5), 0), np.nan))
    elif damage == "inf":
        _rewrite_with(seg, lambda k, v: v.__setitem__((7, 1), np.inf))
    elif damage == "other_dimension":
        keys = [text_key(t) for t in TEXTS]
        seg.write_bytes(encode_segment(keys, np.ones((len(TEXTS), 8), np.float32)))
    elif damage == "huge_count":
        # The header claims 2**32 - 1 records (its checksum fixed up): the records present load.
        import struct
        import zlib

        head = data[:8] + struct.pack("<II", HashEmbedder().dim, 2**32 - 1)
        seg.write_bytes(head + struct.pack("<I", zlib.crc32(head)) + data[20:])
    elif damage == "garbage":
        seg.write_bytes(np.random.default_rng(0).bytes(len(data)))
    else:
        seg.write_bytes(data[:11])

    base = HashEmbedder()
    emb = Counting(base)
    out = embed_texts(emb, TEXTS, EmbeddingCache(root))
    np.testing.assert_allclose(out, base.encode(TEXTS), atol=1e-6)
    assert np.isfinite(out).all()
    assert len(emb.texts) == expected
    # Repaired for the next reader.
    again = Counting(base)
    embed_texts(again, TEXTS, EmbeddingCache(root))
    assert again.texts == []


# -- no other writer --------------------------------------------------------------------------------

#: Modules allowed to write files directly, with the reason.
DIRECT_WRITERS = {
    "inspector/core/runtime/atomic.py": "the atomic writer itself",
    "inspector/qt/screenshots.py": "developer tool: README screenshots (QPixmap.save), not user data",
    "inspector/core/embedding/openvino_backend.py": "a converted model: OpenVINO writes it into a "
                                                    "temporary folder, published whole by one rename",
    "inspector/core/embedding/static_model.py": "a built static model: saved into a temporary folder, "
                                                "published whole by one rename",
    "inspector/core/runtime/offload.py": "a transient file handing a long text to the helper process, read once "
                                 "and removed when the call is over: not user data",
}
WRITE_MODES = set("wax+")
WRITING_CALLS = {"write_text", "write_bytes", "save", "savez", "savez_compressed", "savetxt", "tofile",
                 "dump", "copy", "copy2", "copyfile", "copyfileobj", "move", "rename", "replace",
                 "mkstemp", "NamedTemporaryFile", "QSaveFile"}


def _mode_of(call: ast.Call) -> str:
    for kw in call.keywords:
        if kw.arg == "mode" and isinstance(kw.value, ast.Constant):
            return str(kw.value.value)
    if len(call.args) >= 2 and isinstance(call.args[1], ast.Constant):
        return str(call.args[1].value)
    return "r"


def _in_memory_buffers(tree: ast.AST) -> set[str]:
    """Names assigned from io.BytesIO()/io.StringIO(): writing into those writes no file."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            f = node.value.func
            if (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")) in ("BytesIO", "StringIO"):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def direct_writes(source: str) -> list[tuple[int, str]]:
    """(line, what) for every call in `source` that writes a file other than through export."""
    found = []
    tree = ast.parse(source)
    buffers = _in_memory_buffers(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
        args = [a.id for a in node.args if isinstance(a, ast.Name)]
        if set(args) & buffers:
            continue  # np.savez(buf, ...), json.dump(obj, buf): memory, not disk
        if name in ("open", "fdopen") and owner in ("", "io", "os", "codecs", "gzip", "bz2", "lzma"):
            if owner == "os" and name == "open":
                first = node.args[0] if node.args else None
                if not (isinstance(first, ast.Attribute) and first.attr == "devnull"):
                    found.append((node.lineno, "os.open"))
            elif set(_mode_of(node)) & WRITE_MODES:
                found.append((node.lineno, f"{name}(..., {_mode_of(node)!r})"))
        elif name == "replace" and owner not in ("os", "shutil"):
            continue  # str.replace, dataclasses.replace
        elif name == "dump" and owner not in ("json", "pickle", "marshal", "yaml", "np", "numpy"):
            continue
        elif name in ("copy", "move") and owner != "shutil":
            continue
        elif name == "rename" and owner != "os":
            continue
        elif name in WRITING_CALLS:
            found.append((node.lineno, f"{owner + '.' if owner else ''}{name}(...)"))
    for node in ast.walk(ast.parse(source)):
        # QFile.open(QIODevice.WriteOnly) and friends.
        if isinstance(node, ast.Attribute) and node.attr in ("WriteOnly", "ReadWrite", "Append", "Truncate"):
            found.append((node.lineno, f"QIODevice.{node.attr}"))
    return sorted(set(found))


def test_the_scan_finds_direct_writes():
    code = textwrap.dedent("""
        from pathlib import Path
        import json, os, numpy as np
        Path("a").write_text("x")
        open("b", "w").write("x")
        open("c", mode="ab")
        with open("d") as fh: json.dump({}, fh)
        np.save("e", [1])
        os.replace("f", "g")
        fd = os.open("h", os.O_WRONLY)
        "abc".replace("a", "b"); open("i").read()
        buf = io.BytesIO(); np.savez(buf, a=1); os.open(os.devnull, os.O_WRONLY)
    """)
    assert [w for _l, w in direct_writes(code)] == [
        "write_text(...)", "open(..., 'w')", "open(..., 'ab')",
        "json.dump(...)", "np.save(...)", "os.replace(...)", "os.open"]


def test_every_file_the_app_writes_goes_through_the_atomic_writer():
    offenders = []
    for path in sorted((ROOT / "inspector").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in DIRECT_WRITERS:
            continue
        for line, what in direct_writes(path.read_text(encoding="utf-8")):
            offenders.append(f"{rel}:{line}: {what}")
    assert offenders == [], "write through inspector.core.runtime.atomic.atomic_write_bytes/text instead"
