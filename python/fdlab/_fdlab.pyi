"""Type stubs for the compiled extension ``fdlab._fdlab``."""

from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

import numpy as np

__version__: str

_Axis = Union[int, str]

class Stencil:
    """A finite-difference stencil: a derivative, a Laplacian or custom weights.

    Axis 0 / ``"x"`` is the LAST NumPy axis; offsets and spacings are in (x, y, z) order.
    """

    @staticmethod
    def derivative(
        axis: _Axis, order: int = 1, accuracy: int = 2, spacing: float = 1.0
    ) -> "Stencil":
        """Central derivative of ``order`` along ``axis`` with ``accuracy``, over ``spacing``.

        ``axis`` 0 / ``"x"`` is the last NumPy axis, 1 / ``"y"`` the one before, 2 / ``"z"``
        the first axis of a 3-D array (not NumPy's axis numbering).
        """
    @staticmethod
    def laplacian(
        accuracy: int = 2, spacing: Union[None, float, Sequence[float]] = None
    ) -> "Stencil":
        """The Laplacian over every axis of the array; spacing: one number or (hx, hy, hz)."""
    @staticmethod
    def custom(
        offsets: Sequence[Union[int, Sequence[int]]], weights: Sequence[float]
    ) -> "Stencil":
        """``out[p] = sum(w * u[p + o])``; offsets are ints (x) or (x, y, z) tuples."""
    @property
    def kind(self) -> str:
        """``"derivative"``, ``"laplacian"`` or ``"custom"``."""
    def taps(self, ndim: int = 3) -> List[Tuple[Tuple[int, int, int], float]]:
        """The ``((x, y, z), weight)`` taps for arrays of ``ndim`` axes."""
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class Plan:
    """Stencils built and checked once for one NumPy shape, dtype and boundary."""

    def __init__(
        self,
        stencils: Sequence[Stencil],
        shape: Sequence[int],
        dtype: str = "float64",
        boundary: str = "periodic",
    ) -> None: ...
    def apply(
        self, u: np.ndarray, out: Optional[Sequence[np.ndarray]] = None
    ) -> List[np.ndarray]:
        """Applies the plan to ``u``; returns one output per stencil."""
    @property
    def shape(self) -> List[int]: ...
    @property
    def dtype(self) -> str: ...
    @property
    def boundary(self) -> str: ...

def apply_cpu(
    stencils: Sequence[Stencil],
    u: Any,
    out: Optional[Sequence[np.ndarray]] = None,
    boundary: str = "periodic",
) -> List[np.ndarray]:
    """CPU apply on NumPy arrays; ``fdlab.apply`` is the public entry point."""

def _time_apply_native(
    stencils: Sequence[Stencil],
    u: np.ndarray,
    out: Sequence[np.ndarray],
    boundary: str = "periodic",
    repeats: int = 200,
) -> Tuple[float, float]:
    """(median, min) seconds of the Rust call ``fdlab.apply`` makes, looped in Rust."""

def info() -> dict: ...

def apply_cuda(
    stencils: Sequence[Stencil],
    u: Any,
    out: Optional[Sequence[Any]] = None,
    boundary: str = "periodic",
    stream: int = 0,
    device: int = 0,
    alloc: Optional[Callable[[Any], Any]] = None,
) -> List[Any]:
    """GPU apply with no copy on arrays exposing ``__cuda_array_interface__``, queued on the
    raw CUDA ``stream`` handle of GPU ``device``; outputs are ``out`` or ``alloc(u)`` each.
    ``fdlab.apply`` is the public entry point (it finds the caller's stream and device)."""

def _time_apply_cuda_native(
    stencils: Sequence[Stencil],
    u: Any,
    out: Sequence[Any],
    boundary: str = "periodic",
    stream: int = 0,
    device: int = 0,
    repeats: int = 200,
) -> Tuple[float, float]:
    """(median, min) seconds of the Rust call a GPU ``fdlab.apply`` makes (queuing the kernel,
    host time), looped in Rust with the GIL released; the device is synchronized after."""

def _cuda_plan_info(
    stencils: Sequence[Stencil], u: Any, boundary: str = "periodic", device: int = 0
) -> Tuple[str, int]:
    """(strategy name, pointer alignment in bytes) of the cached GPU plan for such an apply."""

def wave_forward(
    v: np.ndarray,
    spacing: Sequence[float],
    dt: float,
    source_amplitudes: np.ndarray,
    source_locations: np.ndarray,
    receiver_locations: np.ndarray,
    accuracy: int,
    pml_width: int,
    pml_freq: float,
    pml_velocity: Optional[float] = None,
) -> np.ndarray:
    """Receiver traces ``[shot, receiver, time]`` (float64 C-contiguous inputs, NumPy axis
    order); ``fdlab.wave`` is the public entry point."""

def wave_vjp(
    v: np.ndarray,
    spacing: Sequence[float],
    dt: float,
    source_amplitudes: np.ndarray,
    source_locations: np.ndarray,
    receiver_locations: np.ndarray,
    accuracy: int,
    pml_width: int,
    pml_freq: float,
    pml_velocity: Optional[float] = None,
    grad_traces: Optional[np.ndarray] = None,
    observed: Optional[np.ndarray] = None,
    checkpoints: Optional[int] = None,
) -> Tuple[Optional[np.ndarray], Optional[float], np.ndarray, np.ndarray]:
    """``(traces, misfit, ∂J/∂v, ∂J/∂source_amplitudes)``: with ``grad_traces`` the
    vector-Jacobian product (traces and misfit ``None``), with ``observed`` the
    least-squares misfit and its gradient. ``fdlab.wave_vjp`` and ``fdlab.wave_gradient``
    are the public entry points."""
