"""Settings ▸ Embedding View in the window (issue 29): switching raw/clean re-chunks with the view,
the detail pane shows exactly the text sent (no link targets under clean), the choice is
remembered, and the gold panel's figures are computed again under the view (and say so)."""

from __future__ import annotations

import shutil
from pathlib import Path

from inspector.core.evaluation.config import EvalConfig
from inspector.core.viewmodel.settings_schema import EMBED_VIEW
from inspector.core.workbench import Workbench
from inspector.qt.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
URL = "https://intranet.example.org/people/relocation-allowance-policy-2024.html"
LINKS = (f"\n## Relocation links\n\nSee the [relocation allowance policy]({URL}) and the "
         "[moving checklist](https://intranet.example.org/people/moving-checklist-v3.pdf) before you move.\n")


def _copy(tmp_path: Path) -> Path:
    """The handbook with a section of links at its end (the gold set's offsets stay valid)."""
    doc = tmp_path / "handbook.md"
    doc.write_text((ROOT / "sample_docs" / "handbook.md").read_text(encoding="utf-8") + LINKS, encoding="utf-8")
    shutil.copy(ROOT / "sample_docs" / "handbook.gold.jsonl", tmp_path / "handbook.gold.jsonl")
    return doc


def test_switching_the_view_changes_the_text_sent_and_recomputes_the_gold_figures(
        qtbot, hash_window, open_doc, wait_complete, wait_result, settings_store, tmp_path):
    w = hash_window(start=False)
    w.retrieval.set_retriever("bm25")
    open_doc(w, _copy(tmp_path))
    raw = wait_result(w, gold=True)
    assert raw.config.embed_view == "raw"
    doc = w.state.document
    linked = next(c for c in w.state.result.chunks if URL in doc.text[c.start:c.end])
    w.state.select(linked.id)
    assert URL in w.detail.shown_text()

    w.embed_view_actions.actions["clean"].trigger()
    assert Settings(settings_store).get(EMBED_VIEW) == "clean"
    result = wait_complete(w)
    clean = wait_result(w, gold=True)
    assert clean is not raw and clean.config.embed_view == "clean"
    # Chunk ids may move: markdown's fit_embedder budget counts the view's text, so elsewhere a
    # chunk whose link targets pushed it over the limit is no longer split. The links' own
    # section fits either way: the same span.
    chunk = next(c for c in result.chunks if c.start <= doc.text.index(URL) < c.end)
    assert (chunk.start, chunk.end) == (linked.start, linked.end)
    w.state.select(chunk.id)
    shown = w.detail.shown_text()
    assert URL not in shown and "relocation allowance policy" in shown
    assert shown == chunk.embedded_text(doc, with_prefix=w.state.with_prefix)
    assert chunk.embed_tokens is not None and chunk.embed_tokens < linked.embed_tokens
    # The gold panel's figures are the core's for the clean view, on the same chunks.
    config = EvalConfig(w.state.strategy, dict(w.state.params), w.retrieval.k, "bm25", w.state.with_prefix,
                        embed_view="clean")
    questions = [q for q in w.retrieval.gold.questions if q.source in (None, doc.doc_id)]
    expected = Workbench([doc], embedder=None).evaluate(config, questions=questions)
    assert clean.report.hit_rate == expected.hit_rate and clean.report.mrr == expected.mrr
    assert w.gold_panel.metric_text("mrr")[0] == f"{expected.mrr:.3f}"
    assert "clean view" in w.gold_panel.mode.text()

    w.embed_view_actions.actions["raw"].trigger()
    wait_complete(w)
    back = wait_result(w, gold=True)
    assert back.config.embed_view == "raw" and "view" not in w.gold_panel.mode.text()
    w.state.select(linked.id)
    assert URL in w.detail.shown_text()


def test_the_stored_view_is_applied_when_the_window_opens(qtbot, hash_window, settings_store):
    Settings(settings_store).set(EMBED_VIEW, "clean")
    w = hash_window(start=False)
    assert w.state.embed_view == "clean" and w.embed_view_actions.actions["clean"].isChecked()


def test_a_sweep_scores_the_windows_view_and_says_so_when_the_view_changes(qtbot, hash_window, open_doc):
    w = hash_window(start=False)
    open_doc(w)
    w.embed_view_actions.actions["clean"].trigger()
    w.open_sweep()
    d = w.sweep_dialog
    d.runner.synchronous = False
    d.retriever.setCurrentIndex(d.retriever.findData("bm25"))
    d.sizes.setText("128")
    d.overlaps.setText("")
    with qtbot.waitSignal(d.finished_sweep, timeout=60_000) as blocker:
        assert d.run()
    assert {r.config.embed_view for r in blocker.args[0].rows} == {"clean"}
    assert "view=clean" in d.status.text()
    w.embed_view_actions.actions["raw"].trigger()
    assert "scored with the clean embedding view" in d.status.text()


def test_the_reader_shows_the_view_sent_for_every_document_of_a_corpus(qtbot, hash_window, wait_complete,
                                                                     wait_result, tmp_path):
    """Under clean, the other documents of a corpus are embedded under the view too, and the Reader's
    card for a hit in one of them shows its text without link targets (what was sent)."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.md").write_text("# Office\n\nThe office opens at nine.\n", encoding="utf-8")
    (folder / "b.md").write_text("# Wildlife\n\nZebras migrate across the savanna every spring, see the "
                                 f"[migration map]({URL}).\n", encoding="utf-8")
    w = hash_window(start=False)
    w.retrieval.set_retriever("bm25")
    w.embed_view_actions.actions["clean"].trigger()
    assert w.open_paths([str(folder)])
    wait_complete(w)
    assert w.state.document.doc_id == "a.md"
    question = "When do zebras migrate across the savanna?"
    w.question_bar.ask(question)
    r = wait_result(w, question=question)
    top = r.hits[0].chunk
    assert top.doc_id == "b.md" and top.meta.get("embed_view") == "clean"
    qtbot.waitUntil(lambda: bool(w.reader.cards), timeout=5000)
    shown = w.reader.cards[0].shown_text()
    assert "migration map" in shown and URL not in shown


def test_reader_cards_mark_the_reference_span_in_the_view_sent():
    """Under the clean view a card's text is not the document's, yet the gold reference span is
    marked on the same words (issue 29: before, reference spans were not marked at all)."""
    from inspector.core.api import GoldQuestion, chunk_document, highlights, with_view
    from inspector.core.documents.document import from_text
    from inspector.qt.panels.audit_panel import card_text

    text = ("# Leave\n\nSee [the leave policy](https://intranet.example.org/hr/leave_(2024)) first. "
            "Parental leave in Germany is fourteen weeks, paid at full salary.\n")
    doc = from_text(text, "leave.md")
    chunk = with_view(doc, chunk_document(doc, "markdown", {}), "clean")[0]
    answer = "fourteen weeks, paid at full salary"
    ref = (text.index(answer), text.index(answer) + len(answer))
    gold = GoldQuestion("How long is parental leave in Germany?", (), references=(ref,))
    shown, body_at, refs = card_text(chunk, doc, True, gold)
    assert "https://" not in shown and refs
    marks = highlights(shown, "", (), refs, span_start=chunk.start, body_at=body_at)
    assert [shown[a:b] for a, b, kind in marks if kind == "answer"] == [answer]
