//! Run a case file like `fdlab run` (used by the tests that interrupt and kill a run).
//!
//! `cargo run -p fdlab-solvers --example solve -- CASE.toml [--checkpoint-every N] [--resume DIR]`

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match fdlab_solvers::cli::run_command(&args) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
