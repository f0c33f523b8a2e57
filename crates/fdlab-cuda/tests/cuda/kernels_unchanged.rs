//! Every generated kernel is byte-identical to the golden hashes in
//! `tests/data/kernel_hashes.txt`: a refactor of the code generator must not change a kernel by
//! accident.
//!
//! The set: every strategy of [`Strategy::conformance_set`] and every strategy name in the
//! committed benchmark results (`tests/data/result_strategies.txt`: the `strategy` fields of
//! `bench/runs/**/*.json` and tune caches, `+const` removed, less the names of options since
//! removed, which no parser of this code reads), × the conformance cases and
//! a few roofline-sized cases, × f32/f64 × immediate/constant coefficients, skipping the
//! unsupported combinations. Each strategy gets one line: how many kernels it generated and a
//! 64-bit FNV-1a chain over them, in case order: for each kernel,
//! `h = fnv1a("{h:016x} {label} {precision:?} {coefficients:?} {k:016x}\n")`, from `h = 0`,
//! where `k` is the FNV-1a of the kernel's [`fingerprint`] (its name, source and launch
//! metadata). The prelude every module shares gets a line of its own.
//!
//! A change that is meant to change kernels regenerates the file with
//! `FDLAB_BLESS=1 cargo test -p fdlab-cuda --test cuda kernels_unchanged` and says why in its
//! commit.

use fdlab_core::{conformance, Axis, Boundary, Grid, Precision, Stencil};
use fdlab_cuda::codegen::{fnv1a, generate, CudaSource, KernelSpec, PRELUDE};
use fdlab_cuda::{Coefficients, Strategy};
use rayon::prelude::*;

const GOLDEN: &str = "tests/data/kernel_hashes.txt";
const NAMES: &str = include_str!("../data/result_strategies.txt");

/// A case: label, stencils, boundary.
type Case = (String, Vec<Stencil>, Boundary);

/// Roofline-shaped cases (generation allocates nothing, so the size costs nothing).
fn roofline_cases() -> Vec<Case> {
    let g3 = Grid::new(&[512, 512, 512], &[0.1, 0.15, 0.2]).unwrap();
    let g2 = Grid::new(&[8192, 8192], &[0.1, 0.15]).unwrap();
    let mut ops: Vec<(String, Vec<Stencil>)> = vec![];
    for p in [2, 8] {
        ops.push((
            format!("512^3 lap{p}"),
            vec![Stencil::laplacian(&g3, p).unwrap()],
        ));
    }
    for a in Axis::ALL {
        let s = Stencil::derivative(&g3, a, 1, 8).unwrap();
        ops.push((format!("512^3 d1 {a:?}"), vec![s]));
    }
    ops.push(("512^3 grad8".into(), Stencil::gradient(&g3, 8).unwrap()));
    ops.push((
        "8192^2 lap2".into(),
        vec![Stencil::laplacian(&g2, 2).unwrap()],
    ));
    let mut out = vec![];
    for (label, stencils) in ops {
        for b in [Boundary::Periodic, Boundary::Dirichlet] {
            out.push((format!("{label} {}", b.name()), stencils.clone(), b));
        }
    }
    out
}

fn all_cases() -> Vec<Case> {
    let mut cases: Vec<Case> = conformance::cases()
        .into_iter()
        .map(|c| (c.label, c.stencils, c.boundary))
        .collect();
    cases.extend(roofline_cases());
    cases
}

/// The text a kernel hashes: its name, its body and everything the launcher reads. The
/// prelude every module starts with is hashed once, on a line of its own: hashing it again
/// with each of the million kernels took most of this test's time.
fn fingerprint(k: &CudaSource) -> String {
    format!(
        "{}\n{}\nblock {:?} grid {:?} shared {} input {:?} outputs {} constants {:?} \
         precision {:?} x_multiple {} boxes {:?}\n",
        k.name,
        k.body,
        k.block,
        k.grid_map,
        k.shared_bytes,
        k.input,
        k.outputs,
        k.constants,
        k.precision,
        k.x_multiple,
        k.tensor_boxes,
    )
}

/// The cases' distinct (stencils, boundary) pairs, and for each case the index of its pair.
/// Generation reads nothing else of a case (a [`KernelSpec`] holds no grid), and the
/// conformance shapes of one dimension share their spacing, so most cases repeat an earlier
/// case's kernels: each distinct kernel is generated once per strategy.
fn distinct_specs(cases: &[Case]) -> (Vec<(&[Stencil], Boundary)>, Vec<usize>) {
    let mut specs: Vec<(&[Stencil], Boundary)> = vec![];
    let index = cases
        .iter()
        .map(|(_, stencils, boundary)| {
            let key = (stencils.as_slice(), *boundary);
            specs.iter().position(|s| *s == key).unwrap_or_else(|| {
                specs.push(key);
                specs.len() - 1
            })
        })
        .collect();
    (specs, index)
}

/// Kernels per spec and strategy: precisions × coefficient kinds.
const VARIANTS: usize = Precision::ALL.len() * 2;

/// One golden line for `strategy`: `name count hash`. `specs` and `index` are
/// [`distinct_specs`] of `cases`.
fn strategy_line(
    strategy: Strategy,
    cases: &[Case],
    specs: &[(&[Stencil], Boundary)],
    index: &[usize],
) -> String {
    let variants = |spec: usize| {
        Precision::ALL.into_iter().flat_map(move |precision| {
            [Coefficients::Immediate, Coefficients::Constant]
                .map(move |coefficients| (spec, precision, coefficients))
        })
    };
    // The fingerprint's hash of every distinct kernel, `None` where the strategy refuses the
    // spec: each is hashed once, not once per case that repeats it.
    let kernels: Vec<Option<u64>> = (0..specs.len())
        .flat_map(variants)
        .map(|(spec, precision, coefficients)| {
            let (stencils, boundary) = specs[spec];
            let spec = KernelSpec {
                stencils,
                boundary,
                precision,
                strategy,
                coefficients,
            };
            generate(&spec).ok().map(|k| fnv1a(&fingerprint(&k)))
        })
        .collect();
    let mut count = 0usize;
    let mut h = 0u64;
    for ((label, _, _), &spec) in cases.iter().zip(index) {
        for (i, (_, precision, coefficients)) in variants(spec).enumerate() {
            let Some(k) = kernels[spec * VARIANTS + i] else {
                continue;
            };
            count += 1;
            h = fnv1a(&format!(
                "{h:016x} {label} {precision:?} {coefficients:?} {k:016x}\n"
            ));
        }
    }
    format!("{strategy} {count} {h:016x}")
}

/// The strategies hashed; `FDLAB_GOLDEN_FILTER=zmarch` keeps those whose name contains it
/// (for quick local runs while refactoring one family; the full set is what CI checks).
fn strategies() -> Vec<Strategy> {
    let mut out = Strategy::conformance_set();
    for name in NAMES.lines().filter(|l| !l.is_empty()) {
        let s: Strategy = name
            .parse()
            .unwrap_or_else(|e| panic!("{name} from the results does not parse: {e}"));
        out.push(s);
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|s| seen.insert(*s));
    if let Ok(f) = std::env::var("FDLAB_GOLDEN_FILTER") {
        out.retain(|s| s.to_string().contains(&f));
    }
    out
}

#[test]
fn every_generated_kernel_is_unchanged() {
    let cases = all_cases();
    let (specs, index) = distinct_specs(&cases);
    let prelude = format!("prelude 1 {:016x}", fnv1a(PRELUDE));
    let lines: Vec<String> = std::iter::once(prelude)
        .chain(
            strategies()
                .par_iter()
                .map(|&s| strategy_line(s, &cases, &specs, &index))
                .collect::<Vec<_>>(),
        )
        .collect();
    let total: usize = lines
        .iter()
        .map(|l| l.split(' ').nth(1).unwrap().parse::<usize>().unwrap())
        .sum();
    let actual = format!("{}\n", lines.join("\n"));
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(GOLDEN);
    if std::env::var("FDLAB_BLESS").as_deref() == Ok("1") {
        assert!(
            std::env::var("FDLAB_GOLDEN_FILTER").is_err(),
            "bless the full set"
        );
        std::fs::write(&path, &actual).unwrap();
        eprintln!("wrote {} lines ({total} kernels) to {GOLDEN}", lines.len());
        return;
    }
    let mut golden = std::fs::read_to_string(&path).unwrap_or_default();
    if let Ok(f) = std::env::var("FDLAB_GOLDEN_FILTER") {
        golden = golden
            .lines()
            .filter(|l| l.split(' ').next().is_some_and(|n| n.contains(&f)))
            .map(|l| format!("{l}\n"))
            .collect();
    }
    let changed: Vec<String> = actual
        .lines()
        .zip(golden.lines())
        .filter(|(a, g)| a != g)
        .map(|(a, g)| format!("  now {a}\n  was {g}"))
        .take(20)
        .collect();
    assert!(
        changed.is_empty() && actual.lines().count() == golden.lines().count(),
        "{} of {} strategies generate different kernels ({total} kernels now):\n{}",
        changed.len(),
        lines.len(),
        changed.join("\n")
    );
    if std::env::var("FDLAB_GOLDEN_FILTER").is_err() {
        assert!(total > 900_000, "only {total} kernels hashed");
    }
}
