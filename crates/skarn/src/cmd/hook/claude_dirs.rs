//! The `.claude` directories whose skills, subagents and slash commands
//! Claude Code loads for a session in the project `ws` (ADR 0288): the
//! project's own, the nested ones of its sub-directories (a monorepo's
//! `packages/a/.claude/skills`, loaded once the session touches files
//! there: attack atk24m F7), and those of the directories the client was
//! started with `--add-dir` (F15, read from its command line), and those
//! above the project up to the repository's top ([`parents`], atk24s F4). Their
//! frontmatter hooks are judged and wrapped like the project's.
//!
//! The nested ones are found by a bounded walk of the project (no `.git`,
//! no symbolic link followed below the top; a link to a directory is
//! looked into one level, as Claude Code reaches it by its name), not for
//! a project that is `/` or holds the home (`skarn run` refuses such a
//! workspace anyway). Claude Code finds a nested directory from the paths
//! its tools touch (Read, Glob, Grep as well as the writing ones), so
//! every tool call's path is checked too ([`on_the_way`]; `init` installs
//! the hook on those tools): a call touching a directory whose `.claude`
//! holds unconfined hooks is refused, whatever the walk's bounds missed.

use std::path::{Path, PathBuf};

/// Most directory entries looked at in one project.
const MAX_ENTRIES: usize = 50_000;

/// Most directory entries looked at below a search's directory (a `Grep`
/// from the top of a project with a build tree: the walk is kept between
/// calls, so only the first one pays for it).
const MAX_SEARCH_ENTRIES: usize = 250_000;

/// Deepest sub-directory looked into.
const MAX_DEPTH: usize = 24;

/// The nested `.claude` directories below `ws` (not `ws/.claude` itself)
/// the walk found within its bounds: every one when `complete`. Past the
/// bounds (too many entries, or deeper than the walk goes), or for a
/// project that is `/` or holds the home, those found so far; the rest
/// are judged per call ([`on_the_way`], for every tool naming a path:
/// attack atk24o F3 made the walk stop early, with one deep directory or
/// a large tree, and nothing nested was judged at all).
pub fn nested(ws: &Path) -> (Vec<PathBuf>, bool) {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    if ws.parent().is_none() || home.is_some_and(|h| h.starts_with(ws)) {
        return (Vec::new(), false);
    }
    below(ws, MAX_ENTRIES)
}

/// The `.claude` directories below `top` (not `top/.claude` itself) and
/// whether the walk saw every one (within `max` entries and
/// [`MAX_DEPTH`] of `top`): the walk kept from an earlier call while
/// every directory it read is unchanged ([`super::walk_cache`]).
fn below(top: &Path, max: usize) -> (Vec<PathBuf>, bool) {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    let bounds = format!("{max} {MAX_DEPTH}");
    if let Some(h) = &home
        && let Some(w) = super::walk_cache::load(h, top, &bounds)
    {
        return (w.found(), w.complete);
    }
    let started = std::time::SystemTime::now();
    let w = walk(top, max);
    if let Some(h) = &home {
        super::walk_cache::save(h, top, &bounds, &w, started);
    }
    (w.found(), w.complete)
}

/// The walk below `top` (no `.git`, no link followed below the top; a
/// link to a directory is looked into one level, as Claude Code reaches
/// it by its name).
fn walk(top: &Path, max: usize) -> super::walk_cache::Walk {
    let mut w = super::walk_cache::Walk {
        complete: true,
        ..Default::default()
    };
    let mut seen = 0usize;
    let mut dirs = vec![(top.to_path_buf(), 0usize)];
    'walk: while let Some((d, depth)) = dirs.pop() {
        // The stamp before the read: a change after it moves it.
        w.dirs.push((d.clone(), super::walk_cache::stamp(&d)));
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > max {
                w.complete = false;
                break 'walk;
            }
            let name = e.file_name();
            let p = e.path();
            let Ok(t) = e.file_type() else { continue };
            if name == ".git" {
                continue;
            }
            if name == ".claude" {
                if depth > 0 {
                    w.claudes.push(p);
                }
                continue;
            }
            if t.is_dir() {
                if depth + 1 > MAX_DEPTH {
                    w.complete = false;
                    continue;
                }
                dirs.push((p, depth + 1));
            } else if t.is_symlink() {
                w.links.push(p);
            }
        }
    }
    w
}

/// The skill, subagent and command files of the nested `.claude`
/// directories a search from `root` (a Glob's or Grep's directory,
/// resolved) may reach in the project `ws` (resolved): every file it
/// lists or matches below `root` makes Claude Code load the `.claude`
/// directories on that file's way up (atk24o, open after F3: only the
/// search's own path was judged, so a Grep from the top reached a skill
/// past the nested walk's bounds). The part of the project below `root`
/// (the whole project when `root` holds it) is walked with the walk's
/// bounds; `Err` when the walk cannot see all of it, as nothing there
/// can then be ruled out (fail closed).
pub fn searched(ws: &Path, root: &Path) -> Result<Vec<PathBuf>, String> {
    let top = if root.starts_with(ws) {
        root
    } else if ws.starts_with(root) {
        ws
    } else {
        return Ok(Vec::new());
    };
    if !top.is_dir() {
        return Ok(Vec::new());
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let (found, complete) = if top.parent().is_none() || home.is_some_and(|h| h.starts_with(top)) {
        (Vec::new(), false)
    } else {
        below(top, MAX_SEARCH_ENTRIES)
    };
    if !complete {
        return Err(format!(
            "skarn: this search covers {}, a tree larger or deeper than skarn looks through for \
             nested .claude directories (more than {MAX_SEARCH_ENTRIES} entries, or deeper than \
             {MAX_DEPTH} levels), and a file it lists there could make Claude Code load a \
             nested skill whose hooks run unconfined. Search a narrower directory (its path \
             below {}).",
            top.display(),
            top.display()
        ));
    }
    Ok(found
        .iter()
        .flat_map(|d| super::frontmatter_hooks::files(d))
        .collect())
}

/// The `.claude` directories of the `--add-dir` directories of the
/// client's command line (Linux; elsewhere none are known).
#[cfg(unix)]
pub fn added() -> Vec<PathBuf> {
    skarn_sandbox::protect::client_args::from_parents()
        .add_dirs
        .into_iter()
        .map(|d| d.join(".claude"))
        .collect()
}

/// Elsewhere none are known (docs/hook.md says so).
#[cfg(not(unix))]
pub fn added() -> Vec<PathBuf> {
    Vec::new()
}

/// The `--settings` files of the client's command line.
#[cfg(unix)]
pub fn session_settings() -> Vec<PathBuf> {
    skarn_sandbox::protect::client_args::from_parents().settings
}

/// Elsewhere none are known (docs/hook.md says so).
#[cfg(not(unix))]
pub fn session_settings() -> Vec<PathBuf> {
    Vec::new()
}

/// The `.claude` directories above the project `ws` whose skills,
/// subagents and commands Claude Code started in `ws` loads (attack
/// atk24s F4: a monorepo's package as the project, the repository's top
/// `.claude/skills` loaded unjudged): those of every directory from `ws`'s
/// parent up to the git work tree's top (the nearest one holding `.git`),
/// outside a repository up to `/`. The home's `.claude` is the user's,
/// judged apart.
pub fn parents(ws: &Path) -> Vec<PathBuf> {
    let has_git = |d: &Path| std::fs::symlink_metadata(d.join(".git")).is_ok();
    if has_git(ws) {
        return Vec::new();
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut out = Vec::new();
    let mut d = ws.parent();
    while let Some(x) = d {
        if home.as_deref() != Some(x) {
            out.push(x.join(".claude"));
        }
        if has_git(x) {
            break;
        }
        d = x.parent();
    }
    out
}

/// The skill, subagent and command files of the project `ws`: its own
/// `.claude`'s, the nested ones' (past the walk's bounds, only those
/// [`on_the_way`] finds per call) and those of the directories above it
/// up to the repository's top ([`parents`]).
pub fn project_files(ws: &Path) -> Vec<PathBuf> {
    let mut out = super::frontmatter_hooks::files(&ws.join(".claude"));
    for d in parents(ws) {
        out.extend(super::frontmatter_hooks::files(&d));
    }
    for d in nested(ws).0 {
        out.extend(super::frontmatter_hooks::files(&d));
    }
    out
}

/// The skill, subagent and command files of the `.claude` directories on
/// the way from `path` (a tool call's file or directory) up to the
/// project `ws`, below its top: where Claude Code looks when a tool
/// touches `path`.
pub fn on_the_way(ws: &Path, path: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut d = Some(path);
    while let Some(x) = d {
        if !x.starts_with(ws) || x == ws {
            break;
        }
        let c = x.join(".claude");
        if c.is_dir() {
            out.extend(super::frontmatter_hooks::files(&c));
        }
        d = x.parent();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_dirs_are_found_and_git_is_skipped() {
        let d = std::env::temp_dir().join(format!("skarn-claude-dirs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        for p in [
            ".claude/skills",
            "packages/a/.claude/skills/x",
            ".git/x/.claude",
        ] {
            std::fs::create_dir_all(d.join(p)).unwrap();
        }
        assert_eq!(nested(&d), (vec![d.join("packages/a/.claude")], true));
        // Past the depth bound: what was found is kept.
        std::fs::create_dir_all(d.join(format!("x{}", "/d".repeat(MAX_DEPTH + 1)))).unwrap();
        assert_eq!(nested(&d), (vec![d.join("packages/a/.claude")], false));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn parents_stop_at_the_repository_top() {
        let d = std::env::temp_dir().join(format!("skarn-claude-parents-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("repo/.git")).unwrap();
        std::fs::create_dir_all(d.join("repo/packages/a")).unwrap();
        assert_eq!(
            parents(&d.join("repo/packages/a")),
            vec![d.join("repo/packages/.claude"), d.join("repo/.claude")]
        );
        assert!(parents(&d.join("repo")).is_empty());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
