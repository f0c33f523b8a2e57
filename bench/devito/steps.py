#!/usr/bin/env python3
"""Devito baseline for fdlab's CPU heat and wave steps.

Times Devito operators on an N^3 grid, in f32 and f64:

* heat: u.dt = kappa * laplace(u), 2nd order in space, forward Euler;
* wave: u.dt2 = v^2 * laplace(u), 8th order in space, 2nd order in time,
  v a Function;
* wave_damp: the same wave in the form of Devito's seismic examples,
  m * u.dt2 - laplace(u) + damp * u.dt = 0, with the examples' damping
  layer of 20 cells on every face.

The first apply of each operator compiles it and is excluded; the time per
step is the best of --repeats wall-clock runs of --steps steps.

Usage: python3 steps.py --size 320 --threads 16 --steps 50 --json out.json
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

CASES = ("heat", "wave", "wave_damp")
PRECISIONS = ("f32", "f64")
DAMP_CELLS = 20


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=320, help="cells per axis, N")
    p.add_argument("--threads", type=int, default=os.cpu_count(),
                   help="OMP_NUM_THREADS")
    p.add_argument("--steps", type=int, default=50, help="steps per timed run")
    p.add_argument("--repeats", type=int, default=3, help="timed runs; best kept")
    p.add_argument("--cases", default=",".join(CASES),
                   help="comma list of " + ",".join(CASES))
    p.add_argument("--precisions", default=",".join(PRECISIONS),
                   help="comma list of " + ",".join(PRECISIONS))
    p.add_argument("--arch", default=None,
                   help="DEVITO_ARCH (default: gcc, else clang, found on PATH)")
    p.add_argument("--json", default=None, help="write the results here")
    a = p.parse_args()
    a.cases = [c for c in a.cases.split(",") if c]
    a.precisions = [c for c in a.precisions.split(",") if c]
    for c in a.cases:
        if c not in CASES:
            p.error(f"unknown case {c!r}")
    for c in a.precisions:
        if c not in PRECISIONS:
            p.error(f"unknown precision {c!r}")
    if a.size <= 2 * DAMP_CELLS and "wave_damp" in a.cases:
        p.error(f"--size must exceed {2 * DAMP_CELLS} for wave_damp")
    return a


def fail(msg):
    print(f"steps.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


def pick_compiler(arch):
    """Returns (DEVITO_ARCH, compiler path); exits unless it builds OpenMP C."""
    names = [arch] if arch else ["gcc", "clang"]
    for name in names:
        cc = shutil.which(name)
        if cc is None:
            continue
        src = "#include <omp.h>\nint main(void){return omp_get_max_threads() > 0 ? 0 : 1;}\n"
        with tempfile.TemporaryDirectory() as d:
            c = os.path.join(d, "t.c")
            with open(c, "w") as f:
                f.write(src)
            r = subprocess.run([cc, "-fopenmp", c, "-o", os.path.join(d, "t")],
                               capture_output=True, text=True)
        if r.returncode == 0:
            return name, cc
        fail(f"{cc} cannot build an OpenMP program:\n{r.stderr.strip()}")
    fail(f"no C compiler found on PATH (tried {', '.join(names)}); Devito "
         "compiles its operators with one. Install gcc or pass --arch.")


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def compiler_version(cc):
    r = subprocess.run([cc, "--version"], capture_output=True, text=True)
    return r.stdout.splitlines()[0] if r.returncode == 0 and r.stdout else "unknown"


def warn_outside_pins(numpy_version, sympy_version):
    """Devito 4.8.23 pins numpy <= 2.4.3 and sympy < 1.15; --no-deps installs skip the check."""
    from packaging.version import Version
    if Version(numpy_version) > Version("2.4.3") or Version(sympy_version) >= Version("1.15"):
        print(f"steps.py: warning: numpy {numpy_version} / sympy {sympy_version} lie outside "
              "Devito 4.8.23's pins (numpy <= 2.4.3, sympy < 1.15)", file=sys.stderr)


def init_damp(damp, nbl, Eq, Inc, Operator, SubDimension, Abs, sin, np):
    """Devito's seismic examples' damping layer (examples/seismic/model.py,
    initialize_damp with abc_type="damp"): 0 inside, rising in nbl cells."""
    eqs = [Eq(damp, 0.0)]
    coeff = 1.5 * np.log(1.0 / 0.001) / nbl
    for d in damp.dimensions:
        dim_l = SubDimension.left(name=f"abc_{d.name}_l", parent=d, thickness=nbl)
        pos = Abs((nbl - (dim_l - d.symbolic_min) + 1) / float(nbl))
        val = coeff * (pos - sin(2 * np.pi * pos) / (2 * np.pi))
        eqs.append(Inc(damp.subs({d: dim_l}), val / d.spacing))
        dim_r = SubDimension.right(name=f"abc_{d.name}_r", parent=d, thickness=nbl)
        pos = Abs((nbl - (d.symbolic_max - dim_r) + 1) / float(nbl))
        val = coeff * (pos - sin(2 * np.pi * pos) / (2 * np.pi))
        eqs.append(Inc(damp.subs({d: dim_r}), val / d.spacing))
    Operator(eqs, name="initdamp")()


def build(case, dtype, n, dv, np):
    """Returns (operator, apply kwargs without time_M, fields to reset)."""
    h = 10.0  # grid spacing in m for the wave cases, in arbitrary units for heat
    extent = (h * (n - 1),) * 3
    grid = dv.Grid(shape=(n, n, n), extent=extent, dtype=dtype)
    x = np.linspace(-1.0, 1.0, n, dtype=dtype)
    r2 = x[:, None, None] ** 2 + x[None, :, None] ** 2 + x[None, None, :] ** 2
    bump = np.exp(-50.0 * r2).astype(dtype)
    if case == "heat":
        kappa = 1.0
        u = dv.TimeFunction(name="u", grid=grid, time_order=1, space_order=2)
        u.data[:] = bump
        eq = dv.Eq(u.forward, dv.solve(u.dt - kappa * u.laplace, u.forward))
        dt = 0.9 * h * h / (6.0 * kappa)
        return dv.Operator([eq], name="heat"), {"dt": dt}, (u, bump)
    vmin, vmax = 1.5, 3.0  # km/s = m/ms, linear in depth; h in m, dt in ms
    vel = np.broadcast_to(np.linspace(vmin, vmax, n, dtype=dtype)[None, None, :],
                          (n, n, n))
    dt = 0.4 * h / (vmax * np.sqrt(3.0))  # Courant number 0.4 / sqrt(3)
    u = dv.TimeFunction(name="u", grid=grid, time_order=2, space_order=8)
    u.data[:] = bump
    if case == "wave":
        v = dv.Function(name="v", grid=grid, space_order=8)
        v.data[:] = vel
        eq = dv.Eq(u.forward, dv.solve(u.dt2 - v * v * u.laplace, u.forward))
        return dv.Operator([eq], name="wave"), {"dt": dt}, (u, bump)
    m = dv.Function(name="m", grid=grid, space_order=8)
    m.data[:] = 1.0 / (vel * vel)  # squared slowness, as in the examples
    damp = dv.Function(name="damp", grid=grid, space_order=0)
    init_damp(damp, DAMP_CELLS, dv.Eq, dv.Inc, dv.Operator, dv.SubDimension,
              dv.Abs, dv.sin, np)
    pde = m * u.dt2 - u.laplace + damp * u.dt
    eq = dv.Eq(u.forward, dv.solve(pde, u.forward))
    return dv.Operator([eq], name="wave_damp"), {"dt": dt}, (u, bump)


def main():
    a = parse_args()
    arch, cc = pick_compiler(a.arch)
    os.environ["DEVITO_LANGUAGE"] = "openmp"
    os.environ["DEVITO_ARCH"] = arch
    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    os.environ["DEVITO_LOGGING"] = "WARNING"
    try:
        import numpy as np
        import devito as dv
    except ImportError as e:
        fail(f"{e}; install the wheels first (see bench/devito/README.md)")

    meta = {
        "cpu_model": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "compiler": compiler_version(cc),
        "devito_arch": arch,
        "devito_version": dv.__version__,
        "numpy_version": np.__version__,
        "sympy_version": __import__("sympy").__version__,
        "python": platform.python_version(),
        "threads": a.threads,
        "steps": a.steps,
        "repeats": a.repeats,
    }
    print(json.dumps(meta, indent=1), flush=True)
    warn_outside_pins(np.__version__, meta["sympy_version"])
    rows = []
    for prec in a.precisions:
        dtype = np.float32 if prec == "f32" else np.float64
        for case in a.cases:
            op, kw, (u, u0) = build(case, dtype, a.size, dv, np)
            t0 = time.perf_counter()
            op.apply(time_M=1, **kw)  # compiles; excluded
            compile_s = time.perf_counter() - t0
            best = float("inf")
            for _ in range(a.repeats):
                u.data[:] = u0
                t0 = time.perf_counter()
                op.apply(time_M=a.steps - 1, **kw)
                best = min(best, time.perf_counter() - t0)
            if not np.isfinite(u.data[0]).all():
                fail(f"{case} {prec}: the field is not finite after {a.steps} steps")
            ms = 1000.0 * best / a.steps
            row = {
                "case": case,
                "precision": prec,
                "n": a.size,
                "threads": a.threads,
                "ms_per_step": round(ms, 4),
                "cells_per_s": a.size ** 3 / (best / a.steps),
                "devito_version": dv.__version__,
                "first_apply_s": round(compile_s, 3),
                "cpu_model": meta["cpu_model"],
            }
            rows.append(row)
            print(f"{case:10s} {prec} n={a.size} threads={a.threads} "
                  f"{ms:9.3f} ms/step {row['cells_per_s'] / 1e9:7.3f} Gcell/s "
                  f"(first apply {compile_s:.1f} s)", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
            f.write("\n")
        print(f"wrote {a.json}")


if __name__ == "__main__":
    main()
