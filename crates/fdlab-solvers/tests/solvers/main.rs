//! fdlab-solvers' integration tests, one module per topic, in one test binary (a file per
//! topic under `tests/` would be a binary of its own, each compiled and linked against the
//! whole dependency graph).
//! `cargo test -p fdlab-solvers --test solvers fdtd_cpml::` runs one module.

mod common;

mod analytic;
mod case_fuzz;
mod cases;
mod descriptions;
mod fdtd;
mod fdtd_cases;
mod fdtd_cpml;
mod fdtd_description;
mod fdtd_dft;
mod fdtd_drude;
mod fdtd_lorentz_debye;
mod fdtd_plane_wave;
mod fdtd_shapes;
mod gpu_kernels;
mod hicks_points;
mod outputs;
mod shots;
mod validation;
mod wave_density;
mod wave_paths;
