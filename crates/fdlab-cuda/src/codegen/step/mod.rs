//! Lowers a [`StepDescription`] to CUDA: one kernel per update.
//!
//! Each kernel writes its target over a box (`ilo..ihi` × `jlo..jhi` × `klo..khi`, launch
//! arguments) with one thread per x point, looping over the box's rows and planes. The update's
//! expression is inlined: every stencil tap shifts the point its operand is evaluated at, so a
//! nested operator (`D⁻(b̄ · D⁺p)`) becomes sums over loads at combined offsets. Each distinct
//! (field, offset) is loaded once, through `__ldg`, and the coordinate of every distinct offset
//! is mapped once per row by the boundary (wrap, mirror, or a flag that makes the load zero).
//! Weights and constants are literals; parameters are kernel arguments of the kernel's type, so
//! a new time step needs no new compile.

use super::emit::{coord, literal};
use super::source::{fnv1a, CudaSource, InputKind};
use fdlab_core::step::{Expr, Role, StepDescription, StepError};
use fdlab_core::{Boundary, Precision};
use std::fmt::Write;

/// Threads per block along x.
const BLOCK: u32 = 128;

/// One generated update kernel and what its arguments are.
///
/// Parameters, in order: `T* out` (the target), one `const T*` per entry of
/// [`StepKernel::inputs`], one `T` per declared parameter of the description, then
/// `int nx, ny, nz, ilo, ihi, jlo, jhi, klo, khi`.
#[derive(Debug, Clone, PartialEq)]
pub struct StepKernel {
    /// The kernel's source and launch shape.
    pub source: CudaSource,
    /// Which update of the description it runs.
    pub update: usize,
    /// The field and level written.
    pub target: (String, i32),
    /// The fields and levels read through pointers, in argument order (the target, when read
    /// at its own point, is read through `out` and is not listed).
    pub inputs: Vec<(String, i32)>,
}

/// Generates one kernel per update of `d` (validated first).
///
/// ```
/// use fdlab_core::step::physics::acoustic_vd;
/// use fdlab_core::{Boundary, Grid, Precision};
/// let g = Grid::unit(&[64, 64]).unwrap();
/// let d = acoustic_vd(&g, 4, Boundary::Dirichlet).unwrap();
/// let k = fdlab_cuda::codegen::step::emit_step(&d, Precision::F32).unwrap();
/// assert_eq!(k.len(), 1);
/// assert!(k[0].source.source().contains("__ldg"));
/// ```
pub fn emit_step(d: &StepDescription, precision: Precision) -> Result<Vec<StepKernel>, StepError> {
    d.validate()?;
    Ok((0..d.updates.len())
        .map(|u| emit_update(d, u, precision))
        .collect())
}

/// A load: index into the kernel's inputs (`None`: the target) and total offset.
type Load = (Option<usize>, [i32; 3]);

struct Emitter<'a> {
    d: &'a StepDescription,
    ty: &'static str,
    precision: Precision,
    target: (String, i32),
    inputs: Vec<(String, i32)>,
    loads: Vec<Load>,
}

impl Emitter<'_> {
    /// The C expression of `e` evaluated at offset `at` from the point; registers its loads.
    fn expr(&mut self, e: &Expr, at: [i32; 3]) -> String {
        match e {
            Expr::Field {
                name,
                level,
                offset,
            } => {
                let o = [at[0] + offset[0], at[1] + offset[1], at[2] + offset[2]];
                let key = (name.clone(), *level);
                let input = if key == self.target {
                    None
                } else {
                    Some(match self.inputs.iter().position(|k| *k == key) {
                        Some(n) => n,
                        None => {
                            self.inputs.push(key);
                            self.inputs.len() - 1
                        }
                    })
                };
                let load = (input, o);
                let n = match self.loads.iter().position(|l| *l == load) {
                    Some(n) => n,
                    None => {
                        self.loads.push(load);
                        self.loads.len() - 1
                    }
                };
                format!("v{n}")
            }
            Expr::Const(c) => literal(*c, self.precision),
            Expr::Param(p) => {
                let n = self.d.params.iter().position(|q| q == p).unwrap_or(0);
                format!("prm{n}")
            }
            Expr::Bin(op, a, b) => {
                let (a, b) = (self.expr(a, at), self.expr(b, at));
                format!("({a} {} {b})", op.symbol())
            }
            Expr::Neg(a) => format!("(-{})", self.expr(a, at)),
            Expr::Diff(df) => {
                // Summed from zero in tap order, as the reference executor does.
                let ty = self.ty;
                let mut s = format!("(({ty})0");
                for t in df.stencil.taps() {
                    let o = [
                        at[0] + t.offset[0],
                        at[1] + t.offset[1],
                        at[2] + t.offset[2],
                    ];
                    let v = self.expr(&df.expr, o);
                    let _ = write!(s, " + {} * {v}", literal(t.weight, self.precision));
                }
                s + ")"
            }
        }
    }
}

fn emit_update(d: &StepDescription, u: usize, precision: Precision) -> StepKernel {
    let up = &d.updates[u];
    let mut em = Emitter {
        d,
        ty: precision.cuda_type(),
        precision,
        target: (up.target.clone(), up.level),
        inputs: vec![],
        loads: vec![],
    };
    let value = em.expr(&up.expr, [0; 3]);
    let ty = em.ty;
    // Which loads read a coefficient field: under a zero halo those take the nearest point
    // inside the grid (a material continues outward), not zero.
    let coefficient: Vec<bool> = em
        .loads
        .iter()
        .map(|(input, _)| {
            input.is_some_and(|m| {
                d.field(&em.inputs[m].0)
                    .is_some_and(|f| f.role == Role::Coefficient)
            })
        })
        .collect();
    let mut s = String::new();
    let mut line = |indent: usize, text: &str| {
        let _ = writeln!(s, "{}{text}", "  ".repeat(indent));
    };
    let mut args = vec![format!("{ty}* __restrict__ out")];
    args.extend((0..em.inputs.len()).map(|n| format!("const {ty}* __restrict__ in{n}")));
    args.extend((0..d.params.len()).map(|n| format!("const {ty} prm{n}")));
    args.push(
        "const int nx, const int ny, const int nz, const int ilo, const int ihi, const int jlo, \
         const int jhi, const int klo, const int khi"
            .into(),
    );
    line(
        0,
        &format!(
            "extern \"C\" __global__ void __launch_bounds__({BLOCK}) @NAME@({}) {{",
            args.join(", ")
        ),
    );
    let istart = format!("ilo + blockIdx.x * {BLOCK} + threadIdx.x");
    let loops = [
        ("k", "klo + blockIdx.z", "khi", "gridDim.z".to_string()),
        ("j", "jlo + blockIdx.y", "jhi", "gridDim.y".to_string()),
        ("i", istart.as_str(), "ihi", format!("gridDim.x * {BLOCK}")),
    ];
    for (depth, (v, start, end, step)) in loops.iter().enumerate() {
        line(
            depth + 1,
            &format!("for (int {v} = {start}; {v} < {end}; {v} += {step}) {{"),
        );
        maps(
            &mut line,
            depth + 2,
            2 - depth,
            v,
            d.boundary,
            &em.loads,
            &coefficient,
        );
    }
    for (n, (input, o)) in em.loads.iter().enumerate() {
        let c = |a: usize, base: &str| coord(a, base, o[a]);
        let clamped = |a: usize, base: &str| match (coefficient[n], d.boundary, o[a]) {
            (true, Boundary::Dirichlet, o) if o != 0 => format!("{}_c", coord(a, base, o)),
            _ => c(a, base),
        };
        let idx = format!(
            "FD_IDX({}, {}, {})",
            clamped(0, "i"),
            clamped(1, "j"),
            clamped(2, "k")
        );
        let load = match input {
            None => format!("out[{idx}]"),
            Some(m) => format!("__ldg(in{m} + {idx})"),
        };
        let ok: Vec<String> = (0..3)
            .filter(|&a| d.boundary == Boundary::Dirichlet && o[a] != 0 && !coefficient[n])
            .map(|a| format!("{}_ok", c(a, ["i", "j", "k"][a])))
            .collect();
        let load = if ok.is_empty() {
            load
        } else {
            format!("({}) ? {load} : ({ty})0", ok.join(" && "))
        };
        line(4, &format!("const {ty} v{n} = {load};"));
    }
    line(4, &format!("out[FD_IDX(i, j, k)] = {value};"));
    for depth in (0..4).rev() {
        line(depth, "}");
    }
    let name = format!("fdlab_step_{:016x}", fnv1a(&s));
    let body = s.replace("@NAME@", &name);
    StepKernel {
        source: CudaSource {
            name,
            body,
            block: [BLOCK, 1, 1],
            grid_map: [(0, BLOCK), (1, 1), (2, 1)],
            shared_bytes: 0,
            input: InputKind::Pointer,
            outputs: 1,
            constants: None,
            precision,
            x_multiple: 1,
            single_pass: false,
            tensor_boxes: Vec::new(),
        },
        update: u,
        target: em.target,
        inputs: em.inputs,
    }
}

/// Declares the mapped coordinate of every distinct nonzero offset along `axis` (and, for a
/// zero halo, whether it is inside the grid, and the nearest coordinate inside it where a
/// coefficient load, flagged in `coefficient`, needs it).
fn maps(
    line: &mut dyn FnMut(usize, &str),
    indent: usize,
    axis: usize,
    base: &str,
    bc: Boundary,
    loads: &[Load],
    coefficient: &[bool],
) {
    let n = ["nx", "ny", "nz"][axis];
    let mut offs: Vec<i32> = loads
        .iter()
        .map(|l| l.1[axis])
        .filter(|&o| o != 0)
        .collect();
    offs.sort_unstable();
    offs.dedup();
    for o in offs {
        let name = coord(axis, base, o);
        let sum = format!("{base} {} {}", if o < 0 { '-' } else { '+' }, o.abs());
        match bc {
            Boundary::Periodic => line(
                indent,
                &format!("const int {name} = fd_periodic({sum}, {n});"),
            ),
            Boundary::Neumann => line(
                indent,
                &format!("const int {name} = fd_neumann({sum}, {n});"),
            ),
            Boundary::Dirichlet => {
                line(indent, &format!("const int {name} = {sum};"));
                line(
                    indent,
                    &format!("const bool {name}_ok = (unsigned){name} < (unsigned){n};"),
                );
                let nearest = loads
                    .iter()
                    .zip(coefficient)
                    .any(|(l, &c)| c && l.1[axis] == o);
                if nearest {
                    line(
                        indent,
                        &format!("const int {name}_c = min(max({name}, 0), {n} - 1);"),
                    );
                }
            }
        }
    }
}
