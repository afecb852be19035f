"""Evaluation on a Ray cluster: the workbench's `evaluate`, `compare` and `sweep` with chunking,
embedding and scoring spread over workers (`engine.RayEngine`). Ray is optional and imported
only when a cluster is joined or started (`cluster.connect`)."""

from __future__ import annotations

from inspector.core.distributed.cluster import EngineError, Session, connect, start_local
from inspector.core.distributed.engine import RayEngine

__all__ = ["RayEngine", "EngineError", "Session", "connect", "start_local"]
