//! One point per thread (`naive`, `ldg`, `texture`) or several z points per thread (`ppt`),
//! grid-stride over the region.

use super::emit::{coord, Gen};
use super::source::{CudaSource, InputKind, KernelSpec};
use crate::strategy::LoadPath;
use fdlab_core::Tap;

fn load_expr(path: LoadPath, ty: &str, idx: &str) -> String {
    match path {
        LoadPath::Global => format!("in[{idx}]"),
        LoadPath::ReadOnly => format!("__ldg(in + {idx})"),
        LoadPath::Texture => format!("fd_tex_{ty}(tex, (int)({idx}))"),
    }
}

/// One point per thread (or `ppt` consecutive z points), grid-stride over the region.
pub(super) fn pointwise(
    spec: &KernelSpec<'_>,
    mut src: CudaSource,
    path: LoadPath,
    block: [u32; 3],
    ppt: u32,
) -> CudaSource {
    let mut g = Gen::new(spec);
    let ty = g.ty;
    let input = if path == LoadPath::Texture {
        InputKind::Texture
    } else {
        InputKind::Pointer
    };
    let [bx, by, bz] = block;
    g.signature(input, bx * by * bz);
    g.region(1);
    let load = |t: &Tap| {
        let idx = format!(
            "FD_IDX({}, {}, {})",
            coord(0, "i", t.offset[0]),
            coord(1, "j", t.offset[1]),
            coord(2, "k", t.offset[2])
        );
        load_expr(path, ty, &idx)
    };
    let store = |o: usize| format!("out{o}[FD_IDX(i, j, k)]");
    if ppt == 1 {
        g.line(1, &format!("for (int k = klo + blockIdx.z * {bz} + threadIdx.z; k < khi; k += gridDim.z * {bz}) {{"));
    } else {
        g.line(1, &format!("for (int kb = klo + (blockIdx.z * {bz} + threadIdx.z) * {ppt}; kb < khi; kb += gridDim.z * {}) {{", bz * ppt));
        g.line(1, "#pragma unroll");
        g.line(1, &format!("for (int q = 0; q < {ppt}; ++q) {{"));
        g.line(1, "const int k = kb + q;");
        g.line(1, "if (k >= khi) break;");
    }
    g.maps(2, 2, "k");
    g.line(2, &format!("for (int j = jlo + blockIdx.y * {by} + threadIdx.y; j < jhi; j += gridDim.y * {by}) {{"));
    g.maps(3, 1, "j");
    g.line(3, &format!("for (int i = ilo + blockIdx.x * {bx} + threadIdx.x; i < ihi; i += gridDim.x * {bx}) {{"));
    g.maps(4, 0, "i");
    if ppt > 1 {
        // AMD's ascending-address loads: issue every distinct load in address order first,
        // then sum in tap order.
        let mut taps: Vec<[i32; 3]> = spec
            .stencils
            .iter()
            .flat_map(|s| s.taps().iter().map(|t| t.offset))
            .collect();
        taps.sort_by_key(|o| (o[2], o[1], o[0]));
        taps.dedup();
        for (n, o) in taps.iter().enumerate() {
            let l = load(&Tap {
                offset: *o,
                weight: 0.0,
            });
            g.line(4, &format!("const {ty} v{n} = {l};"));
        }
        let name_of =
            |t: &Tap| format!("v{}", taps.iter().position(|o| *o == t.offset).unwrap_or(0));
        g.sums(4, &name_of, &store);
    } else {
        g.sums(4, &load, &store);
    }
    g.line(3, "}");
    g.line(2, "}");
    if ppt > 1 {
        g.line(1, "}");
    }
    g.line(1, "}");
    g.line(0, "}");
    src.block = block;
    src.grid_map = [(0, bx), (1, by), (2, bz * ppt)];
    src.input = input;
    g.finish(src)
}
