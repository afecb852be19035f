"""Embedding throughput of `embed_texts` against raw `SentenceTransformer.encode`, and how much
of a re-chunked document the embedding cache serves after changing only the overlap.

    python benchmarks/embed_throughput.py [--texts 200] [--repeats 3] [--batch-size 32]

Prints what it measured. Targets: throughput ratio >= 0.95x; cache share as large as the
overlap change allows (identical chunk texts are never embedded twice).
"""

from __future__ import annotations

import argparse
import os
import statistics
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
from inspector.core.documents.document import Document, from_text  # noqa: E402
from inspector.core.embedding.cache import EmbeddingCache  # noqa: E402
from inspector.core.embedding.embedder import MiniLMEmbedder, embed_texts  # noqa: E402


def load_doc() -> Document:
    path = ROOT / "sample_docs" / "handbook.md"
    if path.is_file():
        return from_text(path.read_text(encoding="utf-8"), "handbook.md")
    import random

    rng = random.Random(7)
    words = ("leave policy employee weeks months refund expense travel manager approval remote "
             "office laptop security holiday salary contract notice benefit insurance").split()
    sections = []
    for s in range(40):
        paras = [" ".join(rng.choice(words) for _ in range(rng.randint(30, 90))) + "." for _ in range(4)]
        sections.append(f"## Section {s}\n\n" + "\n\n".join(paras))
    return from_text("# Generated handbook\n\n" + "\n\n".join(sections), "generated.md")


def throughput(emb: MiniLMEmbedder, texts: list[str], repeats: int, batch_size: int) -> None:
    model = emb.load()
    model.encode(texts[:batch_size], batch_size=batch_size, normalize_embeddings=True)  # warm-up
    raw_t, ours_t, cached_t = [], [], []
    for _ in range(repeats):  # interleaved, so load from other processes hits both alike
        t = time.perf_counter()
        model.encode(texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
                     show_progress_bar=False)
        raw_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        embed_texts(emb, texts, None, batch_size=batch_size)
        ours_t.append(time.perf_counter() - t)
        with tempfile.TemporaryDirectory() as tmp:  # an empty persistent cache: hashing + writing
            t = time.perf_counter()
            embed_texts(emb, texts, EmbeddingCache(tmp), batch_size=batch_size)
            cached_t.append(time.perf_counter() - t)
    n = len(texts)
    print(f"texts: {n} distinct, mean {statistics.mean(len(t) for t in texts):.0f} chars, "
          f"batch size {batch_size}, {repeats} interleaved runs each; load average {load()}")
    print(f"  {'':34} {'median':>8} {'best':>8}  {'texts/s':>8}  ratio (median / best run)")
    for name, ts in (("SentenceTransformer.encode", raw_t), ("embed_texts (no cache)", ours_t),
                     ("embed_texts (empty disk cache)", cached_t)):
        med, best = statistics.median(ts), min(ts)
        ratio = "" if ts is raw_t else (f"{statistics.median(raw_t) / med:.3f}x / {min(raw_t) / best:.3f}x"
                                        "   (target >= 0.95x)")
        print(f"  {name:<34} {med:7.2f}s {best:7.2f}s  {n / med:8.1f}  {ratio}")


def load() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cores"
    except OSError:
        return "unknown"


def cache_share(emb: MiniLMEmbedder, doc: Document, size: int, changes: list[tuple[int, int]]) -> None:
    print(f"\ncache share after changing only the overlap of fixed_tokens (size {size}) on {doc.name}:")
    for before, after in changes:
        with tempfile.TemporaryDirectory() as tmp:
            cache = EmbeddingCache(tmp)
            first = [c.embedded_text(doc) for c in
                     chunk_document(doc, "fixed_tokens", {"size": size, "overlap": before})]
            t = time.perf_counter()
            embed_texts(emb, first, cache)
            t_first = time.perf_counter() - t
            second = [c.embedded_text(doc) for c in
                      chunk_document(doc, "fixed_tokens", {"size": size, "overlap": after})]
            reopened = EmbeddingCache(tmp)  # through the disk files, as after a restart
            t = time.perf_counter()
            embed_texts(emb, second, reopened)
            t_second = time.perf_counter() - t
            served = reopened.hits
            print(f"  overlap {before:>3} -> {after:>3}: {len(first):3d} then {len(second):3d} chunks, "
                  f"{served:3d} served from cache ({served / len(second):6.1%}); "
                  f"embedding took {t_first:5.2f} s, then {t_second:5.2f} s")
        # Nothing else changes the texts, so a second run of the same params is all cache.
    with tempfile.TemporaryDirectory() as tmp:
        texts = [c.embedded_text(doc) for c in chunk_document(doc, "fixed_tokens", {"size": size, "overlap": 0})]
        embed_texts(emb, texts, EmbeddingCache(tmp))
        again = EmbeddingCache(tmp)
        t = time.perf_counter()
        embed_texts(emb, texts, again)
        print(f"  same params again: {again.hits}/{len(texts)} from cache in {time.perf_counter() - t:.3f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--texts", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=32)
    args = ap.parse_args()

    doc = load_doc()
    emb = MiniLMEmbedder(batch_size=args.batch_size, backend="torch")  # compared with raw SentenceTransformer.encode
    t = time.perf_counter()
    emb.load()
    print(f"model: {emb.model_id} (dim {emb.dim}, max_seq_length {emb.max_seq_length}), "
          f"loaded in {time.perf_counter() - t:.1f} s")
    texts: list[str] = []
    for size in (128, 96, 160, 64, 200):  # distinct chunk texts of the document, varied lengths
        for c in chunk_document(doc, "fixed_tokens", {"size": size, "overlap": 0}):
            s = c.embedded_text(doc)
            if s not in texts:
                texts.append(s)
        if len(texts) >= args.texts:
            break
    throughput(emb, texts[:args.texts], args.repeats, args.batch_size)
    cache_share(emb, doc, 256, [(0, 64), (0, 128), (64, 32)])
    print(f"load average at the end: {load()}")


if __name__ == "__main__":
    main()
