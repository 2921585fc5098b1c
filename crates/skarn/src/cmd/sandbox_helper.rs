//! Hidden entry `__sandbox-helper`: the fresh single-threaded helper that
//! builds the confinement and execs the target (logic in
//! `skarn_sandbox::linux::helper`). `__sandbox-helper probe KIND ARG` runs one
//! escape probe instead (used inside the sandbox by `skarn doctor
//! --self-test` and by the tests).

use std::process::ExitCode;

/// Entered from `main` before any thread exists.
#[cfg(target_os = "linux")]
pub fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(2).collect();
    let code = if args.first().map(String::as_str) == Some("probe") {
        skarn_sandbox::linux::probe::run_probe(&args[1..])
    } else {
        skarn_sandbox::linux::helper::helper_main()
    };
    ExitCode::from(code.clamp(0, 255) as u8)
}

/// No helper exists without a sandbox backend for this OS.
#[cfg(not(target_os = "linux"))]
pub fn main() -> ExitCode {
    eprintln!(
        "skarn: error: __sandbox-helper: {}",
        super::run_backend::NO_BACKEND
    );
    ExitCode::from(crate::cli::EXIT_USAGE)
}
