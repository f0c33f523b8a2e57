"""A first derivative along x of sin(2πx) on a 3-D periodic grid, checked against 2π cos(2πx).

Run after ``pip install .``: ``python python/examples/derivative.py``.
"""

import numpy as np

import fdlab

nz, ny, nx = 16, 24, 64  # NumPy shape (nz, ny, nx): x is the last, fastest axis
h = 1.0 / nx
x = np.arange(nx) * h
u = np.empty((nz, ny, nx))
u[...] = np.sin(2 * np.pi * x)

for accuracy in (2, 4, 8):
    dx = fdlab.Stencil.derivative("x", order=1, accuracy=accuracy, spacing=h)
    du = fdlab.apply(dx, u, boundary="periodic")
    err = np.abs(du - 2 * np.pi * np.cos(2 * np.pi * x)).max()
    print(f"accuracy {accuracy}: max error {err:.3e}")

# Several stencils in one call: the gradient (x, y, z), one output each.
grad = [fdlab.Stencil.derivative(a, 1, 4, h) for a in "xyz"]
gx, gy, gz = fdlab.apply(grad, u)
print(f"|d/dy| max {np.abs(gy).max():.1e}, |d/dz| max {np.abs(gz).max():.1e} (u varies in x only)")
print(fdlab.info())
