"""File ▸ Export ▸ View as HTML… and Settings as Code…: the page holds what the window shows (the
text, its chunks, the question's hits and answer, the gold results), the code is the CLI's."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QGuiApplication

from inspector.core.chunking.snippets import settings_code
from tests.core.test_html_export import Page

GERMANY = "How long is parental allowance paid in Germany?"


def _window(hash_window, open_doc, wait_result, strategy="recursive", **params):
    w = hash_window(start=False)
    w.retrieval.set_retriever("bm25")
    w.state.set_strategy(strategy)
    open_doc(w)
    if params:
        w.state.set_params(params)
    wait_result(w, gold=True)
    return w


def test_view_as_html_holds_what_the_window_shows(qtbot, hash_window, open_doc, wait_result, tmp_path):
    w = _window(hash_window, open_doc, wait_result, size=200, overlap=20)
    q = next(q for q in w.retrieval.gold.questions if q.question == GERMANY)
    w.gold_panel.select_question(q)
    r = wait_result(w, question=GERMANY, gold=True)
    assert w.exports.html_action in w.export_menu.actions()
    out = tmp_path / "view.html"
    assert w.exports.export_html(out)
    assert "Exported the view" in w.message.text()
    html = out.read_text(encoding="utf-8")
    page = Page(html)
    doc = w.state.document
    assert "".join(page.text) == doc.text
    for c in w.state.result.chunks:
        assert page.chunk_text(c.id) == doc.text[c.start:c.end]
    badges = {a["data-rank"].split()[0] for a, _t in page.runs if "badge" in a.get("class", "")}
    assert badges == {f"#{h.rank}" for h in r.hits}
    answer = "".join(t for a, t in page.runs if "ans" in a.get("class", "").split())
    assert answer and all(doc.text[a:b] in answer for a, b in w.view.answer_spans)
    assert r.config.label() in html and f"{r.report.hit_rate * 100:.1f} %" in html
    assert html.count('<span class="miss">') + html.count('<span class="hitw">') == len(r.report.questions)


def test_view_as_html_without_a_document_says_so(qtbot, make_window, tmp_path):
    w = make_window()
    w.exports.update_enabled()
    assert not w.exports.html_action.isEnabled()
    assert not w.exports.export_html(tmp_path / "x.html")
    assert not (tmp_path / "x.html").exists()


def test_settings_as_code(qtbot, hash_window, open_doc, wait_result, tmp_path):
    w = _window(hash_window, open_doc, wait_result, size=180, overlap=24)
    dialog = w.exports.show_code()
    qtbot.addWidget(dialog)
    assert w.exports.code_action in w.export_menu.actions()
    params = dict(w.state.params)
    assert params == {"size": 180, "overlap": 24}
    dialog.set_target("langchain")
    assert dialog.text() == settings_code("recursive", params, "langchain")
    assert "chunk_size=180" in dialog.text() and "chunk_overlap=24" in dialog.text()
    dialog.copy()
    assert QGuiApplication.clipboard().text() == dialog.text()
    out = tmp_path / "chunks.py"
    assert dialog.save_as(out) and out.read_text(encoding="utf-8") == dialog.text()
    compile(dialog.text(), str(out), "exec")
    dialog.set_target("inspector")
    assert "chunk_document(doc, 'recursive', params)" in dialog.text()
    dialog.set_target("chonkie")  # no faithful equivalent: the reason, nothing to copy
    assert dialog.text() == "" and not dialog.copy_button.isEnabled() and not dialog.save_button.isEnabled()
    assert "--target inspector" in dialog.note.text()
    assert not dialog.save_as(tmp_path / "nothing.py") and not Path(tmp_path / "nothing.py").exists()
    dialog.close()


def test_a_corpus_view_says_its_figures_are_the_corpus_s(qtbot, hash_window, wait_result, wait_complete,
                                                         tmp_path):
    """Issue 26: with a corpus open, the page was titled with the shown document while its hit
    rate was the corpus's. The title and a line under it say so; the Markdown report names every
    document its figures cover."""
    import shutil

    root = Path(__file__).resolve().parents[2] / "sample_docs"
    folder = tmp_path / "corpus"
    folder.mkdir()
    shutil.copy(root / "handbook.md", folder / "handbook.md")
    shutil.copy(root / "handbook.gold.jsonl", folder / "handbook.gold.jsonl")
    (folder / "notes.md").write_text("# Notes\n\nThe canteen opens at eight.\n", encoding="utf-8")
    w = hash_window(start=False)
    w.retrieval.set_retriever("bm25")
    assert w.open_paths([str(folder)])
    wait_complete(w)
    assert w.state.document.name == "handbook.md" and len(w.state.documents) == 2
    r = wait_result(w, gold=True)
    out = tmp_path / "view.html"
    assert w.exports.export_html(out)
    html = out.read_text(encoding="utf-8")
    assert "<title>handbook.md — one document of a corpus of 2 — Chunk Inspector</title>" in html
    assert "<h1>handbook.md — one document of a corpus of 2</h1>" in html
    assert "over the whole corpus of 2 documents; the text shown is one of them, handbook.md" in html
    assert f"{r.report.hit_rate * 100:.1f} %" in html
    assert "".join(Page(html).text) == w.state.document.text  # still the shown document's text
    md = tmp_path / "report.md"
    assert w.exports.export_report_markdown(md)
    assert "- Document: `handbook.md, notes.md`" in md.read_text(encoding="utf-8")
