//! fdlab-output's integration tests, one module per topic, in one test binary.
//! `cargo test -p fdlab-output --test output writers::` runs one module.

mod architecture;
mod writers;
