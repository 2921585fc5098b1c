//! What `skarn run` would refuse or set aside if a sandboxed command made
//! the change, asked of the same code: the judgement of its copy-on-write
//! layer ([`skarn_sandbox::linux::cow::vet::check`]), which holds the
//! direct mode's protections and after-run checks as one function per
//! path (a virtual environment's `bin/python*` and `bin/activate*`, a
//! customize module in any directory, the names host tools read in every
//! directory such as `.lfsconfig` or `rust-toolchain.toml`, compiled
//! Python, an interpreter's start-up file at the top), with the files the
//! workspace's mise configuration runs among its protected paths
//! (attack atk24j F1, F11). The agent's file tools write outside any
//! sandbox, so every one of these is refused before the tool writes.
//!
//! Besides, what a path *is* rather than what it is called:
//! - a directory that is (or would become) a git directory: a file named
//!   `HEAD`, or anything inside a directory holding one (host git takes
//!   `src/` with `HEAD`, `objects/`, `refs/` and a `config` for the
//!   repository of every command below it and runs what its configuration
//!   names; `skarn run` sets such a directory aside; atk24j F6);
//! - another name of a file (a hard link: more than one name): a write
//!   changes the file under all of them, and one may be a protected file
//!   outside (`~/.bashrc` linked into a dotfiles repository; `skarn run`
//!   keeps such names read-only by inode; atk24j F8).

use std::path::{Path, PathBuf};

use super::file_content::Proposed;
use super::file_paths::fold;

/// Why `c` may not be written as `skarn run` judges a change, with `bases`
/// the directories it is judged in (the workspace, the repository the file
/// is in), `home` for the mise configuration's own files. `None`: nothing
/// against it here.
pub fn refusal(
    c: &Path,
    bases: &[PathBuf],
    home: Option<&Path>,
    content: Option<&Proposed>,
) -> Option<String> {
    if let Some(Proposed::Fails(why)) = content {
        return Some(format!("{}: {why}", c.display()));
    }
    if let Some(why) = super::file_built::refusal(c) {
        return Some(why);
    }
    if let Some(why) = git_dir_shape(c) {
        return Some(why);
    }
    if let Some(why) = other_names(c) {
        return Some(why);
    }
    if let Some(why) = gemini_env(c, home) {
        return Some(why);
    }
    layer_refusal(c, bases, home, content)
}

/// The layer's judgement of `c` relative to each base holding it (and to
/// `/`, for the names judged in any directory), as written and folded;
/// with the content the tool will leave (`content`) in a private upper,
/// as a run's layer holds it (atk22o F10), else the host's file.
#[cfg(target_os = "linux")]
fn layer_refusal(
    c: &Path,
    bases: &[PathBuf],
    home: Option<&Path>,
    content: Option<&Proposed>,
) -> Option<String> {
    use skarn_sandbox::linux::cow::vet::{Change, Rules, check};
    // The names judged in any directory: below the top, or below the
    // Claude Code worktree `c` lies in (atk24o F7: judged as a project of
    // its own, not as part of the `.claude` it lies in).
    let root = super::claude_worktree::root(c).unwrap_or_else(|| PathBuf::from("/"));
    let host = std::fs::symlink_metadata(c).is_ok();
    for base in bases.iter().chain(std::iter::once(&root)) {
        for (cc, bb) in [(c.to_path_buf(), base.clone()), (fold(c), fold(base))] {
            let Ok(rel) = cc.strip_prefix(&bb) else {
                continue;
            };
            if rel.as_os_str().is_empty() {
                continue;
            }
            let mise = skarn_sandbox::protect::mise_env::named(&bb, home);
            let rules = Rules {
                ws: bb.clone(),
                protected: mise
                    .files
                    .iter()
                    .map(|f| (f.clone(), true))
                    .chain(mise.path_dirs.iter().map(|d| (d.clone(), false)))
                    .collect(),
                ..Rules::default()
            };
            let verdict = match content {
                None => check(&rules, rel, Change::File, c, host, None),
                Some(p) => p.probes(c).into_iter().try_for_each(|bytes| {
                    super::file_upper::with_upper(rel, &bytes, |upper| {
                        check(&rules, rel, Change::File, upper, host, None)
                    })
                }),
            };
            if let Err(why) = verdict {
                return Some(format!(
                    "{} is what `skarn run` keeps read-only or sets aside ({why}); sandboxed \
                     commands cannot write it either",
                    c.display()
                ));
            }
        }
    }
    None
}

/// The layer's judgement exists on Linux only (the other systems' runs
/// protect the lists the rest of the guard reads).
#[cfg(not(target_os = "linux"))]
fn layer_refusal(
    _c: &Path,
    _bases: &[PathBuf],
    _home: Option<&Path>,
    _content: Option<&Proposed>,
) -> Option<String> {
    None
}

/// Entries of a git directory that, beside a `HEAD`, make one (or change
/// what host git does there).
const GIT_PARTS: &[&str] = &[
    "objects",
    "refs",
    "commondir",
    "config",
    "config.worktree",
    "packed-refs",
    "hooks",
    "info",
    "worktrees",
    "modules",
    "gitdir",
];

/// `c` is named `HEAD`, or lies in a directory holding a `HEAD` entry and
/// a git directory's other parts (or would add one): a git directory,
/// made or to be made.
fn git_dir_shape(c: &Path) -> Option<String> {
    if c.file_name()
        .is_some_and(|n| fold(Path::new(n)) == Path::new("head"))
    {
        return Some(format!(
            "{} is named HEAD: with objects/ and refs/ beside it the directory becomes a git \
             directory, and host git run below it uses its configuration (fsmonitor, hooks, \
             pager); `skarn run` sets such a directory aside",
            c.display()
        ));
    }
    for d in c.ancestors().skip(1).take(256) {
        if d.parent().is_none() {
            break;
        }
        // (A case-insensitive volume finds `head` under this name too.)
        // A HEAD with a git directory's other parts, or a write making
        // one of them (an empty HEAD a killed run left is no repository
        // until objects/ or refs/ join it).
        let below = c
            .strip_prefix(d)
            .ok()
            .and_then(|r| r.components().next())
            .map(|x| fold(Path::new(x.as_os_str())));
        let part = |n: &str| d.join(n).symlink_metadata().is_ok();
        if std::fs::symlink_metadata(d.join("HEAD")).is_ok()
            && (["objects", "refs", "commondir"].iter().any(|n| part(n))
                || below.is_some_and(|b| GIT_PARTS.iter().any(|p| b == Path::new(p))))
        {
            return Some(format!(
                "{} lies in {}, which holds a HEAD entry: a git directory (host git run below \
                 it uses its configuration and hooks)",
                c.display(),
                d.display()
            ));
        }
    }
    None
}

/// `c` is a `.env` file where Gemini CLI runs: it loads the first `.env`
/// (or `.gemini/.env`) it finds from its working directory up into its own
/// environment at start, and every process it starts inherits it (the hook,
/// and the shell that starts each confined command: `BASH_ENV`,
/// `LD_PRELOAD` there run before `skarn run` does; atk24j F12). Refused at
/// any depth (Gemini may start in a sub-directory) when Gemini CLI is the
/// client or is set up for the user or the project (a `.gemini` directory
/// in the home or above the file), whichever client writes it.
fn gemini_env(c: &Path, home: Option<&Path>) -> Option<String> {
    if c.file_name()
        .is_none_or(|n| fold(Path::new(n)) != Path::new(".env"))
    {
        return None;
    }
    let gemini = std::env::var_os("GEMINI_PROJECT_DIR").is_some()
        || std::env::var_os("GEMINI_CLI").is_some()
        || home.is_some_and(|h| h.join(".gemini").is_dir())
        || c.ancestors().skip(1).any(|a| a.join(".gemini").is_dir());
    gemini.then(|| {
        format!(
            "{} is an environment file Gemini CLI loads into its own process at start (the \
             shell of every later command inherits it, outside the sandbox); only the user \
             writes it",
            c.display()
        )
    })
}

/// `c` is an existing file with more than one name.
#[cfg(unix)]
fn other_names(c: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(c).ok()?;
    (m.is_file() && m.nlink() > 1).then(|| {
        format!(
            "{} has {} names (hard links): a write changes the file under every one of them, \
             and another name may be a file host programs run (`skarn run` keeps such names \
             read-only when one is protected); edit the file by its own name, or make a copy",
            c.display(),
            m.nlink()
        )
    })
}

#[cfg(not(unix))]
fn other_names(_c: &Path) -> Option<String> {
    None
}
