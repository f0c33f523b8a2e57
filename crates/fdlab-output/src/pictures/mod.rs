//! A run's pictures, made as the run goes: each output's picture samples are appended to a
//! spill file (`frames/.samples.bin`, see [`spill`]) and, with `frames = true`, drawn as
//! `frames/frame_NNNNN.png` on a thread of their own, so that the steps never wait for the
//! drawing. At the end `final.png` is drawn from the last samples and `animation.gif` from the
//! spill, a few frames at a time: no picture is kept in memory beyond the one being drawn.
//! `final.png` is a picture on its own, coloured by its own values; the frames and the
//! animation share their colours (see [`scale`]).
//!
//! Colours follow [`scale`]: each frame's range is fixed when it is produced, from the frames
//! before it, so the animation's frames are the PNG frames. A resumed run keeps the spill's
//! records up to its step, so frame numbers and the animation cover the whole run.

pub mod look;
pub mod scale;
pub mod spill;

pub use look::Look;

use crate::atomic;
use crate::error::{io_err, Error, Result};
use crate::writer::Worker;
use crate::{encode_gif_frame, save_png, GifWriter, Image, Palette, Scale, PNG_PLOT_WIDTH};
use rayon::prelude::*;
use scale::Running;
use spill::{Reader, Spill};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The folder of the frames and the spill file, in the run directory.
pub const FRAMES: &str = "frames";
/// The spill file's name in [`FRAMES`]; hidden, as it is the run's working data.
pub const SPILL: &str = ".samples.bin";
/// Width of a GIF frame's plot area in pixels.
const GIF_PLOT_WIDTH: u32 = 480;
/// Hundredths of a second between GIF frames.
const GIF_DELAY: u16 = 8;
/// Frames that may wait while the painters draw.
const PAINTER_QUEUE: usize = 2;

/// Which pictures a run makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wanted {
    /// `final.png`.
    pub png: bool,
    /// `frames/frame_NNNNN.png`.
    pub frames: bool,
    /// `animation.gif`.
    pub gif: bool,
}

/// The pictures of a run in progress. The caller's thread only hands each output's samples
/// over: converting, scaling and spilling them (in order, as colours depend on the frames
/// before) happen on a thread of their own, which queues each frame to the painters. A GPU
/// run thus waits for none of it.
pub struct Pictures {
    look: Arc<Look>,
    dir: PathBuf,
    wanted: Wanted,
    /// What the spiller thread updates; read at the end.
    state: Arc<Mutex<State>>,
    spiller: Worker,
}

/// The spill, the running colour scale, the last frame and the painters.
struct State {
    spill: Spill,
    running: Running,
    /// The last frame: what `final.png` shows.
    last: Option<(u64, Arc<Vec<f32>>, Scale)>,
    painter: Worker,
}

/// Threads that draw frames: a frame takes a core several milliseconds, more than a GPU
/// spends on the steps between frames of a large run; one core is left to the steps.
fn painters() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get().saturating_sub(1))
        .max(1)
}

/// The name of frame `index`.
fn frame_name(index: u64) -> String {
    format!("frame_{index:05}.png")
}

impl Pictures {
    /// Start (or, with `resume = Some(step)`, continue) the pictures of the run in `dir`.
    pub fn open(look: Look, dir: &Path, wanted: Wanted, resume: Option<u64>) -> Result<Self> {
        let fd = dir.join(FRAMES);
        std::fs::create_dir_all(&fd).map_err(io_err(&fd))?;
        atomic::remove_stale(&fd)?;
        let mut running = Running::default();
        let mut last = None;
        let rule = look.rule;
        let spill = Spill::open(&fd.join(SPILL), look.nx, look.ny, resume, |step, v| {
            let s = running.next(&rule, v);
            last = Some((step, Arc::new(v.to_vec()), s));
        })?;
        if resume.is_some() {
            remove_frames_from(&fd, spill.records())?;
        }
        Ok(Pictures {
            look: Arc::new(look),
            dir: dir.to_path_buf(),
            wanted,
            state: Arc::new(Mutex::new(State {
                spill,
                running,
                last,
                painter: Worker::pool("fdlab-painter", painters(), PAINTER_QUEUE),
            })),
            spiller: Worker::new("fdlab-spiller", PAINTER_QUEUE),
        })
    }

    /// Take the picture samples of `step`: they are spilled and their frame queued on the
    /// spiller's thread.
    pub fn add(&mut self, step: u64, samples: Vec<f64>) -> Result<()> {
        let (look, state) = (self.look.clone(), self.state.clone());
        let frames = self.wanted.frames.then(|| self.dir.join(FRAMES));
        self.spiller.submit(Box::new(move || {
            let mut st = state
                .lock()
                .map_err(|_| Error::Invalid("the picture spiller panicked".into()))?;
            let values: Vec<f32> = samples.iter().map(|&v| v as f32).collect();
            let scale = st.running.next(&look.rule, &values);
            let index = st.spill.records();
            st.spill.append(step, &values)?;
            let values = Arc::new(values);
            if let Some(fd) = frames {
                let v = values.clone();
                let path = fd.join(frame_name(index));
                st.painter.submit(Box::new(move || {
                    save_png(&path, &look.draw(&path, step, &v, scale, PNG_PLOT_WIDTH)?)
                }))?;
            }
            st.last = Some((step, values, scale));
            Ok(())
        }))
    }

    /// Wait for the frames, then draw `final.png` and `animation.gif`.
    pub fn finish(&mut self) -> Result<()> {
        self.spiller.finish()?;
        let mut st = self
            .state
            .lock()
            .map_err(|_| Error::Invalid("the picture spiller panicked".into()))?;
        st.painter.finish()?;
        if let (true, Some((step, v, _))) = (self.wanted.png, &st.last) {
            // A picture on its own: its colours span its own values (with the case's clip),
            // where a frame's span all frames so far; a wave that has left the grid would
            // otherwise be drawn white.
            let own = Running::default().next(&self.look.rule, v);
            let path = self.dir.join("final.png");
            save_png(
                &path,
                &self.look.draw(&path, *step, v, own, PNG_PLOT_WIDTH)?,
            )?;
        }
        if self.wanted.gif {
            animate(
                &self.look,
                &self.dir.join(FRAMES).join(SPILL),
                &self.dir.join("animation.gif"),
            )?;
        }
        Ok(())
    }
}

/// Remove the frames numbered `from` and above: a resumed run draws them again.
fn remove_frames_from(dir: &Path, from: u64) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let index = name
            .strip_prefix("frame_")
            .and_then(|r| r.strip_suffix(".png"))
            .and_then(|n| n.parse::<u64>().ok());
        if index.is_some_and(|i| i >= from) {
            std::fs::remove_file(e.path()).map_err(io_err(e.path()))?;
        }
    }
    Ok(())
}

/// Write `path`, the animation of every record of the spill at `spill`: a few frames at a
/// time (two per thread) are read, drawn and compressed in parallel, then appended in order.
pub fn animate(look: &Look, spill: &Path, path: &Path) -> Result<()> {
    let mut reader = Reader::open(spill, look.nx, look.ny)?;
    let palette = Palette::new(look.cmap);
    let mut running = Running::default();
    let mut gif: Option<GifWriter> = None;
    let chunk = 2 * rayon::current_num_threads();
    loop {
        let mut batch = Vec::with_capacity(chunk);
        while batch.len() < chunk {
            let Some((step, v)) = reader.next_record()? else {
                break;
            };
            let scale = running.next(&look.rule, &v);
            batch.push((step, v, scale));
        }
        if batch.is_empty() {
            break;
        }
        let images: Vec<Image> = batch
            .par_iter()
            .map(|(step, v, scale)| look.draw(path, *step, v, *scale, GIF_PLOT_WIDTH))
            .collect::<Result<_>>()?;
        let w = match &mut gif {
            Some(w) => w,
            None => {
                let size = (images[0].width as u16, images[0].height as u16);
                gif.insert(GifWriter::create(path, size, &palette)?)
            }
        };
        let size = w.size;
        let frames: Vec<_> = images
            .par_iter()
            .map(|im| encode_gif_frame(&palette, im, size, GIF_DELAY))
            .collect();
        for f in &frames {
            w.write(f)?;
        }
    }
    gif.map_or(Ok(()), GifWriter::finish)
}
