"""Chunk Inspector: see how documents are chunked for RAG and whether retrieval finds the right chunk."""

from __future__ import annotations

__version__ = "0.1.0"
