//! Code generation: stencil + strategy → CUDA C source. Pure (no GPU, no driver): every kernel
//! can be generated, printed and compiled with NVRTC on a machine without a GPU.
//!
//! Every kernel has the same parameters: the input (a pointer, or a texture object for
//! [`LoadPath::Texture`]), one output pointer per stencil, then `nx, ny, nz`. Every kernel loops
//! over its tiles (grid-stride), so any grid size works with any launch grid.

mod bulk;
mod edge_sectors;
mod emit;
mod pencil;
mod pencil_window;
mod pointwise;
mod qmarch;
mod shared_tile;
mod smarch;
pub mod solver;
mod source;
pub mod step;
mod zmarch;

pub use source::{fnv1a, ConstantWeights, CudaSource, InputKind, KernelSpec, Unsupported, PRELUDE};

use crate::strategy::{Coefficients, LoadPath, Strategy};
use std::fmt::Write;

/// Generates the kernel for `spec`.
///
/// ```
/// use fdlab_core::{Axis, Boundary, Grid, Precision, Stencil};
/// use fdlab_cuda::codegen::{generate, KernelSpec};
/// use fdlab_cuda::{Coefficients, Strategy};
/// let g = Grid::unit(&[64, 64, 64]).unwrap();
/// let d = [Stencil::derivative(&g, Axis::X, 1, 8).unwrap()];
/// let k = generate(&KernelSpec { stencils: &d, boundary: Boundary::Periodic,
///     precision: Precision::F32, strategy: Strategy::PENCIL_SMALL,
///     coefficients: Coefficients::Immediate }).unwrap();
/// assert!(k.source().contains("__shared__"));
/// ```
pub fn generate(spec: &KernelSpec<'_>) -> Result<CudaSource, Unsupported> {
    spec.strategy
        .supports_spec(spec.stencils, spec.boundary, spec.precision)
        .map_err(|reason| Unsupported {
            strategy: spec.strategy.name(),
            stencils: spec
                .stencils
                .iter()
                .map(|s| s.label())
                .collect::<Vec<_>>()
                .join("+"),
            reason,
        })?;
    let base = base_source(spec);
    Ok(match spec.strategy {
        Strategy::Naive { block } => pointwise::pointwise(spec, base, LoadPath::Global, block, 1),
        Strategy::ReadOnly { block } => {
            pointwise::pointwise(spec, base, LoadPath::ReadOnly, block, 1)
        }
        Strategy::Texture { block } => {
            pointwise::pointwise(spec, base, LoadPath::Texture, block, 1)
        }
        Strategy::PointsPerThread { block, points } => {
            pointwise::pointwise(spec, base, LoadPath::ReadOnly, block, points)
        }
        Strategy::SharedTile { bx, by } => shared_tile::shared_tile(spec, base, bx, by),
        Strategy::Pencil {
            length,
            lines,
            threads_along,
            threads_across,
            window,
        } => pencil::pencil(
            spec,
            base,
            pencil::PencilParams {
                length,
                lines,
                t_along: threads_along,
                t_across: threads_across,
                window,
            },
        ),
        Strategy::SMarch { .. } => smarch_kernel(spec, base),
        Strategy::QMarch { .. } => qmarch_kernel(spec, base),
        Strategy::ZMarch { .. } => zmarch_kernel(spec, base),
    })
}

/// The kernel's name stem, launch defaults and weights, before a family fills it in.
fn base_source(spec: &KernelSpec<'_>) -> CudaSource {
    let constants = (spec.coefficients == Coefficients::Constant).then(|| ConstantWeights {
        symbol: String::new(),
        values: spec
            .stencils
            .iter()
            .flat_map(|s| s.taps().iter().map(|t| t.weight))
            .collect(),
    });
    CudaSource {
        name: spec.strategy.name(),
        body: String::new(),
        block: [1, 1, 1],
        grid_map: [(0, 1), (1, 1), (2, 1)],
        shared_bytes: 0,
        input: InputKind::Pointer,
        outputs: spec.stencils.len(),
        constants,
        precision: spec.precision,
        x_multiple: 1,
        single_pass: false,
        tensor_boxes: Vec::new(),
    }
}

fn smarch_kernel(spec: &KernelSpec<'_>, base: CudaSource) -> CudaSource {
    let Strategy::SMarch {
        bx,
        by,
        rows,
        chunk,
        depth,
        vec,
        copy,
        edge_reads,
    } = spec.strategy
    else {
        unreachable!("called for smarch strategies only")
    };
    // As zmarch, but x-only stencils also march along z, so that a tile spans y rows
    // (marching y would tile z, which has one plane in 2-D).
    let march_z = spec.stencils.iter().any(|s| s.radius()[2] > 0)
        || spec.stencils.iter().all(|s| s.radius()[1] == 0);
    let p = smarch::SMarchParams {
        bx,
        by,
        rows,
        chunk,
        depth,
        vec,
        copy,
        edge_reads,
    };
    smarch::smarch(spec, base, p, march_z)
}

fn qmarch_kernel(spec: &KernelSpec<'_>, base: CudaSource) -> CudaSource {
    let Strategy::QMarch {
        bx,
        by,
        rows,
        chunk,
        vec,
        tma,
        accumulate,
        split,
        unroll,
        streaming,
    } = spec.strategy
    else {
        unreachable!("called for qmarch strategies only")
    };
    let p = qmarch::QMarchParams {
        bx,
        by,
        rows,
        chunk,
        vec,
        tma,
        accumulate,
        split,
        unroll,
        streaming,
    };
    qmarch::qmarch(spec, base, p, crate::strategy::marches_z(spec.stencils))
}

fn zmarch_kernel(spec: &KernelSpec<'_>, base: CudaSource) -> CudaSource {
    let Strategy::ZMarch {
        bx,
        by,
        vec,
        chunk,
        streaming,
        unroll,
        rows,
    } = spec.strategy
    else {
        unreachable!("called for zmarch strategies only")
    };
    let march_z = spec.stencils.iter().any(|s| s.radius()[2] > 0);
    let p = zmarch::ZMarchParams {
        bx,
        by,
        vec,
        chunk,
        streaming,
        unroll,
        rows,
    };
    let mut k = zmarch::zmarch(spec, base, p, march_z);
    k.x_multiple = vec;
    k
}

/// One module's source holding several kernels (they share the prelude): one NVRTC call
/// compiles them all.
pub fn module_source(kernels: &[&CudaSource]) -> String {
    let mut s = String::from(PRELUDE);
    for k in kernels {
        let _ = writeln!(s, "\n{}", k.body);
    }
    s
}
