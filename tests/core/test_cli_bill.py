"""`--embed-price` and `--llm-price` on eval, compare and sweep: the bill in JSON and in tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "gold"
FIELDS = {"embed_usd", "context_tokens_per_question", "context_usd_per_question", "embed_seconds_estimate"}


def run(capsys, *argv) -> str:
    code = main(list(argv))
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


def test_eval_json_carries_the_bill(capsys, corpus, gold):
    # fixed_chars 20: 28 chunks, over MIN_TEXTS, so the embedding is a measurement.
    data = json.loads(run(capsys, "eval", str(corpus), "--gold", str(gold), "--strategy", "fixed_chars",
                          "--size", "20", "--overlap", "0", "--retriever", "dense", "--embedder", "hash",
                          "--embed-price", "0.02", "--llm-price", "2.5", "--format", "json"))
    cost = data["cost"]
    assert set(cost) >= FIELDS
    assert cost["embed_usd"] == pytest.approx(cost["embedded_tokens"] * 0.02 / 1e6, abs=1e-8)
    assert cost["context_tokens_per_question"] == pytest.approx(data["context_tokens_mean"], abs=0.01)
    assert cost["context_usd_per_question"] == pytest.approx(cost["context_tokens_per_question"] * 2.5 / 1e6,
                                                             abs=1e-8)
    # The hash embedder just embedded the corpus: its measured speed gives the estimate.
    assert cost["embed_seconds_estimate"] is not None and cost["embed_seconds_estimate"] >= 0
    assert cost["embed_usd_per_million"] == 0.02 and cost["llm_usd_per_million"] == 2.5


def test_without_prices_the_dollars_are_null_and_the_tokens_are_there(capsys, corpus, gold):
    data = json.loads(run(capsys, "eval", str(corpus), "--gold", str(gold), "--retriever", "bm25",
                          "--strategy", "paragraph", "--format", "json"))
    cost = data["cost"]
    assert cost["embed_usd"] is None and cost["context_usd_per_question"] is None
    assert cost["context_tokens_per_question"] > 0
    assert cost["embed_seconds_estimate"] is None  # BM25 loads no embedder


def test_budget_bills_what_is_sent(capsys, corpus, gold):
    data = json.loads(run(capsys, "eval", str(corpus), "--gold", str(gold), "--retriever", "bm25",
                          "--strategy", "paragraph", "--budget", "30", "--llm-price", "10", "--format", "json"))
    cost = data["cost"]
    assert cost["context_within_budget"] is True
    assert cost["context_tokens_per_question"] == pytest.approx(data["tokens_sent_mean"], abs=0.01)
    assert cost["context_tokens_per_question"] <= 30


def test_tables_carry_the_bill_only_when_a_price_is_given(capsys, corpus, gold):
    out = run(capsys, "eval", str(corpus), "--gold", str(gold), "--retriever", "bm25", "--strategy", "paragraph")
    assert not any(x.startswith("bill: ") for x in out.splitlines())


def test_eval_table_prints_a_bill_line(capsys, corpus, gold):
    out = run(capsys, "eval", str(corpus), "--gold", str(gold), "--strategy", "paragraph", "--embedder", "hash",
              "--embed-price", "0.02", "--llm-price", "3")
    line = next(x for x in out.splitlines() if x.startswith("bill: "))
    assert "to embed (" in line and "$0.02/M" in line and "per question = $" in line


def test_compare_json_bills_both_sides(capsys, corpus, gold):
    data = json.loads(run(capsys, "compare", str(corpus), "--gold", str(gold), "--strategy", "paragraph",
                          "--against", "fixed_chars:200:0", "--retriever", "bm25", "--embed-price", "1",
                          "--format", "json"))
    for side in ("before", "after"):
        cost = data[side]["cost"]
        assert cost["embed_usd"] == pytest.approx(cost["embedded_tokens"] / 1e6, abs=1e-8)


def test_sweep_has_the_bill_as_columns_and_in_json(capsys, corpus, gold):
    args = ["sweep", str(corpus), "--gold", str(gold), "--strategies", "fixed_chars", "--sizes", "200,400",
            "--overlaps", "0", "--embedder", "hash", "--embed-price", "0.02", "--llm-price", "3"]
    data = json.loads(run(capsys, *args, "--format", "json"))
    assert len(data["rows"]) == 3  # the two sizes and the default configuration compared against
    for row in data["rows"]:
        assert set(row["cost"]) >= FIELDS
        assert row["cost"]["embed_usd"] == pytest.approx(row["cost"]["embedded_tokens"] * 0.02 / 1e6, abs=1e-8)
    table = run(capsys, *args)
    lines = table.splitlines()
    at = next(i for i, line in enumerate(lines) if "index $" in line)  # after the device line
    assert "$/question" in lines[at] and "embed" in lines[at]
    assert "$" in lines[at + 1]


@pytest.mark.parametrize("flag", ["--embed-price", "--llm-price"])
def test_a_negative_price_is_one_line(capsys, corpus, gold, flag):
    code = main(["eval", str(corpus), "--gold", str(gold), "--retriever", "bm25", flag, "-1"])
    err = capsys.readouterr().err
    assert code != 0 and err.count("\n") == 1 and "at least 0" in err
