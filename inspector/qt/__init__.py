"""The Qt view layer: the only package that imports PySide6."""
