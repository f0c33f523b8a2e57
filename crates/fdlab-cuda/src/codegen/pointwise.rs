//! One point per thread (`naive`, `ldg`, `texture`) or several z points per thread (`ppt`),
//! grid-stride over the region.

use super::emit::{coord, Gen};
use super::source::{CudaSource, InputKind, KernelSpec};
use crate::strategy::LoadPath;
use fdlab_core::{Boundary, Tap};

/// `p` plus a tap's offset in elements: `p + dx + dy * sy + dz * sz`.
fn offset_index(o: [i32; 3]) -> String {
    let mut idx = String::from("p");
    for (d, stride) in [(o[0], ""), (o[1], " * sy"), (o[2], " * sz")] {
        if d != 0 {
            let sign = if d < 0 { '-' } else { '+' };
            let mag = d.unsigned_abs();
            if stride.is_empty() {
                idx += &format!(" {sign} {mag}");
            } else if mag == 1 {
                idx += &format!(" {sign} {}", &stride[3..]);
            } else {
                idx += &format!(" {sign} {mag}{stride}");
            }
        }
    }
    idx
}

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
    // Interior points never wrap: as AMD's kernel does, the point's index is computed once
    // and every tap is a constant offset from it (one 64-bit multiply-add per point instead
    // of one per tap; the x offsets fold into the loads' immediates).
    let interior = spec.boundary == Boundary::Dirichlet;
    if interior {
        g.line(1, "const long long sy = nx, sz = (long long)nx * ny;");
    }
    let load = |t: &Tap| {
        let idx = if interior {
            offset_index(t.offset)
        } else {
            format!(
                "FD_IDX({}, {}, {})",
                coord(0, "i", t.offset[0]),
                coord(1, "j", t.offset[1]),
                coord(2, "k", t.offset[2])
            )
        };
        load_expr(path, ty, &idx)
    };
    let store = |o: usize| {
        if interior {
            format!("out{o}[p]")
        } else {
            format!("out{o}[FD_IDX(i, j, k)]")
        }
    };
    if ppt == 1 {
        // As the published kernels: thread (0, 0, 0) on point (0, 0, 0), one point per
        // thread, the launch grid covering the whole array, and threads off the region
        // return. Starting at the first interior point makes every warp's loads and stores
        // straddle sectors; a grid-stride loop costs AMD's kernel 10% (512³ f64 on an H200,
        // 0.656 ms without, 0.722 ms with). The launch check refuses grids the launch
        // cannot cover in one pass.
        for (d, (l, b)) in [("i", bx), ("j", by), ("k", bz)].iter().enumerate() {
            let t = ["x", "y", "z"][d];
            g.line(
                1,
                &format!("const int {l} = blockIdx.{t} * {b} + threadIdx.{t};"),
            );
        }
        g.line(
            1,
            "if (i < ilo || i >= ihi || j < jlo || j >= jhi || k < klo || k >= khi) return;",
        );
        g.maps(1, 2, "k");
        g.maps(1, 1, "j");
        g.maps(1, 0, "i");
        if interior {
            g.line(1, "const long long p = FD_IDX(i, j, k);");
        }
        g.sums(1, &load, &store);
        g.line(0, "}");
        src.single_pass = true;
    } else {
        g.line(1, &format!("for (int kb = klo + (blockIdx.z * {bz} + threadIdx.z) * {ppt}; kb < khi; kb += gridDim.z * {}) {{", bz * ppt));
        g.line(1, "#pragma unroll");
        g.line(1, &format!("for (int q = 0; q < {ppt}; ++q) {{"));
        g.line(1, "const int k = kb + q;");
        g.line(1, "if (k >= khi) break;");
        g.maps(2, 2, "k");
        g.line(2, &format!("for (int j = jlo + blockIdx.y * {by} + threadIdx.y; j < jhi; j += gridDim.y * {by}) {{"));
        g.maps(3, 1, "j");
        g.line(3, &format!("for (int i = ilo + blockIdx.x * {bx} + threadIdx.x; i < ihi; i += gridDim.x * {bx}) {{"));
        g.maps(4, 0, "i");
        if interior {
            g.line(4, "const long long p = FD_IDX(i, j, k);");
        }
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
        g.line(3, "}");
        g.line(2, "}");
        g.line(1, "}");
        g.line(1, "}");
        g.line(0, "}");
    }
    src.block = block;
    src.grid_map = [(0, bx), (1, by), (2, bz * ppt)];
    src.input = input;
    g.finish(src)
}
