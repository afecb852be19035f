"""The embedding map with many points: projection, first draw, redraw and re-marking.

    QT_QPA_PLATFORM=offscreen python benchmarks/map_redraw.py [--points 20000] [--dim 384]

An index of `--points` chunks with random unit vectors (the map does not care what they mean) is
drawn by the real panel (`inspector.qt.panels.embedding_map.EmbeddingMap`) in an 900 x 600 window.
Printed, in milliseconds (p50 and max of several runs): the PCA on the worker (core), the first
draw on the GUI thread (categories, per-point brushes, `setData`, auto-range, one paint), a redraw
(what a pan or zoom costs: one paint of the plot), and re-marking (a new question on the same
projection: categories and brushes again, one paint).
"""

from __future__ import annotations

import argparse
import os
import statistics
from types import SimpleNamespace

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from _common import timeit  # noqa: E402  (puts the repository on sys.path)


def show(name: str, xs: list[float]) -> None:
    print(f"{name:<34} p50 {statistics.median(xs):8.1f} ms   max {max(xs):8.1f} ms   (n={len(xs)})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=20_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()

    from PySide6.QtWidgets import QApplication

    from inspector.core.chunking.chunk import Chunk
    from inspector.core.documents.document import from_text
    from inspector.core.retrieval.index import build_index
    from inspector.core.viewmodel.projection import pca
    from inspector.qt.controllers.retrieval import RetrievalController
    from inspector.qt.controllers.state import InspectorState
    from inspector.qt.panels.embedding_map import EmbeddingMap, MapData

    app = QApplication.instance() or QApplication([])
    n = args.points
    unit = "Paragraph number {i} of the synthetic map document.\n\n"
    text = "".join(unit.format(i=i) for i in range(n))
    doc = from_text(text, "map.md")
    chunks, pos = [], 0
    for i in range(n):
        end = pos + len(unit.format(i=i)) - 2
        chunks.append(Chunk(id=i, start=pos, end=end, token_count=10, heading_path=("Map", f"Part {i // 500}"),
                            doc_id=doc.doc_id))
        pos = end + 2
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((n, args.dim)).astype(np.float32)
    index = build_index([doc], {doc.doc_id: chunks}, None, vectors=vecs)

    state = InspectorState()
    state.set_documents([doc])
    retrieval = RetrievalController(state, synchronous=True)
    panel = EmbeddingMap(state, retrieval, synchronous=True)
    panel.resize(900, 600)
    panel.show()
    app.processEvents()

    projections = []
    show(f"PCA {n:,} x {args.dim} (core)", timeit(lambda: projections.append(pca(index.vectors)), 3))
    proj = projections[-1]

    def hits_for(seed: int):
        r = np.random.default_rng(seed)
        rows = r.choice(n, 5, replace=False)
        return tuple(SimpleNamespace(rank=k + 1, matched=index.entries[int(i)], chunk=index.entries[int(i)])
                     for k, i in enumerate(rows))

    def result(seed: int):
        req = SimpleNamespace(question="", k=5, document=doc)
        return SimpleNamespace(index=index, hits=hits_for(seed), report=None, request=req, mode="exact",
                               retriever="dense", note="")

    def first_draw():
        panel.data = None
        panel._on_data(0, MapData(index, proj, None, result(1)))
        panel.plot.viewport().repaint()

    show(f"first draw, {n:,} points", timeit(first_draw, max(3, args.repeat // 2)))
    show("redraw (pan/zoom: one paint)", timeit(lambda: panel.plot.viewport().repaint(), args.repeat * 2))
    seeds = iter(range(2, 10_000))

    def remark():
        panel._on_data(0, MapData(index, proj, None, result(next(seeds))))
        panel.plot.viewport().repaint()

    show("re-mark (new hits, same layout)", timeit(remark, args.repeat))
    print(f"points drawn: {len(panel.scatter.data):,}")
    panel.shutdown()
    retrieval.shutdown()


if __name__ == "__main__":
    main()
