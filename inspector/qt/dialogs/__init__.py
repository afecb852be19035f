"""Dialogs: the sweep and its heatmap."""
