//! Output writers: `.npy`, VTK `.vti`, PNG slices with colour bar and axes, animated GIF.

use crate::error::{io_err, Error, Result};
use plotters::prelude::*;
use std::io::Write;
use std::path::Path;

static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// Write a C-ordered f64 `.npy` of `shape` (slowest axis first).
pub fn write_npy(path: &Path, shape: &[usize], data: &[f64]) -> Result<()> {
    let dims: Vec<String> = shape.iter().map(|n| n.to_string()).collect();
    let tuple = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let mut header = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': {tuple}, }}");
    let total = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - total % 64) % 64));
    header.push('\n');
    let mut buf = Vec::with_capacity(10 + header.len() + data.len() * 8);
    buf.extend_from_slice(b"\x93NUMPY\x01\x00");
    buf.extend_from_slice(&(header.len() as u16).to_le_bytes());
    buf.extend_from_slice(header.as_bytes());
    for v in data {
        buf.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(path, buf).map_err(io_err(path))
}

/// Read a C-ordered `<f8` or `<f4` `.npy`; returns its shape and data as f64.
pub fn read_npy(path: &Path) -> Result<(Vec<usize>, Vec<f64>)> {
    let bytes = std::fs::read(path).map_err(io_err(path))?;
    let bad = |d: &str| Error::Npy {
        path: path.to_path_buf(),
        detail: d.to_string(),
    };
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(bad("not an .npy file"));
    }
    let (hlen, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        _ => return Err(bad("unsupported .npy version")),
    };
    let header = std::str::from_utf8(
        bytes
            .get(start..start + hlen)
            .ok_or_else(|| bad("truncated header"))?,
    )
    .map_err(|_| bad("header is not text"))?;
    if header.contains("'fortran_order': True") {
        return Err(bad(
            "Fortran order is not supported; save with np.ascontiguousarray",
        ));
    }
    let size = if header.contains("'<f8'") {
        8
    } else if header.contains("'<f4'") {
        4
    } else {
        return Err(bad("dtype must be little-endian float64 or float32"));
    };
    let shape_txt = header
        .split("'shape':")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .ok_or_else(|| bad("no shape in header"))?;
    let shape: Vec<usize> = shape_txt
        .trim_start_matches([' ', '('])
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().map_err(|_| bad("bad shape")))
        .collect::<Result<_>>()?;
    let n: usize = shape.iter().product();
    let body = &bytes[start + hlen..];
    if body.len() != n * size {
        return Err(bad(&format!(
            "expected {} data bytes for shape {shape:?}, found {}",
            n * size,
            body.len()
        )));
    }
    let data = if size == 8 {
        body.chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect()
    } else {
        body.chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap_or([0; 4])) as f64)
            .collect()
    };
    Ok((shape, data))
}

/// Write a VTK ImageData `.vti` (ASCII) with one point field named `name`; ParaView opens it.
pub fn write_vti(
    path: &Path,
    n: [usize; 3],
    spacing: [f64; 3],
    name: &str,
    data: &[f64],
) -> Result<()> {
    let f = std::fs::File::create(path).map_err(io_err(path))?;
    let mut w = std::io::BufWriter::new(f);
    let ext = format!("0 {} 0 {} 0 {}", n[0] - 1, n[1] - 1, n[2] - 1);
    let mut go = || -> std::io::Result<()> {
        writeln!(w, "<?xml version=\"1.0\"?>")?;
        writeln!(
            w,
            "<VTKFile type=\"ImageData\" version=\"0.1\" byte_order=\"LittleEndian\">"
        )?;
        writeln!(
            w,
            "  <ImageData WholeExtent=\"{ext}\" Origin=\"0 0 0\" Spacing=\"{} {} {}\">",
            spacing[0], spacing[1], spacing[2]
        )?;
        writeln!(w, "    <Piece Extent=\"{ext}\">")?;
        writeln!(w, "      <PointData Scalars=\"{name}\">")?;
        writeln!(
            w,
            "        <DataArray type=\"Float64\" Name=\"{name}\" format=\"ascii\">"
        )?;
        for chunk in data.chunks(8) {
            let line: Vec<String> = chunk.iter().map(|v| format!("{v:e}")).collect();
            writeln!(w, "          {}", line.join(" "))?;
        }
        writeln!(
            w,
            "        </DataArray>\n      </PointData>\n    </Piece>\n  </ImageData>\n</VTKFile>"
        )?;
        w.flush()
    };
    go().map_err(io_err(path))
}

/// Colour maps for the pictures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorMap {
    /// Black → red → yellow → white, for temperatures.
    Heat,
    /// Blue → white → red, for signed fields.
    Seismic,
}

impl ColorMap {
    /// RGB for `t` in [0, 1].
    pub fn rgb(self, t: f64) -> [u8; 3] {
        let t = if t.is_finite() {
            t.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let stops: &[[f64; 3]] = match self {
            ColorMap::Heat => &[
                [0.0, 0.0, 0.02],
                [0.45, 0.05, 0.35],
                [0.9, 0.3, 0.05],
                [1.0, 0.85, 0.2],
                [1.0, 1.0, 0.95],
            ],
            ColorMap::Seismic => &[
                [0.0, 0.0, 0.35],
                [0.1, 0.35, 1.0],
                [1.0, 1.0, 1.0],
                [1.0, 0.25, 0.1],
                [0.45, 0.0, 0.0],
            ],
        };
        let x = t * (stops.len() - 1) as f64;
        let i = (x.floor() as usize).min(stops.len() - 2);
        let f = x - i as f64;
        let c = |a: usize| ((stops[i][a] * (1.0 - f) + stops[i + 1][a] * f) * 255.0).round() as u8;
        [c(0), c(1), c(2)]
    }
}

/// A 2-D picture: `data[i + nx·j]`, with physical extent and labels.
#[derive(Debug, Clone)]
pub struct Slice<'a> {
    /// Values, x fastest.
    pub data: &'a [f64],
    /// Columns.
    pub nx: usize,
    /// Rows.
    pub ny: usize,
    /// `[x0, x1, y0, y1]` in physical units.
    pub extent: [f64; 4],
    /// Axis labels.
    pub labels: (&'a str, &'a str),
    /// Title.
    pub title: &'a str,
    /// Colour range.
    pub range: (f64, f64),
    /// Colour map.
    pub cmap: ColorMap,
}

/// Draw a slice as a PNG with axes in physical units and a colour bar.
pub fn write_png(path: &Path, s: &Slice) -> Result<()> {
    register_font();
    let perr = |e: &dyn std::fmt::Display| Error::Plot {
        path: path.to_path_buf(),
        detail: e.to_string(),
    };
    let aspect = (s.extent[3] - s.extent[2]) / (s.extent[1] - s.extent[0]);
    let plot_w = 520u32;
    let plot_h = ((plot_w as f64 * aspect).clamp(120.0, 900.0)) as u32;
    let (w, h) = (plot_w + 90 + 120, plot_h + 90);
    let root = BitMapBackend::new(path, (w, h)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| perr(&e))?;
    let (main, bar) = root.split_horizontally(plot_w + 90);
    let mut chart = ChartBuilder::on(&main)
        .caption(s.title, ("sans-serif", 16))
        .margin(8)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d(s.extent[0]..s.extent[1], s.extent[2]..s.extent[3])
        .map_err(|e| perr(&e))?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(s.labels.0)
        .y_desc(s.labels.1)
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(|e| perr(&e))?;
    let (xr, yr) = chart.plotting_area().get_pixel_range();
    let (lo, hi) = s.range;
    let span = if hi > lo { hi - lo } else { 1.0 };
    for py in yr.start..yr.end {
        let fy = 1.0 - (py - yr.start) as f64 / (yr.end - yr.start).max(1) as f64;
        let j = ((fy * s.ny as f64) as usize).min(s.ny - 1);
        for px in xr.start..xr.end {
            let fx = (px - xr.start) as f64 / (xr.end - xr.start).max(1) as f64;
            let i = ((fx * s.nx as f64) as usize).min(s.nx - 1);
            let [r, g, b] = s.cmap.rgb((s.data[i + s.nx * j] - lo) / span);
            main.draw_pixel((px, py), &RGBColor(r, g, b))
                .map_err(|e| perr(&e))?;
        }
    }
    let mut cb = ChartBuilder::on(&bar)
        .margin_top(34)
        .margin_bottom(44)
        .margin_left(16)
        .margin_right(8)
        .y_label_area_size(0)
        .right_y_label_area_size(70)
        .build_cartesian_2d(0.0..1.0, lo..lo + span)
        .map_err(|e| perr(&e))?;
    let big = lo.abs().max(hi.abs());
    let fmt = move |v: &f64| {
        if !(1e-2..1e4).contains(&big) {
            format!("{v:.2e}")
        } else {
            format!("{v:.2}")
        }
    };
    cb.configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_label_formatter(&fmt)
        .label_style(("sans-serif", 12))
        .draw()
        .map_err(|e| perr(&e))?;
    let (bx, by) = cb.plotting_area().get_pixel_range();
    for py in by.start..by.end {
        let t = 1.0 - (py - by.start) as f64 / (by.end - by.start).max(1) as f64;
        let [r, g, b] = s.cmap.rgb(t);
        for px in bx.start..bx.end {
            bar.draw_pixel((px - (plot_w as i32 + 90), py), &RGBColor(r, g, b))
                .map_err(|e| perr(&e))?;
        }
    }
    root.present().map_err(|e| perr(&e))?;
    Ok(())
}

/// Write frames (each `nx × ny`, x fastest, row 0 at the bottom) as an animated GIF with a
/// fixed colour range; frames are scaled to at most `max_px` pixels wide. Frames are indexed
/// and compressed in parallel, then written in order.
pub fn write_gif(
    path: &Path,
    frames: &[&[f64]],
    nx: usize,
    ny: usize,
    range: (f64, f64),
    cmap: ColorMap,
    max_px: usize,
) -> Result<()> {
    use rayon::prelude::*;
    let step = nx.div_ceil(max_px).max(1);
    let (w, h) = (nx.div_ceil(step), ny.div_ceil(step));
    let palette: Vec<u8> = (0..256).flat_map(|i| cmap.rgb(i as f64 / 255.0)).collect();
    let file = std::fs::File::create(path).map_err(io_err(path))?;
    let gerr = |e: gif::EncodingError| Error::Plot {
        path: path.to_path_buf(),
        detail: e.to_string(),
    };
    let mut enc = gif::Encoder::new(std::io::BufWriter::new(file), w as u16, h as u16, &palette)
        .map_err(gerr)?;
    enc.set_repeat(gif::Repeat::Infinite).map_err(gerr)?;
    let span = if range.1 > range.0 {
        range.1 - range.0
    } else {
        1.0
    };
    let encoded: Vec<gif::Frame<'static>> = frames
        .par_iter()
        .map(|f| {
            let mut px = Vec::with_capacity(w * h);
            for y in 0..h {
                let j = (ny - 1).saturating_sub(y * step);
                for x in 0..w {
                    let t = ((f[x * step + nx * j] - range.0) / span).clamp(0.0, 1.0);
                    px.push(if t.is_finite() {
                        (t * 255.0).round() as u8
                    } else {
                        0
                    });
                }
            }
            let mut frame = gif::Frame::from_indexed_pixels(w as u16, h as u16, px, None);
            frame.delay = 8;
            frame.make_lzw_pre_encoded();
            frame
        })
        .collect();
    for frame in &encoded {
        enc.write_lzw_pre_encoded_frame(frame).map_err(gerr)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.npy");
        let data: Vec<f64> = (0..12).map(|v| v as f64 * 0.5).collect();
        write_npy(&p, &[3, 4], &data).unwrap();
        let (shape, back) = read_npy(&p).unwrap();
        assert_eq!(shape, vec![3, 4]);
        assert_eq!(back, data);
        assert_eq!(std::fs::metadata(&p).unwrap().len() % 16, 0);
    }
}
