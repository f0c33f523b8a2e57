//! The FDTD stepper's kernels: which ones a case needs ([`super::fdtd_choices`]), generated
//! with the tiles and switches of its schedule's choices.

use super::fdtd_choices::single_steps_because;
use super::schedule::{FdtdChoices, FdtdSchedule};
use super::{cuda_type, precision_of};
use crate::error::Result;
use crate::fdtd::FdtdSetup;
use fdlab_cuda::codegen::solver::fdtd::{self as kernels, fused, FdtdSpec, KernelChoices};
use fdlab_cuda::codegen::solver::fdtd::{fused::Core, lower::LoweredFdtd, pass as two_step};
use fdlab_cuda::codegen::solver::Launch;
use fdlab_cuda::codegen::CudaSource;
use fdlab_cuda::CudaScalar;

/// The kernels of an FDTD stepper.
pub(super) struct FdtdSources {
    /// The H half step.
    pub h: CudaSource,
    /// The E half step.
    pub e: CudaSource,
    /// The whole step in one pass.
    pub fused: CudaSource,
    /// The tile `fused` and `fused_core` were generated for (threads less the halo).
    pub fused_launch: Launch,
    /// With CPML layers, the same without their terms, for the blocks clear of them.
    pub fused_core: Option<CudaSource>,
    /// Two steps in one pass, where the case allows ([`single_steps_because`]).
    pub pass: Option<CudaSource>,
    /// The tile of `pass` and `pass_core`.
    pub pass_launch: Launch,
    /// The choices the kernels were generated with.
    pub choices: FdtdChoices,
    /// With CPML layers and a launch of their own, the pass for the blocks clear of them.
    pub pass_core: Option<CudaSource>,
    /// With Drude media, the pass with their terms for the blocks that reach a Drude cell;
    /// `pass_core`, and `pass` where the case has no CPML, then have no such terms.
    pub pass_drude: Option<CudaSource>,
    /// With Drude media and a CPML, `pass` without the Drude terms: the main launch's kernel,
    /// which skips the blocks that reach a Drude cell as well as the core blocks (`pass` then
    /// steps the layer blocks among the former).
    pub pass_layers: Option<CudaSource>,
    /// The end-of-call non-finite scan.
    pub scan: CudaSource,
    /// The Drude currents' update and their term in E, when the case has Drude media.
    pub drude: Option<(CudaSource, CudaSource)>,
    /// The same for Lorentz and Debye media.
    pub poles: Option<(CudaSource, CudaSource)>,
    /// Sources and probes, when the case has any.
    pub after: Option<CudaSource>,
    /// The running DFTs' accumulation, when the case has monitors or flux planes.
    pub dft: Option<CudaSource>,
    /// The plane waves' corrections, when the case has plane waves.
    pub tfsf: Option<CudaSource>,
}

/// Every kernel of `s` in `T` on any device class, each once (to compile them all anywhere).
pub(super) fn all_sources<T: CudaScalar>(s: &FdtdSetup) -> Result<Vec<CudaSource>> {
    let mut out: Vec<CudaSource> = vec![];
    for (class, indexed) in super::DEVICE_CLASSES
        .iter()
        .flat_map(|&c| [(c, true), (c, false)])
    {
        let c = choices::<T>(s, class, &FdtdSchedule::default());
        for src in sources::<T>(s, &c, indexed, true)?.all() {
            if !out.iter().any(|o| o.name == src.name) {
                out.push(src);
            }
        }
    }
    Ok(out)
}

impl FdtdSources {
    pub(super) fn all(self) -> Vec<CudaSource> {
        [self.h, self.e, self.fused, self.scan]
            .into_iter()
            .chain(self.fused_core)
            .chain(self.pass)
            .chain(self.pass_core)
            .chain(self.pass_drude)
            .chain(self.pass_layers)
            .chain(self.after)
            .chain(self.dft)
            .chain(self.tfsf)
            .chain(self.drude.into_iter().flat_map(|(a, b)| [a, b]))
            .chain(self.poles.into_iter().flat_map(|(a, b)| [a, b]))
            .collect()
    }
}

/// The choices for `s` in `T` on a device of `class`: the fields `schedule` sets, the rest
/// the class's defaults.
pub(super) fn choices<T: CudaScalar>(
    s: &FdtdSetup,
    class: Option<&str>,
    schedule: &FdtdSchedule,
) -> FdtdChoices {
    let cpml = s.grid.boundary.iter().any(|b| b.cpml().is_some());
    schedule.over(FdtdChoices::choose(std::mem::size_of::<T>(), cpml, class))
}

/// The kernels of `s` in `T` with the choices `c`; the one-pass kernels read a medium index
/// per cell where `indexed` (see [`FdtdSpec::indexed`]); with `pass`, two steps a pass where
/// the case and the choices allow them.
pub(super) fn sources<T: CudaScalar>(
    s: &FdtdSetup,
    c: &FdtdChoices,
    indexed: bool,
    pass: bool,
) -> Result<FdtdSources> {
    let ty = cuda_type::<T>();
    let precision = precision_of::<T>();
    let l = c.half_tile.launch();
    // The physics comes from the case's step description, the layout from the schedule.
    let grid = fdlab_core::Grid::new(&s.grid.n, &s.grid.spacing)?;
    let lowered = LoweredFdtd::of(&s.description()?, &grid)?;
    let choices = KernelChoices {
        interior: c.interior,
        drude_loads: c.drude_loads,
        drude_carry: c.drude_carry,
        drude_ahead: c.drude_ahead,
    };
    let spec = lowered.spec(ty, l, indexed, choices);
    let flat = Launch::flat(256);
    let has_cpml = spec.cpml.iter().any(|c| c.is_some());
    // Blocks clear of the layers run without the CPML terms.
    let split = has_cpml && c.core;
    let bytes = std::mem::size_of::<T>();
    let main = c.fused_tile.launch();
    let merged = split
        && if indexed {
            c.merged_indexed
        } else {
            c.merged_coefficients
        };
    let with_halo = |l: Launch| Launch {
        bx: l.bx + 1,
        by: l.by + 1,
        ..l
    };
    let has_points = !(s.sources.is_empty() && s.hard_sources.is_empty() && s.probes.is_empty());
    let (pass_tile, pass_blocks, core_blocks) =
        (c.pass_tile.launch(), c.pass_blocks, c.pass_core_blocks);
    let drude_blocks = c.pass_drude_blocks;
    let pass_split = split && !c.pass_merged;
    let two = |spec: &FdtdSpec, core: Core, stem: &str, blocks: u32, also: bool| {
        super::source(
            stem,
            &two_step::two_steps(
                &FdtdSpec {
                    launch: pass_tile,
                    min_blocks: blocks,
                    ..spec.clone()
                },
                core,
                has_points,
                two_step::narrow_enough(s.grid.n),
                also,
            ),
            precision,
            Launch {
                bx: pass_tile.bx + 3,
                by: pass_tile.by + 3,
                ..pass_tile
            },
        )
    };
    let pass_fits = two_step::shared_bytes(pass_tile.bx, pass_tile.by, bytes, indexed) <= 48 * 1024;
    let with_pass = pass && single_steps_because(s, c).is_none() && pass_fits;
    // The Drude terms only in the blocks that reach a Drude cell: with a CPML, among the core
    // blocks in their own launch; without one, among all.
    let drude_split = spec.drude && c.drude_split && if has_cpml { pass_split } else { true };
    // The kernels over blocks clear of the CPML layers: the core blocks', and with a CPML the
    // Drude blocks' (its launch covers only core blocks, those that reach a Drude cell).
    let clear = spec.clear_of_layers();
    Ok(FdtdSources {
        pass: with_pass.then(|| {
            let core = if pass_split { Core::Skip } else { Core::Here };
            let whole = FdtdSpec {
                drude: spec.drude && (has_cpml || !drude_split),
                ..spec.clone()
            };
            two(
                &whole,
                if split { core } else { Core::Skip },
                "fdtd_pass",
                pass_blocks,
                false,
            )
        }),
        pass_launch: pass_tile,
        pass_core: (with_pass && pass_split).then(|| {
            let plain = FdtdSpec {
                drude: spec.drude && !drude_split,
                ..clear.clone()
            };
            two(&plain, Core::Skip, "fdtd_pass_core", core_blocks, false)
        }),
        pass_drude: (with_pass && drude_split)
            .then(|| two(&clear, Core::Skip, "fdtd_pass_drude", drude_blocks, false)),
        pass_layers: (with_pass && drude_split && has_cpml).then(|| {
            let layers = FdtdSpec {
                drude: false,
                ..spec.clone()
            };
            two(&layers, Core::Skip, "fdtd_pass_layers", pass_blocks, true)
        }),
        h: super::source("fdtd_h", &kernels::h_step(&spec), precision, l),
        e: super::source("fdtd_e", &kernels::e_step(&spec), precision, l),
        fused: super::source(
            "fdtd_step",
            &fused::fused_step(
                &FdtdSpec {
                    launch: main,
                    min_blocks: c.shell_blocks,
                    ..spec.clone()
                },
                if merged { Core::Here } else { Core::Skip },
            ),
            precision,
            with_halo(main),
        ),
        fused_launch: main,
        choices: *c,
        fused_core: (split && !merged).then(|| {
            let core = FdtdSpec {
                launch: main,
                ..clear.clone()
            };
            super::source(
                "fdtd_core",
                &fused::fused_step(&core, Core::Skip),
                precision,
                with_halo(main),
            )
        }),
        scan: super::source("fdtd_scan", &kernels::scan(ty), precision, flat),
        drude: spec.drude.then(|| {
            (
                super::source("fdtd_drude_j", &kernels::drude_advance(ty), precision, flat),
                super::source("fdtd_drude_e", &kernels::drude_apply(ty), precision, flat),
            )
        }),
        poles: s
            .boxes
            .iter()
            .any(|b| (b.lorentz.is_some() || b.debye.is_some()) && !b.pec)
            .then(|| {
                (
                    super::source("fdtd_poles_p", &kernels::poles_advance(ty), precision, flat),
                    super::source("fdtd_poles_e", &kernels::poles_apply(ty), precision, flat),
                )
            }),
        after: has_points.then(|| {
            super::source(
                "fdtd_after",
                &kernels::after_step(ty),
                precision,
                Launch { bx: 32, ..flat },
            )
        }),
        dft: (!(s.monitors.is_empty() && s.fluxes.is_empty()))
            .then(|| super::fdtd_monitors::source(ty, precision)),
        tfsf: (!s.plane_waves.is_empty()).then(|| super::fdtd_tfsf::source(ty, precision)),
    })
}

#[cfg(test)]
mod tests {
    use super::{choices, sources};
    use crate::gpu::fdtd_example as example;

    /// With Drude media only the kernel for the blocks that reach a Drude cell has their
    /// terms: with a CPML the kernel over the whole grid keeps them too (for the layer blocks
    /// that reach one), the core blocks' kernel does not, nor the main launch's kernel without
    /// them, which alone skips a second box of blocks; without a CPML neither does the kernel
    /// over the whole grid.
    #[test]
    fn only_the_drude_blocks_kernel_and_the_layer_kernel_hold_the_drude_terms() {
        let terms = |k: &Option<fdlab_cuda::codegen::CudaSource>| {
            k.as_ref()
                .expect("kernel")
                .body
                .contains("__ldg(dkb + 2 * m_x - 2)")
        };
        let sphere = example("fdtd-dipole-sphere.toml");
        let k = sources::<f32>(
            &sphere,
            &choices::<f32>(&sphere, None, &Default::default()),
            true,
            true,
        )
        .expect("kernels");
        assert!(terms(&k.pass) && terms(&k.pass_drude) && !terms(&k.pass_core));
        let layers = k.pass_layers.as_ref().expect("the layers' kernel");
        assert!(!terms(&k.pass_layers) && layers.body.contains("psi_eo_"));
        let also = |k: &Option<fdlab_cuda::codegen::CudaSource>| {
            k.as_ref().is_some_and(|k| k.body.contains("const int qx0"))
        };
        assert!(also(&k.pass_layers) && !also(&k.pass) && !also(&k.pass_core));
        let mut walls = sphere.clone();
        walls.grid.boundary = [crate::fdtd::Boundary::Pec; 3];
        let media_first = |k: &Option<fdlab_cuda::codegen::CudaSource>| {
            k.as_ref().is_some_and(|k| {
                // In f32 the first step's media went out ahead (`ma_z`).
                let m = k
                    .body
                    .find("const int m_z = __ldg(dm_z + d);")
                    .or_else(|| k.body.find("const int m_z = ma_z;"));
                let j = k
                    .body
                    .find("const double j_x = m_x ? __ldg(jo_x + d) : 0.0;");
                m.is_some() && m < j
            })
        };
        assert!(
            media_first(&k.pass_drude),
            "the media, then the Drude cells' currents"
        );
        let k = sources::<f64>(
            &walls,
            &choices::<f64>(&walls, None, &Default::default()),
            true,
            true,
        )
        .expect("kernels");
        assert!(k.pass_core.is_none() && terms(&k.pass_drude) && !terms(&k.pass));
        assert!(media_first(&k.pass_drude), "in f64 too");
        assert!(k.pass_layers.is_none());
        let plain = example("fdtd-dipole-cpml.toml");
        let k = sources::<f32>(
            &plain,
            &choices::<f32>(&plain, None, &Default::default()),
            true,
            true,
        )
        .expect("kernels");
        assert!(k.pass_drude.is_none() && !terms(&k.pass) && !terms(&k.pass_core));
    }

    /// With a CPML on every axis the core blocks' kernel checks no wall (its blocks lie clear
    /// of the layers); the kernel over the whole grid checks them all.
    #[test]
    fn the_core_kernel_checks_no_wall_of_a_cpml_axis() {
        let plain = example("fdtd-dipole-cpml.toml");
        let k = sources::<f32>(
            &plain,
            &choices::<f32>(&plain, None, &Default::default()),
            true,
            true,
        )
        .expect("kernels");
        let core = &k.pass_core.as_ref().expect("a core kernel").body;
        for line in [
            "const int i = ri;",
            "const int j = rj;",
            "const bool v = true;",
            "const bool wall_x = false;",
            "const bool wall_z = false;",
            "const int ks = k0 - 2;",
            "const bool vzp = true;",
        ] {
            assert!(core.contains(line), "{line}\n{core}");
        }
        let whole = &k.pass.as_ref().expect("a pass").body;
        assert!(whole.contains("const bool wall_x = i == 0;") && whole.contains("max(k0 - 2, 0)"));
        assert!(whole.contains("const bool v = ri >= 0 && ri < nx && rj >= 0 && rj < ny;"));
    }
}
