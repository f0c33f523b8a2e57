"""fdlab: finite-difference stencils (derivatives, Laplacians, custom weights) on arrays.

Quick start::

    import numpy as np
    import fdlab

    u = np.random.rand(32, 48, 64)                 # shape (nz, ny, nx)
    dx = fdlab.Stencil.derivative("x", order=1, accuracy=8, spacing=1 / 64)
    du = fdlab.apply(dx, u, boundary="periodic")   # derivative along the LAST axis

Axes. fdlab fields are x-fastest: a C-ordered NumPy array of shape ``(nz, ny, nx)`` is a grid of
shape ``[nx, ny, nz]``. Axis ``0`` or ``"x"`` is the LAST NumPy axis, ``1``/``"y"`` the one
before it, ``2``/``"z"`` the first axis of a 3-D array. This is NOT NumPy's axis numbering:
``Stencil.derivative(0, ...)`` on a 3-D array differentiates along NumPy axis 2 (``-1``).
Custom offsets and per-axis spacings use the same (x, y, z) order.

Arrays. The CPU backend takes C-contiguous NumPy arrays of float32 or float64 with 1 to 3 axes.
Other dtypes and layouts raise ``TypeError`` unless ``convert=True`` is passed, which copies the
input with ``np.ascontiguousarray`` (integers become float64). Outputs have the input's dtype.
GPU arrays (CuPy arrays, PyTorch CUDA tensors, anything exposing ``__cuda_array_interface__``)
run on their GPU with no copy: the kernel reads the caller's memory and writes the output in
place, queued on the library's current stream. Inputs that speak only DLPack are read through
their capsule; their outputs must be given (``out=``) as ``__cuda_array_interface__`` arrays. The first apply of a (stencils, boundary, shape,
dtype, device) compiles a kernel (NVRTC, then fdlab's disk cache); later ones reuse it.

Boundaries. ``"periodic"`` wraps, ``"neumann"`` mirrors about the end points, ``"dirichlet"``
computes interior points only: output points whose stencil would leave the array are left as
they were, so with ``out=None`` (fresh zeros) they are 0.

The computation releases the GIL; on the CPU it runs on all cores (rayon).

Seismic modelling. ``wave`` returns receiver traces of the acoustic wave equation with a CPML
for a batch of shots; ``wave_vjp`` and ``wave_gradient`` give their exact gradients with
respect to the velocity and the source amplitudes, and ``wave`` on PyTorch tensors is
differentiable (``torch.autograd``). Their arguments follow ``v``'s NumPy axis order.
"""


# Modules under private names, so that `dir(fdlab)` and tab completion show fdlab's own API
# only (`__all__` governs `import *`, not `dir`).
import enum as _enum
import sys as _sys
import typing as _typing

import numpy as _np

from . import _fdlab
from ._fdlab import Plan, Stencil
from ._wave import WaveGradient, dominant_frequency, wave, wave_gradient, wave_vjp

__all__ = [
    "Stencil",
    "Boundary",
    "Plan",
    "apply",
    "info",
    "wave",
    "wave_vjp",
    "wave_gradient",
    "WaveGradient",
    "dominant_frequency",
    "__version__",
]
__version__: str = _fdlab.__version__

# DLPack device types that live on an NVIDIA GPU (kDLCUDA, kDLCUDAHost, kDLCUDAManaged).
_DLPACK_CUDA = {2, 3, 13}
_BACKENDS = ("auto", "cpu", "cuda")


class Boundary(str, _enum.Enum):
    """How a stencil treats points near the ends of each axis.

    Members compare equal to their names, so ``"periodic"`` and ``Boundary.PERIODIC`` are
    interchangeable wherever a boundary is expected.
    """

    PERIODIC = "periodic"
    """Index ``i`` reads ``i mod n`` on every axis."""
    DIRICHLET = "dirichlet"
    """Interior only: points whose stencil leaves the array are not written."""
    NEUMANN = "neumann"
    """Zero normal derivative: reads mirror about the end points, ``u[-i] = u[i]``."""

    def __str__(self) -> str:
        return self.value


def _is_gpu_array(u: _typing.Any) -> bool:
    """True when ``u`` lives on an NVIDIA GPU (CuPy, PyTorch CUDA, Numba, JAX ...)."""
    if isinstance(u, _np.ndarray):
        return False
    # The common libraries by type, without building their interface dict twice per call.
    root = type(u).__module__.partition(".")[0]
    if root == "cupy":
        return True
    if root == "torch":
        return bool(getattr(u, "is_cuda", False))
    try:
        if hasattr(u, "__cuda_array_interface__"):
            return True
    except Exception:  # e.g. a torch tensor that requires grad: still a GPU array
        return True
    dev = getattr(u, "__dlpack_device__", None)
    if dev is not None:
        try:
            kind = int(dev()[0])
        except Exception:  # a broken protocol is not a GPU array
            return False
        return kind in _DLPACK_CUDA
    return False


def _select_backend(u: _typing.Any, backend: str) -> str:
    """The backend that runs ``u``: CUDA for GPU arrays, the CPU for NumPy arrays."""
    if not isinstance(backend, str) or backend not in _BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; valid backends: auto, cpu, cuda")
    if _is_gpu_array(u):
        if backend == "cpu":
            raise TypeError(
                "backend='cpu' was asked for but the array lives on a GPU; copy it to the host "
                "first (e.g. cupy.asnumpy(u) or u.cpu().numpy()), or use backend='auto'"
            )
        return "cuda"
    if backend == "cuda":
        raise TypeError(
            "backend='cuda' computes on GPU arrays (CuPy, PyTorch CUDA tensors) in place and "
            f"does not copy host arrays; got {type(u).__name__}: move it to the GPU first "
            "(e.g. cupy.asarray(u) or torch.from_numpy(u).cuda()), or use backend='auto'"
        )
    return "cpu"


def _gpu_context(u: _typing.Any):
    """``(stream, device, alloc)`` of a GPU array: the handle of its library's current stream
    on the array's device (0 is the legacy default stream), the device ordinal, and the
    library's ``zeros_like`` for outputs (``None`` for libraries fdlab does not know)."""
    root = type(u).__module__.partition(".")[0]
    mod = _sys.modules.get(root)
    if root == "cupy" and mod is not None:
        dev = u.device.id
        if dev == mod.cuda.runtime.getDevice():
            return mod.cuda.get_current_stream().ptr, dev, mod.zeros_like
        with u.device:
            return mod.cuda.get_current_stream().ptr, dev, mod.zeros_like
    if root == "torch" and mod is not None:
        dev = u.get_device()
        # The raw handle without building a Stream object (a few microseconds per call).
        raw = getattr(mod._C, "_cuda_getCurrentRawStream", None)
        stream = raw(dev) if raw is not None else mod.cuda.current_stream(dev).cuda_stream
        return stream, dev, mod.zeros_like
    # Other producers: the stream their interface names (v3), the device DLPack names.
    stream, device = 0, 0
    try:
        s = u.__cuda_array_interface__.get("stream")
        stream = int(s) if s is not None else 0
    except Exception:
        pass
    dl = getattr(u, "__dlpack_device__", None)
    if dl is not None:
        try:
            device = int(dl()[1])
        except Exception:
            pass
    return stream, device, None


def _host_available() -> _typing.Optional[int]:
    """Bytes of host memory the kernel says are available, or None where it does not say."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _check_host_memory(nbytes: int, what: str) -> None:
    # Where the kernel overcommits, a too-large NumPy array is "allocated" and the process is
    # killed when its pages are touched; refuse it up front instead.
    free = _host_available()
    if free is not None and nbytes > free:
        raise MemoryError(
            f"{what} needs {nbytes / 2**30:.1f} GiB of host memory, "
            f"{free / 2**30:.1f} GiB available; use a smaller array"
        )


def _convert(u: _typing.Any) -> _np.ndarray:
    a = _np.asarray(u)
    dtype = a.dtype if a.dtype in (_np.float32, _np.float64) else _np.float64
    _check_host_memory(a.size * _np.dtype(dtype).itemsize, "converting the input")
    return _np.ascontiguousarray(a, dtype=dtype)


def _stencil_list(stencils: _typing.Any) -> _typing.Tuple[_typing.List[Stencil], bool]:
    """``(stencils as a list, whether one Stencil was given)``. Anything but a Stencil or a
    sequence of them raises ``TypeError`` naming what was given, before the array is
    looked at: the bare ``list(None)`` error said nothing of what ``apply`` expects. (An empty
    sequence is refused by the extension with ``ValueError``.)"""
    expected = (
        "stencils must be a fdlab.Stencil or a list of them, e.g. "
        'fdlab.Stencil.derivative("x", order=1, accuracy=8)'
    )
    if isinstance(stencils, Stencil):
        return [stencils], True
    if isinstance(stencils, (str, bytes)) or not hasattr(stencils, "__iter__"):
        raise TypeError(f"{expected}; got {type(stencils).__name__}")
    seq = list(stencils)
    for i, s in enumerate(seq):
        if not isinstance(s, Stencil):
            raise TypeError(f"{expected}; item {i} is a {type(s).__name__}")
    return seq, False


def apply(
    stencils: _typing.Union[Stencil, _typing.Sequence[Stencil]],
    u: _typing.Any,
    out: _typing.Any = None,
    boundary: _typing.Union[str, Boundary] = "periodic",
    backend: str = "auto",
    convert: bool = False,
) -> _typing.Any:
    """Applies one stencil or a list of stencils to ``u``.

    Args:
        stencils: a :class:`Stencil`, or a sequence of them (one output each). Their axes
            are fdlab's: 0 / ``"x"`` is the last NumPy axis of ``u``, 1 / ``"y"`` the one
            before, 2 / ``"z"`` the first axis of a 3-D array.
        u: the input: a C-contiguous float32/float64 array with 1 to 3 axes: a NumPy array
            (CPU), or a CuPy array or PyTorch CUDA tensor (GPU, no copy).
        out: where to write: an array (one stencil) or a sequence of arrays of ``u``'s shape,
            dtype and kind (NumPy for NumPy, GPU arrays for GPU arrays), written in place;
            ``None`` allocates zeros (with CuPy / PyTorch for GPU inputs).
        boundary: ``"periodic"``, ``"dirichlet"`` (interior only; other points of ``out`` are
            left as they were) or ``"neumann"``, or a :class:`Boundary`.
        backend: ``"auto"`` (the GPU for GPU arrays, the CPU for NumPy arrays), ``"cpu"`` or
            ``"cuda"`` (GPU arrays only: NumPy arrays raise ``TypeError``).
        convert: copy a NumPy ``u`` to a C-contiguous float array first when it is not one
            already (integers become float64), instead of raising ``TypeError``. GPU arrays
            are never copied.

    Returns:
        The output array for one stencil, the list of outputs for a sequence.

    Raises:
        TypeError: ``stencils`` not a :class:`Stencil` or a sequence of them (e.g. ``None``),
            wrong dtype, non-contiguous layout, not an array, a GPU array with
            ``backend="cpu"`` or a NumPy array with ``backend="cuda"``, a read-only GPU ``out``.
        ValueError: an empty list of stencils, wrong number of axes, mismatched ``out`` shape, read-only NumPy ``out``,
            ``out`` overlapping the input, a stencil too wide for the array, an unknown
            boundary or backend.
        RuntimeError: no usable GPU (``"no CUDA device: <reason>"``), NVRTC missing, a
            driver error.
        MemoryError: the outputs cannot be allocated.

    On the GPU the kernel is queued on the current stream of the array's library
    (``cupy.cuda.get_current_stream()``, ``torch.cuda.current_stream()``) and ``apply``
    returns without waiting, as CuPy and PyTorch operations do.
    """
    seq, single = _stencil_list(stencils)
    if _select_backend(u, backend) == "cuda":
        if out is not None and not isinstance(out, (list, tuple)):
            out = [out]
        stream, device, alloc = _gpu_context(u)
        res = _fdlab.apply_cuda(seq, u, out, str(boundary), stream, device, alloc)
        return res[0] if single else res
    if convert:
        u = _convert(u)
    if out is not None:
        if isinstance(out, _np.ndarray) or not isinstance(out, (list, tuple)):
            out = [out]
        else:
            out = list(out)
    if out is None and isinstance(u, _np.ndarray):
        _check_host_memory(len(seq) * u.nbytes, "the outputs")
    res = _fdlab.apply_cpu(seq, u, out, str(boundary))
    return res[0] if single else res


def info() -> dict:
    """What this build offers: version, backends, CUDA support, CPU threads and SIMD."""
    return _fdlab.info()
