"""The embedding map's projection: PCA on known data, deterministic signs, a stable orientation."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from inspector.core.viewmodel import projection as proj
from inspector.core.viewmodel.projection import Projection, pca, project


def _line_data(n: int = 400, dim: int = 6, seed: int = 0):
    """Points along a known direction u (spread 10) with a little noise along v (spread 1)."""
    rng = np.random.default_rng(seed)
    u = np.zeros(dim)
    u[:3] = [0.6, -0.8, 0.0]
    v = np.zeros(dim)
    v[2:4] = [0.0, 1.0]
    t = rng.uniform(-10, 10, n)
    w = rng.uniform(-1, 1, n)
    x = 5.0 + np.outer(t, u) + np.outer(w, v)
    return x, u, v, t, w


def test_pca_finds_the_known_directions_and_their_variance():
    x, u, v, t, w = _line_data()
    p = pca(x)
    assert p.points.shape == (400, 2) and p.points.dtype == np.float32
    assert abs(p.axes[0] @ u) > 0.999
    assert abs(p.axes[1] @ v) > 0.999
    expected = np.var(t) / (np.var(t) + np.var(w))
    assert p.explained[0] == pytest.approx(expected, rel=1e-6)
    assert p.explained[0] + p.explained[1] == pytest.approx(1.0, abs=1e-5)
    # The coordinates are the (centred) parameters, up to the axis' sign.
    assert abs(np.corrcoef(p.points[:, 0], t)[0, 1]) > 0.9999
    np.testing.assert_allclose(np.abs(p.points[:, 0]), np.abs(t - t.mean()), atol=1e-3)


def test_pca_of_planar_data_keeps_every_distance():
    rng = np.random.default_rng(1)
    plane = np.linalg.qr(rng.standard_normal((8, 2)))[0].T  # two orthonormal rows in 8-D
    coords = rng.standard_normal((50, 2)) * [3.0, 1.0]
    x = coords @ plane + rng.standard_normal(8)
    p = pca(x)
    d_in = np.linalg.norm(x[:, None] - x[None], axis=-1)
    d_map = np.linalg.norm(p.points[:, None].astype(np.float64) - p.points[None], axis=-1)
    np.testing.assert_allclose(d_map, d_in, atol=1e-4)


def test_pca_agrees_with_scikit_learn():
    decomposition = pytest.importorskip("sklearn.decomposition")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((300, 20)) @ rng.standard_normal((20, 20))
    ours = pca(x)
    theirs = decomposition.PCA(n_components=2, svd_solver="full").fit(x)
    np.testing.assert_allclose(ours.explained, theirs.explained_variance_ratio_, rtol=1e-5)
    np.testing.assert_allclose(np.abs(ours.axes), np.abs(theirs.components_), atol=1e-5)


def test_small_matrices_use_the_rows_svd_and_agree_with_the_gram_route():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((30, 10)) * np.arange(10, 0, -1)
    wide = pca(x[:8])  # fewer rows than dimensions: SVD of the rows
    tall = pca(x)  # more rows: SVD of the Gram matrix
    assert wide.points.shape == (8, 2) and tall.points.shape == (30, 2)
    np.testing.assert_allclose(np.linalg.norm(tall.axes, axis=1), 1.0, atol=1e-9)
    assert abs(tall.axes[0] @ tall.axes[1]) < 1e-9


def test_signs_are_deterministic():
    x, *_ = _line_data(seed=4)
    a = pca(x)
    for axis in a.axes:
        j = int(np.argmax(np.abs(axis)))
        assert axis[j] > 0, "the largest loading of each axis is positive"
    b = pca(x.copy())
    np.testing.assert_array_equal(a.points, b.points)
    perm = np.random.default_rng(5).permutation(len(x))
    c = pca(x[perm])
    np.testing.assert_allclose(c.points, a.points[perm], atol=1e-4)


def test_previous_orientation_is_kept_through_a_flip_and_a_turn():
    x, *_ = _line_data(seed=6)
    a = pca(x)
    mirrored = Projection(a.points, "pca", -a.axes, a.mean)
    np.testing.assert_allclose(pca(x, previous=mirrored).points, -a.points, atol=1e-4)
    turned = Projection(a.points, "pca", a.axes[::-1].copy(), a.mean)  # axes swapped: a quarter turn + flip
    b = pca(x, previous=turned)
    np.testing.assert_allclose(b.points, a.points[:, ::-1], atol=1e-4)


def test_a_re_chunk_moves_points_instead_of_mirroring_the_map():
    """Slightly different rows (a re-chunk) whose own PCA flips an axis: with the previous map
    given, the new points stay where the old ones were."""
    rng = np.random.default_rng(7)
    base = rng.standard_normal((200, 2)) * [4.0, 2.0]
    # Axis 1 loads two coordinates almost equally, so the sign rule can pick either.
    d1 = np.array([0.7072, -0.7070, 0.0, 0.0])
    d1 /= np.linalg.norm(d1)
    d2 = np.array([0.0, 0.0, 1.0, 0.0])
    x1 = base @ np.stack([d1, d2])
    e1 = np.array([0.7070, -0.7072, 0.0, 0.0])
    e1 /= np.linalg.norm(e1)
    x2 = base @ np.stack([e1, d2]) + rng.normal(0, 1e-3, (200, 4))
    a = pca(x1)
    free = pca(x2)
    kept = pca(x2, previous=a)
    assert np.abs(free.points - a.points).max() > 1.0, "the fixture should flip without a previous map"
    assert np.abs(kept.points - a.points).max() < 0.05


def test_place_puts_extra_points_on_the_same_plane():
    x, *_ = _line_data(seed=8)
    p = pca(x)
    np.testing.assert_allclose(p.place(x[:5]), p.points[:5], atol=1e-4)
    assert p.place(x[0]).shape == (1, 2)
    with pytest.raises(ValueError, match="dimensions"):
        p.place(np.zeros(3))


@pytest.mark.parametrize("n", [0, 1, 2])
def test_tiny_inputs_do_not_fail(n):
    p = pca(np.ones((n, 5)))
    assert p.points.shape == (n, 2)
    assert np.isfinite(p.points).all()


def test_identical_rows_sit_at_the_origin():
    p = pca(np.tile([0.1, 0.2, 0.3], (10, 1)))
    np.testing.assert_allclose(p.points, 0.0, atol=1e-6)
    assert p.explained == (0.0, 0.0)


@given(st.integers(3, 40), st.integers(2, 12), st.integers(0, 10_000))
def test_points_are_the_centred_rows_on_orthonormal_axes(n, dim, seed):
    x = np.random.default_rng(seed).standard_normal((n, dim))
    p = pca(x)
    np.testing.assert_allclose(p.axes @ p.axes.T, np.eye(2), atol=1e-6)
    np.testing.assert_allclose(p.points, (x - x.mean(0)) @ p.axes.T, atol=1e-4)


def test_unknown_method_is_refused():
    with pytest.raises(ValueError, match="unknown projection"):
        project(np.zeros((3, 3)), "tsne")


def test_umap_names_the_extra_when_it_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "umap", None)  # import umap raises ImportError
    with pytest.raises(ImportError, match=r"chunk-inspector\[map\]"):
        project(np.random.default_rng(0).standard_normal((20, 4)), "umap")


def test_umap_starts_from_the_aligned_pca_and_uses_cosine(monkeypatch):
    seen = {}

    class FakeUMAP:
        def __init__(self, **kw):
            seen.update(kw)

        def fit_transform(self, x):
            seen["rows"] = len(x)
            return seen["init"] * 2.0

        def transform(self, x):
            return np.zeros((len(x), 2))

    monkeypatch.setitem(sys.modules, "umap", types.SimpleNamespace(UMAP=FakeUMAP))
    x, *_ = _line_data(n=50, seed=9)
    prev = pca(x)
    mirrored = Projection(prev.points, "pca", -prev.axes, prev.mean)
    p = project(x, "umap", previous=mirrored, seed=3)
    assert p.method == "umap" and seen["metric"] == "cosine" and seen["random_state"] == 3
    assert seen["n_components"] == 2 and seen["rows"] == 50
    # The start is the PCA oriented like the previous map (mirrored here), scaled into [-10, 10].
    assert np.corrcoef(seen["init"][:, 0], -prev.points[:, 0])[0, 1] > 0.9999
    assert np.abs(seen["init"]).max() == pytest.approx(10.0)
    assert p.place(x[:3]).shape == (3, 2)


def test_umap_is_looked_up_without_importing_it():
    assert proj.umap_available() in (True, False)
    assert "umap" not in sys.modules or sys.modules["umap"] is None or proj.umap_available()


@pytest.mark.slow
def test_real_umap_when_installed():
    pytest.importorskip("umap")
    x, *_ = _line_data(n=120, seed=10)
    p = project(x, "umap")
    assert p.points.shape == (120, 2) and np.isfinite(p.points).all()
