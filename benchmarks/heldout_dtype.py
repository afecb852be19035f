"""Does half precision move a retrieval? The held-out set's 204 paraphrased questions (four CC BY
documents, `data/heldout`), dense retrieval with the bundled model, `eval` through the command
line: one process per device and precision, each with an empty cache folder of its own (vectors
are cached per model and precision, not per device). Then, per question, the rank of the first
hit against a reference run (the first file given to `compare`).

    python benchmarks/heldout_dtype.py run DEVICE DTYPE OUT.json      (e.g. cuda float16)
    python benchmarks/heldout_dtype.py compare REF.json OTHER.json ...

`gpu_check.sh` runs it on the CPU (float32) and on CUDA in float32, float16 and bfloat16. On the
CPU, half precision falls back to float32 (the command says so).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import time
from pathlib import Path

from _datasets import HELDOUT, folders


def run(device: str, dtype: str, out: Path) -> None:
    from inspector.cli import main

    ranks = {}
    # Each document through the command users run (so the model loads once per document).
    for d in folders(HELDOUT):
        buf = io.StringIO()
        t = time.perf_counter()
        with contextlib.redirect_stdout(buf):
            code = main(["eval", str(d / f"{d.name}.md"), "--gold", str(d / f"{d.name}.gold.jsonl"),
                         "--retriever", "dense", "--device", device, "--dtype", dtype, "--format", "json"])
        rep = json.loads(buf.getvalue())
        ranks[d.name] = [q.get("rank") for q in rep["questions"]]
        print(f"{device:<4} {dtype:<8} {d.name:<32} rc={code} hit@5 {rep['hit_rate']:.3f} mrr {rep['mrr']:.3f} "
              f"({rep['hits']}/{rep['total']}) {time.perf_counter() - t:.1f} s", flush=True)
    out.write_text(json.dumps({"device": device, "dtype": dtype, "ranks": ranks}), encoding="utf-8")


def compare(paths: list[Path]) -> None:
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in paths]
    ref = runs[0]
    for r in runs[1:]:
        same = total = hits = ref_hits = 0
        for name, b in ref["ranks"].items():
            a = r["ranks"][name]
            same += sum(x == y for x, y in zip(a, b, strict=True))
            total += len(b)
            hits += sum(x is not None for x in a)
            ref_hits += sum(x is not None for x in b)
        print(f"{r['device']} {r['dtype']}: same rank as {ref['device']} {ref['dtype']} for {same}/{total} "
              f"questions; hits {hits} vs {ref_hits}")


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], Path(sys.argv[4]))
    elif len(sys.argv) >= 4 and sys.argv[1] == "compare":
        compare([Path(p) for p in sys.argv[2:]])
    else:
        sys.exit(__doc__)
