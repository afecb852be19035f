"""Pure-Python core of Chunk Inspector: no Qt import anywhere below this package (a test enforces it)."""

from __future__ import annotations
