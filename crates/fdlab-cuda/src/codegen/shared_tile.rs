//! An xy tile and its halo in shared memory; z neighbours from global memory.

use super::emit::{coord, Gen};
use super::source::{CudaSource, InputKind, KernelSpec};
use fdlab_core::{Boundary, Tap};

/// An xy tile with halo in shared memory, loaded through the boundary map; z taps from global.
pub(super) fn shared_tile(
    spec: &KernelSpec<'_>,
    mut src: CudaSource,
    bx: u32,
    by: u32,
) -> CudaSource {
    let mut g = Gen::new(spec);
    let ty = g.ty;
    let (lo, hi) = g.reach();
    let tw = bx as usize + lo[0] + hi[0];
    let th = by as usize + lo[1] + hi[1];
    let dirichlet = spec.boundary == Boundary::Dirichlet;
    g.signature(InputKind::Pointer, bx * by);
    g.line(1, "extern __shared__ double fd_smem[];");
    g.line(
        1,
        &format!("{ty}* tile = reinterpret_cast<{ty}*>(fd_smem);"),
    );
    g.line(1, "const int tid = threadIdx.y * blockDim.x + threadIdx.x;");
    g.region(1);
    g.line(
        1,
        "for (int k = klo + blockIdx.z; k < khi; k += gridDim.z) {",
    );
    g.maps(2, 2, "k");
    g.line(
        2,
        &format!("for (int y0 = blockIdx.y * {by}; y0 < ny; y0 += gridDim.y * {by}) {{"),
    );
    g.line(
        3,
        &format!("for (int x0 = blockIdx.x * {bx}; x0 < nx; x0 += gridDim.x * {bx}) {{"),
    );
    // Two unrolled phases: every load of the tile is in flight before the first shared store.
    let n_tile = tw * th;
    let threads = (bx * by) as usize;
    let iters = n_tile.div_ceil(threads);
    g.line(4, &format!("{ty} v[{iters}];"));
    g.line(4, "#pragma unroll");
    g.line(4, &format!("for (int r = 0; r < {iters}; ++r) {{"));
    g.line(5, &format!("const int s = tid + r * {threads};"));
    g.line(5, &format!("v[r] = ({ty})0;"));
    g.line(5, &format!("if (s < {n_tile}) {{"));
    g.line(
        6,
        &format!(
            "int gx = x0 + s % {tw} - {}, gy = y0 + s / {tw} - {};",
            lo[0], lo[1]
        ),
    );
    if dirichlet {
        g.line(
            6,
            "if (gx >= 0 && gx < nx && gy >= 0 && gy < ny) v[r] = in[FD_IDX(gx, gy, k)];",
        );
    } else {
        let map = g.map;
        g.line(
            6,
            &format!(
                "if (gx >= -{} && gx < nx + {} && gy >= -{} && gy < ny + {}) {{",
                lo[0], hi[0], lo[1], hi[1]
            ),
        );
        g.line(7, &format!("gx = {map}(gx, nx); gy = {map}(gy, ny);"));
        g.line(7, "v[r] = in[FD_IDX(gx, gy, k)];");
        g.line(6, "}");
    }
    g.line(5, "}");
    g.line(4, "}");
    g.line(4, "#pragma unroll");
    g.line(4, &format!("for (int r = 0; r < {iters}; ++r) {{"));
    g.line(5, &format!("const int s = tid + r * {threads};"));
    g.line(5, &format!("if (s < {n_tile}) tile[s] = v[r];"));
    g.line(4, "}");
    g.line(4, "__syncthreads();");
    g.line(4, "const int i = x0 + threadIdx.x, j = y0 + threadIdx.y;");
    g.line(4, "if (i >= ilo && i < ihi && j >= jlo && j < jhi) {");
    // Taps off the plane read global memory; they need mapped x and y too.
    let off_plane = spec
        .stencils
        .iter()
        .any(|s| s.taps().iter().any(|t| t.offset[2] != 0));
    if off_plane {
        g.maps(5, 1, "j");
        g.maps(5, 0, "i");
    }
    let (lx, ly) = (lo[0] as i32, lo[1] as i32);
    let load = |t: &Tap| {
        if t.offset[2] == 0 {
            format!(
                "tile[(threadIdx.y + {}) * {tw} + threadIdx.x + {}]",
                ly + t.offset[1],
                lx + t.offset[0]
            )
        } else {
            format!(
                "__ldg(in + FD_IDX({}, {}, {}))",
                coord(0, "i", t.offset[0]),
                coord(1, "j", t.offset[1]),
                coord(2, "k", t.offset[2])
            )
        }
    };
    let store = |o: usize| format!("out{o}[FD_IDX(i, j, k)]");
    g.sums(5, &load, &store);
    g.line(4, "}");
    g.line(4, "__syncthreads();");
    g.line(3, "}");
    g.line(2, "}");
    g.line(1, "}");
    g.line(0, "}");
    src.block = [bx, by, 1];
    src.grid_map = [(0, bx), (1, by), (2, 1)];
    src.shared_bytes = (tw * th * spec.precision.size()) as u32;
    g.finish(src)
}
