"""`static:` embedders (issue 28: the fast static family) with a real StaticEmbedding model built
inside the tests from the bundled one (tests/support/models.py): its vectors are the mean of its
word pieces' rows, its own pieces and limit drive the counts, it is kept apart in the cache, and it
ranks through the same command-line path as the other models."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from inspector.cli import main
from inspector.core.embedding.cache import EmbeddingCache
from inspector.core.embedding.embedder import cache_namespace, embed_texts
from inspector.core.embedding.spec import embedder_info, make_embedder, parse_embedder_spec
from inspector.core.embedding.static_model import DEFAULT_STATIC_MAX_TOKENS, StaticEmbedder
from inspector.core.errors import InputError
from inspector.core.text import wordpieces

pytestmark = pytest.mark.slow

TEXTS = [
    "Statutory maternity leave in France is 16 weeks for the first child.",
    "Hotel costs are reimbursed up to 150 euros per night in most cities.",
    "Submit your expense report within 30 days of returning from a trip.",
]


@pytest.fixture(scope="module")
def static(static_model):
    return make_embedder(f"static:{static_model}", device="cpu")


def _rows(folder) -> np.ndarray:
    from safetensors.numpy import load_file

    (matrix,) = load_file(str(folder / "model.safetensors")).values()
    return matrix


def test_the_spec_names_a_static_folder_and_reads_only_its_limit():
    spec = parse_embedder_spec("static:/models/potion", max_tokens=128)
    assert (spec.kind, spec.name, spec.max_tokens) == ("static", "/models/potion", 128)
    assert spec.text == "static:/models/potion"
    assert spec.names_model and spec.short_name == "potion"
    with pytest.raises(InputError, match=r"static: needs a model name \(static:PATH\)"):
        parse_embedder_spec("static:")
    with pytest.raises(InputError, match="--trust-remote-code applies to st:NAME_OR_PATH embedders, not static"):
        parse_embedder_spec("static:/m", trust_remote_code=True)


def test_a_folder_that_is_no_static_model_is_one_clear_line(two_layer_model, tmp_path):
    with pytest.raises(InputError, match="no static model in .*two-layer.*StaticEmbedding"):
        make_embedder(f"static:{two_layer_model}")
    with pytest.raises(InputError, match="no static model folder at .*missing"):
        make_embedder(f"static:{tmp_path / 'missing'}")


def test_a_text_is_the_normalized_mean_of_its_pieces_rows(static, static_model):
    """What a static model is: no transformer, one row per word piece (no [CLS]/[SEP])."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(static_model / "tokenizer.json"))
    rows = _rows(static_model)
    got = static.encode(TEXTS)
    for text, vec in zip(TEXTS, got, strict=True):
        want = rows[tok.encode(text, add_special_tokens=False).ids].mean(axis=0)
        assert np.allclose(vec, want / np.linalg.norm(want), atol=1e-5)
    assert np.allclose(static.encode_queries(TEXTS), got, atol=1e-6)  # no prompts: one pipeline


def test_its_own_pieces_and_limit_drive_counts_and_truncation(static_model):
    emb = make_embedder(parse_embedder_spec(f"static:{static_model}", max_tokens=8), device="cpu")
    assert emb.max_seq_length == 8 and emb.piece_spec[2:] == (8, 0)
    long = "one two three four five six seven eight nine ten eleven twelve"
    first8 = "one two three four five six seven eight"
    a, b, c = emb.encode([long, first8, "nine ten eleven twelve"])
    assert np.allclose(a, b, atol=1e-6) and not np.allclose(a, c, atol=1e-2)  # read up to its limit only
    try:
        spec = wordpieces.use_embedder_pieces(emb)
        assert spec.specials == 0 and spec.limit == 8
        assert wordpieces.count_text(first8) == 8  # no [CLS]/[SEP] counted
    finally:
        wordpieces.use_piece_spec(None)
    default = make_embedder(f"static:{static_model}", device="cpu")
    assert default.max_seq_length == DEFAULT_STATIC_MAX_TOKENS


def test_its_vectors_are_its_own_in_the_cache(minilm, static, tmp_path):
    assert static.model_id != minilm.model_id and cache_namespace(static) != cache_namespace(minilm)
    cache = EmbeddingCache(tmp_path / "cache")
    first = embed_texts(minilm, TEXTS, cache)
    second = embed_texts(static, TEXTS, cache)
    assert np.allclose(second, static.encode(TEXTS), atol=1e-5)
    assert not np.allclose(first, second, atol=1e-2)
    info = embedder_info(static)
    assert info["spec"] == f"static:{static.name}" and info["dims"] == 384
    assert info["max_tokens"] == DEFAULT_STATIC_MAX_TOKENS and info["backend"] == "torch-static"


def test_a_static_folder_named_st_loads_as_a_static_model(static_model):
    """The window's model-folder field writes st:PATH; a static folder there is the same model."""
    emb = make_embedder(f"st:{static_model}", device="cpu")
    assert isinstance(emb, StaticEmbedder) and emb.piece_spec[3] == 0
    assert np.allclose(emb.encode(TEXTS[:1]), make_embedder(f"static:{static_model}").encode(TEXTS[:1]),
                       atol=1e-6)


def test_it_travels_to_another_process_as_itself(static):
    again = pickle.loads(pickle.dumps(static))
    assert isinstance(again, StaticEmbedder) and again.model_id == static.model_id
    assert np.allclose(again.encode(TEXTS[:1]), static.encode(TEXTS[:1]), atol=1e-6)


def test_eval_ranks_with_it_through_the_command_line(capsys, static_model, corpus, gold):
    """The user's path: `eval --embedder static:PATH`, its report naming the model, its ranking
    its own (not MiniLM's)."""
    base = [str(corpus), "--gold", str(gold), "--strategy", "fixed_chars", "--size", "60", "--overlap", "0",
            "--retriever", "dense", "--k", "2", "--format", "json"]
    assert main(["eval", *base, "--embedder", f"static:{static_model}"]) == 0
    static_report = json.loads(capsys.readouterr().out)
    assert main(["eval", *base]) == 0
    minilm_report = json.loads(capsys.readouterr().out)
    assert static_report["embedder"]["spec"] == f"static:{static_model}"
    assert static_report["embedder"]["backend"] == "torch-static"
    ranked = [q["retrieved_ids"] for q in static_report["questions"]]
    assert ranked != [q["retrieved_ids"] for q in minilm_report["questions"]]
