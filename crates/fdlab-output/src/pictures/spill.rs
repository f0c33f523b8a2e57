//! The spill file: every picture sample of a run, appended as it is produced, so that the
//! animation and `final.png` are made at the end without keeping frames in memory, and a
//! resumed run's animation still covers the whole run.
//!
//! Layout: a 24-byte header (`FDLABPIX`, version, samples along x and y, bytes per value),
//! then fixed-size records: the step (u64) and the `width · height` samples as f32, all
//! little-endian. A record is appended with one write; a process killed in the middle leaves
//! a torn last record, which [`Spill::open`] drops.

use crate::error::{io_err, Error, Result};
use std::fs::{File, OpenOptions};
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"FDLABPIX";
const VERSION: u32 = 1;
const HEADER: u64 = 24;

fn header(width: usize, height: usize) -> [u8; HEADER as usize] {
    let mut h = [0u8; HEADER as usize];
    h[..8].copy_from_slice(MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&(width as u32).to_le_bytes());
    h[16..20].copy_from_slice(&(height as u32).to_le_bytes());
    h[20..24].copy_from_slice(&4u32.to_le_bytes());
    h
}

/// The append end of a spill file.
pub struct Spill {
    file: File,
    path: PathBuf,
    width: usize,
    height: usize,
    records: u64,
}

impl Spill {
    /// Bytes of one record.
    fn record_len(width: usize, height: usize) -> u64 {
        8 + 4 * (width * height) as u64
    }

    /// Open the spill at `path` for samples `width × height`. A fresh run (`resume = None`)
    /// starts it empty. A run resumed at step `s` keeps the records of steps up to `s`, in
    /// order, and cuts the file after the last of them (dropping later records and a torn
    /// one); `keep` sees each kept record. A file of another size or format is started anew.
    pub fn open(
        path: &Path,
        width: usize,
        height: usize,
        resume: Option<u64>,
        mut keep: impl FnMut(u64, &[f32]),
    ) -> Result<Spill> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io_err(path))?;
        let mut s = Spill {
            file,
            path: path.to_path_buf(),
            width,
            height,
            records: 0,
        };
        let end = match resume {
            Some(step) => s.kept(step, &mut keep)?,
            None => None,
        };
        match end {
            Some(end) => s.file.set_len(end).map_err(io_err(path))?,
            None => {
                s.records = 0;
                s.file.set_len(0).map_err(io_err(path))?;
                s.file.seek(SeekFrom::Start(0)).map_err(io_err(path))?;
                s.file
                    .write_all(&header(width, height))
                    .map_err(io_err(path))?;
            }
        }
        s.file.seek(SeekFrom::End(0)).map_err(io_err(path))?;
        Ok(s)
    }

    /// Read the records to keep on a resume at `step`; the byte offset after the last, or
    /// `None` when the file is not a spill of this size.
    fn kept(&mut self, step: u64, keep: &mut impl FnMut(u64, &[f32])) -> Result<Option<u64>> {
        let path = self.path.clone();
        self.file.seek(SeekFrom::Start(0)).map_err(io_err(&path))?;
        let mut r = Reader {
            inner: BufReader::new(&self.file),
            path: path.clone(),
            count: self.width * self.height,
            last: None,
        };
        let mut head = [0u8; HEADER as usize];
        if r.inner.read_exact(&mut head).is_err() || head != header(self.width, self.height) {
            return Ok(None);
        }
        let mut end = HEADER;
        let mut values = vec![0f32; self.width * self.height];
        while let Some(s) = r.next_into(&mut values)? {
            if s > step {
                break;
            }
            keep(s, &values);
            self.records += 1;
            end += Self::record_len(self.width, self.height);
        }
        Ok(Some(end))
    }

    /// Records in the file.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Append the samples of `step` as one record.
    pub fn append(&mut self, step: u64, values: &[f32]) -> Result<()> {
        if values.len() != self.width * self.height {
            return Err(Error::Invalid(format!(
                "picture samples: {} values for {} × {}",
                values.len(),
                self.width,
                self.height
            )));
        }
        let mut rec = Vec::with_capacity(Self::record_len(self.width, self.height) as usize);
        rec.extend_from_slice(&step.to_le_bytes());
        values
            .iter()
            .for_each(|v| rec.extend_from_slice(&v.to_le_bytes()));
        self.file.write_all(&rec).map_err(io_err(&self.path))?;
        self.records += 1;
        Ok(())
    }
}

/// Reads a spill's records in order, one at a time.
pub struct Reader<R> {
    inner: R,
    path: PathBuf,
    count: usize,
    last: Option<u64>,
}

impl Reader<BufReader<File>> {
    /// A reader of the spill at `path` for samples `width × height`.
    pub fn open(path: &Path, width: usize, height: usize) -> Result<Self> {
        let mut inner = BufReader::with_capacity(1 << 20, File::open(path).map_err(io_err(path))?);
        let mut head = [0u8; HEADER as usize];
        inner.read_exact(&mut head).map_err(io_err(path))?;
        if head != header(width, height) {
            return Err(Error::Invalid(format!(
                "{}: not a picture spill of {width} × {height} samples",
                path.display()
            )));
        }
        Ok(Reader {
            inner,
            path: path.to_path_buf(),
            count: width * height,
            last: None,
        })
    }
}

impl<R: Read> Reader<R> {
    /// The next record's step, its samples in `values`; `None` at the end, at a torn record,
    /// or at a step that does not follow the one before (what a crash can leave).
    pub fn next_into(&mut self, values: &mut [f32]) -> Result<Option<u64>> {
        let mut step = [0u8; 8];
        let mut bytes = vec![0u8; 4 * self.count];
        match self
            .inner
            .read_exact(&mut step)
            .and_then(|_| self.inner.read_exact(&mut bytes))
        {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(io_err(&self.path)(e)),
        }
        let step = u64::from_le_bytes(step);
        if self.last.is_some_and(|l| step <= l) {
            return Ok(None);
        }
        self.last = Some(step);
        for (v, b) in values.iter_mut().zip(bytes.chunks_exact(4)) {
            *v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        Ok(Some(step))
    }

    /// The next record as `(step, samples)`.
    pub fn next_record(&mut self) -> Result<Option<(u64, Vec<f32>)>> {
        let mut v = vec![0f32; self.count];
        Ok(self.next_into(&mut v)?.map(|s| (s, v)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(path: &Path) -> Vec<(u64, Vec<f32>)> {
        let mut r = Reader::open(path, 2, 1).unwrap();
        let mut out = vec![];
        while let Some(rec) = r.next_record().unwrap() {
            out.push(rec);
        }
        out
    }

    #[test]
    fn a_resume_keeps_the_records_up_to_its_step_and_drops_a_torn_one() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("spill");
        let mut s = Spill::open(&p, 2, 1, None, |_, _| {}).unwrap();
        for step in [0u64, 10, 20, 30] {
            s.append(step, &[step as f32, -(step as f32)]).unwrap();
        }
        drop(s);
        // A kill in the middle of the next record.
        let mut f = OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(&40u64.to_le_bytes()).unwrap();
        f.write_all(&[1, 2, 3]).unwrap();
        drop(f);
        let mut seen = vec![];
        let mut s = Spill::open(&p, 2, 1, Some(25), |st, v| seen.push((st, v.to_vec()))).unwrap();
        assert_eq!(seen.iter().map(|r| r.0).collect::<Vec<_>>(), [0, 10, 20]);
        assert_eq!(s.records(), 3);
        s.append(30, &[3.5, 4.5]).unwrap();
        drop(s);
        let all = steps(&p);
        assert_eq!(all.iter().map(|r| r.0).collect::<Vec<_>>(), [0, 10, 20, 30]);
        assert_eq!(all[3].1, [3.5, 4.5]);
        // A resume past the torn record keeps every complete one.
        let mut f = OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(&[9; 5]).unwrap();
        drop(f);
        let s = Spill::open(&p, 2, 1, Some(1000), |_, _| {}).unwrap();
        assert_eq!(s.records(), 4);
        drop(s);
        assert_eq!(std::fs::metadata(&p).unwrap().len(), HEADER + 4 * 16);
    }

    #[test]
    fn a_fresh_run_or_another_size_starts_the_spill_anew() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("spill");
        let mut s = Spill::open(&p, 2, 1, None, |_, _| {}).unwrap();
        s.append(0, &[1.0, 2.0]).unwrap();
        drop(s);
        assert_eq!(Spill::open(&p, 2, 1, None, |_, _| {}).unwrap().records(), 0);
        let mut s = Spill::open(&p, 2, 1, None, |_, _| {}).unwrap();
        s.append(0, &[1.0, 2.0]).unwrap();
        drop(s);
        assert_eq!(
            Spill::open(&p, 3, 1, Some(5), |_, _| {}).unwrap().records(),
            0
        );
        assert_eq!(std::fs::metadata(&p).unwrap().len(), HEADER);
    }
}
