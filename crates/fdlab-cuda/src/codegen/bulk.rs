//! Bulk copies of row pieces into shared slots (`cp.async.bulk`, sm_90), completing on a
//! per-slot mbarrier: a phase the shared-memory march and the queue march's split slots share.

use super::emit::Gen;
use fdlab_core::Boundary;

/// Opens `if (pl < mend<guard>) {` and points `src` at plane `pl` of the input (wrapped when
/// periodic); returns the indent inside. Shared by the marches' per-thread and bulk copies.
pub(super) fn open_plane(
    g: &mut Gen,
    indent: usize,
    pl: &str,
    guard: &str,
    wrap: &dyn Fn(&str, &str) -> String,
    idx: &dyn Fn(&str, &str, &str) -> String,
) -> usize {
    let ty = g.ty;
    g.line(indent, &format!("if ({pl} < mend{guard}) {{"));
    let i = indent + 1;
    g.line(i, &format!("int pz = {pl};"));
    g.line(i, &wrap("pz", "nm"));
    g.line(
        i,
        &format!("const {ty}* const src = in + {};", idx("0", "0", "pz")),
    );
    i
}

/// A block of rows that [`bulk_issue`] copies into each slot: `w × h` elements at `offset`
/// in slots `stride` elements apart, from the grid's rows starting `x_back` points before the
/// tile's `x0` and `y_back` rows before its `y0`, by `lanes` threads.
pub(crate) struct BulkRows {
    pub w: u32,
    pub h: u32,
    pub stride: u32,
    pub offset: u32,
    pub x_back: i32,
    pub y_back: i32,
    pub lanes: u32,
}

/// Issues the bulk copies of `rows` of plane `pl` into slot `slot` when `pl < mend`: one warp,
/// per row, one `cp.async.bulk` per contiguous piece (a periodic image splits a row where it
/// wraps; pieces outside a Dirichlet grid are skipped: no computed point reads them), each
/// adding its bytes to the slot's mbarrier. The caller arrives on the mbarrier (once, from
/// thread 0, after every block of rows of the plane). Shared by the shared-memory march
/// ([`crate::strategy::SmCopy::Bulk`]) and the queue march's split slots. The slot index is copied into its own
/// name first: `slot` may be an expression in the caller's `sl`.
pub(crate) fn bulk_issue(
    g: &mut Gen,
    indent: usize,
    (pl, slot): (&str, &str),
    rows: BulkRows,
    wrap: &dyn Fn(&str, &str) -> String,
    idx: &dyn Fn(&str, &str, &str) -> String,
) {
    let BulkRows {
        w,
        h,
        stride,
        offset,
        x_back: hxl,
        y_back: hyl,
        lanes,
    } = rows;
    let ty = g.ty;
    let size = g.spec.precision.size();
    let periodic = g.spec.boundary == Boundary::Periodic;
    let mask = if lanes == 32 {
        "0xffffffffu".to_string()
    } else {
        format!("{:#x}u", (1u64 << lanes) - 1)
    };
    let i = open_plane(g, indent, pl, &format!(" && tid < {lanes}"), wrap, idx);
    g.line(i, &format!("const int bsl = {slot};"));
    g.line(
        i,
        &format!("{ty}* const dst = sm + bsl * {stride} + {offset};"),
    );
    g.line(i, &format!("for (int r = tid; r < {h}; r += {lanes}) {{"));
    g.line(i + 1, &format!("int gy = y0 - {hyl} + r;"));
    if periodic {
        g.line(i + 1, &wrap("gy", "no"));
    } else {
        g.line(i + 1, "if (gy < 0 || gy >= no) continue;");
    }
    g.line(
        i + 1,
        &format!("const {ty}* const srow = src + {};", idx("0", "gy", "0")),
    );
    g.line(i + 1, &format!("for (int col = 0; col < {w};) {{"));
    g.line(i + 2, &format!("int gx = x0 - {hxl} + col;"));
    if periodic {
        g.line(i + 2, &wrap("gx", "nx"));
    } else {
        g.line(i + 2, "if (gx < 0) { col -= gx; continue; }");
        g.line(i + 2, "if (gx >= nx) break;");
    }
    g.line(i + 2, &format!("const int len = min({w} - col, nx - gx);"));
    g.line(
        i + 2,
        &format!("fd_bulk_copy(dst + r * {w} + col, srow + gx, len * {size}, fd_bars + bsl);"),
    );
    g.line(i + 2, "col += len;");
    g.line(i + 1, "}");
    g.line(i, "}");
    // Every lane's bytes are expected before the arrival that lets the phase complete.
    g.line(i, &format!("__syncwarp({mask});"));
    g.line(indent, "}");
}
