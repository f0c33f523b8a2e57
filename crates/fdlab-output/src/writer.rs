//! Files written on a thread of their own, so that the steps go on while a large field
//! reaches the disk or a frame is drawn: on a GPU the next steps run meanwhile, and a run with
//! frequent outputs is limited by its steps, not by its writes.
//!
//! A [`Worker`] runs jobs in the order they were given ([`Worker::pool`]: on several threads,
//! for jobs that write files of their own, such as frames). Its queue is bounded (the run blocks
//! beyond it, so memory stays bounded), and nothing is lost: [`Worker::finish`] (or dropping
//! the worker) waits for every job. A failed job stops the worker; the next call returns its
//! error.

use crate::error::{Error, Result};
use crate::{write_npy_as, write_pvd, write_vti, Dtype};
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// One job: writes something, or says why it could not.
pub type Job = Box<dyn FnOnce() -> Result<()> + Send>;

/// Threads that run jobs, with at most `depth` waiting.
pub struct Worker {
    tx: Option<SyncSender<Job>>,
    handles: Vec<JoinHandle<Result<()>>>,
}

impl Worker {
    /// A worker with its thread (named `name`) started, running jobs in order; `depth` jobs
    /// may wait while one runs.
    pub fn new(name: &str, depth: usize) -> Worker {
        Worker::pool(name, 1, depth)
    }

    /// A worker of `threads` threads (at least one), each taking the next job as it is free:
    /// jobs run in any order. For jobs that are independent, e.g. frames, each its own file,
    /// whose drawing would otherwise make a fast GPU run wait for one core.
    pub fn pool(name: &str, threads: usize, depth: usize) -> Worker {
        let (tx, rx) = sync_channel::<Job>(depth);
        let rx = Arc::new(Mutex::new(rx));
        let handles: Vec<_> = (0..threads.max(1))
            .filter_map(|i| {
                let rx = rx.clone();
                std::thread::Builder::new()
                    .name(format!("{name}-{i}"))
                    .spawn(move || loop {
                        // The lock is held only to take a job, not while it runs.
                        let job = rx
                            .lock()
                            .map_err(|_| Error::Invalid("a worker panicked".into()))?
                            .recv();
                        match job {
                            Ok(job) => job()?,
                            Err(_) => return Ok(()),
                        }
                    })
                    .ok()
            })
            .collect();
        Worker {
            tx: (!handles.is_empty()).then_some(tx),
            handles,
        }
    }

    /// Queue `job` (run it here when there is no thread).
    pub fn submit(&mut self, job: Job) -> Result<()> {
        let Some(tx) = &self.tx else {
            // No thread (it could not be started, or finished): run it here.
            return job();
        };
        if tx.send(job).is_err() {
            // The thread stopped on an error: report it.
            self.finish()?;
            return Err(Error::Invalid("the output writer stopped".into()));
        }
        Ok(())
    }

    /// Wait until every job given so far has run; the first error, if any.
    pub fn finish(&mut self) -> Result<()> {
        self.tx = None;
        let mut first = Ok(());
        for h in self.handles.drain(..) {
            let r = match h.join() {
                Ok(r) => r,
                Err(_) => Err(Error::Invalid("the output writer panicked".into())),
            };
            if first.is_ok() {
                first = r;
            }
        }
        first
    }
}

impl Drop for Worker {
    /// Waits for the jobs given so far (a run that fails still keeps its outputs).
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// The background writer of a run's field files (`.npy`, `.vti`, the `.pvd` collection).
/// At most one field waits while another is written: fields can be large.
pub struct FieldWriter {
    worker: Worker,
}

impl FieldWriter {
    /// A writer with its thread started.
    pub fn new() -> FieldWriter {
        FieldWriter {
            worker: Worker::new("fdlab-writer", 1),
        }
    }

    /// Write `data` as a `.npy` of `shape` (slowest axis first) and `dtype` at `path`.
    pub fn npy(
        &mut self,
        path: PathBuf,
        shape: Vec<usize>,
        data: Arc<Vec<f64>>,
        dtype: Dtype,
    ) -> Result<()> {
        self.worker
            .submit(Box::new(move || write_npy_as(&path, &shape, &data, dtype)))
    }

    /// Write `data` as a `.vti` of `n` points `spacing` apart, array `name`, at `path`.
    pub fn vti(
        &mut self,
        path: PathBuf,
        (n, spacing): ([usize; 3], [f64; 3]),
        name: String,
        data: Arc<Vec<f64>>,
        dtype: Dtype,
    ) -> Result<()> {
        self.worker.submit(Box::new(move || {
            write_vti(&path, n, spacing, &name, &data, dtype)
        }))
    }

    /// Rewrite the collection at `path` listing `files`; queued after the files it lists,
    /// so it never names one that is not complete.
    pub fn pvd(&mut self, path: PathBuf, files: Vec<(f64, String)>) -> Result<()> {
        self.worker
            .submit(Box::new(move || write_pvd(&path, &files)))
    }

    /// Wait until every file given so far is written; the first write error, if any.
    pub fn finish(&mut self) -> Result<()> {
        self.worker.finish()
    }
}

impl Default for FieldWriter {
    fn default() -> FieldWriter {
        FieldWriter::new()
    }
}
