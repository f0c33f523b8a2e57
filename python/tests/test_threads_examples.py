"""Concurrent calls from Python threads, and the example scripts run to the end."""

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import fdlab
from fdlab import Stencil

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(os.path.dirname(HERE), "examples")


def test_threads_share_stencils():
    # One stencil object used from several threads at once (its per-rank build is cached
    # behind a once-cell); each thread checks its own result.
    lap = Stencil.laplacian(4, 0.5)
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((9 + i, 10, 11)) for i in range(8)]
    serial = [fdlab.apply(lap, a) for a in arrays]
    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(lambda a: fdlab.apply(lap, a), arrays))
    for s, t in zip(serial, threaded):
        np.testing.assert_allclose(t, s, rtol=1e-14, atol=1e-14)


def run_example(name, tmp_path):
    # Run from a scratch directory: plots land there, and `import fdlab` finds the installed
    # package rather than the source tree.
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, name)], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_derivative_example(tmp_path):
    out = run_example("derivative.py", tmp_path)
    errors = [float(line.split()[-1]) for line in out.splitlines() if "max error" in line]
    assert len(errors) == 3 and errors[2] < 1e-9


def test_walkthrough(tmp_path):
    out = run_example("walkthrough.py", tmp_path)
    assert "d/dx error" in out and "amplitude" in out
