//! The 3-D heat and wave steps with one shared-memory plane per march step (Micikevicius'
//! 2.5-D scheme).
//!
//! Why: the register-queue kernel in [`super::step::wave`] reads each point's eight
//! middle-axis neighbours of an 8th-order stencil through the caches: with four rows per
//! block, twelve rows of each plane pass from L2 for four rows of output, and the step stalled
//! at about 80% of the copy (H100) however the block was shaped. Here a block of `bx × by`
//! threads puts the plane it computes into shared memory — its own points from the threads'
//! march queues, the `r` rows above and below and the `r` points left and right by coalesced
//! loads issued one plane ahead — and every tap across the plane reads shared memory; the
//! march-axis taps still come from each thread's register queue. Two plane slots alternate,
//! so one barrier per plane suffices.
//!
//! Threads past the grid's edge (a block hanging over `nx` or `no`) stay in the loop for the
//! barriers: they load the wrapped column (periodic) or put zeros in their slots, and store
//! nothing.

use super::step::StepSpec;
use super::{literal, value_bytes, PRELUDE};
use std::fmt::Write;

/// The names of the axes in march order, as in the kernels' variables.
const AX: [&str; 3] = ["x", "o", "m"];

/// What a tiled step computes from the stencil's sum at each point.
#[derive(Debug, Clone, Copy)]
pub enum Update {
    /// `q = 2p − q + c²Δt² L p` in place on `q` (the wave step).
    Wave,
    /// `v = u + Δtκ L u`, with Δtκ per point from `kap` or the literal `kc`.
    Heat {
        /// Δtκ per point from `kap`.
        field_kappa: bool,
        /// Δtκ where it is one constant.
        kc: f64,
    },
}

/// The step of `update` with the plane in shared memory, 3-D only. Same parameters and
/// launch grid as the register-queue kernels ([`super::step::wave`], [`super::step::heat`]).
pub fn tiled(spec: &StepSpec, update: Update) -> String {
    assert!(spec.three, "the tiled steps are 3-D");
    let t = Tile::new(spec, update);
    let mut g = String::from(PRELUDE);
    t.head(&mut g);
    t.halo_slots(&mut g);
    for k in 0..t.slots() {
        spec.decl(&mut g, 2, &format!("h{k}"));
    }
    t.prologue(&mut g);
    t.plane_loop(&mut g);
    g
}

/// The tile's geometry: `bx × by` threads of `v` x points, `p` halo points each side in x
/// (whole vectors), `r` halo rows above and below.
pub(crate) struct Tile<'a> {
    s: &'a StepSpec,
    update: Update,
    ty: &'static str,
    r: usize,
    v: usize,
    bx: usize,
    by: usize,
    /// Halo points each side along x: whole vectors covering `r`.
    p: usize,
    /// Row length of a shared plane, in elements.
    pub(crate) tw: usize,
    /// Rows of a shared plane.
    pub(crate) th: usize,
}

impl<'a> Tile<'a> {
    pub(crate) fn new(s: &'a StepSpec, update: Update) -> Tile<'a> {
        let (r, v) = (s.r, s.v());
        let (bx, by) = (s.launch.bx as usize, s.launch.by as usize);
        let p = s.x_vectors() * v;
        Tile {
            s,
            update,
            ty: s.ty,
            r,
            v,
            bx,
            by,
            p,
            tw: bx * v + 2 * p,
            th: by + 2 * r,
        }
    }

    /// Halo points each side along x.
    pub(crate) fn p(&self) -> usize {
        self.p
    }

    pub(crate) fn threads(&self) -> usize {
        self.bx * self.by
    }

    /// A `v`-wide view of the shared plane `slot` at (`row`, `col`): a vector lvalue.
    fn sh(&self, slot: &str, row: &str, col: &str) -> String {
        if self.v == 1 {
            format!("tile[{slot}][{row}][{col}]")
        } else {
            format!(
                "*reinterpret_cast<{}*>(&tile[{slot}][{row}][{col}])",
                self.s.vt()
            )
        }
    }

    /// The vector `name_0 … name_{v−1}` as one value of the vector type.
    pub(crate) fn packed(&self, name: &str) -> String {
        if self.v == 1 {
            return format!("{name}_0");
        }
        let parts: Vec<String> = (0..self.v).map(|l| format!("{name}_{l}")).collect();
        format!("make_{}({})", self.s.vt(), parts.join(", "))
    }

    /// Signature, two static shared planes, then [`Tile::coordinates`].
    fn head(&self, g: &mut String) {
        self.signature(g, "");
        let _ = writeln!(
            g,
            "  __shared__ __align__(16) {} tile[2][{}][{}];",
            self.ty, self.th, self.tw
        );
        self.coordinates(g);
    }

    /// The kernel's signature; `bounds_extra` follows the thread count in
    /// `__launch_bounds__` (e.g. `", 1"` for one block per SM).
    pub(crate) fn signature(&self, g: &mut String, bounds_extra: &str) {
        let ty = self.ty;
        let _ = writeln!(
            g,
            "extern \"C\" __global__ void __launch_bounds__({}{bounds_extra}) @NAME@({}, const int nx, const int no, const int nm, const int mlo, const int mhi, unsigned long long* __restrict__ bad, double* __restrict__ badval, const unsigned long long tag) {{",
            self.threads(),
            match self.update {
                Update::Wave => format!("const {ty}* __restrict__ u, {ty}* __restrict__ q, const {ty}* __restrict__ c2"),
                Update::Heat { .. } => format!("const {ty}* __restrict__ u, {ty}* __restrict__ v, const {ty}* __restrict__ kap"),
            }
        );
    }

    /// Thread position, the column each thread loads (wrapped past the edge) and the march
    /// queue's declarations.
    pub(crate) fn coordinates(&self, g: &mut String) {
        let ty = self.ty;
        let _ = writeln!(g, "  const int tx = threadIdx.x, ty = threadIdx.y;");
        let _ = writeln!(g, "  const int tid = ty * {} + tx;", self.bx);
        let _ = writeln!(g, "  const int xb = blockIdx.x * {};", self.bx * self.v);
        let _ = writeln!(g, "  const int ob = blockIdx.y * {};", self.by);
        let _ = writeln!(g, "  const int x0 = xb + tx * {}, o = ob + ty;", self.v);
        g.push_str("  const bool active = x0 < nx && o < no;\n");
        self.s.march_bounds(g);
        g.push_str("  const long long so = nx, sm = (long long)nx * no;\n");
        let _ = writeln!(g, "  const {ty} zero = ({ty})0;");
        if self.s.periodic {
            g.push_str("  const long long col = x0 % nx + so * (o % no);\n");
        } else {
            // Zero outside: a hanging thread's loads read column 0 and its slots get zeros.
            g.push_str("  const long long col = active ? x0 + so * o : 0;\n");
        }
        for t in 0..=self.s.last() {
            self.s.decl(g, 2, &format!("q{t}"));
        }
    }

    /// The plane offset of march index `mm`: wrapped, or with a flag when outside.
    pub(crate) fn plane(&self, mm: &str) -> (String, Option<String>) {
        if self.s.periodic {
            (format!("(long long)fd_wrap({mm}, nm) * sm"), None)
        } else {
            (
                format!("(long long)({mm}) * sm"),
                Some(format!("fd_inside({mm}, nm)")),
            )
        }
    }

    /// The halo loads each thread does per plane: the rows above and below the tile
    /// (`r` rows of `bx` vectors each side) and the vectors left and right of its rows.
    /// Each slot gets its global column (`hc{j}`), whether it is inside the grid (`hv{j}`)
    /// and where it goes in the shared plane (`hr{j}`, `hx{j}`); whether this thread has
    /// the slot at all is `hu{j}`.
    pub(crate) fn halo_slots(&self, g: &mut String) {
        let (r, v, bx, by, p) = (self.r, self.v, self.bx, self.by, self.p);
        let xv = p / v;
        let wrap = |n: &str, e: &str| format!("((({e}) % {n} + {n}) % {n})");
        let mut j = 0;
        // Rows above and below: slot i covers row h = i / bx, vector i % bx.
        let rows = 2 * r * bx;
        for base in (0..rows).step_by(self.threads()) {
            let _ = writeln!(g, "  const int hi{j} = tid + {base};");
            let _ = writeln!(g, "  const bool hu{j} = hi{j} < {rows};");
            let _ = writeln!(
                g,
                "  const int hr{j} = hi{j} / {bx} < {r} ? hi{j} / {bx} : hi{j} / {bx} + {by};"
            );
            let _ = writeln!(g, "  const int hx{j} = {p} + (hi{j} % {bx}) * {v};");
            let _ = writeln!(g, "  const int hgo{j} = ob + hr{j} - {r};");
            let _ = writeln!(g, "  const int hgx{j} = xb + (hi{j} % {bx}) * {v};");
            self.slot_column(g, j, &wrap);
            j += 1;
        }
        // Left and right of the tile's rows: slot i covers row i / (2 xv), side and vector
        // from i % (2 xv).
        let sides = 2 * xv * by;
        for base in (0..sides).step_by(self.threads()) {
            let _ = writeln!(g, "  const int hi{j} = tid + {base};");
            let _ = writeln!(g, "  const bool hu{j} = hi{j} < {sides};");
            let _ = writeln!(g, "  const int hs{j} = hi{j} % {};", 2 * xv);
            let _ = writeln!(g, "  const int hr{j} = hi{j} / {} + {r};", 2 * xv);
            let _ = writeln!(
                g,
                "  const int hx{j} = hs{j} < {xv} ? hs{j} * {v} : {} + (hs{j} - {xv}) * {v};",
                p + bx * v
            );
            let _ = writeln!(g, "  const int hgo{j} = ob + hr{j} - {r};");
            let _ = writeln!(g, "  const int hgx{j} = xb - {p} + hx{j};");
            self.slot_column(g, j, &wrap);
            j += 1;
        }
        debug_assert_eq!(j, self.slots());
    }

    /// Halo loads per thread and plane: the rows above and below, then the sides.
    pub(crate) fn slots(&self) -> usize {
        let rows = 2 * self.r * self.bx;
        let sides = 2 * (self.p / self.v) * self.by;
        rows.div_ceil(self.threads()) + sides.div_ceil(self.threads())
    }

    /// Slot `j`'s global column and inside flag from its grid position `hgx{j}`, `hgo{j}`.
    fn slot_column(&self, g: &mut String, j: usize, wrap: &dyn Fn(&str, &str) -> String) {
        if self.s.periodic {
            let _ = writeln!(
                g,
                "  const long long hc{j} = {} + so * {};",
                wrap("nx", &format!("hgx{j}")),
                wrap("no", &format!("hgo{j}"))
            );
            let _ = writeln!(g, "  const bool hv{j} = true;");
        } else {
            let _ = writeln!(
                g,
                "  const bool hv{j} = hgx{j} >= 0 && hgx{j} < nx && hgo{j} >= 0 && hgo{j} < no;"
            );
            let _ = writeln!(
                g,
                "  const long long hc{j} = hv{j} ? hgx{j} + so * hgo{j} : 0;"
            );
        }
    }

    /// Loads every halo slot of plane `mm` into `h{j}` (zeros where outside or unused).
    fn load_halo(&self, g: &mut String, indent: usize, mm: &str, slots: usize) {
        let (off, inside) = self.plane(mm);
        for j in 0..slots {
            let cond = match &inside {
                Some(c) => format!("hu{j} && hv{j} && {c}"),
                None => format!("hu{j}"),
            };
            self.s.vload(
                g,
                indent,
                &format!("h{j}"),
                "u",
                &format!("hc{j} + {off}"),
                Some(&cond),
            );
        }
    }

    /// The march queue up to the plane before the first, and plane `m0`'s halo.
    fn prologue(&self, g: &mut String) {
        let slots = self.slots();
        for t in 0..self.s.last() {
            let mm = format!("m0 + ({})", t as i64 - self.r as i64);
            self.s.march_load(g, 2, &format!("q{t}"), "u", &mm);
        }
        self.load_halo(g, 2, "m0", slots);
        self.declare_point_fields(g);
        self.load_point_fields(g, 2, "", "col + (long long)m0 * sm", "active");
    }

    /// The march: each plane into shared memory, one barrier, then the taps across the plane
    /// from shared memory and along the march from the queue.
    fn plane_loop(&self, g: &mut String) {
        let (r, v, p) = (self.r, self.v, self.p);
        let s = self.s;
        let slots = self.slots();
        let ahead = r + s.launch.ahead as usize;
        s.unroll_pragma(g);
        g.push_str("  for (int m = m0; m < m1; ++m) {\n");
        g.push_str("    const int sl = (m - m0) & 1;\n");
        s.march_load(
            g,
            4,
            &format!("q{}", s.last()),
            "u",
            &format!("m + {ahead}"),
        );
        // This plane into the shared slot: own points (zeros for a hanging thread when the
        // outside is zero) and the halo loaded one plane ago.
        let own = if s.periodic {
            self.packed(&format!("q{r}"))
        } else {
            let zero = if v == 1 {
                "zero".to_string()
            } else {
                format!("{}{{}}", s.vt())
            };
            format!("active ? {} : {zero}", self.packed(&format!("q{r}")))
        };
        let _ = writeln!(
            g,
            "    {} = {own};",
            self.sh("sl", &format!("ty + {r}"), &format!("{p} + tx * {v}"))
        );
        for j in 0..slots {
            let _ = writeln!(
                g,
                "    if (hu{j}) {} = {};",
                self.sh("sl", &format!("hr{j}"), &format!("hx{j}")),
                self.packed(&format!("h{j}"))
            );
        }
        // The next plane's halo and this plane's other fields are in flight over the barrier.
        g.push_str("    if (m + 1 < m1) {\n");
        self.load_halo(g, 6, "m + 1", slots);
        g.push_str("    }\n");
        g.push_str("    const long long c = col + (long long)m * sm;\n");
        self.load_point_fields(g, 4, "n", "c + sm", "active && m + 1 < m1");
        g.push_str("    __syncthreads();\n");
        self.compute(g);
        for t in 0..s.last() {
            for l in 0..v {
                let _ = writeln!(g, "    q{t}_{l} = q{}_{l};", t + 1);
            }
        }
        self.rotate_point_fields(g);
        g.push_str("  }\n}\n");
    }

    /// The active threads' points of the plane in slot `sl`: the taps across the plane from
    /// shared memory, along the march from the queue, the update with the point fields
    /// (`old_…`, `cc_…` or `kk_…`), the store and the non-finite check.
    pub(crate) fn compute(&self, g: &mut String) {
        let (r, v, p) = (self.r, self.v, self.p);
        let s = self.s;
        g.push_str("    if (active) {\n");
        // The row segment around this thread's points: 2·xv + 1 vectors.
        let xv = p / v;
        for w in 0..=2 * xv {
            s.decl(g, 6, &format!("xs{w}"));
            self.read_shared(
                g,
                &format!("xs{w}"),
                &format!("ty + {r}"),
                &format!("tx * {v} + {}", w * v),
                "sl",
            );
        }
        for k in 1..=r {
            for (name, sign) in [("om", "-"), ("op", "+")] {
                s.decl(g, 6, &format!("{name}{k}"));
                self.read_shared(
                    g,
                    &format!("{name}{k}"),
                    &format!("ty + {r} {sign} {k}"),
                    &format!("{p} + tx * {v}"),
                    "sl",
                );
            }
        }
        let x_at = |e: i64| -> String {
            // Element e of the segment is x offset e − p from the thread's first point.
            format!("xs{}_{}", e / v as i64, e % v as i64)
        };
        let pair = |a: usize, l: usize, k: usize| -> String {
            match a {
                0 => format!(
                    "{} + {}",
                    x_at((p + l - k) as i64),
                    x_at((p + l + k) as i64)
                ),
                1 => format!("om{k}_{l} + op{k}_{l}"),
                _ => format!("q{}_{l} + q{}_{l}", r - k, r + k),
            }
        };
        for l in 0..v {
            self.sum_and_update(g, l, &pair);
        }
        let mut store = String::new();
        let dst = match self.update {
            Update::Wave => "q",
            Update::Heat { .. } => "v",
        };
        s.vstore(&mut store, dst, "c", "out");
        let mut check = String::new();
        s.check(&mut check);
        for line in store.lines().chain(check.lines()) {
            let _ = writeln!(g, "  {line}");
        }
        g.push_str("    }\n");
    }

    /// The other fields the update reads at the thread's points: the wave's p⁻ (read, then
    /// overwritten by this thread only: a plain load) and c²Δt², or the heat step's Δtκ.
    pub(crate) fn point_fields(&self) -> Vec<(&'static str, &'static str, bool)> {
        match self.update {
            Update::Wave => vec![("old", "q", false), ("cc", "c2", true)],
            Update::Heat {
                field_kappa: true, ..
            } => vec![("kk", "kap", true)],
            Update::Heat { .. } => vec![],
        }
    }

    /// Declares the point fields' values for the plane computed (`old`, …) and for the next
    /// one (`nold`, …): the next plane's are loaded while this one is computed.
    fn declare_point_fields(&self, g: &mut String) {
        for (name, _, _) in self.point_fields() {
            self.s.decl(g, 2, name);
            self.s.decl(g, 2, &format!("n{name}"));
        }
    }

    /// Loads the point fields at index `idx` into `prefix` + name, when `guard` holds.
    fn load_point_fields(
        &self,
        g: &mut String,
        indent: usize,
        prefix: &str,
        idx: &str,
        guard: &str,
    ) {
        let fields = self.point_fields();
        if fields.is_empty() {
            return;
        }
        let pad = " ".repeat(indent);
        let _ = writeln!(g, "{pad}if ({guard}) {{");
        for (name, src, read_only) in fields {
            let dst = format!("{prefix}{name}");
            if read_only {
                self.s.vload(g, indent + 2, &dst, src, idx, None);
            } else {
                self.s.vload_coherent(g, indent + 2, &dst, src, idx);
            }
        }
        let _ = writeln!(g, "{pad}}}");
    }

    /// The next plane's point fields become this plane's.
    fn rotate_point_fields(&self, g: &mut String) {
        for (name, _, _) in self.point_fields() {
            for l in 0..self.v {
                let _ = writeln!(g, "    {name}_{l} = n{name}_{l};");
            }
        }
    }

    /// Lane `l`'s stencil sum and `out_l`, summed in the order of the register-queue kernel
    /// of the same update (so both give the same bits).
    pub(crate) fn sum_and_update(
        &self,
        g: &mut String,
        l: usize,
        pair: &dyn Fn(usize, usize, usize) -> String,
    ) {
        let (s, ty, r) = (self.s, self.ty, self.r);
        match self.update {
            Update::Wave => {
                let _ = writeln!(
                    g,
                    "      {ty} total_{l} = {} * q{r}_{l};",
                    literal(s.w0, ty)
                );
                for a in 0..3 {
                    let terms: Vec<String> = (1..=r)
                        .map(|k| format!("{} * ({})", literal(s.w2[a][k], ty), pair(a, l, k)))
                        .collect();
                    let _ = writeln!(
                        g,
                        "      const {ty} acc_{}_{l} = {};",
                        AX[a],
                        terms.join(" + ")
                    );
                    let _ = writeln!(g, "      total_{l} += acc_{}_{l};", AX[a]);
                }
                let _ = writeln!(
                    g,
                    "      const {ty} out_{l} = q{r}_{l} + q{r}_{l} - old_{l} + cc_{l} * total_{l};"
                );
            }
            Update::Heat { field_kappa, kc } => {
                let kappa = (field_kappa, kc);
                super::step::heat_update(g, 6, s, &[0, 1, 2], l, kappa, pair);
            }
        }
    }

    /// Reads the shared vector at (`row`, `col`) of slot `slot` into `dst_0 …`.
    pub(crate) fn read_shared(&self, g: &mut String, dst: &str, row: &str, col: &str, slot: &str) {
        if self.v == 1 {
            let _ = writeln!(g, "      {dst}_0 = tile[{slot}][{row}][{col}];");
            return;
        }
        let vt = self.s.vt();
        let _ = writeln!(
            g,
            "      {{ const {vt} t = *reinterpret_cast<const {vt}*>(&tile[{slot}][{row}][{col}]);"
        );
        for (l, comp) in ["x", "y", "z", "w"].iter().enumerate().take(self.v) {
            let _ = writeln!(g, "        {dst}_{l} = t.{comp};");
        }
        g.push_str("      }\n");
    }
}

/// Whether `spec` asks for the tiled step and can have it: 3-D, and two planes within the
/// 48 KiB of static shared memory (else the register-queue kernel runs).
pub fn usable(spec: &StepSpec) -> bool {
    spec.launch.tile && spec.three && shared_bytes(spec) <= 48 * 1024
}

/// Shared memory the tiled step of `spec` declares, in bytes.
pub fn shared_bytes(spec: &StepSpec) -> usize {
    let t = Tile::new(spec, Update::Wave);
    let bytes = value_bytes(spec.ty);
    2 * t.th * t.tw * bytes
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::Launch;
    use super::*;

    /// The 8th-order 3-D wave step of 512³ points with the default launch.
    pub(in super::super) fn spec(ty: &'static str, periodic: bool) -> StepSpec {
        let bytes = value_bytes(ty);
        StepSpec {
            ty,
            r: 4,
            three: true,
            periodic,
            w2: std::array::from_fn(|_| vec![-2.0, 1.0, 0.5, 0.25, 0.125]),
            w0: -6.0,
            launch: Launch::for_wave(3, 4, [512, 512, 512], bytes),
            ranged: false,
        }
    }

    #[test]
    fn default_tiles_fit_static_shared_memory_and_read_every_tap_from_it() {
        for ty in ["float", "double"] {
            for periodic in [true, false] {
                let s = spec(ty, periodic);
                assert!(s.launch.tile);
                assert!(shared_bytes(&s) <= 48 * 1024, "{}", shared_bytes(&s));
                let k = tiled(&s, Update::Wave);
                // Eight middle-axis rows and the x segment from shared memory, one barrier.
                assert!(k.contains("om4_0") && k.contains("op4_0"), "{k}");
                assert_eq!(k.matches("__syncthreads()").count(), 1);
                assert_eq!(k.contains("fd_wrap(m + "), periodic);
            }
        }
    }
}
