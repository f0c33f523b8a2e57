//! Applies of a plan captured into a CUDA graph: one driver call for many launches.

use super::Plan;
use crate::codegen::InputKind;
use crate::device::{CudaScalar, DeviceInner, Texture};
use crate::error::{driver, Error, Result};
use crate::field::DeviceField;
use cudarc::driver::{sys, CudaStream, DevicePtr};
use std::marker::PhantomData;
use std::sync::{Arc, Weak};

impl<T: CudaScalar> Plan<T> {
    /// Captures `launches` applies on `input` and `outputs` into a CUDA graph, replayed with
    /// [`GraphPlan::launch`]: one driver call for all of them, which pays on small grids where
    /// launch overhead dominates. The graph keeps the fields borrowed, since it holds their
    /// addresses.
    ///
    /// ```no_run
    /// # use fdlab_core::{Boundary, Grid, Stencil};
    /// # use fdlab_cuda::{Device, DeviceField, PlanOptions};
    /// # let dev = Device::open(0)?;
    /// # let g = Grid::unit(&[64, 64, 64])?;
    /// # let plan = dev.plan::<f32>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g, PlanOptions::default())?;
    /// let u = DeviceField::<f32>::zeros(&dev, &g)?;
    /// let mut lu = DeviceField::zeros(&dev, &g)?;
    /// let mut outs = [&mut lu];
    /// let graph = plan.graph(&u, &mut outs, 100)?;
    /// graph.launch()?;
    /// dev.default_stream().synchronize()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn graph<'a>(
        &'a self,
        input: &'a DeviceField<T>,
        outputs: &'a mut [&mut DeviceField<T>],
        launches: usize,
    ) -> Result<GraphPlan<'a>> {
        let _alive = self.device.upgrade().ok_or(Error::DeviceGone)?;
        self.check(input, outputs)?;
        // Bind the input (texture, tensor maps) before capture, so that no driver object is
        // made inside it; the graph keeps the texture it reads alive.
        let mut texture = None;
        if self.source.input == InputKind::Texture || !self.source.tensor_boxes.is_empty() {
            let (ptr, _s) = input.buf.device_ptr(&self.stream);
            texture = Plan::<T>::bound_texture(&*self.bind(ptr, input.len())?);
        }
        let stream = &self.stream;
        stream
            .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(driver("cuStreamBeginCapture"))?;
        let mut captured = Ok(());
        for _ in 0..launches.max(1) {
            captured = self.launch_on(stream, input, outputs);
            if captured.is_err() {
                break;
            }
        }
        let graph = stream
            .end_capture(sys::CUgraphInstantiate_flags(0))
            .map_err(driver("cuStreamEndCapture"))?;
        captured?;
        let graph = graph.ok_or_else(|| Error::Driver {
            call: "cuStreamEndCapture".into(),
            detail: "no graph captured".into(),
        })?;
        graph.upload().map_err(driver("cuGraphUpload"))?;
        Ok(GraphPlan {
            graph,
            device: self.device.clone(),
            stream: self.stream.clone(),
            _texture: texture,
            launches: launches.max(1),
            _borrows: PhantomData,
        })
    }
}

/// Applies of a [`Plan`] captured into a CUDA graph (see [`Plan::graph`]). It borrows the
/// plan (whose kernel it runs) and the fields (whose addresses it holds); dropping it waits
/// for its stream, since replays still queued read its texture.
///
/// ```no_run
/// # use fdlab_core::{Boundary, Grid, Stencil};
/// # use fdlab_cuda::{Device, DeviceField, PlanOptions};
/// # let dev = Device::open(0)?;
/// # let g = Grid::unit(&[64, 64, 64])?;
/// let plan = dev.plan::<f32>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g,
///     PlanOptions::default())?;
/// let u = DeviceField::<f32>::zeros(&dev, &g)?;
/// let mut lu = DeviceField::zeros(&dev, &g)?;
/// let mut outs = [&mut lu];
/// let graph = plan.graph(&u, &mut outs, 50)?;
/// graph.launch()?;
/// drop(graph); // waits for the replay
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct GraphPlan<'a> {
    graph: cudarc::driver::CudaGraph,
    device: Weak<DeviceInner>,
    stream: Arc<CudaStream>,
    _texture: Option<Arc<Texture>>,
    launches: usize,
    _borrows: PhantomData<&'a mut ()>,
}

impl Drop for GraphPlan<'_> {
    fn drop(&mut self) {
        let _ = self.stream.synchronize();
    }
}

impl std::fmt::Debug for GraphPlan<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphPlan")
            .field("launches", &self.launches)
            .finish()
    }
}

impl GraphPlan<'_> {
    /// Queues every captured apply on the plan's stream, in one driver call.
    ///
    /// ```no_run
    /// # use fdlab_core::{Boundary, Grid, Stencil};
    /// # use fdlab_cuda::{Device, DeviceField, PlanOptions};
    /// # let dev = Device::open(0)?;
    /// # let g = Grid::unit(&[64, 64, 64])?;
    /// # let plan = dev.plan::<f32>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g, PlanOptions::default())?;
    /// # let u = DeviceField::<f32>::zeros(&dev, &g)?;
    /// # let mut lu = DeviceField::zeros(&dev, &g)?;
    /// # let mut outs = [&mut lu];
    /// let graph = plan.graph(&u, &mut outs, 10)?;
    /// for _ in 0..5 {
    ///     graph.launch()?;
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn launch(&self) -> Result<()> {
        let _alive = self.device.upgrade().ok_or(Error::DeviceGone)?;
        self.graph.launch().map_err(driver("cuGraphLaunch"))
    }

    /// Applies per [`GraphPlan::launch`].
    ///
    /// ```no_run
    /// # use fdlab_core::{Boundary, Grid, Stencil};
    /// # use fdlab_cuda::{Device, DeviceField, PlanOptions};
    /// # let dev = Device::open(0)?;
    /// # let g = Grid::unit(&[64, 64, 64])?;
    /// # let plan = dev.plan::<f32>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g, PlanOptions::default())?;
    /// # let u = DeviceField::<f32>::zeros(&dev, &g)?;
    /// # let mut lu = DeviceField::zeros(&dev, &g)?;
    /// # let mut outs = [&mut lu];
    /// assert_eq!(plan.graph(&u, &mut outs, 10)?.launches(), 10);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn launches(&self) -> usize {
        self.launches
    }
}
