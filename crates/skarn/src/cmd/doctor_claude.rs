//! What keeps Claude Code from sending a call to skarn's hook, said by
//! `skarn doctor` (and `init`'s note): an install whose matcher names
//! tools instead of `*` (attack atk24s F3: `Monitor`, `REPL`, `Workflow`,
//! `EnterWorktree` and any later tool never reach it), and a worktree
//! session that reads committed settings without the hook (H1: `claude
//! --worktree` checks out HEAD, so a project-level install not yet
//! committed is missing there).

use std::path::{Path, PathBuf};

#[cfg(target_os = "linux")]
use serde_json::Value;
#[cfg(target_os = "linux")]
use skarn_sandbox::protect::terminal_filter::one_line;

/// skarn's own PreToolUse entries of a Claude Code settings text: the
/// matcher of each (`None`: not JSON or none installed).
#[cfg(target_os = "linux")]
fn matchers(text: &str) -> Option<Vec<String>> {
    let v: Value = serde_json::from_str(text).ok()?;
    let groups = v.pointer("/hooks/PreToolUse")?.as_array()?;
    let out: Vec<String> = groups
        .iter()
        .filter(|g| {
            g.get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|h| h.get("command").and_then(Value::as_str))
                .any(|c| crate::cmd::hook::is_installed_hook(c, "claude-code"))
        })
        .map(|g| {
            g.get("matcher")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        })
        .collect();
    (!out.is_empty()).then_some(out)
}

/// Whether the settings file `f` holds skarn's PreToolUse hook.
#[cfg(target_os = "linux")]
fn has_hook(f: &Path) -> bool {
    skarn_sandbox::policy::config::read_text(f)
        .ok()
        .flatten()
        .and_then(|t| matchers(&t))
        .is_some()
}

/// The warnings for the project `cwd` and the user's settings (`user`:
/// Claude Code's configuration directory).
#[cfg(target_os = "linux")]
pub fn lines(cwd: &Path, user: Option<&Path>) -> Vec<String> {
    let mut out = Vec::new();
    let project = cwd.join(".claude/settings.json");
    let mut files = vec![project.clone(), cwd.join(".claude/settings.local.json")];
    files.extend(user.map(|u| u.join("settings.json")));
    for f in &files {
        let Some(ms) = skarn_sandbox::policy::config::read_text(f)
            .ok()
            .flatten()
            .and_then(|t| matchers(&t))
        else {
            continue;
        };
        if ms.iter().any(|m| m != "*" && !m.is_empty()) {
            out.push(format!(
                "{}: skarn's hook is installed for some tools only (matcher {}): Claude Code \
                 sends it no other tool, and Monitor, REPL, Workflow or a later tool runs code \
                 unconfined: run `skarn init --client claude-code` again (matcher \"*\")",
                one_line(&f.display().to_string()),
                one_line(&ms.join(", "))
            ));
        }
    }
    if has_hook(&project) && !user.is_some_and(|u| has_hook(&u.join("settings.json"))) {
        let trees = std::fs::read_dir(cwd.join(".claude/worktrees"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|w| w.is_dir() && !has_hook(&w.join(".claude/settings.json")));
        for w in trees.take(5) {
            out.push(format!(
                "{}: this Claude Code worktree's committed .claude/settings.json has no skarn \
                 hook, so a session there runs commands unconfined: commit the project's \
                 .claude/settings.json (then update the worktree) or install with `skarn init \
                 --client claude-code --user`",
                one_line(&w.display().to_string())
            ));
        }
    }
    out
}

/// [`lines`] for the project `cwd` and the user's Claude Code directory.
#[cfg(target_os = "linux")]
pub fn here(cwd: &Path) -> Vec<String> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    let user = crate::cmd::hook::confine_hooks::claude_dir(home.as_deref());
    lines(cwd, user.as_deref())
}

/// `init`'s note after a project-level install in a git repository:
/// `claude --worktree` sessions read the committed settings.
pub fn worktree_note(cwd: &Path) -> Option<String> {
    let mut d: Option<PathBuf> = Some(cwd.to_path_buf());
    while let Some(x) = d {
        if std::fs::symlink_metadata(x.join(".git")).is_ok() {
            return Some(
                "skarn: note: a `claude --worktree` session (and Claude Code's EnterWorktree) \
                 works in a checkout of the committed HEAD and reads .claude/settings.json as \
                 committed, not this working copy: until you commit it, such sessions run with \
                 no skarn hook (commands unconfined). Commit .claude/settings.json, or install \
                 for every project with `skarn init --client claude-code --user`; `skarn \
                 doctor` names worktrees without the hook"
                    .into(),
            );
        }
        d = x.parent().map(Path::to_path_buf);
    }
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_narrow_matcher_is_named() {
        let t = skarn_test_support::TempDir::new("doctor-claude");
        let cmd = crate::cmd::hook::installed_command("/usr/bin/skarn", "claude-code");
        let settings = |m: &str| {
            serde_json::json!({"hooks": {"PreToolUse": [
                {"matcher": m, "hooks": [{"type": "command", "command": cmd}]}]}})
            .to_string()
        };
        let p = t.dir("p");
        t.file("p/.claude/settings.json", settings("Bash|Read"));
        let l = lines(&p, None);
        assert!(l.iter().any(|l| l.contains("some tools only")), "{l:?}");
        t.file("p/.claude/settings.json", settings("*"));
        t.dir("p/.claude/worktrees/w1");
        let l = lines(&p, None);
        assert_eq!(l.len(), 1, "{l:?}");
        assert!(l[0].contains("worktree"), "{l:?}");
        t.file(
            "p/.claude/worktrees/w1/.claude/settings.json",
            settings("*"),
        );
        assert!(lines(&p, None).is_empty());
    }
}
