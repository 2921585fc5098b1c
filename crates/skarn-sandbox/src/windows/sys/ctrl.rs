//! Ctrl-C, Ctrl-Break and console close: the job is terminated, and the
//! main thread (which then sees the command end) restores the ACLs. For a
//! console close the handler waits a little for that restore, since the
//! system ends the process when the handler returns; if it does not finish
//! the journal lets the next run repair it.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use windows_sys::Win32::Foundation::HANDLE;
use windows_sys::Win32::System::Console::{CTRL_BREAK_EVENT, CTRL_C_EVENT, SetConsoleCtrlHandler};
use windows_sys::Win32::System::JobObjects::TerminateJobObject;
use windows_sys::core::BOOL;

/// Exit status after Ctrl-C (as on Linux: 128 + SIGINT).
pub(crate) const INTERRUPTED: u32 = 130;

static JOB: AtomicUsize = AtomicUsize::new(0);
static HIT: AtomicBool = AtomicBool::new(false);
static RESTORED: AtomicBool = AtomicBool::new(false);

unsafe extern "system" fn handler(kind: u32) -> BOOL {
    HIT.store(true, Ordering::SeqCst);
    let job = JOB.load(Ordering::SeqCst) as HANDLE;
    if !job.is_null() {
        // SAFETY: the job handle stays open while the handler is installed
        // (it is removed before the handle is closed).
        unsafe { TerminateJobObject(job, INTERRUPTED) };
    }
    if kind != CTRL_C_EVENT && kind != CTRL_BREAK_EVENT {
        // Close, log-off, shut-down: give the main thread time to restore.
        for _ in 0..80 {
            if RESTORED.load(Ordering::SeqCst) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
    1
}

/// Installed while a job runs.
pub struct Guard;

impl Guard {
    /// Route console control events to the job.
    pub fn install(job: HANDLE) -> Guard {
        JOB.store(job as usize, Ordering::SeqCst);
        // SAFETY: a valid handler function for the process's lifetime.
        unsafe { SetConsoleCtrlHandler(Some(handler), 1) };
        Guard
    }

    /// Whether a control event arrived.
    pub fn interrupted(&self) -> bool {
        HIT.load(Ordering::SeqCst)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        // SAFETY: removes the handler installed above.
        unsafe { SetConsoleCtrlHandler(Some(handler), 0) };
        JOB.store(0, Ordering::SeqCst);
    }
}

/// Tell a waiting close handler that the ACLs are restored.
pub(crate) fn restored() {
    RESTORED.store(true, Ordering::SeqCst);
}
