//! Which FDTD kernels a case runs and when two steps share a pass; the tiles, blocks per SM,
//! launches and streams are the FDTD schedule's fields ([`super::schedule::FdtdSchedule`],
//! defaults in its table).

use super::schedule::FdtdChoices;
use crate::fdtd::FdtdSetup;

/// Point sources and probes a two-step pass applies itself at most: each costs every cell a
/// comparison.
const PASS_POINTS: usize = 16;

/// Why `s` runs one step a pass (`None`: two steps a pass suit it). Lorentz and Debye media,
/// monitors and plane waves act between the steps with kernels of their own (the pass
/// advances Drude currents itself); the schedule's `pass=off` asks for single steps.
pub(super) fn single_steps_because(s: &FdtdSetup, c: &FdtdChoices) -> Option<&'static str> {
    let points = s.sources.len() + s.hard_sources.len() + s.probes.len();
    if !c.pass {
        Some("the schedule's pass=off")
    } else if !s.plane_waves.is_empty() {
        Some("plane waves")
    } else if s
        .boxes
        .iter()
        .any(|b| (b.lorentz.is_some() || b.debye.is_some()) && !b.pec)
    {
        Some("Lorentz or Debye media")
    } else if !(s.monitors.is_empty() && s.fluxes.is_empty()) {
        Some("DFT monitors or flux planes")
    } else if points > PASS_POINTS {
        Some("more than 16 point sources and probes")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::single_steps_because as because;
    use crate::gpu::schedule::FdtdChoices;

    fn single_steps_because(s: &crate::fdtd::FdtdSetup) -> Option<&'static str> {
        because(s, &FdtdChoices::choose(8, false, None))
    }
    use crate::gpu::fdtd_example as example;

    /// Cases with only walls, media (Drude ones included), sources and probes run two steps a
    /// pass; Lorentz and Debye media, monitors and plane waves, and too many points, keep one
    /// step a pass, each with its reason.
    #[test]
    fn the_pass_runs_where_nothing_acts_between_the_steps() {
        for two in [
            "fdtd-cavity.toml",
            "fdtd-dipole-cpml.toml",
            "fdtd-dipole-sphere.toml",
        ] {
            assert_eq!(single_steps_because(&example(two)), None, "{two}");
        }
        let mut sphere = example("fdtd-dipole-sphere.toml");
        sphere.boxes[0].lorentz = Some(crate::fdtd::Lorentz {
            delta_eps: 1.0,
            resonance_frequency: 2.0,
            damping: 0.1,
        });
        assert_eq!(
            single_steps_because(&sphere),
            Some("Lorentz or Debye media")
        );
        let drude_slab = example("fdtd-drude-slab.toml");
        assert_eq!(
            single_steps_because(&drude_slab),
            Some("DFT monitors or flux planes")
        );
        let slab = example("fdtd-plane-wave-sphere.toml");
        assert_eq!(single_steps_because(&slab), Some("plane waves"));
        let mut cavity = example("fdtd-cavity.toml");
        let probe = cavity.probes[0];
        cavity.probes = vec![probe; 17 - cavity.sources.len()];
        assert!(single_steps_because(&cavity).is_some_and(|r| r.contains("16")));
        cavity.probes.pop();
        assert_eq!(single_steps_because(&cavity), None);
    }
}
