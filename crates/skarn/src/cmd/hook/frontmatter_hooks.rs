//! Hooks Claude Code skills and subagents declare in their YAML
//! frontmatter (`.claude/skills/NAME/SKILL.md`, `.claude/agents/*.md`, in
//! the project and the user's directory): a top-level `hooks:` mapping of
//! events to matcher groups whose `hooks` hold `type: command` entries
//! with a `command:`. They run while the skill or subagent is active, on
//! the host like the settings' hooks, so they are judged and wrapped alike
//! (ADR 0255). No YAML parser is trusted to read them as the client does:
//! the `command:` lines of the block under `hooks:` are read (plain,
//! single- or double-quoted one-line values) and anything else there that
//! may hold a command (a block or flow value, a `command` key read no other
//! way) counts as one that runs unconfined and cannot be rewritten.

use std::path::{Path, PathBuf};

use super::confine_hooks::{Kind, judge, wrapped};

/// Most files looked at under one directory.
const MAX_FILES: usize = 512;

/// The skill and subagent files under a Claude Code directory `dir`.
pub fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir.join("skills")) {
        for e in rd.flatten().take(MAX_FILES) {
            let f = e.path().join("SKILL.md");
            if f.is_file() {
                out.push(f);
            }
        }
    }
    // Subagents: `agents/**/*.md`, and slash commands (skills too, with
    // their own frontmatter hooks): `commands/**/*.md`, at any depth
    // Claude Code loads (atk24m F11, F12). Past the bounds the directory
    // itself is listed: it cannot be read as a file, so it counts as
    // holding unconfined hooks (fail closed).
    for top in ["agents", "commands"] {
        let mut dirs = vec![(dir.join(top), 0)];
        while let Some((d, depth)) = dirs.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            let mut n = 0;
            for e in rd.flatten() {
                n += 1;
                let p = e.path();
                if n > MAX_FILES || out.len() >= MAX_FILES {
                    out.push(d.clone());
                    return out;
                }
                match e.file_type() {
                    Ok(t) if t.is_dir() && depth < MAX_DEPTH => dirs.push((p, depth + 1)),
                    Ok(t) if t.is_dir() => out.push(p),
                    _ if p.extension().is_some_and(|x| x == "md") => out.push(p),
                    _ => {}
                }
            }
        }
    }
    out
}

/// Deepest sub-directory of `agents/` or `commands/` walked; a deeper one
/// counts as unconfined (see [`files`]).
const MAX_DEPTH: usize = 16;

/// One `command:` found: its line, the byte offset of its value, and the
/// value (`None`: a form not read here).
struct Found {
    line: usize,
    at: usize,
    value: Option<String>,
}

/// The frontmatter's lines (after the opening `---`, before the closing).
fn frontmatter(text: &str) -> Option<(usize, Vec<&str>)> {
    let mut lines = text.split('\n');
    if lines.next()?.trim_end() != "---" {
        return None;
    }
    let body: Vec<&str> = lines.take_while(|l| l.trim_end() != "---").collect();
    Some((1, body))
}

/// A one-line YAML scalar: plain, `'...'` (`''` is a quote) or `"..."`
/// (only `\"` and `\\` escapes). `None`: another form.
fn scalar(v: &str) -> Option<String> {
    let v = v.trim_end_matches('\r').trim();
    if let Some(r) = v.strip_prefix('\'') {
        let inner = r.strip_suffix('\'')?;
        if inner.replace("''", "").contains('\'') {
            return None;
        }
        return Some(inner.replace("''", "'"));
    }
    if let Some(r) = v.strip_prefix('"') {
        let inner = r.strip_suffix('"')?;
        let mut out = String::new();
        let mut it = inner.chars();
        while let Some(c) = it.next() {
            match c {
                '\\' => match it.next()? {
                    c @ ('"' | '\\') => out.push(c),
                    _ => return None,
                },
                '"' => return None,
                c => out.push(c),
            }
        }
        return Some(out);
    }
    // Plain: no comment, block or flow indicator, anchor or tag.
    if v.is_empty()
        || v.contains(" #")
        || v.starts_with(['|', '>', '[', '{', '&', '*', '!', '%', '@', '`'])
    {
        return None;
    }
    Some(v.to_string())
}

/// The `command:` entries of the top-level `hooks:` block; `None` when the
/// file has no frontmatter hooks.
fn found(text: &str) -> Option<(usize, Vec<Found>)> {
    let (first, body) = frontmatter(text)?;
    let start = body.iter().position(|l| {
        l.strip_prefix("hooks")
            .is_some_and(|r| r.trim_start().starts_with(':'))
    })?;
    let mut out = Vec::new();
    let head = body[start].split_once(':').map_or("", |(_, r)| r).trim();
    if !head.is_empty() && !head.starts_with('#') {
        // `hooks: {...}` or an alias: not read here.
        out.push(Found {
            line: start,
            at: 0,
            value: None,
        });
    }
    for (i, l) in body.iter().enumerate().skip(start + 1) {
        if !l.is_empty() && !l.starts_with([' ', '\t', '#']) {
            break;
        }
        let t = l.trim_start().trim_start_matches("- ").trim_start();
        if let Some(r) = t.strip_prefix("command") {
            let Some(v) = r.trim_start().strip_prefix(':') else {
                continue;
            };
            out.push(Found {
                line: i,
                at: l.len() - v.len(),
                value: scalar(v),
            });
        } else if t
            .split_once(':')
            .is_some_and(|(k, _)| k.contains("command"))
            || t.starts_with(['{', '[', '"', '\'', '?'])
        {
            // A quoted or flow-style key: not read here.
            out.push(Found {
                line: i,
                at: 0,
                value: None,
            });
        }
    }
    Some((first, out))
}

/// The unconfined hook commands of a skill's or subagent's text.
pub fn unconfined(text: &str, agent: &str, exe: &str, trusted: &[String]) -> Vec<String> {
    let Some((_, f)) = found(text) else {
        return Vec::new();
    };
    f.into_iter()
        .filter_map(|x| match x.value {
            Some(v) => (judge(&v, agent, exe, trusted) == Kind::Unconfined).then_some(v),
            None => Some("(a hook command in a form skarn does not read)".into()),
        })
        .collect()
}

/// `text` with every unconfined hook command wrapped, and what changed;
/// `Err` naming a command in a form that cannot be rewritten.
pub fn wrap_text(
    text: &str,
    agent: &str,
    exe: &str,
    trusted: &[String],
) -> Result<(String, Vec<String>), String> {
    let Some((first, f)) = found(text) else {
        return Ok((text.to_string(), Vec::new()));
    };
    let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
    let mut said = Vec::new();
    for x in f {
        let Some(v) = x.value else {
            return Err(skarn_sandbox::protect::terminal_filter::one_line(
                lines[first + x.line].trim(),
            ));
        };
        if let Some(new) = wrapped(&v, agent, exe, trusted) {
            let l = &mut lines[first + x.line];
            let cr = if l.ends_with('\r') { "\r" } else { "" };
            *l = format!("{} '{}'{cr}", &l[..x.at], new.replace('\'', "''"));
            said.push(skarn_sandbox::protect::terminal_filter::one_line(&v));
        }
    }
    Ok((lines.join("\n"), said))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SKILL: &str = "---\nname: fmt\ndescription: formats\nhooks:\n  PostToolUse:\n    - matcher: \"Write|Edit\"\n      hooks:\n        - type: command\n          command: \"npx prettier --write \\\"$FILE\\\"\"\n        - type: command\n          command: 'it''s ./x.sh'\n---\nbody command: not a hook\n";

    #[test]
    fn frontmatter_commands_are_found_wrapped_and_judged() {
        let u = unconfined(SKILL, "claude-code", "/sk", &[]);
        assert_eq!(
            u,
            vec![
                "npx prettier --write \"$FILE\"".to_string(),
                "it's ./x.sh".to_string()
            ]
        );
        let (new, said) = wrap_text(SKILL, "claude-code", "/sk", &[]).unwrap();
        assert_eq!(said.len(), 2);
        assert!(new.ends_with("---\nbody command: not a hook\n"), "{new}");
        assert!(
            unconfined(&new, "claude-code", "/sk", &[]).is_empty(),
            "{new}"
        );
        assert_eq!(unconfined(&new, "claude-code", "/other", &[]).len(), 2);
        let (again, said) = wrap_text(&new, "claude-code", "/sk", &[]).unwrap();
        assert!(said.is_empty());
        assert_eq!(again, new);
        // Forms not read: counted, and not rewritten.
        let block = "---\nhooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: |\n            make\n---\n";
        assert_eq!(unconfined(block, "claude-code", "/sk", &[]).len(), 1);
        assert!(wrap_text(block, "claude-code", "/sk", &[]).is_err());
        let flow = "---\nhooks: {Stop: [{hooks: [{type: command, command: make}]}]}\n---\n";
        assert_eq!(unconfined(flow, "claude-code", "/sk", &[]).len(), 1);
        assert!(
            unconfined(
                "---\nname: x\n---\nhooks:\n  command: x\n",
                "claude-code",
                "/sk",
                &[]
            )
            .is_empty()
        );
    }
}
