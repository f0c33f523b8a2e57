"""CuPy arrays and PyTorch CUDA tensors through fdlab.apply: results equal to the CPU's, no copy.

Skipped, with the reason, when neither CuPy nor PyTorch with CUDA is installed or fdlab finds
no usable GPU. Every GPU result is compared with the CPU (NumPy) path on the same random input:
relative error (max |gpu - cpu| / max |cpu|) at most 1e-5 in float32 and 1e-12 in float64.
"""

import importlib

import numpy as np
import pytest

import fdlab
from fdlab import Stencil

_info = fdlab.info()
if _info["cuda_devices"] == 0:
    pytest.skip(f"fdlab finds no usable GPU: {_info['cuda_unavailable']}",
                allow_module_level=True)


def _lib(name):
    try:
        m = importlib.import_module(name)
    except Exception as e:  # ImportError, or a broken CUDA install raising at import
        return None, f"{name} is not importable ({e})"
    if name == "torch" and not m.cuda.is_available():
        return None, "torch has no CUDA"
    if name == "cupy":
        try:
            m.cuda.runtime.getDeviceCount()
        except Exception as e:
            return None, f"cupy finds no GPU ({e})"
    return m, ""


LIBS = []
for _name in ("cupy", "torch"):
    _m, _why = _lib(_name)
    LIBS.append(pytest.param(_name, marks=pytest.mark.skipif(_m is None, reason=_why)))
if all(_lib(n)[0] is None for n in ("cupy", "torch")):
    pytest.skip("neither CuPy nor PyTorch with CUDA is available", allow_module_level=True)

TOL = {np.float32: 1e-5, np.float64: 1e-12}


class Gpu:
    """The few operations the tests need, for CuPy and for PyTorch."""

    def __init__(self, name):
        self.name = name
        self.m = importlib.import_module(name)

    def to_gpu(self, a):
        if self.name == "cupy":
            return self.m.asarray(a)
        return self.m.from_numpy(a).cuda()

    def to_np(self, a):
        if self.name == "cupy":
            return self.m.asnumpy(a)
        return a.cpu().numpy()

    def ptr(self, a):
        if self.name == "cupy":
            return a.data.ptr
        return a.data_ptr()

    def is_array(self, a):
        return isinstance(a, self.m.ndarray if self.name == "cupy" else self.m.Tensor)

    def empty_like(self, a):
        return self.m.empty_like(a)

    def fill_nan(self, a):
        if self.name == "cupy":
            a.fill(np.nan)
        else:
            a.fill_(float("nan"))

    def stream(self):
        """A new non-blocking stream and the context manager that makes it current."""
        if self.name == "cupy":
            s = self.m.cuda.Stream(non_blocking=True)
            return s, s
        s = self.m.cuda.Stream()
        return s, self.m.cuda.stream(s)

    def current_stream_handle(self):
        if self.name == "cupy":
            return self.m.cuda.get_current_stream().ptr
        return self.m.cuda.current_stream().cuda_stream

    def synchronize(self):
        if self.name == "cupy":
            self.m.cuda.Device().synchronize()
        else:
            self.m.cuda.synchronize()


@pytest.fixture(params=LIBS)
def gpu(request):
    return Gpu(request.param)


def rel_err(got, want):
    scale = max(float(np.max(np.abs(want))), 1e-300)
    return float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) / scale


def random(shape, dtype, seed=7):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


CASES = [
    # (NumPy shape, stencil, boundary)
    ((64, 64, 64), Stencil.derivative("x", 1, 8, 1 / 64), "periodic"),
    ((33, 45, 67), Stencil.derivative("y", 1, 4, 0.1), "periodic"),
    ((33, 45, 67), Stencil.derivative("z", 2, 2, 0.3), "neumann"),
    ((33, 45, 67), Stencil.laplacian(2, [0.1, 0.2, 0.3]), "dirichlet"),
    ((45, 67), Stencil.laplacian(4), "periodic"),
    ((101,), Stencil.derivative("x", 1, 6), "neumann"),
    ((7, 9, 11), Stencil.custom([(0, 0, 0), (1, 0, 0), (0, -1, 1)], [2.0, -1.0, 0.5]),
     "periodic"),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_equal_to_cpu_with_out_none(gpu, case, dtype):
    shape, st, boundary = CASES[case]
    u = random(shape, dtype)
    want = fdlab.apply(st, u, boundary=boundary)
    ug = gpu.to_gpu(u)
    got = fdlab.apply(st, ug, boundary=boundary)
    assert gpu.is_array(got), type(got)
    host = gpu.to_np(got)
    assert host.shape == shape and host.dtype == dtype
    assert rel_err(host, want) <= TOL[dtype], (gpu.name, shape, boundary)
    np.testing.assert_array_equal(gpu.to_np(ug), u)  # the input is not touched


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_out_is_written_in_place(gpu, dtype):
    shape, st, boundary = CASES[1]
    u = random(shape, dtype, seed=3)
    want = fdlab.apply(st, u, boundary=boundary)
    ug = gpu.to_gpu(u)
    out = gpu.empty_like(ug)
    gpu.fill_nan(out)  # every point must be written
    before = gpu.ptr(out)
    res = fdlab.apply(st, ug, out=out, boundary=boundary)
    assert res is out
    assert gpu.ptr(res) == before
    assert rel_err(gpu.to_np(out), want) <= TOL[dtype]


def test_gradient_outputs(gpu):
    u = random((20, 31, 40), np.float64, seed=5)
    grad = [Stencil.derivative(a, 1, 4, 0.1) for a in "xyz"]
    want = fdlab.apply(grad, u)
    ug = gpu.to_gpu(u)
    outs = [gpu.empty_like(ug) for _ in grad]
    ptrs = [gpu.ptr(o) for o in outs]
    got = fdlab.apply(grad, ug, out=outs)
    assert [gpu.ptr(g) for g in got] == ptrs and all(g is o for g, o in zip(got, outs))
    for g, w in zip(got, want):
        assert rel_err(gpu.to_np(g), w) <= TOL[np.float64]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_on_a_non_default_stream(gpu, dtype):
    shape, st, boundary = CASES[0]
    u = random(shape, dtype, seed=11)
    want = fdlab.apply(st, u, boundary=boundary)
    s, ctx = gpu.stream()
    with ctx:
        assert gpu.current_stream_handle() not in (0, 1, 2)
        ug = gpu.to_gpu(u)
        out = gpu.empty_like(ug)
        before = gpu.ptr(out)
        for _ in range(3):  # queued back to back on the caller's stream
            res = fdlab.apply(st, ug, out=out, boundary=boundary)
        s.synchronize()  # only the caller's stream: the kernel must be on it
        host = gpu.to_np(out)
    assert res is out and gpu.ptr(out) == before
    assert rel_err(host, want) <= TOL[dtype]


def test_backend_cuda_and_repeated_applies(gpu):
    u = random((16, 17, 18), np.float64, seed=2)
    st = Stencil.laplacian(2)
    want = fdlab.apply(st, u)
    ug = gpu.to_gpu(u)
    for _ in range(5):  # the cached plan is reused
        got = fdlab.apply(st, ug, backend="cuda")
    assert rel_err(gpu.to_np(got), want) <= TOL[np.float64]


def test_gpu_errors(gpu):
    u = gpu.to_gpu(random((8, 9, 10), np.float64))
    st = Stencil.derivative("x", 1, 2)
    with pytest.raises(TypeError, match="lives on a GPU"):
        fdlab.apply(st, u, backend="cpu")
    with pytest.raises(TypeError, match="not C-contiguous"):
        fdlab.apply(st, u[:, :, ::2])
    with pytest.raises(TypeError, match="float32 or float64"):
        fdlab.apply(st, gpu.to_gpu(np.ones((8, 9, 10), dtype=np.int32)))
    with pytest.raises(ValueError, match="overlaps the input"):
        fdlab.apply(st, u, out=u)
    with pytest.raises(TypeError, match="dtype"):
        fdlab.apply(st, u, out=gpu.to_gpu(np.zeros((8, 9, 10), np.float32)))
    with pytest.raises(TypeError, match="GPU array"):
        fdlab.apply(st, u, out=np.zeros((8, 9, 10)))
    if gpu.name == "torch":
        t = gpu.m.ones((8, 9, 10), device="cuda", dtype=gpu.m.float64, requires_grad=True)
        with pytest.raises(TypeError, match="detach"):
            fdlab.apply(st, t)


def test_offset_view_is_computed_or_refused(gpu):
    # A contiguous view one element into its allocation: a kernel with vector loads needs
    # aligned pointers and must refuse it; a scalar kernel must compute it right.
    base = random((4 * 64 + 1,), np.float32, seed=9)
    st = Stencil.derivative("x", 1, 2)
    view = gpu.to_gpu(base)[1:]
    want = fdlab.apply(st, base[1:].copy())
    try:
        got = fdlab.apply(st, view)
    except ValueError as e:
        assert "aligned" in str(e)
        return
    assert rel_err(gpu.to_np(got), want) <= TOL[np.float32]


class DLPackOnly:
    """A producer that speaks only DLPack (as JAX arrays do)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dlpack_only_input(gpu, dtype):
    shape, st, boundary = CASES[2]
    u = random(shape, dtype, seed=13)
    want = fdlab.apply(st, u, boundary=boundary)
    ug = gpu.to_gpu(u)
    out = gpu.empty_like(ug)
    res = fdlab.apply(st, DLPackOnly(ug), out=out, boundary=boundary)
    assert res is out
    assert rel_err(gpu.to_np(out), want) <= TOL[dtype]
    with pytest.raises(TypeError, match="pass out="):
        fdlab.apply(st, DLPackOnly(ug))
