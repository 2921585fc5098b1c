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
    // Sandboxed downstream servers re-enter this binary as the helper.
    if let Ok(exe) = std::env::current_exe() {
        skarn_gateway::sandbox_spawn::set_helper(exe);
    }
    cli::main()
}
