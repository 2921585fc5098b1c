//! The agent's file tools through `skarn hook claude-code`, for the tests
//! of the file guard (what the hook answers; the tool's write itself is
//! the test's to make).

use std::io::Write;
use std::path::Path;

use serde_json::json;

use crate::common::{code, exe};

/// What the file-guard tests remove from the hook's environment.
pub const FILE_GUARD: &[&str] = &["XDG_CONFIG_HOME", "XDG_STATE_HOME"];

/// `skarn hook claude-code` given `input`, started in `cwd` with HOME =
/// `home`, `CLAUDE_PROJECT_DIR` = `project` (removed when `None`) and the
/// variables `unset` removed; its output.
pub fn claude_hook(
    cwd: &Path,
    home: &Path,
    project: Option<&Path>,
    unset: &[&str],
    input: &serde_json::Value,
) -> std::process::Output {
    let mut c = std::process::Command::new(exe());
    c.args(["hook", "claude-code"])
        .current_dir(cwd)
        .env("HOME", home);
    match project {
        Some(p) => c.env("CLAUDE_PROJECT_DIR", p),
        None => c.env_remove("CLAUDE_PROJECT_DIR"),
    };
    for k in unset {
        c.env_remove(k);
    }
    let mut c = c
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let _ = c
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes());
    c.wait_with_output().unwrap()
}

/// Claude Code's `Write` of `body` to `path` from the project `ws`, with
/// HOME = `home`: `Some(reason)` when the hook refuses it, `None` when it
/// has no objection (the agent's own rules apply).
pub fn claude_write(path: &Path, ws: &Path, home: &Path, body: &str) -> Option<String> {
    let i = json!({"session_id": "s", "transcript_path": home.join("t.jsonl"), "cwd": ws,
                   "permission_mode": "default", "hook_event_name": "PreToolUse",
                   "tool_name": "Write", "tool_input": {"file_path": path, "content": body}});
    let o = claude_hook(ws, home, None, FILE_GUARD, &i);
    assert_eq!(code(&o), 0, "{path:?}: {o:?}");
    if o.stdout.is_empty() {
        return None;
    }
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    (v["hookSpecificOutput"]["permissionDecision"] == "deny").then(|| v.to_string())
}

/// Run `script` with `sh` in `dir` (`$SK` the skarn under test, `$B` the
/// directory, `HOME=$B/home`), as uid 65534 when `user`.
pub fn sh_as(dir: &std::path::Path, script: &str, user: bool) -> std::process::Output {
    std::fs::create_dir_all(dir.join("home")).unwrap();
    let f = dir.join("t.sh");
    std::fs::write(&f, script).unwrap();
    let mut c = std::process::Command::new("sh");
    c.arg(&f)
        .current_dir(dir)
        .env("SK", crate::common::exe())
        .env("B", dir)
        .env("HOME", dir.join("home"))
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("CLAUDE_CONFIG_DIR");
    let mut c = if user {
        crate::support_secret_sources::as_user(c, dir)
    } else {
        c
    };
    c.current_dir(dir).output().unwrap()
}

/// `script` run by [`sh_as`] in a new temporary directory named after
/// `tag`, as uid 65534 when `user`: the directory (removed when the
/// caller drops it), the script's standard output, and a context for
/// assertion messages. The attempt's marker `$B/PWNED` must not exist:
/// host code did not run.
pub fn run_attempt(
    tag: &str,
    script: &str,
    user: bool,
) -> (skarn_test_support::TempDir, String, String) {
    let t = skarn_test_support::TempDir::new(tag);
    let o = sh_as(t.path(), script, user);
    let so = String::from_utf8_lossy(&o.stdout).into_owned();
    let ctx = format!(
        "user={user}\n{so}\nstderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!t.path().join("PWNED").exists(), "host code ran: {ctx}");
    (t, so, ctx)
}

/// [`run_attempt`] for scripts that plant several markers (`$B/PWNED*`,
/// none may exist) and run `init` with its errors in `$B/init.err` (shown
/// in the context).
pub fn run_attempt_markers(tag: &str, script: &str, user: bool) -> (String, String) {
    let t = skarn_test_support::TempDir::new(tag);
    let o = sh_as(t.path(), script, user);
    let so = String::from_utf8_lossy(&o.stdout).into_owned();
    let ctx = format!(
        "user={user}\n{so}\nstderr: {}\ninit: {}",
        String::from_utf8_lossy(&o.stderr),
        std::fs::read_to_string(t.path().join("init.err")).unwrap_or_default()
    );
    let pwned: Vec<String> = std::fs::read_dir(t.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("PWNED"))
        .collect();
    assert!(pwned.is_empty(), "host code ran: {pwned:?} {ctx}");
    (so, ctx)
}
