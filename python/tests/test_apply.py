"""fdlab.apply against NumPy references (slicing, np.roll, np.gradient-style differences)."""

import numpy as np
import pytest

import fdlab
from fdlab import Stencil

SHAPES = [(67,), (13, 29), (9, 11, 17), (5, 7, 33)]
RNG = np.random.default_rng(7)

# Central weights (offset -> weight) of first and second derivatives, for the references.
D1 = {2: {-1: -0.5, 1: 0.5}, 4: {-2: 1 / 12, -1: -2 / 3, 1: 2 / 3, 2: -1 / 12},
      8: {-4: 1 / 280, -3: -4 / 105, -2: 1 / 5, -1: -4 / 5,
          1: 4 / 5, 2: -1 / 5, 3: 4 / 105, 4: -1 / 280}}
D2 = {2: {-1: 1.0, 0: -2.0, 1: 1.0},
      4: {-2: -1 / 12, -1: 4 / 3, 0: -5 / 2, 1: 4 / 3, 2: -1 / 12}}


def tol(dtype):
    return dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-11)


def np_axis(fd_axis, ndim):
    """NumPy axis of fdlab axis (0 = x = last NumPy axis)."""
    return ndim - 1 - fd_axis


def periodic_ref(u, weights, axis, h=1.0):
    """sum_o w_o u[i + o] along NumPy `axis`, with wrap-around (np.roll)."""
    u64 = u.astype(np.float64)
    return sum(w * np.roll(u64, -o, axis=axis) for o, w in weights.items()) / h


def dirichlet_ref(u, weights, axis, h=1.0):
    """Interior-only reference by slicing: zeros where the stencil leaves the array."""
    u64 = u.astype(np.float64)
    r = max(abs(o) for o in weights)
    n = u.shape[axis]
    ref = np.zeros_like(u64)
    idx = [slice(None)] * u.ndim
    idx[axis] = slice(r, n - r)
    acc = np.zeros_like(u64[tuple(idx)])
    for o, w in weights.items():
        src = list(idx)
        src[axis] = slice(r + o, n - r + o)
        acc += w * u64[tuple(src)]
    ref[tuple(idx)] = acc / h
    return ref


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("accuracy", [2, 4, 8])
def test_first_derivative_periodic(shape, dtype, accuracy):
    u = RNG.standard_normal(shape).astype(dtype)
    h = 0.37
    for a in range(u.ndim):
        st = Stencil.derivative(a, order=1, accuracy=accuracy, spacing=h)
        if u.shape[np_axis(a, u.ndim)] < accuracy + 1:
            with pytest.raises(ValueError, match="too wide"):
                fdlab.apply(st, u)
            continue
        got = fdlab.apply(st, u, boundary="periodic")
        assert got.dtype == dtype and got.shape == u.shape
        ref = periodic_ref(u, D1[accuracy], np_axis(a, u.ndim), h)
        np.testing.assert_allclose(got, ref, **tol(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_second_derivative_dirichlet_leaves_edges(shape, dtype):
    u = RNG.standard_normal(shape).astype(dtype)
    for a in range(u.ndim):
        st = Stencil.derivative("xyz"[a], order=2, accuracy=4, spacing=0.5)
        got = fdlab.apply(st, u, boundary=fdlab.Boundary.DIRICHLET)
        ref = dirichlet_ref(u, D2[4], np_axis(a, u.ndim), 0.25)
        np.testing.assert_allclose(got, ref, **tol(dtype))
        # Points outside the interior keep what `out` held.
        out = np.full_like(u, 7.0)
        fdlab.apply(st, u, out=out, boundary="dirichlet")
        ax = np_axis(a, u.ndim)
        edge = np.take(out, [0, 1, u.shape[ax] - 1], axis=ax)
        assert np.all(edge == 7.0)


def test_np_gradient_interior():
    """Second-order first derivative equals np.gradient's interior on every axis."""
    u = RNG.standard_normal((11, 13, 19))
    h = (0.1, 0.2, 0.3)  # (hx, hy, hz)
    for a in range(3):
        got = fdlab.apply(Stencil.derivative(a, 1, 2, h[a]), u, boundary="dirichlet")
        ax = np_axis(a, 3)
        ref = np.gradient(u, h[a], axis=ax)
        inner = [slice(None)] * 3
        inner[ax] = slice(1, -1)
        np.testing.assert_allclose(got[tuple(inner)], ref[tuple(inner)], rtol=1e-12, atol=1e-12)


def test_x_is_last_numpy_axis():
    nz, ny, nx = 4, 5, 64
    x = np.arange(nx) / nx
    u = np.broadcast_to(np.sin(2 * np.pi * x), (nz, ny, nx)).copy()
    du = fdlab.apply(Stencil.derivative("x", 1, 8, 1 / nx), u)
    np.testing.assert_allclose(du, 2 * np.pi * np.cos(2 * np.pi * u * 0 + 2 * np.pi * x),
                               atol=1e-6)
    assert np.abs(fdlab.apply(Stencil.derivative("z", 1, 2), u)).max() < 1e-12


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_laplacian_periodic_and_neumann(shape, dtype):
    u = RNG.standard_normal(shape).astype(dtype)
    hs = (0.5, 0.25, 2.0)[: u.ndim]  # (hx, hy, hz)
    lap = Stencil.laplacian(accuracy=2, spacing=list(hs))
    got = fdlab.apply(lap, u)
    ref = sum(periodic_ref(u, D2[2], np_axis(a, u.ndim), hs[a] ** 2) for a in range(u.ndim))
    np.testing.assert_allclose(got, ref, **tol(dtype))
    # Neumann: mirror padding about the end points, then the interior of the padded array.
    got = fdlab.apply(Stencil.laplacian(2, 1.0), u, boundary="neumann")
    p = np.pad(u.astype(np.float64), 1, mode="reflect")
    ref = sum(dirichlet_ref(p, D2[2], ax) for ax in range(u.ndim))
    ref = ref[tuple(slice(1, -1) for _ in range(u.ndim))]
    np.testing.assert_allclose(got, ref, **tol(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_custom_and_several_outputs(dtype):
    u = RNG.standard_normal((6, 9, 10)).astype(dtype)
    # (x, y, z) offsets: u[k, j, i+1] - u[k, j-2, i] + 0.5 u[k+1, j, i]
    st = Stencil.custom([(1, 0, 0), (0, -2), 0, (0, 0, 1)], [1.0, -1.0, 0.25, 0.5])
    ref = (np.roll(u, -1, 2) - np.roll(u, 2, 1) + 0.25 * u + 0.5 * np.roll(u, -1, 0))
    outs = [np.empty_like(u), np.empty_like(u)]
    res = fdlab.apply([st, Stencil.derivative("y")], u, out=outs)
    assert res[0] is outs[0] and res[1] is outs[1]
    np.testing.assert_allclose(outs[0], ref, **tol(dtype))
    np.testing.assert_allclose(outs[1], periodic_ref(u, D1[2], 1), **tol(dtype))


def test_plan_matches_apply():
    u = RNG.standard_normal((7, 12, 15))
    sts = [Stencil.derivative(a, 1, 4) for a in range(3)]
    plan = fdlab.Plan(sts, u.shape, "float64", "periodic")
    got = plan.apply(u)
    ref = fdlab.apply(sts, u)
    # Equal up to rounding: vector and scalar loops may round the same sum differently.
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, rtol=1e-14, atol=1e-14)
    assert plan.shape == [7, 12, 15] and plan.dtype == "float64"


def test_read_only_and_strided_inputs_do_not_crash():
    u = RNG.standard_normal((8, 16))
    u.flags.writeable = False
    st = Stencil.derivative("x", 1, 2)
    np.testing.assert_allclose(fdlab.apply(st, u), periodic_ref(u, D1[2], 1))
    strided = RNG.standard_normal((8, 32))[:, ::2]
    with pytest.raises(TypeError, match="C-contiguous"):
        fdlab.apply(st, strided)
    got = fdlab.apply(st, strided, convert=True)
    np.testing.assert_allclose(got, periodic_ref(strided, D1[2], 1))
    fortran = np.asfortranarray(RNG.standard_normal((8, 16)))
    with pytest.raises(TypeError):
        fdlab.apply(st, fortran)
    ints = np.arange(20)
    np.testing.assert_allclose(fdlab.apply(st, ints, convert=True),
                               periodic_ref(ints.astype(float), D1[2], 0))


def test_info():
    i = fdlab.info()
    assert i["version"] == fdlab.__version__
    assert "cpu" in i["backends"] and "cuda" in i["backends"] and i["cuda"] is True
    assert i["cpu_threads"] >= 1


def test_stencil_equality_hash_repr():
    a = Stencil.derivative("y", 2, 4, 0.5)
    assert a == Stencil.derivative(1, 2, 4, 0.5)
    assert a != Stencil.derivative("y", 2, 4, 0.25)
    assert len({a, Stencil.derivative(1, 2, 4, 0.5), Stencil.laplacian()}) == 2
    assert "derivative" in repr(a) and a.kind == "derivative"
    assert Stencil.custom([(1, 0, 0)], [2.0]).taps(1) == [((1, 0, 0), 2.0)]
    assert [w for _, w in Stencil.derivative("x", 1, 2, 0.5).taps(1)] == [-1.0, 1.0]
