"""Embedding speed per device, runtime and batch size, and the time to the first exact hit rate
after opening the sample handbook with an empty cache.

    python benchmarks/embed_devices.py [--devices auto] [--batches cpu=16,32,64,128] [--repeats 2]
                                       [--skip-first] [--onnx]

For every device present (cpu always; cuda and mps when torch sees them, otherwise the output
says they were skipped) and every runtime that can run there (torch; OpenVINO on the CPU when
installed; with --onnx, ONNX Runtime on the CPU when onnxruntime and onnx are installed):

- chunks/s exact: the handbook's markdown chunks (prefix + text) through `encode`, per batch size;
- pieces/s pooled: the handbook's ~25-token pieces through `encode_pooled` (the live preview's
  one-time cost), per batch size;
- the smallest cosine between that runtime's vectors and torch's on the same device (the bar for
  adopting a runtime: >= 0.9999).

Then, per device, in fresh processes with empty cache folders, the seconds from creating the
embedder to the first exact hit rate of the handbook's gold set: in the order the window now
works (load the model, embed the chunks), and in the old order (load, build the pooled pieces,
the 1.5 s settle pause, embed the chunks). "cold" starts with an empty cache folder (so OpenVINO
converts the model first), "warm model" with the converted model kept and the embeddings gone.

Runs unchanged on a GPU machine. Prints only what it measured.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

HANDBOOK = ROOT / "sample_docs" / "handbook.md"
GOLD = ROOT / "sample_docs" / "handbook.gold.jsonl"
DEFAULT_BATCHES = {"cpu": [16, 32, 64, 128], "cuda": [64, 128, 256, 512], "mps": [32, 64, 128]}
SETTLE_S = 1.5


def load_text() -> tuple[object, list[str], list[str]]:
    from inspector.core.chunking.registry import chunk_document
    from inspector.core.documents.document import load_paths
    from inspector.core.retrieval.pooled import piece_spans

    doc = load_paths([str(HANDBOOK)]).documents[0]
    chunks = [c.embedded_text(doc, with_prefix=True) for c in chunk_document(doc, "markdown", {})]
    pieces = [doc.text[a:b] for a, b in piece_spans(doc)]
    return doc, chunks, pieces


def devices_present(asked: list[str]) -> tuple[list[str], list[str]]:
    """(devices to measure, lines saying which were skipped and why)."""
    from inspector.core.embedding.device import DeviceError, resolve_device

    out, skipped = [], []
    for d in asked:
        try:
            r = resolve_device(d)
        except DeviceError as exc:
            skipped.append(f"skipped {d}: {exc}")
            continue
        if r not in out:
            out.append(r)
    return out, skipped


def longest_first(texts: list[str]) -> list[str]:
    return sorted(texts, key=len, reverse=True)  # as embed_texts and the piece builder send them


class OnnxRuntime:
    """ONNX Runtime on the CPU for comparison: the torch model exported to a temporary folder."""

    def __init__(self, torch_emb) -> None:
        import copy

        import numpy as np
        import onnxruntime as ort
        import torch

        st = torch_emb.load()
        # A copy: exporting traces the module, and the traced model it was given computes
        # different vectors afterwards (cosine 0.95 with its own earlier output, measured).
        bert = copy.deepcopy(st[0].auto_model).eval()

        class Hidden(torch.nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, input_ids, attention_mask, token_type_ids):
                return self.m(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

        names = ["input_ids", "attention_mask", "token_type_ids"]
        enc = st.tokenizer(["a short example", "a longer example text"], padding=True, return_tensors="pt")
        self.dir = tempfile.mkdtemp(prefix="ci-onnx-")
        path = os.path.join(self.dir, "model.onnx")
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(Hidden(bert), tuple(enc[k] for k in names), path, input_names=names,
                              output_names=["h"], opset_version=17, dynamo=False,
                              dynamic_axes={k: {0: "b", 1: "s"} for k in [*names, "h"]})
        self.sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        from inspector.core.embedding.openvino_backend import _tokenizer

        self.tok = _tokenizer(torch_emb.model_path, torch_emb.max_seq_length)
        self.np = np
        self.dim = torch_emb.dim

    def encode_pooled(self, texts, batch_size):
        np = self.np
        means, counts = [], []
        for i in range(0, len(texts), batch_size):
            encs = self.tok.encode_batch(texts[i:i + batch_size])
            feed = {"input_ids": np.asarray([e.ids for e in encs], np.int64),
                    "attention_mask": np.asarray([e.attention_mask for e in encs], np.int64),
                    "token_type_ids": np.asarray([e.type_ids for e in encs], np.int64)}
            h = self.sess.run(None, feed)[0]
            m = feed["attention_mask"][:, :, None].astype(np.float32)
            n = m.sum(axis=1)
            means.append((h * m).sum(axis=1) / n)
            counts.append(n[:, 0].astype(np.int64))
        return np.concatenate(means), np.concatenate(counts)

    def encode(self, texts, batch_size):
        m, _ = self.encode_pooled(texts, batch_size)
        return m / self.np.linalg.norm(m, axis=1, keepdims=True)

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def runtimes_for(device: str, with_onnx: bool) -> list[tuple[str, object]]:
    """(name, embedder-like) for each runtime that runs on `device` here."""
    from inspector.core.embedding import openvino_backend
    from inspector.core.embedding.embedder import MiniLMEmbedder

    torch_emb = MiniLMEmbedder(device=device, backend="torch")
    torch_emb.load()
    out: list[tuple[str, object]] = [("torch", torch_emb)]
    if device == "cpu":
        if openvino_backend.available():
            ov = MiniLMEmbedder(device="cpu", backend="openvino")
            ov.load()
            if ov.backend == "openvino":
                out.append(("openvino", ov))
            else:
                print(f"  openvino: not measured ({ov.backend_note})")
        else:
            print("  openvino: not installed, not measured")
        if with_onnx:
            try:
                out.append(("onnxruntime", OnnxRuntime(torch_emb)))
            except Exception as exc:  # noqa: BLE001
                print(f"  onnxruntime: not measured ({type(exc).__name__}: {exc})")
    return out


def timed(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def speed(device: str, batches: list[int], repeats: int, with_onnx: bool) -> None:
    import numpy as np

    _doc, chunks, pieces = load_text()
    chunks, pieces = longest_first(chunks), longest_first(pieces)
    runtimes = runtimes_for(device, with_onnx)
    ref = runtimes[0][1].encode(chunks)
    print(f"  {len(chunks)} chunks (mean {statistics.mean(map(len, chunks)):.0f} chars), "
          f"{len(pieces)} pieces; median of {repeats} runs; runtimes interleaved per batch size")
    print(f"  {'runtime':<12} {'batch':>5} {'chunks/s':>9} {'pieces/s':>9}  cos min vs torch")
    for bs in batches:
        for name, emb in runtimes:
            if name == "onnxruntime":
                enc, pool = (lambda b=bs, e=emb: e.encode(chunks, b)), (lambda b=bs, e=emb: e.encode_pooled(pieces, b))
                vecs = emb.encode(chunks[:bs], bs)
            else:
                def enc(b=bs, e=emb):
                    return ([e.encode(chunks[i:i + b]) for i in range(0, len(chunks), b)])
                def pool(b=bs, e=emb):
                    return (e.encode_pooled(pieces, b))
                vecs = emb.encode(chunks[:bs])
            emb_s = timed(enc, repeats)
            piece_s = timed(pool, repeats)
            cos = float(np.min(np.sum(vecs * ref[:bs], axis=1)))
            print(f"  {name:<12} {bs:>5} {len(chunks) / emb_s:>9.1f} {len(pieces) / piece_s:>9.1f}  {cos:.7f}",
                  flush=True)
    questions = ["How long is parental allowance paid in Germany?", "Who approves travel expenses?",
                 "Can I work remotely from abroad?"] * 7
    for name, emb in runtimes:
        times = []
        for q in questions:  # one question at a time, as the window asks
            t = time.perf_counter()
            emb.encode([q], 1) if name == "onnxruntime" else emb.encode([q])
            times.append(time.perf_counter() - t)
        print(f"  {name:<12} one question: p50 {statistics.median(times) * 1000:.1f} ms "
              f"(of {len(times)})")
    for _name, emb in runtimes:
        if hasattr(emb, "close"):
            emb.close()


# -- time to the first exact figure (one fresh process per measurement) -----------------------------
def first_exact_child(device: str, order: str) -> dict:
    """In this process: seconds from creating the embedder to the first exact gold report."""
    t0 = time.perf_counter()
    from inspector.core.chunking.registry import chunk_document
    from inspector.core.embedding.cache import EmbeddingCache
    from inspector.core.embedding.embedder import MiniLMEmbedder
    from inspector.core.workbench import Workbench
    from inspector.core.workbench.staging import EXACT, RetrievalRequest

    emb = MiniLMEmbedder(device=device)
    wb = Workbench(embedder=emb, cache=EmbeddingCache())
    wb.open([str(HANDBOOK)])
    gold = wb.load_gold(str(GOLD))
    doc = wb.documents[0]
    chunks = chunk_document(doc, "markdown", {})
    emb.load()
    t_load = time.perf_counter() - t0
    t_pooled = 0.0
    if order == "old":
        t = time.perf_counter()
        wb.build_pooled(doc)
        t_pooled = time.perf_counter() - t
        time.sleep(SETTLE_S)
    req = RetrievalRequest(doc, chunks, 1, "markdown", {}, True, "", 5, "dense", gold.questions,
                           exact=True, preview=False)
    for res in wb.stages(req, lambda: False, lambda d, t, label: None):
        if res.mode == EXACT:
            return {"seconds": time.perf_counter() - t0, "load": t_load, "pooled": t_pooled,
                    "hit_rate": res.report.hit_rate, "backend": emb.backend, "device": emb.device}
    raise RuntimeError("no exact stage")


def first_exact(device: str, runtimes: list[str]) -> None:
    print(f"  {'start':<11} {'order':<24} {'first exact':>11} {'load':>6} {'pieces':>7}  hit@5  runtime")
    runs = [(start, order, label, rt) for rt in runtimes for start in ("cold", "warm model")
            for order, label in (("new", "exact first (now)"), ("old", "pieces, settle, exact"))]
    for start, order, label, runtime in runs:
        cache = tempfile.mkdtemp(prefix="ci-first-")
        try:
            env = dict(os.environ, CHUNK_INSPECTOR_CACHE_DIR=cache, CHUNK_INSPECTOR_BACKEND=runtime)
            if start == "warm model":  # convert once (if OpenVINO runs), then drop the embeddings
                subprocess.run([sys.executable, __file__, "--child", device, "new"], env=env,
                               check=True, capture_output=True, text=True)
                for sub in ("embeddings", "pooled"):
                    shutil.rmtree(os.path.join(cache, sub), ignore_errors=True)
            out = subprocess.run([sys.executable, __file__, "--child", device, order], env=env,
                                 check=True, capture_output=True, text=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"  {start:<11} {label:<24} {r['seconds']:>10.1f}s {r['load']:>5.1f}s "
                  f"{r['pooled']:>6.1f}s  {r['hit_rate']:.3f}  {r['backend']}", flush=True)
        finally:
            shutil.rmtree(cache, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--devices", default="cpu,cuda,mps", help="devices to try (absent ones are skipped)")
    ap.add_argument("--batches", default="", help="e.g. cpu=16,32;cuda=256,512 (default: per device)")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--skip-first", action="store_true", help="skip the time-to-first-exact runs")
    ap.add_argument("--skip-speed", action="store_true", help="skip the speed table")
    ap.add_argument("--onnx", action="store_true", help="also measure ONNX Runtime (needs onnxruntime, onnx)")
    ap.add_argument("--first-runtimes", default="auto,torch",
                    help="runtimes for the first-exact runs (auto: OpenVINO on the CPU when installed)")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(first_exact_child(*args.child)))
        return 0
    batches = dict(DEFAULT_BATCHES)
    for part in filter(None, args.batches.split(";")):
        k, v = part.split("=")
        batches[k] = [int(x) for x in v.split(",")]
    devices, skipped = devices_present([d.strip() for d in args.devices.split(",") if d.strip()])
    try:
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    print(f"machine: {os.cpu_count()} cores, load average {load}")
    for line in skipped:
        print(line)
    for device in devices:
        kind = device.split(":")[0]
        print(f"\ndevice {device}")
        if not args.skip_speed:
            speed(device, batches.get(kind, [32]), args.repeats, args.onnx)
        if not args.skip_first:
            print(f"  first exact hit rate after opening {HANDBOOK.name} (fresh processes, empty cache)")
            first_exact(device, [r.strip() for r in args.first_runtimes.split(",") if r.strip()])
    return 0


if __name__ == "__main__":
    sys.exit(main())
