"""fdlab.wave: traces against analytic Green's functions and reciprocity; the exact adjoint
(dot-product test of the source map, Taylor tests of the misfit in v); batches, odd shapes,
off-grid points; errors before any work; PyTorch autograd (skipped without torch)."""

import numpy as np
import pytest

import fdlab


def ricker(f0, dt, nt, t0=None):
    """A Ricker wavelet of peak frequency f0 sampled at n·dt, delayed by t0 (1.2/f0)."""
    t0 = 1.2 / f0 if t0 is None else t0
    a = (np.pi * f0 * (np.arange(nt) * dt - t0)) ** 2
    return (1 - 2 * a) * np.exp(-a)


def ricker_at(t, f0, t0):
    a = (np.pi * f0 * (t - t0)) ** 2
    return (1 - 2 * a) * np.exp(-a)


# NumPy 2 renamed trapz.
trapezoid = getattr(np, "trapezoid", None) or getattr(np, "trapz")


def rel(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


# -- forward ------------------------------------------------------------------------------


def test_2d_trace_matches_the_analytic_greens_function():
    # p_tt = c²∇²p + w(t)δ(x): p(r, t) = 1/(2πc²) ∫₀^acosh(ct/r) w(t − (r/c)cosh u) du.
    # Sample n of the trace is the pressure at (n + 1)·dt.
    c, h, dt, f0, nt = 1.0, 1.0, 0.4, 0.04, 240
    n = 81
    v = np.full((n, n), c)
    w = ricker(f0, dt, nt)
    src = np.array([[[40, 40]]])
    rec = np.array([[[40, 60], [54, 54]]])  # distances 20 and 14·√2
    d = fdlab.wave(v, h, dt, w[None, None], src, rec, accuracy=8, pml_width=20)
    assert d.shape == (1, 2, nt) and d.dtype == np.float64
    t = (np.arange(nt) + 1) * dt
    for k, r in enumerate([20.0, 14.0 * np.sqrt(2.0)]):
        want = np.zeros(nt)
        for i, ti in enumerate(t):
            if c * ti > r:
                u = np.linspace(0.0, np.arccosh(c * ti / r), 2001)
                want[i] = trapezoid(ricker_at(ti - r / c * np.cosh(u), f0, 1.2 / f0), u)
        want /= 2 * np.pi * c**2
        print(f"2-D Green's function, r = {r:.2f}: relative error {rel(d[0, k], want):.2e}")
        assert rel(d[0, k], want) < 0.02, rel(d[0, k], want)


def test_3d_trace_matches_the_analytic_greens_function():
    # In 3-D the pressure is w(t − r/c) / (4π c² r).
    c, h, dt, f0, nt = 1.0, 1.0, 0.3, 0.06, 110
    v = np.full((27, 27, 27), c)
    w = ricker(f0, dt, nt)
    d = fdlab.wave(v, h, dt, w[None, None], [[[13, 13, 13]]], [[[13, 13, 22]]],
                   accuracy=8, pml_width=8)
    r = 9.0
    want = ricker_at((np.arange(nt) + 1) * dt - r / c, f0, 1.2 / f0) / (4 * np.pi * c**2 * r)
    print(f"3-D Green's function: relative error {rel(d[0, 0], want):.2e}")
    assert rel(d[0, 0], want) < 0.03, rel(d[0, 0], want)


def test_reciprocity_with_rigid_walls():
    # With a constant velocity the discrete operator is symmetric: swapping source and
    # receiver gives the same trace, to rounding.
    v = np.full((23, 31), 1.5)
    w = ricker(0.08, 0.3, 80)[None, None]
    a = fdlab.wave(v, 1.0, 0.3, w, [[[4, 7]]], [[[15, 25]]], accuracy=4, pml_width=0)
    b = fdlab.wave(v, 1.0, 0.3, w, [[[15, 25]]], [[[4, 7]]], accuracy=4, pml_width=0)
    print(f"reciprocity: relative difference {rel(a, b):.1e}")
    assert rel(a, b) < 1e-12


def test_shots_sources_and_grid_points():
    rng = np.random.default_rng(1)
    v = 1.5 + 0.2 * rng.random((19, 26))
    nt = 50
    w = rng.standard_normal((2, 2, nt))
    src = np.array([[[5, 6], [9, 12]], [[10, 20], [3.4, 7.6]]])
    rec = np.array([[[2, 3], [15, 22], [8.5, 9.25]], [[4, 4], [12, 12], [16, 1]]])
    args = dict(accuracy=4, pml_width=6, pml_freq=0.1)
    d = fdlab.wave(v, 1.0, 0.25, w, src, rec, **args)
    assert d.shape == (2, 3, nt)
    # Each shot alone, and each source alone: the batch is a loop, the sources add up.
    for s in range(2):
        alone = fdlab.wave(v, 1.0, 0.25, w[s:s + 1], src[s:s + 1], rec[s:s + 1], **args)
        np.testing.assert_array_equal(alone[0], d[s])
        parts = sum(
            fdlab.wave(v, 1.0, 0.25, w[s:s + 1, i:i + 1], src[s:s + 1, i:i + 1],
                       rec[s:s + 1], **args)
            for i in range(2)
        )
        assert rel(parts[0], d[s]) < 1e-12
    # A location within rounding of a grid point is that grid point, bit for bit.
    on = fdlab.wave(v, 1.0, 0.25, w[:1], src[:1] + 1e-12, rec[:1], **args)
    np.testing.assert_array_equal(on[0], d[0])


def test_odd_shapes_and_spacings():
    rng = np.random.default_rng(2)
    for shape, spacing in [((7, 33), (0.9, 1.2)), ((9, 11, 13), (1.0, 0.8, 1.1))]:
        v = 2.0 + 0.3 * rng.random(shape)
        nt = 20
        nd = len(shape)
        src = np.array([[[s // 2 for s in shape]]], dtype=float)
        rec = np.array([[[s - 1 for s in shape], [0] * nd]], dtype=float)
        d = fdlab.wave(v, spacing, 0.05, rng.standard_normal((1, 1, nt)), src, rec,
                       accuracy=6, pml_width=4)
        assert d.shape == (1, 2, nt) and np.all(np.isfinite(d)) and np.abs(d).max() > 0
        gv, gw = fdlab.wave_vjp(v, spacing, 0.05, rng.standard_normal((1, 1, nt)), src, rec,
                                rng.standard_normal(d.shape), accuracy=6, pml_width=4)
        assert gv.shape == shape and gw.shape == (1, 1, nt)


# -- the adjoint --------------------------------------------------------------------------


def problem(ndim=2, shots=2, nt=60, seed=0):
    """A small random problem: smooth random velocity, off-grid sources and receivers."""
    rng = np.random.default_rng(seed)
    shape = (17, 21) if ndim == 2 else (10, 11, 12)
    grid = np.meshgrid(*[np.arange(s) for s in shape], indexing="ij")
    v = 1.5 + 0.1 * np.sin(grid[-1] / 4.0) * np.cos(grid[0] / 3.0) + 0.02 * rng.random(shape)
    hi = np.array(shape) - 1
    src = rng.random((shots, 2, ndim)) * hi
    rec = rng.random((shots, 3, ndim)) * hi
    w = np.stack([[ricker(0.1, 0.3, nt, t0=8 + 3 * s + i) for i in range(2)]
                  for s in range(shots)])
    kw = dict(accuracy=4, pml_width=5, pml_freq=0.1, pml_velocity=1.7)
    return rng, v, 1.0, 0.3 if ndim == 2 else 0.25, w, src, rec, kw


@pytest.mark.parametrize("ndim", [2, 3])
def test_dot_product_of_the_source_map(ndim):
    # traces = F w (linear in w): <F w, y> = <w, Fᵀ y> with Fᵀ y from wave_vjp.
    rng, v, h, dt, _, src, rec, kw = problem(ndim, nt=40 if ndim == 3 else 60)
    nt = 40 if ndim == 3 else 60
    w = rng.standard_normal((2, 2, nt))
    y = rng.standard_normal((2, 3, nt))
    fw = fdlab.wave(v, h, dt, w, src, rec, **kw)
    gv, ft_y = fdlab.wave_vjp(v, h, dt, w, src, rec, y, **kw)
    lhs, rhs = np.vdot(fw, y), np.vdot(w, ft_y)
    print(f"dot product {ndim}-D: relative mismatch {abs(lhs - rhs) / abs(lhs):.1e}")
    assert abs(lhs - rhs) <= 1e-12 * max(abs(lhs), abs(rhs)), (lhs, rhs)
    assert gv.shape == v.shape


def taylor(j, x, dx, grad, hs):
    """Orders of |J(x + h dx) − J(x)| and |J(x + h dx) − J(x) − h <g, dx>| over halvings."""
    j0 = j(x)
    r1, r2 = [], []
    for h in hs:
        jh = j(x + h * dx)
        r1.append(abs(jh - j0))
        r2.append(abs(jh - j0 - h * np.vdot(grad, dx)))
    o1 = [np.log2(a / b) for a, b in zip(r1, r1[1:])]
    o2 = [np.log2(a / b) for a, b in zip(r2, r2[1:])]
    print("first-order orders", np.round(o1, 4), "second-order orders", np.round(o2, 4))
    return o1, o2


def test_taylor_in_the_velocity():
    rng, v, h, dt, w, src, rec, kw = problem(2)
    y, x = np.meshgrid(np.arange(17) - 8.0, np.arange(21) - 10.0, indexing="ij")
    observed = fdlab.wave(v * (1 + 0.05 * np.exp(-(x**2 + y**2) / 10)), h, dt, w, src, rec, **kw)
    g = fdlab.wave_gradient(v, h, dt, w, src, rec, observed, **kw)
    assert g.misfit > 0 and g.traces.shape == observed.shape
    np.testing.assert_allclose(
        g.misfit, 0.5 * np.sum((fdlab.wave(v, h, dt, w, src, rec, **kw) - observed) ** 2),
        rtol=1e-13)
    dv = 0.05 * v * rng.standard_normal(v.shape)  # every point, the edges under the CPML too

    def j(vv):
        return 0.5 * np.sum((fdlab.wave(vv, h, dt, w, src, rec, **kw) - observed) ** 2)

    o1, o2 = taylor(j, v, dv, g.grad_v, [2.0**-e for e in range(6, 11)])
    assert all(0.9 < o < 1.1 for o in o1), o1
    assert all(1.9 < o < 2.1 for o in o2), o2


def test_taylor_in_velocity_and_sources_3d():
    rng, v, h, dt, w, src, rec, kw = problem(3, shots=1, nt=36)
    observed = fdlab.wave(v * 1.03, h, dt, w, src, rec, **kw)
    g = fdlab.wave_gradient(v, h, dt, w, src, rec, observed, **kw)
    dv = 0.05 * v * rng.standard_normal(v.shape)
    dw = 0.2 * rng.standard_normal(w.shape)
    x = np.concatenate([v.ravel(), w.ravel()])
    dx = np.concatenate([dv.ravel(), dw.ravel()])
    grad = np.concatenate([g.grad_v.ravel(), g.grad_source_amplitudes.ravel()])

    def j(xx):
        vv, ww = xx[:v.size].reshape(v.shape), xx[v.size:].reshape(w.shape)
        return 0.5 * np.sum((fdlab.wave(vv, h, dt, ww, src, rec, **kw) - observed) ** 2)

    o1, o2 = taylor(j, x, dx, grad, [2.0**-e for e in range(9, 14)])
    assert all(0.9 < o < 1.1 for o in o1), o1
    assert all(1.9 < o < 2.1 for o in o2), o2


def test_checkpoints_do_not_change_the_gradient():
    _, v, h, dt, w, src, rec, kw = problem(2, shots=1, nt=30)
    y = np.random.default_rng(5).standard_normal((1, 3, 30))
    every = fdlab.wave_vjp(v, h, dt, w, src, rec, y, **kw)
    few = fdlab.wave_vjp(v, h, dt, w, src, rec, y, checkpoints=2, **kw)
    for a, b in zip(every, few):
        np.testing.assert_array_equal(a, b)


def test_zero_residual_gives_zero_gradient():
    _, v, h, dt, w, src, rec, kw = problem(2, shots=1, nt=30)
    d = fdlab.wave(v, h, dt, w, src, rec, **kw)
    g = fdlab.wave_gradient(v, h, dt, w, src, rec, d, **kw)
    assert g.misfit == 0 and not g.grad_v.any() and not g.grad_source_amplitudes.any()


# -- errors -------------------------------------------------------------------------------


def good():
    v = np.full((12, 14), 1.5)
    return dict(v=v, spacing=1.0, dt=0.3, source_amplitudes=np.ones((1, 1, 10)),
                source_locations=[[[5, 6]]], receiver_locations=[[[2, 3]]])


@pytest.mark.parametrize("change,exc,words", [
    (dict(v=np.ones(5)), ValueError, "2-D [ny, nx] or 3-D"),
    (dict(v=np.full((12, 14), -1.0)), ValueError, "positive velocities"),
    (dict(v=np.full((12, 14), np.nan)), ValueError, "finite"),
    (dict(v="fast"), TypeError, "array of numbers"),
    (dict(spacing=(1.0, 1.0, 1.0)), ValueError, "one per axis of v"),
    (dict(spacing=0.0), ValueError, "positive"),
    (dict(dt=1.0), ValueError, "stability limit"),
    (dict(dt=-0.1), ValueError, "positive time step"),
    (dict(source_amplitudes=np.ones((1, 10))), ValueError, "[shot, source, time]"),
    (dict(source_amplitudes=np.ones((2, 1, 10))), ValueError, "with 2 shots"),
    (dict(source_amplitudes=np.ones((1, 2, 10))), ValueError, "one location per source"),
    (dict(source_locations=[[[5, 6, 1]]]), ValueError, "[shot, source, ndim]"),
    (dict(source_locations=[[[5, 14]]]), ValueError, "outside the model"),
    (dict(receiver_locations=[[[-0.5, 3]]]), ValueError, "outside the model"),
    (dict(receiver_locations=[[[np.inf, 3]]]), ValueError, "finite"),
    (dict(accuracy=3), ValueError, "2, 4, 6 or 8"),
    (dict(accuracy=4.0), TypeError, "int"),
    (dict(pml_width=-1), ValueError, "pml_width"),
    (dict(pml_freq=0.0), ValueError, "positive frequency"),
    (dict(pml_velocity=0.0), ValueError, "positive velocity"),
])
def test_bad_inputs_are_refused(change, exc, words):
    args = {**good(), **change}
    with pytest.raises(exc) as e:
        fdlab.wave(**args)
    assert words in str(e.value)


def test_bad_vjp_inputs_are_refused():
    args = good()
    with pytest.raises(ValueError, match=r"\[1, 1, 10\]"):
        fdlab.wave_vjp(**args, grad_traces=np.ones((1, 2, 10)))
    with pytest.raises(ValueError, match="at least 1"):
        fdlab.wave_vjp(**args, grad_traces=np.ones((1, 1, 10)), checkpoints=0)
    with pytest.raises(ValueError, match="finite"):
        fdlab.wave_gradient(**args, observed=np.full((1, 1, 10), np.nan))


def test_the_dominant_frequency_is_the_ricker_peak():
    dt, nt, f0 = 0.001, 1000, 15.0
    f = fdlab.dominant_frequency(ricker(f0, dt, nt)[None, None], dt)
    assert abs(f - f0) <= 1.0 / (nt * dt)


# -- PyTorch ------------------------------------------------------------------------------


def test_torch_autograd_is_the_vjp():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    _, v, h, dt, w, src, rec, kw = problem(2, shots=2, nt=40)
    observed = fdlab.wave(v * 1.02, h, dt, w, src, rec, **kw)
    vt = torch.tensor(v, requires_grad=True)
    wt = torch.tensor(w, requires_grad=True)
    d = fdlab.wave(vt, h, dt, wt, src, rec, **kw)
    assert isinstance(d, torch.Tensor) and d.dtype == torch.float64
    loss = 0.5 * ((d - torch.from_numpy(observed)) ** 2).sum()
    loss.backward()
    g = fdlab.wave_gradient(v, h, dt, w, src, rec, observed, **kw)
    np.testing.assert_allclose(loss.item(), g.misfit, rtol=1e-13)
    np.testing.assert_allclose(vt.grad.numpy(), g.grad_v, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(wt.grad.numpy(), g.grad_source_amplitudes, rtol=1e-12,
                               atol=1e-300)
    # float32 in, float32 out; a CUDA tensor is refused.
    d32 = fdlab.wave(vt.detach().float(), h, dt, w, src, rec, **kw)
    assert d32.dtype == torch.float32
    if torch.cuda.is_available():
        with pytest.raises(TypeError, match="cpu"):
            fdlab.wave(vt.detach().cuda(), h, dt, w, src, rec, **kw)


# -- the example --------------------------------------------------------------------------


def test_fwi_example_converges(tmp_path):
    # The CI size of python/examples/fwi.py: misfit down at least 100×, the anomaly's mean
    # velocity change recovered within 10 %, a PNG written.
    import os
    import subprocess
    import sys

    script = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                          "examples", "fwi.py")
    r = subprocess.run([sys.executable, script, "--ci"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=600)
    print(r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    reduction = float(next(x for x in lines if x.startswith("misfit reduction")).split()[2][:-1])
    error = float(next(x for x in lines if x.startswith("anomaly:")).split("error ")[1].split()[0])
    assert reduction >= 100 and error <= 10
    png = (tmp_path / "fwi.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000
