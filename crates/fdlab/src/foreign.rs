//! Plans applied to memory the caller owns, with no copy: borrowed host slices
//! ([`Plan::apply_host`], e.g. NumPy arrays) and device memory of other libraries
//! ([`Plan::apply_foreign`], e.g. CuPy arrays or PyTorch tensors). What bindings (fdlab-py)
//! need beyond [`Plan::apply`], whose fields the backend owns.

use crate::error::{Error, Result};
use crate::field::Real;
use crate::plan::{Kind, Plan};
use fdlab_core::{FieldView, FieldViewMut};
use fdlab_cpu::Par;
use fdlab_cuda::ForeignField;

impl<T: Real> Plan<T> {
    /// Apply a CPU plan to borrowed host memory: `input` and one output view per stencil, on
    /// the plan's grid (the fast executor, on all threads, as [`Plan::apply`]).
    ///
    /// ```
    /// use fdlab::{Axis, Backend, Boundary, FieldView, FieldViewMut, Grid, PlanOptions, Stencil};
    /// let g = Grid::unit(&[8, 4])?;
    /// let dx = Stencil::derivative(&g, Axis::X, 1, 2)?;
    /// let plan = Backend::cpu().plan::<f64>(&[dx], Boundary::Periodic, &g, PlanOptions::default())?;
    /// let (u, mut du) = (vec![1.0; 32], vec![f64::NAN; 32]);
    /// plan.apply_host(FieldView::new(&g, &u)?, &mut [FieldViewMut::new(&g, &mut du)?])?;
    /// assert!(du.iter().all(|v| v.abs() < 1e-12));
    /// # Ok::<(), fdlab::Error>(())
    /// ```
    pub fn apply_host(
        &self,
        input: FieldView<'_, T>,
        outputs: &mut [FieldViewMut<'_, T>],
    ) -> Result<()> {
        let Kind::Cpu { stencils, boundary } = &self.kind else {
            return Err(Error::WrongBackend {
                expected: self.backend().name(),
                got: "cpu",
            });
        };
        if outputs.len() != self.outputs() {
            return Err(Error::OutputCount {
                expected: self.outputs(),
                got: outputs.len(),
            });
        }
        let shape = |what, got: [usize; 3]| {
            if got == self.grid().shape() {
                Ok(())
            } else {
                Err(Error::Shape {
                    what,
                    expected: self.grid().shape(),
                    got,
                })
            }
        };
        shape("input", input.grid().shape())?;
        for o in outputs.iter() {
            shape("output", o.grid().shape())?;
        }
        fdlab_cpu::fast::apply(stencils, *boundary, input, outputs, Par::Rayon)?;
        Ok(())
    }

    /// Queue a CUDA plan on device memory the caller owns: `input` and one output per
    /// stencil, on `stream` (a raw `CUstream`; `None`: fdlab's own stream). Check the
    /// arrays first with [`check_foreign`](crate::check_foreign) and
    /// [`Plan::foreign_alignment`].
    ///
    /// # Safety
    /// As `fdlab_cuda::Plan::apply_foreign`: the pointers must address live device memory of
    /// the plan's device, of the plan's shape and precision, that stays allocated until the
    /// kernel queued on `stream` has run.
    pub unsafe fn apply_foreign(
        &self,
        input: ForeignField,
        outputs: &[ForeignField],
        stream: Option<u64>,
    ) -> Result<()> {
        let Kind::Cuda(plan) = &self.kind else {
            return Err(Error::WrongBackend {
                expected: "cpu",
                got: "cuda",
            });
        };
        // SAFETY: forwarded to the caller.
        unsafe { plan.apply_foreign(input, outputs, stream)? };
        Ok(())
    }

    /// The alignment in bytes a CUDA plan needs of the arrays given to
    /// [`Plan::apply_foreign`]; an error for a CPU plan.
    pub fn foreign_alignment(&self) -> Result<usize> {
        match &self.kind {
            Kind::Cuda(plan) => Ok(plan.foreign_alignment()?),
            Kind::Cpu { .. } => Err(Error::GpuOnly {
                option: "foreign device memory",
            }),
        }
    }
}

/// The number of usable CUDA devices, or why there is none (no driver, no device): the probe
/// [`Backend::auto`](crate::Backend::auto) relies on, without opening a device.
pub fn cuda_devices() -> Result<usize> {
    Ok(fdlab_cuda::probe()?)
}
