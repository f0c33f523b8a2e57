//! Plane waves (TFSF) of the GPU FDTD stepper. The incident lines do not depend on the grid's
//! fields, so the host advances them for a whole call ahead and uploads, per step, the few
//! line values the corrections read; after each half step a kernel applies the corrections.
//! Corrections that hit the same cell (edges and corners of the box, several waves) go to one
//! thread, in the CPU's order and with its roundings, so the fields match the CPU's.

use super::fdtd_points::comp;
use super::{driver, Gpu};
use crate::error::Result;
use crate::fdtd::tfsf::{Correction, IncidentPlan, PlaneWaves};
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use fdlab_core::Precision;
use fdlab_cuda::codegen::solver::Launch;
use fdlab_cuda::codegen::CudaSource;
use fdlab_cuda::{CudaScalar, Kernel};
use rayon::slice::ParallelSliceMut;
use std::sync::Arc;

/// The kernel for fields of C type `ty`: one thread per corrected cell, its corrections in
/// order, each added in f64 and rounded to the field's type as the CPU does.
pub(super) fn source(ty: &str, precision: Precision) -> CudaSource {
    let body = fdlab_cuda::codegen::solver::fdtd::tfsf(ty);
    let launch = Launch::flat(256);
    super::source("fdtd_tfsf", &body, precision, launch)
}

/// Corrections grouped by the cell they hit, as the kernel reads them: group `g` is the
/// component `comps[g]` at `cell[g]`, its corrections `start[g] .. start[g + 1]` of `k`, `slot`.
#[derive(Debug, PartialEq)]
struct Grouped {
    comps: Vec<i32>,
    cell: Vec<i64>,
    start: Vec<i32>,
    k: Vec<f64>,
    slot: Vec<i32>,
}

/// Groups in the order of their first correction; within a group, the list's order: the
/// corrections sorted by (component, cell, position in the list), cut into runs of one cell,
/// the runs ordered by their first position (a box face holds ~10⁶ corrections).
fn grouped(list: &[Correction]) -> Grouped {
    let key = |i: usize| (comp(list[i].component), list[i].cell, i);
    let mut order: Vec<usize> = (0..list.len()).collect();
    order.par_sort_unstable_by_key(|&i| key(i));
    let mut runs: Vec<&[usize]> = order
        .chunk_by(|&a, &b| key(a).0 == key(b).0 && key(a).1 == key(b).1)
        .collect();
    runs.par_sort_unstable_by_key(|run| run[0]);
    let mut g = Grouped {
        comps: Vec::with_capacity(runs.len()),
        cell: Vec::with_capacity(runs.len()),
        start: vec![0],
        k: Vec::with_capacity(list.len()),
        slot: Vec::with_capacity(list.len()),
    };
    for run in &runs {
        let first = &list[run[0]];
        g.comps.push(comp(first.component));
        g.cell.push(first.cell as i64);
        for &i in run.iter() {
            g.k.push(list[i].k);
            g.slot.push(list[i].slot as i32);
        }
        g.start.push(g.k.len() as i32);
    }
    g
}

/// The corrections of one half step on the device, grouped by the cell they hit.
struct Group {
    comp: CudaSlice<i32>,
    cell: CudaSlice<i64>,
    /// Group `g`'s corrections are `start[g] .. start[g + 1]`.
    start: CudaSlice<i32>,
    k: CudaSlice<f64>,
    slot: CudaSlice<i32>,
    /// Groups.
    n: i32,
}

impl Group {
    fn new(gpu: &Gpu, list: &[Correction]) -> Result<Group> {
        let Grouped {
            comps,
            cell,
            start,
            k,
            slot,
        } = grouped(list);
        // Empty lists still need valid pointers: one unused element.
        let or_one = |v: Vec<i32>| if v.is_empty() { vec![0] } else { v };
        Ok(Group {
            n: comps.len() as i32,
            comp: gpu.upload(&or_one(comps))?,
            cell: gpu.upload(if cell.is_empty() { &[0] } else { &cell[..] })?,
            start: gpu.upload(&start)?,
            k: gpu.upload(if k.is_empty() { &[0.0] } else { &k[..] })?,
            slot: gpu.upload(&or_one(slot))?,
        })
    }
}

/// The plane waves of a GPU FDTD stepper: the incident lines on the host, the corrections on
/// the device.
pub(super) struct DeviceWaves {
    kernel: Arc<Kernel>,
    lines: PlaneWaves,
    plan: IncidentPlan,
    h: Group,
    e: Group,
    /// The incident values of each step of the current call, a row per step.
    rows_h: CudaSlice<f64>,
    rows_e: CudaSlice<f64>,
}

impl DeviceWaves {
    /// `lines` (a simulation's plane waves, as they stand) with their corrections on the
    /// device; `None` without plane waves.
    pub(super) fn new(
        gpu: &Gpu,
        kernel: Arc<Kernel>,
        lines: &PlaneWaves,
        dt: f64,
    ) -> Result<Option<Self>> {
        if lines.is_empty() {
            return Ok(None);
        }
        let plan = lines.plan(dt);
        Ok(Some(DeviceWaves {
            kernel,
            h: Group::new(gpu, &plan.h)?,
            e: Group::new(gpu, &plan.e)?,
            rows_h: gpu.zeros(1)?,
            rows_e: gpu.zeros(1)?,
            lines: lines.clone(),
            plan,
        }))
    }

    /// Advances the lines over the `steps` steps after step `first` and uploads the values
    /// their corrections read.
    pub(super) fn prepare(&mut self, gpu: &Gpu, first: u64, steps: usize, dt: f64) -> Result<()> {
        let (mut h, mut e) = (Vec::new(), Vec::new());
        for i in 0..steps {
            let t = (first + i as u64 + 1) as f64 * dt;
            self.lines.step_lines(&self.plan, t, &mut h, &mut e);
        }
        for (v, buf) in [(h, &mut self.rows_h), (e, &mut self.rows_e)] {
            if v.is_empty() {
                continue;
            }
            if buf.len() < v.len() {
                *buf = gpu.zeros(v.len())?;
            }
            gpu.stream
                .memcpy_htod(&v, buf)
                .map_err(driver("cuMemcpyHtoD"))?;
        }
        Ok(())
    }

    /// Queues step `i`'s corrections after the H update (`after_e` false) or after the E
    /// update (true).
    pub(super) fn queue<T: CudaScalar>(
        &self,
        gpu: &Gpu,
        fields: [&mut CudaSlice<T>; 6],
        cb: &CudaSlice<T>,
        i: usize,
        after_e: bool,
    ) -> Result<()> {
        let (g, rows, slots) = if after_e {
            (&self.e, &self.rows_e, self.plan.slots_e())
        } else {
            (&self.h, &self.rows_h, self.plan.slots_h())
        };
        if g.n == 0 {
            return Ok(());
        }
        let row = rows.slice(i * slots..(i + 1) * slots);
        let with_cb = after_e as i32;
        let mut b = gpu.stream.launch_builder(self.kernel.function());
        for f in fields {
            b.arg(f);
        }
        b.arg(cb)
            .arg(&g.comp)
            .arg(&g.cell)
            .arg(&g.start)
            .arg(&g.k)
            .arg(&g.slot);
        b.arg(&row).arg(&g.n).arg(&with_cb);
        let cfg = LaunchConfig {
            grid_dim: ((g.n as u32).div_ceil(256).clamp(1, 1024), 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the arguments match the kernel above; every group's cell lies in the grid,
        // its corrections' slots in this step's row, and no two groups hit the same cell.
        unsafe { b.launch(cfg) }.map_err(driver("cuLaunchKernel"))?;
        Ok(())
    }

    /// The lines, as the CPU stepper saves them.
    pub(super) fn state(&self) -> Vec<f64> {
        self.lines.state()
    }

    /// Values [`DeviceWaves::state`] returns.
    pub(super) fn state_len(&self) -> usize {
        self.lines.len()
    }

    /// Put back what [`DeviceWaves::state`] returned (its length checked by the caller).
    pub(super) fn restore(&mut self, state: &[f64]) {
        self.lines.set_state(state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fdtd::Component;
    use rand::{Rng, SeedableRng};

    /// The grouping the sort replaces: a map from (component, cell) to its group, filled in
    /// the list's order.
    fn grouped_by_map(list: &[Correction]) -> Grouped {
        let mut index = std::collections::HashMap::new();
        let mut groups: Vec<Vec<&Correction>> = Vec::new();
        for c in list {
            let g = *index.entry((comp(c.component), c.cell)).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[g].push(c);
        }
        let mut g = Grouped {
            comps: vec![],
            cell: vec![],
            start: vec![0],
            k: vec![],
            slot: vec![],
        };
        for group in &groups {
            g.comps.push(comp(group[0].component));
            g.cell.push(group[0].cell as i64);
            for c in group {
                g.k.push(c.k);
                g.slot.push(c.slot as i32);
            }
            g.start.push(g.k.len() as i32);
        }
        g
    }

    #[test]
    fn grouping_by_sort_equals_grouping_by_map_on_random_lists() {
        let comps = [
            Component::Ex,
            Component::Ey,
            Component::Ez,
            Component::Hx,
            Component::Hy,
            Component::Hz,
        ];
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for len in [0, 1, 2, 17, 1000] {
            // Few cells, so that many corrections share one.
            let list: Vec<Correction> = (0..len)
                .map(|_| Correction {
                    component: comps[rng.gen_range(0..6)],
                    cell: rng.gen_range(0..40),
                    k: rng.r#gen::<f64>(),
                    slot: rng.gen_range(0..9),
                })
                .collect();
            assert_eq!(grouped(&list), grouped_by_map(&list), "{len} corrections");
        }
    }
}
