//! A decomposed stepper: one rank's part of the grid, stepped with its halos exchanged, that
//! answers for the whole grid (its field and traces gathered on rank 0).

use crate::decomp::Decomposition;
use crate::error::{Error, Result};
use crate::gpu::{GpuPlacement, GpuScalar, SlabGpu};
use crate::halo::{HaloExchange, Point};
use crate::part;
use crate::slab::Slab;
use crate::transport::{tag, Shared, Transport};
use fdlab_core::Scalar;
use fdlab_solvers::layout::Layout;
use fdlab_solvers::setup::Setup;
use fdlab_solvers::stepper::StatePart;
use fdlab_solvers::{HeatCpu, Stepper, WaveCpu};
use std::sync::{Arc, Mutex};

/// Where a failure inside a call that cannot return one ([`Stepper::field`]) is kept until the
/// next call that can.
pub type FailureSlot = Arc<Mutex<Option<String>>>;

/// One rank's part of a decomposed stepper, on the CPU or a GPU.
///
/// [`Stepper::advance`] steps the part, exchanging halos before every step, and gathers new
/// receiver samples on rank 0. [`Stepper::field`] is collective: every rank must call it at the
/// same step; rank 0 gets the global field, the others an empty vector.
///
/// Its state is the whole grid's, on the CPU and on GPUs: [`Stepper::save_state`]
/// (collective) gathers on rank 0 the state a one-process stepper of the whole grid (on the
/// same backend) saves, part for part and byte for byte, and [`Stepper::restore_state`] takes
/// such a state (from a run on any number of processes or GPUs) and keeps this rank's block
/// of it.
pub struct DistStepper {
    pub(crate) inner: Box<dyn Stepper>,
    pub(crate) transport: Shared,
    pub(crate) decomposition: Decomposition,
    pub(crate) rank: usize,
    /// Per global receiver, the rank that holds it.
    pub(crate) owners: Vec<usize>,
    /// On rank 0, every receiver's trace; elsewhere empty.
    pub(crate) traces: Vec<Vec<f64>>,
    /// Samples gathered so far.
    pub(crate) gathered: usize,
    pub(crate) failure: FailureSlot,
    pub(crate) backend: &'static str,
    /// The padded layouts of the whole grid and of this rank's block, whose states are
    /// saved and restored.
    pub(crate) layouts: (Layout, Layout),
    /// Whether the part restores its state from the whole grid's parts itself (a GPU slab,
    /// whose halo planes must hold its neighbours' planes, wrapping across a periodic axis)
    /// rather than from its block's window of them.
    pub(crate) whole_state: bool,
}

impl DistStepper {
    /// The part of `setup` (a heat or wave setup of the whole grid) that `transport`'s rank
    /// owns in `decomposition`, in precision `T`. Fails before any work when the setup cannot
    /// be decomposed (an FDTD case) or the job's size differs from the decomposition's.
    pub fn new<T>(
        setup: &Setup,
        decomposition: Decomposition,
        transport: Box<dyn Transport>,
    ) -> Result<DistStepper>
    where
        T: Scalar + Point,
        [T; 3]: Point,
    {
        let (rank, _) = job_of(&*transport, &decomposition)?;
        let sub = decomposition.subdomain(rank);
        let transport: Shared = Arc::new(Mutex::new(transport));
        let fill = Box::new(HaloExchange::new(sub.clone(), transport.clone()));
        let (dim, r) = match setup {
            Setup::Heat(s) => (s.dim, s.order / 2),
            Setup::Wave(s) => (s.dim, s.order / 2),
            _ => (decomposition.dim(), decomposition.halo()),
        };
        let layouts = (
            Layout::new(decomposition.shape(), dim, r),
            Layout::new(sub.n, dim, r),
        );
        let (inner, receivers): (Box<dyn Stepper>, Vec<[usize; 3]>) = match setup {
            Setup::Heat(s) => {
                let mut st = HeatCpu::<T>::new(&part::heat(s, &sub))?;
                st.set_halo_fill(fill);
                (Box::new(st), vec![])
            }
            Setup::Wave(s) => {
                let mut st = WaveCpu::<T>::new(&part::wave(s, &sub)?)?;
                let psi = HaloExchange::tagged(sub.clone(), transport.clone(), tag::PSI);
                st.set_halo_fill(fill, Some(Box::new(psi)))?;
                if let Some(profiles) = part::cpml_profiles(s, &sub)? {
                    st.set_cpml_profiles(profiles)?;
                }
                (Box::new(st), s.receivers.clone())
            }
            _ => {
                return Err(Error::Unsupported(
                    "FDTD cases (only heat and wave are decomposed)".into(),
                ))
            }
        };
        Ok(Self::assemble(
            inner,
            receivers,
            transport,
            decomposition,
            rank,
            "cpu, decomposed",
            layouts,
        ))
    }

    /// As [`DistStepper::new`], with the part on a GPU: the grid must be split along its last
    /// axis only (see [`crate::slab`]); heat and wave cases, CPML included. Its checkpoints
    /// are those of a one-GPU stepper of the whole grid.
    pub fn on_gpu<T: GpuScalar>(
        setup: &Setup,
        decomposition: Decomposition,
        transport: Box<dyn Transport>,
        placement: GpuPlacement,
    ) -> Result<DistStepper> {
        let (rank, size) = job_of(&*transport, &decomposition)?;
        let (dim, r) = match setup {
            Setup::Heat(s) => (s.dim, s.order / 2),
            Setup::Wave(s) => (s.dim, s.order / 2),
            _ => {
                return Err(Error::Unsupported(
                    "FDTD cases (only heat and wave are decomposed)".into(),
                ))
            }
        };
        let slab = Slab::new(&decomposition, rank, dim, r)?;
        let layouts = (
            Layout::new(decomposition.shape(), dim, r),
            Layout::new(decomposition.subdomain(rank).n, dim, r),
        );
        let transport: Shared = Arc::new(Mutex::new(transport));
        let (inner, receivers) = SlabGpu::<T>::new(setup, slab, placement, &transport, rank, size)?;
        let mut st = Self::assemble(
            Box::new(inner),
            receivers,
            transport,
            decomposition,
            rank,
            "cuda, decomposed",
            layouts,
        );
        st.whole_state = true;
        Ok(st)
    }

    /// The decomposed stepper around a rank's part, whose receivers (global cells, global
    /// order) are `receivers` and whose states are laid out as `layouts` (whole grid, block).
    fn assemble(
        inner: Box<dyn Stepper>,
        receivers: Vec<[usize; 3]>,
        transport: Shared,
        decomposition: Decomposition,
        rank: usize,
        backend: &'static str,
        layouts: (Layout, Layout),
    ) -> DistStepper {
        let owners: Vec<usize> = receivers.iter().map(|c| decomposition.owner(*c)).collect();
        let traces = if rank == 0 {
            vec![vec![]; owners.len()]
        } else {
            vec![]
        };
        DistStepper {
            inner,
            transport,
            decomposition,
            rank,
            owners,
            traces,
            gathered: 0,
            failure: Arc::new(Mutex::new(None)),
            backend,
            layouts,
            whole_state: false,
        }
    }

    /// Where a failure of a collective [`Stepper::field`] is recorded; the next
    /// [`Stepper::advance`] returns it, and a caller that ends after the last output reads it.
    pub fn failure_slot(&self) -> FailureSlot {
        self.failure.clone()
    }

    pub(crate) fn gather(
        &self,
        local: &[f64],
        counts: &[usize],
        tag: u32,
    ) -> Result<Option<Vec<f64>>> {
        self.lock()?.gather(local, counts, tag)
    }

    pub(crate) fn lock(&self) -> Result<std::sync::MutexGuard<'_, Box<dyn Transport>>> {
        self.transport.lock().map_err(|_| Error::Transport {
            rank: self.rank,
            detail: "the transport's lock is poisoned".into(),
        })
    }

    /// A non-finite value's cell in the whole grid's indices rather than the block's.
    fn global_cell(&self, e: fdlab_solvers::Error) -> fdlab_solvers::Error {
        match e {
            fdlab_solvers::Error::NonFinite { step, cell, value } => {
                let o = self.decomposition.subdomain(self.rank).offset;
                fdlab_solvers::Error::NonFinite {
                    step,
                    cell: std::array::from_fn(|a| cell[a] + o[a]),
                    value,
                }
            }
            e => e,
        }
    }

    /// Receiver samples taken since the last gather, moved to rank 0.
    fn gather_traces(&mut self) -> Result<()> {
        let step = self.inner.step() as usize;
        let new = step - self.gathered;
        if self.owners.is_empty() || new == 0 {
            return Ok(());
        }
        let mine: Vec<f64> = self
            .inner
            .traces()
            .iter()
            .flat_map(|t| t[self.gathered..step].iter().copied())
            .collect();
        let ranks = self.decomposition.ranks();
        let counts: Vec<usize> = (0..ranks)
            .map(|r| new * self.owners.iter().filter(|&&o| o == r).count())
            .collect();
        if let Some(all) = self.gather(&mine, &counts, tag::TRACES)? {
            // Rank by rank, each rank's receivers in global order, `new` samples each.
            let mut at = 0;
            for r in 0..ranks {
                for (g, _) in self.owners.iter().enumerate().filter(|&(_, &o)| o == r) {
                    self.traces[g].extend_from_slice(&all[at..at + new]);
                    at += new;
                }
            }
        }
        self.gathered = step;
        Ok(())
    }

    /// The whole grid's field on rank 0 (empty elsewhere) from each rank's `local` part.
    fn gather_field(&self, local: &[f64]) -> Result<Vec<f64>> {
        let d = &self.decomposition;
        let counts: Vec<usize> = (0..d.ranks()).map(|r| d.subdomain(r).cells()).collect();
        let Some(all) = self.gather(local, &counts, tag::FIELD)? else {
            return Ok(vec![]);
        };
        let n = d.shape();
        let mut field = vec![0.0; n.iter().product()];
        let mut at = 0;
        for r in 0..d.ranks() {
            let s = d.subdomain(r);
            for k in 0..s.n[2] {
                for j in 0..s.n[1] {
                    let row = s.offset[0] + n[0] * (s.offset[1] + j + n[1] * (s.offset[2] + k));
                    field[row..row + s.n[0]].copy_from_slice(&all[at..at + s.n[0]]);
                    at += s.n[0];
                }
            }
        }
        Ok(field)
    }
}

/// The transport's rank and job size, after checking that the job has as many processes as
/// the decomposition.
fn job_of(transport: &dyn Transport, d: &Decomposition) -> Result<(usize, usize)> {
    let (rank, size) = (transport.rank(), transport.size());
    if size != d.ranks() {
        return Err(Error::ProcessCount {
            dims: d.dims(),
            product: d.ranks(),
            ranks: size,
        });
    }
    Ok((rank, size))
}

impl Stepper for DistStepper {
    fn advance(&mut self, n: usize) -> fdlab_solvers::Result<()> {
        if let Some(e) = self.failure.lock().ok().and_then(|f| f.clone()) {
            return Err(fdlab_solvers::Error::Halo(e.into()));
        }
        self.inner.advance(n).map_err(|e| self.global_cell(e))?;
        self.gather_traces()
            .map_err(|e| fdlab_solvers::Error::Halo(Box::new(e)))
    }

    fn step(&self) -> u64 {
        self.inner.step()
    }

    fn field(&self) -> fdlab_solvers::Result<Vec<f64>> {
        let local = self.inner.field()?;
        self.gather_field(&local)
            .map_err(|e| fdlab_solvers::Error::Halo(Box::new(e)))
    }

    fn traces(&self) -> &[Vec<f64>] {
        &self.traces
    }

    /// Collective: rank 0 gets the whole grid's state, the other ranks an empty list.
    fn save_state(&self) -> fdlab_solvers::Result<Vec<StatePart>> {
        crate::checkpoint::save(self).map_err(halo_err)
    }

    /// Every rank takes the whole grid's state and keeps its block.
    fn restore_state(&mut self, step: u64, parts: &[StatePart]) -> fdlab_solvers::Result<()> {
        crate::checkpoint::restore(self, step, parts)
    }

    /// The same state as a one-process stepper's on the part's backend: either resumes the
    /// other.
    fn checkpoint_backend(&self) -> &'static str {
        self.inner.checkpoint_backend()
    }

    /// Collective: rank 0 gathers every rank's `asked` and sends back the first non-zero.
    fn agree_stop(&mut self, asked: i32) -> fdlab_solvers::Result<i32> {
        crate::checkpoint::agree_stop(self, asked).map_err(halo_err)
    }

    fn cells(&self) -> usize {
        self.decomposition.shape().iter().product()
    }

    fn bytes_per_step(&self) -> usize {
        let per_cell = self.inner.bytes_per_step() as f64 / self.inner.cells() as f64;
        (per_cell * self.cells() as f64) as usize
    }

    fn backend(&self) -> &'static str {
        self.backend
    }

    /// The part's schedule (on a GPU: with how its halos travel) and the process grid.
    fn schedule(&self) -> String {
        let [a, b, c] = self.decomposition.dims();
        format!("{}; split {a}x{b}x{c}", self.inner.schedule())
    }
}

/// A failure of a collective call, as the solvers' error.
fn halo_err(e: Error) -> fdlab_solvers::Error {
    fdlab_solvers::Error::Halo(Box::new(e))
}
