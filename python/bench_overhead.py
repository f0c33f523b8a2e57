"""Cost of a Python ``fdlab.apply`` over the same Rust call, at 64³ (a latency figure).

Run after ``pip install .``::

    python python/bench_overhead.py [--n 64] [--repeats 300] [--dtype float64]
    python python/bench_overhead.py --gpu cupy      # or --gpu torch: GPU arrays, no copy

The Rust side (``fdlab._fdlab._time_apply_native``) times the ``fdlab_cpu::fast::apply`` call
that ``fdlab.apply`` makes, on the same arrays, in a loop in Rust with the GIL released. The Python side times
``fdlab.apply(stencil, u, out=out)``, ``Plan.apply`` and ``fdlab.apply`` with ``out=None``
(which includes allocating the output), in interleaved rounds. The overhead is taken from the
minimum times (the fixed cost of a call is what remains when nothing else interferes: on a
shared machine medians at 64³ move by more than 10 µs between rounds); medians are printed too.
The target is at most 10 µs.

With ``--gpu cupy`` (or ``torch``) the arrays live on the GPU: the Rust side
(``_time_apply_cuda_native``) times ``Plan::apply_foreign``, the host time of checking the
pointers and queuing the kernel on the caller's stream, in a loop in Rust; the Python side times
``fdlab.apply(stencil, u, out=out)`` on the same arrays (reading ``__cuda_array_interface__``,
finding the current stream, the cached plan, the same Rust call). Both are host times of queuing
work, as for any CuPy call; the device is synchronized after each round.

On a loaded machine, ``RAYON_NUM_THREADS=1`` gives steadier 64³
figures (the overhead does not depend on the thread count).
"""

import argparse
import os
import statistics
import sys
import time

# python/fdlab next to this script is the source package without its compiled module: import
# the installed one.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != _here]

import numpy as np  # noqa: E402

import fdlab  # noqa: E402
from fdlab import _fdlab  # noqa: E402


def time_calls(fn, repeats):
    fn()  # warm-up: builds and caches the core stencil
    t = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    return statistics.median(t), min(t)


def gpu_main(args):
    lib = __import__(args.gpu)
    n, dt = args.n, np.dtype(args.dtype)
    shape = (n, n, n)
    host = np.random.default_rng(1).standard_normal(shape).astype(dt)
    if args.gpu == "cupy":
        u = lib.asarray(host)
        sync = lib.cuda.Device().synchronize
    else:
        u = lib.from_numpy(host).cuda()
        sync = lib.cuda.synchronize
    out = lib.empty_like(u)
    stream, device, _ = fdlab._gpu_context(u)
    cases = {
        "derivative x, 8th order": fdlab.Stencil.derivative("x", 1, 8, 1 / n),
        "laplacian, 2nd order": fdlab.Stencil.laplacian(2, 1 / n),
    }
    print(f"fdlab {fdlab.__version__}, {args.gpu} arrays on GPU {device}, {n}^3 {args.dtype}, "
          f"periodic; {args.rounds} rounds x {args.repeats} calls")
    print("host times in us, min / median; overhead = min(apply out=) - min(rust)")
    print(f"{'case':<26}{'strategy':>22}{'rust':>15}{'apply out=':>15}{'overhead':>10}")
    worst = 0.0
    for name, st in cases.items():
        strategy, _ = _fdlab._cuda_plan_info([st], u, "periodic", device)

        def py_apply():
            fdlab.apply(st, u, out=out)

        cols = [[], []]
        for _ in range(args.rounds):
            cols[0].append(_fdlab._time_apply_cuda_native(
                [st], u, [out], "periodic", stream, device, args.repeats))
            cols[1].append(time_calls(py_apply, args.repeats))
            sync()
        mins = [min(m for _, m in c) * 1e6 for c in cols]
        meds = [statistics.median(md for md, _ in c) * 1e6 for c in cols]
        over = mins[1] - mins[0]
        worst = max(worst, over)
        cells = "".join(f"{f'{a:.1f} / {b:.1f}':>15}" for a, b in zip(mins, meds))
        print(f"{name:<26}{strategy:>22}{cells}{over:>10.1f}")
    verdict = "meets" if worst <= 10.0 else "MISSES"
    print(f"worst overhead of fdlab.apply(out=...) over Rust: {worst:.1f} us ({verdict} <= 10 us)")
    if args.throughput:
        gpu_throughput(args, lib, cases, u, out, stream, device, sync)


def gpu_throughput(args, lib, cases, u, out, stream, device, sync):
    """Device time per apply (CUDA events around ``reps`` back-to-back calls) from Python and
    from Rust, as % of a device-to-device copy of the same array timed the same way: one input
    read and one output written, so the same bytes as the copy."""
    reps = 20
    if args.gpu == "cupy":
        def event():
            e = lib.cuda.Event()
            e.record()
            return e

        def elapsed(a, b):
            b.synchronize()
            return lib.cuda.get_elapsed_time(a, b) / 1e3

        def copy():
            lib.copyto(out, u)
    else:
        def event():
            e = lib.cuda.Event(enable_timing=True)
            e.record()
            return e

        def elapsed(a, b):
            b.synchronize()
            return a.elapsed_time(b) / 1e3

        def copy():
            out.copy_(u)

    def device_time(run):
        best = float("inf")
        for _ in range(args.rounds):
            sync()
            a = event()
            run()
            b = event()
            best = min(best, elapsed(a, b) / reps)
        return best

    def loop(fn):
        def run():
            for _ in range(reps):
                fn()
        return run

    t_copy = device_time(loop(copy))
    print(f"device time per call at {args.n}^3 (best of {args.rounds} rounds of {reps}); "
          f"copy {t_copy * 1e6:.1f} us")
    print(f"{'case':<26}{'rust % copy':>14}{'python % copy':>15}")
    for name, st in cases.items():
        # The Rust loop queues reps + 1 calls (one warm-up) on the same stream.
        def rust():
            _fdlab._time_apply_cuda_native([st], u, [out], "periodic", stream, device, reps - 1)

        t_rust = device_time(rust)
        t_py = device_time(loop(lambda: fdlab.apply(st, u, out=out)))
        print(f"{name:<26}{100 * t_copy / t_rust:>13.1f}%{100 * t_copy / t_py:>14.1f}%")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dtype", default="float64", choices=["float32", "float64"])
    ap.add_argument("--gpu", choices=["cupy", "torch"], default=None,
                    help="time GPU arrays of this library instead of NumPy arrays")
    ap.add_argument("--throughput", action="store_true",
                    help="with --gpu: also the device time per call as %% of a copy")
    args = ap.parse_args()
    if args.gpu:
        return gpu_main(args)

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
    print("times in us, min / median; overhead = min(apply out=) - min(rust)")
    print(f"{'case':<26}{'rust':>15}{'apply out=':>15}{'plan':>15}{'apply new':>15}"
          f"{'overhead':>10}")
    worst = 0.0
    for name, st in cases.items():
        plan = fdlab.Plan([st], shape, args.dtype, "periodic")
        cols = [[], [], [], []]  # (median, min) pairs per column
        for _ in range(args.rounds):  # interleaved, so that drift hits every column alike
            cols[0].append(_fdlab._time_apply_native([st], u, [out], "periodic", args.repeats))
            cols[1].append(time_calls(lambda: fdlab.apply(st, u, out=out), args.repeats))
            cols[2].append(time_calls(lambda: plan.apply(u, [out]), args.repeats))
            cols[3].append(time_calls(lambda: fdlab.apply(st, u), args.repeats))
        mins = [min(m for _, m in c) * 1e6 for c in cols]
        meds = [statistics.median(md for md, _ in c) * 1e6 for c in cols]
        over = mins[1] - mins[0]
        worst = max(worst, over)
        cells = "".join(f"{f'{a:.1f} / {b:.1f}':>15}" for a, b in zip(mins, meds))
        print(f"{name:<26}{cells}{over:>10.1f}")
    verdict = "meets" if worst <= 10.0 else "MISSES"
    print(f"worst overhead of fdlab.apply(out=...) over Rust: {worst:.1f} us ({verdict} <= 10 us)")


if __name__ == "__main__":
    main()
