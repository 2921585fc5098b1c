//! Signal forwarding: the helper and init catch the usual terminal and
//! job-control signals and pass them on (to init, to the target's group).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::linux::sys;

static PENDING: AtomicU64 = AtomicU64::new(0);

/// The signals forwarded.
pub(super) const FORWARDED: &[libc::c_int] = &[
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGWINCH,
];

extern "C" fn on_signal(sig: libc::c_int) {
    PENDING.fetch_or(1 << sig, Ordering::SeqCst);
}

/// Catch [`FORWARDED`] (recorded, passed on by [`forward_pending`]).
pub(super) fn install_forwarders() {
    for &s in FORWARDED {
        // SAFETY: zeroed sigaction is valid; the handler is async-signal-safe
        // (one atomic op). No SA_RESTART, so blocking calls return EINTR.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(s, &sa, std::ptr::null_mut());
        }
    }
}

/// Send the signals caught since the last call to `to` (a pid, or a
/// process group when negative).
pub(super) fn forward_pending(to: libc::pid_t) {
    let bits = PENDING.swap(0, Ordering::SeqCst);
    for &s in FORWARDED {
        if bits & (1 << s) != 0 {
            sys::kill(to, s);
        }
    }
}

/// Default dispositions for the forwarded signals (inherited handlers
/// would otherwise survive until exec).
pub(super) fn reset_forwarded() {
    for &s in FORWARDED {
        // SAFETY: resetting a disposition to default.
        unsafe { libc::signal(s, libc::SIG_DFL) };
    }
}
