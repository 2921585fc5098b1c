//! Hidden entry `sandbox_helper` (skeleton; built by its issue).

use std::process::ExitCode;

/// Entered from `main` before any thread exists.
pub fn main() -> ExitCode {
    eprintln!("skarn: internal entry point not built yet");
    ExitCode::from(125)
}
