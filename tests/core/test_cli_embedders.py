"""Two embedding models on the same chunks and questions (issue 28, item 3): `compare
--against-embedder SPEC` and `sweep --embedders a,b`, with the bundled MiniLM beside a second real
model (its first two layers, built in a folder by tests/support/models.py) that ranks otherwise."""

from __future__ import annotations

import json

import pytest

from inspector.cli import main

CHUNKS = ["--strategy", "fixed_chars", "--size", "60", "--overlap", "0", "--retriever", "dense", "--k", "2"]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def run_json(capsys, *argv: str) -> dict:
    code, out, err = run(capsys, *argv, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def _ranked(report: dict) -> list[list[int]]:
    return [q["retrieved_ids"] for q in report["questions"]]


def test_compare_against_a_second_model_scores_each_side_with_its_own_model(capsys, two_layer_model,
                                                                              corpus, gold):
    two = f"st:{two_layer_model}"
    base = [str(corpus), "--gold", str(gold), *CHUNKS]
    cmp = run_json(capsys, "compare", *base, "--against-embedder", two)
    assert cmp["before"]["embedder"]["spec"] == cmp["embedder"]["spec"] == "minilm"
    assert cmp["after"]["embedder"]["spec"] == cmp["against_embedder"]["spec"] == two
    assert cmp["after"]["embedder"]["backend"] == "torch"
    # The same chunks on both sides, ranked otherwise by the second model.
    assert cmp["before"]["cost"]["chunks"] == cmp["after"]["cost"]["chunks"]
    assert _ranked(cmp["before"]) != _ranked(cmp["after"])
    # Each side is what eval gives with that model alone: the vectors of one model never stand in for
    # the other's (the cache keeps them per model identity).
    alone_a = run_json(capsys, "eval", *base)
    alone_b = run_json(capsys, "eval", *base, "--embedder", two)
    assert _ranked(cmp["before"]) == _ranked(alone_a) and _ranked(cmp["after"]) == _ranked(alone_b)
    assert (cmp["before"]["mrr"], cmp["after"]["mrr"]) == (alone_a["mrr"], alone_b["mrr"])
    assert cmp["deltas"]["mrr"]["delta"] == pytest.approx(alone_b["mrr"] - alone_a["mrr"])
    for metric in ("hit_rate", "mrr"):
        paired = cmp["paired"][metric]
        assert paired["verdict"] in ("better", "worse", "within noise") and len(paired["ci"]) == 2

    code, out, err = run(capsys, "compare", *base, "--against-embedder", two)
    assert code == 0, err
    assert "A (baseline) embedder: minilm" in out and f"B            embedder: {two}" in out
    assert "B - A, paired over the same questions" in out


def test_sweep_per_model_says_which_setting_is_best_under_each(capsys, two_layer_model, corpus, gold):
    two = f"st:{two_layer_model}"
    grid = [str(corpus), "--gold", str(gold), "--retriever", "dense", "--strategies", "fixed_chars",
            "--sizes", "60,200", "--overlaps", "0", "--ks", "2", "--against", "fixed_chars:60:0"]
    data = run_json(capsys, "sweep", *grid, "--embedders", f"minilm,{two}")
    assert [m["embedder"]["spec"] for m in data["models"]] == ["minilm", two]
    by_model = [{r["label"]: (r["hit_rate"], r["mrr"]) for r in m["rows"]} for m in data["models"]]
    assert set(by_model[0]) == set(by_model[1]) and len(by_model[0]) == 2
    assert by_model[0] != by_model[1], "the second model scored every setting as MiniLM did"
    # Each model's best is the first row of its own table, and the verdict follows from them.
    for entry, m in zip(data["best"], data["models"], strict=True):
        assert entry["label"] == m["rows"][0]["label"]
        assert entry["embedder"] == m["embedder"]["spec"]
    bests = {b["label"] for b in data["best"]}
    assert data["best_changes_with_model"] == (len(bests) > 1)
    # The second model's row is what eval gives with it alone.
    alone = run_json(capsys, "eval", str(corpus), "--gold", str(gold), *CHUNKS, "--embedder", two)
    row = next(r for r in data["models"][1]["rows"] if r["label"].startswith("fixed_chars size=60 "))
    assert row["hit_rate"] == pytest.approx(alone["hit_rate"], abs=1e-4)
    assert row["mrr"] == pytest.approx(alone["mrr"], abs=1e-4)

    code, out, err = run(capsys, "sweep", *grid, "--embedders", f"minilm,{two}")
    assert code == 0, err
    assert "== minilm ==" in out and f"== {two} ==" in out
    assert "best setting per model" in out and "the best setting" in out.splitlines()[-1]


@pytest.mark.parametrize("argv,needle", [
    (["compare", "--against-embedder", "bogus:x"], "bogus"),
    (["compare", "--against-embedder", "st:/no/such/model-folder"], "/no/such/model-folder"),
    (["compare"], "give --against STRATEGY[:SIZE[:OVERLAP]] or --against-embedder SPEC"),
    (["compare", "--against", "fixed_chars:200:0", "--against-embedder", "hash"], "not both"),
    (["compare", "--against-embedder", "hash", "--retriever", "bm25"], "bm25"),
    (["sweep", "--embedders", "minilm,bogus:x"], "bogus"),
    (["sweep", "--embedders", " , "], "names no model"),
    (["sweep", "--embedders", "minilm,hash", "--embedder", "hash"], "not both"),
    (["sweep", "--embedders", "minilm,hash", "--retriever", "bm25"], "bm25"),
])
def test_bad_model_flags_are_one_line(capsys, corpus, gold, argv, needle):
    code, out, err = run(capsys, argv[0], str(corpus), "--gold", str(gold), *argv[1:])  # dense by default
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ") and "Traceback" not in err
    assert needle in err
    assert out == ""
