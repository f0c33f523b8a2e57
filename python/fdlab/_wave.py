"""Seismic modelling: receiver traces of the acoustic wave equation and their gradients.

``wave`` runs the constant-density acoustic equation ``p_tt = v² ∇²p`` (leapfrog, central
differences of ``accuracy``, a CPML of ``pml_width`` cells outside the model) for a batch of
shots and returns the traces at the receivers. ``wave_vjp`` and ``wave_gradient`` give the
exact derivative of the discrete run (the transpose of the very steps the forward run takes,
``fdlab-gradient``), with respect to the velocity and the source amplitudes. With PyTorch
tensors, ``wave`` is a ``torch.autograd.Function`` whose backward is ``wave_vjp``.
"""

import typing as _typing

import numpy as _np

from . import _fdlab


class WaveGradient(_typing.NamedTuple):
    """What :func:`wave_gradient` returns."""

    misfit: float
    """``J = ½ Σ (traces − observed)²`` over shots, receivers and samples."""
    grad_v: _np.ndarray
    """``∂J/∂v``, the shape of ``v``."""
    grad_source_amplitudes: _np.ndarray
    """``∂J/∂source_amplitudes``, ``[shot, source, time]``."""
    traces: _np.ndarray
    """The modelled traces, ``[shot, receiver, time]``."""


def _is_torch(x: _typing.Any) -> bool:
    return type(x).__module__.partition(".")[0] == "torch"


def _f64(x: _typing.Any, what: str) -> _np.ndarray:
    try:
        a = _np.asarray(x, dtype=_np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what} must be an array of numbers: {e}") from None
    return _np.ascontiguousarray(a)


def _spacing(spacing: _typing.Any, ndim: int) -> _typing.List[float]:
    """One spacing per axis of ``v``, in NumPy axis order."""
    s = _np.atleast_1d(_np.asarray(spacing, dtype=_np.float64))
    if s.ndim != 1 or len(s) not in (1, ndim):
        raise ValueError(
            f"spacing {spacing!r}: give one number, or one per axis of v ({ndim}) in v's axis "
            "order"
        )
    return [float(h) for h in (s if len(s) == ndim else _np.repeat(s, ndim))]


def dominant_frequency(source_amplitudes: _typing.Any, dt: float) -> float:
    """The frequency of the largest amplitude of ``Σ |FFT(w)|`` over every shot and source
    (zero frequency left out): the default ``pml_freq`` of :func:`wave`. ``1 / (nt·dt)``
    when the amplitudes are all zero."""
    a = _f64(source_amplitudes, "source_amplitudes")
    nt = a.shape[-1] if a.ndim else 1
    if not (_np.isfinite(dt) and dt > 0):
        raise ValueError(f"dt = {dt}; give a positive time step")
    spectrum = _np.abs(_np.fft.rfft(a.reshape(-1, nt), axis=-1)).sum(axis=0)
    if len(spectrum) < 2 or not _np.any(spectrum[1:] > 0):
        return 1.0 / (nt * dt)
    k = 1 + int(_np.argmax(spectrum[1:]))
    return k / (nt * dt)


class _Args(_typing.NamedTuple):
    """The checked, converted arguments of one call (NumPy, float64)."""

    v: _np.ndarray
    spacing: _typing.List[float]
    dt: float
    amplitudes: _np.ndarray
    source_locations: _np.ndarray
    receiver_locations: _np.ndarray
    accuracy: int
    pml_width: int
    pml_freq: float
    pml_velocity: _typing.Optional[float]

    def call(self, fn, **extra):
        return fn(
            self.v,
            self.spacing,
            self.dt,
            self.amplitudes,
            self.source_locations,
            self.receiver_locations,
            self.accuracy,
            self.pml_width,
            self.pml_freq,
            self.pml_velocity,
            **extra,
        )


def _args(
    v, spacing, dt, source_amplitudes, source_locations, receiver_locations,
    accuracy, pml_width, pml_freq, pml_velocity,
) -> _Args:
    v = _f64(v, "v")
    amplitudes = _f64(source_amplitudes, "source_amplitudes")
    if isinstance(accuracy, bool) or not isinstance(accuracy, (int, _np.integer)):
        raise TypeError(f"accuracy must be an int (2, 4, 6 or 8), not {accuracy!r}")
    if isinstance(pml_width, bool) or not isinstance(pml_width, (int, _np.integer)):
        raise TypeError(f"pml_width must be an int, not {pml_width!r}")
    if pml_width < 0:
        raise ValueError(f"pml_width = {pml_width}; give 0 (reflecting walls) or more cells")
    dt = float(dt)
    if pml_freq is None:
        pml_freq = dominant_frequency(amplitudes, dt) if amplitudes.ndim == 3 else 1.0
    return _Args(
        v,
        _spacing(spacing, v.ndim),
        dt,
        amplitudes,
        _f64(source_locations, "source_locations"),
        _f64(receiver_locations, "receiver_locations"),
        int(accuracy),
        int(pml_width),
        float(pml_freq),
        None if pml_velocity is None else float(pml_velocity),
    )


def wave(
    v: _typing.Any,
    spacing: _typing.Any,
    dt: float,
    source_amplitudes: _typing.Any,
    source_locations: _typing.Any,
    receiver_locations: _typing.Any,
    *,
    accuracy: int = 8,
    pml_width: int = 20,
    pml_freq: _typing.Optional[float] = None,
    pml_velocity: _typing.Optional[float] = None,
    checkpoints: _typing.Optional[int] = None,
) -> _typing.Any:
    """Receiver traces of the acoustic wave equation ``p_tt = v² ∇²p``, shots in parallel.

    Unlike :class:`Stencil`'s (x, y, z) axes, every argument here follows ``v``'s NumPy axis
    order (as Deepwave's): ``v[i0, i1]`` is at location ``(i0, i1)``.

    Args:
        v: velocity, ``[ny, nx]`` or ``[nz, ny, nx]``: the model without absorbing layers.
        spacing: grid spacing, one number or one per axis of ``v`` (same order).
        dt: time step; above the stability limit of ``accuracy`` for ``max(v)`` it is
            refused, saying the limit.
        source_amplitudes: ``[shot, source, time]``; sample ``n`` is added at step ``n`` as
            ``p += dt² w / ΔV`` (``ΔV`` the cell area or volume). ``time`` sets the number of
            steps.
        source_locations: ``[shot, source, ndim]`` in cells from index 0 of ``v``; fractional
            positions are spread over the grid points around them (Hicks' Kaiser-windowed
            sinc, 8 points per axis), integer ones hit their grid point.
        receiver_locations: ``[shot, receiver, ndim]``, as the sources; a receiver between
            grid points records the interpolated pressure.
        accuracy: spatial order, 2, 4, 6 or 8.
        pml_width: CPML cells added outside ``v`` on every side, their velocity copied from
            the nearest edge cell of ``v``; 0 gives reflecting walls (``p = 0`` outside).
        pml_freq: the CPML's frequency (its shift ``α = π·pml_freq``); default
            :func:`dominant_frequency` of the source amplitudes.
        pml_velocity: the velocity the CPML's damping is tuned for; default ``max(v)``. The
            damping depends on it and is held fixed when differentiating: give it to make the
            traces a smooth function of ``v`` (Taylor tests).
        checkpoints: used by the PyTorch backward only (see :func:`wave_vjp`).

    Returns:
        ``[shot, receiver, time]``: sample ``n`` is the pressure after step ``n`` (time
        ``(n + 1)·dt``). NumPy float64 for NumPy (or list) inputs. When ``v`` or
        ``source_amplitudes`` is a PyTorch tensor, a tensor of ``v``'s dtype, differentiable
        with respect to both (``torch.autograd``; CPU tensors only, computed in float64).

    Raises:
        ValueError: shapes that do not match the layouts above, non-finite values, a
            non-positive velocity or spacing, ``dt`` above the stability limit, a location
            outside ``v``, an accuracy other than 2/4/6/8.
        TypeError: arguments that are not arrays of numbers, a CUDA tensor.
        RuntimeError: a run that does not stay finite.
    """
    if _is_torch(v) or _is_torch(source_amplitudes):
        from . import _torch

        return _torch.wave(
            v, spacing, dt, source_amplitudes, source_locations, receiver_locations,
            accuracy=accuracy, pml_width=pml_width, pml_freq=pml_freq,
            pml_velocity=pml_velocity, checkpoints=checkpoints,
        )
    a = _args(
        v, spacing, dt, source_amplitudes, source_locations, receiver_locations,
        accuracy, pml_width, pml_freq, pml_velocity,
    )
    return a.call(_fdlab.wave_forward)


def wave_vjp(
    v: _typing.Any,
    spacing: _typing.Any,
    dt: float,
    source_amplitudes: _typing.Any,
    source_locations: _typing.Any,
    receiver_locations: _typing.Any,
    grad_traces: _typing.Any,
    *,
    accuracy: int = 8,
    pml_width: int = 20,
    pml_freq: _typing.Optional[float] = None,
    pml_velocity: _typing.Optional[float] = None,
    checkpoints: _typing.Optional[int] = None,
) -> _typing.Tuple[_np.ndarray, _np.ndarray]:
    """The vector-Jacobian product of :func:`wave`: ``(∂J/∂v, ∂J/∂source_amplitudes)`` for
    ``J = Σ grad_traces · traces``, i.e. the transposed Jacobian applied to ``grad_traces``
    (``[shot, receiver, time]``). Exact for the discrete run, to rounding.

    The arguments are :func:`wave`'s. ``checkpoints``: states each shot's reverse sweep keeps
    (Revolve; fewer cost recomputed steps, ``steps − 1`` recompute none); default: every
    state when they fit in 1 GB per shot, else the most that fit. The CPML's damping
    (``pml_velocity``, default ``max(v)``) and ``pml_freq`` are held fixed. NumPy only.
    """
    a = _args(
        v, spacing, dt, source_amplitudes, source_locations, receiver_locations,
        accuracy, pml_width, pml_freq, pml_velocity,
    )
    _check_checkpoints(checkpoints)
    _, _, gv, gw = a.call(
        _fdlab.wave_vjp, grad_traces=_f64(grad_traces, "grad_traces"), checkpoints=checkpoints
    )
    return gv, gw


def wave_gradient(
    v: _typing.Any,
    spacing: _typing.Any,
    dt: float,
    source_amplitudes: _typing.Any,
    source_locations: _typing.Any,
    receiver_locations: _typing.Any,
    observed: _typing.Any,
    *,
    accuracy: int = 8,
    pml_width: int = 20,
    pml_freq: _typing.Optional[float] = None,
    pml_velocity: _typing.Optional[float] = None,
    checkpoints: _typing.Optional[int] = None,
) -> WaveGradient:
    """The least-squares misfit ``J = ½ Σ (traces − observed)²`` of :func:`wave` against
    ``observed`` (``[shot, receiver, time]``) and its gradients, in one forward run and one
    reverse sweep per shot. Arguments as :func:`wave_vjp`. NumPy only.
    """
    a = _args(
        v, spacing, dt, source_amplitudes, source_locations, receiver_locations,
        accuracy, pml_width, pml_freq, pml_velocity,
    )
    _check_checkpoints(checkpoints)
    traces, misfit, gv, gw = a.call(
        _fdlab.wave_vjp, observed=_f64(observed, "observed"), checkpoints=checkpoints
    )
    return WaveGradient(misfit, gv, gw, traces)


def _check_checkpoints(checkpoints: _typing.Any) -> None:
    if checkpoints is None:
        return
    if isinstance(checkpoints, bool) or not isinstance(checkpoints, (int, _np.integer)):
        raise TypeError(f"checkpoints must be an int or None, not {checkpoints!r}")
    if checkpoints < 1:
        raise ValueError(f"checkpoints = {checkpoints}; give at least 1 (or None)")
