"""`python -m inspector.cli` is the same as the `chunk-inspector` console script."""

from __future__ import annotations

import sys

from inspector.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
