//! The worker confines itself on macOS, before it reads any job:
//!
//! 1. every descriptor above 2 is closed (only the pipes remain);
//! 2. rlimits: no file growth, no core dumps, a handful of descriptors;
//! 3. `sandbox_init` with [`WORKER_PROFILE`]: default deny, so no file is
//!    opened (but the time-zone database, for `Date`), no socket connects
//!    or binds, no process is created or executed, no Mach service is
//!    looked up, no signal reaches another process. The profile cannot be
//!    lifted and is inherited by anything the process could still start.
//!
//! What Linux adds and macOS lacks is reported, not hidden: no address
//! space limit (macOS does not enforce `RLIMIT_AS`), no parent-death
//! signal (the worker exits when its stdin closes), no identity switch.

#[cfg(target_os = "macos")]
use std::io;

#[cfg(target_os = "macos")]
use crate::confine::{ConfineError, ConfineOptions, ConfinementReport};

/// Descriptor limit: stdin, stdout, stderr and one spare.
pub const NOFILE_LIMIT: u64 = 4;

/// The worker's Seatbelt profile. Everything not allowed here is denied.
pub const WORKER_PROFILE: &str = "(version 1)
(deny default)
; Date and Intl read the time-zone database.
(allow file-read* (literal \"/private/etc/localtime\") (literal \"/etc/localtime\")
  (subpath \"/private/var/db/timezone\") (subpath \"/var/db/timezone\")
  (subpath \"/usr/share/zoneinfo\"))
; Processor facts for thread and allocator sizing.
(allow sysctl-read (sysctl-name-prefix \"hw.\") (sysctl-name \"kern.osversion\"))
; abort() and raise() on itself.
(allow signal (target self))
";

/// What the report says the profile enforces.
pub const ENFORCED: &str = "seatbelt: deny default (no file but the time-zone database, no \
                            network, no process creation, no Mach services, signals to itself only)";

/// Apply every step. On success the process can only use its pipes.
#[cfg(target_os = "macos")]
pub fn confine(_opts: &ConfineOptions) -> Result<ConfinementReport, ConfineError> {
    close_other_fds();
    for (name, res, val) in [
        ("RLIMIT_FSIZE", libc::RLIMIT_FSIZE, 0),
        ("RLIMIT_CORE", libc::RLIMIT_CORE, 0),
        (
            "RLIMIT_NOFILE",
            libc::RLIMIT_NOFILE,
            NOFILE_LIMIT as libc::rlim_t,
        ),
    ] {
        let lim = libc::rlimit {
            rlim_cur: val,
            rlim_max: val,
        };
        // SAFETY: setrlimit reads the struct we own.
        if unsafe { libc::setrlimit(res, &lim) } != 0 {
            return Err(ConfineError {
                step: name,
                source: io::Error::last_os_error(),
            });
        }
    }
    // With RLIMIT_FSIZE 0 a write to an inherited regular file must fail
    // with EFBIG, not kill us.
    // SAFETY: installing SIG_IGN for SIGXFSZ; no handler code runs.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    apply_profile(WORKER_PROFILE)?;
    Ok(ConfinementReport {
        namespaces: "none (macOS)".into(),
        // SAFETY: getuid cannot fail and touches no memory.
        uid: unsafe { libc::getuid() },
        landlock_abi: 0,
        landlock: ENFORCED.into(),
        seccomp_allowed: 0,
        address_space_limit: 0,
        nofile_limit: NOFILE_LIMIT,
        layers: vec![
            skarn_confine::Enforcement::full(
                skarn_confine::Layer::Descriptors,
                "every descriptor above 2 closed",
            ),
            skarn_confine::Enforcement::full(
                skarn_confine::Layer::Rlimits,
                "file size 0, no core dumps, open files capped",
            ),
            skarn_confine::Enforcement::full(skarn_confine::Layer::Seatbelt, ENFORCED),
        ],
    })
}

#[cfg(target_os = "macos")]
fn close_other_fds() {
    for fd in 3..4096 {
        // SAFETY: nothing above 2 is owned by a live Rust object when the
        // worker starts (we run first thing); EBADF is harmless.
        unsafe { libc::close(fd) };
    }
}

#[cfg(target_os = "macos")]
unsafe extern "C" {
    /// libsandbox (part of libSystem): with flags 0, `profile` is SBPL text.
    fn sandbox_init(
        profile: *const libc::c_char,
        flags: u64,
        errorbuf: *mut *mut libc::c_char,
    ) -> libc::c_int;
    fn sandbox_free_error(errorbuf: *mut libc::c_char);
}

/// Compile and apply `profile` to this process, for good.
#[cfg(target_os = "macos")]
pub fn apply_profile(profile: &str) -> Result<(), ConfineError> {
    let text = std::ffi::CString::new(profile).map_err(|e| ConfineError {
        step: "sandbox_init",
        source: io::Error::new(io::ErrorKind::InvalidInput, e),
    })?;
    let mut err: *mut libc::c_char = std::ptr::null_mut();
    // SAFETY: `text` is a NUL-terminated string alive for the call; `err`
    // is a valid out-pointer that libsandbox sets to an allocated message
    // (freed below with its own function) or leaves null.
    let r = unsafe { sandbox_init(text.as_ptr(), 0, &mut err) };
    if r == 0 {
        return Ok(());
    }
    let msg = if err.is_null() {
        "sandbox_init failed".to_string()
    } else {
        // SAFETY: libsandbox returned a NUL-terminated message it owns
        // until sandbox_free_error.
        let m = unsafe { std::ffi::CStr::from_ptr(err) }
            .to_string_lossy()
            .into_owned();
        // SAFETY: freeing the message libsandbox allocated, once.
        unsafe { sandbox_free_error(err) };
        m
    };
    Err(ConfineError {
        step: "sandbox_init",
        source: io::Error::other(msg),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_profile_denies_by_default_and_allows_nothing_that_reaches_out() {
        assert!(WORKER_PROFILE.starts_with("(version 1)\n(deny default)\n"));
        for op in [
            "file-write",
            "network",
            "process-fork",
            "process-exec",
            "mach-lookup",
            "file-read* (subpath \"/\")",
            "(allow default)",
        ] {
            assert!(!WORKER_PROFILE.contains(op), "{op}");
        }
        // Balanced parentheses (a syntax error would make sandbox_init fail).
        let open = WORKER_PROFILE.matches('(').count();
        assert_eq!(open, WORKER_PROFILE.matches(')').count());
    }
}
