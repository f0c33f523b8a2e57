"""Cost of a Python ``fdlab.apply`` over the same Rust call, at 64³ (a latency figure).

Run after ``pip install .``::

    python python/bench_overhead.py [--n 64] [--repeats 300] [--dtype float64]

The Rust side (``fdlab._fdlab._time_apply_native``) times ``fdlab_cpu::fast::apply`` with the
stencils ``fdlab.apply`` passes, on Rust-owned fields of the same shape. The Python side times
``fdlab.apply(stencil, u, out=out)``, ``Plan.apply`` and ``fdlab.apply`` with ``out=None``
(which includes allocating the output). Medians of interleaved rounds; the target is a median
overhead of at most 10 µs.
"""

import argparse
import statistics
import time

import numpy as np

import fdlab
from fdlab import _fdlab


def time_calls(fn, repeats):
    fn()  # warm-up: builds and caches the core stencil
    t = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return statistics.median(t), min(t)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dtype", default="float64", choices=["float32", "float64"])
    args = ap.parse_args()

    n, dt = args.n, np.dtype(args.dtype)
    shape = (n, n, n)
    u = np.random.default_rng(1).standard_normal(shape).astype(dt)
    out = np.empty_like(u)
    cases = {
        "derivative x, 8th order": fdlab.Stencil.derivative("x", 1, 8, 1 / n),
        "laplacian, 2nd order": fdlab.Stencil.laplacian(2, 1 / n),
    }
    print(f"fdlab {fdlab.__version__}, {fdlab.info()['cpu_threads']} threads, "
          f"{n}^3 {args.dtype}, periodic; medians of {args.rounds} rounds x {args.repeats} calls")
    print(f"{'case':<26}{'rust (us)':>11}{'apply out= (us)':>17}{'plan (us)':>11}"
          f"{'apply new (us)':>16}{'overhead (us)':>15}")
    worst = 0.0
    for name, st in cases.items():
        plan = fdlab.Plan([st], shape, args.dtype, "periodic")
        rust, py_out, py_plan, py_new = [], [], [], []
        for _ in range(args.rounds):  # interleaved, so that drift hits every column alike
            rust.append(_fdlab._time_apply_native([st], list(shape), args.dtype, "periodic",
                                                  args.repeats)[0])
            py_out.append(time_calls(lambda: fdlab.apply(st, u, out=out), args.repeats)[0])
            py_plan.append(time_calls(lambda: plan.apply(u, [out]), args.repeats)[0])
            py_new.append(time_calls(lambda: fdlab.apply(st, u), args.repeats)[0])
        r, a, p, w = (statistics.median(x) * 1e6 for x in (rust, py_out, py_plan, py_new))
        worst = max(worst, a - r)
        print(f"{name:<26}{r:>11.1f}{a:>17.1f}{p:>11.1f}{w:>16.1f}{a - r:>15.1f}")
    verdict = "meets" if worst <= 10.0 else "MISSES"
    print(f"worst overhead of fdlab.apply(out=...) over Rust: {worst:.1f} us ({verdict} <= 10 us)")


if __name__ == "__main__":
    main()
