//! The home the hook reads the user's configuration from (attack atk24u
//! F3): a hook entry's or the settings' `env` may set `HOME` to a path
//! that resolves into the workspace (`/proc/self/cwd/fh`, absolute, yet
//! the repository's `fh/` in the hook's directory), and skarn would take
//! a repository file for the user's own `~/.config/skarn/config.toml`
//! (`guard_files = false`, `trusted_hooks`) and guard the wrong `~`. Such
//! a `HOME` (through `/proc` or `/dev/fd`, or resolving inside the
//! workspace) makes the hook refuse every call (fail closed).

use std::path::{Path, PathBuf};

/// Why the hook refuses with `home` as `$HOME` for the workspaces
/// `spaces` (the hook's `--workspace`, the input's `cwd`, its own
/// directory); `None`: a home that is not the workspace's.
pub fn refusal(home: &Path, spaces: &[PathBuf]) -> Option<String> {
    let raw = home.to_string_lossy();
    let through = ["/proc/", "/dev/fd/"].iter().any(|p| raw.starts_with(p));
    let real = std::fs::canonicalize(home).ok();
    let inside = real.as_ref().is_some_and(|h| {
        spaces
            .iter()
            .filter_map(|s| std::fs::canonicalize(s).ok())
            .any(|w| w.parent().is_some() && h != &w && h.starts_with(&w))
    });
    (through || inside).then(|| {
        format!(
            "skarn hook: HOME is {}{}: skarn would read a file of the workspace as the user's own \
             configuration (~/.config/skarn/config.toml) and guard the wrong home, so every call \
             is refused. Remove the `env` that sets HOME from the agent's settings or hook entry.",
            skarn_sandbox::protect::terminal_filter::one_line(&raw),
            match &real {
                Some(r) if inside => format!(", which lies in the workspace ({})", r.display()),
                _ => ", a path through /proc or /dev/fd".to_string(),
            }
        )
    })
}
