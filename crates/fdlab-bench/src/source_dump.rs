//! Writes every generated solver kernel and its launch for the cases the GPU self-checks and
//! the solvers, FDTD and temporal suites run, per device class: a development tool that
//! shows a change to the schedules leaves the default kernels byte for byte as they were.

use crate::solvers::{fdtd_box, solver_cases, SolverSetup};
use fdlab_core::Precision;
use fdlab_solvers::gpu::generated::{generated_sources, GeneratedKernel};
use fdlab_solvers::gpu::temporal::Request;
use fdlab_solvers::setup::Setup;
use std::path::Path;

const CLASSES: [Option<&str>; 3] = [None, Some("h100"), Some("h200")];

fn write(dir: &Path, kernels: &[GeneratedKernel]) {
    std::fs::create_dir_all(dir).unwrap();
    for (i, k) in kernels.iter().enumerate() {
        std::fs::write(dir.join(format!("{i:02}_{}.cu", k.name)), &k.source).unwrap();
        std::fs::write(dir.join(format!("{i:02}_{}.launch", k.name)), &k.launch).unwrap();
    }
}

fn dump(root: &Path, name: &str, setup: &Setup, p: Precision) {
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let p_name = format!("{p:?}").to_lowercase();
    for class in CLASSES {
        let dir = root
            .join(&name)
            .join(&p_name)
            .join(class.unwrap_or("default"));
        write(&dir, &generated_sources(setup, p, None, class).unwrap());
    }
    // The multi-step passes the temporal checks and suite ask for.
    let mut requests = vec![Request::Off];
    requests.extend((2..=8).map(Request::K));
    for (i, r) in requests.into_iter().enumerate() {
        let dir = root.join(&name).join(&p_name).join(format!("request{i}"));
        pass(&dir, setup, p, r);
    }
}

fn pass(dir: &Path, setup: &Setup, p: Precision, r: Request) {
    let text = match setup {
        Setup::Heat(s) => fdlab_solvers::gpu::heat_pass_source(s, p, r)
            .ok()
            .flatten()
            .map(|(src, t)| (src, format!("{t:?}"))),
        Setup::Wave(s) => fdlab_solvers::gpu::wave_pass_source(s, p, Some(r))
            .ok()
            .flatten()
            .map(|(src, t)| (src, format!("{t:?}"))),
        Setup::Fdtd(_) => None,
    };
    if let Some((src, shape)) = text {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(format!("{}.cu", src.name)), &src.body).unwrap();
        let meta = format!(
            "block {:?}\ngrid map {:?}\nshared {}\n{shape}\n",
            src.block, src.grid_map, src.shared_bytes
        );
        std::fs::write(dir.join(format!("{}.launch", src.name)), meta).unwrap();
    }
}

#[test]
#[ignore = "development tool: FDLAB_SOURCE_DUMP=dir writes every generated kernel"]
fn dump_generated_sources() {
    let Ok(root) = std::env::var("FDLAB_SOURCE_DUMP") else {
        return;
    };
    let root = Path::new(&root);
    for c in fdlab_solvers::conformance::cases(false) {
        dump(&root.join("check"), &c.name, &c.setup, c.precision);
    }
    for c in fdlab_solvers::temporal_checks::temporal_cases() {
        let dir = root.join("temporal-check").join(format!(
            "{}_{:?}",
            c.case
                .name
                .replace(['/', ' ', '×', '(', ')', ',', '='], "_"),
            c.request
        ));
        pass(&dir, &c.case.setup, c.case.precision, c.request);
    }
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/cases");
    for c in fdlab_solvers::conformance::example_cases(&examples).unwrap() {
        dump(&root.join("examples"), &c.name, &c.setup, c.precision);
    }
    let ps = [Precision::F32, Precision::F64];
    for n in [256, 384, 512] {
        for case in solver_cases(n) {
            let setup = match &case.setup {
                SolverSetup::Toml(text) => {
                    let parsed = fdlab_solvers::Case::parse(text, "<bench>".into()).unwrap();
                    fdlab_solvers::setup::prepare(&parsed).unwrap().setup
                }
                SolverSetup::Fdtd { n, cpml, drude } => {
                    Setup::Fdtd(fdtd_box(*n, *cpml, *drude).unwrap())
                }
            };
            for p in ps {
                dump(&root.join(format!("solvers-{n}")), case.name, &setup, p);
            }
        }
    }
    for (n3, n2) in [(512, 8192), (384, 6144)] {
        for case in crate::temporal::temporal_cases(n3, n2) {
            let setup = crate::temporal::setup(&case).unwrap();
            for p in ps {
                dump(&root.join(format!("temporal-{n3}")), case.name, &setup, p);
            }
        }
    }
}
