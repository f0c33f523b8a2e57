//! What a run writes as it goes and at its end: field files, pictures and seismograms.

use crate::case::{Case, Physics};
use crate::error::{io_err, Result};
use crate::output::{write_gif, write_npy, write_png, ColorMap, Slice};
use crate::stepper::{PlaneSample, Stepper};
use crate::writer::FieldWriter;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Samples along each axis of a picture at most: more than the pixels of a PNG's plot
/// (520 wide, at most 900 high) and of the GIF, so nothing visible is lost.
const PICTURE_POINTS: usize = 1024;

/// A time for a title: four decimals where they show it, else four significant digits.
fn time_label(t: f64) -> String {
    if t == 0.0 || (0.1..1e5).contains(&t.abs()) {
        format!("{t:.4}")
    } else {
        format!("{t:.3e}")
    }
}

/// Output writer state: the 2-D slices kept for frames and the GIF.
pub(crate) struct Outputs {
    case: Case,
    dir: PathBuf,
    pub(crate) dt: f64,
    pub(crate) every: u64,
    frames: Vec<(u64, Vec<f64>)>,
    /// Whether this process writes (rank 0 of a job); the others only take part in `field`.
    root: bool,
    /// Writes the `.npy` and `.vti` files while the steps go on.
    pub(crate) files: FieldWriter,
}

impl Outputs {
    pub(crate) fn new(case: &Case, dir: &Path, dt: f64, root: bool) -> Outputs {
        Outputs {
            case: case.clone(),
            dir: dir.to_path_buf(),
            dt,
            every: case.spec.output.every as u64,
            frames: vec![],
            root,
            files: FieldWriter::new(),
        }
    }

    fn n(&self) -> [usize; 3] {
        let s = &self.case.spec.grid.shape;
        [s[0], s[1], *s.get(2).unwrap_or(&1)]
    }

    /// The linear indices of the xy plane the pictures show (the whole grid in 2-D).
    fn slice_range(&self) -> std::ops::Range<usize> {
        let n = self.n();
        let z = self
            .case
            .spec
            .output
            .slice
            .unwrap_or(n[2] / 2)
            .min(n[2] - 1);
        n[0] * n[1] * z..n[0] * n[1] * (z + 1)
    }

    /// The points of the plane the pictures show: at most [`PICTURE_POINTS`] along each
    /// axis, so that frames of a large grid stay small (in memory and on the bus).
    fn sample(&self) -> PlaneSample {
        let n = self.n();
        PlaneSample::at_most(self.slice_range().start, [n[0], n[1]], PICTURE_POINTS)
    }

    pub(crate) fn write(&mut self, s: &dyn Stepper) -> Result<()> {
        let o = &self.case.spec.output;
        if !o.npy && !o.vti {
            // Pictures only: just their samples leave the device.
            if o.png || o.frames || o.gif {
                let sl = s.plane(self.sample())?;
                if self.root {
                    self.frames.push((s.step(), sl));
                }
            }
            return Ok(());
        }
        let field = std::sync::Arc::new(s.field()?);
        if !self.root {
            return Ok(());
        }
        let step = s.step();
        let n = self.n();
        if o.npy {
            let mut shape: Vec<usize> = self.case.spec.grid.shape.clone();
            shape.reverse();
            let path = self.dir.join(format!("field_{step:07}.npy"));
            self.files.npy(path, shape, field.clone())?;
        }
        if o.vti {
            let mut h = [1.0; 3];
            h[..self.case.dim()].copy_from_slice(&self.case.spec.grid.spacing);
            let path = self.dir.join(format!("field_{step:07}.vti"));
            self.files.vti(path, n, h, field.clone())?;
        }
        if o.png || o.frames || o.gif {
            let sl = self.sample().take(&field[self.slice_range()]);
            self.frames.push((step, sl));
        }
        Ok(())
    }

    /// Colour range over frames `from..` (the animation uses all of them, so colours mean the
    /// same in every frame; `final.png` only its own).
    fn range(&self, from: usize) -> (f64, f64, ColorMap) {
        let all = self.frames[from.min(self.frames.len())..]
            .par_iter()
            .flat_map_iter(|(_, f)| f.iter().copied());
        match self.case.spec.physics {
            Physics::Heat => {
                let (lo, hi) = all
                    .fold(
                        || (f64::INFINITY, f64::NEG_INFINITY),
                        |(a, b), v| (a.min(v), b.max(v)),
                    )
                    .reduce(
                        || (f64::INFINITY, f64::NEG_INFINITY),
                        |(a, b), (c, d)| (a.min(c), b.max(d)),
                    );
                (lo.min(0.0), hi.max(lo + 1e-30), ColorMap::Heat)
            }
            Physics::Wave | Physics::Fdtd => {
                // Clip at a fraction of the peak so that weak reflections stay visible.
                let m = all.map(f64::abs).reduce(|| 0.0, f64::max) * 0.25;
                let m = if m > 0.0 { m } else { 1.0 };
                (-m, m, ColorMap::Seismic)
            }
        }
    }

    fn picture(
        &self,
        path: &Path,
        step: u64,
        data: &[f64],
        range: (f64, f64, ColorMap),
    ) -> Result<()> {
        let n = self.n();
        let p = self.sample();
        let h = &self.case.spec.grid.spacing;
        let what = match (self.case.spec.physics, &self.case.spec.fdtd) {
            (Physics::Heat, _) => "temperature".to_string(),
            (Physics::Fdtd, Some(f)) => format!("{:?}", f.plot),
            _ => "pressure".to_string(),
        };
        let title = format!("{what}, t = {}", time_label(step as f64 * self.dt));
        write_png(
            path,
            &Slice {
                data,
                nx: p.width(),
                ny: p.height(),
                extent: [0.0, n[0] as f64 * h[0], 0.0, n[1] as f64 * h[1]],
                labels: ("x", "y"),
                title: &title,
                range: (range.0, range.1),
                cmap: range.2,
            },
        )
    }

    pub(crate) fn finish(&mut self, s: &dyn Stepper) -> Result<()> {
        self.files.finish()?;
        let o = self.case.spec.output.clone();
        let p = self.sample();
        let range = self.range(0);
        let frames = || -> Result<()> {
            if !o.frames {
                return Ok(());
            }
            let fd = self.dir.join("frames");
            std::fs::create_dir_all(&fd).map_err(io_err(&fd))?;
            // One frame per core: drawing is most of the time outputs take after the steps.
            self.frames
                .par_iter()
                .enumerate()
                .try_for_each(|(i, (step, f))| {
                    self.picture(&fd.join(format!("frame_{i:05}.png")), *step, f, range)
                })
        };
        let last = || -> Result<()> {
            if let (true, Some((step, f))) = (o.png, self.frames.last()) {
                let own = self.range(self.frames.len() - 1);
                self.picture(&self.dir.join("final.png"), *step, f, own)?;
            }
            Ok(())
        };
        let gif = || -> Result<()> {
            if !o.gif || self.frames.is_empty() {
                return Ok(());
            }
            let fr: Vec<&[f64]> = self.frames.iter().map(|(_, f)| f.as_slice()).collect();
            write_gif(
                &self.dir.join("animation.gif"),
                &fr,
                p.width(),
                p.height(),
                (range.0, range.1),
                range.2,
                240,
            )
        };
        let ((a, b), c) = rayon::join(|| rayon::join(frames, last), gif);
        a.and(b).and(c)?;
        self.seismogram(s)
    }

    fn seismogram(&self, s: &dyn Stepper) -> Result<()> {
        if self.case.spec.physics == Physics::Fdtd {
            return crate::fdtd_output::write_probes(
                &self.case,
                &self.dir,
                self.dt,
                s.traces(),
                &s.spectra()?,
            );
        }
        let tr = s.traces();
        if tr.is_empty() || tr[0].is_empty() {
            return Ok(());
        }
        let (nr, nt) = (tr.len(), tr[0].len());
        let mut flat = Vec::with_capacity(nr * nt);
        for t in tr {
            flat.extend_from_slice(t);
        }
        write_npy(&self.dir.join("seismogram.npy"), &[nr, nt], &flat)?;
        // Picture: receivers across, time downwards (row 0 at the bottom is the last sample).
        let mut img = vec![0.0; nr * nt];
        for (r, t) in tr.iter().enumerate() {
            for (k, v) in t.iter().enumerate() {
                img[r + nr * (nt - 1 - k)] = *v;
            }
        }
        let m = flat.iter().fold(0.0f64, |a, v| a.max(v.abs())) * 0.5;
        let m = if m > 0.0 { m } else { 1.0 };
        let t_end = nt as f64 * self.dt;
        write_png(
            &self.dir.join("seismogram.png"),
            &Slice {
                data: &img,
                nx: nr,
                ny: nt,
                extent: [0.0, nr as f64, -t_end, 0.0],
                labels: ("receiver", "-time"),
                title: "seismogram",
                range: (-m, m),
                cmap: ColorMap::Seismic,
            },
        )
    }
}
