//! The heat step on the GPU: one fused kernel per step, `v = u + Δt κ L u`.

use super::kernels::{self, Launch, StepSpec};
use super::{cuda_type, driver, launch_config, march_order, march_sizes, precision_of, tag, Gpu};
use crate::layout::Layout;
use crate::stepper::{StatePart, Stepper};
use crate::{HeatSetup, Result};
use cudarc::driver::{CudaSlice, PushKernelArg};
use fdlab_cuda::codegen::CudaSource;
use fdlab_cuda::{CudaScalar, Kernel};
use std::sync::Arc;

/// GPU heat stepper: the field and its next step on the device, swapped each step.
pub struct HeatGpu<T: CudaScalar> {
    gpu: Gpu,
    n: [usize; 3],
    dim: usize,
    layout: Layout,
    u: CudaSlice<T>,
    v: CudaSlice<T>,
    /// `Δt κ` per point, when it varies.
    kappa: Option<CudaSlice<T>>,
    kernel: Arc<Kernel>,
    launch: Launch,
    step: u64,
}

impl<T: CudaScalar> HeatGpu<T> {
    /// Opens the first GPU, compiles the step and uploads the initial field.
    pub fn new(s: &HeatSetup) -> Result<Self> {
        let gpu = Gpu::open()?;
        let co = s.coefficients()?;
        let r = s.order / 2;
        let launch = Launch::new(s.dim, r, s.n, std::mem::size_of::<T>());
        let field_kappa = co.dt_kappa.len() > 1;
        let kernel = gpu.kernel(&sources::<T>(s)?)?;
        let cells = s.n.iter().product::<usize>();
        let to_t = |v: &[f64]| v.iter().map(|&x| T::from_f64(x)).collect::<Vec<T>>();
        let kappa = if field_kappa {
            Some(gpu.upload(&to_t(&co.dt_kappa))?)
        } else {
            None
        };
        let u = gpu.upload(&to_t(&s.initial))?;
        let v = gpu.zeros(cells)?;
        Ok(HeatGpu {
            gpu,
            n: s.n,
            dim: s.dim,
            layout: Layout::new(s.n, s.dim, r),
            u,
            v,
            kappa,
            kernel,
            launch,
            step: 0,
        })
    }
}

/// The step kernel of `s` in `T`.
pub(super) fn sources<T: CudaScalar>(s: &HeatSetup) -> Result<CudaSource> {
    let co = s.coefficients()?;
    let r = s.order / 2;
    let launch = Launch::new(s.dim, r, s.n, std::mem::size_of::<T>());
    let spec = StepSpec {
        ty: cuda_type::<T>(),
        r,
        three: s.dim == 3,
        periodic: s.periodic,
        w2: march_order(&co.w, s.dim, vec![0.0; r + 1]),
        w0: co.w0,
        launch,
    };
    let (field_kappa, kc) = (co.dt_kappa.len() > 1, co.dt_kappa[0]);
    let body = if super::tiled::usable(&spec) {
        super::tiled::tiled(&spec, super::tiled::Update::Heat { field_kappa, kc })
    } else {
        kernels::heat(&spec, field_kappa, kc)
    };
    Ok(super::source(
        "heat_step",
        &body,
        precision_of::<T>(),
        launch,
    ))
}

impl<T: CudaScalar> Stepper for HeatGpu<T> {
    fn advance(&mut self, steps: usize) -> Result<()> {
        let (nx, no, nm) = march_sizes(self.n, self.dim);
        let cfg = launch_config(
            self.launch,
            self.launch.grid(nx as usize, no as usize, nm as usize),
        );
        for i in 0..steps {
            let t = tag(i);
            let stream = self.gpu.stream.clone();
            let mut b = stream.launch_builder(self.kernel.function());
            b.arg(&self.u).arg(&mut self.v);
            // A constant κ is a literal; the pointer is then never read.
            b.arg(self.kappa.as_ref().unwrap_or(&self.u));
            b.arg(&nx).arg(&no).arg(&nm);
            b.arg(&mut self.gpu.bad).arg(&mut self.gpu.badval).arg(&t);
            // SAFETY: the arguments match the generated signature; u, v and κ hold nx·no·nm
            // values and the kernel indexes only inside the grid.
            unsafe { b.launch(cfg) }.map_err(driver("cuLaunchKernel"))?;
            std::mem::swap(&mut self.u, &mut self.v);
        }
        let first = self.step;
        self.step += steps as u64;
        self.gpu.check_finite(first, self.n)
    }

    fn step(&self) -> u64 {
        self.step
    }

    fn field(&self) -> Result<Vec<f64>> {
        self.gpu.download_f64(&self.u)
    }

    fn traces(&self) -> &[Vec<f64>] {
        &[]
    }

    fn save_state(&self) -> Result<Vec<StatePart>> {
        Ok(vec![(
            "u".into(),
            super::padded_bytes(&self.layout, &self.field()?),
        )])
    }

    fn restore_state(&mut self, step: u64, parts: &[StatePart]) -> Result<()> {
        let u: Vec<T> = super::from_padded(&self.layout, parts, "u")?;
        self.gpu
            .stream
            .memcpy_htod(&u, &mut self.u)
            .map_err(driver("cuMemcpyHtoD"))?;
        self.step = step;
        Ok(())
    }

    fn cells(&self) -> usize {
        self.n.iter().product()
    }

    fn bytes_per_step(&self) -> usize {
        let fields = if self.kappa.is_some() { 3 } else { 2 };
        fields * self.cells() * std::mem::size_of::<T>()
    }

    fn backend(&self) -> &'static str {
        "cuda"
    }
}
