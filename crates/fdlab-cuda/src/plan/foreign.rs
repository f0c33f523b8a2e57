//! Plans launched on memory and streams that fdlab does not own: arrays of CuPy, PyTorch or
//! any other library that hands out raw device pointers (`__cuda_array_interface__`, DLPack).
//!
//! Everything that can be checked is checked before launching: count, shape and precision of
//! the fields, null and misaligned pointers, overlapping input and outputs (what the pure
//! [`check_foreign`] does, testable without a GPU), then with the driver that each pointer is
//! device memory of the plan's device and context covering the whole field, and that the
//! stream belongs to that context. What cannot be checked — that the memory stays allocated
//! until the kernel has run — is the caller's promise, hence `unsafe`.

use super::{check_one, Arg, Plan, PlanMeta};
use crate::codegen::InputKind;
use crate::device::{CudaScalar, TensorMap};
use crate::error::{driver, Error, Result};
use crate::field::FieldMeta;
use cudarc::driver::sys;
use fdlab_core::Precision;
use std::ffi::c_void;

/// A field in device memory that fdlab does not own: a C-ordered (x-fastest) array of
/// `shape[0]·shape[1]·shape[2]` elements of `precision` starting at device address `ptr`.
///
/// ```
/// use fdlab_core::Precision;
/// use fdlab_cuda::ForeignField;
/// let f = ForeignField { ptr: 0x7f00_0000_0000, shape: [64, 64, 64], precision: Precision::F32 };
/// assert_eq!(f.bytes(), 64 * 64 * 64 * 4);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForeignField {
    /// Device address of the first element.
    pub ptr: u64,
    /// Points along x, y, z (x fastest).
    pub shape: [usize; 3],
    /// Element type.
    pub precision: Precision,
}

impl ForeignField {
    /// Elements in the field.
    ///
    /// ```
    /// # use fdlab_core::Precision;
    /// # use fdlab_cuda::ForeignField;
    /// let f = ForeignField { ptr: 256, shape: [3, 5, 7], precision: Precision::F64 };
    /// assert_eq!(f.len(), 105);
    /// ```
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// True when the field holds no element.
    ///
    /// ```
    /// # use fdlab_core::Precision;
    /// # use fdlab_cuda::ForeignField;
    /// let f = ForeignField { ptr: 256, shape: [0, 5, 7], precision: Precision::F64 };
    /// assert!(f.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the field spans.
    ///
    /// ```
    /// # use fdlab_core::Precision;
    /// # use fdlab_cuda::ForeignField;
    /// let f = ForeignField { ptr: 256, shape: [2, 1, 1], precision: Precision::F64 };
    /// assert_eq!(f.bytes(), 16);
    /// ```
    pub fn bytes(&self) -> u64 {
        self.len() as u64 * self.precision.size() as u64
    }
}

/// The `call` of the [`Error::Driver`] that refuses caller-owned memory or streams before
/// anything is launched (a null, misaligned, overlapping or foreign pointer, a foreign stream):
/// a mistake in the arguments, not a driver failure.
///
/// ```
/// assert_eq!(fdlab_cuda::FOREIGN_CHECKS, "the checks of caller-owned memory");
/// ```
pub const FOREIGN_CHECKS: &str = "the checks of caller-owned memory";

/// A refusal of caller-owned memory, before anything is launched.
fn refuse(detail: String) -> Error {
    Error::Driver {
        call: FOREIGN_CHECKS.into(),
        detail,
    }
}

/// Checks foreign fields against a plan without the driver: output count, precision and shape,
/// then non-null pointers aligned to `align` bytes, and no output overlapping the input or
/// another output (a stencil reads its neighbours: writing in place would race).
///
/// ```
/// use fdlab_core::Precision;
/// use fdlab_cuda::{check_foreign, ForeignField, PlanMeta};
/// let plan = PlanMeta { shape: [8, 8, 8], precision: Precision::F32, device: 1, outputs: 1 };
/// let u = ForeignField { ptr: 1 << 20, shape: [8, 8, 8], precision: Precision::F32 };
/// let out = ForeignField { ptr: 2 << 20, ..u };
/// assert!(check_foreign(&plan, 16, u, &[out]).is_ok());
/// assert!(check_foreign(&plan, 16, u, &[u]).is_err()); // in place
/// assert!(check_foreign(&plan, 16, u, &[ForeignField { ptr: (2 << 20) + 4, ..u }]).is_err());
/// ```
pub fn check_foreign(
    plan: &PlanMeta,
    align: usize,
    input: ForeignField,
    outputs: &[ForeignField],
) -> Result<()> {
    if outputs.len() != plan.outputs {
        return Err(Error::OutputCount {
            expected: plan.outputs,
            got: outputs.len(),
        });
    }
    let meta = |f: &ForeignField| FieldMeta {
        shape: f.shape,
        precision: f.precision,
        device: plan.device,
    };
    check_one(plan, Arg::Input, meta(&input))?;
    for (n, o) in outputs.iter().enumerate() {
        check_one(plan, Arg::Output(n), meta(o))?;
    }
    let align = align.max(1) as u64;
    let all = std::iter::once((Arg::Input, &input))
        .chain(outputs.iter().enumerate().map(|(n, o)| (Arg::Output(n), o)));
    for (what, f) in all.clone() {
        if f.ptr == 0 {
            return Err(refuse(format!("{what} is a null pointer")));
        }
        if f.ptr % align != 0 {
            return Err(refuse(format!(
                "{what} at {:#x} is not aligned to {align} bytes, which this plan's kernel \
                 needs (vector loads, texture or TMA); pass an array that starts at an \
                 allocation (e.g. a copy) rather than an offset view",
                f.ptr
            )));
        }
    }
    let overlap = |a: &ForeignField, b: &ForeignField| {
        a.ptr < b.ptr.saturating_add(b.bytes()) && b.ptr < a.ptr.saturating_add(a.bytes())
    };
    for (i, (what, o)) in all.clone().enumerate().skip(1) {
        for (other, p) in all.clone().take(i) {
            if overlap(o, p) {
                return Err(refuse(format!(
                    "{what} overlaps {other}; a stencil reads neighbouring points, so it \
                     cannot write in place: give separate arrays"
                )));
            }
        }
    }
    Ok(())
}

/// What the driver says about one device pointer.
struct PointerFacts {
    context: sys::CUcontext,
    memory_type: u32,
    ordinal: i32,
    start: u64,
    size: usize,
}

/// Asks the driver about `ptr` in one call; an error when it is not memory the driver knows.
fn pointer_facts(what: Arg, ptr: u64) -> Result<PointerFacts> {
    use sys::CUpointer_attribute as A;
    let mut facts = PointerFacts {
        context: std::ptr::null_mut(),
        memory_type: 0,
        ordinal: -1,
        start: 0,
        size: 0,
    };
    let mut attrs = [
        A::CU_POINTER_ATTRIBUTE_CONTEXT,
        A::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
        A::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
        A::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
        A::CU_POINTER_ATTRIBUTE_RANGE_SIZE,
    ];
    let mut data: [*mut c_void; 5] = [
        &mut facts.context as *mut sys::CUcontext as *mut c_void,
        &mut facts.memory_type as *mut u32 as *mut c_void,
        &mut facts.ordinal as *mut i32 as *mut c_void,
        &mut facts.start as *mut u64 as *mut c_void,
        &mut facts.size as *mut usize as *mut c_void,
    ];
    // SAFETY: each data slot points to a live local of the type the driver writes for its
    // attribute (CUcontext, unsigned int, int, CUdeviceptr, size_t).
    let r = unsafe {
        sys::cuPointerGetAttributes(
            attrs.len() as u32,
            attrs.as_mut_ptr(),
            data.as_mut_ptr(),
            ptr,
        )
    };
    if r != sys::CUresult::CUDA_SUCCESS {
        return Err(refuse(format!(
            "{what} at {ptr:#x} is not memory the CUDA driver knows ({r:?}); pass a GPU array"
        )));
    }
    Ok(facts)
}

impl<T: CudaScalar> Plan<T> {
    /// The alignment in bytes that [`Plan::apply_foreign`] needs of every pointer: the element,
    /// the kernel's vector width, 16 for TMA tensor maps, the device's texture alignment for
    /// texture strategies.
    ///
    /// ```no_run
    /// # use fdlab_core::{Boundary, Grid, Stencil};
    /// # use fdlab_cuda::{Device, PlanOptions};
    /// # let dev = Device::open(0)?;
    /// # let g = Grid::unit(&[64, 64, 64])?;
    /// let plan = dev.plan::<f32>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g, PlanOptions::default())?;
    /// assert!(plan.foreign_alignment()? >= 4);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn foreign_alignment(&self) -> Result<usize> {
        let size = std::mem::size_of::<T>();
        let mut align = size * self.source.x_multiple.max(1) as usize;
        if !self.source.tensor_boxes.is_empty() {
            align = align.max(16);
        }
        if self.source.input == InputKind::Texture {
            let dev = self.device.upgrade().ok_or(Error::DeviceGone)?;
            let tex = dev
                .ctx
                .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT)
                .map_err(driver("cuDeviceGetAttribute"))?;
            align = align.max(tex.max(1) as usize);
        }
        Ok(align)
    }

    /// [`Plan::apply`] on caller-owned device memory, queued on the caller's `stream` (a raw
    /// `CUstream` handle as an integer; `0` is the legacy default stream, `None` the plan's
    /// own stream). Checks, before launching, everything [`check_foreign`] checks, then with
    /// the driver that every pointer is device (or managed) memory of the plan's device and
    /// context and that the allocation holds the whole field, and that the stream belongs to
    /// the plan's context. Does not wait for the kernel.
    ///
    /// # Safety
    ///
    /// The memory behind every pointer must stay allocated, and must not be written by other
    /// work, until the kernel queued on `stream` has finished; `stream` must be a live stream
    /// handle (or 0, 1 or 2: the legacy and per-thread default streams).
    ///
    /// ```no_run
    /// # use fdlab_core::{Boundary, Grid, Stencil, Precision};
    /// # use fdlab_cuda::{Device, DeviceField, ForeignField, PlanOptions};
    /// # use cudarc::driver::DevicePtr;
    /// # let dev = Device::open(0)?;
    /// # let g = Grid::unit(&[64, 64, 64])?;
    /// # let plan = dev.plan::<f32>(&[Stencil::laplacian(&g, 2)?], Boundary::Periodic, &g, PlanOptions::default())?;
    /// let u = DeviceField::<f32>::zeros(&dev, &g)?;
    /// let lu = DeviceField::<f32>::zeros(&dev, &g)?;
    /// let s = dev.stream();
    /// let at = |f: &DeviceField<f32>| ForeignField {
    ///     ptr: f.buffer().device_ptr(s).0,
    ///     shape: f.shape(),
    ///     precision: Precision::F32,
    /// };
    /// // SAFETY: both fields outlive the synchronize below.
    /// unsafe { plan.apply_foreign(at(&u), &[at(&lu)], Some(0))? };
    /// dev.synchronize()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub unsafe fn apply_foreign(
        &self,
        input: ForeignField,
        outputs: &[ForeignField],
        stream: Option<u64>,
    ) -> Result<()> {
        let dev = self.device.upgrade().ok_or(Error::DeviceGone)?;
        check_foreign(&self.meta, self.foreign_alignment()?, input, outputs)?;
        // Room for the input, up to 16 outputs, nx, ny, nz and 2 tensor maps.
        const MAX_ARGS: usize = 1 + 16 + 3 + 2;
        if outputs.len() > 16 || self.source.tensor_boxes.len() > 2 {
            return Err(Error::ResourceLimit {
                what: "kernel arguments (outputs)".into(),
                requested: outputs.len() as u64,
                max: 16,
            });
        }
        let ctx = &dev.ctx;
        ctx.bind_to_thread().map_err(driver("cuCtxSetCurrent"))?;
        let all = std::iter::once((Arg::Input, &input))
            .chain(outputs.iter().enumerate().map(|(n, o)| (Arg::Output(n), o)));
        for (what, f) in all {
            self.check_pointer(what, f, ctx.cu_ctx(), ctx.ordinal())?;
        }
        let raw_stream: sys::CUstream = match stream {
            None => self.stream.cu_stream(),
            Some(h) => h as usize as sys::CUstream,
        };
        // Handles 0, 1 and 2 are the default streams of the current context: nothing to ask.
        if stream.is_some_and(|h| h > 2) {
            let mut owner: sys::CUcontext = std::ptr::null_mut();
            // SAFETY: the caller promises a live stream handle; the driver writes one CUcontext.
            let r = unsafe { sys::cuStreamGetCtx(raw_stream, &mut owner) };
            if r != sys::CUresult::CUDA_SUCCESS {
                return Err(refuse(format!(
                    "stream {:#x} is not a stream the driver knows ({r:?})",
                    stream.unwrap_or(0)
                )));
            }
            if owner != ctx.cu_ctx() {
                return Err(refuse(format!(
                    "stream {:#x} belongs to another CUDA context than device {}'s primary \
                     context; use a stream of the primary context (as CuPy and PyTorch do)",
                    stream.unwrap_or(0),
                    ctx.ordinal()
                )));
            }
        }
        if stream.is_some() {
            // The weights were copied to `__constant__` memory on the plan's own stream when it
            // was built: a kernel on another stream must not start before that copy is done.
            // SAFETY: the plan's stream is alive while the plan is.
            let idle = unsafe { sys::cuStreamQuery(self.stream.cu_stream()) };
            if idle != sys::CUresult::CUDA_SUCCESS {
                self.stream
                    .synchronize()
                    .map_err(driver("cuStreamSynchronize"))?;
            }
        }
        let bound =
            if self.source.input == InputKind::Texture || !self.source.tensor_boxes.is_empty() {
                Some(self.bind(input.ptr, input.len())?)
            } else {
                None
            };
        let (mut tex, mut maps) = (0u64, [None::<TensorMap>; 2]);
        if let Some(guard) = &bound {
            let b = guard.live.last().ok_or(Error::DeviceGone)?;
            tex = b.texture.as_ref().map_or(0, |t| t.handle);
            for (m, src) in maps.iter_mut().zip(&b.maps) {
                *m = Some(*src);
            }
        }
        let mut in_arg = input.ptr;
        let mut out_ptrs = [0u64; 16];
        for (p, o) in out_ptrs.iter_mut().zip(outputs) {
            *p = o.ptr;
        }
        let mut dims = self.dims;
        let mut args: [*mut c_void; MAX_ARGS] = [std::ptr::null_mut(); MAX_ARGS];
        let mut n = 0;
        let mut push = |p: *mut c_void| {
            args[n] = p;
            n += 1;
        };
        match self.source.input {
            InputKind::Pointer => push(&mut in_arg as *mut u64 as *mut c_void),
            InputKind::Texture => push(&mut tex as *mut u64 as *mut c_void),
        }
        for p in out_ptrs.iter_mut().take(outputs.len()) {
            push(p as *mut u64 as *mut c_void);
        }
        for d in dims.iter_mut() {
            push(d as *mut i32 as *mut c_void);
        }
        for m in maps.iter_mut().flatten() {
            push(m as *mut TensorMap as *mut c_void);
        }
        // SAFETY: the arguments match the generated signature (input or its texture, the
        // outputs, nx, ny, nz, then the tensor maps over the input), each pointer in `args`
        // points to a live local of the parameter's type; the driver confirmed above that each
        // allocation holds nx·ny·nz elements of T from its pointer on this device and context.
        unsafe {
            cudarc::driver::result::launch_kernel(
                self.func.cu_function(),
                self.grid_dim,
                self.block_dim,
                self.source.shared_bytes,
                raw_stream,
                &mut args[..n],
            )
        }
        .map_err(driver("cuLaunchKernel"))?;
        drop(bound);
        Ok(())
    }

    /// Checks one pointer with the driver: device or managed memory, of this device and
    /// context (when the driver names one), inside an allocation that holds the field.
    fn check_pointer(
        &self,
        what: Arg,
        f: &ForeignField,
        ctx: sys::CUcontext,
        ordinal: usize,
    ) -> Result<()> {
        let p = pointer_facts(what, f.ptr)?;
        // cuPointerGetAttributes succeeds on unknown addresses and leaves the type at 0.
        if p.memory_type == 0 {
            return Err(refuse(format!(
                "{what} at {:#x} is not memory the CUDA driver knows; pass a GPU array",
                f.ptr
            )));
        }
        // CU_MEMORYTYPE_DEVICE = 2, CU_MEMORYTYPE_UNIFIED = 4 (managed).
        if p.memory_type != 2 && p.memory_type != 4 {
            return Err(refuse(format!(
                "{what} at {:#x} is host memory (memory type {}); pass an array on the GPU",
                f.ptr, p.memory_type
            )));
        }
        if p.ordinal != ordinal as i32 {
            return Err(refuse(format!(
                "{what} lives on GPU {} but the plan runs on GPU {ordinal}; move the array \
                 or use a plan of its device",
                p.ordinal
            )));
        }
        // Pool allocations (cudaMallocAsync) name no context: the ordinal check covers them.
        if !p.context.is_null() && p.context != ctx {
            return Err(refuse(format!(
                "{what} belongs to another CUDA context than GPU {ordinal}'s primary \
                 context; allocate it in the primary context (as CuPy and PyTorch do)"
            )));
        }
        let end = f.ptr.saturating_add(f.bytes());
        if p.size > 0 && end > p.start.saturating_add(p.size as u64) {
            return Err(refuse(format!(
                "{what} needs {} bytes from {:#x} but its allocation ends {} bytes after it",
                f.bytes(),
                f.ptr,
                p.start.saturating_add(p.size as u64).saturating_sub(f.ptr)
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(outputs: usize) -> PlanMeta {
        PlanMeta {
            shape: [67, 45, 33],
            precision: Precision::F64,
            device: 3,
            outputs,
        }
    }

    fn field(ptr: u64) -> ForeignField {
        ForeignField {
            ptr,
            shape: [67, 45, 33],
            precision: Precision::F64,
        }
    }

    #[test]
    fn separate_aligned_fields_pass() {
        let n = field(0).bytes();
        let base = 1 << 30;
        let outs = [field(base + n), field(base + 2 * n + 64)];
        check_foreign(&plan(2), 8, field(base), &outs).unwrap();
    }

    #[test]
    fn count_precision_shape_are_checked_first() {
        let u = field(1 << 30);
        let e = check_foreign(&plan(2), 8, u, &[field(2 << 30)]).unwrap_err();
        assert!(
            matches!(
                e,
                Error::OutputCount {
                    expected: 2,
                    got: 1
                }
            ),
            "{e}"
        );
        let f32_out = ForeignField {
            precision: Precision::F32,
            ..field(2 << 30)
        };
        let e = check_foreign(&plan(1), 8, u, &[f32_out]).unwrap_err();
        assert!(matches!(e, Error::Precision { .. }), "{e}");
        let wrong = ForeignField {
            shape: [33, 45, 67],
            ..field(2 << 30)
        };
        let e = check_foreign(&plan(1), 8, u, &[wrong]).unwrap_err();
        assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    }

    #[test]
    fn null_and_misaligned_pointers_are_refused() {
        let e = check_foreign(&plan(1), 8, field(0), &[field(1 << 30)]).unwrap_err();
        assert!(e.to_string().contains("null pointer"), "{e}");
        let e = check_foreign(&plan(1), 16, field(1 << 30), &[field((2 << 30) + 8)]).unwrap_err();
        assert!(e.to_string().contains("output 0"), "{e}");
        assert!(e.to_string().contains("aligned to 16"), "{e}");
    }

    #[test]
    fn overlaps_are_refused_and_touching_ranges_pass() {
        let n = field(0).bytes();
        let base = 1u64 << 30;
        // In place, one byte short of the end, and two outputs sharing memory.
        for outs in [
            vec![field(base)],
            vec![field(base + n - 8)],
            vec![field(base + 4 * n), field(base + 4 * n + 8)],
        ] {
            let e = check_foreign(&plan(outs.len()), 8, field(base), &outs).unwrap_err();
            assert!(e.to_string().contains("overlaps"), "{e}");
        }
        check_foreign(&plan(1), 8, field(base), &[field(base + n)]).unwrap();
        check_foreign(&plan(1), 8, field(base + n), &[field(base)]).unwrap();
    }

    #[test]
    fn small_odd_and_low_rank_grids_have_a_strategy() {
        // The shapes GPU array users hand over (1-D, 2-D, odd, tiny) all get a kernel that
        // fits an H100's limits; chosen and generated without a GPU.
        use crate::choose::{self, Request};
        use fdlab_core::{Axis, Boundary, Grid, Stencil};
        let info = super::super::tests::h100();
        let cases: [(&[usize], Boundary); 5] = [
            (&[101], Boundary::Neumann),
            (&[67, 45], Boundary::Periodic),
            (&[67, 45, 33], Boundary::Dirichlet),
            (&[11, 9, 7], Boundary::Periodic),
            (&[64, 64, 64], Boundary::Periodic),
        ];
        for (shape, boundary) in cases {
            let grid = Grid::unit(shape).unwrap();
            let dim = shape.len();
            let stencils = [
                Stencil::derivative(&grid, Axis::X, 1, 6).unwrap(),
                Stencil::derivative(&grid, Axis::from_index(dim - 1).unwrap(), 2, 2).unwrap(),
                Stencil::laplacian(&grid, 2).unwrap(),
            ];
            for st in &stencils {
                for precision in [Precision::F32, Precision::F64] {
                    let req = Request {
                        stencils: std::slice::from_ref(st),
                        boundary,
                        grid: &grid,
                        precision,
                        explicit: None,
                        tuned: None,
                        class: choose::device_class(&info.name),
                        tma: true,
                        device: &info.name,
                        cache: None,
                    };
                    let r = super::super::select(&req, Default::default(), &info);
                    assert!(r.is_ok(), "{shape:?} {boundary} {precision}: {:?}", r.err());
                }
            }
        }
    }

    #[test]
    fn foreign_launch_matches_apply_on_a_gpu() {
        use crate::device::Device;
        use crate::field::DeviceField;
        use crate::plan::PlanOptions;
        use cudarc::driver::DevicePtr;
        use fdlab_core::{Boundary, Field, Grid, Stencil};
        if let Err(why) = crate::device::probe() {
            println!("skipped: {why}");
            return;
        }
        let dev = Device::open(0).expect("a probed device opens");
        let grid = Grid::unit(&[64, 45, 33]).unwrap();
        let lap = Stencil::laplacian(&grid, 2).unwrap();
        let u = DeviceField::upload(&dev, &Field::<f32>::random(&grid, 3)).unwrap();
        let at = |f: &DeviceField<f32>| ForeignField {
            ptr: f.buffer().device_ptr(dev.stream()).0,
            shape: f.shape(),
            precision: Precision::F32,
        };
        let named = [
            None,
            Some("naive-64x4x1"),
            Some("texture-32x4x1"),
            Some("zmarch-32x4-v2-c64-u4-r1"),
        ];
        for name in named {
            let opts = PlanOptions {
                strategy: name.map(|n| n.parse().unwrap()),
                ..Default::default()
            };
            let plan = dev
                .plan::<f32>(std::slice::from_ref(&lap), Boundary::Periodic, &grid, opts)
                .unwrap();
            let mut want = DeviceField::zeros(&dev, &grid).unwrap();
            plan.apply(&u, &mut [&mut want]).unwrap();
            let got = DeviceField::<f32>::zeros(&dev, &grid).unwrap();
            dev.synchronize().unwrap();
            let s = dev.new_stream().unwrap();
            let handle = s.raw().cu_stream() as u64;
            // SAFETY: both fields outlive the synchronize below.
            unsafe { plan.apply_foreign(at(&u), &[at(&got)], Some(handle)) }.unwrap();
            s.synchronize().unwrap();
            let (g, w) = (got.download().unwrap(), want.download().unwrap());
            assert_eq!(g.as_slice(), w.as_slice(), "{}", plan.strategy());
            // In place, host memory and (when the kernel needs more) a misaligned pointer.
            // SAFETY: every call below is refused before launching.
            let e = unsafe { plan.apply_foreign(at(&u), &[at(&u)], None) }.unwrap_err();
            assert!(e.to_string().contains("overlaps"), "{e}");
            let host = vec![0f32; grid.len()];
            let h = ForeignField {
                ptr: host.as_ptr() as u64,
                ..at(&got)
            };
            let e = unsafe { plan.apply_foreign(at(&u), &[h], None) }.unwrap_err();
            assert!(e.to_string().contains("output 0"), "{e}");
            if plan.foreign_alignment().unwrap() > 4 {
                let off = ForeignField {
                    ptr: at(&got).ptr + 4,
                    ..at(&got)
                };
                let e = unsafe { plan.apply_foreign(at(&u), &[off], None) }.unwrap_err();
                assert!(e.to_string().contains("aligned"), "{e}");
            }
        }
    }
}
