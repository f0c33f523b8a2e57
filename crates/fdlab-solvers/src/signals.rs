//! Stopping a run cleanly: Ctrl-C (SIGINT), SIGTERM (what `kill`, Slurm and PBS send before a
//! job's time ends) and SIGUSR1 (which batch systems can be asked to send ahead of time, e.g.
//! Slurm's `--signal=USR1@120`) all ask the run to write a checkpoint at the next step it
//! completes and to exit. A second SIGINT or SIGTERM while that is under way ends the process at
//! once (exit status 1), for a user who does not want to wait.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, OnceLock};

/// Set by a signal or [`request`]; read by the step loop.
fn flag() -> &'static Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

/// The signal that asked for the stop; [`REQUESTED`] for [`request`], 0 for none.
static WHICH: AtomicI32 = AtomicI32::new(0);

/// What [`which`] returns after a stop asked for by [`request`] (no signal).
pub const REQUESTED: i32 = -1;

/// The signals that stop a run with a checkpoint.
pub const STOP_SIGNALS: [i32; 3] = [
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGUSR1,
];

/// Install the handlers (once per process). When registering fails (another library owns the
/// signals), runs keep the default behaviour of those signals, and say so on stderr.
pub(crate) fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for sig in STOP_SIGNALS {
            let again = sig != signal_hook::consts::SIGUSR1;
            let first = if again {
                // Registered first, so it sees the flag as the previous signal left it.
                signal_hook::flag::register_conditional_shutdown(sig, 1, flag().clone()).map(|_| ())
            } else {
                Ok(())
            };
            // SAFETY: the action only stores into atomics, which is async-signal-safe.
            let set = first.and_then(|()| unsafe {
                signal_hook::low_level::register(sig, move || {
                    WHICH.store(sig, Ordering::SeqCst);
                    flag().store(true, Ordering::SeqCst);
                })
            });
            if let Err(e) = set {
                eprintln!("note: signal {sig} keeps its default action (no checkpoint on it): {e}");
            }
        }
    });
}

/// Whether a stop was asked for since the last [`reset`].
pub(crate) fn stop_requested() -> bool {
    flag().load(Ordering::SeqCst)
}

/// The signal number that asked for the stop, [`REQUESTED`], or 0.
pub(crate) fn which() -> i32 {
    WHICH.load(Ordering::SeqCst)
}

/// Forget an earlier stop (a new run starts).
pub(crate) fn reset() {
    WHICH.store(0, Ordering::SeqCst);
    flag().store(false, Ordering::SeqCst);
}

/// Ask a running run to write a checkpoint and stop, as a signal does.
pub(crate) fn request() {
    WHICH.store(REQUESTED, Ordering::SeqCst);
    flag().store(true, Ordering::SeqCst);
}

/// The conventional name of a stop signal, e.g. `"SIGTERM"`.
pub fn name(sig: i32) -> String {
    match sig {
        signal_hook::consts::SIGINT => "SIGINT".into(),
        signal_hook::consts::SIGTERM => "SIGTERM".into(),
        signal_hook::consts::SIGUSR1 => "SIGUSR1".into(),
        REQUESTED => "a stop request".into(),
        s => format!("signal {s}"),
    }
}
