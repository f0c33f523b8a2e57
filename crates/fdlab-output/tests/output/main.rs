//! fdlab-output's integration tests, one module per topic, in one test binary. Unit tests of
//! private parts (tick placement, figure rows, the spill file's format) stay in their files.
//! `cargo test -p fdlab-output --test output npy::` runs one module.

mod architecture;
mod atomic;
mod field_writer;
mod npy;
mod pictures;
mod writers;
