//! Output files for fdlab runs: `.npy` arrays, VTK `.vti` images and their `.pvd` time
//! series, PNG pictures with physical axes and a colour bar, and animated GIFs; and a run's
//! pictures made as it goes ([`pictures`]) and its field files written on a thread of their
//! own ([`writer`]). Every file is written under a temporary name and renamed when complete
//! (see [`atomic`]).
//!
//! The writers take plain data (values, shapes, spacings, units as text); they know nothing
//! of cases or solvers.
//!
//! ```no_run
//! let dir = std::path::Path::new("out");
//! fdlab_output::write_npy(&dir.join("u.npy"), &[2, 3], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0])?;
//! let (shape, values) = fdlab_output::read_npy(&dir.join("u.npy"))?;
//! assert_eq!((shape, values.len()), (vec![2, 3], 6));
//! # Ok::<(), fdlab_output::Error>(())
//! ```
#![warn(missing_docs)]

pub mod atomic;
mod error;
mod figure;
mod gif;
mod npy;
pub mod pictures;
pub mod ticks;
mod vti;
pub mod writer;

pub use error::{Error, Result};
pub use figure::{render, save_png, write_png, Figure, Image, Scale, PNG_PLOT_WIDTH};
pub use gif::{encode as encode_gif_frame, GifWriter, Palette};
pub use npy::{read_npy, write_npy, write_npy_as, Dtype};
pub use vti::{read_pvd, read_vti, write_pvd, write_vti, Vti};

use plotters::prelude::FontStyle;

/// The bundled font (DejaVu Sans, TrueType) the pictures' text is drawn with.
pub static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// Make the bundled font the one plotters draws "sans-serif" text with.
fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
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
