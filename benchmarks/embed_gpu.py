"""Embedding and scoring throughput on an accelerator, for sizing (docs/scale.md).

    python benchmarks/embed_gpu.py [--device cuda] [--dtypes float32,float16,bfloat16]
                                   [--batches 64,128,256,512,1024] [--copies 4] [--repeats 3]
                                   [--scoring 1000000,10000000] [--model-dir DIR]

What docs/scale.md needs and the CPU machine cannot give: how many ~250-token chunks per second
the bundled model embeds on a GPU, through the app's own embedder (`MiniLMEmbedder.encode`, the
batches `embed_texts` forms: longest first), per precision and batch size; the pooled pieces per
second (`encode_pooled`, the live preview's pieces); and how fast a device scores questions
against chunk vectors (one matrix product and a top-k per block, torch on the device: what a GPU
stage of the sweep would run, not the app's CPU scoring).

- Texts: Chroma's five corpora (benchmarks/data/chroma, MIT) chunked `fixed_tokens` 256/0, each
  chunk as it is embedded (title > heading prefix, a blank line, the span), `--copies` times
  (embedding never deduplicates inside `encode`); pieces: `piece_spans` of the same documents.
- Word pieces: counted with the model's own tokenizer, cut at the model's limit (what it reads).
- Precision: float16 / bfloat16 vectors are compared with float32's on the same device (smallest
  cosine over the texts: the bar for using half precision is >= 0.999).
- Scoring: 256 random unit questions against N random unit chunk vectors (384 dimensions), in
  blocks of 1 M rows, top 50 kept; seconds per pass and question-chunk pairs per second.

Runs on the CPU as well (small `--copies` and `--scoring`), which is how it is tested here. Prints
only what it measured, with the device's name and the software's versions.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from _common import ROOT  # noqa: F401  (puts the project on sys.path)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from _datasets import CHROMA  # noqa: E402  (after the offline switches: it imports the workbench)

QUESTIONS = 256
TOP_K = 50
BLOCK = 1_000_000


def texts_and_pieces() -> tuple[list[str], list[str]]:
    from inspector.core.chunking.registry import chunk_document
    from inspector.core.documents.document import load_paths
    from inspector.core.retrieval.pooled import piece_spans

    docs = load_paths([str(CHROMA / "corpora")]).documents
    chunks: list[str] = []
    pieces: list[str] = []
    for doc in docs:
        chunks += [c.embedded_text(doc, with_prefix=True)
                   for c in chunk_document(doc, "fixed_tokens", {"size": 256, "overlap": 0})]
        pieces += [doc.text[a:b] for a, b in piece_spans(doc)]
    return chunks, pieces


def sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def timed(fn, repeats: int, device: str) -> tuple[float, object]:
    """(median seconds of `repeats` calls of `fn`, the last call's result)."""
    times = []
    result = None
    for _ in range(repeats):
        sync(device)
        t = time.perf_counter()
        result = fn()
        sync(device)
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


def word_pieces(emb, texts: list[str]) -> int:
    """Word pieces the model reads of `texts` (special tokens included, cut at its limit)."""
    tok = emb.load().tokenizer
    n = 0
    for i in range(0, len(texts), 512):
        enc = tok(texts[i:i + 512], truncation=True, max_length=emb.max_seq_length)
        n += sum(len(ids) for ids in enc["input_ids"])
    return n


def embedding(device: str, dtypes: list[str], batches: list[int], copies: int, repeats: int,
              model_dir: str | None, limit: int = 0) -> None:
    import numpy as np

    from inspector.core.embedding.embedder import MiniLMEmbedder

    chunks, pieces = texts_and_pieces()
    if limit:  # a quick run (the CPU): the first `limit` of each
        chunks, pieces = chunks[:limit], pieces[:limit]
    unique = chunks
    chunks = sorted(chunks * copies, key=len, reverse=True)  # embed_texts sends them longest first
    pieces = sorted(pieces, key=len, reverse=True)
    kw = {"model_path": model_dir} if model_dir else {}
    ref = None
    n_pieces = None
    for dtype in dtypes:
        emb = MiniLMEmbedder(device=device, dtype=dtype, backend="torch", **kw)
        model = emb.load()
        params = next(model.parameters())
        if n_pieces is None:
            n_pieces = word_pieces(emb, unique) * copies  # the copies read the same pieces
            print(f"  {len(chunks):,} chunks ({copies} copies of {len(chunks) // copies:,}), "
                  f"{n_pieces:,} word pieces read (mean {n_pieces / len(chunks):.0f}, limit "
                  f"{emb.max_seq_length}); {len(pieces):,} pooled pieces; median of {repeats}")
            print(f"  {'dtype':<9} {'batch':>5} {'chunks/s':>10} {'pieces read/s':>14} "
                  f"{'pooled pieces/s':>16}  cos min vs float32")
        emb.batch_size = batches[0]
        emb.encode(chunks[:batches[0]])  # warm-up: kernels, allocator
        for bs in batches:
            emb.batch_size = bs

            def enc(e=emb, b=bs):
                return [e.encode(chunks[i:i + b]) for i in range(0, len(chunks), b)]

            s, last = timed(enc, repeats, device)
            p, _ = timed(lambda e=emb, b=bs: e.encode_pooled(pieces, b), repeats, device)
            vecs = np.concatenate(last)  # the timed pass's vectors: no extra pass for the check
            if dtype == "float32" and ref is None:
                ref = vecs
            cos = float(np.min(np.sum(vecs * ref, axis=1))) if ref is not None else float("nan")
            print(f"  {dtype:<9} {bs:>5} {len(chunks) / s:>10,.0f} {n_pieces / s:>14,.0f} "
                  f"{len(pieces) / p:>16,.0f}  {cos:.6f}   (weights {str(params.dtype)[6:]})",
                  flush=True)
        del emb, model
        if device.startswith("cuda"):
            import torch

            torch.cuda.empty_cache()


def scoring(device: str, sizes: list[int], repeats: int) -> None:
    import torch

    dev = torch.device(device)
    g = torch.Generator(device=dev).manual_seed(0)
    print(f"  {QUESTIONS} questions x N chunks, 384 dims, top {TOP_K} per question, blocks of "
          f"{BLOCK:,}; median of {repeats}")
    print(f"  {'dtype':<9} {'N':>11} {'s per pass':>11} {'pairs/s':>14}  {'TFLOP/s':>8}")
    for dtype in (torch.float32, torch.float16):
        for n in sizes:
            q = torch.nn.functional.normalize(torch.randn(QUESTIONS, 384, generator=g, device=dev), dim=1).to(dtype)
            c = torch.empty((n, 384), dtype=dtype, device=dev)
            for i in range(0, n, BLOCK):
                blk = torch.randn(min(BLOCK, n - i), 384, generator=g, device=dev)
                c[i:i + len(blk)] = torch.nn.functional.normalize(blk, dim=1).to(dtype)

            def one_pass(q=q, c=c, n=n):
                best_s, best_i = None, None
                for i in range(0, n, BLOCK):
                    s = q @ c[i:i + BLOCK].T
                    v, ix = torch.topk(s.float(), min(TOP_K, s.shape[1]), dim=1)
                    ix = ix + i
                    if best_s is None:
                        best_s, best_i = v, ix
                    else:
                        cat_v, cat_i = torch.cat([best_s, v], 1), torch.cat([best_i, ix], 1)
                        best_s, pos = torch.topk(cat_v, TOP_K, dim=1)
                        best_i = torch.gather(cat_i, 1, pos)
                return best_i

            one_pass()
            s, _ = timed(one_pass, repeats, device)
            pairs = QUESTIONS * n
            print(f"  {str(dtype)[6:]:<9} {n:>11,} {s:>11.4f} {pairs / s:>14,.0f}  "
                  f"{2 * 384 * pairs / s / 1e12:>8.2f}", flush=True)
            del q, c
            if device.startswith("cuda"):
                torch.cuda.empty_cache()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dtypes", default="float32,float16,bfloat16")
    ap.add_argument("--batches", default="64,128,256,512,1024")
    ap.add_argument("--copies", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--scoring", default="1000000,10000000", help="chunk counts ('' skips)")
    ap.add_argument("--skip-embedding", action="store_true")
    ap.add_argument("--limit", type=int, default=0, help="only the first N chunks and pieces (a quick run)")
    ap.add_argument("--model-dir", default=None, help="another copy of the bundled model's folder")
    args = ap.parse_args(argv)
    import torch

    from inspector.core.embedding.device import resolve_device

    device = resolve_device(args.device)
    name = torch.cuda.get_device_name(device) if device.startswith("cuda") else f"{os.cpu_count()} CPU cores"
    print(f"device {device}: {name}; torch {torch.__version__}, Python {sys.version.split()[0]}")
    if not args.skip_embedding:
        print("embedding (MiniLMEmbedder, torch)")
        embedding(device, [d for d in args.dtypes.split(",") if d], [int(b) for b in args.batches.split(",")],
                  args.copies, args.repeats, args.model_dir, args.limit)
    sizes = [int(n) for n in args.scoring.split(",") if n]
    if sizes:
        print("dense scoring (torch on the device)")
        scoring(device, sizes, args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
