//! Animated GIFs of rendered pictures, written frame by frame (never all frames in memory).
//!
//! A GIF holds at most 256 colours: the palette is the colour map at 240 levels plus 16 greys
//! for text and axes. Each RGB pixel takes its nearest palette colour from a table indexed by
//! the top six bits of each channel, built once per animation. Frames are quantized and
//! compressed by [`encode`], which callers run in parallel; [`GifWriter::write`] then appends
//! them in order.

use crate::atomic;
use crate::error::{io_err, Error, Result};
use crate::figure::Image;
use crate::ColorMap;
use rayon::prelude::*;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

/// Colour-map levels in the palette; the other 16 entries are greys.
const LEVELS: usize = 240;
/// Bits kept per channel when looking a colour up.
const BITS: u32 = 6;

/// The palette of an animation and the table that finds each colour's nearest entry.
#[derive(Debug, Clone)]
pub struct Palette {
    rgb: Vec<u8>,
    nearest: Vec<u8>,
}

impl Palette {
    /// The palette for pictures drawn with `cmap`.
    pub fn new(cmap: ColorMap) -> Palette {
        let mut colours: Vec<[u8; 3]> = (0..LEVELS)
            .map(|i| cmap.rgb(i as f64 / (LEVELS - 1) as f64))
            .collect();
        colours.extend((0..256 - LEVELS).map(|i| {
            let g = (i * 255 / (256 - LEVELS - 1)) as u8;
            [g, g, g]
        }));
        let n = 1usize << BITS;
        let nearest = (0..n * n * n)
            .into_par_iter()
            .map(|k| {
                let centre = |c: usize| ((c << (8 - BITS)) + (1 << (7 - BITS))) as i32;
                let (r, g, b) = (
                    centre(k >> (2 * BITS)),
                    centre((k >> BITS) & (n - 1)),
                    centre(k & (n - 1)),
                );
                let d = |c: &[u8; 3]| {
                    let (dr, dg, db) = (c[0] as i32 - r, c[1] as i32 - g, c[2] as i32 - b);
                    dr * dr + dg * dg + db * db
                };
                (0..colours.len())
                    .min_by_key(|&i| d(&colours[i]))
                    .unwrap_or(0) as u8
            })
            .collect();
        Palette {
            rgb: colours.into_iter().flatten().collect(),
            nearest,
        }
    }

    /// The palette index for an RGB colour.
    pub fn index(&self, c: &[u8]) -> u8 {
        let s = 8 - BITS;
        let k = ((c[0] as usize >> s) << (2 * BITS))
            | ((c[1] as usize >> s) << BITS)
            | (c[2] as usize >> s);
        self.nearest[k]
    }
}

/// Quantize and compress one picture as a frame `size` pixels (the animation's size: a
/// larger picture is cropped at its right and bottom, a smaller one padded with white).
pub fn encode(p: &Palette, img: &Image, size: (u16, u16), delay: u16) -> gif::Frame<'static> {
    let (w, h) = (size.0 as usize, size.1 as usize);
    let white = p.index(&[255, 255, 255]);
    let mut px = vec![white; w * h];
    let (iw, ih) = (img.width as usize, img.height as usize);
    for y in 0..h.min(ih) {
        for x in 0..w.min(iw) {
            let o = 3 * (iw * y + x);
            px[w * y + x] = p.index(&img.rgb[o..o + 3]);
        }
    }
    let mut frame = gif::Frame::from_indexed_pixels(size.0, size.1, px, None);
    frame.delay = delay;
    frame.make_lzw_pre_encoded();
    frame
}

/// An animation being written: frames go to a temporary file, renamed when it is complete.
pub struct GifWriter {
    enc: Option<gif::Encoder<BufWriter<File>>>,
    tmp: PathBuf,
    path: PathBuf,
    /// Frame size of the whole animation.
    pub size: (u16, u16),
}

impl GifWriter {
    /// Start an animation of frames `size` pixels at `path`.
    pub fn create(path: &Path, size: (u16, u16), palette: &Palette) -> Result<GifWriter> {
        let tmp = atomic::temp_path(path);
        let file = File::create(&tmp).map_err(io_err(path))?;
        let gerr = |e: gif::EncodingError| Error::Plot {
            path: path.to_path_buf(),
            detail: e.to_string(),
        };
        let mut w = GifWriter {
            enc: None,
            tmp,
            path: path.to_path_buf(),
            size,
        };
        let mut enc =
            gif::Encoder::new(BufWriter::new(file), size.0, size.1, &palette.rgb).map_err(gerr)?;
        enc.set_repeat(gif::Repeat::Infinite).map_err(gerr)?;
        w.enc = Some(enc);
        Ok(w)
    }

    /// Append a frame made by [`encode`].
    pub fn write(&mut self, frame: &gif::Frame<'static>) -> Result<()> {
        let path = self.path.clone();
        let Some(enc) = self.enc.as_mut() else {
            return Ok(());
        };
        enc.write_lzw_pre_encoded_frame(frame)
            .map_err(|e| Error::Plot {
                path,
                detail: e.to_string(),
            })
    }

    /// Close the animation and give it its final name.
    pub fn finish(mut self) -> Result<()> {
        let done = match self.enc.take().map(|e| e.into_inner()) {
            Some(Ok(mut w)) => std::io::Write::flush(&mut w),
            Some(Err(e)) => Err(e),
            None => Ok(()),
        };
        atomic::finish(&self.tmp, &self.path, done)
    }
}

impl Drop for GifWriter {
    /// An animation dropped before [`GifWriter::finish`] leaves no temporary behind.
    fn drop(&mut self) {
        if self.enc.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}
