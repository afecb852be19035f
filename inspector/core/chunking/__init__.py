"""Chunks as spans, strategies as pure functions with declared parameters, and what is measured about them."""
