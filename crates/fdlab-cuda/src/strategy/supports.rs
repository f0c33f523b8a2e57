//! Whether a strategy is well formed ([`Strategy::validate`]: option ranges from the table,
//! CUDA's block limits, options that contradict each other) and whether it can run given
//! stencils on a given boundary and scalar type.

use super::form::{Form, Value};
use super::{SmCopy, Strategy};
use fdlab_core::{Boundary, Precision, Stencil};

/// CUDA's block limits: threads per block, and threads along x, y, z.
const MAX_THREADS: u64 = 1024;
const MAX_BLOCK: [u64; 3] = [1024, 1024, 64];

impl Strategy {
    /// Threads per block (saturating at `u32::MAX`: [`Strategy::validate`] refuses more than
    /// 1024).
    pub fn threads(&self) -> u32 {
        let t: u64 = self.block_shape().iter().map(|&d| d as u64).product();
        u32::try_from(t).unwrap_or(u32::MAX)
    }

    /// Threads per block along x, y, z.
    fn block_shape(&self) -> [u32; 3] {
        match *self {
            Strategy::Naive { block }
            | Strategy::ReadOnly { block }
            | Strategy::Texture { block }
            | Strategy::PointsPerThread { block, .. } => block,
            Strategy::SharedTile { bx, by }
            | Strategy::ZMarch { bx, by, .. }
            | Strategy::SMarch { bx, by, .. }
            | Strategy::QMarch { bx, by, .. } => [bx, by, 1],
            Strategy::Pencil {
                threads_along,
                threads_across,
                ..
            } => [threads_along, threads_across, 1],
        }
    }

    /// Whether the strategy is well formed whatever it runs: every option within the range
    /// `fdlab strategies` lists, the block within CUDA's limits (1 to 1024 threads, at most
    /// 1024 × 1024 × 64), and no two options that exclude each other.
    pub fn validate(&self) -> Result<(), String> {
        let form = Form::of(self);
        for (o, v) in form.family.options.iter().zip(&form.values) {
            let bad = match v {
                Some(Value::Dims(d)) => d.iter().find(|&&x| !o.range.contains(x)).copied(),
                Some(Value::Num(n, _)) => (!o.range.contains(*n)).then_some(*n),
                _ => None,
            };
            if let Some(x) = bad {
                let key = if o.key.is_empty() { "block" } else { o.key };
                return Err(format!("{key} {x} is outside {}: {}", o.range, o.meaning));
            }
        }
        let b = self.block_shape();
        let t: u64 = b.iter().map(|&d| d as u64).product();
        if t == 0 || t > MAX_THREADS || b.iter().zip(MAX_BLOCK).any(|(&d, m)| d as u64 > m) {
            return Err(format!(
                "a block of {}×{}×{} threads; CUDA allows 1 to 1024 threads, at most \
                 1024×1024×64",
                b[0], b[1], b[2]
            ));
        }
        match *self {
            Strategy::Pencil {
                length,
                lines,
                threads_along,
                threads_across,
                ..
            } if length % threads_along != 0 || lines % threads_across != 0 => Err(format!(
                "tile {length}×{lines} is not a multiple of the block \
                 {threads_along}×{threads_across}"
            )),
            Strategy::SMarch { bx, .. } if !bx.is_multiple_of(4) => Err(format!(
                "tile width {bx}: the shared-memory march copies 16 bytes at a time, use a \
                 multiple of 4"
            )),
            Strategy::SMarch {
                copy: SmCopy::Registers(n),
                ..
            } if !(1..=2).contains(&n) => Err(format!("{n} register stages; use 1 or 2")),
            Strategy::QMarch {
                tma, accumulate, ..
            } if accumulate && tma == 0 => {
                Err("the partial-sum queue (a) goes with TMA copies (-tNa)".into())
            }
            Strategy::QMarch {
                accumulate, split, ..
            } if split && !accumulate => {
                Err("split slots need the partial-sum queue: write -wNa".into())
            }
            _ => Ok(()),
        }
    }

    /// Whether this strategy can run `stencils`; the error says why not.
    pub fn supports(&self, stencils: &[Stencil]) -> Result<(), String> {
        if stencils.is_empty() {
            return Err("no stencil".into());
        }
        self.validate()?;
        match *self {
            Strategy::Pencil { .. } if stencils.len() != 1 => {
                Err("pencils apply one stencil at a time".into())
            }
            Strategy::Pencil { .. } if stencils[0].single_axis().is_none() => {
                Err("pencils need a stencil along one axis".into())
            }
            Strategy::QMarch { split: true, .. } if has_corners(stencils) => Err(
                "split slots (-wNa) hold no halo corners, and a tap here reads one; use -tNa \
                 or smarch"
                    .into(),
            ),
            Strategy::QMarch { .. } => match queue_unsupported(stencils) {
                Some(why) => Err(why),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }

    /// [`Strategy::supports`], plus what depends on the boundary and the scalar type.
    pub fn supports_spec(
        &self,
        stencils: &[Stencil],
        boundary: Boundary,
        precision: Precision,
    ) -> Result<(), String> {
        self.supports(stencils)?;
        match *self {
            Strategy::ZMarch { vec: 4, .. } if precision == Precision::F64 => {
                Err("4 doubles per thread would be a 32-byte load; use vec 1 or 2 for f64".into())
            }
            Strategy::SMarch { vec: 4, .. } if precision == Precision::F64 => {
                Err("4 doubles per thread would be a 32-byte vector; use vec 1 or 2".into())
            }
            Strategy::QMarch { bx, vec, .. }
                if vec as usize * precision.size() > 16
                    || !(bx * vec).is_multiple_of(16 / precision.size() as u32) =>
            {
                Err(format!(
                    "{vec} x points per thread over {bx} threads: the vector must fit 16 bytes \
                     and the tile width be a multiple of 16 bytes"
                ))
            }
            Strategy::QMarch { .. } if boundary == Boundary::Neumann => {
                Err("Neumann's mirror images are not 16-byte loads; use zmarch or shared".into())
            }
            Strategy::QMarch {
                bx,
                by,
                rows,
                vec,
                tma: 1..,
                split,
                ..
            } if tma_box_too_large(stencils, precision, bx * vec, by * rows, split) => {
                Err(format!(
                    "a TMA copy moves at most 256 points per axis, and a {}×{} tile with this \
                 stencil's halo is larger; use a smaller tile",
                    bx * vec,
                    by * rows
                ))
            }
            Strategy::QMarch {
                bx,
                vec,
                split: true,
                ..
            } if !(bx * vec * precision.size() as u32).is_multiple_of(128) => Err(format!(
                "split slots (-wNa) need tiles of a multiple of 128 bytes along x ({} points \
                 of {} bytes here): use a multiple of {} points",
                bx * vec,
                precision.size(),
                128 / precision.size()
            )),
            Strategy::QMarch {
                tma: 1..,
                split: false,
                ..
            } if boundary != Boundary::Dirichlet => Err(
                "TMA tensor copies fill points outside the grid with zeros, not periodic images; \
                 use -t only with Dirichlet boundaries (-wNa wraps its pieces)"
                    .into(),
            ),
            Strategy::SMarch { .. } if boundary == Boundary::Neumann => {
                Err("Neumann's mirror images are not 16-byte copies; use zmarch or shared".into())
            }
            _ => Ok(()),
        }
    }
}

/// Whether a tensor copy of the tile would exceed 256 points along an axis: the whole slot
/// (tile and halo in one box, the x halo in whole 16-byte granules) or, with split slots, the largest piece (the tile's width, its
/// height with the halo rows copied apart).
fn tma_box_too_large(
    stencils: &[Stencil],
    precision: Precision,
    tx: u32,
    ty: u32,
    split: bool,
) -> bool {
    if split {
        return tx > 256 || ty > 256;
    }
    let mut r = [0u32; 3];
    for s in stencils {
        for (a, &ra) in s.radius().iter().enumerate() {
            r[a] = r[a].max(ra as u32);
        }
    }
    let vl = 16 / precision.size() as u32;
    let across = if marches_z(stencils) { 1 } else { 2 };
    tx + 2 * r[0].div_ceil(vl) * vl > 256 || ty + 2 * r[across] > 256
}

/// The marching axis and the other axis across x of a 2.5-D march over `stencils`: along z,
/// unless no stencil reaches along z and one reaches along y (then along y, the tile spanning
/// z).
fn march_axes(stencils: &[Stencil]) -> (usize, usize) {
    if marches_z(stencils) {
        (2, 1)
    } else {
        (1, 2)
    }
}

/// Whether a march over `stencils` goes along z (see [`march_axes`]).
pub(crate) fn marches_z(stencils: &[Stencil]) -> bool {
    stencils.iter().any(|s| s.radius()[2] > 0) || stencils.iter().all(|s| s.radius()[1] == 0)
}

/// Why `stencils` cannot be computed with the queue march's register queue, if they cannot: a
/// tap that leaves the centre plane must stay on the march-axis column.
fn queue_unsupported(stencils: &[Stencil]) -> Option<String> {
    let (ma, oa) = march_axes(stencils);
    for s in stencils {
        for t in s.taps() {
            if t.offset[ma] != 0 && (t.offset[0] != 0 || t.offset[oa] != 0) {
                return Some(format!(
                    "tap {:?} leaves the centre plane off the march column; use smarch",
                    t.offset
                ));
            }
        }
    }
    None
}

/// Whether a tap of `stencils` reads a halo corner (off both x and the other axis), which a
/// split slot does not hold.
fn has_corners(stencils: &[Stencil]) -> bool {
    let (_, oa) = march_axes(stencils);
    stencils
        .iter()
        .flat_map(|s| s.taps())
        .any(|t| t.offset[0] != 0 && t.offset[oa] != 0)
}
