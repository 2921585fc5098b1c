//! Leases of the file guard's allowed writes (ADR 0244, attack atk24j
//! F7): the guard's answer holds only if no sandboxed run changes the
//! path between the answer and the tool's write, and a run may *start* in
//! between (a parallel subagent; the user taking time to approve the
//! edit). So each allowed write leaves a lease in skarn's state directory
//! ([`skarn_sandbox::protect::edit_lease`]) naming every path the write
//! may go through; every run prepared while it is pending holds those
//! paths as they are. Claude Code's PostToolUse hook drops the lease once
//! the tool has written; otherwise it expires (`[hook] edit_lease`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::file_paths::candidates;
use super::file_runs::trail;

/// The key of one target of one call: the client's call id (when it
/// gives one: two calls writing one file each hold it), the directory the
/// path is relative to, and the path as written.
fn key(call: Option<&Value>, cwd: &Path, path: &str) -> String {
    let id = call.and_then(Value::as_str).unwrap_or("");
    format!("{id}\0{}\0{path}", cwd.display())
}

/// Every path the write of `path` may go through: each absolute form,
/// every step of following it one link at a time and where it ends, and
/// the directory holding each link passed (a link is kept by keeping its
/// directory read-only).
fn held(path: &str, cwd: &Path, home: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let Ok(forms) = candidates(path, cwd, Some(home)) else {
        return out;
    };
    for c in forms {
        let t = trail(&c);
        let dirs = t
            .links
            .iter()
            .filter_map(|l| l.parent().map(Path::to_path_buf));
        for p in t.steps.into_iter().chain(t.end).chain(dirs) {
            let p = skarn_sandbox::policy::config::normalize(&p);
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// Record the leases of an allowed call writing `paths`; `Err` with why
/// when it cannot (the guard then refuses the write: a write no run is
/// kept from swapping is not allowed).
pub fn record(
    paths: &[String],
    cwd: &Path,
    home: &Path,
    call: Option<&Value>,
    ttl: std::time::Duration,
) -> Result<(), String> {
    for path in paths {
        skarn_sandbox::protect::edit_lease::record(
            home,
            &key(call, cwd, path),
            &held(path, cwd, home),
            ttl,
        )
        .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Drop the leases of a call that has written (Claude Code's PostToolUse:
/// the same tool input, call id and cwd as its PreToolUse).
pub fn release(tool_input: &Value, cwd: &Path, home: &Path, call: Option<&Value>) {
    if let Ok(paths) = super::file_targets::targets(tool_input) {
        release_paths(&paths, cwd, home, call);
    }
}

/// Drop the leases of `paths` (a call refused after they were recorded).
pub fn release_paths(paths: &[String], cwd: &Path, home: &Path, call: Option<&Value>) {
    for path in paths {
        skarn_sandbox::protect::edit_lease::release(home, &key(call, cwd, path));
    }
}
