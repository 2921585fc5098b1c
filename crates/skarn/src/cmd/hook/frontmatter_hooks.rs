//! Hooks Claude Code skills, subagents and slash commands declare in
//! their YAML frontmatter (`.claude/skills/NAME/SKILL.md`,
//! `.claude/agents/**/*.md`, `.claude/commands/**/*.md`, in the project,
//! its nested directories, `--add-dir` ones and the user's directory): a
//! top-level `hooks:` mapping of events to matcher groups whose `hooks`
//! hold `type: command` entries with a `command:`. They run while the
//! skill or subagent is active, on the host like the settings' hooks, so
//! they are judged and wrapped alike (ADR 0255). The frontmatter is read
//! as YAML, as the client reads it ([`super::frontmatter_yaml`], ADR
//! 0288); a value that cannot be rewritten in place (reached through an
//! alias or a merge, a block scalar, exec-form `args`) stops `init`, and
//! what skarn cannot read while it may name hooks counts as unconfined.

use std::path::{Path, PathBuf};

use super::confine_hooks::{Kind, judge, wrapped};
use super::frontmatter_yaml::Read;

/// Most files looked at under one directory.
const MAX_FILES: usize = 512;

/// The skill and subagent files under a Claude Code directory `dir`.
pub fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir.join("skills")) {
        for (n, e) in rd.flatten().enumerate() {
            // Past the bound the directory itself is listed, as below:
            // the skills not read count as holding unconfined hooks (the
            // client loads them all: attack atk24o F6).
            if n >= MAX_FILES {
                out.push(dir.join("skills"));
                break;
            }
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
    //
    // A sub-directory that is a symbolic link is walked through the link,
    // as the client walks it (`agents/team -> ../../ai/agents`, shared
    // definitions: attack atk24r F1); a directory reached twice (a loop, or
    // two links to one place) is read once.
    let mut seen: Vec<PathBuf> = Vec::new();
    for top in ["agents", "commands"] {
        let mut dirs = vec![(dir.join(top), 0)];
        while let Some((d, depth)) = dirs.pop() {
            if let Ok(real) = std::fs::canonicalize(&d) {
                if seen.contains(&real) {
                    continue;
                }
                seen.push(real);
            }
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            let mut n = 0;
            for e in rd.flatten() {
                n += 1;
                let p = e.path();
                if n > MAX_FILES || out.len() >= MAX_FILES || seen.len() > MAX_FILES {
                    out.push(d.clone());
                    return out;
                }
                // Followed: what the link leads to (a dangling one is
                // nothing the client loads).
                let is_dir = match e.file_type() {
                    Ok(t) if t.is_symlink() => p.is_dir(),
                    Ok(t) => t.is_dir(),
                    Err(_) => false,
                };
                match is_dir {
                    true if depth < MAX_DEPTH => dirs.push((p, depth + 1)),
                    true => out.push(p),
                    false if p.extension().is_some_and(|x| x == "md") => out.push(p),
                    false => {}
                }
            }
        }
    }
    out
}

/// Deepest sub-directory of `agents/` or `commands/` walked; a deeper one
/// counts as unconfined (see [`files`]).
const MAX_DEPTH: usize = 16;

/// The unconfined hook commands of a skill's or subagent's text.
pub fn unconfined(text: &str, agent: &str, exe: &str, trusted: &[String]) -> Vec<String> {
    // Its inline MCP servers and shell lines too (atk24o F11, F10).
    let mut out = super::frontmatter_mcp::unconfined(text, exe, trusted);
    out.extend(super::skill_shell::unconfined(text, trusted));
    out.extend(hook_commands(text, agent, exe, trusted));
    out
}

fn hook_commands(text: &str, agent: &str, exe: &str, trusted: &[String]) -> Vec<String> {
    match super::frontmatter_yaml::read(text) {
        Read::None => Vec::new(),
        Read::Unreadable(why) => vec![format!(
            "(frontmatter skarn cannot read as YAML within its bounds ({why}) while it may \
             name hooks: they count as unconfined)"
        )],
        Read::Commands(cs) => cs
            .into_iter()
            .filter_map(|c| match c.value {
                Some(v) => {
                    (judge(&v, agent, exe, trusted) == Kind::Unconfined).then(|| match c.os {
                        Some(os) => format!("{os}: {v}"),
                        None => v,
                    })
                }
                None => Some("(a hook command in a form skarn does not read)".into()),
            })
            .collect(),
    }
}

/// `new` as a YAML scalar: single-quoted, or double-quoted (a JSON
/// string is one) when it holds a character a single-quoted scalar would
/// fold or that needs an escape.
fn yaml_scalar(new: &str) -> String {
    if new.chars().any(|c| c.is_control() || c == '\u{feff}') {
        serde_json::Value::String(new.to_string()).to_string()
    } else {
        format!("'{}'", new.replace('\'', "''"))
    }
}

/// `text` with every unconfined hook command wrapped, and what changed;
/// `Err` naming a command in a form that cannot be rewritten.
pub fn wrap_text(
    text: &str,
    agent: &str,
    exe: &str,
    trusted: &[String],
) -> Result<(String, Vec<String>), String> {
    let one = skarn_sandbox::protect::terminal_filter::one_line;
    let cs = match super::frontmatter_yaml::read(text) {
        Read::None => return Ok((text.to_string(), Vec::new())),
        Read::Unreadable(why) => return Err(one(&format!("frontmatter not read: {why}"))),
        Read::Commands(cs) => cs,
    };
    let mut edits = Vec::new();
    let mut said = Vec::new();
    for c in &cs {
        let Some(v) = &c.value else {
            return Err("a hook command in a form skarn does not read".into());
        };
        if let Some(new) = wrapped(v, agent, exe, trusted) {
            // Reached through an alias or a merge, with `args`, tagged or
            // a block scalar: not rewritten in place.
            let Some(span) = c.span else {
                return Err(one(v));
            };
            edits.push((span, yaml_scalar(&new)));
            said.push(one(v));
        }
    }
    edits.sort_by_key(|(s, _)| std::cmp::Reverse(s.0));
    let mut out = text.to_string();
    for ((s, e), new) in edits {
        if s > e || e > out.len() || !out.is_char_boundary(s) || !out.is_char_boundary(e) {
            return Err("a hook command skarn could not place".into());
        }
        out.replace_range(s..e, &new);
    }
    // What was written must read back as wrapped, and nothing else moved.
    let back = match super::frontmatter_yaml::read(&out) {
        Read::Commands(b) => b,
        _ => Vec::new(),
    };
    if back.len() != cs.len() || !unconfined(&out, agent, exe, trusted).is_empty() {
        return Err("the rewritten frontmatter does not read back as wrapped".into());
    }
    Ok((out, said))
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
