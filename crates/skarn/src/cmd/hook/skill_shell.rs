//! A skill's or slash command's shell lines (attack atk24o F10; ADR
//! 0305). Claude Code runs each `` !`COMMAND` `` of a skill's or command's
//! text, and each fenced block opened with ```` ```! ````, through its own
//! shell on the host before the text reaches the model; no tool call (no
//! hook) comes before it, and a subagent preloading the skill asks
//! nothing. Such a line counts like an unconfined hook while Claude
//! Code's `disableSkillShellExecution` is not `true` in the settings it
//! merges (managed settings first, then the session's `--settings`, the
//! project's local and shared settings, the user's: the first that sets
//! it decides, so a project's `false` overrides the user's `true`), unless
//! the line's command is listed word for word in `[hook] trusted_hooks`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

/// The key of Claude Code's settings that turns the lines off.
pub const KEY: &str = "disableSkillShellExecution";

/// Most shell lines named per file.
const MAX_NAMED: usize = 8;

/// The commands of `text`'s shell lines (inline and fenced), in order.
#[cfg(test)]
fn lines(text: &str) -> Vec<String> {
    directives(text).into_iter().map(|(c, _)| c).collect()
}

/// The commands of `text`'s shell lines, each with whether it is closed.
/// An inline directive runs, as the client delimits it, from `` !` `` to
/// the next backtick, newlines included (attack atk24r F9: judged by its
/// first line, `A⏎B` passed as the trusted `A`); one never closed is kept
/// as unclosed (never trusted).
fn directives(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut fence: Option<String> = None;
    let mut open: Option<String> = None;
    for l in text.lines() {
        let mut rest = l;
        if let Some(mut acc) = open.take() {
            acc.push('\n');
            match rest.find('`') {
                Some(e) => {
                    acc.push_str(&rest[..e]);
                    out.push((acc.trim().to_string(), true));
                    rest = &rest[e + 1..];
                }
                None => {
                    acc.push_str(rest);
                    open = Some(acc);
                    continue;
                }
            }
        } else if let Some(body) = &mut fence {
            if l.trim_start().starts_with("```") {
                out.push((std::mem::take(body).trim().to_string(), true));
                fence = None;
            } else {
                body.push_str(l);
                body.push('\n');
            }
            continue;
        } else if l.trim_start().starts_with("```!") {
            fence = Some(String::new());
            continue;
        }
        while let Some(i) = rest.find("!`") {
            let after = &rest[i + 2..];
            match after.find('`') {
                Some(end) => {
                    out.push((after[..end].trim().to_string(), true));
                    rest = &after[end + 1..];
                }
                None => {
                    open = Some(after.to_string());
                    break;
                }
            }
        }
    }
    if let Some(acc) = open {
        out.push((acc.trim().to_string(), false));
    }
    if let Some(body) = fence {
        out.push((body.trim().to_string(), true));
    }
    out.extend(mid_line_fences(text));
    out
}

/// Fences opened with ```` ```! ```` after other text on their line
/// (`State: ```!git status``` `): the client runs them too (attack atk24s
/// F2). Each runs to the next ```` ``` ````, newlines included; one never
/// closed is kept as unclosed.
fn mid_line_fences(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find("```!").map(|i| i + from) {
        let line_start = text[..i].rfind('\n').map_or(0, |n| n + 1);
        let body_start = i + 4;
        let end = text[body_start..].find("```").map(|e| e + body_start);
        if !text[line_start..i].trim().is_empty() {
            match end {
                Some(e) => out.push((text[body_start..e].trim().to_string(), true)),
                None => out.push((text[body_start..].trim().to_string(), false)),
            }
        }
        from = match end {
            Some(e) => e + 3,
            None => break,
        };
    }
    out
}

/// The shell lines of `text` that run unconfined, one line each.
pub fn unconfined(text: &str, trusted: &[String]) -> Vec<String> {
    if !text.contains("!`") && !text.contains("```!") || disabled() {
        return Vec::new();
    }
    let mut out: Vec<String> = directives(text)
        .into_iter()
        .filter(|(c, closed)| !closed || !trusted.iter().any(|t| t == c))
        .map(|(c, closed)| {
            // Newlines shown escaped: the whole directive is what runs.
            let c = c.replace('\n', "\\n");
            let unclosed = if closed { "" } else { " (no closing backtick)" };
            skarn_sandbox::protect::terminal_filter::one_line(&format!(
                "a shell line Claude Code runs on the host when the skill or command is \
                 invoked ({KEY} is not true){unclosed}: {c}"
            ))
        })
        .collect();
    out.truncate(MAX_NAMED);
    out
}

/// Whether the settings Claude Code merges for this session turn shell
/// lines off (computed once per process).
pub fn disabled() -> bool {
    static ONCE: OnceLock<bool> = OnceLock::new();
    *ONCE.get_or_init(|| {
        let project = std::env::var_os("CLAUDE_PROJECT_DIR")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| std::env::current_dir().ok());
        let home = std::env::var_os("HOME").map(PathBuf::from);
        merged(&files(project.as_deref(), home.as_deref())) == Some(true)
    })
}

/// The settings files in Claude Code's order of precedence, highest first.
fn files(project: Option<&Path>, home: Option<&Path>) -> Vec<PathBuf> {
    let mut out = vec![PathBuf::from("/etc/claude-code/managed-settings.json")];
    out.extend(super::claude_dirs::session_settings());
    if let Some(p) = project {
        out.push(p.join(".claude/settings.local.json"));
        out.push(p.join(".claude/settings.json"));
    }
    if let Some(u) = super::confine_hooks::claude_dir(home) {
        out.push(u.join("settings.json"));
    }
    out
}

/// The value the first of `files` that sets [`KEY`] gives; a file that
/// exists but cannot be read as JSON makes it unknown (`None`).
fn merged(files: &[PathBuf]) -> Option<bool> {
    for f in files {
        let text = match skarn_sandbox::policy::config::read_text(f) {
            Ok(Some(t)) => t,
            Ok(None) => continue,
            Err(_) => return None,
        };
        let v: Value = serde_json::from_str(&text).ok()?;
        match v.get(KEY) {
            None => continue,
            Some(x) => return Some(x == &Value::Bool(true)),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_and_fenced_lines_are_found() {
        let t = "---\nname: ctx\n---\nContext: !`id > /tmp/a; echo ok` and !`git status`\n```!\nmake\nls\n```\nplain `code` and a!\n";
        assert_eq!(
            lines(t),
            vec!["id > /tmp/a; echo ok", "git status", "make\nls"]
        );
        assert!(lines("no shell `here`! really").is_empty());
        // Spanning lines: the whole directive, judged and trusted whole.
        let multi = "Branch: !`git branch --show-current\nid > /tmp/p` and !`ls`\n";
        assert_eq!(
            lines(multi),
            vec!["git branch --show-current\nid > /tmp/p", "ls"]
        );
        let trusted = vec!["git branch --show-current".to_string(), "ls".to_string()];
        assert_eq!(unconfined(multi, &trusted).len(), 1, "{multi}");
        let open = "x !`git status\nmore\n";
        assert_eq!(unconfined(open, &["git status\nmore".to_string()]).len(), 1);
    }

    /// atk24s F2: a fence opened after other text on its line runs too.
    #[test]
    fn a_fence_in_the_middle_of_a_line_is_found() {
        let t = "Current state: ```!touch /tmp/x``` and more\n";
        assert_eq!(lines(t), vec!["touch /tmp/x"]);
        let open = "State: ```!id\nls\n";
        assert_eq!(unconfined(open, &["id\nls".to_string()]).len(), 1);
        // A fence at a line's start is found once, not twice.
        assert_eq!(lines("```!\nmake\n```\n"), vec!["make"]);
        // Plain code fences run nothing.
        assert!(lines("see ```bash\necho hi\n``` here\n").is_empty());
    }

    #[test]
    fn the_first_file_setting_the_key_decides() {
        let t = skarn_test_support::TempDir::new("skill_shell");
        let (a, b, c) = (t.path().join("a"), t.path().join("b"), t.path().join("c"));
        std::fs::write(&a, "{\"disableSkillShellExecution\": false}").unwrap();
        std::fs::write(&b, "{\"disableSkillShellExecution\": true}").unwrap();
        std::fs::write(&c, "not json").unwrap();
        let none = t.path().join("none");
        assert_eq!(merged(&[none.clone(), b.clone(), a.clone()]), Some(true));
        assert_eq!(merged(&[a.clone(), b.clone()]), Some(false));
        assert_eq!(merged(&[c, b]), None);
        assert_eq!(merged(&[none]), None);
    }
}
