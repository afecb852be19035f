"""`--pdf-backend` on the commands that open documents (issue 30): the backend chosen changes
what a PDF becomes, the choice ends with the run, and docling without its package is one line."""

from __future__ import annotations

import json

import pytest

from inspector.cli.main import main
from inspector.core.documents import pdf_convert
from tests.pdf_fixture import make_layout_pdf, text_lines


@pytest.fixture
def handbook_pdf(tmp_path):
    page = ([("text", 72, 60, 18, "B", "Travel handbook")]
            + text_lines(72, 100, ["Employees book trains for trips under four hours and",
                                   "economy class for flights under six hours."]))
    path = tmp_path / "travel.pdf"
    path.write_bytes(make_layout_pdf([page]))
    return path


def _chunks(capsys, *args: str) -> list[dict]:
    assert main(["chunks", *args, "--format", "jsonl"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]


def test_pdf_backend_flag_picks_structure_or_plain_text(handbook_pdf, capsys):
    built = _chunks(capsys, str(handbook_pdf), "--strategy", "markdown")
    assert "# Travel handbook" in built[0]["page_content"]
    plain = _chunks(capsys, str(handbook_pdf), "--strategy", "markdown", "--pdf-backend", "plain")
    assert "#" not in plain[0]["page_content"] and "Travel handbook" in plain[0]["page_content"]
    # The flag holds for its own run only.
    assert pdf_convert.pdf_backend() == "builtin"


def test_unknown_backend_and_missing_docling_are_one_line_errors(handbook_pdf, capsys):
    assert main(["chunks", str(handbook_pdf), "--pdf-backend", "ocr"]) == 2
    assert "--pdf-backend: unknown backend 'ocr'; choose one of builtin, plain, docling" in capsys.readouterr().err
    if pdf_convert.docling_available():
        pytest.skip("docling is installed here: the missing-package message cannot show")
    assert main(["eval", str(handbook_pdf), "--gold", str(handbook_pdf), "--pdf-backend", "docling"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'chunk-inspector[docling]'" in err
