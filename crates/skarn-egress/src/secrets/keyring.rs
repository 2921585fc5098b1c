//! The `keyring` source, through the system's own tool: `secret-tool`
//! (Secret Service over D-Bus) on Linux and BSD, `security` (Keychain) on
//! macOS. No keyring crate is linked: the Secret Service needs a D-Bus
//! session, which `skarn run` does not otherwise need, and the tools give
//! the same answer with the user's own session and prompts.

use zeroize::Zeroizing;

/// Where the system's tool is looked for, never the caller's `PATH`: a
/// directory on it that a sandboxed run may make or write (a project's
/// `tools/bin`) would hold a `secret-tool` the host runs when the secret
/// is resolved (atk27k F13).
const SYSTEM_DIRS: &[&str] = &[
    "/usr/bin",
    "/bin",
    "/usr/local/bin",
    "/run/current-system/sw/bin",
];

/// The system's `tool`, by absolute path.
fn system_tool(tool: &str) -> Result<String, String> {
    SYSTEM_DIRS
        .iter()
        .map(|d| std::path::Path::new(d).join(tool))
        .find(|p| p.is_file())
        .map(|p| p.to_string_lossy().into_owned())
        .ok_or_else(|| {
            format!(
                "{tool} is not in {}: install it there, or use command = [\"/absolute/path\", ...]",
                SYSTEM_DIRS.join(", ")
            )
        })
}

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
pub(super) fn read(
    service: &str,
    user: &str,
    view: &super::source_view::SourceView,
) -> Result<Zeroizing<String>, String> {
    let mut argv = lookup_argv(service, user).ok_or_else(|| {
        "the keyring source is not available on this system: use command = [...]".to_string()
    })?;
    argv[0] = system_tool(&argv[0])?;
    super::command::run_command(&argv, view).map_err(|e| {
        format!(
            "keyring entry service={service:?} user={user:?} through `{}`: {e} (the Secret \
             Service needs a D-Bus session; without one use file or command)",
            argv[0]
        )
    })
}
