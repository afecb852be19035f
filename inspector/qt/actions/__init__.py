"""Menu actions grouped by job: exports, plug-ins."""
