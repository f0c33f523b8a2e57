//! fdlab-cuda's integration tests, one module per topic, in one test binary (a file per topic
//! under `tests/` would be a binary of its own, each linked against the whole dependency graph).
//! `cargo test -p fdlab-cuda --test cuda strategy_names::` runs one module.

mod codegen_nvrtc;
mod kernels_unchanged;
mod step_codegen;
mod strategy_names;
