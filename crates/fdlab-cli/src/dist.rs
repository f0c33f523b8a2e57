//! `fdlab run` under an MPI launcher (feature `mpi`): the grid split over the job's processes,
//! rank 0 writing the outputs. Any failure on any rank ends the whole job (`MPI_Abort`), so
//! that no rank is left waiting for one that stopped.

use fdlab_dist::mpi::{abort, abort_on_panic, initialize, MpiTransport};
use fdlab_dist::Transport;
use fdlab_solvers::cli::{check_line, parse_args, RunArgs};
use fdlab_solvers::Case;

/// The option that gives the process grid, e.g. `--process-grid 2x2` (chosen when absent).
const GRID_OPTION: &str = "--process-grid";

/// Run `fdlab run ARGS` as one rank of an MPI job; never returns.
pub fn run_case(args: &[String]) -> ! {
    let Some(universe) = initialize() else {
        eprintln!("error: MPI was started twice");
        std::process::exit(1);
    };
    abort_on_panic();
    let transport = MpiTransport::new(&universe);
    let (rank, ranks) = (transport.rank(), transport.size());
    let code = match run(args, transport) {
        Ok(code) => code,
        Err(e) => {
            // Most errors (a bad case, a refused option) come on every rank at once: let rank 0
            // report and end the job, so that the message appears once. A rank alone in its
            // failure still ends the job, a moment later.
            if rank != 0 {
                std::thread::sleep(std::time::Duration::from_secs(2));
            }
            let who = if ranks > 1 {
                format!(" (rank {rank} of {ranks})")
            } else {
                String::new()
            };
            abort(&format!("error{who}: {e:#}"), 1)
        }
    };
    // Finalize MPI before leaving: `exit` skips destructors.
    drop(universe);
    std::process::exit(code)
}

fn run(args: &[String], transport: MpiTransport) -> anyhow::Result<i32> {
    let (rank, ranks) = (transport.rank(), transport.size());
    let (args, dims) = take_grid(args)?;
    if ranks == 1 && dims.is_none() {
        return Ok(fdlab_solvers::cli::run_command(&args)?);
    }
    let RunArgs { case, check, opts } = parse_args(&args)?;
    let path = case;
    let case = Case::load(&path)?;
    if check {
        if rank == 0 {
            let p = fdlab_solvers::validate(&case, &opts)?;
            let d = fdlab_dist::decompose(&p.setup, ranks, dims)?;
            println!(
                "{}; process grid {:?}",
                check_line(&path, &case, &p),
                &d.dims()[..case.dim()]
            );
        }
        return Ok(0);
    }
    let s = fdlab_dist::run(&case, &opts, Box::new(transport), dims)?;
    if rank == 0 {
        println!("{s} ({ranks} processes)");
    }
    Ok(0)
}

/// Remove `--process-grid AxB[xC]` from `args`, returning the rest and the grid.
fn take_grid(args: &[String]) -> anyhow::Result<(Vec<String>, Option<[usize; 3]>)> {
    let mut rest = Vec::with_capacity(args.len());
    let mut dims = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a != GRID_OPTION {
            rest.push(a.clone());
            continue;
        }
        let v = it
            .next()
            .ok_or_else(|| anyhow::anyhow!("{GRID_OPTION} needs a value, e.g. 2x2"))?;
        let parts: Vec<usize> = v
            .split('x')
            .map(|p| p.parse::<usize>().ok().filter(|&n| n > 0))
            .collect::<Option<_>>()
            .filter(|p: &Vec<usize>| (1..=3).contains(&p.len()))
            .ok_or_else(|| {
                anyhow::anyhow!("{GRID_OPTION} {v}: give 1 to 3 positive counts, e.g. 2x2")
            })?;
        let mut d = [1; 3];
        d[..parts.len()].copy_from_slice(&parts);
        dims = Some(d);
    }
    Ok((rest, dims))
}
