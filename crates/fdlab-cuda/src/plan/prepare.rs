//! Compiling the kernels of many plans ahead of building them.
//!
//! A plan compiles its kernel when it is built. A program that builds hundreds of plans (the
//! conformance check, a tuner) would otherwise compile one kernel at a time per builder, and
//! compile twice a kernel that two plans of different shapes share. [`Device::prepare_plans`]
//! compiles each distinct kernel once, on every core, into the device's caches; the plans
//! built afterwards load it from memory.

use super::PlanOptions;
use crate::codegen::{module_source, CudaSource};
use crate::device::Device;
use fdlab_core::{Boundary, Grid, Precision, Stencil};
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The arguments of one [`Device::plan`] call, for [`Device::prepare_plans`].
#[derive(Debug, Clone, Copy)]
pub struct PlanSpec<'a> {
    /// The stencils, one output each.
    pub stencils: &'a [Stencil],
    /// The boundary.
    pub boundary: Boundary,
    /// The grid.
    pub grid: &'a Grid,
    /// The plan's precision (`T` of `Device::plan::<T>`).
    pub precision: Precision,
    /// The plan's options.
    pub opts: PlanOptions,
}

impl Device {
    /// Compiles the kernel that [`Device::plan`] would build for each spec, each distinct
    /// kernel once and all of them in parallel on every core, into this device's kernel
    /// caches (memory, and the disk cache when it is on). Returns how many distinct kernels
    /// the specs need. Specs that a plan would refuse are skipped: building that plan
    /// reports why. A failed compile is left to the plan too, which compiles again and
    /// reports the error.
    ///
    /// ```no_run
    /// use fdlab_core::{Axis, Boundary, Grid, Precision, Stencil};
    /// use fdlab_cuda::{Device, PlanOptions, PlanSpec};
    /// let dev = Device::open(0)?;
    /// let grids: Vec<Grid> = [32, 48, 64].iter().map(|&n| Grid::unit(&[n, n, n])).collect::<Result<_, _>>()?;
    /// let d = Stencil::derivative(&grids[0], Axis::X, 1, 8)?;
    /// let specs: Vec<PlanSpec> = grids
    ///     .iter()
    ///     .map(|g| PlanSpec {
    ///         stencils: std::slice::from_ref(&d),
    ///         boundary: Boundary::Periodic,
    ///         grid: g,
    ///         precision: Precision::F32,
    ///         opts: PlanOptions::default(),
    ///     })
    ///     .collect();
    /// dev.prepare_plans(&specs); // one compile: the three plans share their kernel
    /// for g in &grids {
    ///     let _plan = dev.plan::<f32>(std::slice::from_ref(&d), Boundary::Periodic, g, PlanOptions::default())?;
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn prepare_plans(&self, specs: &[PlanSpec<'_>]) -> usize {
        let mut seen = HashSet::new();
        let sources: Vec<CudaSource> = specs
            .iter()
            .filter_map(|s| {
                self.plan_source(s.stencils, s.boundary, s.grid, s.precision, s.opts)
                    .ok()
            })
            .map(|(_, _, source)| source)
            .filter(|source| seen.insert(source.name.clone()))
            .collect();
        // A shared queue over scoped threads: the kernels' compile times differ by 10x, so
        // a worker takes the next kernel when it is done rather than a fixed share.
        let next = AtomicUsize::new(0);
        let workers = std::thread::available_parallelism().map_or(4, |n| n.get());
        std::thread::scope(|scope| {
            for _ in 0..workers.min(sources.len()) {
                scope.spawn(|| {
                    while let Some(source) = sources.get(next.fetch_add(1, Ordering::Relaxed)) {
                        let text = module_source(&[source]);
                        let _ = self.module_image(&source.name, &text, false, true);
                    }
                });
            }
        });
        sources.len()
    }
}
