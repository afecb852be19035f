"""Bad inputs: each one gets a clear answer, none a traceback, none a hang.

Either the input is handled correctly (exit 0 and sensible output: UTF-16 decoded, newlines
normalized, every strategy chunking a 10,000-row table or a 1 MB line) or the CLI exits 2 with ONE
line on stderr naming the file, the line where it applies, and the problem.

Small fixtures live in tests/data/bad/ (the window's tests reuse them); big ones are generated
once per module. `check_spans` is the span contract every strategy keeps on every loadable input.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from inspector.cli import main
from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.registry import BUILTINS, chunk_document, strategies
from inspector.core.documents.document import Document, load_document, load_paths
from inspector.core.errors import InputError
from inspector.core.text.tokens import count_text

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad"
GOLD = BAD / "gold"
GOLD_DOC = GOLD / "doc.md"


# -- helpers shared with the other reliability tests ---------------------------------------------

def chunkers() -> list[str]:
    """Every built-in strategy that runs without an embedding model. (Wrappers of third-party
    splitters, registered when the CLI loads them, keep those splitters' own rules, e.g. LangChain's
    header splitter drops the header lines, and would make the list depend on test order.)"""
    return sorted(name for name, s in strategies().items()
                  if not s.needs_embedder and s in BUILTINS)


def _non_space_mask(text: str) -> np.ndarray:
    if not text:
        return np.zeros(0, dtype=bool)
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    uniq = np.unique(cps)
    ws = np.array([c for c in uniq.tolist() if chr(c).isspace()], dtype=np.uint32)
    return ~np.isin(cps, ws)


def check_spans(doc: Document, chunks: tuple[Chunk, ...], *, recount: int | None = None) -> None:
    """The span contract: ids in order, spans in bounds and sorted per role, never blank, covering
    every non-whitespace character, token counts exact (all, or `recount` sampled), and at most
    2 chunks per character plus 1."""
    text = doc.text
    n = len(text)
    assert len(chunks) <= 2 * n + 1
    assert [c.id for c in chunks] == list(range(len(chunks)))
    for c in chunks:
        assert 0 <= c.start < c.end <= n, (c.start, c.end, n)
        assert not text[c.start:c.end].isspace()
    must = _non_space_mask(text)
    for role in {c.role for c in chunks}:
        group = [c for c in chunks if c.role == role]
        starts = [c.start for c in group]
        assert starts == sorted(starts), f"{role} spans out of order"
        diff = np.zeros(n + 1, dtype=np.int64)
        np.add.at(diff, [c.start for c in group], 1)
        np.add.at(diff, [c.end for c in group], -1)
        covered = np.cumsum(diff[:-1]) > 0
        missed = np.flatnonzero(must & ~covered)
        assert missed.size == 0, f"{role}s leave {missed.size} characters uncovered, first at {missed[:3]}"
    if not chunks and n:
        assert not must.any(), "no chunks for a text with content"
    sample = chunks if recount is None else chunks[:: max(1, len(chunks) // recount)]
    for c in sample:
        assert c.token_count == count_text(text[c.start:c.end])


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    rc = main([str(a) for a in args])
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def assert_one_line_error(rc: int, err: str, *needles: str) -> str:
    """Exit status 2, exactly one line on stderr, starting "error: ", holding every needle."""
    assert rc == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines
    line = lines[0]
    assert line.startswith("error: "), line
    for needle in needles:
        assert needle in line, (needle, line)
    return line


def _records(out: str) -> list[dict]:
    # Split on "\n" only: a chunk may hold U+2028 or U+0085, which str.splitlines() breaks at.
    return [json.loads(x) for x in out.split("\n") if x.strip()]


# -- loadable bad documents -------------------------------------------------------------------------

UNICODE_BODY = "# Ünïcode 🚀\n\nHello wörld. Second sentence.\n"

#: File in tests/data/bad -> the text it must decode to (newlines normalized); None: its UTF-8
#: bytes exactly, decoded.
LOADABLE: dict[str, str | None] = {
    "utf16le_bom.md": UNICODE_BODY,
    "utf16be_bom.md": UNICODE_BODY,
    "utf16be_nobom.md": UNICODE_BODY,
    "utf16le_nobom_ascii.md": "# Plain ASCII\n\nOnly ASCII text here, in UTF-16 without a BOM.\n",
    "utf8_bom.md": "# Title\n\nText after a BOM.\n",
    "bom_only.md": "",
    "latin1.md": "# Café crème\n\nLe garçon a mangé une pâtisserie très élégante à Noël.\n",
    "cp1252_quotes.txt": "It\u2019s \u201cquoted\u201d \u2014 and costs \u20ac5.\n",
    "empty.md": "",
    "whitespace_only.md": "  \n\n\t \n   \n",
    "crlf.md": "# Title\n\nLine one.\nLine two.\n\n- a\n- b\n",
    "cr_only.md": "# Title\n\nLine one.\nLine two.\n\n- a\n- b\n",
    # Only CR is a line break to normalize; U+2028/2029/0085 stay as they are (offsets!).
    "mixed_newlines.md": "# Title\n\nOne.\nTwo.\nThree\u2028four\u2029five.\x85six.\n",
    "rtl_emoji_combining.md": None,
    "unclosed_fence.md": None,
    "front_matter_only.md": None,
    "nested_list_50.md": None,
    "nested_quote_50.md": None,
    "html_script.md": None,
}


#: What `chunks` prints on stderr for the files whose encoding is guessed (they are not UTF-8).
GUESSED = {
    "latin1.md": "warning: latin1.md: Read as {enc}: not valid UTF-8 at line 1, column 6\n",
    "cp1252_quotes.txt": "warning: cp1252_quotes.txt: Read as cp1252: not valid UTF-8 at line 1, column 3\n",
}
GUESSED["latin1.md"] = GUESSED["latin1.md"].format(enc=load_document(BAD / "latin1.md").encoding)


def _expected_text(name: str) -> str:
    expected = LOADABLE[name]
    return (BAD / name).read_bytes().decode("utf-8") if expected is None else expected


@pytest.mark.parametrize("name", sorted(LOADABLE))
def test_loadable_bad_file_decodes_to_the_right_text(name):
    doc = load_document(BAD / name)
    assert doc.text == _expected_text(name)
    assert "\r" not in doc.text
    if name.startswith("utf16"):
        assert doc.encoding.startswith("utf-16")


@pytest.mark.parametrize("name", sorted(LOADABLE))
def test_every_strategy_keeps_the_span_contract_on_bad_files(name):
    doc = load_document(BAD / name)
    for strategy in chunkers():
        check_spans(doc, chunk_document(doc, strategy))


@pytest.mark.parametrize("name", sorted(LOADABLE))
def test_cli_chunks_bad_file_exactly(capsys, name):
    rc, out, err = run_cli(capsys, "chunks", BAD / name, "--format", "jsonl")
    assert rc == 0, err
    # A legacy encoding that had to be guessed is announced on stderr, naming file and line.
    assert err == GUESSED.get(name, "")
    text = _expected_text(name)
    recs = _records(out)
    for r in recs:
        m = r["metadata"]
        assert text[m["start_index"]:m["end_index"]] == r["page_content"]
        assert "\r" not in r["page_content"]
    if text.strip():
        assert recs, "a document with content gave no chunks"
    else:
        assert recs == []


def test_empty_and_blank_files_report_zero_chunks(capsys):
    for name in ("empty.md", "whitespace_only.md", "bom_only.md"):
        rc, out, err = run_cli(capsys, "chunks", BAD / name)
        assert rc == 0 and err == ""
        assert out.strip().splitlines()[-1].startswith("0 chunks")


def test_unclosed_fence_runs_to_the_end_and_hides_no_heading():
    doc = load_document(BAD / "unclosed_fence.md")
    from inspector.core.text.structure import structure_of

    s = structure_of(doc)
    code = [b for b in s.blocks if b.kind == "code"]
    assert len(code) == 1 and doc.text[code[0].start:code[0].end].endswith("After, still code.")
    assert [h.title for h in s.headings] == ["Code"]  # "# not a heading" is inside the fence


def test_front_matter_only_gives_its_title_and_one_chunk():
    doc = load_document(BAD / "front_matter_only.md")
    from inspector.core.text.structure import structure_of

    assert structure_of(doc).title == "Only Front Matter"
    [c] = chunk_document(doc, "markdown")
    assert doc.text[c.start:c.end] == doc.text.strip()


# -- rejected bad documents -------------------------------------------------------------------------

#: File in tests/data/bad -> (line the error names or None, what it says).
REJECTED: dict[str, tuple[int | None, str]] = {
    "image.png": (None, "binary file (a PNG image)"),
    "image_named.md": (None, "binary file (a PNG image)"),
    "pdf_bytes.md": (None, "binary file (PDF bytes)"),
    "truncated.pdf": (None, "PDF"),
    "nul_bytes.md": (None, "binary file (contains NUL bytes)"),
    "invalid_utf8.md": (4, "invalid UTF-8 (byte 0xff"),
}


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_rejected_file_raises_input_error_naming_file_and_line(name):
    line, needle = REJECTED[name]
    with pytest.raises(InputError) as info:
        load_document(BAD / name)
    assert info.value.path == str(BAD / name)
    assert info.value.line == line
    assert needle in info.value.problem


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_cli_rejects_bad_file_in_one_line(capsys, name):
    line, needle = REJECTED[name]
    where = f"{BAD / name}:{line}:" if line else f"{BAD / name}:"
    rc, out, err = run_cli(capsys, "chunks", BAD / name)
    assert_one_line_error(rc, err, where, needle)
    assert out == ""


def test_file_over_the_size_limit_is_refused_without_reading(tmp_path, capsys):
    big = tmp_path / "huge.md"
    with open(big, "wb") as fh:
        fh.truncate(60 * 1024 * 1024)  # sparse: nothing is written, nothing should be read
    rc, _out, err = run_cli(capsys, "chunks", big)
    assert_one_line_error(rc, err, str(big), "over the 50 MB limit")


@pytest.mark.timeout(60)
def test_device_is_refused_not_read_forever(tmp_path, capsys):
    zero = tmp_path / "zero.md"
    zero.symlink_to("/dev/zero")  # reading it never ends
    rc, _out, err = run_cli(capsys, "chunks", zero)
    assert_one_line_error(rc, err, str(zero), "not a regular file")


@pytest.mark.timeout(60)
def test_a_named_pipe_given_by_name_is_read_like_process_substitution(tmp_path, capsys):
    """`chunk-inspector chunks <(cat doc.md)` hands over a pipe: read it, up to the size limit."""
    import threading

    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)

    def writer(payload: bytes) -> None:
        with open(fifo, "wb") as fh:
            fh.write(payload)

    t = threading.Thread(target=writer, args=(b"# Piped\n\nText through a pipe.\n",))
    t.start()
    rc, out, err = run_cli(capsys, "chunks", fifo, "--format", "jsonl")
    t.join(10)
    assert rc == 0, err
    assert [r["page_content"] for r in _records(out)] == ["# Piped\n\nText through a pipe."]

    t = threading.Thread(target=writer, args=(b"x" * 2048,))
    t.start()
    with pytest.raises(InputError, match="from a pipe, over the"):
        load_document(fifo, max_bytes=1024)  # the rest is never read: bounded by the limit
    t.join(10)


def test_missing_file_and_dangling_link_are_named(tmp_path, capsys):
    link = tmp_path / "dangling.md"
    link.symlink_to(tmp_path / "nowhere.md")
    for p in (tmp_path / "missing.md", link):
        rc, _out, err = run_cli(capsys, "chunks", p)
        assert_one_line_error(rc, err, str(p), "no such file")


def _mixed_folder(root: Path, monkeypatch) -> dict[str, str]:
    """A folder of good files with unreadable ones mixed in; returns bad file -> expected problem."""
    root.mkdir()
    (root / "good.md").write_text("# Good\n\nSome text.\n", encoding="utf-8")
    (root / "named_like_a_file.md").mkdir()  # a folder called *.md is walked, not read
    (root / "named_like_a_file.md" / "inner.md").write_text("# Inner\n\nInner text.\n", encoding="utf-8")
    (root / "dangling.md").symlink_to(root / "gone.md")
    os.mkfifo(root / "pipe.md")
    (root / "image.md").write_bytes((BAD / "image_named.md").read_bytes())
    (root / "broken.md").write_bytes((BAD / "invalid_utf8.md").read_bytes())
    locked = root / "locked.md"
    locked.write_text("# Locked\n\nsecret\n", encoding="utf-8")
    # Tests run as root, so chmod 000 would not stop the read: refuse it where the loader reads.
    real_read = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.name == "locked.md":
            raise PermissionError(13, "Permission denied", str(self))
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    return {"dangling.md": "no such file", "pipe.md": "a named pipe, not a regular file",
            "image.md": "binary file (a PNG image)", "broken.md": ":4: invalid UTF-8",
            "locked.md": "cannot read: Permission denied"}


@pytest.mark.timeout(60)
def test_folder_with_unreadable_files_loads_the_rest_and_names_each_problem(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "corpus"
    bad = _mixed_folder(folder, monkeypatch)
    loaded = load_paths([folder])
    inner = os.path.join("named_like_a_file.md", "inner.md")
    assert [d.doc_id for d in loaded.documents] == ["good.md", inner]
    problems = {Path(p.path).name: p.one_line() for p in loaded.problems}
    assert set(problems) == set(bad)
    for name, needle in bad.items():
        assert needle in problems[name]

    rc, out, err = run_cli(capsys, "chunks", folder, "--format", "jsonl")
    assert rc == 0
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == len(bad)
    for name, needle in bad.items():
        [line] = [x for x in lines if f"{folder / name}" in x]
        assert line.startswith("warning: ") and needle in line
    assert {r["metadata"]["doc_id"] for r in _records(out)} == {d.doc_id for d in loaded.documents}


@pytest.mark.timeout(60)
def test_folder_of_only_bad_files_fails_naming_every_file(tmp_path, capsys):
    folder = tmp_path / "allbad"
    folder.mkdir()
    for name in ("image_named.md", "nul_bytes.md", "invalid_utf8.md"):
        (folder / name).write_bytes((BAD / name).read_bytes())
    os.mkfifo(folder / "pipe.md")
    rc, out, err = run_cli(capsys, "chunks", folder)
    assert rc == 2 and out == "" and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 5
    assert all(str(folder) in x for x in lines), lines
    assert lines[-1] == f"error: no document could be loaded from {folder}"


def test_folder_without_documents_is_named(tmp_path, capsys):
    (tmp_path / "notes.rst").write_text("not a supported suffix\n", encoding="utf-8")
    rc, _out, err = run_cli(capsys, "chunks", tmp_path)
    assert rc == 2 and "Traceback" not in err
    assert f"warning: {tmp_path}: folder holds no" in err
    assert err.strip().splitlines()[-1].startswith("error: no document could be loaded")


# -- big inputs -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def big_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("big")
    (d / "one_line.md").write_text("x" * 1_000_000, encoding="utf-8")
    rows = "".join(f"| {i} | item {i} | {i * 3.5} |\n" for i in range(10_000))
    (d / "table.md").write_text("# Table\n\n| id | name | value |\n|---|---|---|\n" + rows, encoding="utf-8")
    return d


@pytest.mark.timeout(120)
def test_one_megabyte_line_without_spaces_is_chunked_by_every_strategy(big_dir):
    doc = load_document(big_dir / "one_line.md")
    assert len(doc.text) == 1_000_000
    for strategy in chunkers():
        chunks = chunk_document(doc, strategy)
        check_spans(doc, chunks, recount=50)
        if strategy != "paragraph":  # one paragraph is the paragraph strategy's honest answer
            assert len(chunks) > 1


@pytest.mark.timeout(120)
def test_ten_thousand_row_table_is_chunked_by_every_strategy(big_dir):
    doc = load_document(big_dir / "table.md")
    for strategy in chunkers():
        check_spans(doc, chunk_document(doc, strategy), recount=50)
    header = "| id | name | value |\n|---|---|---|"
    chunks = chunk_document(doc, "markdown")
    assert len(chunks) > 100
    for c in chunks[1:]:
        body = doc.text[c.start:c.end]
        # Split between rows, never inside one, the header carried in every later piece's prefix.
        assert body.startswith("| ") and body.endswith(" |")
        assert "split_table" in c.flags and c.prefix.endswith(header)


@pytest.mark.timeout(60)
def test_cli_on_the_big_table_stops_quietly_when_the_reader_leaves(big_dir):
    """`chunks table.md | head`: a closed pipe ends the command with status 0 and no message."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "inspector", "chunks", str(big_dir / "table.md"),
                             "--strategy", "fixed_chars", "--size", "20", "--format", "jsonl"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(100)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=50) == 0, err
    assert err == ""


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_twenty_megabyte_document_loads_and_chunks(tmp_path):
    para = ("Parental leave rules apply to employees in Germany and France, with benefits paid for "
            "fourteen months. ") * 4
    section = "## Section {i}\n\n" + (para + "\n\n") * 5
    parts, size, i = [], 0, 0
    while size < 20_000_000:
        s = section.format(i=i)
        parts.append(s)
        size += len(s)
        i += 1
    path = tmp_path / "big20.md"
    path.write_text("".join(parts), encoding="utf-8")
    doc = load_document(path)
    assert len(doc.text) >= 20_000_000
    chunks = chunk_document(doc, "markdown")
    check_spans(doc, chunks, recount=100)
    assert chunks[-1].heading_path == (f"Section {i - 1}",)


# -- gold sets -------------------------------------------------------------------------------------

#: File in tests/data/bad/gold -> (line the error names or None, what it says).
BAD_GOLD: dict[str, tuple[int | None, str]] = {
    "broken_json_line3.jsonl": (3, "broken JSON"),
    "missing_question.jsonl": (2, "field 'question': missing"),
    "question_not_string.jsonl": (2, "field 'question': must be a string, got a number"),
    "answer_wrong_type.jsonl": (2, "field 'answer': must be a string or a list of strings"),
    "answer_list_item_wrong_type.jsonl": (2, "field 'answer[1]': must be a string"),
    "empty_answer.jsonl": (2, "field 'answer': empty answer"),
    "empty_answer_list.jsonl": (2, "field 'answer': empty list of answers"),
    "missing_answer.jsonl": (2, "field 'answer': missing"),
    "reference_out_of_range.jsonl": (2, "out of range"),
    "reference_negative.jsonl": (2, "out of range"),
    "reference_reversed.jsonl": (2, "must be smaller than end"),
    "reference_not_number.jsonl": (2, "'start' must be a whole number"),
    "unknown_source.jsonl": (2, "field 'source': unknown document 'nope.md'"),
    "not_an_object.jsonl": (2, "expected a JSON object, got a list"),
    "no_questions.jsonl": (None, "holds no questions"),
    "wrong_header.csv": (1, "CSV header must be"),
    "wrong_column_count.csv": (3, "expected 2 columns, got 3"),
    "unknown_source.csv": (3, "field 'source': unknown document 'nope.md'"),
    "chroma_unknown_corpus.csv": (2, "field 'corpus_id': unknown document 'nope'"),
    "chroma_broken_json.csv": (2, "field 'references': broken JSON"),
    "chroma_out_of_range.csv": (2, "out of range"),
    "unsupported.txt": (None, "unsupported gold file type '.txt'"),
}

OK_GOLD = ("ok_crlf.jsonl", "ok_utf16.jsonl", "ok_bom.csv")


def _load_gold(path: Path):
    from inspector.core.evaluation.gold import load_gold

    return load_gold(path, [load_document(GOLD_DOC)])


def _eval_args(gold: Path) -> list:
    return ["eval", GOLD_DOC, "--gold", gold, "--embedder", "hash", "--retriever", "bm25"]


@pytest.fixture
def eval_cli():
    pytest.importorskip("inspector.cli.evaluate")


@pytest.mark.parametrize("name", sorted(BAD_GOLD))
def test_bad_gold_file_raises_input_error_naming_line_and_problem(name):
    line, needle = BAD_GOLD[name]
    with pytest.raises(InputError) as info:
        _load_gold(GOLD / name)
    assert info.value.path == str(GOLD / name)
    assert info.value.line == line
    assert needle in info.value.one_line()


@pytest.mark.parametrize("name", sorted(BAD_GOLD))
def test_eval_cli_rejects_bad_gold_file_in_one_line(capsys, eval_cli, name):
    line, needle = BAD_GOLD[name]
    where = f"{GOLD / name}:{line}:" if line else f"{GOLD / name}:"
    rc, out, err = run_cli(capsys, *_eval_args(GOLD / name))
    assert_one_line_error(rc, err, where, needle)
    assert out == ""


@pytest.mark.parametrize("name", OK_GOLD)
def test_odd_but_valid_gold_files_load_and_evaluate(capsys, eval_cli, name):
    gold = _load_gold(GOLD / name)
    assert len(gold) >= 1 and not gold.warnings
    assert all(q.question == "How long is parental allowance paid in Germany?" for q in gold.questions)
    rc, out, err = run_cli(capsys, *_eval_args(GOLD / name))
    assert rc == 0, err
    assert "hit@5 1.000" in out


def test_eval_cli_names_a_bad_document(capsys, eval_cli):
    rc, _out, err = run_cli(capsys, "eval", BAD / "image_named.md", "--gold", GOLD / "ok_crlf.jsonl",
                            "--embedder", "hash", "--retriever", "bm25")
    assert_one_line_error(rc, err, str(BAD / "image_named.md"), "binary file")


# Bugs in gold.py (owned elsewhere): the fix is proposed in the reliability report.


def _deep_gold(tmp_path: Path, kind: str) -> tuple[Path, int]:
    good = (GOLD / "ok_crlf.jsonl").read_text(encoding="utf-8").splitlines()[0]
    deep = "[" * 50_000 + "]" * 50_000  # under the csv module's 128 KiB field limit
    if kind == "jsonl":
        p = tmp_path / "deep.jsonl"
        p.write_text(good + "\n" + deep + "\n", encoding="utf-8")
    else:
        p = tmp_path / "deep.csv"
        p.write_text(f'question,references,corpus_id\nq?,"{deep}",doc\n', encoding="utf-8")
    return p, 2


@pytest.mark.parametrize("kind", ["jsonl", "chroma"])
def test_deeply_nested_json_in_a_gold_file_is_an_input_error(tmp_path, kind):
    path, line = _deep_gold(tmp_path, kind)
    with pytest.raises(InputError) as info:
        _load_gold(path)
    assert info.value.line == line


def test_eval_cli_rejects_deeply_nested_gold_json_in_one_line(tmp_path, capsys, eval_cli):
    path, line = _deep_gold(tmp_path, "jsonl")
    rc, _out, err = run_cli(capsys, *_eval_args(path))
    assert_one_line_error(rc, err, f"{path}:{line}:")




def test_lone_surrogate_in_a_gold_question_is_an_input_error():
    with pytest.raises(InputError) as info:
        _load_gold(GOLD / "lone_surrogate.jsonl")
    assert info.value.line == 2 and info.value.field == "question"


def test_eval_cli_rejects_a_lone_surrogate_naming_the_line(capsys, eval_cli):
    rc, _out, err = run_cli(capsys, *_eval_args(GOLD / "lone_surrogate.jsonl"))
    assert_one_line_error(rc, err, f"{GOLD / 'lone_surrogate.jsonl'}:2:")




def test_eval_cli_rejects_a_deeply_nested_config_in_one_line(tmp_path, capsys, eval_cli):
    config = tmp_path / "deep.json"
    config.write_text("[" * 50_000 + "]" * 50_000, encoding="utf-8")
    rc, _out, err = run_cli(capsys, *_eval_args(GOLD / "ok_crlf.jsonl"), "--config", config)
    assert_one_line_error(rc, err, f"{config}:1:")
