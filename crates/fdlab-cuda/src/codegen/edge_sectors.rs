//! Edge sectors read ahead (`smarch … -e`): the output sectors an interior-only output writes
//! in part, read a plane early so that L2 holds them whole when the partial stores land.

use super::emit::Gen;

/// The output sectors of `-e` (edge sectors read ahead): per tile row and output, the rows'
/// 32-byte sectors that hold both computed points and the caller's. An interior-only output
/// writes them in part, and a sector that L2 does not hold whole makes the memory read it to
/// merge at write-back, inside the write stream (6 points of the 7-point Laplacian in f32 at
/// 512³, measured on an H100). Read a plane ahead, with the step's copies, the sector is in
/// L2 when the partial store lands and is written back whole (measured: DRAM reads equal to
/// the L2 misses). The values are parked in a small shared buffer at the
/// step's end, so the load completes off the compute's path; nothing reads them back.
pub(super) struct EdgeSectors {
    /// Byte of the block's shared memory where the parking buffer starts.
    pub(super) at: u32,
    pub(super) outputs: u32,
    pub(super) rows: u32,
    pub(super) cols: u32,
    pub(super) threads: u32,
}

impl EdgeSectors {
    /// 16-byte halves read per plane (whether or not they exist), one buffer slot each.
    pub(super) fn halves(&self) -> u32 {
        4 * self.rows * self.outputs
    }

    /// Bytes of the parking buffer.
    pub(super) fn bytes(&self) -> u32 {
        self.halves() * 16
    }

    /// Halves each thread reads per plane.
    pub(super) fn per_thread(&self) -> u32 {
        self.halves().div_ceil(self.threads)
    }

    /// Declares the registers that hold this thread's halves between their load and their
    /// parking store, and the slot each goes to (-1: none).
    pub(super) fn declare(&self, g: &mut Gen, indent: usize, vt: &str) {
        let n = self.per_thread();
        g.line(indent, &format!("{vt} fd_ev[{n}];"));
        g.line(indent, &format!("int fd_eo[{n}];"));
    }

    /// Loads (16 bytes each) plane `pl`'s halves of the edge sectors of the tile's computed
    /// rows: per row, the 32-byte sectors holding its first and last computed points, the
    /// 16-byte halves of them that lie in the row and in this tile and hold the caller's
    /// points (the other half is written whole). Nothing past the chunk.
    pub(super) fn load(
        &self,
        g: &mut Gen,
        indent: usize,
        pl: &str,
        vt: &str,
        idx: &dyn Fn(&str, &str, &str) -> String,
    ) {
        let ty = g.ty;
        let size = g.spec.precision.size();
        let half = 16 / size;
        let (rows, cols) = (self.rows, self.cols);
        let i = indent;
        g.line(i, "#pragma unroll");
        g.line(
            i,
            &format!("for (int j = 0; j < {}; ++j) {{", self.per_thread()),
        );
        g.line(i + 1, &format!("const int e = tid + j * {};", self.threads));
        g.line(i + 1, "fd_eo[j] = -1;");
        g.line(
            i + 1,
            &format!("if (e >= {} || !({pl} < me)) continue;", self.halves()),
        );
        g.line(
            i + 1,
            &format!(
                "const int eo = e / {}, er = (e >> 2) % {rows}, side = (e >> 1) & 1, hf = e & 1;",
                4 * rows
            ),
        );
        g.line(i + 1, "const int fo = y0 + er;");
        g.line(i + 1, "if (ilo >= ihi || fo < olo || fo >= ohi) continue;");
        let outs: Vec<String> = (0..self.outputs).map(|o| format!("out{o}")).collect();
        let mut pick = outs.last().cloned().unwrap_or_default();
        for (o, name) in outs.iter().enumerate().rev().skip(1) {
            pick = format!("eo == {o} ? {name} : {pick}");
        }
        g.line(
            i + 1,
            &format!(
                "const {ty}* const fd_row = ({pick}) + {};",
                idx("0", "fo", pl)
            ),
        );
        g.line(i + 1, "const int ex = side ? ihi - 1 : ilo;");
        // The sector's first point, from the address: rows need not start on a sector.
        g.line(
            i + 1,
            &format!(
                "const int hx = ex - (int)((reinterpret_cast<unsigned long long>(fd_row + ex) & 31ull) / {size}) + hf * {half};"
            ),
        );
        g.line(
            i + 1,
            &format!(
                "if (hx < 0 || hx + {half} > nx || hx < x0 || hx >= x0 + {cols} || (hx >= ilo && hx + {half} <= ihi)) continue;"
            ),
        );
        g.line(
            i + 1,
            &format!("fd_ev[j] = *reinterpret_cast<const {vt}*>(fd_row + hx);"),
        );
        g.line(i + 1, "fd_eo[j] = e;");
        g.line(i, "}");
    }

    /// Parks the halves [`EdgeSectors::load`] read (each thread in its own slots).
    pub(super) fn store(&self, g: &mut Gen, indent: usize, vt: &str) {
        g.line(indent, "#pragma unroll");
        g.line(
            indent,
            &format!(
                "for (int j = 0; j < {}; ++j) if (fd_eo[j] >= 0) reinterpret_cast<{vt}*>(fd_edge)[fd_eo[j]] = fd_ev[j];",
                self.per_thread()
            ),
        );
    }
}
