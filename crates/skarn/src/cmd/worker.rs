//! Hidden entry `__codemode-worker`: the self-confining Code Mode worker.
//! All of it lives in `skarn_worker::worker`; see that crate's docs.

use std::process::ExitCode;

/// Entered from `main` before any thread exists.
pub fn main() -> ExitCode {
    skarn_worker::worker::main(std::env::args_os().skip(2))
}
