"""The document view: text with overlays, gutter, overview strip, find bar."""
