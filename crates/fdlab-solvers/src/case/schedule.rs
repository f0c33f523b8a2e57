//! The case file's `schedule = "NAME"` key: the GPU schedule a run uses in place of the
//! device's defaults (docs/schedules.md lists the fields), read as the schedule's name and
//! refused when it is another physics'.

use super::{Case, Physics};
use crate::error::{Error, Result};
use crate::gpu::schedule::Schedule;

/// The physics a schedule family belongs to.
fn physics_of(s: &Schedule) -> Physics {
    match s {
        Schedule::Heat(_) => Physics::Heat,
        Schedule::Wave(_) => Physics::Wave,
        Schedule::Fdtd(_) => Physics::Fdtd,
    }
}

/// The name of a physics as the case file writes it.
fn name(p: Physics) -> &'static str {
    match p {
        Physics::Heat => "heat",
        Physics::Wave => "wave",
        Physics::Fdtd => "fdtd",
    }
}

/// Refuses a `schedule` of another physics than the case's, naming the key and its line.
pub(super) fn check(case: &Case) -> Result<()> {
    let s = &case.spec;
    match &s.schedule {
        Some(given) if physics_of(given) != s.physics => Err(Error::Case {
            path: case.path.clone(),
            detail: format!(
                "schedule = \"{given}\"{}: a {} schedule for physics = \"{}\"; give one that \
                 starts with \"{}\", e.g. schedule = \"{}\"",
                case.line_of("schedule"),
                given.family(),
                name(s.physics),
                name(s.physics),
                name(s.physics),
            ),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use crate::case::Case;

    const HEAT: &str = "physics = \"heat\"\nboundary = \"periodic\"\n{SCHEDULE}\n\
        [grid]\nshape = [16, 16]\nspacing = [1.0, 1.0]\n[time]\ncfl = 0.5\nduration = 1.0\n\
        [output]\ndir = \"out\"\nevery = 100\n";

    fn parse(schedule: &str) -> crate::error::Result<Case> {
        Case::parse(&HEAT.replace("{SCHEDULE}", schedule), "<test>".into())
    }

    #[test]
    fn a_case_names_its_schedule_and_a_wrong_one_is_refused_by_key() {
        let case = parse("schedule = \"heat:pass=off\"").expect("a heat schedule");
        let s = case.spec.schedule.expect("given");
        assert_eq!(s.to_string(), "heat:pass=off");
        assert!(parse("").expect("no schedule").spec.schedule.is_none());
        let wrong = parse("schedule = \"fdtd:pass=off\"")
            .unwrap_err()
            .to_string();
        assert!(
            wrong.contains("schedule = \"fdtd:pass=off\" (line 3)") && wrong.contains("heat"),
            "{wrong}"
        );
        let bad = parse("schedule = \"heat:launch=64x64x8\"")
            .unwrap_err()
            .to_string();
        assert!(
            bad.contains("schedule") && bad.contains("1024 threads"),
            "{bad}"
        );
    }
}
