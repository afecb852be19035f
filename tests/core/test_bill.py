"""The bill: prices x exact token counts, and the embedding time at the measured speed (hand-computed)."""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest

from inspector.core.embedding import rate as throughput
from inspector.core.embedding.rate import TokenRate as Throughput
from inspector.core.evaluation.bill import (
    Rates,
    bill_dict,
    bill_for,
    bill_line,
    format_seconds,
    format_usd,
    make_bill,
    usd,
)
from inspector.core.evaluation.metrics import IndexCost, Report


def _report(*, ctx=1200.0, budget=None, sent=None, chunks=40, tokens=250_000, questions=3) -> Report:
    from inspector.core.evaluation.gold import GoldQuestion
    from inspector.core.evaluation.metrics import QuestionResult

    qs = tuple(QuestionResult(GoldQuestion(f"q{i}", ("a",)), True, 1, ()) for i in range(questions))
    return Report(k=5, hit_rate=1.0, mrr=1.0, recall=None, precision=None, iou=None, questions=qs,
                  cost=IndexCost(chunks, tokens, tokens), context_tokens_mean=ctx, budget=budget,
                  tokens_sent_mean=sent)


def test_usd_is_tokens_times_price_per_million():
    assert usd(1_234_567, 0.02) == pytest.approx(0.02469134)
    assert usd(1_000_000, 3.0) == pytest.approx(3.0)
    assert usd(500, None) is None
    assert usd(0, 5.0) == 0.0


def test_bill_of_counts_given_directly():
    t = Throughput("m", texts=100, tokens=50_000, seconds=10.0)  # 5,000 tokens/s
    b = make_bill(10, 250_000, Rates(0.13, 2.5, t), context_tokens_per_question=1_500)
    assert b.embed_usd == pytest.approx(0.0325)  # 250,000 x 0.13 / 1e6
    assert b.embed_seconds_estimate == pytest.approx(50.0)  # 250,000 / 5,000
    assert b.context_usd_per_question == pytest.approx(0.00375)  # 1,500 x 2.5 / 1e6
    assert t.texts_per_second == pytest.approx(10.0)


def test_bill_of_a_report_uses_the_context_handed_to_the_llm():
    b = bill_for(_report(ctx=1200.0), Rates(0.02, 3.0))
    assert b.context_tokens_per_question == 1200.0 and not b.within_budget
    assert b.context_usd_per_question == pytest.approx(0.0036)  # 1,200 x 3 / 1e6
    assert b.embed_usd == pytest.approx(0.005)  # 250,000 x 0.02 / 1e6
    assert b.embed_seconds_estimate is None  # nothing measured


def test_under_a_budget_the_context_is_what_is_sent():
    b = bill_for(_report(ctx=1200.0, budget=1000, sent=800.0), Rates(llm_usd_per_million=3.0))
    assert b.within_budget and b.context_tokens_per_question == 800.0
    assert b.context_usd_per_question == pytest.approx(0.0024)
    assert b.embed_usd is None


def test_without_questions_or_prices_nothing_is_guessed():
    b = bill_for(_report(questions=0))
    assert b.context_tokens_per_question is None and b.context_usd_per_question is None
    assert b.embed_usd is None and b.embed_seconds_estimate is None
    d = bill_dict(b)
    assert {"embed_usd", "context_tokens_per_question", "context_usd_per_question",
            "embed_seconds_estimate"} <= set(d)
    assert d["embed_usd"] is None


@pytest.mark.parametrize("bad", [-0.01, math.nan])
def test_prices_must_be_at_least_zero(bad):
    with pytest.raises(ValueError, match="at least 0"):
        Rates(embed_usd_per_million=bad)
    with pytest.raises(ValueError, match="at least 0"):
        Rates(llm_usd_per_million=bad)


def test_formats():
    assert format_usd(1234.5) == "$1,234.50"
    assert format_usd(0.0123) == "$0.0123"
    assert format_usd(0.000012) == "$0.0000120"
    assert format_usd(0.0) == "$0" and format_usd(None) == "–"
    assert format_seconds(0.05) == "< 0.1 s"
    assert format_seconds(3.21) == "3.2 s"
    assert format_seconds(42.4) == "42 s"
    assert format_seconds(185) == "3 min 5 s"
    assert format_seconds(120) == "2 min"
    assert format_seconds(7800) == "2 h 10 min"


def test_bill_line_says_how_each_figure_was_made():
    t = Throughput("m", 100, 50_000, 10.0)
    line = bill_line(bill_for(_report(), Rates(0.02, 3.0, t)))
    assert "$0.00500 to embed (250,000 tokens at $0.02/M)" in line
    assert "1,200 tokens of context per question = $0.00360 ($3.60 per 1,000 questions)" in line
    assert "50 s to embed here (5,000 tokens/s measured)" in line
    assert "set a price" in bill_line(bill_for(_report()))


# -- the measured speed ----------------------------------------------------------------------------------

@pytest.fixture
def fresh_throughput(tmp_path, monkeypatch):
    from inspector.core.runtime import cachedir

    monkeypatch.setenv(cachedir.ENV_VAR, str(tmp_path))
    throughput.forget()
    yield tmp_path
    throughput.forget()


def test_a_measurement_counts_tokens_exactly_and_is_persisted(fresh_throughput):
    from inspector.core.text.tokens import count_text

    texts = [f"chunk number {i} about parental leave in Germany" for i in range(20)]
    assert throughput.record("m", texts[:5], 1.0) is None  # too few texts to be a measurement
    t = throughput.record("m", texts, 2.0)
    assert t is not None and t.texts == 20 and t.tokens == sum(count_text(x) for x in texts)
    assert t.tokens_per_second == pytest.approx(t.tokens / 2.0)
    saved = json.loads((fresh_throughput / throughput.FILE_NAME).read_text(encoding="utf-8"))
    assert saved["m"]["tokens"] == t.tokens and saved["m"]["seconds"] == 2.0
    throughput.forget()
    again = throughput.last("m")
    assert again is not None and again.tokens == t.tokens and again.seconds == 2.0
    assert throughput.last("other") is None and throughput.last(None) is None


def test_a_broken_file_reads_as_no_measurement(fresh_throughput):
    (fresh_throughput / throughput.FILE_NAME).write_text("{not json", encoding="utf-8")
    assert throughput.last("m") is None
    (fresh_throughput / throughput.FILE_NAME).write_text(json.dumps({"m": {"texts": "x"}}), encoding="utf-8")
    throughput.forget()
    assert throughput.last("m") is None


class _SlowEmbedder:
    """A test embedder whose encode takes measurable time."""

    model_id = "slow-test-embedder"
    dim = 4
    max_seq_length = 256
    batch_size = 8

    def __init__(self):
        self.calls = 0

    def encode(self, texts):
        self.calls += 1
        time.sleep(0.002)
        return np.tile(np.array([1.0, 0, 0, 0], dtype=np.float32), (len(texts), 1))


def test_embed_texts_measures_what_it_sends_to_the_model(fresh_throughput):
    from inspector.core.embedding.cache import EmbeddingCache
    from inspector.core.embedding.embedder import embed_texts
    from inspector.core.text.tokens import count_text

    emb = _SlowEmbedder()
    cache = EmbeddingCache(fresh_throughput / "emb", persist=False)
    texts = [f"text {i} " * (i % 5 + 1) for i in range(40)]
    embed_texts(emb, texts[:20], cache)
    first = throughput.last(emb.model_id)
    assert first is not None and first.texts == 20
    embed_texts(emb, texts, cache)  # 20 cached, 20 new: only the new ones are measured
    second = throughput.last(emb.model_id)
    assert second is not first and second.texts == 20
    assert second.tokens == sum(count_text(t) for t in texts[20:])
    embed_texts(emb, texts, cache)  # everything cached: no measurement
    assert throughput.last(emb.model_id) is second
