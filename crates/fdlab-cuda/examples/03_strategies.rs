//! Prints the strategy table (`fdlab strategies`), or checks the names given.
//!
//! `cargo run -p fdlab-cuda --example 03_strategies -- smarch-64x4-r2-c64-p4-lx`

use fdlab_cuda::{strategies_help, Strategy};

fn main() {
    let names: Vec<String> = std::env::args().skip(1).collect();
    if names.is_empty() {
        print!("{}", strategies_help());
    }
    for name in names {
        match name.parse::<Strategy>() {
            Ok(s) => println!("{name}: {s:?}"),
            Err(e) => println!("{e}"),
        }
    }
}
