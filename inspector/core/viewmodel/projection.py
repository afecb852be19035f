"""Chunk vectors on a plane: the embedding map's 2-D projection.

PCA is the default: deterministic, a few milliseconds for thousands of 384-dimensional rows, no
dependency beyond numpy, and its axes are directions of the embedding space, so extra points (the
question's vector) land in the same plane by one matrix product. UMAP draws neighbourhoods more
faithfully and is used when the optional extra `umap-learn` is installed (`pip install
chunk-inspector[map]`) and asked for; the core never requires it.

A map that mirrors itself every time the user drags a slider is unreadable, and SVD's singular
vectors are only defined up to sign. So the axes are made deterministic (each axis points the way
that makes its largest loading positive, as scikit-learn's `svd_flip`), and, given the previous
projection's axes, the new plane is turned onto the old one by an orthogonal Procrustes fit (the
2 x 2 rotation or reflection that best maps the new axes onto the old): re-chunking moves points,
it does not flip the map. UMAP starts from those aligned PCA coordinates for the same reason.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
else:
    from inspector.core.runtime.lazy_numpy import np


METHODS = ("pca", "umap")


@dataclass(frozen=True, slots=True, eq=False)
class Projection:
    """Rows of a matrix placed on a plane."""

    points: np.ndarray
    """(n, 2) float32: x, y of each row, in row order."""
    method: str
    """"pca" or "umap"."""
    axes: np.ndarray
    """(2, dim) float64: the plane's orthonormal directions in the embedding space (PCA's, aligned
    to the previous projection); UMAP keeps those of the PCA it started from."""
    mean: np.ndarray
    """(dim,) float64: the rows' mean, subtracted before projecting."""
    explained: tuple[float, float] = (0.0, 0.0)
    """Share of the total variance along each PCA axis (0 for UMAP)."""
    reducer: Any = None
    """UMAP's fitted reducer (its `transform` places extra points); None for PCA."""

    def __len__(self) -> int:
        return len(self.points)

    def place(self, vectors: np.ndarray) -> np.ndarray:
        """(m, 2) positions of extra rows (e.g. the question's vector) on this map."""
        v = np.atleast_2d(np.asarray(vectors, dtype=np.float64))
        if v.shape[1] != self.axes.shape[1]:
            raise ValueError(f"vectors have {v.shape[1]} dimensions, the map {self.axes.shape[1]}")
        if self.reducer is not None:
            return np.asarray(self.reducer.transform(v.astype(np.float32)), dtype=np.float32)
        return ((v - self.mean) @ self.axes.T).astype(np.float32)


def umap_available() -> bool:
    """Whether the optional `umap-learn` is installed (looked up, not imported: it loads numba)."""
    return importlib.util.find_spec("umap") is not None


def _fix_signs(axes: np.ndarray) -> np.ndarray:
    """Each axis turned so that its largest-magnitude loading is positive (ties: the first)."""
    out = axes.copy()
    for i in range(out.shape[0]):
        j = int(np.argmax(np.abs(out[i])))
        if out[i, j] < 0:
            out[i] = -out[i]
    return out


def _align(axes: np.ndarray, previous: np.ndarray) -> np.ndarray:
    """`axes` (2, dim) turned within their plane to best match `previous` (2, dim): the orthogonal
    2 x 2 matrix R maximizing trace(R axes previous^T) (Procrustes: R = V U^T from the SVD of
    axes previous^T). Rows stay orthonormal and span the same plane."""
    m = axes @ previous.T  # (2, 2)
    u, _s, vt = np.linalg.svd(m)
    r = vt.T @ u.T
    return r @ axes


def _one_blas_thread() -> Any:
    """A context in which BLAS runs on one thread. On two busy cores OpenBLAS's threads wait on
    each other: the 20,000-row PCA below took 1.7-5.4 s with them and 0.2-0.3 s on one thread
    (index.py found the same for the query product). threadpoolctl comes with scikit-learn, which
    sentence-transformers requires; without it nothing is limited."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - always present with sentence-transformers
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def pca(vectors: np.ndarray, *, previous: Projection | np.ndarray | None = None) -> Projection:
    """The rows' first two principal components (numpy SVD of the centred rows, or of their Gram
    matrix when there are more rows than dimensions).

    `previous`: the projection shown before (or its axes), to keep the map's orientation; its
    dimension must match, else it is ignored."""
    x = np.asarray(vectors, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"expected a 2-D matrix, got shape {x.shape}")
    n, dim = x.shape
    mean = x.mean(axis=0) if n else np.zeros(dim)
    xc = x - mean
    axes = np.zeros((2, dim))
    explained = (0.0, 0.0)
    if n >= 2 and dim >= 1:
        # The principal directions are the right singular vectors of the centred rows, which are
        # the singular vectors of their d x d Gram matrix. For n > d the Gram route is one matrix
        # product plus a tiny SVD: 20,000 x 384 took 0.12 s that way against 2.4 s for the SVD of
        # the rows themselves (measured single-threaded on the development machine).
        with _one_blas_thread():
            if n > dim:
                xf = xc.astype(np.float32)
                gram = (xf.T @ xf).astype(np.float64)
                _u, s2, vt = np.linalg.svd(gram, hermitian=True)
                var = np.clip(s2, 0.0, None)
            else:
                _u, s, vt = np.linalg.svd(xc, full_matrices=False)
                var = s ** 2
        k = min(2, vt.shape[0])
        axes[:k] = vt[:k]
        total = float(var.sum())
        if total > 1e-18 * max(1.0, float(np.einsum("ij,ij->", x, x))):  # not rounding noise
            shares = var[:2] / total
            explained = (float(shares[0]), float(shares[1]) if len(shares) > 1 else 0.0)
    elif dim >= 2:
        axes[0, 0] = axes[1, 1] = 1.0
    axes = _fix_signs(axes)
    prev_axes = previous.axes if isinstance(previous, Projection) else previous
    if prev_axes is not None and np.shape(prev_axes) == axes.shape and np.any(axes) and np.any(prev_axes):
        axes = _align(axes, np.asarray(prev_axes, dtype=np.float64))
    points = np.einsum("ij,kj->ik", xc, axes).astype(np.float32) if n else np.zeros((0, 2), dtype=np.float32)
    return Projection(points, "pca", axes, mean, explained)


def umap(vectors: np.ndarray, *, previous: Projection | np.ndarray | None = None, seed: int = 0,
         n_neighbors: int = 15) -> Projection:
    """UMAP (cosine metric) started from the aligned PCA coordinates, so a re-chunk keeps the map's
    orientation. Needs the optional `umap-learn`; ImportError names the extra when it is missing."""
    base = pca(vectors, previous=previous)
    n = len(base.points)
    if n < 4:  # UMAP needs a neighbourhood; so few points are shown as PCA places them
        return base
    try:
        import umap as umap_learn
    except ImportError as exc:
        raise ImportError("the UMAP map needs the optional package umap-learn "
                          "(pip install 'chunk-inspector[map]')") from exc
    init = base.points.astype(np.float64)
    spread = float(np.abs(init).max()) or 1.0
    init = init / spread * 10.0  # UMAP's own spectral start lies in [-10, 10]
    reducer = umap_learn.UMAP(n_components=2, n_neighbors=min(n_neighbors, n - 1), metric="cosine",
                              init=init, random_state=seed)
    points = np.asarray(reducer.fit_transform(np.asarray(vectors, dtype=np.float32)), dtype=np.float32)
    return Projection(points, "umap", base.axes, base.mean, (0.0, 0.0), reducer)


def project(vectors: np.ndarray, method: str = "pca", *, previous: Projection | None = None,
            seed: int = 0) -> Projection:
    """The map of `vectors` by `method` ("pca" or "umap"), oriented like `previous`."""
    if method == "pca":
        return pca(vectors, previous=previous)
    if method == "umap":
        return umap(vectors, previous=previous, seed=seed)
    raise ValueError(f"unknown projection {method!r} (known: {', '.join(METHODS)})")


__all__ = ["Projection", "METHODS", "pca", "umap", "project", "umap_available"]
