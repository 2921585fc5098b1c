//! The symbolic links through which Claude Code loads configuration
//! below a project (attack atk24r F1, F3): a skill, subagent or command
//! directory or file that is a link (`.claude/skills/team ->
//! ../../ai/skills/team`, `.claude/agents/team -> ../../ai/agents`, shared
//! definitions teams commit), at any depth of `agents/` and `commands/`,
//! and a nested `.claude` that is itself a link (`sub/.claude ->
//! ../shared-claude`). The client follows each, so what it leads to is
//! configuration: [`crate::protect::linked_targets`] protects it for
//! `skarn run` and the hook's file guard alike, from this one list.
//! Read on the host; nothing of the project is executed.

use std::path::{Path, PathBuf};

/// Directory entries the walk for nested `.claude` directories reads at
/// most (past it, the nested ones not reached are judged by the hook per
/// call, as the hook's own walk does).
const MAX_ENTRIES: usize = 50_000;

/// Deepest directory looked into, for nested `.claude` directories and
/// within `agents/` and `commands/`.
const MAX_DEPTH: usize = 24;

/// Links kept at most.
const MAX_LINKS: usize = 256;

/// The links below `top` through which Claude Code loads configuration:
/// each link's own path (the caller resolves it).
pub fn links(top: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for c in claude_dirs(top) {
        if is_link(&c) {
            out.push(c.clone());
        }
        loaded_links(&c, &mut out);
        if out.len() >= MAX_LINKS {
            out.truncate(MAX_LINKS);
            break;
        }
    }
    out
}

fn is_link(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
}

/// `top/.claude` and, when it exists, the nested `.claude` entries below
/// `top` (a bounded walk: no `.git`, no link followed but one named
/// `.claude`).
fn claude_dirs(top: &Path) -> Vec<PathBuf> {
    let mut out = vec![top.join(".claude")];
    // A project without its own `.claude` is not walked: a run's start-up
    // stays independent of the tree (issue 30, ADR 0259). Nested ones of
    // such a project are judged by the hook per call (SECURITY.md).
    if std::fs::symlink_metadata(&out[0]).is_err() {
        return out;
    }
    let mut seen = 0usize;
    let mut dirs = vec![(top.to_path_buf(), 0usize)];
    while let Some((d, depth)) = dirs.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return out;
            }
            let name = e.file_name();
            if name == ".git" {
                continue;
            }
            let p = e.path();
            if name == ".claude" {
                if depth > 0 {
                    out.push(p);
                }
                continue;
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) && depth < MAX_DEPTH {
                dirs.push((p, depth + 1));
            }
        }
    }
    out
}

/// The links in `c`'s `skills/`, `agents/` and `commands/`, walked through
/// links as the client walks them (each directory read once).
fn loaded_links(c: &Path, out: &mut Vec<PathBuf>) {
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut dirs: Vec<(PathBuf, usize)> = ["skills", "agents", "commands"]
        .iter()
        .map(|t| (c.join(t), 0))
        .collect();
    while let Some((d, depth)) = dirs.pop() {
        if is_link(&d) {
            out.push(d.clone());
        }
        let Ok(real) = std::fs::canonicalize(&d) else {
            continue;
        };
        if seen.contains(&real) || seen.len() >= MAX_LINKS {
            continue;
        }
        seen.push(real);
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten().take(MAX_LINKS) {
            let p = e.path();
            if out.len() >= MAX_LINKS {
                return;
            }
            if p.is_dir() && depth < MAX_DEPTH {
                dirs.push((p, depth + 1));
            } else if is_link(&p) {
                out.push(p);
            }
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn links_the_client_follows_are_listed() {
        let t = skarn_test_support::TempDir::new("claude-links");
        let p = t.dir("p");
        t.dir("p/.claude/skills");
        t.dir("p/.claude/agents/real");
        t.dir("p/.claude/commands");
        t.file("p/ai/skills/team/SKILL.md", "x\n");
        t.file("p/ai/agents/a.md", "x\n");
        t.file("p/docs/deploy.md", "x\n");
        t.dir("p/shared-claude/skills");
        t.dir("p/sub");
        let ln = |a: &str, b: &str| std::os::unix::fs::symlink(a, p.join(b)).unwrap();
        ln("../../ai/skills/team", ".claude/skills/team");
        ln("../../../ai/agents", ".claude/agents/real/team");
        ln("../../docs/deploy.md", ".claude/commands/deploy.md");
        ln("../shared-claude", "sub/.claude");
        let got = links(&p);
        for want in [
            ".claude/skills/team",
            ".claude/agents/real/team",
            ".claude/commands/deploy.md",
            "sub/.claude",
        ] {
            assert!(got.contains(&p.join(want)), "{want} missing: {got:?}");
        }
        assert_eq!(got.len(), 4, "{got:?}");
    }
}
