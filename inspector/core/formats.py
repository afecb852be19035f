"""Conversion of non-text formats (HTML, PDF, DOCX) to text; filled in by the formats work."""

from __future__ import annotations

from inspector.core.errors import InputError

CONVERTED_SUFFIXES: frozenset[str] = frozenset()


def convert(data: bytes, suffix: str, path: str) -> tuple[str, str, dict]:
    raise InputError(f"unsupported file type {suffix}", path=path)
