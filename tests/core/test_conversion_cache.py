"""A PDF's conversion kept on disk (`inspector.core.documents.convertcache`): opened again, the same
bytes with the same backend are read, not converted, and give the same document; anything else
is converted again."""

from __future__ import annotations

import hashlib
import marshal
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from inspector.core.chunking.registry import chunk_document, get_strategy
from inspector.core.documents import convertcache, formats, pdf_convert
from inspector.core.documents.convertcache import KEPT_FLAG, conversion_key
from inspector.core.documents.document import load_document
from inspector.core.errors import InputError
from inspector.core.runtime import keptfiles
from tests.pdf_fixture import PDF_PAGES, make_layout_pdf, make_pdf

ROOT = Path(__file__).resolve().parents[2]

#: The folder the `kept` fixture (tests/core/conftest.py) yields.
KEPT = convertcache.FILES


def _layout_pdf(tmp_path: Path, name: str = "policy.pdf") -> Path:
    """Two pages with a heading in larger type, body lines and a ruled table: a conversion with
    headings, a table and a page map."""
    page1 = [("text", 72, 72, 20, "B", "Parental leave"),
             ("text", 72, 110, 11, "R", "Employees in Germany get fourteen weeks of paid leave."),
             ("text", 72, 126, 11, "R", "Employees in France get sixteen weeks."),
             ("rule", 72, 160, 400, 160), ("rule", 72, 180, 400, 180), ("rule", 72, 200, 400, 200),
             ("rule", 72, 160, 72, 200), ("rule", 236, 160, 236, 200), ("rule", 400, 160, 400, 200),
             ("text", 80, 166, 10, "R", "Country"), ("text", 244, 166, 10, "R", "Weeks"),
             ("text", 80, 186, 10, "R", "Germany"), ("text", 244, 186, 10, "R", "14")]
    page2 = [("text", 72, 72, 20, "B", "Refunds"),
             ("text", 72, 110, 11, "R", "Refunds are issued within 14 days of the request.")]
    path = tmp_path / name
    path.write_bytes(make_layout_pdf([page1, page2]))
    return path


@pytest.fixture()
def backend():
    """The PDF backend restored after the test."""
    before = pdf_convert.pdf_backend()
    yield pdf_convert.set_pdf_backend
    pdf_convert.set_pdf_backend(before)


def _refuse_conversion(monkeypatch) -> None:
    def fail(*_args, **_kwargs):
        raise AssertionError("converted again")

    for name in ("builtin_pdf", "docling_pdf"):
        monkeypatch.setattr(pdf_convert, name, fail)
    monkeypatch.setattr(formats, "pdf_to_text", fail)


def test_a_pdf_opened_again_is_read_not_converted(kept, tmp_path, monkeypatch):
    path = _layout_pdf(tmp_path)
    first = load_document(path)
    assert first.kind == "markdown" and KEPT_FLAG not in first.meta
    assert "# Parental leave" in first.text and first.meta["structure"]["tables"] == 1
    [kept_file] = kept.glob(f"*{KEPT.suffix}")
    assert kept_file.name.startswith(hashlib.sha256(path.read_bytes()).hexdigest())  # the file's bytes
    _refuse_conversion(monkeypatch)
    again = load_document(path)
    assert again.text == first.text and again.kind == first.kind and again.name == first.name
    assert again.meta == {**first.meta, KEPT_FLAG: True}
    # The same bytes under another name and folder: the same conversion, the file's own name.
    other = tmp_path / "copies" / "renamed.PDF"
    other.parent.mkdir()
    shutil.copyfile(path, other)
    copy = load_document(other)
    assert copy.text == first.text and copy.name == "renamed.PDF" and copy.meta[KEPT_FLAG]
    # Chunks, pages and heading paths are those of the document converted.
    for name in ("markdown", "recursive"):
        strategy = get_strategy(name)
        params = {p.name: p.default for p in strategy.params}
        assert chunk_document(again, name, params) == chunk_document(first, name, params)


def test_another_backend_or_other_bytes_are_converted_again(kept, tmp_path, backend):
    path = tmp_path / "plain.pdf"
    path.write_bytes(make_pdf(PDF_PAGES))
    built = load_document(path)
    backend("plain")
    plain = load_document(path)
    assert KEPT_FLAG not in plain.meta and plain.kind == "text" and "structure" not in plain.meta
    assert len(list(kept.glob(f"*{KEPT.suffix}"))) == 2
    assert conversion_key(".pdf", "plain") != conversion_key(".pdf", "builtin")
    assert load_document(path).meta[KEPT_FLAG] and load_document(path).kind == "text"
    backend("builtin")
    assert load_document(path).meta == {**built.meta, KEPT_FLAG: True}
    path.write_bytes(make_pdf([*PDF_PAGES, ["A fourth page."]]))
    changed = load_document(path)
    assert KEPT_FLAG not in changed.meta and "A fourth page." in changed.text


def test_a_kept_file_that_does_not_check_out_is_converted_again(kept, tmp_path):
    path = _layout_pdf(tmp_path)
    first = load_document(path)
    [kept_file] = kept.glob(f"*{KEPT.suffix}")
    data = bytearray(kept_file.read_bytes())
    data[len(data) // 2] ^= 0x5A
    kept_file.write_bytes(bytes(data))
    again = load_document(path)
    assert KEPT_FLAG not in again.meta and again.text == first.text
    assert load_document(path).meta[KEPT_FLAG]  # written again, and good


@pytest.mark.parametrize("payload", [
    ("text", "markdown", {"page_starts": [0, 999]}),  # a page past the text
    ("text", "markdown", {"page_starts": [2, 1]}),  # out of order
    ("text", "markdown", {"page_starts": [0, True]}),
    ("", "markdown", {}),  # no text: a conversion raises instead
    ("text", "html", {}),  # a kind no converter gives
    ("text", "markdown", {1: "x"}),
    ("text", "markdown", {KEPT_FLAG: True}),
    ["text", "markdown", {}],
    ("text", "markdown"),
    b"text",
])
def test_a_payload_no_converter_gives_is_refused(kept, tmp_path, payload):
    path = _layout_pdf(tmp_path)
    first = load_document(path)
    [kept_file] = kept.glob(f"*{KEPT.suffix}")
    sha, _key = kept_file.name[:-len(KEPT.suffix)].split("-")
    assert KEPT.write(sha, conversion_key(".pdf", "builtin"), [marshal.dumps(payload)])
    again = load_document(path)
    assert KEPT_FLAG not in again.meta and again.text == first.text


def test_a_failed_conversion_is_not_kept(kept):
    bad = ROOT / "tests" / "data" / "bad" / "truncated.pdf"
    for _ in range(2):
        with pytest.raises(InputError, match="truncated.pdf"):
            load_document(bad)
    assert not kept.exists() or not list(kept.glob(f"*{KEPT.suffix}"))


def test_nothing_is_kept_with_the_cache_off_or_for_html(kept, tmp_path, monkeypatch):
    page = tmp_path / "page.html"
    page.write_text("<h1>Leave</h1><p>Fourteen weeks.</p>", encoding="utf-8")
    assert load_document(page).kind == "markdown"
    monkeypatch.setenv(keptfiles.ENV_VAR, "0")
    path = _layout_pdf(tmp_path)
    load_document(path)
    assert KEPT_FLAG not in load_document(path).meta
    assert not kept.exists() or not list(kept.iterdir())


_META_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                            lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                            max_leaves=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(min_size=1), kind=st.sampled_from(sorted(convertcache.KINDS)),
       meta=st.dictionaries(st.text().filter(lambda k: k not in ("page_starts", KEPT_FLAG)), _META_VALUES,
                            max_size=5),
       cuts=st.lists(st.integers(min_value=1, max_value=10_000), max_size=6, unique=True))
def test_a_conversion_reads_back_as_written(text, kind, meta, cuts):
    starts = [0, *sorted(c for c in cuts if c < len(text))]
    conversion = (text, kind, {**meta, "page_starts": starts})
    payload = convertcache.encode(conversion)
    assert payload is not None
    assert convertcache.decode(memoryview(payload)) == conversion


@settings(max_examples=200, deadline=None)
@given(value=st.recursive(st.none() | st.integers() | st.text() | st.binary(max_size=8),
                          lambda inner: st.lists(inner, max_size=4).map(tuple) | st.lists(inner, max_size=4)
                          | st.dictionaries(st.text(max_size=3) | st.integers(), inner, max_size=3),
                          max_leaves=10))
@example(value=("0", [], None))  # an unhashable kind: refused, not a TypeError (found by this test)
@example(value=("0", {}, {}))
def test_whatever_a_payload_holds_is_a_conversion_or_refused(value):
    got = convertcache.decode(memoryview(marshal.dumps(value)))
    if got is not None:
        text, kind, meta = got
        assert isinstance(text, str) and text and kind in convertcache.KINDS and isinstance(meta, dict)
        starts = meta.get("page_starts")
        assert starts is None or (starts[0] == 0 and starts == sorted(set(starts)) and starts[-1] < len(text))
