"""Nothing leaks out: the CLI runs end to end with the network switched off, and documents are
handled as text, never rendered (a `<script>` or a remote `<img>` is a span like any other).

The CLI runs in a subprocess whose sockets refuse to connect or resolve and record every try
(a sitecustomize does it, so any Python process the CLI starts, such as the model's conversion,
is guarded too), started WITHOUT HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE in its environment: the
CLI must set them itself before transformers is imported, so the real model's load path is
covered too.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.core.chunking.registry import chunk_document
from inspector.core.documents.document import load_document

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "sample_docs" / "handbook.md"
HTML_DOC = ROOT / "tests" / "data" / "bad" / "html_script.md"

GUARD = textwrap.dedent("""
    # sitecustomize for the offline runs: every Python process started with this folder on
    # PYTHONPATH (the CLI and any process it starts, such as the model's conversion) refuses to
    # connect or resolve, and records each try in the file named by NO_NETWORK_LOG.
    import json, os, socket
    attempts = []

    def refuse(what):
        def blocked(*args, **kwargs):
            entry = f"{what}{args[1:2] if what == 'connect' else args[:2]!r}"
            attempts.append(entry)
            log = os.environ.get("NO_NETWORK_LOG")
            if log:
                with open(log, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"pid": os.getpid(), "try": entry}) + "\\n")
            raise OSError(101, "network disabled by test")
        return blocked

    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def connect(self, address):
        if self.family == socket.AF_UNIX:  # local IPC is not the network
            return real_connect(self, address)
        return refuse("connect")(self, address)

    def connect_ex(self, address):
        if self.family == socket.AF_UNIX:
            return real_connect_ex(self, address)
        return refuse("connect")(self, address)

    socket.socket.connect = connect
    socket.socket.connect_ex = connect_ex
    socket.create_connection = refuse("create_connection")
    socket.getaddrinfo = refuse("getaddrinfo")
    socket.gethostbyname = refuse("gethostbyname")
""")

NO_NETWORK = textwrap.dedent("""
    import json, os, socket, sys
    from sitecustomize import attempts  # the guard, loaded at start-up (GUARD)
    if "refuse" not in socket.getaddrinfo.__qualname__:
        raise SystemExit("the network guard is not installed")

    sys.path.insert(0, __ROOT__)
    from inspector.cli import main
    try:
        rc = main(__ARGV__)
    except SystemExit as exc:
        rc = exc.code
    sys.stdout.flush()
    log = os.environ["NO_NETWORK_LOG"]
    every = [json.loads(line) for line in open(log, encoding="utf-8")] if os.path.exists(log) else []
    with open(__RESULT__, "w") as fh:
        json.dump({"rc": rc, "attempts": [a["try"] for a in every], "torch": "torch" in sys.modules,
                   "openvino": "openvino" in sys.modules,
                   "offline": os.environ.get("HF_HUB_OFFLINE")}, fh)
""")


def _script(argv: list, result: Path) -> str:
    return (NO_NETWORK.replace("__ROOT__", repr(str(ROOT))).replace("__ARGV__", repr([str(a) for a in argv]))
            .replace("__RESULT__", repr(str(result))))


def _guarded_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a guarded run: the guard first on PYTHONPATH, the model's offline
    switches unset (the CLI must set them itself), its own cache and home folders."""
    site = tmp_path / "guard"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(GUARD, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [env.get("PYTHONPATH")])])
    env["NO_NETWORK_LOG"] = str(tmp_path / "attempts.jsonl")
    env["CHUNK_INSPECTOR_CACHE_DIR"] = str(tmp_path / "cache")
    env["HOME"] = str(tmp_path / "home")  # whatever a library writes to the user's home lands here
    (tmp_path / "home").mkdir(exist_ok=True)
    return env


def run_offline(tmp_path: Path, *argv: str, timeout: int = 300) -> tuple[dict, str, str]:
    result = tmp_path / "result.json"
    script = tmp_path / "offline_cli.py"
    script.write_text(_script(list(argv), result))
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=_guarded_env(tmp_path),
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0 and result.exists(), proc.stderr[-3000:]
    return json.loads(result.read_text()), proc.stdout, proc.stderr


def test_the_harness_really_blocks_and_records(tmp_path):
    """The guard itself: a CLI run that reaches for the network is caught (else the tests below
    prove nothing)."""
    script = tmp_path / "probe.py"
    script.write_text(_script(["strategies"], tmp_path / "r.json")
                      + "import urllib.request\n"
                      + "try:\n    urllib.request.urlopen('http://example.com', timeout=5)\n"
                      + "except OSError:\n    pass\n"
                      + f"json.dump(attempts, open({str(tmp_path / 'a.json')!r}, 'w'))\n")
    env = _guarded_env(tmp_path)
    subprocess.run([sys.executable, str(script)], cwd=tmp_path, check=True, capture_output=True, timeout=120,
                   env=env)
    assert json.loads((tmp_path / "a.json").read_text()), "an HTTP request went unrecorded"
    # ...and so is one from a process it starts (the model's conversion runs in one).
    child = ("import urllib.request\n"
             "try:\n    urllib.request.urlopen('http://example.com', timeout=5)\nexcept OSError:\n    pass\n")
    subprocess.run([sys.executable, "-c", child], cwd=tmp_path, check=True, capture_output=True, timeout=120,
                   env=env)
    pids = {json.loads(line)["pid"] for line in (tmp_path / "attempts.jsonl").read_text().splitlines()}
    assert len(pids) == 2, "a child process's request went unrecorded"


@pytest.mark.timeout(120)
def test_chunks_runs_offline_without_torch(tmp_path):
    res, out, err = run_offline(tmp_path, "chunks", HANDBOOK, "--strategy", "markdown", "--format", "jsonl")
    assert res["rc"] == 0, err
    assert res["attempts"] == []
    assert res["torch"] is False  # heavy imports stay lazy
    assert len(out.splitlines()) > 20


@pytest.mark.timeout(120)
@pytest.mark.parametrize("retriever", ["bm25", "dense", "hybrid"])
def test_eval_with_the_hash_embedder_runs_offline(tmp_path, retriever):
    pytest.importorskip("inspector.cli.evaluate")
    gold = ROOT / "sample_docs" / "handbook.gold.jsonl"
    res, out, err = run_offline(tmp_path, "eval", HANDBOOK, "--gold", gold, "--embedder", "hash",
                                "--retriever", retriever)
    assert res["rc"] == 0, err
    assert res["attempts"] == []
    assert res["torch"] is False
    assert "hit@5" in out


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_eval_with_the_real_model_runs_offline(tmp_path):
    pytest.importorskip("inspector.cli.evaluate")
    doc = tmp_path / "leave.md"
    doc.write_text("# Leave\n\nParental allowance in Germany is paid for 14 months.\n\n## France\n\n"
                   "Maternity leave in France is 16 weeks.\n", encoding="utf-8")
    gold = tmp_path / "leave.gold.jsonl"
    gold.write_text(json.dumps({"question": "How long is parental allowance paid in Germany?",
                                "answer": "14 months"}) + "\n", encoding="utf-8")
    res, out, err = run_offline(tmp_path, "eval", doc, "--gold", gold, "--retriever", "dense")
    assert res["rc"] == 0, err
    # The real model did load: torch, or OpenVINO after converting it in a process of its own
    # (which the guard covered too; this process then never imports torch)...
    assert res["torch"] or (res["openvino"] and (tmp_path / "cache" / "openvino").is_dir())
    assert res["attempts"] == []  # ...and nobody, in any process, asked anybody for anything
    assert res["offline"] == "1"
    assert "hit@5 1.000" in out
    # OpenVINO's import starts Intel's usage telemetry unless declined: a client id and usage
    # counts under ~/intel, an event sent from a thread pool. Declined for our process.
    assert not (tmp_path / "home" / "intel").exists()


# -- documents are text ---------------------------------------------------------------------------

@pytest.fixture
def no_rendering_no_network(monkeypatch):
    """Rendering Markdown to HTML, or opening a socket, fails the test."""
    from markdown_it import MarkdownIt
    from markdown_it.renderer import RendererHTML

    def forbidden(*args, **kwargs):
        raise AssertionError("the core rendered Markdown / touched the network")

    monkeypatch.setattr(MarkdownIt, "render", forbidden)
    monkeypatch.setattr(MarkdownIt, "renderInline", forbidden)
    monkeypatch.setattr(RendererHTML, "render", forbidden)
    monkeypatch.setattr(socket.socket, "connect", forbidden)
    monkeypatch.setattr(socket, "create_connection", forbidden)
    monkeypatch.setattr(socket, "getaddrinfo", forbidden)


def test_html_in_a_document_chunks_as_plain_spans(no_rendering_no_network):
    from inspector.core.text.structure import structure_of
    from tests.core.test_bad_inputs import check_spans, chunkers

    doc = load_document(HTML_DOC)
    raw = HTML_DOC.read_text(encoding="utf-8")
    assert doc.text == raw
    kinds = {doc.text[b.start:b.end]: b.kind for b in structure_of(doc).blocks}
    assert kinds['<script>alert("x")</script>'] == "html"
    for name in chunkers():
        chunks = chunk_document(doc, name)
        check_spans(doc, chunks)
        joined = "".join(doc.text[c.start:c.end] for c in chunks if c.role != "child")
        for tag in ('<script>alert("x")</script>', "<img src=http://example.com/x.png onerror=alert(1)>",
                    '<iframe src="http://example.com"></iframe>'):
            assert tag in joined or name.startswith("fixed_")  # windows may cut a tag in two
        assert "&lt;" not in joined and "<p>" not in joined


def test_cli_prints_html_as_text(no_rendering_no_network, capsys):
    assert main(["chunks", str(HTML_DOC), "--format", "jsonl"]) == 0
    texts = [json.loads(x)["page_content"] for x in capsys.readouterr().out.split("\n") if x.strip()]
    joined = "\n\n".join(texts)
    assert '<script>alert("x")</script>' in joined
    assert "<img src=http://example.com/x.png onerror=alert(1)>" in joined
