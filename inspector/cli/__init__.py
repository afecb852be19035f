"""Headless commands over the core workbench (`chunk-inspector --help`)."""

from inspector.cli.main import main

__all__ = ["main"]
