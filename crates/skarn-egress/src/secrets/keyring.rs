//! The `keyring` source, through the system's own tool: `secret-tool`
//! (Secret Service over D-Bus) on Linux and BSD, `security` (Keychain) on
//! macOS. No keyring crate is linked: the Secret Service needs a D-Bus
//! session, which `skarn run` does not otherwise need, and the tools give
//! the same answer with the user's own session and prompts.

use zeroize::Zeroizing;

/// The program and arguments that print the entry.
fn lookup_argv(service: &str, user: &str) -> Option<Vec<String>> {
    let s = |x: &str| x.to_string();
    if cfg!(target_os = "macos") {
        Some(vec![
            s("security"),
            s("find-generic-password"),
            s("-s"),
            s(service),
            s("-a"),
            s(user),
            s("-w"),
        ])
    } else if cfg!(unix) {
        Some(vec![
            s("secret-tool"),
            s("lookup"),
            s("service"),
            s(service),
            s("user"),
            s(user),
        ])
    } else {
        None
    }
}

/// Read the entry `service`/`user`.
pub(super) fn read(service: &str, user: &str) -> Result<Zeroizing<String>, String> {
    let argv = lookup_argv(service, user).ok_or_else(|| {
        "the keyring source is not available on this system: use command = [...]".to_string()
    })?;
    super::command::run_command(&argv).map_err(|e| {
        format!(
            "keyring entry service={service:?} user={user:?} through `{}`: {e} (the Secret \
             Service needs a D-Bus session; without one use file or command)",
            argv[0]
        )
    })
}
