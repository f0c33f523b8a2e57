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
GPU arrays (CuPy, PyTorch CUDA tensors) are recognised and refused with ``NotImplementedError``
until fdlab is built with its CUDA API.

Boundaries. ``"periodic"`` wraps, ``"neumann"`` mirrors about the end points, ``"dirichlet"``
computes interior points only: output points whose stencil would leave the array are left as
they were, so with ``out=None`` (fresh zeros) they are 0.

The computation releases the GIL and runs on all cores (rayon).
"""

from __future__ import annotations

import enum
from typing import Any, List, Optional, Sequence, Union

import numpy as np

from . import _fdlab
from ._fdlab import Plan, Stencil

__all__ = ["Stencil", "Boundary", "Plan", "apply", "info", "__version__"]
__version__: str = _fdlab.__version__

# DLPack device types that live on an NVIDIA GPU (kDLCUDA, kDLCUDAHost, kDLCUDAManaged).
_DLPACK_CUDA = {2, 3, 13}
_BACKENDS = ("auto", "cpu", "cuda")
_GPU_MISSING = (
    "GPU arrays need fdlab built with the CUDA API, which this build lacks "
    "(fdlab.info()['cuda'] is False); copy the array to the host (e.g. cupy.asnumpy(u) or "
    "u.cpu().numpy()) and use backend='cpu'"
)


class Boundary(str, enum.Enum):
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


def _is_gpu_array(u: Any) -> bool:
    """True when ``u`` lives on an NVIDIA GPU (CuPy, PyTorch CUDA, Numba, JAX ...)."""
    if isinstance(u, np.ndarray):
        return False
    if hasattr(u, "__cuda_array_interface__"):
        return True
    dev = getattr(u, "__dlpack_device__", None)
    if dev is not None:
        try:
            kind = int(dev()[0])
        except Exception:  # a broken protocol is not a GPU array
            return False
        return kind in _DLPACK_CUDA
    return False


def _select_backend(u: Any, backend: str) -> str:
    """The backend that runs ``u``: the one place that will route GPU arrays to CUDA."""
    if not isinstance(backend, str) or backend not in _BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; valid backends: auto, cpu, cuda")
    if _is_gpu_array(u):
        if backend == "cpu":
            raise TypeError(
                "backend='cpu' was asked for but the array lives on a GPU; copy it to the host "
                "first (e.g. cupy.asnumpy(u) or u.cpu().numpy())"
            )
        raise NotImplementedError(_GPU_MISSING)
    if backend == "cuda":
        raise NotImplementedError(
            "backend='cuda' needs fdlab built with the CUDA API and a GPU array; "
            "this build runs NumPy arrays on the CPU (backend='cpu' or 'auto')"
        )
    return "cpu"


def _convert(u: Any) -> np.ndarray:
    a = np.asarray(u)
    dtype = a.dtype if a.dtype in (np.float32, np.float64) else np.float64
    return np.ascontiguousarray(a, dtype=dtype)


def apply(
    stencils: Union[Stencil, Sequence[Stencil]],
    u: Any,
    out: Union[None, np.ndarray, Sequence[np.ndarray]] = None,
    boundary: Union[str, Boundary] = "periodic",
    backend: str = "auto",
    convert: bool = False,
) -> Union[np.ndarray, List[np.ndarray]]:
    """Applies one stencil or a list of stencils to ``u``.

    Args:
        stencils: a :class:`Stencil`, or a sequence of them (one output each).
        u: the input: a C-contiguous float32/float64 NumPy array with 1 to 3 axes.
        out: where to write: an array (one stencil) or a sequence of arrays of ``u``'s shape
            and dtype; ``None`` allocates zeros.
        boundary: ``"periodic"``, ``"dirichlet"`` (interior only; other points of ``out`` are
            left as they were) or ``"neumann"``, or a :class:`Boundary`.
        backend: ``"auto"``, ``"cpu"`` or ``"cuda"``.
        convert: copy ``u`` to a C-contiguous float array first when it is not one already
            (integers become float64), instead of raising ``TypeError``.

    Returns:
        The output array for one stencil, the list of outputs for a sequence.

    Raises:
        TypeError: wrong dtype, non-contiguous layout, not an array.
        ValueError: wrong number of axes, mismatched ``out`` shape, read-only ``out``,
            a stencil too wide for the array, an unknown boundary or backend.
        NotImplementedError: GPU arrays or ``backend="cuda"`` (a ``RuntimeError``).
        MemoryError: the outputs cannot be allocated.
    """
    _select_backend(u, backend)
    if convert:
        u = _convert(u)
    single = isinstance(stencils, Stencil)
    seq = [stencils] if single else list(stencils)
    if out is not None:
        if isinstance(out, np.ndarray) or not isinstance(out, (list, tuple)):
            out = [out]
        else:
            out = list(out)
    res = _fdlab.apply_cpu(seq, u, out, str(boundary))
    return res[0] if single else res


def info() -> dict:
    """What this build offers: version, backends, CUDA support, CPU threads and SIMD."""
    return _fdlab.info()
