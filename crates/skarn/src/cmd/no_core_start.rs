//! Every subcommand that may hold a secret's value leaves no core dump
//! (atk27l F12, atk27m F2): `skarn exec --config` starts a gateway's
//! servers with their `{ secret = ... }` variables as `skarn serve` does,
//! and a future entry point may do the same. Decided once in `main`,
//! before any subcommand runs, from the user's secrets configuration: one
//! that names secrets, or one that cannot be read (what it names is then
//! unknown), makes this process undumpable. The subcommands that read it
//! still refuse a broken file with its own error.

use std::path::PathBuf;

/// Whether this process may come to hold a configured secret's value.
fn may_hold_values() -> bool {
    let Some(home) = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
    else {
        return false;
    };
    match super::run_secrets::user_config(Some(&home)) {
        Ok(c) => !c.secrets.is_empty(),
        Err(_) => true,
    }
}

/// Make this process undumpable when it may hold values; an error when
/// that fails (nothing runs without it then).
pub fn forbid_when_secrets() -> Result<(), String> {
    if !may_hold_values() {
        return Ok(());
    }
    skarn_sandbox::secrets::no_core::forbid_core_dumps()
        .map_err(|e| format!("cannot turn off core dumps: {e}"))
}
