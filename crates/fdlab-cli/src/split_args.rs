//! The options of `fdlab run` that split a grid: `--process-grid AxB[xC]` (MPI ranks or GPU
//! parts) and `--gpus N` (parts on the GPUs of this host, one thread each).

/// The option that gives the process grid, e.g. `--process-grid 2x2` (chosen when absent).
const GRID_OPTION: &str = "--process-grid";
/// The option that splits a run over GPUs of this process.
const GPUS_OPTION: &str = "--gpus";

/// Remove `--process-grid AxB[xC]` from `args`, returning the rest and the grid.
pub fn take_grid(args: &[String]) -> anyhow::Result<(Vec<String>, Option<[usize; 3]>)> {
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

/// Remove `--gpus N` from `args`, returning the rest and N.
pub fn take_gpus(args: &[String]) -> anyhow::Result<(Vec<String>, Option<usize>)> {
    let mut rest = Vec::with_capacity(args.len());
    let mut gpus = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a != GPUS_OPTION {
            rest.push(a.clone());
            continue;
        }
        let v = it
            .next()
            .ok_or_else(|| anyhow::anyhow!("{GPUS_OPTION} needs a value, e.g. 2"))?;
        let n = v
            .parse::<usize>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| anyhow::anyhow!("{GPUS_OPTION} {v}: give a positive count"))?;
        gpus = Some(n);
    }
    Ok((rest, gpus))
}

/// `fdlab run CASE.toml --gpus N`: the grid split along its last axis over N parts, one
/// thread each, part q on GPU q mod (GPUs present): NCCL between distinct GPUs when built
/// with the `nccl` feature, host memory otherwise. Returns `None` when `--gpus` is absent.
pub fn run_on_gpus(args: &[String]) -> anyhow::Result<Option<i32>> {
    let (args, gpus) = take_gpus(args)?;
    let Some(gpus) = gpus else {
        return Ok(None);
    };
    let (args, dims) = take_grid(&args)?;
    let fdlab_solvers::cli::RunArgs { case, check, opts } = fdlab_solvers::cli::parse_args(&args)?;
    if opts.backend == fdlab_solvers::BackendChoice::Cpu {
        anyhow::bail!("--gpus runs on GPUs: drop --backend cpu (CPU ranks run under mpirun)");
    }
    let path = case;
    let case = fdlab_solvers::Case::load(&path)?;
    let dims = dims.or(Some(fdlab_dist::last_axis_split(case.dim(), gpus)));
    if check {
        let p = fdlab_solvers::validate(&case, &opts)?;
        fdlab_dist::slab::supported(&p.setup)?;
        let d = fdlab_dist::decompose(&p.setup, gpus, dims)?;
        fdlab_dist::slab::Slab::new(&d, 0, case.dim(), 0)?;
        println!(
            "{}; {gpus} GPU parts, process grid {:?}",
            fdlab_solvers::cli::check_line(&path, &case, &p),
            &d.dims()[..case.dim()]
        );
        return Ok(Some(0));
    }
    let s = match fdlab_dist::threads::run_on_gpus(&case, &opts, gpus, dims) {
        Ok(s) => s,
        Err(e) => {
            // A part stuck on a failed peer's device-side exchange never returns: end them all.
            eprintln!("error: {e:#}");
            std::process::exit(1);
        }
    };
    println!("{s} ({gpus} GPU parts)");
    Ok(Some(0))
}
