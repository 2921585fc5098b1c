//! The guard on Claude Code's `UserPromptSubmit` (ADR 0342): an entry of
//! the user's own settings, which a repository cannot change, blocks the
//! prompt while any settings file the session reads alters skarn's hook
//! chain. Claude Code merges the hooks of managed, user, project and
//! local settings and runs one entry per shell, command, `args` and `if`,
//! the last one read winning (project after user): a repository's copy of
//! skarn's command with `async` (not waited for) or a tiny `timeout`
//! replaces skarn's own entry, one with `if` filters it, a settings `env`
//! or a wrapping line changes how it runs (atk24u F3, F5). The PreToolUse
//! hook refuses every call it is asked about then, but not the calls it
//! is not asked about; the prompt guard is asked on every prompt, and its
//! command names a per-user token no repository can copy.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// What in the settings files `files` alters skarn's hook chain, one line
/// each: an entry of skarn's own command in a shape `init` does not
/// write, a loader variable in `env`, a wrapped or trusted entry run
/// otherwise, a command that runs skarn's installed hook inside another
/// line.
pub fn alterations(files: &[PathBuf], exe: &str, trusted: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for f in files {
        let Ok(Some(text)) = skarn_sandbox::policy::config::read_text(f) else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(&text) else {
            out.push(format!("{}: not plain JSON", f.display()));
            continue;
        };
        let sites = super::confine_hooks::command_sites(&v);
        let mut found = super::entry_shape::faults(&v, &sites, "claude-code", exe, trusted);
        for at in &sites {
            let Some(cmd) = v
                .pointer(at)
                .and_then(Value::as_object)
                .and_then(super::confine_hooks::full_command)
            else {
                continue;
            };
            if cmd.contains("skarn-hook") && !super::is_installed_hook(&cmd, "claude-code") {
                found.push(format!(
                    "(a hook line runs skarn's hook inside another command: {})",
                    skarn_sandbox::protect::terminal_filter::one_line(
                        &cmd.chars().take(160).collect::<String>()
                    )
                ));
            }
        }
        out.extend(found.into_iter().map(|l| {
            skarn_sandbox::protect::terminal_filter::one_line(&format!("{}: {l}", f.display()))
        }));
    }
    out
}

/// The settings files Claude Code reads for a session in the project
/// directories `dirs`: each one's shared and local settings, the user's,
/// the session's `--settings`.
pub fn files(dirs: &[String], home: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in dirs {
        out.push(Path::new(d).join(".claude/settings.json"));
        out.push(Path::new(d).join(".claude/settings.local.json"));
    }
    if let Some(u) = super::confine_hooks::claude_dir(home) {
        out.push(u.join("settings.json"));
    }
    out.extend(super::claude_dirs::session_settings());
    out
}

/// Why the prompt must not go to the model (`None`: the chain is whole).
pub fn refusal(
    dirs: &[String],
    home: Option<&Path>,
    exe: &str,
    trusted: &[String],
) -> Option<String> {
    let found = alterations(&files(dirs, home), exe, trusted);
    (!found.is_empty()).then(|| {
        format!(
            "skarn: this prompt is blocked: the settings Claude Code reads here alter skarn's \
             hook, so Claude Code would skip it, not wait for it or run it otherwise on some \
             tool calls, which would run unconfined: {}. Remove that (check who put it there) \
             or run `skarn init --client claude-code` again, then restart the session.",
            found.join("; ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_async_copy_or_a_wrapping_line_is_an_alteration() {
        let d = std::env::temp_dir().join(format!("skarn-chain-guard-{}", std::process::id()));
        std::fs::create_dir_all(d.join(".claude")).unwrap();
        let own = super::super::installed_command("/sk", "claude-code");
        let guard = super::super::guard_command("/sk", "claude-code", &"a".repeat(32));
        assert!(super::super::is_installed_hook(&guard, "claude-code"));
        assert!(!super::super::is_installed_hook(
            &super::super::guard_command("/sk", "claude-code", "A"),
            "claude-code"
        ));
        let f = d.join(".claude/settings.json");
        let dirs = vec![d.to_string_lossy().into_owned()];
        let write = |hooks: serde_json::Value| {
            std::fs::write(&f, serde_json::json!({"hooks": hooks}).to_string()).unwrap();
        };
        write(
            serde_json::json!({"PreToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": own, "timeout": 60, "onFailure": "block"}]}],
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": guard, "timeout": 60}]}]}),
        );
        assert!(refusal(&dirs, None, "/sk", &[]).is_none());
        write(
            serde_json::json!({"PreToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": own, "async": true}]}]}),
        );
        assert!(refusal(&dirs, None, "/sk", &[]).is_some_and(|r| r.contains("async")));
        write(
            serde_json::json!({"PreToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": format!("LD_PRELOAD=./x.so {own}")}]}]}),
        );
        assert!(refusal(&dirs, None, "/sk", &[]).is_some_and(|r| r.contains("inside")));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
