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

/// Links listed at most, and directories of `skills/`, `agents/` and
/// `commands/` read at most. Past either bound (or past [`MAX_ENTRIES`]
/// entries in those trees, or a link deeper than [`MAX_DEPTH`]) the list
/// is incomplete and [`links`] says so: nothing is cut silently (attack
/// atk24s F6: the first 256 were kept and the linked skills past them
/// were writable to runs and the file tools).
pub const MAX_LINKS: usize = 4096;

/// Why the list of links below `top` is incomplete (the caller fails
/// closed: `skarn run` refuses to start, the file guard refuses writes).
fn too_many(top: &Path, what: &str) -> String {
    format!(
        "the .claude directories of {} hold {what}, more than skarn follows (at most \
         {MAX_LINKS} links, {MAX_ENTRIES} entries, {MAX_DEPTH} levels): Claude Code loads \
         what every link leads to, and skarn cannot keep all of it read-only. Remove links \
         from .claude/skills, .claude/agents and .claude/commands (or merge them) and try again",
        top.display()
    )
}

/// The links below `top` through which Claude Code loads configuration:
/// each link's own path (the caller resolves it). `Err`: past the bounds
/// (why, for the user), never a silently shortened list.
pub fn links(top: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let mut entries = 0usize;
    for c in claude_dirs(top) {
        if is_link(&c) {
            out.push(c.clone());
        }
        loaded_links(&c, &mut out, &mut entries).map_err(|what| too_many(top, what))?;
    }
    if out.len() > MAX_LINKS {
        return Err(too_many(top, "too many links"));
    }
    Ok(out)
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
/// links as the client walks them (each directory read once); `entries`
/// counts what was read. `Err`: which bound was passed.
fn loaded_links(c: &Path, out: &mut Vec<PathBuf>, entries: &mut usize) -> Result<(), &'static str> {
    let mut seen: Vec<PathBuf> = Vec::new();
    // The client reads `skills/<name>/SKILL.md`, one level; subagents and
    // commands at any depth.
    let mut dirs: Vec<(PathBuf, usize, usize)> = [
        ("skills", 1),
        ("agents", MAX_DEPTH),
        ("commands", MAX_DEPTH),
    ]
    .iter()
    .map(|(t, most)| (c.join(t), 0, *most))
    .collect();
    while let Some((d, depth, most)) = dirs.pop() {
        if is_link(&d) {
            out.push(d.clone());
        }
        let Ok(real) = std::fs::canonicalize(&d) else {
            continue;
        };
        if seen.contains(&real) {
            continue;
        }
        if seen.len() >= MAX_LINKS {
            return Err("too many directories");
        }
        seen.push(real);
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            *entries += 1;
            if *entries > MAX_ENTRIES {
                return Err("too many entries");
            }
            if out.len() > MAX_LINKS {
                return Err("too many links");
            }
            let p = e.path();
            if p.is_dir() && depth < most {
                dirs.push((p, depth + 1, most));
            } else if p.is_dir() && most == MAX_DEPTH {
                return Err("too deep a tree");
            } else if is_link(&p) {
                out.push(p);
            }
        }
    }
    Ok(())
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
        let got = links(&p).unwrap();
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

    #[test]
    fn past_the_bound_the_list_is_refused_not_cut() {
        let t = skarn_test_support::TempDir::new("claude-links-many");
        let p = t.dir("p");
        t.dir("p/.claude/skills");
        t.dir("p/shared");
        for i in 0..=MAX_LINKS {
            std::os::unix::fs::symlink("../../shared", p.join(format!(".claude/skills/s{i}")))
                .unwrap();
        }
        let e = links(&p).unwrap_err();
        assert!(e.contains("more than skarn follows"), "{e}");
    }
}
