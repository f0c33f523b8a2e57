//! The pencils' fast tile load and sliding register window, and how threads walk a tile.

use super::emit::Gen;
use fdlab_core::{Boundary, Tap};

/// What the window kernels' fast tile load needs to know.
pub(super) struct FastLoad {
    pub(super) axis: usize,
    pub(super) rl: usize,
    pub(super) rh: usize,
    pub(super) l: usize,
    pub(super) p: usize,
    pub(super) lw_row: usize,
    pub(super) threads: usize,
    /// `FD_IDX` of (ga, gb, c).
    pub(super) load_idx: String,
    /// `FD_IDX` of the thread's first body element (ci0, oi0).
    pub(super) base_idx: String,
}

/// The window kernels' tile load for tiles whose body lies inside the grid (`a0 + l <= na`,
/// `b0 + p <= nb`; the kernel opens `if (…) {` here and the generic loader is the `else`).
/// The body (l × p points, no boundary images) is read with affine addresses: one base pointer
/// per thread, compile-time element offsets times the pencil or along stride, no division,
/// no boundary map, no guards; batches of at most 16 loads in flight. Then the rl + rh halo
/// lines of each pencil through the boundary map. The same for every axis: the tile's
/// coalesced direction is x (the along axis for an x stencil, the pencils otherwise).
pub(super) fn pencil_fast_load(g: &mut Gen, f: &FastLoad) {
    let (l, p) = (f.l, f.p);
    g.line(4, &format!("if (a0 + {l} <= na && b0 + {p} <= nb) {{"));
    f.halo_loads(g);
    // Coalesced (x) count and the other count of the body.
    let (cols, rows) = if f.axis == 0 { (l, p) } else { (p, l) };
    match walk(cols, rows, f.threads) {
        Some(w) => f.body_affine(g, w),
        None => f.body_divided(g, cols, rows),
    }
    f.halo_stores(g);
}

impl FastLoad {
    /// Halo lines per pencil, halo points in all, and halo loads per thread.
    fn halo(&self) -> (usize, usize, usize) {
        let hl = self.rl + self.rh;
        let total = hl * self.p;
        (hl, total, total.div_ceil(self.threads))
    }

    /// Tile offset of body element (ci, oi), relative or absolute.
    fn tile_off(&self, ci: &str, oi: &str) -> String {
        let (rl, p) = (self.rl, self.p);
        if self.axis == 0 {
            format!("({oi}) * {} + {rl} + ({ci})", self.lw_row)
        } else {
            format!("({rl} + ({oi})) * {p} + ({ci})")
        }
    }

    /// Halo: rl lines before the body and rh after it, for every pencil; loaded first (in
    /// flight with the body's first batch), stored last.
    fn halo_loads(&self, g: &mut Gen) {
        let (ty, map) = (g.ty, g.map);
        let dirichlet = g.spec.boundary == Boundary::Dirichlet;
        let (rl, l, p, t) = (self.rl, self.l, self.p, self.threads);
        let (hl, total, hn) = self.halo();
        for k in 0..hn {
            let guard = if (k + 1) * t > total {
                format!("h{k} < {total} && ")
            } else {
                String::new()
            };
            g.line(5, &format!("const int h{k} = tid + {};", k * t));
            if self.axis == 0 {
                g.line(
                    5,
                    &format!("const int j{k} = h{k} % {hl}, pl{k} = h{k} / {hl};"),
                );
            } else {
                g.line(
                    5,
                    &format!("const int pl{k} = h{k} % {p}, j{k} = h{k} / {p};"),
                );
            }
            g.line(
                5,
                &format!("const int al{k} = j{k} < {rl} ? j{k} : j{k} + {l};"),
            );
            let idx = self
                .load_idx
                .replace("ga", &format!("ga{k}"))
                .replace("gb", &format!("b0 + pl{k}"));
            if dirichlet {
                g.line(5, &format!("const int ga{k} = a0 + al{k} - {rl};"));
                g.line(
                    5,
                    &format!(
                        "const {ty} hv{k} = ({guard}ga{k} >= 0 && ga{k} < na) ? in[{idx}] : ({ty})0;"
                    ),
                );
            } else {
                g.line(
                    5,
                    &format!("const int ga{k} = {map}(a0 + al{k} - {rl}, na);"),
                );
                let cond = guard.trim_end_matches(" && ");
                if cond.is_empty() {
                    g.line(5, &format!("const {ty} hv{k} = in[{idx}];"));
                } else {
                    g.line(
                        5,
                        &format!("const {ty} hv{k} = {cond} ? in[{idx}] : ({ty})0;"),
                    );
                }
            }
        }
    }

    /// The body with affine addresses: one base pointer per thread, compile-time offsets.
    fn body_affine(&self, g: &mut Gen, w: Walk) {
        let ty = g.ty;
        let Walk { ci0, oi0, offs } = w;
        let ostride = match self.axis {
            0 | 1 => "(long long)nx",
            _ => "(long long)nx * ny",
        };
        g.line(5, &format!("const int ci0 = {ci0}, oi0 = {oi0};"));
        g.line(5, &format!("const {ty}* src = in + {};", self.base_idx));
        g.line(
            5,
            &format!("{ty}* dst = tile + {};", self.tile_off("ci0", "oi0")),
        );
        g.line(5, &format!("const long long os = {ostride};"));
        for chunk in offs.chunks(16) {
            g.line(5, "{");
            for (k, (dci, doi)) in chunk.iter().enumerate() {
                g.line(6, &format!("const {ty} v{k} = src[{doi} * os + {dci}];"));
            }
            for (k, (dci, doi)) in chunk.iter().enumerate() {
                let off = if self.axis == 0 {
                    doi * self.lw_row + dci
                } else {
                    doi * self.p + dci
                };
                g.line(6, &format!("dst[{off}] = v{k};"));
            }
            g.line(5, "}");
        }
    }

    /// The body when neither count divides the other: the kernel divides per element.
    fn body_divided(&self, g: &mut Gen, cols: usize, rows: usize) {
        let (ty, t) = (g.ty, self.threads);
        let per = cols * rows / t;
        let total = cols * rows;
        g.line(5, &format!("{ty} v[{}];", per.min(16)));
        g.line(5, "#pragma unroll 1");
        g.line(
            5,
            &format!("for (int kb = 0; kb < {}; kb += 16) {{", per.max(1)),
        );
        g.line(6, "#pragma unroll");
        g.line(6, &format!("for (int k = 0; k < {}; ++k) {{", per.min(16)));
        g.line(7, &format!("const int e = tid + (kb + k) * {t};"));
        g.line(7, &format!("v[k] = ({ty})0;"));
        g.line(7, &format!("if (e < {total}) {{"));
        g.line(8, &format!("const int ci0 = e % {cols}, oi0 = e / {cols};"));
        g.line(8, &format!("v[k] = in[{}];", self.base_idx));
        g.line(7, "}");
        g.line(6, "}");
        g.line(6, "#pragma unroll");
        g.line(6, &format!("for (int k = 0; k < {}; ++k) {{", per.min(16)));
        g.line(7, &format!("const int e = tid + (kb + k) * {t};"));
        g.line(
            7,
            &format!(
                "if (e < {total}) tile[{}] = v[k];",
                self.tile_off(&format!("e % {cols}"), &format!("e / {cols}"))
            ),
        );
        g.line(6, "}");
        g.line(5, "}");
    }

    /// The halo values loaded first, stored into the tile.
    fn halo_stores(&self, g: &mut Gen) {
        let (_, total, hn) = self.halo();
        for k in 0..hn {
            let t_idx = if self.axis == 0 {
                format!("pl{k} * {} + al{k}", self.lw_row)
            } else {
                format!("al{k} * {} + pl{k}", self.p)
            };
            if (k + 1) * self.threads > total {
                g.line(5, &format!("if (h{k} < {total}) tile[{t_idx}] = hv{k};"));
            } else {
                g.line(5, &format!("tile[{t_idx}] = hv{k};"));
            }
        }
    }
}

/// What the window compute phase needs to know about the pencil tile.
pub(super) struct WindowLayout {
    pub(super) axis: usize,
    pub(super) rl: usize,
    pub(super) rh: usize,
    /// Points per pencil in the tile (without halo).
    pub(super) l: usize,
    /// Pencils in the tile.
    pub(super) p: usize,
    /// Row stride of an x tile (padded to odd).
    pub(super) lw_row: usize,
    pub(super) t_along: usize,
    pub(super) t_across: usize,
    /// `FD_IDX` of output point (a, b, c).
    pub(super) out_idx: String,
}

/// The window compute phase of a pencil kernel (after the tile is loaded and synchronised):
/// thread (ta, tb) computes the m = l / t_along consecutive points ta·m … ta·m + m − 1 of
/// pencils tb, tb + t_across, …. Fully unrolled along the run: the window is named registers
/// `u0 … u{m+rl+rh-1}` (no indexed register array, so no local memory), one shared load per
/// point after the first rl + rh, and the taps' tile offsets are compile-time immediates.
///
/// y and z store each point straight to global memory (a warp writes 32 consecutive x). An x
/// warp's 32 lanes hold 32 different pencils, so direct stores would touch 32 rows per
/// instruction: x results go back into the tile (after a barrier; each pencil's row is only
/// read by its own threads, so one barrier per group of pencils suffices) and a coalesced
/// copy-out loop stores them.
pub(super) fn pencil_window(g: &mut Gen, w: &WindowLayout) {
    let ty = g.ty;
    let m = w.l / w.t_along;
    g.line(4, "#pragma unroll 1");
    g.line(
        4,
        &format!("for (int qb = 0; qb < {}; ++qb) {{", w.p / w.t_across),
    );
    g.line(5, &format!("const int pl = tb + qb * {};", w.t_across));
    g.line(
        5,
        &format!("const int a = a0 + ta * {m}, b = b0 + pl; // first output of the run"),
    );
    if w.axis == 0 {
        w.x_runs(g, ty, m);
        w.x_copy_out(g, ty);
    } else {
        w.yz_runs(g, ty, m);
    }
}

impl WindowLayout {
    /// Window element c is tile position ta·m + c along the axis (halo included), i.e. global
    /// position a + c − rl; output q uses elements q + rl + offset.
    fn elem(&self, c: usize) -> String {
        if self.axis == 0 {
            format!("wt[{c}]")
        } else {
            format!("wt[{}]", c * self.p)
        }
    }

    /// The sums of output q of the run.
    fn point(&self, g: &mut Gen, indent: usize, q: usize, store: &dyn Fn(usize) -> String) {
        g.line(indent, "{");
        let load = |tp: &Tap| format!("u{}", (q + self.rl) as i32 + tp.offset[self.axis]);
        g.sums(indent + 1, &load, store);
        g.line(indent, "}");
    }

    /// Loads of the elements output q needs that earlier outputs did not.
    fn fetch(&self, g: &mut Gen, ty: &str, indent: usize, q: usize) {
        let span = self.rl + self.rh; // window length − 1
        let from = if q == 0 { 0 } else { q + span };
        for c in from..=q + span {
            g.line(indent, &format!("const {ty} u{c} = {};", self.elem(c)));
        }
    }

    /// An x run: results in registers, written back into the tile once every thread of the
    /// pencils has read its window.
    fn x_runs(&self, g: &mut Gen, ty: &str, m: usize) {
        let (lw_row, rl) = (self.lw_row, self.rl);
        g.line(
            5,
            &format!("const {ty}* wt = tile + pl * {lw_row} + ta * {m};"),
        );
        for q in 0..m {
            g.line(5, &format!("{ty} r{q};"));
        }
        for q in 0..m {
            self.fetch(g, ty, 5, q);
            let st = move |_o: usize| format!("r{q}");
            self.point(g, 5, q, &st);
        }
        g.line(
            5,
            "// Every thread of these pencils has read its window: results replace them.",
        );
        g.line(5, "__syncthreads();");
        g.line(
            5,
            &format!("{ty}* rt = tile + pl * {lw_row} + {rl} + ta * {m};"),
        );
        for q in 0..m {
            g.line(5, &format!("rt[{q}] = r{q};"));
        }
        g.line(4, "}");
        g.line(4, "__syncthreads();");
    }

    /// Copy-out of an x tile: consecutive threads store consecutive x of one pencil. Tiles
    /// wholly inside the computed region: affine addresses as in the fast load; others: a
    /// check per point.
    fn x_copy_out(&self, g: &mut Gen, ty: &str) {
        let (l, p, rl, lw_row) = (self.l, self.p, self.rl, self.lw_row);
        let out_idx = &self.out_idx;
        let threads = self.t_along * self.t_across;
        let fast = walk(l, p, threads);
        if let Some(Walk { ci0, oi0, offs }) = &fast {
            g.line(
                4,
                &format!("if (a0 >= alo && a0 + {l} <= ahi && b0 + {p} <= nb) {{"),
            );
            g.line(5, &format!("const int ci0 = {ci0}, oi0 = {oi0};"));
            g.line(
                5,
                &format!(
                    "{ty}* dst = out0 + {};",
                    out_idx.replace("(a, b,", "(a0 + ci0, b0 + oi0,")
                ),
            );
            g.line(
                5,
                &format!("const {ty}* res = tile + oi0 * {lw_row} + {rl} + ci0;"),
            );
            g.line(5, "const long long os = nx;");
            for (dci, doi) in offs {
                g.line(
                    5,
                    &format!("dst[{doi} * os + {dci}] = res[{}];", doi * lw_row + dci),
                );
            }
            g.line(4, "} else {");
        }
        let guard = format!(
            "if (a >= alo && a < ahi && b < nb) out0[{out_idx}] = tile[pl * {lw_row} + {rl} + al];"
        );
        if l.is_multiple_of(threads) {
            g.line(4, "#pragma unroll 1");
            g.line(4, &format!("for (int pl = 0; pl < {p}; ++pl) {{"));
            g.line(5, "const int b = b0 + pl;");
            g.line(5, "#pragma unroll");
            g.line(5, &format!("for (int k = 0; k < {}; ++k) {{", l / threads));
            g.line(
                6,
                &format!("const int al = tid + k * {threads}, a = a0 + al;"),
            );
            g.line(6, &guard);
            g.line(5, "}");
            g.line(4, "}");
        } else if threads.is_multiple_of(l) {
            g.line(4, &format!("const int al = tid % {l}, a = a0 + al;"));
            g.line(4, "#pragma unroll 4");
            g.line(
                4,
                &format!(
                    "for (int pl = tid / {l}; pl < {p}; pl += {}) {{",
                    threads / l
                ),
            );
            g.line(5, "const int b = b0 + pl;");
            g.line(5, &guard);
            g.line(4, "}");
        } else {
            g.line(4, "#pragma unroll 4");
            g.line(
                4,
                &format!("for (int s = tid; s < {}; s += {threads}) {{", l * p),
            );
            g.line(
                5,
                &format!("const int al = s % {l}, pl = s / {l}, a = a0 + al, b = b0 + pl;"),
            );
            g.line(5, &guard);
            g.line(4, "}");
        }
        if fast.is_some() {
            g.line(4, "}");
        }
    }

    /// A y or z run: each point stored straight to global memory (a warp writes 32
    /// consecutive x).
    fn yz_runs(&self, g: &mut Gen, ty: &str, m: usize) {
        let p = self.p;
        g.line(5, "if (b < nb) {");
        g.line(6, &format!("const {ty}* wt = tile + ta * {} + pl;", m * p));
        g.line(6, &format!("{ty}* o = out0 + {};", self.out_idx));
        let stride = if self.axis == 1 {
            "(long long)nx"
        } else {
            "(long long)nx * ny"
        };
        g.line(6, &format!("const long long so = {stride};"));
        // Fast path: the whole run is inside the computed region; else a check per point.
        g.line(6, &format!("if (a >= alo && a + {m} <= ahi) {{"));
        for q in 0..m {
            self.fetch(g, ty, 7, q);
            let st = |_o: usize| "*o".to_string();
            self.point(g, 7, q, &st);
            if q + 1 < m {
                g.line(7, "o += so;");
            }
        }
        g.line(6, "} else {");
        for q in 0..m {
            self.fetch(g, ty, 7, q);
            g.line(7, &format!("if (a + {q} >= alo && a + {q} < ahi)"));
            let st = |_o: usize| "*o".to_string();
            self.point(g, 7, q, &st);
            if q + 1 < m {
                g.line(7, "o += so;");
            }
        }
        g.line(6, "}");
        g.line(5, "}");
        g.line(4, "}");
    }
}

/// How `threads` threads walk a `cols × rows` block row by row (cols contiguous in global
/// memory): element k of a thread is (ci0 + dci, oi0 + doi) with compile-time (dci, doi), or
/// `None` when neither count divides the other (then the kernel divides per element).
fn walk(cols: usize, rows: usize, threads: usize) -> Option<Walk> {
    let per = cols * rows / threads;
    if !(cols * rows).is_multiple_of(threads) {
        return None;
    }
    if threads.is_multiple_of(cols) {
        let step = threads / cols;
        Some(Walk {
            ci0: format!("tid % {cols}"),
            oi0: format!("tid / {cols}"),
            offs: (0..per).map(|k| (0, k * step)).collect(),
        })
    } else if cols.is_multiple_of(threads) {
        let across = cols / threads;
        Some(Walk {
            ci0: "tid".into(),
            oi0: "0".into(),
            offs: (0..per)
                .map(|k| ((k % across) * threads, k / across))
                .collect(),
        })
    } else {
        None
    }
}

/// A thread's walk over a block of the tile (see [`walk`]).
struct Walk {
    /// Its first element's column (contiguous in global memory), a C expression.
    ci0: String,
    /// Its first element's row, a C expression.
    oi0: String,
    /// Every element's (column, row) offset from the first.
    offs: Vec<(usize, usize)>,
}
