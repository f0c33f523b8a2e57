//! What a run writes as it goes and at its end: field files, pictures and seismograms.

use crate::case::{Case, Physics};
use crate::case_outputs;
use crate::error::Result;
use crate::output::{read_pvd, write_npy, write_png, ColorMap, Figure, Scale};
use crate::pictures::look::TimeUnit;
use crate::pictures::{Pictures, Wanted};
use crate::stepper::{PlaneSample, Stepper};
use crate::writer::FieldWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Samples along each axis of a picture at most: as many as the pixels of a PNG's plot
/// (640 wide, at most 800 high) and more than the GIF's, so nothing visible is lost; more
/// would only add to the spill file and to the animation's time.
const PICTURE_POINTS: usize = 800;

/// The ParaView collection of a run's `.vti` files.
pub const PVD: &str = "fields.pvd";

/// Output writer state: field files go to a background writer, picture samples to the
/// pictures' spill file and painter; nothing is kept per output.
pub(crate) struct Outputs {
    case: Case,
    dir: PathBuf,
    pub(crate) dt: f64,
    pub(crate) every: u64,
    /// Pictures of rank 0 (none when the case asks for none or on other ranks).
    pictures: Option<Pictures>,
    /// The `.vti` files so far, with their times, for `fields.pvd`.
    vtis: Vec<(f64, String)>,
    /// Whether this process writes (rank 0 of a job); the others only take part in `field`.
    root: bool,
    /// Writes the `.npy`, `.vti` and `.pvd` files while the steps go on.
    pub(crate) files: FieldWriter,
}

/// The step in a field file's name `field_NNNNNNN.ext`.
fn field_step(name: &str, ext: &str) -> Option<u64> {
    name.strip_prefix("field_")?.strip_suffix(ext)?.parse().ok()
}

impl Outputs {
    /// The outputs of `case` stepped by `dt` into `dir`; `root` says whether this process
    /// writes. A run resumed at step `s` (`resume_step = Some(s)`) continues the earlier
    /// pictures and `fields.pvd` up to `s`.
    pub(crate) fn new(
        case: &Case,
        dir: &Path,
        dt: f64,
        root: bool,
        resume_step: Option<u64>,
    ) -> Result<Outputs> {
        let o = &case.spec.output;
        let mut out = Outputs {
            case: case.clone(),
            dir: dir.to_path_buf(),
            dt,
            every: o.every as u64,
            pictures: None,
            vtis: vec![],
            root,
            files: FieldWriter::new(),
        };
        if !root {
            return Ok(out);
        }
        if o.png || o.frames || o.gif {
            let look = case_outputs::look(case, dt, out.sample(), out.slice_z());
            let wanted = Wanted {
                png: o.png,
                frames: o.frames,
                gif: o.gif,
            };
            out.pictures = Some(Pictures::open(look, dir, wanted, resume_step)?);
        }
        if o.vti
            && let Some(s) = resume_step
        {
            out.vtis = read_pvd(&dir.join(PVD))?
                .into_iter()
                .filter(|(_, f)| field_step(f, ".vti").is_some_and(|k| k <= s))
                .collect();
        }
        Ok(out)
    }

    fn n(&self) -> [usize; 3] {
        let s = &self.case.spec.grid.shape;
        [s[0], s[1], *s.get(2).unwrap_or(&1)]
    }

    /// The z index of the plane the pictures show.
    fn slice_z(&self) -> usize {
        let n = self.n();
        self.case
            .spec
            .output
            .slice
            .unwrap_or(n[2] / 2)
            .min(n[2] - 1)
    }

    /// The linear indices of the xy plane the pictures show (the whole grid in 2-D).
    fn slice_range(&self) -> std::ops::Range<usize> {
        let (n, z) = (self.n(), self.slice_z());
        n[0] * n[1] * z..n[0] * n[1] * (z + 1)
    }

    /// The points of the plane the pictures show: at most [`PICTURE_POINTS`] along each
    /// axis, so that frames of a large grid stay small (in memory and on the bus).
    fn sample(&self) -> PlaneSample {
        let n = self.n();
        PlaneSample::at_most(self.slice_range().start, [n[0], n[1]], PICTURE_POINTS)
    }

    /// The name of the array in `.vti` files: what the pictures call it.
    fn quantity(&self) -> String {
        match (self.case.spec.physics, &self.case.spec.fdtd) {
            (Physics::Heat, _) => "temperature".into(),
            (Physics::Fdtd, Some(f)) => format!("{:?}", f.plot),
            _ => "pressure".into(),
        }
    }

    pub(crate) fn write(&mut self, s: &dyn Stepper) -> Result<()> {
        let o = &self.case.spec.output;
        let pictures = o.png || o.frames || o.gif;
        if !o.npy && !o.vti {
            // Pictures only: just their samples leave the device.
            if pictures {
                let sl = s.plane(self.sample())?;
                if let Some(p) = &mut self.pictures {
                    p.add(s.step(), sl)?;
                }
            }
            return Ok(());
        }
        let field = Arc::new(s.field()?);
        if !self.root {
            return Ok(());
        }
        let step = s.step();
        let dtype = case_outputs::dtype(self.case.spec.precision);
        if o.npy {
            let mut shape: Vec<usize> = self.case.spec.grid.shape.clone();
            shape.reverse();
            let path = self.dir.join(format!("field_{step:07}.npy"));
            self.files.npy(path, shape, field.clone(), dtype)?;
        }
        if o.vti {
            let mut h = [1.0; 3];
            h[..self.case.dim()].copy_from_slice(&self.case.spec.grid.spacing);
            let name = format!("field_{step:07}.vti");
            let path = self.dir.join(&name);
            let q = self.quantity();
            self.files
                .vti(path, (self.n(), h), q, field.clone(), dtype)?;
            self.vtis.retain(|(_, f)| *f != name);
            self.vtis.push((step as f64 * self.dt, name));
            self.files.pvd(self.dir.join(PVD), self.vtis.clone())?;
        }
        if pictures {
            let sl = self.sample().take(&field[self.slice_range()]);
            if let Some(p) = &mut self.pictures {
                p.add(step, sl)?;
            }
        }
        Ok(())
    }

    pub(crate) fn finish(&mut self, s: &dyn Stepper) -> Result<()> {
        self.files.finish()?;
        if let Some(p) = &mut self.pictures {
            p.finish()?;
        }
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
        self.seismogram_png(tr)
    }

    /// `seismogram.png`: receivers across (numbered from 1), time downwards from 0; sample
    /// `k` is at time `(k + 1)·dt`. Colours clip at half the largest amplitude, so that the
    /// later, weaker arrivals show.
    fn seismogram_png(&self, tr: &[Vec<f64>]) -> Result<()> {
        let (nr, nt) = (tr.len(), tr[0].len());
        let mut img = vec![0f32; nr * nt];
        for (r, t) in tr.iter().enumerate() {
            for (k, v) in t.iter().enumerate() {
                img[r + nr * k] = *v as f32;
            }
        }
        let (lo, hi) = tr
            .iter()
            .flatten()
            .fold((0.0f64, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
        let peak = lo.abs().max(hi);
        let m = if peak > 0.0 { 0.5 * peak } else { 1.0 };
        let o = &self.case.spec.output;
        let unit = match &o.time_unit {
            Some(u) if u.is_empty() => None,
            Some(u) => Some(u.clone()),
            None => Some("s".to_string()),
        };
        let tu = TimeUnit::new(unit, nt as f64 * self.dt);
        let value_unit = o.value_unit.as_deref().filter(|u| !u.is_empty());
        let title = format!("seismogram, {nr} receivers");
        // Row k spans one time step centred on its sample's time.
        let (t0, t1) = (
            0.5 * self.dt * tu.factor,
            (nt as f64 + 0.5) * self.dt * tu.factor,
        );
        write_png(
            &self.dir.join("seismogram.png"),
            &Figure {
                values: &img,
                nx: nr,
                ny: nt,
                extent: [0.5, nr as f64 + 0.5, t0, t1],
                y_down: true,
                x_axis: ("receiver", None),
                y_axis: ("time", tu.name.as_deref()),
                title: &title,
                quantity: ("pressure", value_unit),
                scale: Scale {
                    lo: -m,
                    hi: m,
                    below: lo < -m,
                    above: hi > m,
                },
                cmap: ColorMap::Seismic,
                aspect: Some(0.8),
            },
        )?;
        Ok(())
    }
}
