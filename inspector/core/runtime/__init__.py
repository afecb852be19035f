"""Runtime plumbing below the domain: the helper process, heap trimming, GC pauses, GIL-friendly
slices, atomic files, one locked LRU and cooperative cancellation. Nothing here knows about
documents, chunks or retrieval; everything in the core may import it."""

from __future__ import annotations
