"""Full-waveform inversion of a 2-D model with a circular anomaly, with fdlab.wave's exact
gradients.

The true model is a velocity increasing with depth plus a circular anomaly; the initial model
is the same smooth background without it. Four shots (a Ricker source at the middle of each
side) are recorded by receivers along the four sides; the velocity is recovered from these
synthetic data by L-BFGS: ``torch.optim.LBFGS`` (strong Wolfe line search) on a tensor
through ``fdlab.wave``'s autograd when PyTorch is installed, else the small NumPy L-BFGS below
on ``fdlab.wave_gradient`` (same misfit, same gradient). It prints the misfit per iteration,
checks convergence (misfit down at least 100×, the anomaly's mean velocity change recovered
within 10 % in its disk) and writes ``fwi.png``: true, initial and recovered models.

    python fwi.py            # 60 × 80 cells, CPML of 20
    python fwi.py --ci       # 30 × 40 cells, CPML of 10: about a minute on two cores
    python fwi.py --numpy    # the NumPy optimizer even where PyTorch is installed
"""

import argparse
import struct
import sys
import time
import zlib

import numpy as np

import fdlab


def ricker(f0, dt, nt):
    """A Ricker wavelet of peak frequency ``f0`` at ``n·dt``, its peak at ``1.2 / f0``."""
    a = (np.pi * f0 * (np.arange(nt) * dt - 1.2 / f0)) ** 2
    return (1 - 2 * a) * np.exp(-a)


class Survey:
    """Grid, models, wavelet and acquisition of the example."""

    def __init__(self, ci, f0=None, nt=None, radius=None, contrast=200.0, margin=3):
        self.ny, self.nx = (30, 40) if ci else (60, 80)
        self.pml = 10 if ci else 20
        self.h = 10.0  # m
        self.dt = 0.002  # s
        self.f0 = f0 or (15.0 if ci else 12.0)  # Hz
        self.nt = nt or (200 if ci else 340)
        self.accuracy = 4
        y, x = np.meshgrid(np.arange(self.ny), np.arange(self.nx), indexing="ij")
        self.initial = 2000.0 + 400.0 * y / (self.ny - 1)  # m/s, smooth in depth
        cy, cx, r = (self.ny - 1) / 2, (self.nx - 1) / 2, radius or self.ny / 4
        self.disk = (y - cy) ** 2 + (x - cx) ** 2 <= r**2
        self.true = self.initial + contrast * self.disk
        # The velocity is updated only `margin` cells or more inside the sides, away from
        # the sources and receivers, where the gradient is largest and the model is known.
        self.mask = np.zeros((self.ny, self.nx))
        self.mask[margin:-margin, margin:-margin] = 1.0
        ny, nx = self.ny, self.nx
        # One shot per side, at its middle; receivers every second cell along the sides.
        sources = [(1, nx // 2), (ny - 2, nx // 2), (ny // 2, 1), (ny // 2, nx - 2)]
        ring = [(0, j) for j in range(0, nx, 2)] + [(ny - 1, j) for j in range(0, nx, 2)]
        ring += [(i, 0) for i in range(2, ny - 2, 2)] + [(i, nx - 1) for i in range(2, ny - 2, 2)]
        self.src = np.array([[s] for s in sources], dtype=float)
        self.rec = np.array([ring] * len(sources), dtype=float)
        self.amp = np.tile(ricker(self.f0, self.dt, self.nt), (len(sources), 1, 1))
        self.kw = dict(accuracy=self.accuracy, pml_width=self.pml, pml_freq=self.f0,
                       pml_velocity=float(self.true.max()))

    def velocity(self, x):
        """The velocity of the unknown ``x`` (NumPy or a tensor): ``initial + 1000·mask·x``."""
        if isinstance(x, np.ndarray):
            return self.initial + 1000.0 * self.mask * x
        import torch

        return torch.from_numpy(self.initial) + 1000.0 * torch.from_numpy(self.mask) * x

    def model(self, v):
        return fdlab.wave(v, self.h, self.dt, self.amp, self.src, self.rec, **self.kw)

    def misfit_and_gradient(self, v, observed):
        g = fdlab.wave_gradient(v, self.h, self.dt, self.amp, self.src, self.rec, observed,
                                **self.kw)
        return g.misfit, g.grad_v


def lbfgs_numpy(f, x, iterations, memory=8, report=print):
    """Minimises ``f(x) -> (value, gradient)`` by L-BFGS: the two-loop recursion, a first
    step that moves ``x`` by at most 0.01, backtracking (halving) until
    the Armijo condition ``f(x + a·d) ≤ f(x) + 10⁻⁴ a <g, d>`` holds."""
    fx, g = f(x)
    report(0, fx)
    s_hist, y_hist = [], []
    for it in range(1, iterations + 1):
        q = g.copy()
        alphas = []
        for s, y in reversed(list(zip(s_hist, y_hist))):
            a = np.vdot(s, q) / np.vdot(y, s)
            alphas.append(a)
            q -= a * y
        if s_hist:
            s, y = s_hist[-1], y_hist[-1]
            q *= np.vdot(s, y) / np.vdot(y, y)
        else:
            q *= 0.01 / np.abs(q).max()
        for (s, y), a in zip(zip(s_hist, y_hist), reversed(alphas)):
            q += s * (a - np.vdot(y, q) / np.vdot(y, s))
        d = -q
        slope = np.vdot(g, d)
        step = 1.0
        for _ in range(20):
            fn, gn = f(x + step * d)
            if fn <= fx + 1e-4 * step * slope:
                break
            step *= 0.5
        else:
            report(it, fx)
            break
        s_hist.append(step * d)
        y_hist.append(gn - g)
        s_hist, y_hist = s_hist[-memory:], y_hist[-memory:]
        x, fx, g = x + step * d, fn, gn
        report(it, fx)
    return x


# The unknown is the velocity change in km/s where the mask is one, `v = initial + 1000 x`,
# and the misfit is divided by its initial value: values of order one for the optimizers'
# first step, curvature and tolerances.


def invert_numpy(survey, observed, iterations, report):
    j0 = 0.5 * float(np.sum((survey.model(survey.initial) - observed) ** 2))

    def f(x):
        j, g = survey.misfit_and_gradient(survey.velocity(x), observed)
        return j / j0, g * 1000.0 * survey.mask / j0

    x = lbfgs_numpy(f, np.zeros_like(survey.initial), iterations,
                    report=lambda it, j: report(it, j * j0))
    return survey.velocity(x)


def invert_torch(survey, observed, iterations, report):
    import torch

    x = torch.zeros(survey.initial.shape, dtype=torch.float64, requires_grad=True)
    obs = torch.from_numpy(observed)
    j0 = 0.5 * float(np.sum((survey.model(survey.initial) - observed) ** 2))
    # No stopping on small gradients or changes: the misfit is scaled to start at 1, and
    # the loop runs its iterations as the NumPy one does.
    opt = torch.optim.LBFGS([x], lr=1.0, max_iter=1, history_size=8, tolerance_grad=0.0,
                            tolerance_change=0.0, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        d = survey.model(survey.velocity(x))
        loss = 0.5 * ((d - obs) ** 2).sum() / j0
        loss.backward()
        return loss

    report(0, j0)
    for it in range(1, iterations + 1):
        opt.step(closure)
        v = survey.velocity(x.detach().numpy())
        report(it, 0.5 * float(np.sum((survey.model(v) - observed) ** 2)))
    return survey.velocity(x.detach().numpy())


def write_png(path, panels, titles_unused=None, scale=4):
    """Writes the panels side by side as an RGB PNG (a blue-to-yellow ramp over their common
    range, ``scale`` pixels per cell, two white pixels between panels), with no library."""
    lo = min(p.min() for p in panels)
    hi = max(p.max() for p in panels)
    gap = np.ones((panels[0].shape[0] * scale, 2 * scale, 3))
    tiles = []
    for p in panels:
        t = np.kron((p - lo) / (hi - lo + 1e-30), np.ones((scale, scale)))
        rgb = np.stack([0.2 + 0.8 * t, 0.1 + 0.8 * t, 0.6 * (1 - t) + 0.1], axis=-1)
        tiles += [rgb, gap]
    img = (np.clip(np.concatenate(tiles[:-1], axis=1), 0, 1) * 255).astype(np.uint8)
    raw = b"".join(b"\x00" + row.tobytes() for row in img)

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", img.shape[1], img.shape[0], 8, 2, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ci", action="store_true", help="the small model the tests run")
    ap.add_argument("--numpy", action="store_true", help="the NumPy L-BFGS even with torch")
    ap.add_argument("--iterations", type=int, default=None)
    ap.add_argument("--png", default="fwi.png")
    args = ap.parse_args()
    survey = Survey(args.ci)
    iterations = args.iterations or (15 if args.ci else 30)
    try:
        if args.numpy:
            raise ImportError
        import torch  # noqa: F401

        backend = "torch.optim.LBFGS"
    except ImportError:
        backend = "NumPy L-BFGS"
    print(f"model {survey.ny} x {survey.nx} cells + CPML {survey.pml}, {len(survey.src)} shots, "
          f"{survey.rec.shape[1]} receivers, {survey.nt} steps; optimizer: {backend}")
    observed = survey.model(survey.true)
    misfits = []
    start = time.time()

    def report(it, j):
        misfits.append(j)
        print(f"iteration {it:3d}  misfit {j:.6e}  ({time.time() - start:.1f} s)", flush=True)

    invert = invert_torch if backend.startswith("torch") else invert_numpy
    recovered = invert(survey, observed, iterations, report)
    reduction = misfits[0] / misfits[-1]
    change_true = (survey.true - survey.initial)[survey.disk].mean()
    change_found = (recovered - survey.initial)[survey.disk].mean()
    anomaly_error = abs(change_found - change_true) / change_true
    print(f"misfit reduction {reduction:.1f}x")
    print(f"anomaly: mean change {change_found:.1f} m/s of {change_true:.1f} m/s "
          f"(error {100 * anomaly_error:.1f} %)")
    write_png(args.png, [survey.true, survey.initial, recovered])
    print(f"wrote {args.png}: true, initial and recovered velocity")
    ok = reduction >= 100 and anomaly_error <= 0.10
    print("converged" if ok else "NOT converged")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
