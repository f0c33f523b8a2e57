"""``fdlab.wave`` on PyTorch tensors: a ``torch.autograd.Function`` whose backward is the
exact vector-Jacobian product of the Rust engine (``fdlab.wave_vjp``).

Imported only when ``fdlab.wave`` is given a tensor, so that PyTorch stays optional.
"""

import typing as _typing

import numpy as _np
import torch

from . import _fdlab
from ._wave import _args


def _numpy(x: _typing.Any, what: str) -> _typing.Any:
    """A CPU tensor as a float64 NumPy array (anything else is passed on as it is)."""
    if isinstance(x, torch.Tensor):
        if x.device.type != "cpu":
            raise TypeError(
                f"fdlab.wave runs on the CPU; {what} is on {x.device}: pass {what}.cpu()"
            )
        return x.detach().to(torch.float64).contiguous().numpy()
    return x


class WaveFunction(torch.autograd.Function):
    """Traces of :func:`fdlab.wave` with respect to ``v`` and ``source_amplitudes``."""

    @staticmethod
    def forward(ctx, v, source_amplitudes, spec):
        """``spec["args"]``: every argument checked and converted to NumPy (``v`` and
        ``source_amplitudes`` included: the tensors are passed for autograd to track)."""
        a = spec["args"]
        traces = a.call(_fdlab.wave_forward)
        ctx.args = a
        ctx.checkpoints = spec["checkpoints"]
        ctx.dtypes = (v.dtype, source_amplitudes.dtype)
        return torch.from_numpy(traces).to(v.dtype)

    @staticmethod
    def backward(ctx, grad_traces):
        g = grad_traces.detach().to(torch.float64).contiguous().numpy()
        _, _, gv, gw = ctx.args.call(
            _fdlab.wave_vjp, grad_traces=g, checkpoints=ctx.checkpoints
        )
        dv = torch.from_numpy(gv).to(ctx.dtypes[0]) if ctx.needs_input_grad[0] else None
        dw = torch.from_numpy(gw).to(ctx.dtypes[1]) if ctx.needs_input_grad[1] else None
        return dv, dw, None


def wave(
    v, spacing, dt, source_amplitudes, source_locations, receiver_locations, *,
    accuracy, pml_width, pml_freq, pml_velocity, checkpoints,
):
    """:func:`fdlab.wave` for tensors: ``v`` and ``source_amplitudes`` as tensors (a NumPy
    one is made a tensor), the rest as :func:`fdlab.wave` takes them."""
    if not isinstance(v, torch.Tensor):
        v = torch.as_tensor(_np.asarray(v, dtype=_np.float64))
    if not isinstance(source_amplitudes, torch.Tensor):
        source_amplitudes = torch.as_tensor(_np.asarray(source_amplitudes, dtype=_np.float64))
    if not (v.is_floating_point() and source_amplitudes.is_floating_point()):
        raise TypeError("v and source_amplitudes must be floating-point tensors")
    if checkpoints is not None and (isinstance(checkpoints, bool) or int(checkpoints) < 1):
        raise ValueError(f"checkpoints = {checkpoints}; give at least 1 (or None)")
    args = _args(
        _numpy(v, "v"), spacing, dt, _numpy(source_amplitudes, "source_amplitudes"),
        _numpy(source_locations, "source_locations"),
        _numpy(receiver_locations, "receiver_locations"),
        accuracy, pml_width, pml_freq, pml_velocity,
    )
    return WaveFunction.apply(v, source_amplitudes, {"args": args, "checkpoints": checkpoints})
