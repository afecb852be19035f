"""A file that is not UTF-8 is read in a guessed legacy encoding, and the guess is never silent: the
Document's meta records the encoding and where the first byte that is not UTF-8 lies (line and
column of the text as loaded), the CLI's `chunks`, `eval` and `ask` print it on stderr naming the
file, and `--encoding NAME` forces a codec (an unknown one is a one-line error, exit 2)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inspector.cli import main
from inspector.core.documents.document import load_document
from inspector.core.documents.encoding import canonical_codec, decode, place_byte
from inspector.core.errors import InputError

#: The three byte cases: (bytes, line, column) of the first byte that is not UTF-8.
CASES = {
    "latin-1 é": (b"# Menu\n\nToday:\ncrepe \xe9 la carte.\n", 4, 7),
    "stray 0xFF 0xFE": (b"# Notes\n\nSome text.\nA line \xff\xfe with junk.\n", 4, 8),
    "broken two-byte sequence": (b"# Notes\n\nA line.\nAnother caf\xc3( line here.\n", 4, 12),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_guess_is_recorded_with_line_and_column(case, tmp_path):
    data, line, column = CASES[case]
    path = tmp_path / "doc.md"
    path.write_bytes(data)
    doc = load_document(path)
    assert doc.encoding not in ("utf-8", "utf-8-sig")
    assert doc.text == data.decode(doc.encoding)  # the guess is what was used, byte for byte
    meta = doc.meta["decoded_as"]
    assert (meta["encoding"], meta["line"], meta["column"]) == (doc.encoding, line, column)
    assert meta["offset"] == data.index(bytes([meta["byte"]]), 0) and meta["byte"] >= 0x80
    # The column points at the character the bad byte became in the loaded text.
    lines = doc.text.split("\n")
    assert lines[line - 1][column - 1] == data[meta["offset"]:meta["offset"] + 1].decode(doc.encoding)
    assert doc.text[meta["char_offset"]] == lines[line - 1][column - 1]
    assert doc.meta["warnings"] == (f"Read as {doc.encoding}: not valid UTF-8 at line {line}, column {column}",)


@pytest.mark.parametrize("case", list(CASES))
def test_cli_chunks_and_ask_name_the_file_the_encoding_and_the_line(case, tmp_path, capsys):
    data, line, column = CASES[case]
    path = tmp_path / "doc.md"
    path.write_bytes(data)
    enc = load_document(path).encoding
    expected = f"warning: doc.md: Read as {enc}: not valid UTF-8 at line {line}, column {column}"
    for argv in (["chunks", str(path)], ["ask", str(path), "-q", "what is on the menu?", "--retriever", "bm25"]):
        capsys.readouterr()
        assert main(argv) == 0
        assert expected in capsys.readouterr().err.splitlines()


def test_cli_eval_warns_too(tmp_path, capsys):
    data, line, column = CASES["latin-1 é"]
    path = tmp_path / "doc.md"
    path.write_bytes(data)
    gold = tmp_path / "doc.gold.jsonl"
    gold.write_text('{"question": "What is on the menu today?", "answer": "la carte"}\n', encoding="utf-8")
    assert main(["eval", str(path), "--gold", str(gold), "--retriever", "bm25"]) == 0
    err = capsys.readouterr().err
    assert f"doc.md: Read as {load_document(path).encoding}: not valid UTF-8 at line {line}, column {column}" in err


def test_utf8_and_bom_files_carry_no_note(tmp_path):
    for data in ("Caf\u00e9 cr\u00e8me\n".encode("utf-8"), "\ufeffCaf\u00e9\n".encode("utf-8"),
                 "Caf\u00e9\n".encode("utf-16")):
        path = tmp_path / "ok.md"
        path.write_bytes(data)
        assert "decoded_as" not in load_document(path).meta and "warnings" not in load_document(path).meta


def test_forcing_an_encoding(tmp_path, capsys):
    path = tmp_path / "doc.md"
    path.write_bytes(CASES["latin-1 é"][0])
    doc = load_document(path, encoding="latin-1")
    assert doc.encoding == "iso8859-1" and "crepe \u00e9 la" in doc.text and "warnings" not in doc.meta
    capsys.readouterr()
    assert main(["chunks", str(path), "--encoding", "latin-1"]) == 0
    assert capsys.readouterr().err == ""  # forced: nothing was guessed
    # A codec that cannot read the bytes names the line and column.
    assert main(["chunks", str(path), "--encoding", "utf-8"]) == 2
    assert capsys.readouterr().err == f"error: {path}:4: not valid utf-8 (byte 0xe9) at column 7\n"
    # An unknown codec: one line, exit 2, before anything is read.
    for cmd in (["chunks", str(path)], ["ask", str(path), "-q", "x"], ["eval", str(path), "--gold", "g.jsonl"]):
        assert main([*cmd, "--encoding", "klingon"]) == 2
        assert capsys.readouterr().err == "error: --encoding: unknown encoding 'klingon'\n"


def test_a_forced_utf8_drops_the_bom_and_binary_stays_refused(tmp_path):
    path = tmp_path / "doc.md"
    path.write_bytes(b"\xef\xbb\xbf# Title\n")
    assert load_document(path, encoding="utf-8").text == "# Title\n"
    path.write_bytes(b"%PDF-1.4\n\x00\x01")
    with pytest.raises(InputError, match="binary"):
        load_document(path, encoding="latin-1")


def test_codec_names():
    assert canonical_codec("Latin-1") == "iso8859-1" and canonical_codec("CP1252") == "cp1252"
    for bad in ("klingon", "rot13", "base64"):
        with pytest.raises(ValueError):
            canonical_codec(bad)


@given(prefix=st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40))
def test_the_place_of_a_byte_agrees_with_the_loaded_text(prefix):
    """Whatever precedes the bad byte (any line breaks, CRLF, astral characters), line and column
    name the same character as the offset into the text with newlines normalized."""
    data = prefix.encode("utf-8") + b"\xff rest"
    inv = place_byte(data, len(prefix.encode("utf-8")), "latin-1")
    text = data.decode("latin-1").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    assert text[inv.char_offset] == "\xff" == lines[inv.line - 1][inv.column - 1]


def test_decode_reports_the_first_invalid_byte_not_a_later_one():
    d = decode(b"ok\n\xe9 one\n\xe8 two\n")
    assert d.invalid is not None and (d.invalid.line, d.invalid.column) == (2, 1)


@given(st.lists(st.sampled_from([b"a", b"\n", b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\xe9", b"\xff"]),
                max_size=400), st.integers(1, 64))
def test_the_damage_check_reads_windows_that_split_no_character(pieces, window):
    """`_damaged_utf8` runs its regex a window at a time (`slices.line_windows`; one call over
    2.8 MB held the GIL for 130 ms): the windows cover the bytes in order, end after a newline
    (never inside a character), and find what one call over the whole finds."""
    from inspector.core.documents import encoding
    from inspector.core.runtime.slices import line_windows

    data = b"".join(pieces)
    windows = [bytes(w) for w in line_windows(data, window)]
    assert b"".join(windows) == data
    assert all(w.endswith(b"\n") for w in windows[:-1])
    found = [m for w in windows for m in encoding._UTF8_MULTIBYTE.findall(w)]
    assert found == encoding._UTF8_MULTIBYTE.findall(data)


def test_only_files_whose_encoding_is_guessed_need_guessing():
    from inspector.core.documents.encoding import may_need_guessing

    assert may_need_guessing(CASES["latin-1 é"][0]) and may_need_guessing(b"caf\xe9")
    for data in (b"plain ASCII\n", "Grüße €\n".encode(), b"\xef\xbb\xbfwith a BOM \xe9",
                 "utf-16 with a BOM".encode("utf-16"), "ascii as utf-16 without a BOM".encode("utf-16-le"), b""):
        assert not may_need_guessing(data), data
