//! The `skarn` binary: argument parsing and wiring only. Behaviour lives in
//! the library crates (`skarn-sandbox`, `skarn-codemode`, `skarn-gateway`,
//! `skarn-compress`).

mod cli;
mod cmd;

use std::process::ExitCode;

fn main() -> ExitCode {
    // Hidden re-entry points (the sandbox helper and the Code Mode worker)
    // are dispatched first, before any thread, runtime or logger exists.
    if let Some(code) = cmd::hidden::dispatch() {
        return code;
    }
    // Sandboxed downstream servers re-enter this binary as the helper
    // (through /proc/self/exe: the very image that is running, even if the
    // file on disk was replaced since).
    skarn_gateway::sandbox_spawn::set_helper("/proc/self/exe".into());
    // Any subcommand may hold a configured secret's value (`exec
    // --config` starts a gateway's servers): no core dump (atk27m F2).
    #[cfg(target_os = "linux")]
    if let Err(e) = cmd::no_core_start::forbid_when_secrets() {
        eprintln!("skarn: error: {e}");
        return ExitCode::from(2);
    }
    cli::main()
}
