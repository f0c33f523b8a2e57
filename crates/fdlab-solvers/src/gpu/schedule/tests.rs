use super::*;
use crate::gpu::DEVICE_CLASSES;

/// Every resolved default, and each with one field changed, prints a name that parses back to
/// the same schedule.
#[test]
fn names_round_trip() {
    let mut names = vec![];
    for class in DEVICE_CLASSES {
        for bytes in [4, 8] {
            for dim in [2, 3] {
                for n in [[9, 7, 5], [64, 64, 64], [512, 512, 512], [384, 384, 384]] {
                    for r in [1, 2, 4] {
                        let h = HeatChoices::choose(dim, r, n, bytes, class, r == 1);
                        names.push(Schedule::Heat(HeatSchedule::of(&h)));
                        let w = WaveChoices::choose(dim, r, n, bytes);
                        names.push(Schedule::Wave(WaveSchedule::of(&w)));
                    }
                }
            }
            for cpml in [false, true] {
                let f = FdtdSchedule::of(&FdtdChoices::choose(bytes, cpml, class));
                names.push(Schedule::Fdtd(f));
                for (i, pass) in [Request::Off, Request::K(3)].into_iter().enumerate() {
                    names.push(Schedule::Heat(HeatSchedule {
                        pass: Some(pass),
                        column: Some(i == 0),
                        ..Default::default()
                    }));
                }
                names.push(Schedule::Fdtd(FdtdSchedule {
                    pass: Some(false),
                    drude_loads: Some(DrudeLoads::AllFirst),
                    drude_carry: Some(DrudeCarry::MediaAndCurrents),
                    ..Default::default()
                }));
                names.push(Schedule::Wave(WaveSchedule {
                    shell_tile: Some(ShellTile::Plane),
                    ..Default::default()
                }));
            }
        }
    }
    names.push(Schedule::Heat(HeatSchedule::default()));
    for s in names {
        let name = s.to_string();
        assert_eq!(name.parse::<Schedule>(), Ok(s.clone()), "{name}");
        let json = serde_json::to_string(&s).expect("serialises");
        assert_eq!(json, format!("\"{name}\""));
        assert_eq!(serde_json::from_str::<Schedule>(&json).expect("parses"), s);
    }
}

#[test]
fn bad_names_say_what_is_allowed() {
    let err = |s: &str| s.parse::<Schedule>().expect_err(s).to_string();
    assert!(err("heat:launch=64x32x8:a0:v4:u0:r0").contains("1024 threads"));
    assert!(err("fdtd:half-tile=32x8x0").contains("BXxBYxPLANES"));
    assert!(err("fdtd:pass-tile=32x30x32").contains("3 halo threads"));
    assert!(err("fdtd:pass=maybe").contains("on or off"));
    assert!(err("fdtd:pass=on,pass=off").contains("twice"));
    assert!(err("wave:tile=3").contains("the fields are launch, pass"));
    assert!(err("heat:load-ahead=4").contains("1, 2 or 3"));
    assert!(err("heat:pass=k9").contains("kK"));
    assert!(err("fdtd:shell-blocks=40").contains("32 blocks"));
    assert!(err("stokes").contains("heat, wave or fdtd"));
    assert!(err("heatx").contains("heat, wave or fdtd"));
    let wave: Schedule = "wave:pass=k2".parse().expect("a wave schedule");
    assert!(wave
        .heat()
        .unwrap_err()
        .to_string()
        .contains("wave schedule"));
}

#[test]
fn heat_shapes_differ_from_the_default_only_where_measured() {
    let n = [64, 64, 64];
    assert_eq!(super::table::heat_launch(3, 1, n, 8, Some("h200")).ahead, 1);
    assert_eq!(
        super::table::heat_launch(3, 1, n, 8, Some("h100")),
        Launch::new(3, 1, n, 8)
    );
    assert_eq!(
        super::table::heat_launch(3, 1, n, 4, Some("h200")),
        Launch::new(3, 1, n, 4)
    );
    assert_eq!(
        super::table::heat_launch(3, 1, n, 8, None),
        Launch::new(3, 1, n, 8)
    );
    // Only the H100's f32 3-D march is unrolled.
    assert_eq!(
        super::table::heat_launch(3, 1, n, 4, Some("h100")).unroll,
        2
    );
    assert_eq!(
        super::table::heat_launch(2, 1, n, 4, Some("h100")).unroll,
        0
    );
    assert_eq!(
        super::table::heat_launch(3, 1, n, 4, None),
        Launch::new(3, 1, n, 4)
    );
}
