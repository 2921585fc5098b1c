//! Hidden re-entry points of the same binary, recognised from argv[1]
//! before anything else happens in `main`:
//! - `__sandbox-helper`: the single-threaded helper that builds the
//!   confinement and execs the target (see `sandbox_helper`);
//! - `__codemode-worker`: the self-confining Code Mode worker (see `worker`);
//! - `__source-helper`: a secret's `command` source run with every place a
//!   sandboxed run may write hidden (ADR 0283, see `source_helper`);
//! - `__hook-confined`: an agent's own hook run inside `skarn run` (see
//!   `hook_confined`, ADR 0255).

use std::process::ExitCode;

use super::{sandbox_helper, worker};

/// Returns `Some(exit code)` when this process is a hidden re-entry.
pub fn dispatch() -> Option<ExitCode> {
    let first = std::env::args_os().nth(1)?;
    match first.to_str()? {
        "__sandbox-helper" => Some(sandbox_helper::main()),
        "__codemode-worker" => Some(worker::main()),
        "__source-helper" => Some(source_helper()),
        super::hook::confine_hooks::ENTRY => Some(super::hook_confined::main()),
        _ => None,
    }
}

/// `__source-helper`: entered before any thread exists.
#[cfg(target_os = "linux")]
fn source_helper() -> ExitCode {
    let code = skarn_sandbox::secrets::source_helper::helper_main();
    ExitCode::from(code.clamp(0, 255) as u8)
}

/// No source helper off Linux (sources are started directly there).
#[cfg(not(target_os = "linux"))]
fn source_helper() -> ExitCode {
    ExitCode::from(crate::cli::EXIT_USAGE)
}
