//! Two FDTD steps in one pass on the host ([`super::super::fdtd_pass`]): the kernels, the
//! second copy of the E-side ψ, and the launch, which ends with the second step's sources
//! and probes.

use super::blocks::Blocks;
use super::{coefficients, fused_args, CpmlAxis, FdtdGpu};
use crate::gpu::fdtd_dispersive::DrudeCells;
use crate::gpu::fdtd_pass::TWO_STEPS;
use crate::gpu::fdtd_sources::FdtdSources;
use crate::gpu::{driver, Gpu};
use crate::Result;
use cudarc::driver::{CudaSlice, PushKernelArg};
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
        thickness: [Option<usize>; 3],
        cpml: &[CpmlAxis<T>],
        points: bool,
        drude: Option<&DrudeCells>,
    ) -> Result<Option<Self>> {
        let Some(pass) = &src.pass else {
            return Ok(None);
        };
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
        let blocks = Blocks::lay_out(
            gpu,
            src.pass_launch,
            3,
            TWO_STEPS,
            n,
            thickness,
            src.pass_core.as_ref(),
        )?;
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
        Ok(Some(Pass {
            kernel: gpu.kernel(pass)?,
            blocks,
            next_psi_e,
            points,
            drude,
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
        let (bounds, cfg) = pass.blocks.main(self.n);
        let core = pass.blocks.core(self.n);
        // The core blocks' own kernel has no CPML parameters: its Drude arguments follow
        // the points directly.
        let launches = std::iter::once((&pass.kernel, bounds, cfg, true))
            .chain(core.map(|(k, bounds, cfg)| (k, bounds, cfg, false)))
            .collect::<Vec<_>>();
        let side = pass.blocks.fork(&stream)?;
        for (kernel, bounds, cfg, layers) in launches {
            let on = if layers { &stream } else { side };
            let mut b = on.launch_builder(kernel.function());
            fused_args(&mut b, &mut fu.next, f, coef, &dims, &bounds);
            if pass.points {
                let Some(pt) = self.points.as_mut() else {
                    return Err(crate::Error::Invalid(
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
                .filter(|_| layers);
            for ((c, next_h), next_e) in psi {
                let [o0, o1] = &c.psi_h;
                let [n0, n1] = next_h;
                b.arg(o0).arg(o1).arg(n0).arg(n1).arg(&c.coef_h);
                let [o0, o1] = &c.psi_e;
                let [n0, n1] = next_e;
                b.arg(o0).arg(o1).arg(n0).arg(n1).arg(&c.coef_e);
            }
            if let (Some(pd), Some(d)) = (pass.drude.as_mut(), self.drude.as_ref()) {
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
