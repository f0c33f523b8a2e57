//! Field files (`.npy`, `.vti`) written on a thread of their own, so that the steps go on
//! while a large field reaches the disk: on a GPU the next steps run meanwhile, and a run
//! with frequent outputs is limited by its steps, not by its writes.
//!
//! At most one field waits while another is being written (the run blocks beyond that, so
//! memory stays bounded), files are written in the order they were given, and nothing is
//! lost: [`FieldWriter::finish`] (or dropping the writer) waits for every file. A failed write
//! stops the writer; the next call returns its error.

use crate::error::{Error, Result};
use crate::output::{write_npy, write_vti};
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

/// One file to write.
enum Job {
    Npy {
        path: PathBuf,
        shape: Vec<usize>,
        data: Arc<Vec<f64>>,
    },
    Vti {
        path: PathBuf,
        n: [usize; 3],
        spacing: [f64; 3],
        data: Arc<Vec<f64>>,
    },
}

impl Job {
    fn write(&self) -> Result<()> {
        match self {
            Job::Npy { path, shape, data } => write_npy(path, shape, data),
            Job::Vti {
                path,
                n,
                spacing,
                data,
            } => write_vti(path, *n, *spacing, "u", data),
        }
    }
}

/// The background writer of a run's field files.
pub(crate) struct FieldWriter {
    tx: Option<SyncSender<Job>>,
    handle: Option<JoinHandle<Result<()>>>,
}

impl FieldWriter {
    /// A writer with its thread started.
    pub(crate) fn new() -> FieldWriter {
        let (tx, rx) = sync_channel::<Job>(1);
        let handle = std::thread::Builder::new()
            .name("fdlab-writer".into())
            .spawn(move || {
                for job in rx {
                    job.write()?;
                }
                Ok(())
            })
            .ok();
        FieldWriter {
            tx: handle.as_ref().map(|_| tx),
            handle,
        }
    }

    /// Write `data` as a `.npy` of `shape` (slowest axis first) at `path`.
    pub(crate) fn npy(
        &mut self,
        path: PathBuf,
        shape: Vec<usize>,
        data: Arc<Vec<f64>>,
    ) -> Result<()> {
        self.send(Job::Npy { path, shape, data })
    }

    /// Write `data` as a `.vti` of `n` points `spacing` apart at `path`.
    pub(crate) fn vti(
        &mut self,
        path: PathBuf,
        n: [usize; 3],
        spacing: [f64; 3],
        data: Arc<Vec<f64>>,
    ) -> Result<()> {
        self.send(Job::Vti {
            path,
            n,
            spacing,
            data,
        })
    }

    fn send(&mut self, job: Job) -> Result<()> {
        let Some(tx) = &self.tx else {
            // No thread (it could not be started, or finished): write here.
            return job.write();
        };
        if tx.send(job).is_err() {
            // The thread stopped on an error: report it.
            self.finish()?;
            return Err(Error::Invalid("the output writer stopped".into()));
        }
        Ok(())
    }

    /// Wait until every file given so far is written; the first write error, if any.
    pub(crate) fn finish(&mut self) -> Result<()> {
        self.tx = None;
        match self.handle.take().map(|h| h.join()) {
            None | Some(Ok(Ok(()))) => Ok(()),
            Some(Ok(Err(e))) => Err(e),
            Some(Err(_)) => Err(Error::Invalid("the output writer panicked".into())),
        }
    }
}

impl Drop for FieldWriter {
    /// Waits for the files given so far (a run that fails still keeps its outputs).
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_all_written_in_order_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = FieldWriter::new();
        for i in 0..5 {
            let data = Arc::new(vec![i as f64; 6]);
            w.npy(dir.path().join(format!("f{i}.npy")), vec![2, 3], data)
                .unwrap();
        }
        w.finish().unwrap();
        for i in 0..5 {
            let (shape, data) =
                crate::output::read_npy(&dir.path().join(format!("f{i}.npy"))).unwrap();
            assert_eq!(shape, vec![2, 3]);
            assert_eq!(data, vec![i as f64; 6]);
        }
    }

    #[test]
    fn a_failed_write_is_reported_not_lost() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = FieldWriter::new();
        let bad = dir.path().join("missing").join("f.npy");
        let data = Arc::new(vec![1.0; 4]);
        // The error surfaces at a later call or at the end, never silently.
        let mut failed = w.npy(bad, vec![4], data.clone()).is_err();
        for i in 0..3 {
            failed |= w
                .npy(dir.path().join(format!("g{i}.npy")), vec![4], data.clone())
                .is_err();
        }
        failed |= w.finish().is_err();
        assert!(failed);
    }
}
