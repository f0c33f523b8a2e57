"""Every bad input raises the documented exception with a useful message, and nothing crashes."""

import numpy as np
import pytest

import fdlab
from fdlab import Stencil

D = Stencil.derivative("x", 1, 2)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float16, np.complex128, bool])
def test_wrong_dtype(dtype):
    with pytest.raises(TypeError, match="float32 or float64"):
        fdlab.apply(D, np.ones((4, 5), dtype=dtype))


def test_not_an_array():
    with pytest.raises(TypeError, match="numpy.ndarray"):
        fdlab.apply(D, [[1.0, 2.0, 3.0]])
    with pytest.raises(TypeError):
        fdlab.apply("not a stencil", np.ones(8))


@pytest.mark.parametrize("shape", [(), (2, 2, 2, 2)])
def test_wrong_ndim(shape):
    with pytest.raises(ValueError, match="1, 2 or 3 axes"):
        fdlab.apply(Stencil.laplacian(), np.ones(shape))


def test_non_contiguous():
    u = np.ones((6, 10))
    with pytest.raises(TypeError, match="C-contiguous"):
        fdlab.apply(D, u.T)
    with pytest.raises(TypeError, match="C-contiguous"):
        fdlab.apply(D, u, out=np.ones((10, 6)).T)


def test_out_mismatches():
    u = np.ones((6, 10))
    with pytest.raises(ValueError, match="shape"):
        fdlab.apply(D, u, out=np.ones((6, 11)))
    with pytest.raises(TypeError, match="dtype"):
        fdlab.apply(D, u, out=np.ones((6, 10), dtype=np.float32))
    with pytest.raises(ValueError, match="one output per stencil"):
        fdlab.apply([D, D], u, out=[np.ones_like(u)])


def test_read_only_out():
    u = np.ones((6, 10))
    out = np.zeros_like(u)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        fdlab.apply(D, u, out=out)


def test_out_aliasing_input():
    u = np.ones((6, 10))
    with pytest.raises(ValueError, match="shares memory"):
        fdlab.apply(D, u, out=u)
    with pytest.raises(ValueError, match="shares memory"):
        out = np.zeros_like(u)
        fdlab.apply([D, D], u, out=[out, out])


def test_stencil_too_wide_and_missing_axis():
    with pytest.raises(ValueError, match="too wide"):
        fdlab.apply(Stencil.derivative("x", 1, 8), np.ones((4, 5)))
    with pytest.raises(ValueError, match="axes"):
        fdlab.apply(Stencil.derivative("z"), np.ones((4, 5)))
    with pytest.raises(ValueError, match="spacings"):
        fdlab.apply(Stencil.laplacian(2, [1.0, 1.0]), np.ones((4, 5, 6)))


def test_bad_stencil_arguments():
    with pytest.raises(ValueError, match="axis"):
        Stencil.derivative(3)
    with pytest.raises(ValueError, match="axis"):
        Stencil.derivative("w")
    with pytest.raises(TypeError, match="axis"):
        Stencil.derivative(1.5)
    with pytest.raises(ValueError):
        Stencil.derivative("x", order=0)
    with pytest.raises(ValueError):
        Stencil.derivative("x", order=1, accuracy=3)
    with pytest.raises(ValueError, match="spacing"):
        Stencil.derivative("x", spacing=0.0)
    with pytest.raises(ValueError, match="spacing"):
        Stencil.laplacian(spacing=float("nan"))
    with pytest.raises(ValueError, match="weight"):
        Stencil.custom([0, 1], [1.0])
    with pytest.raises(ValueError, match="twice"):
        Stencil.custom([0, 0], [1.0, 2.0])
    with pytest.raises(ValueError, match="finite"):
        Stencil.custom([0], [float("inf")])
    with pytest.raises(ValueError, match="components"):
        Stencil.custom([(0, 0, 0, 0)], [1.0])
    with pytest.raises(TypeError):
        Stencil.custom([("a",)], [1.0])


def test_unknown_names():
    u = np.ones(8)
    with pytest.raises(ValueError, match="boundary"):
        fdlab.apply(D, u, boundary="reflective")
    with pytest.raises(ValueError, match="backend"):
        fdlab.apply(D, u, backend="metal")
    with pytest.raises(TypeError, match="dtype"):
        fdlab.Plan([D], (8,), "int32")
    with pytest.raises(ValueError, match="no stencil"):
        fdlab.apply([], u)


def test_plan_mismatch():
    plan = fdlab.Plan([D], (8, 9))
    with pytest.raises(ValueError, match="shape"):
        plan.apply(np.ones((8, 10)))
    with pytest.raises(TypeError, match="dtype"):
        plan.apply(np.ones((8, 9), np.float32))


class _CudaArrayInterface:
    __cuda_array_interface__ = {"shape": (8,), "typestr": "<f8", "data": (0, False),
                                "version": 3}


class _DLPackCuda:
    """A broken DLPack producer: its __dlpack__ returns no capsule."""

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None):
        return 42


@pytest.mark.parametrize("backend", ["auto", "cuda"])
def test_gpu_arrays_of_unknown_libraries(backend):
    # Routed to the GPU path, refused before any driver call: fdlab allocates outputs only
    # with CuPy and PyTorch, writes only arrays exposing __cuda_array_interface__ and reads
    # DLPack capsules.
    with pytest.raises(TypeError, match="pass out="):
        fdlab.apply(D, _CudaArrayInterface(), backend=backend)
    with pytest.raises(TypeError, match="'dltensor' capsule"):
        fdlab.apply(D, _DLPackCuda(), backend=backend)
    with pytest.raises(TypeError, match="DLPack-only output"):
        fdlab.apply(D, _CudaArrayInterface(), out=_DLPackCuda(), backend=backend)


def test_gpu_array_with_cpu_backend_and_cuda_backend_with_numpy():
    with pytest.raises(TypeError, match="GPU"):
        fdlab.apply(D, _DLPackCuda(), backend="cpu")
    with pytest.raises(TypeError, match="move it to the GPU"):
        fdlab.apply(D, np.ones(8), backend="cuda")


def test_huge_allocation_is_memory_error():
    # 2**40 float64 points (8 TiB) cannot be allocated: MemoryError before the copy is tried,
    # never a crash (a kernel that overcommits would kill the process on first touch).
    with pytest.raises(MemoryError, match="GiB of host memory"):
        fdlab.apply(D, np.broadcast_to(np.ones(1), (2**20, 2**20)), convert=True)


def test_empty_array():
    with pytest.raises(ValueError, match="0 points"):
        fdlab.apply(D, np.ones((0, 5)))


@pytest.mark.parametrize("bad", [None, 3, "x", b"x", object()])
def test_stencils_that_are_not_stencils_say_what_is_expected(bad):
    # `apply(None, u)` used to fail in `list(None)`: "'NoneType' object is not iterable".
    with pytest.raises(TypeError, match=r"stencils must be a fdlab\.Stencil or a list of them"):
        fdlab.apply(bad, np.ones(8))
    with pytest.raises(TypeError, match=type(bad).__name__):
        fdlab.apply(bad, np.ones(8))


def test_a_list_with_a_non_stencil_names_the_item():
    with pytest.raises(TypeError, match="item 1 is a NoneType"):
        fdlab.apply([D, None], np.ones(8))
    # The same on the GPU path (refused before the array is looked at).
    with pytest.raises(TypeError, match="stencils must be"):
        fdlab.apply(None, _CudaArrayInterface(), backend="cuda")
