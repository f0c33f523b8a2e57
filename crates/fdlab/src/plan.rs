//! Plans: a stencil set, boundary, grid and precision prepared once for a backend.

use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::field::{BackendField, Real, Repr};
use fdlab_core::{Boundary, FieldViewMut, Grid, Stencil};
use fdlab_cpu::Par;
use fdlab_cuda::{Coefficients, Strategy};

/// How to build a [`Plan`]. Every field but the defaults is read by the CUDA backend only;
/// the CPU backend refuses them rather than ignoring them.
///
/// ```
/// let o = fdlab::PlanOptions::default();
/// assert!(o.strategy.is_none() && o.tuned.is_none());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PlanOptions {
    /// Run exactly this CUDA strategy (an error if it cannot run the case).
    pub strategy: Option<Strategy>,
    /// The tuner's winner for this case, tried before the built-in defaults (CUDA). Left
    /// `None`, the device's tune cache (`FDLAB_TUNE_CACHE`, docs/configuration.md) supplies
    /// it when it holds an entry for the case: plans run tuned strategies without this field.
    pub tuned: Option<Strategy>,
    /// How the weights reach the CUDA kernel.
    pub coefficients: Coefficients,
}

impl PlanOptions {
    fn cuda(self) -> fdlab_cuda::PlanOptions {
        fdlab_cuda::PlanOptions {
            strategy: self.strategy,
            tuned: self.tuned,
            coefficients: self.coefficients,
        }
    }

    /// Refuses what only the CUDA backend reads.
    fn check_cpu(&self) -> Result<()> {
        if self.strategy.is_some() {
            return Err(Error::GpuOnly { option: "strategy" });
        }
        if self.tuned.is_some() {
            return Err(Error::GpuOnly {
                option: "tuned strategy",
            });
        }
        if self.coefficients != Coefficients::default() {
            return Err(Error::GpuOnly {
                option: "coefficients",
            });
        }
        Ok(())
    }
}

/// Stencils under a boundary on a grid, in precision `T`, prepared for one backend. Made by
/// [`Backend::plan`]; [`Plan::apply`] runs it on fields of the same backend.
///
/// ```
/// use fdlab::{Axis, Backend, Boundary, Field, Grid, PlanOptions, Stencil};
/// let backend = Backend::cpu();
/// let g = Grid::unit(&[64, 4, 1])?;
/// let dx = Stencil::derivative(&g, Axis::X, 1, 8)?;
/// let plan = backend.plan::<f64>(&[dx], Boundary::Periodic, &g, PlanOptions::default())?;
/// let u = backend.upload(&Field::from_fn(&g, |x| (2.0 * std::f64::consts::PI * x[0]).sin()))?;
/// let mut du = backend.zeros(&g)?;
/// plan.apply(&u, &mut [&mut du])?;
/// let du = du.to_host()?;
/// assert!((du.at(0, 0, 0) - 2.0 * std::f64::consts::PI).abs() < 1e-6);
/// # Ok::<(), fdlab::Error>(())
/// ```
#[derive(Debug)]
pub struct Plan<T: Real> {
    backend: Backend,
    grid: Grid,
    outputs: usize,
    pub(crate) kind: Kind<T>,
}

#[derive(Debug)]
pub(crate) enum Kind<T: Real> {
    Cpu {
        stencils: Vec<Stencil>,
        boundary: Boundary,
    },
    Cuda(Box<fdlab_cuda::Plan<T>>),
}

impl<T: Real> Plan<T> {
    pub(crate) fn new(
        backend: &Backend,
        stencils: &[Stencil],
        boundary: Boundary,
        grid: &Grid,
        opts: PlanOptions,
    ) -> Result<Plan<T>> {
        let kind = match backend.device() {
            None => {
                opts.check_cpu()?;
                for s in stencils {
                    s.check_axes(grid)?;
                }
                boundary.check(grid, stencils)?;
                Kind::Cpu {
                    stencils: stencils.to_vec(),
                    boundary,
                }
            }
            Some(dev) => Kind::Cuda(Box::new(dev.plan::<T>(
                stencils,
                boundary,
                grid,
                opts.cuda(),
            )?)),
        };
        Ok(Plan {
            backend: backend.clone(),
            grid: grid.clone(),
            outputs: stencils.len(),
            kind,
        })
    }

    /// Writes stencil `n` applied to `input` into `outputs[n]`. On CUDA the launch is queued
    /// and not waited for ([`Plan::synchronize`] waits); on the CPU it runs to completion.
    ///
    /// ```
    /// use fdlab::{Backend, Boundary, Field, Grid, PlanOptions, Stencil};
    /// let b = Backend::cpu();
    /// let g = Grid::unit(&[16, 16, 16])?;
    /// let plan = b.plan::<f32>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g, PlanOptions::default())?;
    /// let u = b.upload(&Field::filled(&g, 1.0))?;
    /// let mut lu = b.zeros(&g)?;
    /// plan.apply(&u, &mut [&mut lu])?;
    /// assert!(lu.to_host()?.as_slice().iter().all(|v| v.abs() < 1e-3));
    /// # Ok::<(), fdlab::Error>(())
    /// ```
    pub fn apply(
        &self,
        input: &BackendField<T>,
        outputs: &mut [&mut BackendField<T>],
    ) -> Result<()> {
        if outputs.len() != self.outputs {
            return Err(Error::OutputCount {
                expected: self.outputs,
                got: outputs.len(),
            });
        }
        self.check_shape("input", input)?;
        for o in outputs.iter() {
            self.check_shape("output", o)?;
        }
        match &self.kind {
            Kind::Cpu { stencils, boundary } => {
                let Repr::Host(u) = &input.repr else {
                    return Err(self.wrong(input));
                };
                let mut views: Vec<FieldViewMut<'_, T>> = Vec::with_capacity(outputs.len());
                for o in outputs.iter_mut() {
                    match &mut o.repr {
                        Repr::Host(f) => views.push(f.view_mut()),
                        Repr::Device(_) => {
                            return Err(Error::WrongBackend {
                                expected: "cpu",
                                got: "cuda",
                            })
                        }
                    }
                }
                fdlab_cpu::fast::apply(stencils, *boundary, u.view(), &mut views, Par::Rayon)?;
                Ok(())
            }
            Kind::Cuda(plan) => {
                let Repr::Device(u) = &input.repr else {
                    return Err(self.wrong(input));
                };
                let mut outs = Vec::with_capacity(outputs.len());
                for o in outputs.iter_mut() {
                    match &mut o.repr {
                        Repr::Device(d) => outs.push(d),
                        Repr::Host(_) => {
                            return Err(Error::WrongBackend {
                                expected: "cuda",
                                got: "cpu",
                            })
                        }
                    }
                }
                Ok(plan.apply(u, &mut outs)?)
            }
        }
    }

    fn check_shape(&self, what: &'static str, f: &BackendField<T>) -> Result<()> {
        if f.shape() != self.grid.shape() {
            return Err(Error::Shape {
                what,
                expected: self.grid.shape(),
                got: f.shape(),
            });
        }
        Ok(())
    }

    fn wrong(&self, f: &BackendField<T>) -> Error {
        Error::WrongBackend {
            expected: self.backend.name(),
            got: f.backend_name(),
        }
    }

    /// The CUDA strategy the plan runs; `None` on the CPU.
    ///
    /// ```
    /// use fdlab::{Backend, Boundary, Grid, PlanOptions, Stencil};
    /// let g = Grid::unit(&[8, 8, 8])?;
    /// let p = Backend::cpu().plan::<f64>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g, PlanOptions::default())?;
    /// assert!(p.strategy().is_none());
    /// # Ok::<(), fdlab::Error>(())
    /// ```
    pub fn strategy(&self) -> Option<Strategy> {
        match &self.kind {
            Kind::Cpu { .. } => None,
            Kind::Cuda(p) => Some(p.strategy()),
        }
    }

    /// What runs the plan, for reports: the CUDA strategy's name, or `cpu-fast` on the CPU.
    ///
    /// ```
    /// use fdlab::{Backend, Boundary, Grid, PlanOptions, Stencil};
    /// let g = Grid::unit(&[8, 8, 8])?;
    /// let p = Backend::cpu().plan::<f32>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g, PlanOptions::default())?;
    /// assert_eq!(p.label(), "cpu-fast");
    /// # Ok::<(), fdlab::Error>(())
    /// ```
    pub fn label(&self) -> String {
        match &self.strategy() {
            None => "cpu-fast".into(),
            Some(s) => s.to_string(),
        }
    }

    /// The CUDA plan underneath (generated source, graphs, streams); `None` on the CPU.
    ///
    /// ```
    /// use fdlab::{Backend, Boundary, Grid, PlanOptions, Stencil};
    /// let g = Grid::unit(&[8, 8, 8])?;
    /// let p = Backend::cpu().plan::<f32>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g, PlanOptions::default())?;
    /// assert!(p.cuda().is_none());
    /// # Ok::<(), fdlab::Error>(())
    /// ```
    pub fn cuda(&self) -> Option<&fdlab_cuda::Plan<T>> {
        match &self.kind {
            Kind::Cpu { .. } => None,
            Kind::Cuda(p) => Some(p),
        }
    }

    /// Output fields [`Plan::apply`] takes: one per stencil.
    ///
    /// ```
    /// use fdlab::{Backend, Boundary, Grid, PlanOptions, Stencil};
    /// let g = Grid::unit(&[8, 8, 8])?;
    /// let p = Backend::cpu().plan::<f32>(&Stencil::gradient(&g, 2)?, Boundary::Periodic, &g, PlanOptions::default())?;
    /// assert_eq!(p.outputs(), 3);
    /// # Ok::<(), fdlab::Error>(())
    /// ```
    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// The plan's grid.
    ///
    /// ```
    /// use fdlab::{Backend, Boundary, Grid, PlanOptions, Stencil};
    /// let g = Grid::unit(&[8, 8])?;
    /// let p = Backend::cpu().plan::<f32>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g, PlanOptions::default())?;
    /// assert_eq!(p.grid(), &g);
    /// # Ok::<(), fdlab::Error>(())
    /// ```
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// The backend the plan runs on.
    ///
    /// ```
    /// use fdlab::{Backend, Boundary, Grid, PlanOptions, Stencil};
    /// let g = Grid::unit(&[8, 8])?;
    /// let p = Backend::cpu().plan::<f32>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g, PlanOptions::default())?;
    /// assert_eq!(p.backend().name(), "cpu");
    /// # Ok::<(), fdlab::Error>(())
    /// ```
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// Waits until every apply queued so far has finished (a no-op on the CPU).
    ///
    /// ```
    /// use fdlab::{Backend, Boundary, Grid, PlanOptions, Stencil};
    /// let g = Grid::unit(&[8, 8])?;
    /// let p = Backend::cpu().plan::<f32>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g, PlanOptions::default())?;
    /// p.synchronize()?;
    /// # Ok::<(), fdlab::Error>(())
    /// ```
    pub fn synchronize(&self) -> Result<()> {
        self.backend.synchronize()
    }
}

/// Plans are built by the backend that runs them.
impl Backend {
    /// Builds a plan: `stencils` under `boundary` on `grid`, computed in `T`. On the CPU the
    /// case is validated once; on CUDA the strategy is chosen and its kernel compiled (through
    /// the kernel cache). Options that only CUDA reads are refused on the CPU.
    ///
    /// ```
    /// use fdlab::{Axis, Backend, Boundary, Grid, PlanOptions, Stencil};
    /// let g = Grid::unit(&[16, 8, 4])?;
    /// let dx = Stencil::derivative(&g, Axis::X, 1, 4)?;
    /// let plan = Backend::cpu().plan::<f64>(&[dx], Boundary::Periodic, &g, PlanOptions::default())?;
    /// assert_eq!(plan.outputs(), 1);
    /// # Ok::<(), fdlab::Error>(())
    /// ```
    pub fn plan<T: Real>(
        &self,
        stencils: &[Stencil],
        boundary: Boundary,
        grid: &Grid,
        opts: PlanOptions,
    ) -> Result<Plan<T>> {
        Plan::new(self, stencils, boundary, grid, opts)
    }
}
