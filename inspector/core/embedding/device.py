"""Where the embedding model runs: device names, their resolution, precision and batch sizes.

`resolve_device("auto")` picks CUDA, then Apple's MPS, then the CPU; a named device that is not
there raises `DeviceError` (a ValueError, so the command line prints it as one line and exits 2).
torch is imported only here, lazily, and not at all when the installed torch is a CPU-only build
on a machine without MPS (its version says `+cpu`): then "auto" is the CPU without paying for the
import (about 1.5-2.5 s here), which lets a cached OpenVINO model start without torch.

Precision: float32 unless asked. float16 and bfloat16 run only on accelerators; asked for on the
CPU they fall back to float32, with a note (`resolve_dtype`), because torch's CPU kernels gain
little from them and the vectors would differ from every other CPU run for nothing. The precision
is part of the embedding cache's namespace; the device is not (a float32 vector is the same on
any device to ~1e-7, see `cache_namespace`).
"""

from __future__ import annotations

import re
import sys
from typing import Any

DEVICE_CHOICES = ("auto", "cpu", "cuda", "mps")
"""What the command line and the window offer (`cuda:N` is accepted as well)."""
DTYPE_CHOICES = ("float32", "float16", "bfloat16")
ACCELERATORS = ("cuda", "mps")

#: Batch sizes by device kind when none is asked for. On a GPU, small batches leave it idle
#: between Python calls; 256 chunks of 256 word pieces of MiniLM take well under 1 GB. On the CPU
#: a batch's activations (attention is batch x 12 heads x length^2) are what costs memory, not
#: time: 300 handbook chunks of 200-1,800 characters, three interleaved runs on 2 cores, embedded
#: at 58-61 texts/s in batches of 8, 57-58 of 16 and 56-57 of 32, while the resident set peaked
#: +9, +70 and +191 MB above where it started (and stayed +1, +52, +156 MB up afterwards: the
#: allocator kept it). Those peaks were the soak's largest rises of memory (issue 17).
DEFAULT_BATCH = {"cpu": 8, "cuda": 256, "mps": 64}

_DEVICE_RE = re.compile(r"^(auto|cpu|mps|cuda)(?::(\d+))?$")


class DeviceError(ValueError):
    """A device or precision that cannot be used here; the message says why and what to do."""


def parse_device(spec: str | None) -> str:
    """`spec` checked for form only (no torch): "auto", "cpu", "cuda", "cuda:N" or "mps"."""
    s = (spec or "auto").strip().lower()
    m = _DEVICE_RE.match(s)
    if m is None or (m.group(2) is not None and m.group(1) != "cuda"):
        raise DeviceError(f"unknown device {spec!r} (use auto, cpu, cuda, cuda:N or mps)")
    return s


def device_kind(device: str) -> str:
    """"cuda" for "cuda:1", else the name itself."""
    return device.split(":", 1)[0]


def cpu_only_torch() -> bool:
    """True when the installed torch cannot reach any accelerator: a `+cpu` build, and not macOS
    (where MPS needs no special build). Read from the package metadata, without importing torch."""
    if sys.platform == "darwin":
        return False
    try:
        from importlib.metadata import version

        return version("torch").endswith("+cpu")
    except Exception:  # noqa: BLE001  (no metadata: ask torch itself)
        return False


def _torch() -> Any:
    import torch

    return torch


def _mps_available(torch: Any) -> bool:
    mps = getattr(getattr(torch, "backends", None), "mps", None)
    try:
        return bool(mps is not None and mps.is_available())
    except Exception:  # noqa: BLE001
        return False


def resolve_device(spec: str | None = "auto") -> str:
    """The device to run on: "cpu", "cuda:N" or "mps". "auto" takes CUDA, then MPS, then the CPU.

    Raises DeviceError when a named accelerator is not there (with what to do about it)."""
    s = parse_device(spec)
    if s == "cpu":
        return "cpu"
    if s == "auto" and cpu_only_torch():
        return "cpu"
    torch = _torch()
    if s == "auto":
        if torch.cuda.is_available():
            return f"cuda:{torch.cuda.current_device()}"
        return "mps" if _mps_available(torch) else "cpu"
    if s == "mps":
        if not _mps_available(torch):
            raise DeviceError("device 'mps' asked for, but this torch sees no Apple GPU (MPS needs "
                              "macOS on Apple silicon); use --device auto or cpu")
        return "mps"
    # cuda or cuda:N
    if not torch.cuda.is_available():
        build = getattr(torch, "__version__", "?")
        raise DeviceError(f"device {s!r} asked for, but torch {build} sees no CUDA GPU"
                          + (" (a CPU-only build: install the CUDA build, e.g. `make run TORCH=cuda`)"
                             if "+cpu" in build else "")
                          + "; use --device auto or cpu")
    index = int(s.split(":", 1)[1]) if ":" in s else torch.cuda.current_device()
    count = torch.cuda.device_count()
    if index >= count:
        raise DeviceError(f"device {s!r} asked for, but only {count} CUDA device(s) are there "
                          f"(cuda:0..cuda:{count - 1})")
    return f"cuda:{index}"


def resolve_dtype(dtype: str | None, device: str) -> tuple[str, str]:
    """(the precision the model computes in, a note when it is not what was asked: "" otherwise).

    Half precision only on accelerators: asked for on the CPU it falls back to float32."""
    d = (dtype or "float32").strip().lower()
    aliases = {"fp32": "float32", "fp16": "float16", "half": "float16", "bf16": "bfloat16"}
    d = aliases.get(d, d)
    if d not in DTYPE_CHOICES:
        raise DeviceError(f"unknown dtype {dtype!r} (use {', '.join(DTYPE_CHOICES)})")
    if d != "float32" and device_kind(device) == "cpu":
        return "float32", f"{d} runs only on a GPU; the CPU computes in float32"
    return d, ""


def default_batch_size(device: str) -> int:
    return DEFAULT_BATCH.get(device_kind(device), 32)


def describe(device: str, dtype: str, backend: str = "torch") -> str:
    """"cpu, float32" (plus the runtime when it is not torch: "cpu, float32, OpenVINO")."""
    extra = {"openvino": ", OpenVINO"}.get(backend, "")
    return f"{device}, {dtype}{extra}"


__all__ = ["DEVICE_CHOICES", "DTYPE_CHOICES", "DeviceError", "parse_device", "resolve_device",
           "resolve_dtype", "default_batch_size", "device_kind", "describe", "cpu_only_torch"]
