"""Indexes over chunks (dense, BM25, hybrid) and pooled preview vectors."""
