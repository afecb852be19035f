"""`eval`, `compare`, `sweep` on a small corpus (hash embedder, BM25), and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "gold"


@pytest.fixture()
def plain_gold(tmp_path) -> Path:
    p = tmp_path / "plain.csv"
    p.write_text("question,answer,source\nHow long is maternity leave in France?,16 weeks,leave.md\n"
                 "What is the per diem in Oslo?,€79,travel.md\n", encoding="utf-8")
    return p


def run_json(capsys, *argv) -> dict:
    code = main(list(argv) + ["--format", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


# -- eval -------------------------------------------------------------------------------------------

def test_eval_json_shape_bm25(capsys, corpus, gold):
    data = run_json(capsys, "eval", str(corpus), "--gold", str(gold), "--retriever", "bm25",
                    "--strategy", "paragraph", "--k", "2", "--embedder", "hash")
    assert {"hit_rate", "mrr", "k", "recall", "precision", "iou", "questions", "cost", "config"} <= set(data)
    assert data["k"] == 2
    # paragraph is a naive strategy: raw text is embedded unless --prefix asks otherwise.
    assert data["config"] == {"strategy": "paragraph", "params": {}, "k": 2, "retriever": "bm25",
                              "with_prefix": False, "embedding": "exact"}
    assert len(data["questions"]) == 4
    for q in data["questions"]:
        assert {"question", "hit", "rank", "diagnosis", "retrieved", "retrieved_ids"} <= set(q)
        assert len(q["retrieved"]) <= 2
        assert q["hit"] == (q["rank"] is not None) and (q["diagnosis"] is None) == q["hit"]
        assert all(isinstance(i, int) for i in q["retrieved_ids"])
    assert 0 <= data["hit_rate"] <= 1 and data["recall"] is not None  # the gold set has spans
    assert data["hit_rate"] == pytest.approx(sum(q["hit"] for q in data["questions"]) / 4, abs=1e-4)
    assert {"chunks", "embedded_tokens", "document_tokens", "inflation"} <= set(data["cost"])


def test_eval_without_spans_has_null_span_metrics(capsys, corpus, plain_gold):
    data = run_json(capsys, "eval", str(corpus), "--gold", str(plain_gold), "--retriever", "bm25")
    assert data["recall"] is None and data["precision"] is None and data["iou"] is None
    assert data["hit_rate"] == 1.0


def test_eval_dense_with_hash_embedder(capsys, corpus, gold):
    data = run_json(capsys, "eval", str(corpus), "--gold", str(gold), "--embedder", "hash", "--retriever", "dense",
                    "--strategy", "fixed_chars", "--size", "60", "--overlap", "0", "--no-prefix")
    assert data["config"]["retriever"] == "dense" and data["config"]["with_prefix"] is False
    assert data["config"]["params"] == {"size": 60, "overlap": 0}
    assert data["cost"]["chunks"] > 5


def test_the_default_retriever_is_the_declared_one(capsys, corpus, gold):
    """eval, sweep and ask without --retriever use `DEFAULT_RETRIEVER`, as EvalConfig does."""
    from inspector.core.evaluation.config import DEFAULT_RETRIEVER, EvalConfig

    assert EvalConfig().retriever == DEFAULT_RETRIEVER
    data = run_json(capsys, "eval", str(corpus), "--gold", str(gold), "--embedder", "hash")
    assert data["config"]["retriever"] == DEFAULT_RETRIEVER
    data = run_json(capsys, "sweep", str(corpus), "--gold", str(gold), "--embedder", "hash",
                    "--strategies", "fixed_tokens", "--sizes", "32", "--overlaps", "0")
    assert {r["config"]["retriever"] for r in data["rows"]} == {DEFAULT_RETRIEVER}


def test_eval_table(capsys, corpus, gold):
    assert main(["eval", str(corpus), "--gold", str(gold), "--retriever", "bm25"]) == 0
    out = capsys.readouterr().out
    assert "hit@5" in out and "MRR" in out and "index:" in out
    assert "How long is parental allowance paid in Germany?" in out


def test_eval_config_file_and_flag_override(capsys, tmp_path, corpus, gold):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"strategy": "recursive", "params": {"size": 32, "overlap": 8},
                               "k": 1, "retriever": "bm25", "with_prefix": False}), encoding="utf-8")
    data = run_json(capsys, "eval", str(corpus), "--gold", str(gold), "--config", str(cfg))
    assert data["config"] == {"strategy": "recursive", "params": {"size": 32, "overlap": 8}, "k": 1,
                              "retriever": "bm25", "with_prefix": False, "embedding": "exact"}
    data = run_json(capsys, "eval", str(corpus), "--gold", str(gold), "--config", str(cfg),
                    "--size", "48", "--k", "3")
    assert data["config"]["params"] == {"size": 48, "overlap": 8} and data["k"] == 3


def test_eval_warnings_go_to_stderr(capsys, tmp_path, corpus):
    g = tmp_path / "g.jsonl"
    g.write_text('{"question": "Mars?", "answer": "on Mars"}\n', encoding="utf-8")
    assert main(["eval", str(corpus), "--gold", str(g), "--retriever", "bm25", "--format", "json"]) == 0
    out = capsys.readouterr()
    assert f"warning: {g}:1: answer 'on Mars' occurs nowhere in the corpus" in out.err
    data = json.loads(out.out)
    assert data["questions"][0]["diagnosis"] == "answer not in any document"


# -- compare and sweep ------------------------------------------------------------------------------

def test_compare_json(capsys, corpus, gold):
    data = run_json(capsys, "compare", str(corpus), "--gold", str(gold), "--retriever", "bm25",
                    "--strategy", "paragraph", "--k", "1", "--against", "fixed_chars:40:0")
    assert data["before"]["config"]["strategy"] == "fixed_chars"
    assert data["after"]["config"]["strategy"] == "paragraph"
    assert data["before"]["config"]["k"] == data["after"]["config"]["k"] == 1
    d = data["deltas"]["hit_rate"]
    assert d["delta"] == pytest.approx(d["after"] - d["before"])
    before = {q["question"]: q["hit"] for q in data["before"]["questions"]}
    after = {q["question"]: q["hit"] for q in data["after"]["questions"]}
    assert {c["question"] for c in data["fixed"]} == {q for q in before if after[q] and not before[q]}
    assert {c["question"] for c in data["broke"]} == {q for q in before if before[q] and not after[q]}


def test_compare_table(capsys, corpus, gold):
    assert main(["compare", str(corpus), "--gold", str(gold), "--retriever", "bm25",
                 "--against", "paragraph"]) == 0
    out = capsys.readouterr().out
    assert "A (baseline): paragraph" in out and "fixed by B" in out and "broken by B" in out


def test_sweep_json_best_first(capsys, corpus, gold):
    data = run_json(capsys, "sweep", str(corpus), "--gold", str(gold), "--retriever", "bm25",
                    "--strategies", "fixed_chars,recursive,paragraph", "--sizes", "40,400",
                    "--overlaps", "0,20", "--ks", "1,3")
    rows = data["rows"]
    keys = [(-r["hit_rate"], -r["mrr"]) for r in rows]
    assert keys == sorted(keys)
    assert {r["config"]["k"] for r in rows} == {1, 3}
    assert any(s["point"] == "paragraph size=40 overlap=20" for s in data["skipped"])


def test_sweep_json_findings_and_graded_advice(capsys, corpus, gold):
    """Findings of the current settings without the gold set, P(better), the questions to confirm
    and the context tokens per question with their delta (issue 29)."""
    data = run_json(capsys, "sweep", str(corpus), "--gold", str(gold), "--retriever", "bm25",
                    "--strategies", "paragraph,markdown", "--against", "fixed_chars:40:20")
    rec = data["recommendation"]
    kinds = [f["kind"] for f in rec["findings"]]
    assert "overlap_inflation" in kinds and data["findings"] == rec["findings"]
    for f in rec["findings"]:
        assert {"kind", "share", "detail", "fix"} <= set(f) and f["share"] > 0
        assert f["retriever"] == "bm25" and f["affects"] in ("full", "partial", "none")
    assert rec["fixes_partly"] in (True, False)
    assert 0 <= rec["p_better"] <= 1 and "questions_to_confirm" in rec and rec["reason"]
    assert rec["context_tokens_delta"] == pytest.approx(
        rec["context_tokens_per_question"] - rec["current_context_tokens_per_question"], abs=0.2)


def test_sweep_table(capsys, corpus, gold):
    assert main(["sweep", str(corpus), "--gold", str(gold), "--retriever", "bm25",
                 "--strategies", "paragraph,markdown", "--top", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "device: none (BM25 needs no model)"  # the header names the device
    assert lines[1].split()[:3] == ["#", "hit@k", "MRR"]
    # One row (--top 1), the legend, then the cross-validated recommendation against the default.
    assert lines[2].split()[0].rstrip("*=") == "1" and lines[3].startswith("= tied with the best")
    assert lines[4].startswith("recommendation (") and ("keep" in lines[5] or "switch" in lines[5])
    assert not any(line[:3].strip().isdigit() for line in lines[3:])


def test_a_sweep_across_units_says_so(capsys, corpus, gold):
    """--sizes 200 is 200 characters for fixed_chars and 200 tokens for recursive: the table says
    which strategy takes which, so two rows labelled size=200 are not read as the same size."""
    assert main(["sweep", str(corpus), "--gold", str(gold), "--retriever", "bm25",
                 "--strategies", "fixed_chars,recursive", "--sizes", "200", "--overlaps", "0"]) == 0
    out = capsys.readouterr().out
    # (markdown, the current settings' row, is in the table too)
    assert "Sizes are in each strategy's own unit: characters for fixed_chars; tokens for markdown, recursive." in out
    assert main(["sweep", str(corpus), "--gold", str(gold), "--retriever", "bm25",
                 "--strategies", "fixed_tokens,recursive", "--sizes", "200", "--overlaps", "0"]) == 0
    assert "own unit" not in capsys.readouterr().out


# -- bad input: one line on stderr, exit 2, no traceback --------------------------------------------

def bad_cases(corpus: Path, gold: Path, tmp: Path) -> list[tuple[list[str], str]]:
    broken = tmp / "broken.jsonl"
    broken.write_text('{"question": "q", "answer": "a"}\n{"question": \n', encoding="utf-8")
    badsrc = tmp / "badsrc.jsonl"
    badsrc.write_text('{"question": "q", "answer": "a", "source": "mars.md"}\n', encoding="utf-8")
    badcfg = tmp / "bad.json"
    badcfg.write_text('{"strategy": "markdown", "k": "five"}', encoding="utf-8")
    notjson = tmp / "notjson.json"
    notjson.write_text("{strategy", encoding="utf-8")
    header = tmp / "h.csv"
    header.write_text("q,a\nx,y\n", encoding="utf-8")
    c, g = str(corpus), str(gold)
    return [
        (["eval", c, "--gold", str(tmp / "missing.jsonl")], "missing.jsonl: no such file"),
        (["eval", c, "--gold", str(broken)], f"{broken}:2: broken JSON"),
        (["eval", c, "--gold", str(badsrc)], f"{badsrc}:1: field 'source': unknown document 'mars.md'"),
        (["eval", c, "--gold", str(header)], f"{header}:1: CSV header must be"),
        (["eval", c, "--gold", g, "--strategy", "nope"], "unknown strategy 'nope'"),
        (["eval", c, "--gold", g, "--strategy", "paragraph", "--size", "100"], "no size parameter"),
        (["eval", c, "--gold", g, "--strategy", "recursive", "--size", "64", "--overlap", "64"],
         "must be smaller than size"),
        (["eval", c, "--gold", g, "--k", "0"], "--k must be at least 1"),
        (["eval", c, "--gold", g, "--config", str(badcfg)], "field 'k': must be a whole number"),
        (["eval", c, "--gold", g, "--config", str(notjson)], "broken JSON"),
        (["eval", c, "--gold", g, "--config", str(tmp / "none.json")], "no such file"),
        (["eval", str(tmp / "nodocs"), "--gold", g], "no such file"),
        (["compare", c, "--gold", g, "--against", "fixed_chars:big"], "SIZE must be a whole number"),
        (["compare", c, "--gold", g, "--against", "a:1:2:3"], "expects STRATEGY[:SIZE[:OVERLAP]]"),
        (["sweep", c, "--gold", g, "--sizes", "1,x"], "--sizes expects comma-separated whole numbers"),
        (["sweep", c, "--gold", g, "--strategies", "markdown,nope"], "unknown strategy 'nope'"),
    ]


def test_bad_input_exits_2_with_one_line(capsys, tmp_path, corpus, gold):
    for argv, words in bad_cases(corpus, gold, tmp_path):
        code = main(argv + ["--retriever", "bm25"])
        err = capsys.readouterr().err
        assert code == 2, argv
        assert "Traceback" not in err
        lines = [x for x in err.splitlines() if not x.startswith("warning:")]
        assert len(lines) == 1 and lines[0].startswith("error: "), (argv, err)
        assert words in lines[0], (argv, lines[0])


@pytest.mark.parametrize("argv, words", [
    (["eval", "x.md"], "the following arguments are required: --gold"),
    (["eval", "x.md", "--gold", "g.jsonl", "--retriever", "sparse"], "invalid choice: 'sparse'"),
    (["eval", "x.md", "--gold", "g.jsonl", "--k", "many"], "invalid int value: 'many'"),
    # `compare` without a baseline: since --against-embedder it is the command's own one-line
    # error (status 2, no SystemExit), covered in test_cli_embedders.test_bad_model_flags_are_one_line.
])
def test_usage_errors_are_one_line(capsys, argv, words):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and words in err and "Traceback" not in err


def test_prefix_defaults_follow_the_strategy_and_flags_override(capsys, corpus, gold):
    common = ["eval", str(corpus), "--gold", str(gold), "--retriever", "bm25", "--embedder", "hash"]
    assert run_json(capsys, *common, "--strategy", "markdown")["config"]["with_prefix"] is True
    assert run_json(capsys, *common, "--strategy", "fixed_chars")["config"]["with_prefix"] is False
    assert run_json(capsys, *common, "--strategy", "fixed_chars", "--prefix")["config"]["with_prefix"] is True
    assert run_json(capsys, *common, "--strategy", "markdown", "--no-prefix")["config"]["with_prefix"] is False


def test_pooled_embedding_mode_and_sweep_confirmation(capsys, corpus, gold):
    common = ["--gold", str(gold), "--embedder", "hash", "--retriever", "dense"]
    data = run_json(capsys, "eval", str(corpus), *common, "--strategy", "markdown", "--embedding", "pooled")
    assert data["config"]["embedding"] == "pooled" and 0.0 <= data["hit_rate"] <= 1.0
    data = run_json(capsys, "sweep", str(corpus), *common, "--strategies", "fixed_tokens",
                    "--sizes", "32,64", "--overlaps", "0", "--embedding", "pooled", "--confirm", "1")
    rows = data["rows"]
    assert all(r["config"]["embedding"] == "pooled" for r in rows)
    assert rows[0]["exact"] is not None and all(r["exact"] is None for r in rows[1:])


def test_ask_prints_hits_and_filters_change_them(capsys, tmp_path):
    (tmp_path / "leave.md").write_text("# Leave\n\n## Germany\n\nParental allowance is paid for up to "
                                       "14 months.\n\n## France\n\nMaternity leave is 16 weeks.\n",
                                       encoding="utf-8")
    (tmp_path / "travel.md").write_text("# Travel\n\n## Germany\n\nThe per diem in Berlin is 28 euros.\n",
                                        encoding="utf-8")
    common = ["ask", str(tmp_path), "-q", "Germany allowance", "--retriever", "bm25",
              "--strategy", "markdown", "--size", "16", "--param", "hard_cap=64"]
    everything = run_json(capsys, *common)
    assert [h["chunk"].split("#")[0] for h in everything["hits"]][:1] == ["leave.md"]
    only_travel = run_json(capsys, *common, "--docs", "travel.md")
    assert {h["chunk"].split("#")[0] for h in only_travel["hits"]} == {"travel.md"}
    under = run_json(capsys, *common, "--heading", "Leave > Germany")
    assert under["hits"] and all(h["heading_path"][:2] == ["Leave", "Germany"] for h in under["hits"])
    # What the model reads: the prefix (structure-aware default) and then the span.
    hit = everything["hits"][0]
    assert hit["text"].startswith("Leave > Germany\n\n")
    assert main(["ask", str(tmp_path), "-q", "x", "--retriever", "bm25", "--docs", "nope.md"]) == 2
    assert "no document 'nope.md'" in capsys.readouterr().err
