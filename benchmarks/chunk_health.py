"""Chunk health per strategy at its defaults: how many chunks the embedder reads only in part, how
many are stubs, and their mean size, on the bundled handbook (or the files given).

    .venv/bin/python benchmarks/chunk_health.py [FILE ...]

Truncated: the chunk's embedded text (with the context prefix when the strategy embeds it by
default) is longer than the embedding model reads (256 word pieces for all-MiniLM-L6-v2), so its
tail never reaches the vector. Stub: fewer cl100k tokens than `STUB_TOKENS`. Parents of
`parent_child` are returned to the model, not embedded, and are left out of every figure, as in
`chunk_stats`. Prints what it measured; asserts nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path

from _common import HANDBOOK

from inspector.core.chunking.annotate import annotate
from inspector.core.chunking.chunk import STUB_TOKENS
from inspector.core.chunking.registry import BUILTINS, chunk_document
from inspector.core.chunking.stats import chunk_stats
from inspector.core.documents.document import load_document
from inspector.core.text.wordpieces import max_seq_length


def main(paths: list[str]) -> int:
    for path in paths or [str(HANDBOOK)]:
        doc = load_document(Path(path))
        print(f"{doc.doc_id}: {len(doc.text):,} characters; truncated = over {max_seq_length()} word "
              f"pieces embedded, stub = under {STUB_TOKENS} cl100k tokens")
        print("| strategy | prefix | chunks | truncated % | stub % | mean tokens |")
        print("|---|---|---|---|---|---|")
        for strat in BUILTINS:
            if strat.needs_embedder:
                continue  # `semantic` needs the model to chunk; this script loads none
            chunks = annotate(doc, chunk_document(doc, strat.name), with_prefix=strat.prefix_default)
            s = chunk_stats(doc, chunks)
            print(f"| {strat.name} | {'yes' if strat.prefix_default else 'no'} | {s.count} | "
                  f"{100 * s.share('truncated_by_embedder'):.1f} | {100 * s.share('stub'):.1f} | "
                  f"{s.mean_tokens:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
