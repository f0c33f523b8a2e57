//! The emitter: [`Gen`] writes a kernel line by line; helpers name coordinates, wrap them on
//! periodic grids and write weights as literals. Every family builds on these.

use super::source::{fnv1a, CudaSource, InputKind, KernelSpec};
use crate::strategy::Coefficients;
use fdlab_core::{Boundary, Precision, Tap};

/// A weight as a literal of the kernel's type (shortest text that round-trips).
pub(crate) fn literal(w: f64, p: Precision) -> String {
    match p {
        Precision::F32 => {
            let v = w as f32;
            if v.is_finite() {
                format!("{v:e}f")
            } else {
                "0.0f".into()
            }
        }
        Precision::F64 => format!("{w:e}"),
    }
}

/// The statement that wraps the coordinate `var` into `[0, n)` on a periodic grid (the fast
/// unsigned test first: most coordinates are inside); nothing on other grids.
pub(crate) fn wrap_stmt(periodic: bool, var: &str, n: &str) -> String {
    if periodic {
        format!("{var} = (unsigned){var} < (unsigned){n} ? {var} : fd_periodic_any({var}, {n});")
    } else {
        String::new()
    }
}

/// Name of the variable holding the mapped coordinate `base + offset`.
pub(crate) fn coord_name(base: &str, o: i32) -> String {
    match o.cmp(&0) {
        std::cmp::Ordering::Equal => base.to_string(),
        std::cmp::Ordering::Less => format!("{base}_m{}", -o),
        std::cmp::Ordering::Greater => format!("{base}_p{o}"),
    }
}

/// Name of the variable holding the mapped coordinate `axis + offset`.
pub(crate) fn coord(axis: usize, base: &str, o: i32) -> String {
    let c = ["x", "y", "z"][axis];
    match o.cmp(&0) {
        std::cmp::Ordering::Equal => base.to_string(),
        std::cmp::Ordering::Less => format!("{c}_m{}", -o),
        std::cmp::Ordering::Greater => format!("{c}_p{o}"),
    }
}

/// The axes of a 2.5-D march (`zmarch`, `smarch`): the marching axis and the other non-x axis.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MarchAxes {
    /// The marching axis (z in 3-D, y for stencils without z reach).
    pub(crate) ma: usize,
    /// The other axis across x.
    pub(crate) oa: usize,
}

impl MarchAxes {
    pub(crate) fn new(march_z: bool) -> Self {
        let (ma, oa) = if march_z { (2, 1) } else { (1, 2) };
        MarchAxes { ma, oa }
    }

    /// `FD_IDX` of a point given by its x, other-axis and marching-axis coordinates.
    pub(crate) fn idx(&self, x: &str, o: &str, m: &str) -> String {
        let mut c = ["", "", ""];
        c[0] = x;
        c[self.oa] = o;
        c[self.ma] = m;
        format!("FD_IDX({}, {}, {})", c[0], c[1], c[2])
    }
}

pub(crate) struct Gen<'a> {
    pub(crate) spec: &'a KernelSpec<'a>,
    pub(crate) ty: &'static str,
    pub(crate) map: &'static str,
    /// The signature ends with a TMA tensor map parameter `tmap`.
    pub(crate) tensor_maps: usize,
    s: String,
}

impl<'a> Gen<'a> {
    pub(crate) fn new(spec: &'a KernelSpec<'a>) -> Self {
        Gen {
            spec,
            ty: spec.precision.cuda_type(),
            map: match spec.boundary {
                Boundary::Periodic => "fd_periodic",
                Boundary::Dirichlet => "fd_dirichlet",
                Boundary::Neumann => "fd_neumann",
            },
            tensor_maps: 0,
            s: String::new(),
        }
    }

    pub(crate) fn line(&mut self, indent: usize, text: &str) {
        for _ in 0..indent {
            self.s.push_str("  ");
        }
        self.s.push_str(text);
        self.s.push('\n');
    }

    /// Weight of tap `t` of stencil `o`: a literal or a `__constant__` element.
    pub(crate) fn weight(&self, o: usize, t: usize) -> String {
        match self.spec.coefficients {
            Coefficients::Immediate => {
                literal(self.spec.stencils[o].taps()[t].weight, self.spec.precision)
            }
            Coefficients::Constant => {
                let base: usize = self.spec.stencils[..o].iter().map(|s| s.taps().len()).sum();
                format!("@NAME@_w[{}]", base + t)
            }
        }
    }

    /// Reach below/above per axis of all stencils together.
    pub(crate) fn reach(&self) -> ([usize; 3], [usize; 3]) {
        let mut lo = [0; 3];
        let mut hi = [0; 3];
        for s in self.spec.stencils {
            let (b, a) = (s.reach_below(), s.reach_above());
            for d in 0..3 {
                lo[d] = lo[d].max(b[d]);
                hi[d] = hi[d].max(a[d]);
            }
        }
        (lo, hi)
    }

    /// `const int ilo = .., ihi = ..;` for x, y, z: the computed region.
    pub(crate) fn region(&mut self, indent: usize) {
        let (lo, hi) = self.reach();
        let dirichlet = self.spec.boundary == Boundary::Dirichlet;
        for (d, (l, n)) in [("i", "nx"), ("j", "ny"), ("k", "nz")].iter().enumerate() {
            let (a, b) = if dirichlet { (lo[d], hi[d]) } else { (0, 0) };
            self.line(
                indent,
                &format!("const int {l}lo = {a}, {l}hi = {n} - {b};"),
            );
        }
    }

    pub(crate) fn signature(&mut self, input: InputKind, threads: u32) {
        let ty = self.ty;
        let n = self.spec.stencils.len();
        if self.spec.coefficients == Coefficients::Constant {
            let total: usize = self.spec.stencils.iter().map(|s| s.taps().len()).sum();
            self.line(0, &format!("__constant__ {ty} @NAME@_w[{total}];"));
        }
        let first = match input {
            InputKind::Pointer => format!("const {ty}* __restrict__ in"),
            InputKind::Texture => "const unsigned long long tex".to_string(),
        };
        let outs: Vec<String> = (0..n)
            .map(|o| format!("{ty}* __restrict__ out{o}"))
            .collect();
        let tmap: String = (0..self.tensor_maps)
            .map(|i| format!(", const __grid_constant__ fd_tmap_t tmap{i}"))
            .collect();
        self.line(
            0,
            &format!(
                "extern \"C\" __global__ void __launch_bounds__({threads}) @NAME@({first}, {}, const int nx, const int ny, const int nz{tmap}) {{",
                outs.join(", ")
            ),
        );
    }

    /// Declares the mapped coordinates along `axis` for every distinct offset of the taps.
    pub(crate) fn maps(&mut self, indent: usize, axis: usize, base: &str) {
        let n = ["nx", "ny", "nz"][axis];
        let mut offs: Vec<i32> = self
            .spec
            .stencils
            .iter()
            .flat_map(|s| s.taps().iter().map(move |t| t.offset[axis]))
            .filter(|&o| o != 0)
            .collect();
        offs.sort_unstable();
        offs.dedup();
        for o in offs {
            let name = coord(axis, base, o);
            let map = self.map;
            self.line(
                indent,
                &format!(
                    "const int {name} = {map}({base} {} {}, {n});",
                    if o < 0 { '-' } else { '+' },
                    o.abs()
                ),
            );
        }
    }

    /// The sums: for each stencil `T acc_o = Σ w · load(tap)`, then `store(o, acc_o)`.
    pub(crate) fn sums(
        &mut self,
        indent: usize,
        load: &dyn Fn(&Tap) -> String,
        store: &dyn Fn(usize) -> String,
    ) {
        let ty = self.ty;
        for o in 0..self.spec.stencils.len() {
            let taps: Vec<Tap> = self.spec.stencils[o].taps().to_vec();
            self.line(indent, &format!("{ty} acc{o} = ({ty})0;"));
            for (t, tap) in taps.iter().enumerate() {
                let w = self.weight(o, t);
                let l = load(tap);
                self.line(indent, &format!("acc{o} += {w} * {l};"));
            }
            let st = store(o);
            self.line(indent, &format!("{st} = acc{o};"));
        }
    }

    /// A marching kernel's opening: signature, computed region, and the region along the
    /// marching (`m…`) and other (`o…`) axes.
    pub(crate) fn march_prologue(&mut self, axes: MarchAxes, threads: u32) {
        self.signature(InputKind::Pointer, threads);
        self.region(1);
        let n = ["nx", "ny", "nz"];
        let ln = ["i", "j", "k"];
        let (ma, oa) = (axes.ma, axes.oa);
        self.line(1, &format!("const int nm = {}, no = {};", n[ma], n[oa]));
        self.line(
            1,
            &format!(
                "const int mlo = {}lo, mhi = {}hi, olo = {}lo, ohi = {}hi;",
                ln[ma], ln[ma], ln[oa], ln[oa]
            ),
        );
    }

    /// The three loops of a shared-memory march over its tiles (chunks of `chunk` planes,
    /// `rows` rows of the other axis, `cols` x points), opened at indents 1–3, and the tile's
    /// computed planes `mb..me` (skipping tiles with none) at indent 4.
    pub(crate) fn march_tiles(&mut self, chunk: u32, rows: u32, cols: u32) {
        self.line(
            1,
            &format!("for (int cm = blockIdx.z * {chunk}; cm < nm; cm += gridDim.z * {chunk}) {{"),
        );
        self.line(
            2,
            &format!("for (int y0 = blockIdx.y * {rows}; y0 < no; y0 += gridDim.y * {rows}) {{"),
        );
        self.line(
            3,
            &format!("for (int x0 = blockIdx.x * {cols}; x0 < nx; x0 += gridDim.x * {cols}) {{"),
        );
        self.line(
            4,
            &format!("const int mb = max(cm, mlo), me = min(cm + {chunk}, mhi);"),
        );
        self.line(4, "if (mb >= me) continue;");
    }

    /// [`Gen::march_prologue`] for the shared-memory marches: also the 16-byte aligned dynamic
    /// shared memory as `sm` and the thread's linear index `tid` in a block `bx` wide.
    pub(crate) fn shared_march_prologue(&mut self, axes: MarchAxes, threads: u32, bx: u32) {
        self.shared_march_prologue_aligned(axes, threads, bx, 16);
    }

    /// [`Gen::shared_march_prologue`] with the dynamic shared memory aligned to `align`
    /// bytes (128 for TMA tensor copies).
    pub(crate) fn shared_march_prologue_aligned(
        &mut self,
        axes: MarchAxes,
        threads: u32,
        bx: u32,
        align: u32,
    ) {
        self.march_prologue(axes, threads);
        let ty = self.ty;
        self.line(
            1,
            &format!("extern __shared__ __align__({align}) double fd_smem{align}[];"),
        );
        self.line(
            1,
            &format!("{ty}* const sm = reinterpret_cast<{ty}*>(fd_smem{align});"),
        );
        self.line(
            1,
            &format!("const int tid = threadIdx.y * {bx} + threadIdx.x;"),
        );
    }

    /// Closes the blocks opened at indents `from`, `from - 1`, …, 0.
    pub(crate) fn close_from(&mut self, from: usize) {
        for i in (0..=from).rev() {
            self.line(i, "}");
        }
    }

    pub(crate) fn finish(self, mut src: CudaSource) -> CudaSource {
        let stem = src.name.clone();
        let h = fnv1a(&self.s) ^ fnv1a(&stem);
        let name = format!("fdlab_{}_{:016x}", stem.replace(['-', '.'], "_"), h);
        src.body = self.s.replace("@NAME@", &name);
        if let Some(c) = src.constants.as_mut() {
            c.symbol = format!("{name}_w");
        }
        src.name = name;
        src
    }
}

/// The CUDA vector type of `v` elements (`""` for one).
pub(crate) fn vec_type(p: Precision, v: u32) -> &'static str {
    match (p, v) {
        (Precision::F32, 2) => "float2",
        (Precision::F32, 4) => "float4",
        (Precision::F64, 2) => "double2",
        _ => "",
    }
}
