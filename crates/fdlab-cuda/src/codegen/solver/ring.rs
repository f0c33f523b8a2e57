//! The 3-D wave step of [`super::tiled`] with its loads in flight through shared memory:
//! every plane's tile (own points and halo) and the point fields (`p⁻`, `c²Δt²`) go to
//! shared memory by `cp.async`, `depth` planes ahead of the plane computed, in a ring of
//! slots. No register holds a load in flight, so the bytes in flight per SM grow with the
//! ring rather than with the registers a block can spare.
//!
//! Why: the tiled step keeps one plane's loads in registers (about 37 KB in flight per SM
//! for `f32`), which an H100 hides and an H200, with its faster memory, does not: the same
//! kernel ran 512³ at 93% of the copy on an H100 and 84% on an H200, 128 registers a thread,
//! one block per SM, every extra plane ahead in registers spilling or losing occupancy.
//!
//! The ring: slots of whole tiles for the planes `m … m + r + depth` (the plane computed,
//! the `r` planes whose own points still enter the march queue, and those in flight) and
//! slots of point fields for `m … m + depth`. Each march step waits for the copies of the
//! plane `depth` ahead of the last one issued, passes one barrier (after which no thread
//! reads the slot of plane `m − 1` any more), issues the copies of plane `m + depth` into
//! that slot, then computes plane `m` from shared memory: the queue's front (plane `m + r`)
//! from its tile's own points, the taps across the plane as in the tiled step.

use super::step::StepSpec;
use super::tiled::{Tile, Update};
use super::{value_bytes, PRELUDE};
use std::fmt::Write;

/// The most dynamic shared memory a block of an H100 or H200 can have (227 KiB): the limit
/// of the kernels compiled without a device (the codegen tests).
pub const H100_SHARED: usize = 227 * 1024;

/// `cp.async` of 4, 8 or 16 bytes; `ok == false` zero-fills the target without reading.
const HELPERS: &str = "\
#ifndef FDLAB_RING_HELPERS
#define FDLAB_RING_HELPERS
template <int N> static __device__ __forceinline__ void fd_ring_cp(void* smem, const void* g, bool ok) {
  const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
  if (N == 16) asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\" :: \"r\"(s), \"l\"(g), \"r\"(ok ? 16 : 0) : \"memory\");
  else asm volatile(\"cp.async.ca.shared.global [%0], [%1], %2, %3;\" :: \"r\"(s), \"l\"(g), \"n\"(N), \"r\"(ok ? N : 0) : \"memory\");
}
static __device__ __forceinline__ void fd_ring_commit() { asm volatile(\"cp.async.commit_group;\" ::: \"memory\"); }
template <int N> static __device__ __forceinline__ void fd_ring_wait() { asm volatile(\"cp.async.wait_group %0;\" :: \"n\"(N) : \"memory\"); }
#endif
";

/// The ring's geometry for a spec: the depth it gets and the slot counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ring {
    /// Planes in flight ahead of the plane computed.
    pub depth: usize,
    /// Tile slots: `r + depth + 1`.
    pub tiles: usize,
    /// Point-field slots: `depth + 1`.
    pub points: usize,
    /// Dynamic shared memory of a block, in bytes.
    pub bytes: usize,
}

impl Ring {
    /// The ring of `spec` (its `launch.ring` planes, fewer where `limit` bytes of shared
    /// memory would not hold them), or `None` when the spec asks for none or cannot have one
    /// (2-D, or not even one plane ahead fits).
    pub fn of(spec: &StepSpec, update: Update, limit: usize) -> Option<Ring> {
        if !spec.three || !spec.launch.tile || spec.launch.ring == 0 {
            return None;
        }
        let t = Tile::new(spec, update);
        let elem = value_bytes(spec.ty);
        let fields = t.point_fields().len();
        (1..=spec.launch.ring as usize)
            .rev()
            .map(|depth| {
                let tiles = spec.r + depth + 1;
                let points = depth + 1;
                let bytes = elem * (tiles * t.th * t.tw + points * fields * t.threads() * spec.v());
                Ring {
                    depth,
                    tiles,
                    points,
                    bytes,
                }
            })
            .find(|ring| ring.bytes <= limit)
    }
}

/// The wave (or heat) step of `spec` with a ring of `ring` (from [`Ring::of`]).
pub fn ring_step(spec: &StepSpec, update: Update, ring: Ring) -> String {
    // The march queue holds the stencil's planes only: what lies ahead is in the ring.
    let mut spec = spec.clone();
    spec.launch.ahead = 0;
    let t = Tile::new(&spec, update);
    let mut g = String::from(PRELUDE);
    g.push_str(HELPERS);
    t.signature(&mut g, ", 1");
    let (ty, th, tw) = (spec.ty, t.th, t.tw);
    let lanes = t.threads() * spec.v();
    let _ = writeln!(
        g,
        "  extern __shared__ __align__(16) unsigned char fd_ring[];"
    );
    let _ = writeln!(
        g,
        "  {ty} (*tile)[{th}][{tw}] = reinterpret_cast<{ty} (*)[{th}][{tw}]>(fd_ring);"
    );
    let _ = writeln!(
        g,
        "  {ty} (*pts)[{lanes}] = reinterpret_cast<{ty} (*)[{lanes}]>(fd_ring + {});",
        ring.tiles * th * tw * value_bytes(ty)
    );
    t.coordinates(&mut g);
    t.halo_slots(&mut g);
    let w = Writer {
        t: &t,
        s: &spec,
        ring,
    };
    w.prologue(&mut g);
    w.march(&mut g);
    g
}

/// Writes the ring kernel's copies and march.
struct Writer<'a> {
    t: &'a Tile<'a>,
    s: &'a StepSpec,
    ring: Ring,
}

impl Writer<'_> {
    /// Bytes of one vector of `v` elements: the size of every copy.
    fn vector_bytes(&self) -> usize {
        self.s.v() * value_bytes(self.s.ty)
    }

    /// Copies plane `mm`'s tile into tile slot `slot`: this thread's own vector and its
    /// halo slots; zeros outside the grid (or, periodic, the wrapped values).
    fn copy_tile(&self, g: &mut String, indent: usize, mm: &str, slot: &str) {
        let (r, v, p) = (self.s.r, self.s.v(), self.t.p());
        let n = self.vector_bytes();
        let pad = " ".repeat(indent);
        let (off, inside) = self.plane(mm);
        let own_ok = match (&inside, self.s.periodic) {
            (_, true) => "true".to_string(),
            (Some(c), false) => format!("active && {c}"),
            (None, false) => "active".to_string(),
        };
        let _ = writeln!(
            g,
            "{pad}fd_ring_cp<{n}>(&tile[{slot}][ty + {r}][{p} + tx * {v}], u + col + {off}, {own_ok});"
        );
        for j in 0..self.t.slots() {
            let ok = match &inside {
                Some(c) => format!("hv{j} && {c}"),
                None => "true".to_string(),
            };
            let _ = writeln!(
                g,
                "{pad}if (hu{j}) fd_ring_cp<{n}>(&tile[{slot}][hr{j}][hx{j}], u + hc{j} + {off}, {ok});"
            );
        }
    }

    /// Copies plane `mm`'s point fields at this thread's points into point slot `slot`.
    fn copy_points(&self, g: &mut String, indent: usize, mm: &str, slot: &str) {
        let fields = self.t.point_fields();
        let (v, n) = (self.s.v(), self.vector_bytes());
        let pad = " ".repeat(indent);
        for (f, (_, src, _)) in fields.iter().enumerate() {
            let row = format!("({slot}) * {} + {f}", fields.len());
            let _ = writeln!(
                g,
                "{pad}fd_ring_cp<{n}>(&pts[{row}][tid * {v}], {src} + col + (long long)({mm}) * sm, active);"
            );
        }
    }

    /// The plane offset of `mm` (clamped to plane 0 outside the grid, where nothing is
    /// read), and the inside flag when the outside is zero.
    fn plane(&self, mm: &str) -> (String, Option<String>) {
        if self.s.periodic {
            (format!("(long long)fd_wrap({mm}, nm) * sm"), None)
        } else {
            let c = format!("fd_inside({mm}, nm)");
            (format!("(long long)({c} ? ({mm}) : 0) * sm"), Some(c))
        }
    }

    /// The queue up to the plane before the first (from global memory, as the tiled step),
    /// then the copies of the first planes: one group with the tiles of planes `m0 …
    /// m0 + r − 1`, and one group per plane ahead with the tile of `m0 + r + i` and the point
    /// fields of `m0 + i`.
    fn prologue(&self, g: &mut String) {
        let (r, ring) = (self.s.r, self.ring);
        for t in 0..2 * r {
            let mm = format!("m0 + ({})", t as i64 - r as i64);
            self.s.march_load(g, 2, &format!("q{t}"), "u", &mm);
        }
        for j in 0..r {
            let _ = writeln!(g, "  if ({j} < m1 - m0) {{");
            self.copy_tile(g, 4, &format!("m0 + {j}"), &j.to_string());
            g.push_str("  }\n");
        }
        g.push_str("  fd_ring_commit();\n");
        for i in 0..ring.depth {
            let _ = writeln!(g, "  if ({i} < m1 - m0) {{");
            self.copy_tile(
                g,
                4,
                &format!("m0 + {}", r + i),
                &((r + i) % ring.tiles).to_string(),
            );
            self.copy_points(g, 4, &format!("m0 + {i}"), &(i % ring.points).to_string());
            g.push_str("  }\n");
            g.push_str("  fd_ring_commit();\n");
        }
        for (name, _, _) in self.t.point_fields() {
            self.s.decl(g, 2, name);
        }
    }

    /// The march: wait for plane `m`'s copies, one barrier, the copies of plane
    /// `m + depth`, then plane `m` from shared memory.
    fn march(&self, g: &mut String) {
        let (r, v, p, ring) = (self.s.r, self.s.v(), self.t.p(), self.ring);
        let d = ring.depth;
        self.s.unroll_pragma(g);
        g.push_str("  for (int k = 0; k < m1 - m0; ++k) {\n");
        g.push_str("    const int m = m0 + k;\n");
        // All but the last depth − 1 groups: those of plane m (and before) have landed.
        let _ = writeln!(g, "    fd_ring_wait<{}>();", d - 1);
        g.push_str("    __syncthreads();\n");
        let _ = writeln!(g, "    if (k + {d} < m1 - m0) {{");
        self.copy_tile(
            g,
            6,
            &format!("m + {}", r + d),
            &format!("(k + {}) % {}", r + d, ring.tiles),
        );
        self.copy_points(
            g,
            6,
            &format!("m + {d}"),
            &format!("(k + {d}) % {}", ring.points),
        );
        g.push_str("    }\n");
        g.push_str("    fd_ring_commit();\n");
        let _ = writeln!(g, "    const int sl = k % {};", ring.tiles);
        let _ = writeln!(g, "    const int sp = k % {};", ring.points);
        // The queue's front: this thread's own points of plane m + r.
        self.t.read_shared(
            g,
            &format!("q{}", 2 * r),
            &format!("ty + {r}"),
            &format!("{p} + tx * {v}"),
            &format!("(k + {r}) % {}", ring.tiles),
        );
        let fields = self.t.point_fields();
        for (f, (name, _, _)) in fields.iter().enumerate() {
            self.read_points(g, name, &format!("sp * {} + {f}", fields.len()));
        }
        g.push_str("    const long long c = col + (long long)m * sm;\n");
        self.t.compute(g);
        for t in 0..2 * r {
            for l in 0..v {
                let _ = writeln!(g, "    q{t}_{l} = q{}_{l};", t + 1);
            }
        }
        g.push_str("  }\n  fd_ring_wait<0>();\n}\n");
    }

    /// This thread's vector of point-field row `row` into `dst_0 …`.
    fn read_points(&self, g: &mut String, dst: &str, row: &str) {
        let v = self.s.v();
        if v == 1 {
            let _ = writeln!(g, "    {dst}_0 = pts[{row}][tid];");
            return;
        }
        let vt = self.s.vt();
        let _ = writeln!(
            g,
            "    {{ const {vt} t = *reinterpret_cast<const {vt}*>(&pts[{row}][tid * {v}]);"
        );
        for (l, comp) in ["x", "y", "z", "w"].iter().enumerate().take(v) {
            let _ = writeln!(g, "      {dst}_{l} = t.{comp};");
        }
        g.push_str("    }\n");
    }
}

#[cfg(test)]
mod tests {
    use super::super::tiled::tests::spec;
    use super::*;

    #[test]
    fn the_ring_holds_the_stencils_planes_and_those_in_flight_within_the_shared_memory() {
        for ty in ["float", "double"] {
            let s = spec(ty, true);
            let ring = Ring::of(&s, Update::Wave, H100_SHARED).expect("a ring at 512³");
            assert_eq!(ring.depth, s.launch.ring as usize);
            assert_eq!(ring.tiles, s.r + ring.depth + 1);
            assert_eq!(ring.points, ring.depth + 1);
            assert!(ring.bytes <= H100_SHARED, "{ring:?}");
            // Less shared memory: fewer planes in flight, none where not one fits.
            let small = Ring::of(&s, Update::Wave, ring.bytes - 1).expect("a shallower ring");
            assert!(small.depth < ring.depth && small.bytes < ring.bytes);
            assert_eq!(Ring::of(&s, Update::Wave, 1024), None);
        }
    }

    #[test]
    fn each_march_step_waits_for_its_plane_then_passes_one_barrier_before_reusing_a_slot() {
        for ty in ["float", "double"] {
            for periodic in [true, false] {
                let s = spec(ty, periodic);
                let ring = Ring::of(&s, Update::Wave, H100_SHARED).expect("a ring");
                let k = ring_step(&s, Update::Wave, ring);
                let body = &k[k.find("for (int k = 0;").expect("the march")..];
                let wait = body.find("fd_ring_wait<").expect("a wait");
                let barrier = body.find("__syncthreads()").expect("a barrier");
                let copy = body.find("fd_ring_cp<").expect("copies in the march");
                assert!(wait < barrier && barrier < copy, "{body}");
                assert_eq!(k.matches("__syncthreads()").count(), 1);
                assert!(k.contains(&format!("fd_ring_wait<{}>", ring.depth - 1)));
                // No global loads in the march besides the copies: the queue's front comes
                // from the ring.
                let march = &body[..body.find("fd_ring_wait<0>").expect("the final wait")];
                assert!(!march.contains("__ldg"), "{march}");
                assert_eq!(k.contains("fd_wrap(m"), periodic);
            }
        }
    }
}
