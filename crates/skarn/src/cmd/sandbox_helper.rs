//! Hidden entry `__sandbox-helper`: the fresh single-threaded helper that
//! builds the confinement and execs the target (logic in
//! `skarn_sandbox::helper`).

use std::process::ExitCode;

/// Entered from `main` before any thread exists.
pub fn main() -> ExitCode {
    let code = skarn_sandbox::helper::helper_main();
    ExitCode::from(code.clamp(0, 255) as u8)
}
