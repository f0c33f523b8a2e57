# %% [markdown]
# # fdlab from Python: a walkthrough
#
# Cells in the `# %%` format (VS Code, Jupytext, Spyder). Run the whole file with
# `python python/examples/walkthrough.py` after `pip install .`; plotting needs matplotlib and is
# skipped without it.

# %%
import numpy as np

import fdlab

print(fdlab.info())

# %% [markdown]
# ## Axes
# fdlab fields are x-fastest: a NumPy array of shape `(ny, nx)` is a grid `[nx, ny]`, and axis
# `"x"` (or `0`) is the **last** NumPy axis.

# %%
ny, nx = 48, 96
hx, hy = 2 * np.pi / nx, 2 * np.pi / ny
x = np.arange(nx) * hx
y = np.arange(ny) * hy
X, Y = np.meshgrid(x, y)  # shape (ny, nx)
u = np.sin(X) * np.cos(2 * Y)

dudx = fdlab.apply(fdlab.Stencil.derivative("x", 1, 8, hx), u)
dudy = fdlab.apply(fdlab.Stencil.derivative("y", 1, 8, hy), u)
print("d/dx error", np.abs(dudx - np.cos(X) * np.cos(2 * Y)).max())
print("d/dy error", np.abs(dudy + 2 * np.sin(X) * np.sin(2 * Y)).max())

# %% [markdown]
# ## A heat run
# `u_t = κ Δu` on the periodic square, explicit Euler with the 4th-order Laplacian. A Fourier
# mode `sin(x) cos(2y)` decays as `exp(-5 κ t)`; a `Plan` checks shapes once and `out=` reuses
# the buffer, so each step is one Rust call with the GIL released. The error printed is mostly
# explicit Euler's time error, O(dt); the 4th-order Laplacian's is far smaller.

# %%
kappa = 0.1
lap = fdlab.Stencil.laplacian(accuracy=4, spacing=(hx, hy))
plan = fdlab.Plan([lap], u.shape, "float64", "periodic")
dt = 0.2 * min(hx, hy) ** 2 / kappa
steps = 400
v = u.copy()
lv = np.empty_like(v)
for _ in range(steps):
    plan.apply(v, [lv])
    v += dt * kappa * lv
t = steps * dt
exact = np.exp(-5 * kappa * t) * u
print(f"t = {t:.3f}: amplitude {np.abs(v).max():.5f}, exact {np.exp(-5 * kappa * t):.5f}, "
      f"max error {np.abs(v - exact).max():.2e}")

# %% [markdown]
# ## Boundaries
# `dirichlet` computes interior points only and leaves the others as they were; `neumann`
# mirrors about the end points.

# %%
w = np.linspace(0, 1, 11) ** 2
d2 = fdlab.Stencil.derivative("x", 2, 2, 0.1)
print("dirichlet:", fdlab.apply(d2, w, boundary="dirichlet").round(6))
print("neumann:  ", fdlab.apply(d2, w, boundary="neumann").round(6))

# %% [markdown]
# ## A plot

# %%
try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
    print("matplotlib is not installed: skipping the plot")

if plt is not None:
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.5), constrained_layout=True)
    for ax, field, title in zip(axes, (u, dudx, v), ("u", "du/dx", f"heat, t = {t:.2f}")):
        im = ax.imshow(field, origin="lower", extent=(0, 2 * np.pi, 0, 2 * np.pi))
        ax.set_title(title)
        fig.colorbar(im, ax=ax)
    fig.savefig("fdlab_walkthrough.png", dpi=100)
    print("wrote fdlab_walkthrough.png")
