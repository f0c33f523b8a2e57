//! A field picture: a colour image of a 2-D array on physical axes, with a title, round ticks
//! that never overlap, and a labelled colour bar (with extension triangles at an end that
//! clips). [`render`] draws it into an RGB buffer, which [`write_png`] saves and the GIF
//! encoder quantizes, so a PNG frame and a GIF frame are the same picture.

use crate::atomic;
use crate::error::{Error, Result};
use crate::ticks::{axis_title, ticks, Ticks};
use crate::{register_font, ColorMap};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontTransform;
use std::path::Path;

/// Width of a PNG's plot area in pixels.
pub const PNG_PLOT_WIDTH: u32 = 640;

/// The colour range of a picture and whether values fall outside it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    /// The value drawn in the colour map's first colour.
    pub lo: f64,
    /// The value drawn in its last colour.
    pub hi: f64,
    /// Some values are below `lo` (the colour bar shows a triangle at its bottom).
    pub below: bool,
    /// Some values are above `hi` (a triangle at its top).
    pub above: bool,
}

/// One picture: `values[i + nx·j]`, x fastest, over a physical extent.
#[derive(Debug, Clone)]
pub struct Figure<'a> {
    /// The samples, x fastest.
    pub values: &'a [f32],
    /// Samples along x.
    pub nx: usize,
    /// Samples along y.
    pub ny: usize,
    /// `[x0, x1, y0, y1]` covered by the samples, in the axes' units.
    pub extent: [f64; 4],
    /// Row 0 and `y0` at the top, y growing downwards (a seismogram's time); else row 0 at
    /// the bottom.
    pub y_down: bool,
    /// Axis names and units (`None`: no unit shown).
    pub x_axis: (&'a str, Option<&'a str>),
    /// See `x_axis`.
    pub y_axis: (&'a str, Option<&'a str>),
    /// Title above the plot.
    pub title: &'a str,
    /// The quantity and its unit, beside the colour bar.
    pub quantity: (&'a str, Option<&'a str>),
    /// Colour range.
    pub scale: Scale,
    /// Colour map.
    pub cmap: ColorMap,
    /// Plot height over width; `None`: the extent's own (physical axes at equal scale).
    pub aspect: Option<f64>,
}

/// An RGB picture, rows top to bottom.
#[derive(Debug, Clone)]
pub struct Image {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `3 · width · height` bytes.
    pub rgb: Vec<u8>,
}

/// Pixel sizes of a figure, all derived from the plot width so that a small GIF frame is the
/// PNG scaled down.
#[derive(Debug, Clone, Copy)]
struct Layout {
    font: f64,
    title_font: f64,
    plot: (u32, u32),
    origin: (i32, i32),
    bar_x: i32,
    bar_w: i32,
    tri: i32,
    size: (u32, u32),
}

fn plot_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Plot {
        path: path.to_path_buf(),
        detail: e.to_string(),
    }
}

/// Width and height of `text` at `size` points.
fn text_size(text: &str, size: f64) -> (i32, i32) {
    let font: FontDesc = ("sans-serif", size).into_font();
    font.box_size(text)
        .map(|(w, h)| (w as i32, h as i32))
        .unwrap_or((
            (text.chars().count() as f64 * size * 0.6) as i32,
            size as i32,
        ))
}

/// The widest label of `t`.
fn widest(t: &Ticks, font: f64) -> i32 {
    t.labels
        .iter()
        .map(|l| text_size(l, font).0)
        .max()
        .unwrap_or(0)
}

/// Ticks over `[lo, hi]` drawn along `pixels`, as many as fit: each label needs its own
/// `need(ticks)` pixels plus a gap, so that neighbours never touch.
fn fitting_ticks(
    lo: f64,
    hi: f64,
    pixels: i32,
    mut max: usize,
    need: impl Fn(&Ticks) -> i32,
) -> Ticks {
    loop {
        let t = ticks(lo, hi, max);
        let spacing = step_of(&t) / (hi - lo).abs() * pixels as f64;
        if max <= 3 || spacing >= need(&t) as f64 {
            return t;
        }
        max -= 1;
    }
}

/// The distance between neighbouring ticks (the span for a single tick).
fn step_of(t: &Ticks) -> f64 {
    match t.values.as_slice() {
        [a, b, ..] => b - a,
        _ => f64::INFINITY,
    }
}

/// Plot size for a plot `width` wide: the aspect's height, kept between a quarter of the
/// width and 1.25 times it (a tall domain narrows the plot instead).
fn plot_size(width: u32, aspect: f64) -> (u32, u32) {
    let w = width as f64;
    let a = if aspect.is_finite() && aspect > 0.0 {
        aspect
    } else {
        1.0
    };
    if a > 1.25 {
        let h = 1.25 * w;
        (((h / a).max(w / 4.0)) as u32, h as u32)
    } else {
        (width, (w * a).max(w / 4.0) as u32)
    }
}

/// Everything the picture needs before drawing: sizes and the three sets of ticks.
fn layout(f: &Figure, plot_width: u32) -> (Layout, Ticks, Ticks, Ticks) {
    let aspect = f
        .aspect
        .unwrap_or((f.extent[3] - f.extent[2]).abs() / (f.extent[1] - f.extent[0]).abs());
    let plot = plot_size(plot_width, aspect);
    let font = (plot_width as f64 / 42.0).round().clamp(12.0, 16.0);
    let title_font = font + 2.0;
    let line = text_size("0.9x", font).1;
    let gap = (font * 0.5) as i32;
    let tick_len = (font * 0.35) as i32;
    let (pw, ph) = (plot.0 as i32, plot.1 as i32);
    let xt = fitting_ticks(
        f.extent[0],
        f.extent[1],
        pw,
        (pw / 70).clamp(3, 9) as usize,
        |t| widest(t, font) + 2 * gap,
    );
    let yt = fitting_ticks(
        f.extent[2],
        f.extent[3],
        ph,
        (ph / 45).clamp(3, 9) as usize,
        |_| line + gap,
    );
    let bar_w = (font * 1.3) as i32;
    // Room for the extension triangles is kept whether they show or not, so that every frame
    // of an animation has the same layout.
    let tri = bar_w;
    let bar_h = ph - 2 * tri;
    let (lo, hi) = (f.scale.lo, f.scale.hi);
    let bt = fitting_ticks(lo, hi, bar_h, (bar_h / 40).clamp(3, 8) as usize, |_| {
        line + gap
    });
    let left = 2 * gap + line + gap + widest(&yt, font) + gap + tick_len;
    // Sizes from fixed sample texts where the text changes from frame to frame (the time in
    // the title, the colour bar's labels), so that an animation's frames share one layout.
    let top = 2 * gap + text_size("Ag(", title_font).1 + gap;
    let bar_labels = widest(&bt, font).max(text_size("-0.000", font).0);
    let bottom = tick_len + gap + line + gap + line + 2 * gap;
    let bar_x = left + pw + 2 * line;
    let right = 2 * line + bar_w + tick_len + gap + bar_labels + 2 * gap + line + 2 * gap;
    let size = ((left + pw + right) as u32, (top + ph + bottom) as u32);
    (
        Layout {
            font,
            title_font,
            plot,
            origin: (left, top),
            bar_x,
            bar_w,
            tri,
            size,
        },
        xt,
        yt,
        bt,
    )
}

/// Colours of the map at 1024 levels: a picture looks each pixel up instead of
/// interpolating the map.
fn colour_table(cmap: ColorMap) -> Vec<[u8; 3]> {
    (0..1024).map(|i| cmap.rgb(i as f64 / 1023.0)).collect()
}

/// The table index of `v` in `[lo, hi]` (clamped).
fn level(v: f64, lo: f64, span: f64) -> usize {
    let t = (v - lo) / span;
    if t.is_finite() {
        // `as` truncates and saturates: adding ½ rounds (t ≥ 0 after the clamp), without a
        // call to `round` per pixel.
        (t.clamp(0.0, 1.0) * 1023.0 + 0.5) as usize
    } else {
        0
    }
}

/// Fill the plot area and the colour bar, pixel by pixel, straight into the buffer.
fn paint(f: &Figure, l: &Layout, rgb: &mut [u8]) {
    let table = colour_table(f.cmap);
    let (lo, hi) = (f.scale.lo, f.scale.hi);
    let span = if hi > lo { hi - lo } else { 1.0 };
    let w = l.size.0 as usize;
    let (pw, ph) = (l.plot.0 as usize, l.plot.1 as usize);
    let (ox, oy) = (l.origin.0 as usize, l.origin.1 as usize);
    let cols: Vec<usize> = (0..pw)
        .map(|px| (((px as f64 + 0.5) / pw as f64 * f.nx as f64) as usize).min(f.nx - 1))
        .collect();
    for py in 0..ph {
        let down = ((py as f64 + 0.5) / ph as f64 * f.ny as f64) as usize;
        let j = if f.y_down {
            down.min(f.ny - 1)
        } else {
            f.ny - 1 - down.min(f.ny - 1)
        };
        let row = &f.values[f.nx * j..f.nx * (j + 1)];
        let out = &mut rgb[3 * (w * (oy + py) + ox)..3 * (w * (oy + py) + ox + pw)];
        for (px, &i) in cols.iter().enumerate() {
            out[3 * px..3 * px + 3].copy_from_slice(&table[level(row[i] as f64, lo, span)]);
        }
    }
    let bar_h = ph as i32 - 2 * l.tri;
    for y in 0..bar_h {
        let c = table[(((bar_h - 1 - y) as f64 / (bar_h - 1).max(1) as f64) * 1023.0) as usize];
        let py = (oy as i32 + l.tri + y) as usize;
        for x in 0..l.bar_w {
            let px = (l.bar_x + x) as usize;
            rgb[3 * (w * py + px)..3 * (w * py + px) + 3].copy_from_slice(&c);
        }
    }
}

/// Draw `f` with a plot area `plot_width` pixels wide (narrower for a tall domain).
pub fn render(path: &Path, f: &Figure, plot_width: u32) -> Result<Image> {
    register_font();
    if f.nx == 0 || f.ny == 0 || f.values.len() != f.nx * f.ny {
        return Err(plot_err(
            path,
            format!("{} values for {} × {} samples", f.values.len(), f.nx, f.ny),
        ));
    }
    let (l, xt, yt, bt) = layout(f, plot_width);
    let mut rgb = vec![255u8; 3 * l.size.0 as usize * l.size.1 as usize];
    paint(f, &l, &mut rgb);
    annotate(f, &l, (&xt, &yt, &bt), &mut rgb).map_err(|e| plot_err(path, e))?;
    Ok(Image {
        width: l.size.0,
        height: l.size.1,
        rgb,
    })
}

/// Frames, ticks, labels, title and the colour bar's triangles, over the painted pixels.
fn annotate(
    f: &Figure,
    l: &Layout,
    (xt, yt, bt): (&Ticks, &Ticks, &Ticks),
    rgb: &mut [u8],
) -> std::result::Result<(), String> {
    let e = |e: DrawingAreaErrorKind<_>| e.to_string();
    let root = BitMapBackend::with_buffer(rgb, l.size).into_drawing_area();
    let (ox, oy) = l.origin;
    let (pw, ph) = (l.plot.0 as i32, l.plot.1 as i32);
    let font = l.font;
    let gap = (font * 0.5) as i32;
    let tick_len = (font * 0.35) as i32;
    let line = text_size("0.9x", font).1;
    let style = |size: f64, pos: Pos| ("sans-serif", size).into_font().color(&BLACK).pos(pos);
    let frame = |x0: i32, y0: i32, x1: i32, y1: i32| {
        PathElement::new(
            vec![(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)],
            BLACK,
        )
    };
    root.draw(&frame(ox - 1, oy - 1, ox + pw, oy + ph))
        .map_err(e)?;
    // x axis.
    let [x0, x1, y0, y1] = f.extent;
    for (v, s) in xt.values.iter().zip(&xt.labels) {
        let px = ox + ((v - x0) / (x1 - x0) * pw as f64).round() as i32;
        root.draw(&PathElement::new(
            vec![(px, oy + ph), (px, oy + ph + tick_len)],
            BLACK,
        ))
        .map_err(e)?;
        let at = (px, oy + ph + tick_len + gap / 2);
        root.draw(&Text::new(
            s.clone(),
            at,
            style(font, Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(e)?;
    }
    let xl = axis_title(f.x_axis.0, xt.exponent, f.x_axis.1);
    let at = (ox + pw / 2, oy + ph + tick_len + gap + line + gap);
    root.draw(&Text::new(
        xl,
        at,
        style(font, Pos::new(HPos::Center, VPos::Top)),
    ))
    .map_err(e)?;
    // y axis.
    for (v, s) in yt.values.iter().zip(&yt.labels) {
        let frac = (v - y0) / (y1 - y0);
        let frac = if f.y_down { frac } else { 1.0 - frac };
        let py = oy + (frac * ph as f64).round() as i32;
        root.draw(&PathElement::new(
            vec![(ox - tick_len - 1, py), (ox - 1, py)],
            BLACK,
        ))
        .map_err(e)?;
        let at = (ox - tick_len - gap, py);
        root.draw(&Text::new(
            s.clone(),
            at,
            style(font, Pos::new(HPos::Right, VPos::Center)),
        ))
        .map_err(e)?;
    }
    let yl = axis_title(f.y_axis.0, yt.exponent, f.y_axis.1);
    let yl_style =
        style(font, Pos::new(HPos::Center, VPos::Center)).transform(FontTransform::Rotate270);
    root.draw(&Text::new(yl, (2 * gap + line / 2, oy + ph / 2), yl_style))
        .map_err(e)?;
    // Title.
    let at = (ox + pw / 2, 2 * gap);
    root.draw(&Text::new(
        f.title.to_string(),
        at,
        style(l.title_font, Pos::new(HPos::Center, VPos::Top)),
    ))
    .map_err(e)?;
    // Colour bar: frame, triangles where values are out of range, ticks, quantity.
    let (bx, bw, tri) = (l.bar_x, l.bar_w, l.tri);
    let (b0, b1) = (oy + tri, oy + ph - tri);
    root.draw(&frame(bx - 1, b0 - 1, bx + bw, b1)).map_err(e)?;
    let ends = [
        (f.scale.above, b0 - 1, oy, 1.0),
        (f.scale.below, b1, oy + ph, 0.0),
    ];
    for (show, base, tip, t) in ends {
        if !show {
            continue;
        }
        let [r, g, b] = f.cmap.rgb(t);
        let pts = vec![(bx - 1, base), (bx + bw, base), (bx + bw / 2, tip)];
        root.draw(&Polygon::new(pts.clone(), RGBColor(r, g, b).filled()))
            .map_err(e)?;
        let mut outline = pts;
        outline.push((bx - 1, base));
        root.draw(&PathElement::new(outline, BLACK)).map_err(e)?;
    }
    let (lo, hi) = (f.scale.lo, f.scale.hi);
    let span = if hi > lo { hi - lo } else { 1.0 };
    for (v, s) in bt.values.iter().zip(&bt.labels) {
        let py = b1 - ((v - lo) / span * (b1 - b0) as f64).round() as i32;
        root.draw(&PathElement::new(
            vec![(bx + bw, py), (bx + bw + tick_len, py)],
            BLACK,
        ))
        .map_err(e)?;
        let at = (bx + bw + tick_len + gap, py);
        root.draw(&Text::new(
            s.clone(),
            at,
            style(font, Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(e)?;
    }
    let ql = axis_title(f.quantity.0, bt.exponent, f.quantity.1);
    let x = l.size.0 as i32 - 2 * gap - line / 2;
    let q_style =
        style(font, Pos::new(HPos::Center, VPos::Center)).transform(FontTransform::Rotate270);
    root.draw(&Text::new(ql, (x, oy + ph / 2), q_style))
        .map_err(e)?;
    root.present().map_err(e)
}

/// Draw `f` as a PNG at `path`, atomically.
pub fn write_png(path: &Path, f: &Figure) -> Result<()> {
    let img = render(path, f, PNG_PLOT_WIDTH)?;
    save_png(path, &img)
}

/// Save an RGB picture as a PNG at `path`, atomically (the encoder writes a temporary file in
/// the same directory, which is renamed when complete).
pub fn save_png(path: &Path, img: &Image) -> Result<()> {
    let tmp = atomic::temp_path(path);
    let done = (|| -> std::result::Result<(), String> {
        let mut b = BitMapBackend::new(&tmp, (img.width, img.height));
        b.blit_bitmap((0, 0), (img.width, img.height), &img.rgb)
            .map_err(|e| e.to_string())?;
        b.present().map_err(|e| e.to_string())
    })();
    atomic::finish(&tmp, path, done.map_err(std::io::Error::other))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The colour at the top and at the bottom of the plot area's centre column.
    fn top_and_bottom(y_down: bool) -> ([u8; 3], [u8; 3]) {
        let f = Figure {
            values: &[0.0, 1.0],
            nx: 1,
            ny: 2,
            extent: [0.0, 1.0, 0.0, 2.0],
            y_down,
            x_axis: ("x", Some("m")),
            y_axis: ("time", Some("s")),
            title: "t",
            quantity: ("q", None),
            scale: Scale {
                lo: 0.0,
                hi: 1.0,
                below: false,
                above: false,
            },
            cmap: ColorMap::Heat,
            aspect: Some(1.0),
        };
        let (l, ..) = layout(&f, 200);
        let img = render(Path::new("t.png"), &f, 200).unwrap();
        let at = |y: i32| {
            let o = 3 * (img.width as usize * y as usize + (l.origin.0 + 100) as usize);
            [img.rgb[o], img.rgb[o + 1], img.rgb[o + 2]]
        };
        (at(l.origin.1 + 5), at(l.origin.1 + l.plot.1 as i32 - 5))
    }

    #[test]
    fn row_zero_is_at_the_bottom_unless_the_axis_points_down() {
        let (lo, hi) = (ColorMap::Heat.rgb(0.0), ColorMap::Heat.rgb(1.0));
        assert_eq!(top_and_bottom(false), (hi, lo));
        assert_eq!(top_and_bottom(true), (lo, hi));
    }
}
