//! A repository created inside the sandbox (`git init`, `cargo init`) is
//! staged, vetted and only then moved into place (ADR 0044).
//!
//! When the workspace has no `.git`, the helper creates an empty `.git`
//! directory on the host (not a repository to host git, which keeps
//! searching upwards) holding one private stage directory
//! `.skarn-stage-<pid>` (mode 0700), and binds the stage onto `.git`
//! inside the sandbox. After the run (or from the reaper when the helper
//! was killed) [`finalize`] keeps only what cannot run code: the objects,
//! refs, logs, `HEAD`, the index, sample hooks and an allow-listed
//! configuration; it moves them into `.git` and says what it dropped.

use std::io;
use std::path::{Path, PathBuf};

use crate::protect::git::gitconfig;

/// Name prefix of a run's stage directory inside `.git`.
pub const STAGE_PREFIX: &str = ".skarn-stage-";

const KEEP_DIRS: &[&str] = &["objects", "refs", "logs", "info", "branches"];
const KEEP_FILES: &[&str] = &[
    "description",
    "index",
    "packed-refs",
    "COMMIT_EDITMSG",
    "ORIG_HEAD",
    "FETCH_HEAD",
    "shallow",
];

fn is_stage(name: &std::ffi::OsStr) -> bool {
    name.to_str().is_some_and(|n| n.starts_with(STAGE_PREFIX))
}

/// Whether `git` is a directory holding nothing but stage directories
/// (a `.git` made by runs, with no repository yet).
pub(crate) fn is_unborn(git: &Path) -> bool {
    let Ok(md) = std::fs::symlink_metadata(git) else {
        return false;
    };
    if !md.is_dir() {
        return false;
    }
    std::fs::read_dir(git)
        .map(|rd| rd.flatten().all(|e| is_stage(&e.file_name())))
        .unwrap_or(false)
}

/// Create `ws/.git` if missing and this run's stage inside it.
pub fn prepare(ws: &Path) -> io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let git = ws.join(".git");
    match std::fs::DirBuilder::new().mode(0o755).create(&git) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && is_unborn(&git) => {}
        Err(e) => return Err(e),
    }
    sweep_empty_stages(&git);
    let stage = git.join(format!("{STAGE_PREFIX}{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&stage); // a dead run with our pid
    std::fs::DirBuilder::new().mode(0o700).create(&stage)?;
    Ok(stage)
}

/// Remove the empty stage directories of runs that are gone (killed
/// together with their reaper, so nobody finalized them). A stage holding
/// something is left for a person to look at; one whose pid is alive
/// (perhaps reused) is left too.
fn sweep_empty_stages(git: &Path) {
    let Ok(rd) = std::fs::read_dir(git) else {
        return;
    };
    for e in rd.flatten() {
        let pid = e
            .file_name()
            .to_str()
            .and_then(|n| n.strip_prefix(STAGE_PREFIX))
            .and_then(|p| p.parse::<libc::pid_t>().ok())
            .filter(|p| *p > 0);
        if let Some(pid) = pid
            && pid != std::process::id() as libc::pid_t
            && crate::linux::sys::pid_gone(pid)
        {
            let _ = std::fs::remove_dir(e.path()); // fails unless empty
        }
    }
}

pub use crate::protect::git::safe_keys::allowed_key;

/// Keep the allow-listed keys of a staged repository's config; returns the
/// new text and the dropped keys.
pub(crate) fn sanitize_config(text: &str) -> (String, Vec<String>) {
    let p = gitconfig::parse(text);
    let mut dropped = Vec::new();
    if !p.bad_lines.is_empty() {
        dropped.push("config lines that do not parse".to_string());
    }
    let mut kept = Vec::new();
    for it in p.items {
        if allowed_key(&it) {
            kept.push(it);
        } else {
            dropped.push(format!("config {}", it.key()));
        }
    }
    (gitconfig::write(&kept), dropped)
}

fn read_regular(p: &Path) -> Option<String> {
    gitconfig::read_file(p).ok().flatten()
}

/// Vet the stage of one run and move what is kept into `ws/.git`. With
/// `may_remove_git` (no other run uses the workspace), an empty `.git`
/// left behind is removed. Returns one line for the user when something
/// was dropped or the repository could not be moved.
pub fn finalize(ws: &Path, stage: &Path, may_remove_git: bool) -> Option<String> {
    let git = ws.join(".git");
    let mut msg = None;
    if std::fs::symlink_metadata(stage).is_ok_and(|m| m.is_dir()) {
        let empty = std::fs::read_dir(stage).is_ok_and(|mut r| r.next().is_none());
        let odd = odd_inside(stage);
        if !empty && !odd.is_empty() {
            msg = Some(quarantine(ws, stage, &odd));
        } else if !empty {
            msg = if is_unborn(&git) {
                move_in(stage, &git)
            } else {
                Some(set_aside(ws, stage, &git))
            };
        }
        let _ = std::fs::remove_dir_all(stage);
    }
    if may_remove_git && std::fs::read_dir(&git).is_ok_and(|mut r| r.next().is_none()) {
        let _ = std::fs::remove_dir(&git);
    }
    msg
}

/// Links, FIFOs and device nodes anywhere inside the directories a stage
/// would move into `.git` (git makes none; host git writes through links,
/// see [`crate::protect::git::git_sweep`]). Such entries at the stage's top are only
/// dropped by [`move_in`], like any entry that is not what git makes.
fn odd_inside(stage: &Path) -> Vec<crate::protect::git::git_sweep::Odd> {
    KEEP_DIRS
        .iter()
        .map(|d| stage.join(d))
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
        .flat_map(|p| crate::protect::git::git_sweep::scan(&p, true))
        .collect()
}

/// Refuse a stage holding `odd` entries: they are removed, its HEAD is
/// renamed (no git takes it for a repository) and it is kept beside the
/// workspace as `.git.skarn-quarantine-<random>` for review, the name
/// [`crate::protect::git::nested_git`] gives the repositories it sets aside.
fn quarantine(ws: &Path, stage: &Path, odd: &[crate::protect::git::git_sweep::Odd]) -> String {
    let named: Vec<String> = odd
        .iter()
        .map(|o| {
            let rel = o.path.strip_prefix(stage).unwrap_or(&o.path);
            let _ = std::fs::remove_file(&o.path);
            format!("{} ({})", rel.display(), o.kind)
        })
        .collect();
    let _ = std::fs::rename(stage.join("HEAD"), stage.join("HEAD.inert"));
    // (A fresh unguessable name beside the workspace's `.git`; a rename
    // that fails removes the stage, which the caller removes anyway.)
    let kept = match crate::protect::set_aside::set_aside_as(
        stage,
        &ws.join(".git"),
        "skarn-quarantine",
    ) {
        crate::protect::set_aside::Aside::Moved(p) => {
            format!("kept inert at {} for review", p.display())
        }
        crate::protect::set_aside::Aside::Removed => "discarded".into(),
        crate::protect::set_aside::Aside::Left(why) => format!("discarded ({why})"),
    };
    format!(
        "skarn: the repository created in the sandbox was refused: it holds entries git never \
         makes, through which host git would write outside the workspace or hang ({}, now \
         removed); it is {kept}",
        named.join(", ")
    )
}

/// Another run moved its repository in first: keep this one beside the
/// workspace, inert (its HEAD renamed, so no git takes it for a
/// repository and nothing in it runs), instead of deleting its commits.
fn set_aside(ws: &Path, stage: &Path, git: &Path) -> String {
    let name = stage
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let aside = ws.join(format!(
        ".skarn-unmerged-repo{}",
        name.trim_start_matches(".skarn-stage")
    ));
    let _ = std::fs::rename(stage.join("HEAD"), stage.join("HEAD.inert"));
    match std::fs::rename(stage, &aside) {
        Ok(()) => format!(
            "skarn: {} already holds a repository (another run made it first): the one created \
             in this run is kept inert at {} (rename HEAD.inert to HEAD to use it)",
            git.display(),
            aside.display()
        ),
        Err(e) => format!(
            "skarn: the repository created in the sandbox could not be kept ({e}): {} already \
             holds one",
            git.display()
        ),
    }
}

fn move_in(stage: &Path, git: &Path) -> Option<String> {
    if !std::fs::symlink_metadata(stage.join("HEAD")).is_ok_and(|m| m.is_file()) {
        return Some(format!(
            "skarn: {} created in the sandbox was discarded: not a repository (no HEAD)",
            git.display()
        ));
    }
    let mut dropped: Vec<String> = Vec::new();
    let mut head = false;
    let entries: Vec<_> = std::fs::read_dir(stage).ok()?.flatten().collect();
    for e in &entries {
        let name = e.file_name();
        let n = name.to_string_lossy().into_owned();
        let Ok(md) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        let ok = match n.as_str() {
            "HEAD" if md.is_file() => {
                head = true;
                continue; // moved last
            }
            "config" if md.is_file() => {
                let text = read_regular(&e.path()).unwrap_or_default();
                let (clean, d) = sanitize_config(&text);
                dropped.extend(d);
                // The bytes read, written back (see `gitconfig::raw_bytes`).
                std::fs::write(git.join("config"), gitconfig::raw_bytes(&clean)).is_ok()
            }
            "hooks" if md.is_dir() => {
                let _ = std::fs::create_dir(git.join("hooks"));
                for h in std::fs::read_dir(e.path()).into_iter().flatten().flatten() {
                    let hn = h.file_name().to_string_lossy().into_owned();
                    let reg = std::fs::symlink_metadata(h.path()).is_ok_and(|m| m.is_file());
                    if !(reg
                        && hn.ends_with(".sample")
                        && std::fs::rename(h.path(), git.join("hooks").join(&hn)).is_ok())
                    {
                        dropped.push(format!("hooks/{hn}"));
                    }
                }
                true
            }
            d if KEEP_DIRS.contains(&d) && md.is_dir() => {
                std::fs::rename(e.path(), git.join(&name)).is_ok()
            }
            f if KEEP_FILES.contains(&f) && md.is_file() => {
                std::fs::rename(e.path(), git.join(&name)).is_ok()
            }
            _ => false,
        };
        if !ok {
            dropped.push(n);
        }
    }
    if head && std::fs::rename(stage.join("HEAD"), git.join("HEAD")).is_err() {
        dropped.push("HEAD".into());
    }
    (!dropped.is_empty()).then(|| {
        format!(
            "skarn: the repository created in the sandbox was moved to {}; dropped: {}",
            git.display(),
            dropped.join(", ")
        )
    })
}

#[cfg(test)]
#[path = "staging_tests.rs"]
mod tests;
