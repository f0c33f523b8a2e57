//! `fdlab run` under an MPI launcher (feature `mpi`): the grid split over the job's processes,
//! rank 0 writing the outputs. Any failure on any rank ends the whole job (`MPI_Abort`), so
//! that no rank is left waiting for one that stopped.

use crate::run_args::RunArgs;
use crate::run_case::{check_line, report_check, run_here, shots_line};
use fdlab_dist::mpi::{abort, abort_on_panic, initialize, MpiTransport};
use fdlab_dist::Transport;
use fdlab_solvers::{BackendKind, Case};

/// Run `fdlab run ARGS` as one rank of an MPI job; never returns. `process_start` is when
/// the process started (summary.json's startup times count from it in a job of one rank).
pub fn run_case(args: &RunArgs, process_start: std::time::Instant) -> ! {
    let Some(universe) = initialize() else {
        eprintln!("error: MPI was started twice");
        std::process::exit(1);
    };
    abort_on_panic();
    let transport = MpiTransport::new(&universe);
    let (rank, ranks) = (transport.rank(), transport.size());
    let code = match run(args, transport, process_start) {
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

fn run(
    args: &RunArgs,
    transport: MpiTransport,
    process_start: std::time::Instant,
) -> anyhow::Result<i32> {
    let (rank, ranks) = (transport.rank(), transport.size());
    let dims = args.process_grid;
    if args.gpus.is_some() {
        anyhow::bail!(
            "--gpus splits a run over the GPUs of one process; under mpirun each rank is one \
             part: drop --gpus and give --backend cuda for one GPU per rank"
        );
    }
    if ranks == 1 && dims.is_none() {
        // A job of one rank is a plain run: its own signals and checkpoints.
        return run_here(args, process_start);
    }
    let opts = args.options();
    let path = &args.case;
    let case = Case::load(path)?;
    if args.check {
        if rank == 0 && case.has_shots() {
            let p = fdlab_solvers::validate(&case, &opts)?;
            let line = format!(
                "{}; shots shared out over {ranks} processes",
                check_line(path, &case, &p)
            );
            report_check(&line, &p);
        } else if rank == 0 {
            let p = fdlab_solvers::validate(&case, &opts)?;
            let d = fdlab_dist::decompose(&p.setup, ranks, dims)?;
            let line = format!(
                "{}; process grid {:?}",
                check_line(path, &case, &p),
                &d.dims()[..case.dim()]
            );
            report_check(&line, &p);
        }
        return Ok(0);
    }
    // With --backend cuda each rank steps its part on a GPU of its host; halos go through
    // NCCL when every rank has a GPU of its own (and fdlab was built with it), else through
    // host memory and MPI.
    let gpu = match opts.backend {
        BackendKind::Cuda => {
            let devices = fdlab_solvers::gpu::device_count().map_err(anyhow::Error::msg)?;
            let placement = transport.gpu_placement_with(devices, args.dist_options())?;
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            if rank == 0 && cores == 1 {
                eprintln!(
                    "warning: this rank may use one CPU core only, shared by the stepping \
                     thread, NCCL and the CUDA driver (about 2x slower on two H100s); give \
                     each rank more cores: mpirun --bind-to none (or --map-by slot:PE=4)"
                );
            }
            Some(placement)
        }
        _ => None,
    };
    let s = fdlab_dist::run_on(&case, &opts, Box::new(transport), dims, gpu)?;
    if rank == 0 {
        println!("{s} ({ranks} processes)");
        if case.has_shots() {
            println!("{}", shots_line(&s.out_dir));
        }
    }
    Ok(s.exit_code())
}
