"""GPU arrays are checked before the driver is touched; these tests need no GPU.

Fake arrays expose ``__cuda_array_interface__`` over addresses that hold nothing: every bad
one must be refused with the documented exception before any driver call, and a valid-looking
one must reach the driver, which on a machine without a GPU says so in a ``RuntimeError``.
"""

import numpy as np
import pytest

import fdlab
from fdlab import Stencil

D = Stencil.derivative("x", 1, 4)
LAP = Stencil.laplacian(2)
BASE = 1 << 40  # an address in no allocation: never dereferenced by these tests


class FakeGpuArray:
    """The minimal GPU array: ``__cuda_array_interface__`` only (as Numba device arrays)."""

    def __init__(self, shape, typestr="<f8", ptr=BASE, readonly=False, strides=None, **extra):
        self.__cuda_array_interface__ = dict(
            version=3, shape=tuple(shape), typestr=typestr, data=(ptr, readonly),
            strides=strides, stream=None, **extra)


def fake_pair(shape=(5, 6, 7), typestr="<f8"):
    size = int(np.prod(shape)) * int(typestr[-1])
    return FakeGpuArray(shape, typestr), FakeGpuArray(shape, typestr, ptr=BASE + 2 * size + 256)


def gpu_usable():
    return fdlab.info()["cuda_devices"] > 0


def test_info_reports_cuda():
    i = fdlab.info()
    assert i["cuda"] is True and "cuda" in i["backends"]
    assert isinstance(i["cuda_devices"], int)
    if i["cuda_devices"] == 0:
        assert i["cuda_unavailable"].startswith("no CUDA device") or "NVRTC" in i[
            "cuda_unavailable"]


def test_auto_routes_gpu_arrays_and_cpu_refuses_them():
    u, out = fake_pair()
    with pytest.raises(TypeError, match="lives on a GPU"):
        fdlab.apply(D, u, out=out, backend="cpu")


def test_cuda_backend_refuses_numpy():
    with pytest.raises(TypeError, match="move it to the GPU"):
        fdlab.apply(D, np.ones((4, 5, 6)), backend="cuda")


@pytest.mark.parametrize("typestr", ["<i8", "<f2", "<c16", ">f8", "|b1"])
def test_wrong_dtype(typestr):
    u = FakeGpuArray((4, 5, 6), typestr)
    with pytest.raises(TypeError, match="float32 or float64"):
        fdlab.apply(D, u, out=FakeGpuArray((4, 5, 6), typestr, ptr=BASE + (1 << 20)))


def test_non_contiguous_input_and_out():
    # A transposed (F-ordered) 3-D view, and every other column of a 2-D array.
    bad = FakeGpuArray((4, 5, 6), strides=(8, 32, 160))
    with pytest.raises(TypeError, match="not C-contiguous"):
        fdlab.apply(D, bad, out=FakeGpuArray((4, 5, 6), ptr=BASE + (1 << 20)))
    u = FakeGpuArray((4, 6))
    with pytest.raises(TypeError, match="out is not C-contiguous"):
        fdlab.apply(D, u, out=FakeGpuArray((4, 6), ptr=BASE + (1 << 20), strides=(96, 16)))


def test_c_strides_and_unit_axes_pass_the_layout_check():
    # Explicit C strides, and any stride on an axis of one point, are contiguous.
    u = FakeGpuArray((4, 1, 6), strides=(48, 7, 8))
    out = FakeGpuArray((4, 1, 6), ptr=BASE + (1 << 20), strides=(48, 48, 8))
    err = _reach_driver(lambda: fdlab.apply(D, u, out=out))
    assert any(w in err for w in ("no CUDA device", "NVRTC", "not memory the CUDA driver")), err


def test_read_only_out():
    u = FakeGpuArray((4, 5, 6))
    ro = FakeGpuArray((4, 5, 6), ptr=BASE + (1 << 20), readonly=True)
    with pytest.raises(TypeError, match="read-only"):
        fdlab.apply(D, u, out=ro)


def test_out_dtype_shape_and_count():
    u = FakeGpuArray((4, 5, 6))
    with pytest.raises(TypeError, match="dtype float32 but the input has dtype float64"):
        fdlab.apply(D, u, out=FakeGpuArray((4, 5, 6), "<f4", ptr=BASE + (1 << 20)))
    with pytest.raises(ValueError, match="shape"):
        fdlab.apply(D, u, out=FakeGpuArray((4, 5, 7), ptr=BASE + (1 << 20)))
    with pytest.raises(ValueError, match="one output per stencil"):
        fdlab.apply([D, LAP], u, out=[FakeGpuArray((4, 5, 6), ptr=BASE + (1 << 20))])


def test_in_place_and_overlapping_outputs():
    u = FakeGpuArray((4, 5, 6))
    with pytest.raises(ValueError, match="overlaps the input"):
        fdlab.apply(D, u, out=FakeGpuArray((4, 5, 6)))
    with pytest.raises(ValueError, match="overlaps"):
        fdlab.apply(D, u, out=FakeGpuArray((4, 5, 6), ptr=BASE + 8 * 119))
    a = FakeGpuArray((4, 5, 6), ptr=BASE + (1 << 20))
    b = FakeGpuArray((4, 5, 6), ptr=BASE + (1 << 20) + 64)
    with pytest.raises(ValueError, match="output 1 overlaps output 0"):
        fdlab.apply([D, LAP], u, out=[a, b])


def test_null_pointer():
    with pytest.raises(ValueError, match="null pointer"):
        fdlab.apply(D, FakeGpuArray((4, 5, 6), ptr=0), out=FakeGpuArray((4, 5, 6)))


def test_bad_axes_boundary_and_width():
    with pytest.raises(ValueError, match="1, 2 or 3 axes"):
        fdlab.apply(D, FakeGpuArray((2, 2, 2, 2)), out=FakeGpuArray((2, 2, 2, 2), ptr=BASE * 2))
    u, out = fake_pair()
    with pytest.raises(ValueError, match="unknown boundary"):
        fdlab.apply(D, u, out=out, boundary="reflect")
    wide = Stencil.derivative("x", 1, 8)
    u, out = fake_pair((3, 3, 3))
    with pytest.raises(ValueError):
        fdlab.apply(wide, u, out=out)


def test_unknown_library_needs_out():
    with pytest.raises(TypeError, match="pass out="):
        fdlab.apply(D, FakeGpuArray((4, 5, 6)))


def test_not_an_interface_dict():
    class Broken:
        __cuda_array_interface__ = [1, 2]

    with pytest.raises(TypeError, match="not a dict"):
        fdlab.apply(D, Broken(), out=FakeGpuArray((4, 5, 6)))
    with pytest.raises(TypeError, match="no 'typestr' entry"):
        u = FakeGpuArray((4, 5, 6))
        del u.__cuda_array_interface__["typestr"]
        fdlab.apply(D, u, out=FakeGpuArray((4, 5, 6), ptr=BASE * 2))


def _reach_driver(call):
    """Runs an apply on fake arrays that pass every check and returns the error text: no device
    here (RuntimeError), or on a GPU the driver not knowing the fake address (ValueError). It
    never launches."""
    with pytest.raises((RuntimeError, ValueError)) as e:
        call()
    return str(e.value)


@pytest.mark.skipif(gpu_usable(), reason="a GPU is present: the no-device path cannot run")
@pytest.mark.parametrize("dtype", ["<f4", "<f8"])
def test_valid_looking_array_without_gpu_says_why(dtype):
    u, out = fake_pair(typestr=dtype)
    with pytest.raises(RuntimeError, match="^no CUDA device: "):
        fdlab.apply(D, u, out=out)
    with pytest.raises(RuntimeError, match="^no CUDA device: "):
        fdlab.apply(D, u, out=out, backend="cuda")


class _FakeDtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"


class FakeTensor:
    """What fdlab reads of a PyTorch tensor (its C accessors, not its interface dict),
    over an address that holds nothing. Its type claims the ``torch`` module as real ones do."""

    def __init__(self, shape, dtype="float64", ptr=BASE, strides=None, is_cuda=True,
                 requires_grad=False):
        self.shape = tuple(shape)
        self.dtype = _FakeDtype(dtype)
        self.is_cuda = is_cuda
        self.requires_grad = requires_grad
        self._ptr = ptr
        if strides is None:
            strides, step = [], 1
            for n in reversed(self.shape):
                strides.insert(0, step)
                step *= n
        self._strides = tuple(strides)

    def data_ptr(self):
        return self._ptr

    def stride(self):
        return self._strides

    def get_device(self):
        return 0

    @property
    def __cuda_array_interface__(self):
        raise AssertionError("a tensor's interface dict is not read: it is slow to build")


FakeTensor.__module__ = "torch"


def test_torch_tensors_are_read_through_their_accessors():
    u = FakeTensor((4, 5, 6))
    out = FakeTensor((4, 5, 6), ptr=BASE + (1 << 20))
    err = _reach_driver(lambda: fdlab.apply(D, u, out=out))
    assert any(w in err for w in ("no CUDA device", "NVRTC", "not memory the CUDA driver")), err


def test_torch_tensor_refusals():
    u = FakeTensor((4, 5, 6))
    other = BASE + (1 << 20)
    with pytest.raises(TypeError, match="not C-contiguous"):
        fdlab.apply(D, FakeTensor((4, 5, 6), strides=(1, 4, 20)), out=FakeTensor((4, 5, 6), ptr=other))
    with pytest.raises(TypeError, match="float32 or float64.*torch.int32"):
        fdlab.apply(D, FakeTensor((4, 5, 6), "int32"), out=FakeTensor((4, 5, 6), ptr=other))
    with pytest.raises(TypeError, match="detach"):
        fdlab.apply(D, u, out=FakeTensor((4, 5, 6), ptr=other, requires_grad=True))
    with pytest.raises(TypeError, match=r"\.cuda\(\)"):
        fdlab.apply(D, u, out=FakeTensor((4, 5, 6), ptr=other, is_cuda=False))
    with pytest.raises(TypeError, match="dtype float32 but the input has dtype float64"):
        fdlab.apply(D, u, out=FakeTensor((4, 5, 6), "float32", ptr=other))
    with pytest.raises(ValueError, match="overlaps the input"):
        fdlab.apply(D, u, out=FakeTensor((4, 5, 6)))
