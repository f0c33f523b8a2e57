//! Everything in a case that cannot run as meant is refused (or warned about) before step 1:
//! non-finite initial fields, receivers and sources a heat case would ignore, grids too large
//! to allocate; and the warnings of wave cases that run but probably not as meant.

use fdlab_solvers::output::write_npy;
use fdlab_solvers::setup::prepare;
use fdlab_solvers::{validate, Case, Error};

use crate::common::{case_error, quiet};

const HEAT: &str = r#"
physics = "heat"
boundary = "periodic"
[grid]
shape = [24, 20]
spacing = [1.0, 1.0]
[time]
dt = 0.05
duration = 2.0
[material]
diffusivity = { constant = 1.0 }
[initial]
npy = "init.npy"
[output]
dir = "out"
every = 10
"#;

/// A 2-D wave case: 80 × 60 cells of 1.0, c = 1, a CPML of 10 cells, a source at (40, 30) of
/// 0.05 (20 cells per wavelength) and a receiver at (50, 30); 60 time units.
const WAVE: &str = r#"
physics = "wave"
[grid]
shape = [80, 60]
spacing = [1.0, 1.0]
[time]
cfl = 0.5
duration = 60.0
[material]
velocity = { constant = 1.0 }
[[sources]]
position = [40.0, 30.0]
frequency = 0.05
[[receivers]]
position = [50.0, 30.0]
[boundary.cpml]
thickness = 10
[output]
dir = "out"
every = 50
"#;

fn parse(text: &str) -> Case {
    Case::parse(text, "c.toml".into()).unwrap_or_else(|e| panic!("{e}"))
}

fn warnings(text: &str) -> Vec<String> {
    prepare(&parse(text))
        .unwrap_or_else(|e| panic!("{e}"))
        .warnings
}

#[test]
fn an_initial_npy_with_nan_or_inf_is_refused_naming_the_file_and_first_index() {
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let dir = tempfile::tempdir().unwrap();
        let mut init = vec![0.0; 24 * 20];
        // Grid cell (i, j) = (5, 7), numpy index [7, 5]; a later bad value is not the one named.
        init[5 + 24 * 7] = bad;
        init[20 + 24 * 15] = f64::NAN;
        write_npy(&dir.path().join("init.npy"), &[20, 24], &init).unwrap();
        let case = Case::parse(HEAT, dir.path().join("c.toml")).unwrap();
        let e = validate(&case, &quiet(&dir.path().join("out"))).unwrap_err();
        assert!(matches!(e, Error::Npy { .. }), "{e:?}");
        let e = e.to_string();
        assert!(e.contains("init.npy") && e.contains("initial.npy"), "{e}");
        assert!(e.contains(&format!("{bad} at numpy index [7, 5]")), "{e}");
        assert!(
            e.contains("grid cell [5, 7]") && e.contains("finite"),
            "{e}"
        );
        assert!(!dir.path().join("out").exists(), "nothing may run");
    }
}

#[test]
fn non_finite_initial_parameters_are_refused_naming_the_key() {
    let gaussian = HEAT.replace(
        "[initial]\nnpy = \"init.npy\"",
        "[initial.gaussian]\ncenter = [12.0, 10.0]\nwidth = 2.0\namplitude = nan",
    );
    let e = case_error(&gaussian);
    assert!(
        e.contains("initial.gaussian.amplitude") && e.contains("NaN"),
        "{e}"
    );
    let e = case_error(&gaussian.replace("[12.0, 10.0]", "[12.0, inf]"));
    assert!(
        e.contains("initial.gaussian.center") && e.contains("inf"),
        "{e}"
    );
    let text = HEAT.replace(
        "[initial]\nnpy = \"init.npy\"",
        "[initial.text]\ntext = \"Hi\"\nvalue = -inf",
    );
    let e = case_error(&text);
    assert!(
        e.contains("initial.text.value") && e.contains("-inf"),
        "{e}"
    );
}

#[test]
fn a_material_npy_names_its_first_bad_index() {
    let dir = tempfile::tempdir().unwrap();
    let mut kappa = vec![1.0; 24 * 20];
    kappa[3 + 24 * 2] = -1.0;
    write_npy(&dir.path().join("kappa.npy"), &[20, 24], &kappa).unwrap();
    let text = HEAT
        .replace("{ constant = 1.0 }", "{ npy = \"kappa.npy\" }")
        .replace("[initial]\nnpy = \"init.npy\"\n", "");
    let case = Case::parse(&text, dir.path().join("c.toml")).unwrap();
    let e = prepare(&case).unwrap_err().to_string();
    assert!(
        e.contains("material.diffusivity") && e.contains("kappa.npy"),
        "{e}"
    );
    assert!(
        e.contains("-1 at numpy index [2, 3], grid cell [3, 2]"),
        "{e}"
    );
    // A missing file names the key too, not only the path.
    let case = Case::parse(&text, dir.path().join("sub/c.toml")).unwrap();
    let e = prepare(&case).unwrap_err().to_string();
    assert!(e.contains("material.diffusivity: cannot read"), "{e}");
}

#[test]
fn receivers_in_a_heat_case_are_refused() {
    let heat = HEAT.replace("[initial]\nnpy = \"init.npy\"\n", "");
    let e = case_error(&format!("{heat}[[receivers]]\nposition = [3.0, 4.0]\n"));
    assert!(
        e.contains("receivers (line") && e.contains("wave cases only"),
        "{e}"
    );
    let e = case_error(&format!(
        "{heat}[[sources]]\nposition = [3.0, 4.0]\nfrequency = 0.1\n"
    ));
    assert!(
        e.contains("sources (line") && e.contains("wave cases only"),
        "{e}"
    );
}

#[test]
fn non_finite_source_parameters_are_refused() {
    for (from, to, key) in [
        (
            "frequency = 0.05",
            "frequency = inf",
            "sources[0].frequency",
        ),
        (
            "frequency = 0.05",
            "frequency = 0.05\namplitude = nan",
            "sources[0].amplitude",
        ),
        (
            "frequency = 0.05",
            "frequency = 0.05\ndelay = -inf",
            "sources[0].delay",
        ),
    ] {
        let e = case_error(&WAVE.replace(from, to));
        assert!(e.contains(key) && e.contains("finite"), "{key}: {e}");
    }
}

#[test]
fn grids_too_large_for_memory_are_refused_before_allocating() {
    let heat = HEAT.replace("[initial]\nnpy = \"init.npy\"\n", "");
    // 10^12 points: 16 TB for the initial and material fields.
    let e = case_error(&heat.replace("[24, 20]", "[1000000, 1000000]"));
    assert!(e.contains("grid.shape") && e.contains("memory"), "{e}");
    // More points than a usize counts.
    let e = case_error(
        &heat
            .replace("[24, 20]", "[4294967296, 4294967296, 4294967296]")
            .replace("[1.0, 1.0]", "[1.0, 1.0, 1.0]"),
    );
    assert!(e.contains("grid.shape") && e.contains("index"), "{e}");
    // One axis is refused before anything indexes a second.
    let e = case_error(
        &heat
            .replace("[24, 20]", "[24]")
            .replace("[1.0, 1.0]", "[1.0]"),
    );
    assert!(e.contains("grid.shape") && e.contains("1 axes"), "{e}");
}

#[test]
fn a_clean_wave_case_has_no_warnings() {
    assert_eq!(warnings(WAVE), Vec::<String>::new());
}

#[test]
fn sources_and_receivers_in_the_cpml_are_warned_about() {
    let w = warnings(
        &WAVE
            .replace("[40.0, 30.0]", "[5.0, 30.0]")
            .replace("[50.0, 30.0]", "[50.0, 55.0]"),
    );
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].starts_with("sources[0]: position [5.0, 30.0] (cell [5, 30])"),
        "{w:?}"
    );
    assert!(w[0].contains("axis 0 (10 cells at each end)"), "{w:?}");
    assert!(w[0].contains("10 ..= 69"), "{w:?}");
    assert!(
        w[1].starts_with("receivers[0]: position [50.0, 55.0] (cell [50, 55])"),
        "{w:?}"
    );
    assert!(
        w[1].contains("axis 1") && w[1].contains("10 ..= 49"),
        "{w:?}"
    );
    // The last interior cell is not in the layer; the first layer cell is.
    assert!(warnings(&WAVE.replace("[50.0, 30.0]", "[69.0, 30.0]")).is_empty());
    assert_eq!(
        warnings(&WAVE.replace("[50.0, 30.0]", "[70.0, 30.0]")).len(),
        1
    );
}

#[test]
fn a_ricker_source_with_few_cells_per_wavelength_is_warned_about() {
    // c = 1, h = 1: frequency 0.25 gives 4 cells per wavelength, 0.2 exactly 5.
    let w = warnings(&WAVE.replace("frequency = 0.05", "frequency = 0.25"));
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with("sources[0]: frequency 0.25 gives 4.00 cells"),
        "{w:?}"
    );
    assert!(
        w[0].contains("c_min = 1") && w[0].contains("spacing 1"),
        "{w:?}"
    );
    assert!(w[0].contains("use frequency <= 2e-1"), "{w:?}");
    assert!(warnings(&WAVE.replace("frequency = 0.05", "frequency = 0.2")).is_empty());
    // The slowest velocity counts: a layer at 0.5 halves the wavelength there.
    let layered = WAVE.replace(
        "velocity = { constant = 1.0 }",
        "velocity.layered = { tops = [0.0, 40.0], values = [1.0, 0.5] }",
    );
    let w = warnings(&layered.replace("frequency = 0.05", "frequency = 0.15"));
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("3.33 cells") && w[0].contains("c_min = 0.5"),
        "{w:?}"
    );
}

#[test]
fn a_source_delay_longer_than_the_run_is_warned_about() {
    let w = warnings(&WAVE.replace("frequency = 0.05", "frequency = 0.05\ndelay = 70.0"));
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].starts_with("sources[0]: delay 7e1 is longer"), "{w:?}");
    assert!(w[0].contains("duration 6"), "{w:?}");
    // The default delay, 1.5 / frequency = 75, counts too.
    let w = warnings(&WAVE.replace("frequency = 0.05", "frequency = 0.02"));
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("default 1.5 / frequency) 7.5e1"), "{w:?}");
}

#[test]
fn a_step_count_past_any_counter_is_refused_not_overflowed() {
    // 2·10^301 steps: cast to u64 it saturates, and the output planning overflowed on it.
    let heat = HEAT
        .replace("[initial]\nnpy = \"init.npy\"\n", "")
        .replace("duration = 2.0", "duration = 1e300");
    let e = case_error(&heat);
    assert!(e.contains("time.duration") && e.contains("steps"), "{e}");
    let fdtd = "physics = \"fdtd\"\n[grid]\nshape = [8, 8, 8]\nspacing = [0.1, 0.1, 0.1]\n\
                [time]\ncfl = 0.5\nduration = 1e300\n[fdtd]\nboundary = [\"pec\", \"pec\", \
                \"pec\"]\n[output]\ndir = \"out\"\nevery = 10\n";
    let e = case_error(fdtd);
    assert!(e.contains("time.duration") && e.contains("steps"), "{e}");
}

/// `material.density` belongs to wave cases and must be positive; a density case's time step
/// is checked against the variable-density limit (lower where the density jumps).
#[test]
fn density_is_checked_before_any_work() {
    let heat = HEAT.replace(
        "diffusivity = { constant = 1.0 }",
        "diffusivity = { constant = 1.0 }\ndensity = { constant = 2.0 }",
    );
    let e = case_error(&heat.replace("[initial]\nnpy = \"init.npy\"\n", ""));
    assert!(
        e.contains("material.density") && e.contains("only wave cases"),
        "{e}"
    );
    let wave = |density: &str| {
        WAVE.replace(
            "velocity = { constant = 1.0 }",
            &format!("velocity = {{ constant = 1.0 }}\ndensity = {density}"),
        )
    };
    let e = case_error(&wave("{ constant = -1.0 }"));
    assert!(
        e.contains("material.density") && e.contains("positive"),
        "{e}"
    );
    // A jump from 1 to 100 raises c_eff tenfold: a dt stable without it is refused.
    let layered = "{ layered = { axis = 0, tops = [0.0, 40.0], values = [1.0, 100.0] } }";
    let dt = 0.3;
    let stable = wave("{ constant = 3.0 }").replace("cfl = 0.5", &format!("dt = {dt}"));
    let case = Case::parse(&stable, "c.toml".into()).unwrap();
    validate(&case, &quiet(&std::env::temp_dir())).unwrap();
    let e = case_error(&wave(layered).replace("cfl = 0.5", &format!("dt = {dt}")));
    assert!(
        e.contains("variable-density step") && e.contains("c_eff"),
        "{e}"
    );
}
