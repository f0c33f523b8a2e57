//! A property test of the case-file reader and validator: generated case files — built from
//! the real key set with plausible, wrong-typed, negative, non-finite, huge, empty and
//! wrong-length values, unknown keys and missing tables; small valid cases with random edits;
//! and random bytes — are parsed and, when they parse, prepared (every check that runs before
//! step 1, material and initial fields included). 72,000 cases in all, from fixed seeds so
//! that every run checks the same cases.
//!
//! What must hold for every case:
//!
//! 1. nothing panics (the runner catches a panic and reports it, shrunk, as a failure);
//! 2. every refusal names what to change (see [`names_a_key`] for the exact rule);
//! 3. an accepted case's setup holds no NaN or infinity, and each of its warnings starts with
//!    a key path and a colon.
//!
//! Grids are small (at most 20 points per axis) or so large (10^12 points or more) that
//! validation must refuse them before allocating anything; nothing in between, so that the
//! test never allocates much.
//!
//! The three properties take about 35 s of CPU in the test profile, most of it in the TOML
//! reader (built at opt-level 0 there); the test harness runs them on two threads.

use fdlab_solvers::output::write_npy;
use fdlab_solvers::setup::{prepare, Prepared};
use fdlab_solvers::{Case, Error};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use std::path::Path;

mod generate;
use generate::{any_case, edited_case, noise, SEEDS};

/// Every key and table name of the case format, at any depth (heat, wave and fdtd).
const KEYS: &[&str] = &[
    "physics",
    "precision",
    "grid",
    "shape",
    "spacing",
    "time",
    "dt",
    "cfl",
    "duration",
    "scheme",
    "order",
    "initial",
    "zero",
    "gaussian",
    "center",
    "width",
    "amplitude",
    "npy",
    "text",
    "value",
    "material",
    "diffusivity",
    "velocity",
    "constant",
    "layered",
    "axis",
    "tops",
    "values",
    "sources",
    "position",
    "frequency",
    "delay",
    "receivers",
    "boundary",
    "periodic",
    "dirichlet",
    "cpml",
    "thickness",
    "output",
    "dir",
    "every",
    "png",
    "frames",
    "gif",
    "vti",
    "slice",
    "fdtd",
    "pec",
    "kappa_max",
    "alpha_max",
    "materials",
    "lo",
    "hi",
    "radius",
    "slab",
    "eps_r",
    "sigma",
    "drude",
    "plasma_frequency",
    "collision_frequency",
    "lorentz",
    "delta_eps",
    "resonance_frequency",
    "damping",
    "debye",
    "relaxation_time",
    "probes",
    "component",
    "waveform",
    "f0",
    "t0",
    "tau",
    "hard",
    "monitors",
    "components",
    "frequencies",
    "plane_waves",
    "direction",
    "polarization",
    "flux",
    "plot",
];

/// The length of the key path at the start of `s`: keys of [`KEYS`] joined by `.`, each
/// optionally indexed (`sources[0].frequency`, `fdtd.boundary`), ending where a non-name
/// character follows; `None` when `s` does not start with one.
fn key_path_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let name = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    loop {
        let start = i;
        while i < b.len() && name(b[i]) {
            i += 1;
        }
        if !KEYS.contains(&&s[start..i]) {
            return None;
        }
        while i < b.len() && b[i] == b'[' {
            let d = i + 1;
            i = d;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i == d || i >= b.len() || b[i] != b']' {
                return None;
            }
            i += 1;
        }
        if i < b.len() && b[i] == b'.' && i + 1 < b.len() && name(b[i + 1]) {
            i += 1;
            continue;
        }
        return Some(i);
    }
}

/// Whether `s` starts with a key path, bare or quoted as `` `key` `` or `[key]` / `[[key]]`,
/// possibly after "missing table " / "missing field ".
fn starts_with_key(s: &str) -> bool {
    let s = s
        .strip_prefix("missing table ")
        .or_else(|| s.strip_prefix("missing field "))
        .unwrap_or(s);
    let s = s.trim_start_matches(['`', '[']);
    key_path_len(s).is_some()
}

/// The rule for refusals: the message leads with what to change.
///
/// - a TOML syntax or type error (`Error::Case` from the TOML reader) gives its line: it
///   starts "TOML parse error at line N" (the reader quotes that line, and for a type or
///   unknown-key error its message names the key);
/// - every other refusal of the case file (`Error::Case`, `Error::Invalid`), after the
///   case file's path, starts with a key path (`grid.shape`, `sources[0].frequency`,
///   `[fdtd]`, `` `boundary` ``, "missing table [output]");
/// - a refused `.npy` file (`Error::Npy`), after the file's path, starts with the key that
///   names the file (`initial.npy`, `material.velocity`);
/// - an unstable time step (`Error::Unstable`) says which `dt` to use instead.
///
/// Any other error from reading or preparing a case breaks the rule.
fn names_a_key(e: &Error, case_path: &Path) -> Result<(), String> {
    let after_path = |m: &str, path: &Path| {
        let m = m.strip_prefix("invalid case: ").unwrap_or(m);
        let p = format!("{}: ", path.display());
        m.strip_prefix(&p).unwrap_or(m).to_string()
    };
    let ok = match e {
        Error::Case { detail, .. } => {
            detail.starts_with("TOML parse error at line ") || starts_with_key(detail)
        }
        Error::Invalid(_) => starts_with_key(&after_path(&e.to_string(), case_path)),
        Error::Npy { path, detail } => {
            !detail.is_empty() && starts_with_key(&after_path(&e.to_string(), path))
        }
        Error::Unstable { .. } => e.to_string().contains("; use dt <= "),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("refusal names no key: {e:?}\n  {e}"))
    }
}

/// What an accepted case must satisfy: no NaN or infinity anywhere in its setup (its Debug
/// text holds neither token), and warnings that start with a key path and a colon.
fn accepted(p: &Prepared) -> Result<(), String> {
    let text = format!("{:?}", p.setup);
    let bad = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .find(|t| *t == "NaN" || *t == "inf");
    if let Some(t) = bad {
        return Err(format!("accepted a setup holding {t}: {text}"));
    }
    if !(p.plan.dt > 0.0 && p.plan.dt.is_finite() && p.plan.steps >= 1) {
        return Err(format!("accepted plan {:?}", p.plan));
    }
    for w in &p.warnings {
        if !key_path_len(w).is_some_and(|n| w[n..].starts_with(": ")) {
            return Err(format!("warning does not start with its key: {w}"));
        }
    }
    Ok(())
}

/// Parse and prepare `text` as the case file `dir/case.toml`; check the rules.
fn check(text: &str, dir: &Path) -> Result<(), TestCaseError> {
    let path = dir.join("case.toml");
    let result = Case::parse(text, path.clone()).and_then(|case| prepare(&case));
    match result {
        Err(e) => names_a_key(&e, &path),
        Ok(p) => accepted(&p),
    }
    .map_err(|m| TestCaseError::fail(format!("{m}\n--- case ---\n{text}")))
}

/// `.npy` files the generated cases name, beside `case.toml` (`missing.npy` is not there).
fn fixtures() -> tempfile::TempDir {
    let d = tempfile::tempdir().expect("a temporary directory");
    let grid: Vec<f64> = (0..48).map(|i| 1.0 + i as f64 / 48.0).collect();
    let mut nan = grid.clone();
    nan[13] = f64::NAN;
    let mut neg = grid.clone();
    neg[40] = -2.0;
    let cube: Vec<f64> = (0..192).map(|i| 1.0 + i as f64 / 192.0).collect();
    let files: [(&str, &[usize], &[f64]); 4] = [
        ("ok.npy", &[6, 8], &grid),
        ("nan.npy", &[6, 8], &nan),
        ("neg.npy", &[6, 8], &neg),
        ("cube.npy", &[4, 6, 8], &cube),
    ];
    for (name, shape, data) in files {
        write_npy(&d.path().join(name), shape, data).expect("a fixture");
    }
    std::fs::write(d.path().join("garbage.npy"), b"\x93NUMPY\x01\x00{'descr'").expect("a fixture");
    d
}

/// Run `cases` cases of `strategy` through [`check`], from a fixed seed.
fn run_property(name: &str, cases: u32, seed: u8, strategy: impl Strategy<Value = String>) {
    let dir = fixtures();
    let config = Config {
        cases,
        failure_persistence: None,
        max_shrink_iters: 4096,
        ..Config::default()
    };
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]);
    let mut runner = TestRunner::new_with_rng(config, rng);
    if let Err(e) = runner.run(&strategy, |text| check(&text, dir.path())) {
        panic!("{name}: {e}");
    }
}

#[test]
fn generated_cases_never_panic_and_every_refusal_names_a_key() {
    run_property("generated cases", 15_000, 1, any_case());
}

#[test]
fn edited_valid_cases_never_panic_and_every_refusal_names_a_key() {
    run_property("edited cases", 12_000, 2, edited_case());
}

#[test]
fn random_text_never_panics_and_every_refusal_names_a_key() {
    run_property("random text", 45_000, 3, noise());
}

#[test]
fn the_seeds_are_valid_cases() {
    // Edits of a case that is refused anyway would reach little of the validator.
    let dir = fixtures();
    for seed in SEEDS {
        let case =
            Case::parse(seed, dir.path().join("case.toml")).unwrap_or_else(|e| panic!("{e}"));
        prepare(&case).unwrap_or_else(|e| panic!("{e}\n{seed}"));
    }
}

#[test]
fn the_refusal_rule_tells_keys_from_prose() {
    let p = Path::new("c.toml");
    let named =
        Error::Invalid("c.toml: sources[1].frequency (line 3): -1: must be positive".into());
    assert!(names_a_key(&named, p).is_ok());
    let fdtd = Error::Invalid("c.toml: fdtd.boundary (line 9)[0].cpml: too thick".into());
    assert!(names_a_key(&fdtd, p).is_ok());
    let prose = Error::Invalid("c.toml: the grid is too large to index".into());
    assert!(names_a_key(&prose, p).is_err());
    let bare = Error::Invalid("FDTD grid [1, 2, 3] is too large to index".into());
    assert!(names_a_key(&bare, p).is_err());
    let table = Error::Case {
        path: p.into(),
        detail: "missing table [output]; add one".into(),
    };
    assert!(names_a_key(&table, p).is_ok());
    let io = Error::Io {
        path: "x.npy".into(),
        source: std::io::Error::from(std::io::ErrorKind::NotFound),
    };
    assert!(names_a_key(&io, p).is_err());
}
