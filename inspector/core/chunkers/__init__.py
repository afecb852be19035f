"""Built-in chunking strategies. Importing this package registers them."""

from __future__ import annotations

from inspector.core.chunkers import (  # noqa: F401  (registration side effects)
    markdown,
    paragraph,
    parent_child,
    recursive,
    semantic,
    sentences,
    windows,
)
