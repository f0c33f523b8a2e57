//! Two FDTD steps in one pass on the host ([`fdlab_cuda::codegen::solver::fdtd::pass`]): the kernels, the
//! second copy of the E-side ψ, and the launch, which ends with the second step's sources
//! and probes.

use super::blocks::{flat, periodic, within, Blocks};
use super::{coefficients, fused_args, CpmlAxis, FdtdGpu};
use crate::error::Result;
use crate::fdtd::Boundary;
use crate::gpu::fdtd_dispersive::DrudeCells;
use crate::gpu::fdtd_sources::FdtdSources;
use crate::gpu::{driver, Gpu};
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use fdlab_cuda::codegen::solver::fdtd::fused::Box3;
use fdlab_cuda::codegen::solver::fdtd::pass::TWO_STEPS;
use fdlab_cuda::{CudaScalar, Kernel};
use std::sync::Arc;

/// The two-step pass: its kernel, blocks, and the arrays the new E-side ψ goes to (swapped
/// with the current ones after each pass; the one-step pass updates E-side ψ in place).
pub(super) struct Pass<T> {
    kernel: Arc<Kernel>,
    blocks: Blocks,
    next_psi_e: Vec<[CudaSlice<T>; 2]>,
    /// Whether the kernel applies the first step's point sources and probes.
    points: bool,
    /// Where the case has Drude media: what the pass needs to advance their currents.
    drude: Option<PassDrude>,
    /// Where only some blocks run the Drude terms: those blocks and their kernel.
    drude_blocks: Option<DrudeBlocks>,
    /// Whether `kernel` was generated with the Drude terms, where the case has any.
    main_drude: bool,
    /// Where `kernel` skips a second box of blocks (`FdtdSources::pass_layers`): that box.
    also: Option<[i32; 6]>,
}

/// The blocks whose cells (their halo included) reach the box of Drude cells, and the pass
/// with the Drude terms (without the CPML's) that steps them. The kernels for the other blocks
/// were generated without those terms: the core blocks' kernel, and with no CPML the kernel
/// over the whole grid, which then skips these blocks. With a CPML only the core blocks among
/// these run this kernel; the kernel over the whole grid is `FdtdSources::pass_layers`,
/// without the Drude terms, which skips all of these blocks, and the layer blocks among them
/// run `layers`, with both terms. A block that runs no Drude term holds fewer registers: in
/// `f32` the kernels are bounded to 48 or 64 of them.
struct DrudeBlocks {
    kernel: Arc<Kernel>,
    /// In the lattice of the main launch.
    reach: Box3,
    /// Where layer blocks reach a Drude cell: the pass with the CPML and Drude terms.
    layers: Option<Arc<Kernel>>,
}

impl DrudeBlocks {
    /// The launch of their kernel over the box `r` of blocks of the main launch's lattice.
    fn over<'a>(&'a self, blocks: &Blocks, n: [usize; 3], r: &Box3) -> Launch<'a> {
        Launch::beside(&self.kernel, blocks.over(n, r, None), false, true)
    }
}

/// The Drude cells as the pass reads them: per E component one byte per cell of the box of
/// Drude cells (0, or the medium's index + 1) and the arrays the new currents go to
/// (swapped with the current ones after each pass).
struct PassDrude {
    media: Vec<CudaSlice<u8>>,
    next_j: Vec<CudaSlice<f64>>,
    bounds: [i32; 6],
}

impl<T: CudaScalar> Pass<T> {
    /// The pass for a case whose kernels hold one, `None` otherwise, when its Drude media are
    /// more than a byte can name, or when the second copies of the E-side ψ and the Drude
    /// currents do not fit in the GPU's free memory (the steps then run one a pass).
    pub(super) fn new(
        gpu: &Gpu,
        src: &FdtdSources,
        n: [usize; 3],
        boundary: [Boundary; 3],
        cpml: &[CpmlAxis<T>],
        points: bool,
        drude: Option<&DrudeCells>,
    ) -> Result<Option<Self>> {
        let Some(pass) = &src.pass else {
            return Ok(None);
        };
        let thickness = boundary.map(|b| b.cpml().map(|p| p.thickness));
        let media = match drude.map(DrudeCells::box_media) {
            Some(None) => return Ok(None),
            Some(Some(m)) => Some(m),
            None => None,
        };
        let slabs: usize = cpml.iter().map(|c| 2 * c.psi_e[0].len()).sum();
        let currents: usize = media.iter().flatten().map(|m| m.len() * 9).sum();
        let need = slabs * std::mem::size_of::<T>() + currents;
        if gpu.dev.ensure_free(need as u64 + (256 << 20)).is_err() {
            return Ok(None);
        }
        let mut blocks = Blocks::lay_out(
            gpu,
            src.pass_launch,
            3,
            TWO_STEPS,
            n,
            thickness,
            src.pass_core.as_ref(),
            &src.choices,
        )?;
        let mut drude_blocks =
            match (&src.pass_drude, drude) {
                (Some(k), Some(d)) => {
                    let (lo, n_) = (d.bounds.lo, d.bounds.n);
                    let cells: Box3 = std::array::from_fn(|a| lo[a]..lo[a] + n_[a]);
                    Some(DrudeBlocks {
                        kernel: gpu.kernel(k)?,
                        reach: blocks.reaching(n, periodic(boundary), TWO_STEPS, &cells),
                        layers: None,
                    })
                }
                (Some(_), None) => return Err(crate::error::Error::Invalid(
                    "the two-step kernels were generated for Drude media the stepper does not hold"
                        .into(),
                )),
                _ => None,
            };
        let c = &src.choices;
        if drude_blocks.is_some() && c.drude_stream {
            blocks.add_lane(gpu, c.drude_first)?;
        }
        let next_psi_e = super::blocks::second_copies(gpu, cpml.iter().map(|c| c.psi_e[0].len()))?;
        let drude = match (drude, media) {
            (Some(d), Some(media)) => Some(PassDrude {
                next_j: media
                    .iter()
                    .map(|m| gpu.zeros(m.len()))
                    .collect::<Result<_>>()?,
                media: media.iter().map(|m| gpu.upload(m)).collect::<Result<_>>()?,
                bounds: d.bounds.args(),
            }),
            _ => None,
        };
        // The main launch's kernel without the Drude terms: it skips the blocks that reach a
        // Drude cell, and the layer blocks among them run the pass with both terms in a
        // launch of their own (in `f64` the main kernel keeps the Drude terms where a layer
        // block reaches a Drude cell: see the schedule's `drude-layers`).
        let (main, main_drude, also) =
            match (&src.pass_layers, drude_blocks.as_mut(), blocks.core_box()) {
                (Some(k), Some(db), Some(core)) if within(&db.reach, core) || c.drude_layers => {
                    let also = match within(&db.reach, core) {
                        true => [0; 6],
                        false => {
                            db.layers = Some(gpu.kernel(pass)?);
                            flat(&db.reach)
                        }
                    };
                    (k, false, Some(also))
                }
                _ => (pass, true, None),
            };
        if drude_blocks.as_ref().is_some_and(|db| db.layers.is_some()) && c.drude_stream {
            blocks.add_lane(gpu, c.drude_first)?;
        }
        Ok(Some(Pass {
            kernel: gpu.kernel(main)?,
            main_drude,
            also,
            blocks,
            next_psi_e,
            points,
            drude,
            drude_blocks,
        }))
    }
}

impl<T: CudaScalar> FdtdGpu<T> {
    /// Whether the case runs two steps a pass.
    pub(super) fn has_pass(&self) -> bool {
        self.fused.as_ref().is_some_and(|f| f.pass.is_some())
    }

    /// Queue steps `i` and `i + 1` of the call as one pass, then the second step's sources and
    /// probes. The caller checks [`FdtdGpu::has_pass`].
    pub(super) fn queue_pass(&mut self, i: usize) -> Result<()> {
        let [nx, ny, nz] = self.n.map(|v| v as i32);
        let dims = [nx, ny, nz];
        let stream = self.gpu.stream.clone();
        let Some(fu) = self.fused.as_mut() else {
            return Ok(());
        };
        let Some(pass) = fu.pass.as_mut() else {
            return Ok(());
        };
        let f = &mut self.f;
        let coef = coefficients(&self.media, &self.ca, &self.cb);
        let row = i as i32;
        let launches = launches(
            (
                &pass.kernel,
                &pass.blocks,
                pass.drude_blocks.as_ref(),
                pass.also,
            ),
            self.n,
            !self.cpml.is_empty(),
            self.drude.is_some() && pass.main_drude,
        );
        let lanes = pass.blocks.fork(&stream)?;
        let mut beside = 0;
        for Launch {
            kernel,
            bounds,
            cfg,
            main,
            cpml,
            drude,
            also,
        } in launches
        {
            let on = match main {
                true => &stream,
                false => {
                    beside += 1;
                    lanes[(beside - 1).min(lanes.len() - 1)]
                }
            };
            let mut b = on.launch_builder(kernel.function());
            fused_args(&mut b, &mut fu.next, f, coef, &dims, &bounds);
            for v in also.iter().flatten() {
                b.arg(v);
            }
            if pass.points {
                let Some(pt) = self.points.as_mut() else {
                    return Err(crate::error::Error::Invalid(
                        "the two-step kernel takes point sources the stepper does not hold".into(),
                    ));
                };
                pt.args(&mut b, &row);
            }
            let psi = self
                .cpml
                .iter()
                .zip(fu.next_psi_h.iter_mut())
                .zip(pass.next_psi_e.iter_mut())
                .filter(|_| cpml);
            for ((c, next_h), next_e) in psi {
                let [o0, o1] = &c.psi_h;
                let [n0, n1] = next_h;
                b.arg(o0).arg(o1).arg(n0).arg(n1).arg(&c.coef_h);
                let [o0, o1] = &c.psi_e;
                let [n0, n1] = next_e;
                b.arg(o0).arg(o1).arg(n0).arg(n1).arg(&c.coef_e);
            }
            if let (Some(pd), Some(d), true) = (pass.drude.as_mut(), self.drude.as_ref(), drude) {
                for m in &pd.media {
                    b.arg(m);
                }
                b.arg(&d.kb);
                for br in &d.branches {
                    b.arg(&br.j);
                }
                for next in pd.next_j.iter_mut() {
                    b.arg(next);
                }
                for v in &pd.bounds {
                    b.arg(v);
                }
            }
            // SAFETY: the arguments match the generated signature (point arrays where it was
            // generated with them, CPML axes in its order where it has their terms); every
            // array holds the grid's cells, an axis's slab and profile, the call's source
            // values and probe rows (`Points::prepare` sized them for the call's steps,
            // `row + 1` among them), or the box of Drude cells (media, currents; `bounds` its
            // corner and sizes); old and new arrays are distinct and each thread writes only
            // the cells it owns. A core launch steps blocks the first one skipped.
            unsafe { b.launch(cfg) }.map_err(driver("cuLaunchKernel"))?;
        }
        pass.blocks.join(&stream)?;
        std::mem::swap(f, &mut fu.next);
        for ((c, next_h), next_e) in self
            .cpml
            .iter_mut()
            .zip(fu.next_psi_h.iter_mut())
            .zip(pass.next_psi_e.iter_mut())
        {
            std::mem::swap(&mut c.psi_h, next_h);
            std::mem::swap(&mut c.psi_e, next_e);
        }
        if let (Some(pd), Some(d)) = (pass.drude.as_mut(), self.drude.as_mut()) {
            for (br, next) in d.branches.iter_mut().zip(pd.next_j.iter_mut()) {
                std::mem::swap(&mut br.j, next);
            }
        }
        self.queue_points(i + 1)
    }
}

/// One launch of a pass: its kernel, bounds and shape, whether it is the main launch (the
/// others run on the streams beside it), whether its kernel takes the CPML's and the Drude
/// arguments, and the second box of blocks it skips where it takes one.
struct Launch<'a> {
    kernel: &'a Arc<Kernel>,
    bounds: [i32; 12],
    cfg: LaunchConfig,
    main: bool,
    cpml: bool,
    drude: bool,
    also: Option<[i32; 6]>,
}

impl<'a> Launch<'a> {
    /// A launch beside the main one: `kernel` over `bounds` in `cfg`'s blocks, with the
    /// CPML's and the Drude arguments where its kernel takes them, and no second box.
    fn beside(
        kernel: &'a Arc<Kernel>,
        (bounds, cfg): ([i32; 12], LaunchConfig),
        cpml: bool,
        drude: bool,
    ) -> Self {
        Launch {
            kernel,
            bounds,
            cfg,
            main: false,
            cpml,
            drude,
            also: None,
        }
    }
}

/// The launches of a pass (its main kernel, blocks and Drude blocks) over a grid of `n` cells,
/// in order, for a case with or without a CPML and Drude media (see [`DrudeBlocks`]).
fn launches<'a>(
    (main, blocks, split, also): (
        &'a Arc<Kernel>,
        &'a Blocks,
        Option<&'a DrudeBlocks>,
        Option<[i32; 6]>,
    ),
    n: [usize; 3],
    cpml: bool,
    drude: bool,
) -> Vec<Launch<'a>> {
    let (mut bounds, cfg) = blocks.main(n);
    if let (Some(db), false) = (split, cpml) {
        let skip = flat(&db.reach);
        bounds[6..].copy_from_slice(&skip);
    }
    let mut out = vec![Launch {
        kernel: main,
        bounds,
        cfg,
        main: true,
        cpml,
        drude: drude && (cpml || split.is_none()),
        also,
    }];
    let core = blocks.core_box().zip(blocks.core(n));
    match (split, cpml) {
        (Some(db), true) => {
            let Some((c, (kernel, _, _))) = core else {
                // No core launch: the main kernel, with the Drude terms, steps every block.
                return out;
            };
            // The blocks of the core box that reach a Drude cell, in the lattice and
            // relative to the box.
            let both: Box3 = std::array::from_fn(|a| {
                db.reach[a].start.max(c[a].start)..db.reach[a].end.min(c[a].end)
            });
            let any = both.iter().all(|r| !r.is_empty());
            let over = blocks.over(n, c, any.then_some(&relative(&both, c)));
            out.push(Launch::beside(kernel, over, false, false));
            if any {
                out.push(db.over(blocks, n, &both));
            }
            // The layer blocks that reach a Drude cell, which the main launch skipped.
            if let Some(k) = &db.layers {
                let skip = relative(&both, &db.reach);
                let over = blocks.over(n, &db.reach, any.then_some(&skip));
                out.push(Launch::beside(k, over, true, true));
            }
        }
        (Some(db), false) => {
            if db.reach.iter().all(|r| !r.is_empty()) {
                out.push(db.over(blocks, n, &db.reach));
            }
        }
        (None, _) => {
            if let Some((_, (kernel, bounds, cfg))) = core {
                out.push(Launch::beside(kernel, (bounds, cfg), false, drude));
            }
        }
    }
    out
}

/// The box `inner` (within `outer`, or empty) relative to `outer`'s first block.
fn relative(inner: &Box3, outer: &Box3) -> Box3 {
    std::array::from_fn(|a| {
        let start = inner[a].start.max(outer[a].start);
        start - outer[a].start..inner[a].end.max(start) - outer[a].start
    })
}
