//! The FDTD cases of the solver conformance suite ([`crate::conformance`]): small odd grids
//! with every boundary kind, dielectric, lossy and PEC regions, soft and hard sources and
//! probes of E and H, each plotting another component.

use crate::error::Result;
use crate::fdtd::{
    Boundary, CellBox, Component, Cpml, FdtdSetup, Grid, PointSource, Shape, Waveform,
};
use rand::rngs::SmallRng;
use rand::Rng;

/// A dielectric (and, when `lossy`, conducting) region with random properties.
fn medium(rng: &mut SmallRng, shape: Shape, lossy: bool) -> CellBox {
    CellBox {
        shape,
        pec: false,
        eps_r: rng.gen_range(1.5..4.0),
        sigma: if lossy { rng.gen_range(0.05..0.3) } else { 0.0 },
        drude: None,
        lorentz: None,
        debye: None,
    }
}

/// A perfect conductor filling `lo ..= hi`.
fn pec(lo: [usize; 3], hi: [usize; 3]) -> CellBox {
    CellBox {
        shape: Shape::Box { lo, hi },
        pec: true,
        eps_r: 1.0,
        sigma: 0.0,
        drude: None,
        lorentz: None,
        debye: None,
    }
}

/// A setup on `grid` with sources at `mid` and `other` (outside any CPML, off the walls),
/// probes of E and H there, and `boxes`.
fn setup(
    grid: Grid,
    boxes: Vec<CellBox>,
    mid: [usize; 3],
    other: [usize; 3],
    plot: Component,
) -> Result<FdtdSetup> {
    let dt = 0.9 * grid.dt_limit();
    let soft = |component, cell, waveform| PointSource {
        component,
        cell,
        waveform,
        amplitude: 1.0,
    };
    Ok(FdtdSetup {
        dt,
        boxes,
        sources: vec![
            soft(Component::Ez, mid, Waveform::Sine { f0: 0.1 }),
            // A second source on the same cell and component: applied after the first.
            soft(
                Component::Ez,
                mid,
                Waveform::Gaussian {
                    t0: 4.0 * dt,
                    tau: 3.0 * dt,
                },
            ),
            soft(
                Component::Ex,
                other,
                Waveform::ModulatedGaussian {
                    f0: 0.12,
                    t0: 5.0 * dt,
                    tau: 4.0 * dt,
                },
            ),
        ],
        hard_sources: vec![soft(
            Component::Ey,
            other,
            Waveform::Ricker {
                f0: 0.15,
                t0: 6.0 * dt,
            },
        )],
        plane_waves: vec![],
        fluxes: vec![],
        probes: vec![
            (Component::Ez, mid),
            (Component::Hy, other),
            (Component::Ey, other),
            (Component::Hz, [mid[0] + 1, mid[1], mid[2]]),
        ],
        monitors: vec![],
        duration: 30.0 * dt,
        plot,
        grid,
    })
}

/// `s` with running DFT monitors: the tangential E on the z plane `z` and H and E on the x
/// plane `x`, at two frequencies each, and a flux plane along y at `y` (node index); the
/// frequencies are the lowest and highest that 10 cells per wavelength and a run of 30 steps
/// allow on the cases' spacing.
fn with_monitors(mut s: FdtdSetup, [x, y, z]: [usize; 3]) -> Result<FdtdSetup> {
    use crate::fdtd::{FluxSpec, MonitorSpec};
    let frequencies = vec![0.07, 0.075];
    s.monitors = vec![
        MonitorSpec {
            axis: 2,
            index: z,
            components: vec![],
            frequencies: frequencies.clone(),
        },
        MonitorSpec {
            axis: 0,
            index: x,
            components: vec![Component::Hy, Component::Ez, Component::Hz],
            frequencies: frequencies.clone(),
        },
    ];
    s.fluxes = vec![FluxSpec {
        axis: 1,
        index: y,
        frequencies,
    }];
    // Checked as a run would check them (a test requires the cases that carry them).
    crate::fdtd::FdtdCpu::<f64>::new(&s)?;
    Ok(s)
}

/// `s` with plane waves through a TFSF box `lo ..= hi` (nodes): one along `axis` (backward when
/// asked) polarized along `pol`, and when `second`, another along the next axis through the
/// same box, so that edges and corners collect corrections from both.
fn with_plane_waves(
    mut s: FdtdSetup,
    lo: [usize; 3],
    hi: [usize; 3],
    (axis, backward, pol): (usize, bool, Component),
    second: bool,
) -> Result<FdtdSetup> {
    use crate::fdtd::PlaneWave;
    let dt = s.dt;
    let wave = |axis, backward, polarization, f0| PlaneWave {
        axis,
        backward,
        polarization,
        lo,
        hi,
        waveform: Waveform::ModulatedGaussian {
            f0,
            t0: 6.0 * dt,
            tau: 3.0 * dt,
        },
        amplitude: 1.0,
    };
    let other = (axis + 1) % 3;
    let other_pol = [Component::Ex, Component::Ey, Component::Ez][(other + 1) % 3];
    s.plane_waves = vec![wave(axis, backward, pol, 0.1)];
    if second {
        s.plane_waves.push(wave(other, !backward, other_pol, 0.08));
    }
    // Checked as a run would check them (a test requires the cases that carry them).
    crate::fdtd::FdtdCpu::<f64>::new(&s)?;
    Ok(s)
}

/// The cases with their names (without the precision and the shape).
pub(crate) fn cases(rng: &mut SmallRng) -> Vec<(String, FdtdSetup)> {
    let spacing = [1.0, 0.8, 1.3];
    let mut out = Vec::new();
    let mut push = |name: &str, s: Result<FdtdSetup>| {
        if let Ok(s) = s {
            out.push((format!("fdtd {name}"), s));
        }
    };
    let cpml = Cpml::new(5);
    let stretched = Cpml {
        kappa_max: 2.0,
        alpha_max: 0.1,
        ..Cpml::new(6)
    };
    let grid = |n, b| Grid::new(n, spacing, b);
    let b1 = vec![
        medium(
            rng,
            Shape::Box {
                lo: [10, 1, 1],
                hi: [16, 11, 9],
            },
            false,
        ),
        medium(
            rng,
            Shape::Box {
                lo: [1, 7, 2],
                hi: [6, 11, 9],
            },
            true,
        ),
        pec([12, 3, 3], [14, 5, 5]),
    ];
    push(
        "PEC dielectric, lossy and PEC boxes Ex",
        grid([19, 13, 11], [Boundary::Pec; 3])
            .and_then(|g| setup(g, b1, [9, 6, 5], [3, 2, 8], Component::Ex))
            .and_then(|s| with_monitors(s, [7, 4, 6])),
    );
    let b2 = vec![medium(
        rng,
        Shape::Sphere {
            center: [8.0, 5.0, 5.0],
            radius: 3.5,
        },
        true,
    )];
    push(
        "periodic lossy sphere Hz",
        grid([17, 12, 9], [Boundary::Periodic; 3])
            .and_then(|g| setup(g, b2, [8, 6, 4], [1, 10, 7], Component::Hz)),
    );
    let b3 = vec![
        medium(
            rng,
            Shape::Box {
                lo: [0, 0, 6],
                hi: [14, 4, 9],
            },
            false,
        ),
        pec([10, 6, 6], [12, 8, 8]),
    ];
    push(
        "periodic x, PEC y, CPML z, dielectric and PEC boxes Ey",
        grid(
            [15, 11, 16],
            [Boundary::Periodic, Boundary::Pec, Boundary::Cpml(cpml)],
        )
        .and_then(|g| setup(g, b3, [7, 5, 8], [2, 3, 6], Component::Ey)),
    );
    let b4 = vec![medium(
        rng,
        Shape::Box {
            lo: [7, 7, 6],
            hi: [10, 9, 12],
        },
        true,
    )];
    push(
        "CPML (stretched along x) lossy box Hx",
        grid(
            [23, 17, 19],
            [
                Boundary::Cpml(stretched),
                Boundary::Cpml(cpml),
                Boundary::Cpml(cpml),
            ],
        )
        .and_then(|g| setup(g, b4, [11, 8, 9], [7, 6, 12], Component::Hx))
        .and_then(|s| with_monitors(s, [9, 8, 10])),
    );
    let b5 = vec![CellBox {
        drude: Some(crate::fdtd::Drude {
            plasma_frequency: 1.0,
            collision_frequency: 0.1,
        }),
        ..medium(
            rng,
            Shape::Sphere {
                center: [8.0, 6.0, 4.0],
                radius: 3.0,
            },
            false,
        )
    }];
    let b6 = vec![
        CellBox {
            lorentz: Some(crate::fdtd::Lorentz {
                delta_eps: 1.5,
                resonance_frequency: 0.8,
                damping: 0.05,
            }),
            ..medium(
                rng,
                Shape::Box {
                    lo: [2, 2, 2],
                    hi: [7, 9, 6],
                },
                false,
            )
        },
        CellBox {
            debye: Some(crate::fdtd::Debye {
                delta_eps: 2.0,
                relaxation_time: 3.0,
            }),
            ..medium(
                rng,
                Shape::Box {
                    lo: [10, 3, 1],
                    hi: [15, 10, 7],
                },
                true,
            )
        },
    ];
    push(
        "PEC Lorentz and Debye boxes Ez",
        grid([18, 13, 9], [Boundary::Pec; 3])
            .and_then(|g| setup(g, b6, [8, 6, 4], [12, 2, 5], Component::Ez)),
    );
    // Plane waves need vacuum on both sides of the box's faces: a box around a dielectric
    // sphere, and a plane source (a box open on every side but its entry face) over CPML.
    let b7 = vec![medium(
        rng,
        Shape::Sphere {
            center: [9.0, 6.8, 9.1],
            radius: 1.8,
        },
        true,
    )];
    push(
        "PEC TFSF box round a lossy sphere, two plane waves Ez",
        grid([19, 17, 15], [Boundary::Pec; 3])
            .and_then(|g| setup(g, b7, [3, 3, 3], [16, 14, 12], Component::Ez))
            .and_then(|s| {
                with_plane_waves(s, [4, 4, 3], [14, 13, 11], (1, true, Component::Ex), true)
            }),
    );
    push(
        "periodic x y, CPML z, plane sources Ey",
        grid(
            [9, 8, 24],
            [Boundary::Periodic, Boundary::Periodic, Boundary::Cpml(cpml)],
        )
        .and_then(|g| setup(g, vec![], [4, 4, 17], [2, 6, 18], Component::Ey))
        .and_then(|s| with_plane_waves(s, [0, 0, 8], [9, 8, 15], (2, false, Component::Ex), false)),
    );
    push(
        "periodic Drude sphere Ex",
        grid([17, 13, 9], [Boundary::Periodic; 3])
            .and_then(|g| setup(g, b5, [3, 6, 4], [13, 2, 6], Component::Ex)),
    );
    // Two Drude media: a box on the PEC wall at y = 0 and a slab across the periodic
    // z axis, between CPML layers along x.
    let drude = |rng: &mut SmallRng, shape, plasma_frequency, collision_frequency| CellBox {
        drude: Some(crate::fdtd::Drude {
            plasma_frequency,
            collision_frequency,
        }),
        ..medium(rng, shape, false)
    };
    let b8 = vec![
        drude(
            rng,
            Shape::Box {
                lo: [7, 0, 2],
                hi: [12, 3, 6],
            },
            1.2,
            0.2,
        ),
        drude(
            rng,
            Shape::Box {
                lo: [6, 8, 0],
                hi: [16, 9, 10],
            },
            0.7,
            0.05,
        ),
    ];
    push(
        "CPML x, PEC y, periodic z, two Drude media Ez",
        grid(
            [22, 13, 11],
            [Boundary::Cpml(cpml), Boundary::Pec, Boundary::Periodic],
        )
        .and_then(|g| setup(g, b8, [10, 6, 5], [14, 11, 8], Component::Ez)),
    );
    // Tall enough along z for GPU blocks clear of the CPML (the core blocks' own kernel),
    // with a Drude slab across the planes where those blocks meet the layers' blocks.
    let b9 = vec![drude(
        rng,
        Shape::Box {
            lo: [0, 0, 30],
            hi: [9, 8, 45],
        },
        0.9,
        0.1,
    )];
    push(
        "periodic x y, CPML z, Drude slab through core blocks Ex",
        grid(
            [10, 9, 72],
            [Boundary::Periodic, Boundary::Periodic, Boundary::Cpml(cpml)],
        )
        .and_then(|g| setup(g, b9, [4, 4, 34], [6, 2, 40], Component::Ex)),
    );
    // Longer, with the slab where only core blocks reach it: the layers' blocks then run a
    // kernel without the Drude terms.
    let b10 = vec![drude(
        rng,
        Shape::Box {
            lo: [0, 0, 48],
            hi: [9, 8, 61],
        },
        0.9,
        0.1,
    )];
    push(
        "periodic x y, CPML z, Drude slab inside the core blocks Ey",
        grid(
            [10, 9, 110],
            [Boundary::Periodic, Boundary::Periodic, Boundary::Cpml(cpml)],
        )
        .and_then(|g| setup(g, b10, [5, 4, 55], [3, 7, 20], Component::Ey)),
    );
    // The benchmark's arrangement in small: long enough along x and z for GPU blocks clear of
    // the CPML and for blocks of the x layers alone; in the second a Drude box reaches the x
    // layer's blocks at x = 0 (not those at the far end) and core blocks.
    let both = [Boundary::Cpml(cpml), Boundary::Pec, Boundary::Cpml(cpml)];
    let b11 = vec![medium(
        rng,
        Shape::Box {
            lo: [30, 2, 14],
            hi: [49, 8, 29],
        },
        true,
    )];
    push(
        "CPML x and z, PEC y, lossy box between the x layers Hy",
        grid([80, 11, 50], both)
            .and_then(|g| setup(g, b11, [8, 5, 22], [70, 4, 25], Component::Hy)),
    );
    let b12 = vec![drude(
        rng,
        Shape::Box {
            lo: [20, 0, 16],
            hi: [39, 10, 27],
        },
        1.1,
        0.1,
    )];
    push(
        "CPML x and z, PEC y, Drude box reaching one x layer's blocks Ez",
        grid([80, 11, 50], both)
            .and_then(|g| setup(g, b12, [72, 5, 20], [10, 3, 24], Component::Ez)),
    );
    out
}

/// Makes the first soft source's current NaN (the non-finite check's input).
pub(crate) fn poison(s: &mut FdtdSetup) {
    if let Some(src) = s.sources.first_mut() {
        src.amplitude = f64::NAN;
    }
}
