"""Settings ▸ Embedding Model… in the window, with real models: a second sentence-transformers model
built from the bundled one (its first two layers, tests/support/models.py) and an OpenAI-compatible
server on 127.0.0.1 serving the bundled MiniLM (tests/support/openai_server.py). The choice is
loaded off the GUI thread, replaces the model only once it loaded, moves the word pieces to the new
model's tokenizer and limit, is remembered without any key, and a model that cannot be used is one
line while the previous one stays."""

from __future__ import annotations

import json

import pytest

from inspector.core.api import EmbedderSpec, make_embedder, use_piece_spec
from inspector.core.retrieval.index import build_index
from tests.qt.conftest import HANDBOOK
from tests.support.models import two_layer_minilm
from tests.support.openai_server import DEFAULT_MODEL, OpenAIServer

pytest.importorskip("sentence_transformers")
pytestmark = pytest.mark.usefixtures("keep_default_embedder", "_bundled_pieces_after")

QUESTION = "How much rest do I need between two working days?"
KEY = "sk-test-Qp4window0KEY8826distinct"
KEY_ENV = "CI_WINDOW_EMBEDDER_KEY"
SLOW = 120_000  # ms: two busy cores embed the text with each model


@pytest.fixture
def _bundled_pieces_after():
    """The word-piece model is process-wide: the tests after count with the bundled one again."""
    yield
    use_piece_spec(None)


@pytest.fixture(scope="module")
def two_layer(tmp_path_factory):
    return two_layer_minilm(tmp_path_factory)


@pytest.fixture
def short_doc(tmp_path):
    """The handbook up to its travel chapter (18 KB: three models embed it in seconds) as handbook.md,
    and beside it the gold questions whose answers lie in that part (11)."""
    text = HANDBOOK.read_text(encoding="utf-8")
    cut = text.index("\n## Travel and expenses") + 1
    path = tmp_path / "handbook.md"
    path.write_text(text[:cut], encoding="utf-8")
    kept = []
    for line in HANDBOOK.with_name("handbook.gold.jsonl").read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        refs = q.get("references") or []
        answers = q.get("answer")
        answers = [answers] if isinstance(answers, str) else answers
        if all(r["end"] <= cut for r in refs) and all(a.lower() in text[:cut].lower() for a in answers):
            kept.append(line)
    assert len(kept) >= 10
    (tmp_path / "handbook.gold.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def minilm_window(dense_settings, make_window, minilm, tmp_path):
    """A window on the dense retriever embedding with the (already loaded) bundled MiniLM, with a
    private vector cache."""
    from inspector.core.embedding.cache import EmbeddingCache

    def make(**kw):
        kw.setdefault("embedder", minilm)
        kw.setdefault("embedding_cache", EmbeddingCache(tmp_path / "emb-cache", persist=False))
        kw.setdefault("settle_ms", 50)
        w = make_window(**kw)
        w.start_model()
        return w
    return make


def ask(qtbot, w, wait_result, question=QUESTION):
    w.question_bar.field.setText(question)
    w.retrieval.ask(question)
    return wait_result(w, question=question, timeout=SLOW)


def wait_model(qtbot, w, spec_text: str, timeout=SLOW):
    """Until the window embeds with the model `spec_text` names and its chunks are measured again."""
    def ready() -> bool:
        emb = w.retrieval.embedder
        spec = getattr(emb, "spec", None)
        return spec is not None and spec.text == spec_text and not w.embedder_actions.runner.busy \
            and w.embedder_actions.pending is None
    qtbot.waitUntil(ready, timeout=timeout)


def model_button(w) -> str:
    """The status bar's model button: the model in use (and where it runs)."""
    return w.device_actions.button.text()


def core_hits(w, embedder, question=QUESTION):
    """The same chunks searched by the core alone with `embedder`: the ids a pipeline would get."""
    r = w.retrieval.result
    doc = w.state.document
    index = build_index([doc], {doc.doc_id: w.state.result.chunks}, embedder, with_prefix=r.request.with_prefix)
    return [h.chunk.id for h in index.search(question, r.request.k, "dense")]


@pytest.mark.slow
def test_the_dialog_sets_a_second_model_and_the_hits_follow(qtbot, minilm_window, open_doc, short_doc, wait_result,
                                                          two_layer, minilm, settings_store):
    from inspector.qt.actions.embedder_actions import EMBEDDER
    from inspector.qt.settings import Settings

    w = minilm_window()
    open_doc(w, short_doc)
    before = [h.chunk.id for h in ask(qtbot, w, wait_result).hits]
    assert before == core_hits(w, minilm)
    assert model_button(w).startswith("MiniLM on ")
    dialog = w.embedder_actions.open_dialog()
    assert dialog.minilm.isChecked() and not dialog.st_box.isEnabled() and not dialog.http_box.isEnabled()
    dialog.st.setChecked(True)
    dialog.path.setText(str(two_layer))
    dialog.accept()
    assert model_button(w) == f"loading {two_layer.name}…"
    wait_model(qtbot, w, f"st:{two_layer}")
    res = wait_result(w, question=QUESTION, timeout=SLOW)
    after = [h.chunk.id for h in res.hits]
    two = make_embedder(EmbedderSpec("st", str(two_layer)), device="cpu")
    assert after == core_hits(w, two)  # the window's hits are the second model's ...
    assert after != before  # ... and it ranks differently from MiniLM
    assert res.index.embedder is w.retrieval.embedder
    assert model_button(w).startswith(f"{two_layer.name} on ")
    assert w.messages.last_error == ""
    assert Settings(settings_store).get(EMBEDDER) == {"spec": f"st:{two_layer}"}
    assert f"dense @st:{two_layer}" in w.exports.view_html()  # the exported view names the model
    # Back to MiniLM: its own hits again (its vectors were cached under its own identity).
    w.embedder_actions.apply({"spec": "minilm"})
    wait_model(qtbot, w, "minilm")
    assert [h.chunk.id for h in wait_result(w, question=QUESTION, timeout=SLOW).hits] == before
    assert model_button(w).startswith("MiniLM on ")


@pytest.mark.slow
def test_word_pieces_and_fit_budgets_follow_the_new_models_limit(qtbot, minilm_window, open_doc, short_doc,
                                                                 wait_complete, two_layer):
    w = minilm_window()
    old = open_doc(w, short_doc).chunks
    assert w.state.strategy == "markdown" and w.state.params["fit_embedder"]
    assert max(c.embed_tokens for c in old) > 64 and all(c.embed_tokens <= 256 for c in old)
    w.embedder_actions.apply({"spec": f"st:{two_layer}", "max_tokens": 64})
    wait_model(qtbot, w, f"st:{two_layer}")
    fitted = wait_complete(w).chunks
    assert w.retrieval.embedder.max_seq_length == 64
    # fit_embedder packs to the new model's limit: more, smaller chunks, none cut by the model.
    assert len(fitted) > len(old) and all(c.embed_tokens <= 64 for c in fitted)
    from inspector.qt.panels.chunk_table import COL_PIECES

    table = w.table.model
    assert table.index(0, COL_PIECES).data() == f"{fitted[0].embed_tokens}/64"  # the table says the new limit
    # Without fitting, the chunks longer than 64 word pieces are flagged, with what is dropped.
    w.state.set_params({**w.state.params, "fit_embedder": False})
    chunks = wait_complete(w).chunks
    cut = [c for c in chunks if "truncated_by_embedder" in c.flags]
    assert cut and all(c.embed_tokens > 64 and c.embed_dropped == c.embed_tokens - 64 for c in cut)
    assert all(c.embed_tokens <= 64 for c in chunks if c not in cut)


@pytest.mark.slow
def test_a_missing_folder_is_one_line_and_the_previous_model_stays(qtbot, minilm_window, open_doc, short_doc,
                                                                   wait_result, tmp_path, minilm, settings_store):
    from inspector.qt.actions.embedder_actions import EMBEDDER
    from inspector.qt.settings import Settings

    w = minilm_window()
    open_doc(w, short_doc)
    before = [h.chunk.id for h in ask(qtbot, w, wait_result).hits]
    missing = tmp_path / "no-such-model"
    w.embedder_actions.apply({"spec": f"st:{missing}"})
    qtbot.waitUntil(lambda: w.embedder_actions.pending is None, timeout=30_000)
    msg = w.messages.last_error
    assert msg.startswith(f"embedding model st:{missing}: ") and str(missing) in msg and "\n" not in msg
    assert msg.endswith("(MiniLM stays)")
    assert w.retrieval.embedder is minilm and w.retrieval.model is minilm
    assert model_button(w).startswith("MiniLM on ")
    assert Settings(settings_store).get(EMBEDDER) == EMBEDDER.default
    assert [h.chunk.id for h in wait_result(w, question=QUESTION, timeout=SLOW).hits] == before
    # A folder that is not a model at all: said so, by name.
    (tmp_path / "notes").mkdir()
    w.embedder_actions.apply({"spec": f"st:{tmp_path / 'notes'}"})
    qtbot.waitUntil(lambda: w.embedder_actions.pending is None, timeout=30_000)
    assert "no sentence-transformers model in" in w.messages.last_error
    assert w.retrieval.embedder is minilm


@pytest.mark.slow
def test_the_choice_is_remembered_and_loaded_at_the_next_start(qtbot, make_window, settings_store, two_layer):
    from inspector.qt.actions.embedder_actions import EMBEDDER
    from inspector.qt.settings import Settings

    Settings(settings_store).set(EMBEDDER, {"spec": f"st:{two_layer}"})
    w = make_window()  # no model given: the window loads what the settings name
    assert w.retrieval.model_state == "loading"  # the bundled model is not loaded meanwhile
    w.start_model()
    wait_model(qtbot, w, f"st:{two_layer}")
    assert w.retrieval.model_state == "ready"
    assert model_button(w).startswith(f"{two_layer.name} on ")


@pytest.mark.slow
def test_the_openai_kind_against_a_local_server_and_the_key_never_stored(qtbot, minilm_window, open_doc, short_doc,
                                                                          wait_result, minilm, monkeypatch,
                                                                          tmp_path, settings_store):
    monkeypatch.setenv(KEY_ENV, KEY)
    w = minilm_window()
    open_doc(w, short_doc)
    before = [h.chunk.id for h in ask(qtbot, w, wait_result).hits]
    with OpenAIServer(minilm, key=KEY) as server:
        dialog = w.embedder_actions.open_dialog()
        dialog.openai.setChecked(True)
        dialog.model.setText(DEFAULT_MODEL)
        dialog.url.setText(server.url)
        dialog.key_env.setText(KEY_ENV)
        dialog.tokenizer.setText(f"hf:{minilm.model_path}")
        dialog.max_tokens.setValue(256)
        spec_text = f"openai:{DEFAULT_MODEL}"
        dialog.accept()
        wait_model(qtbot, w, spec_text)
        res = wait_result(w, question=QUESTION, timeout=SLOW)
        # The bundled model behind the endpoint: MiniLM's ranking exactly, through the HTTP client.
        assert [h.chunk.id for h in res.hits] == before
        assert any(s.path.endswith("/embeddings") and s.status == 200 for s in server.seen)
        # No live-preview pieces for a billed endpoint: only the chunks and questions are sent.
        assert w.retrieval.pooled_building is None and w.retrieval.workbench.pooled_vectors(w.state.document) is None
        sent = {t for s in server.seen for t in s.inputs}
        texts = {c.embedded_text(w.state.document, with_prefix=res.request.with_prefix) for c in res.index.entries}
        # Nor the slider's trace: every size around the current one would be billed.
        from inspector.qt.controllers.trace import BILLED_NOTE

        qtbot.waitUntil(lambda: w.trace.trace is not None and w.trace.trace.status == BILLED_NOTE, timeout=10_000)
        questions = {q.question for q in res.request.gold} | {QUESTION, "model check", "dimension probe"}
        assert sent <= texts | questions
        assert model_button(w) == f"{DEFAULT_MODEL} over HTTP"
        # A refused key: one line, without the key, and the HTTP model stays.
        monkeypatch.setenv("CI_WRONG_KEY", "sk-wrong-Zz0041distinctWRONG")
        current = w.retrieval.embedder
        w.embedder_actions.apply({"spec": spec_text, "url": server.url, "key_env": "CI_WRONG_KEY",
                                  "tokenizer": f"hf:{minilm.model_path}", "max_tokens": 256})
        qtbot.waitUntil(lambda: w.embedder_actions.pending is None, timeout=30_000)
        msg = w.messages.last_error
        assert "401" in msg and "CI_WRONG_KEY" in msg and "\n" not in msg
        assert "sk-wrong" not in msg and KEY not in msg
        assert w.retrieval.embedder is current
        # An unknown model: said so, the current one stays.
        w.embedder_actions.apply({"spec": "openai:no-such-model", "url": server.url, "key_env": KEY_ENV,
                                  "tokenizer": f"hf:{minilm.model_path}", "max_tokens": 256})
        qtbot.waitUntil(lambda: w.embedder_actions.pending is None, timeout=30_000)
        assert "no-such-model" in w.messages.last_error and w.retrieval.embedder is current
        url = server.url
        current.close()  # its kept-alive connections, before the server stops
    # The key is nowhere in the settings file: only its variable's name.
    w.save_settings()
    ini = (tmp_path / "settings.ini").read_text(encoding="utf-8")
    assert KEY_ENV in ini and url in ini
    assert KEY not in ini and "sk-wrong" not in ini
    # An unreachable host (the server is gone): one line, the model stays.
    w.embedder_actions.apply({"spec": "openai:other", "url": url, "key_env": KEY_ENV,
                              "tokenizer": f"hf:{minilm.model_path}", "max_tokens": 256})
    qtbot.waitUntil(lambda: w.embedder_actions.pending is None, timeout=60_000)
    assert w.messages.last_error.startswith("embedding model openai:other: ")
    assert w.retrieval.embedder is current


def test_the_dialog_refuses_a_key_typed_as_the_variable(qtbot, hash_window):
    w = hash_window(start=False)
    dialog = w.embedder_actions.open_dialog()
    dialog.openai.setChecked(True)
    dialog.model.setText("text-embedding-3-small")
    dialog.key_env.setText("sk-live-abc123")  # the key itself, pasted where its variable's name goes
    dialog.accept()
    assert dialog.isVisible() and "must name an environment variable" in dialog.error.text()
    assert "sk-live-abc123" not in dialog.error.text()
    dialog.key_env.setText("MY_KEY")
    assert dialog.choice() == {"spec": "openai:text-embedding-3-small", "key_env": "MY_KEY"}
    dialog.reject()


# -- the gold panel: a second model's figures beside the first's ------------------------------------

@pytest.mark.slow
def test_the_gold_panel_compares_a_second_model_on_the_same_chunks(qtbot, minilm_window, open_doc, short_doc,
                                                                   wait_result, two_layer, minilm, settings_store):
    from inspector.core.api import model_figures
    from inspector.qt.panels.model_compare_box import COMPARE_EMBEDDER
    from inspector.qt.settings import Settings

    w = minilm_window()
    open_doc(w, short_doc)
    res = wait_result(w, gold=True, timeout=SLOW)
    assert len(res.request.gold) >= 10 and res.retriever == "dense"
    box = w.model_compare_box
    assert box.isVisibleTo(w) and box.button.isEnabled() and box.text.text() == ""
    dialog = box.choose()
    assert dialog.windowTitle() == "Compare with Model" and dialog.minilm.isChecked()
    dialog.st.setChecked(True)
    dialog.path.setText(str(two_layer))
    with qtbot.waitSignal(box.scored, timeout=SLOW) as blocker:
        dialog.accept()
        assert box.progress.isVisibleTo(w) and box.cancel.isVisibleTo(w) and not box.button.isEnabled()
    fig = blocker.args[0]
    # The core alone, on the panel's own index, gives the same figures.
    two = make_embedder(EmbedderSpec("st", str(two_layer)), device="cpu")
    want = model_figures(res.index, res.request.gold, two, res.request.k, retriever="dense")
    assert (fig.first.hit_rate, fig.first.mrr, fig.second.hit_rate, fig.second.mrr) == \
        (want.first.hit_rate, want.first.mrr, want.second.hit_rate, want.second.mrr)
    assert fig.paired["hit_rate"].ci == want.paired["hit_rate"].ci
    assert fig.first.hit_rate == res.report.hit_rate  # the first model's figure is the panel's own
    assert [q.rank for q in fig.first.questions] != [q.rank for q in fig.second.questions]  # it ranks differently
    assert fig.second_model["spec"] == f"st:{two_layer}" and fig.first_model["spec"] == "minilm"
    text = box.text.text()
    assert text.startswith(f"MiniLM → <b>{two_layer.name}</b>")
    assert f"hit@{res.request.k}" in text and "MRR" in text and fig.paired["hit_rate"].verdict in text
    fixed, broke = len(fig.comparison.fixed), len(fig.comparison.broke)
    assert fixed + broke > 0 and f"found only by {two_layer.name}, {broke} only by MiniLM" in text
    assert not box.progress.isVisibleTo(w) and box.button.isEnabled()
    # The model in use stays; the second model is remembered for the next comparison.
    assert w.retrieval.embedder is minilm
    assert Settings(settings_store).get(COMPARE_EMBEDDER) == {"spec": f"st:{two_layer}"}
    # Another k: the figures are for earlier settings, and say so.
    w.retrieval.set_k(res.request.k + 1)
    wait_result(w, gold=True, timeout=SLOW)
    assert "earlier settings" in box.title.text() and not box.text.isEnabled()


@pytest.mark.slow
def test_comparing_can_be_cancelled_and_a_bad_model_is_one_line(qtbot, minilm_window, open_doc, short_doc,
                                                                wait_result, two_layer, tmp_path):
    w = minilm_window()
    open_doc(w, short_doc)
    wait_result(w, gold=True, timeout=SLOW)
    box = w.model_compare_box
    assert box.score({"spec": f"st:{two_layer}"})
    box.cancel.click()
    assert not box.progress.isVisibleTo(w) and not box.cancel.isVisibleTo(w) and box.button.isEnabled()
    qtbot.waitUntil(lambda: box.runner.active_threads() == 0, timeout=SLOW)
    assert box.figures is None and box.text.text() == ""
    missing = tmp_path / "no-such-model"
    box.score({"spec": f"st:{missing}"})
    qtbot.waitUntil(lambda: not box.scoring, timeout=SLOW)
    assert str(missing) in box.text.text() and box.figures is None and box.button.isEnabled()


def test_under_bm25_there_are_no_vectors_to_compare(qtbot, hash_window, open_doc, short_doc, wait_result):
    w = hash_window()
    open_doc(w, short_doc)
    res = wait_result(w, gold=True)
    assert res.retriever == "bm25"
    box = w.model_compare_box
    assert box.isVisibleTo(w) and not box.button.isEnabled()
    assert "BM25 reads no vectors" in box.button.toolTip()
    assert box.score({"spec": "minilm"}) == 0


def test_the_dialog_round_trips_every_option(qtbot, hash_window, tmp_path):
    from inspector.qt.dialogs.embedder_dialog import EmbedderDialog

    w = hash_window(start=False)
    choice = {"spec": "openai:text-embedding-3-large", "url": "http://127.0.0.1:8080/v1", "key_env": "MY_KEY",
              "tokenizer": "o200k_base", "max_tokens": 8191, "dimensions": 256}
    dialog = EmbedderDialog(w, choice=choice)
    assert dialog.openai.isChecked() and dialog.http_box.isEnabled() and not dialog.st_box.isEnabled()
    assert dialog.choice() == choice
    assert EmbedderSpec.from_dict(dialog.choice()).to_dict() == choice
    dialog.st.setChecked(True)
    dialog.path.setText(str(tmp_path))
    dialog.trust.setChecked(True)
    assert dialog.choice() == {"spec": f"st:{tmp_path}", "trust_remote_code": True, "max_tokens": 8191}
    dialog.minilm.setChecked(True)
    assert dialog.choice() == {"spec": "minilm"} and not dialog.max_tokens.isEnabled()
    dialog.st.setChecked(True)
    dialog.path.setText("")
    assert not dialog.buttons.button(dialog.buttons.StandardButton.Ok).isEnabled()  # no model named
    dialog.reject()


def test_the_message_names_the_model_that_stays(qtbot, hash_window, tmp_path):
    w = hash_window()
    qtbot.waitUntil(lambda: w.retrieval.embedder is not None, timeout=10_000)
    before = w.retrieval.embedder
    w.embedder_actions.apply({"spec": f"st:{tmp_path / 'gone'}"})
    qtbot.waitUntil(lambda: w.embedder_actions.pending is None, timeout=30_000)
    assert w.messages.last_error.endswith("(hash stays)") and w.retrieval.embedder is before
