"""The numpy stand-in (`runtime.lazy_numpy`, issue 31): modules the window's first paint imports
read numpy through it, so numpy is imported at the first name read, not with them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_SCRIPT = """
import sys, threading
from inspector.core.runtime.lazy_numpy import np
import inspector.core.viewmodel.display_text, inspector.core.viewmodel.offsets, inspector.core.runtime.slices
import inspector.core.evaluation.gold, inspector.core.evaluation.metrics, inspector.core.embedding.cache
assert "numpy" not in sys.modules, "imported with the modules"
from inspector.core.viewmodel.offsets import Utf16Map
m = Utf16Map("plain ascii text")
assert "numpy" not in sys.modules, "imported by an identity map"
assert m.to_utf16(5) == 5 and m.to_codepoint(7) == 7 and m.length16 == 16
out = []
threads = [threading.Thread(target=lambda: out.append(np.arange(3).sum())) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
import numpy
assert out == [3] * 8
assert np.arange is numpy.arange and "arange" in vars(np)   # kept after the first read
assert list(m.to_utf16_array([1, 2])) == [1, 2] and list(m.to_codepoint_array([3])) == [3]
print("ok")
"""


def test_numpy_is_imported_at_the_first_read_from_any_thread_and_kept():
    proc = subprocess.run([sys.executable, "-c", _SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
