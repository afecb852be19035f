"""Loading: encodings, newline normalization, binary and size rejection, folders."""

from __future__ import annotations

import codecs

import pytest

from inspector.core.documents.document import from_text, load_document, load_paths
from inspector.core.errors import InputError


@pytest.mark.parametrize("data,expected", [
    ("Grüße € 🚀\n".encode(), "Grüße € 🚀\n"),
    (codecs.BOM_UTF8 + "Grüße\n".encode(), "Grüße\n"),
    ("Grüße\n".encode("utf-16"), "Grüße\n"),
    ("Grüße\n".encode("utf-16-le"), "Grüße\n"),
    ("Grüße\n".encode("utf-16-be"), "Grüße\n"),
    ("Le café est très chaud. Ça coûte 3 € à Paris, près de la gare.\n".encode("cp1252"),
     "Le café est très chaud. Ça coûte 3 € à Paris, près de la gare.\n"),
    (b"a\r\nb\rc\n", "a\nb\nc\n"),
])
def test_encodings_and_newlines(tmp_path, data, expected):
    p = tmp_path / "doc.md"
    p.write_bytes(data)
    assert load_document(p).text == expected


@pytest.mark.parametrize("data,reason", [
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "PNG"),
    (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "PDF"),
    (b"abc\x00\x01\x02\x03\x00\xff\xfe\x00\x10binary", "NUL"),
])
def test_binary_files_are_rejected_with_the_file_named(tmp_path, data, reason):
    p = tmp_path / "blob.md"
    p.write_bytes(data)
    with pytest.raises(InputError) as err:
        load_document(p)
    assert "blob.md" in err.value.one_line() and reason in err.value.one_line()


def test_size_limit(tmp_path):
    p = tmp_path / "big.txt"
    p.write_text("x" * 2000)
    with pytest.raises(InputError, match="over the"):
        load_document(p, max_bytes=1000)


def test_missing_file_and_folder_given_as_file(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_document(tmp_path / "nope.md")
    with pytest.raises(InputError, match="folder"):
        load_document(tmp_path)


def test_folder_loads_supported_files_and_reports_bad_ones(tmp_path):
    (tmp_path / "a.md").write_text("# A\n\ntext")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.txt").write_text("plain")
    (tmp_path / "c.md").write_bytes(b"\x00\x01\x02\x00binary\x00")
    (tmp_path / "ignored.png").write_bytes(b"\x89PNG")
    res = load_paths([tmp_path])
    assert [d.doc_id for d in res.documents] == ["a.md", "sub/b.txt"]
    assert [d.kind for d in res.documents] == ["markdown", "text"]
    assert len(res.problems) == 1 and "c.md" in res.problems[0].one_line()


def test_in_memory_document_hash_is_content():
    assert from_text("abc").sha256 == from_text("abc", "other.md").sha256
    assert from_text("abc").sha256 != from_text("abd").sha256


def test_a_documents_hash_is_computed_once_whatever_its_size(monkeypatch):
    """The hash is the key of every per-document cache and is asked for on every lookup: a 20 MB
    text costs 50-300 ms to hash, so it is computed once and kept on the document (a character-
    budgeted cache of hashes once held none for documents over its budget: every lookup re-hashed
    them, a 338 ms GUI pause on opening a 20 MB document)."""
    import dataclasses
    import pickle

    from inspector.core.documents import document as document_module

    calls = []
    real = document_module.sha256_text

    def counting(text):
        calls.append(len(text))
        return real(text)

    monkeypatch.setattr(document_module, "sha256_text", counting)
    doc = from_text("# Big\n\n" + "word " * 4_000_000, "big.md")  # 20 M characters
    digests = {doc.sha256, doc.sha256, hash(doc) and doc.sha256}
    assert len(digests) == 1 and calls == [len(doc.text)]
    again = from_text(doc.text, "big.md")
    assert again == doc and again.sha256 == doc.sha256 and len(calls) == 2  # equal, hashed on its own
    assert pickle.loads(pickle.dumps(doc)).sha256 == doc.sha256
    renamed = dataclasses.replace(doc, name="other.md")
    assert renamed.sha256 == doc.sha256 and renamed != doc
