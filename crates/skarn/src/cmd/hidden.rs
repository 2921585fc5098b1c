//! Hidden re-entry points of the same binary, recognised from argv[1]
//! before anything else happens in `main`:
//! - `__sandbox-helper`: the single-threaded helper that builds the
//!   confinement and execs the target (issue 2);
//! - `__codemode-worker`: the self-confining Code Mode worker (issue 5).

use std::process::ExitCode;

/// Returns `Some(exit code)` when this process is a hidden re-entry.
pub fn dispatch() -> Option<ExitCode> {
    let first = std::env::args_os().nth(1)?;
    match first.to_str()? {
        "__sandbox-helper" => Some(ExitCode::from(125)),
        "__codemode-worker" => Some(ExitCode::from(125)),
        _ => None,
    }
}
