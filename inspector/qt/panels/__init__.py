"""Docked panels: strategy, statistics, chunks, gold set, corpus, reader, question bar."""
