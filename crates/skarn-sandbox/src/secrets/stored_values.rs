//! Where a granted secret's value already lies in a file the run can read
//! (attack atk27d F3): the credential places of the workspace and of the
//! other grants — a clone URL with the token in `.git/config`, a project
//! `.npmrc`, a `.env`. A run granted the secret gets a placeholder in its
//! environment, so a file holding the real value would hand it over
//! anyway; the run is refused and the file named instead.

use std::path::{Path, PathBuf};

use super::egress_secrets::RunSecrets;
use super::value_file::{PLACES, holds, is_place_name, open_nonblocking};
use super::value_scan::{Budget, Exhausted, Walk};

/// Most `.git/worktrees/*` and `.env*` entries looked at per directory.
const MAX_ENTRIES: usize = 4096;

/// The files under `roots` (each a directory or file the run may read)
/// whose text holds a granted value in any form the proxy's scrubber
/// knows.
pub fn stored_in(secrets: &RunSecrets, roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for root in roots {
        // A granted file (a preset's `config.toml`, a server's program) is
        // looked at itself; past the size bound only one named like a
        // credential place counts as holding a value (a program does not).
        let files = if root.is_file() {
            vec![(root.clone(), is_place_name(root))]
        } else {
            candidates(root).into_iter().map(|f| (f, true)).collect()
        };
        for (f, big_holds) in files {
            if !found.contains(&f) && holds(secrets, &f, big_holds) {
                found.push(f);
            }
        }
    }
    found
}

/// What a run may read, for [`check`].
#[derive(Debug, Default)]
pub struct Scope {
    /// Where a file holding a value refuses the run (the workspace; a
    /// server's writable grants); elsewhere it is hidden.
    pub refuse_under: Vec<PathBuf>,
    /// Grants walked whole: writable ones and those the user named.
    pub walked: Vec<PathBuf>,
    /// Grants skarn makes for toolchains (presets, version managers):
    /// their credential places only ([`Walk::walk_toolchain`]).
    pub toolchains: Vec<PathBuf>,
    /// Files looked at wherever they lie: the tools' configuration
    /// ([`super::tool_configs::config_files`]) and the files next to each
    /// secret's source (an editor's backup, what a `command` reads).
    pub files: Vec<PathBuf>,
    /// Paths hidden from the run anyway (not looked at; their other names
    /// met in any walked grant are hidden too, atk27h F6).
    pub hidden: Vec<PathBuf>,
    /// The user's home, below which earlier checks' clean verdicts are
    /// kept ([`super::value_cache`]); `None`: everything is read.
    pub cache_home: Option<PathBuf>,
}

/// The files of a run's reach holding a granted value: each to be
/// refused (inside [`Scope::refuse_under`]) or hidden.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Files that refuse the run.
    pub refuse: Vec<PathBuf>,
    /// Files to hide.
    pub hide: Vec<PathBuf>,
}

/// Look for a granted value in everything `scope` names, within `budget`
/// (ADR 0217). An exhausted budget is an error, never a pass.
pub fn check(secrets: &RunSecrets, scope: &Scope, budget: Budget) -> Result<Verdict, Exhausted> {
    let cache = scope.cache_home.as_deref().and_then(|h| {
        let visible: Vec<PathBuf> = (scope.walked.iter())
            .chain(&scope.toolchains)
            .chain(&scope.refuse_under)
            .cloned()
            .collect();
        super::value_cache::Cache::open(h, secrets, &visible)
    });
    let mut w = Walk::new(secrets, budget, &scope.hidden).with_cache(cache);
    let walked = walk_scope(&mut w, scope);
    w.save();
    walked?;
    let mut v = Verdict {
        hide: std::mem::take(&mut w.other_names),
        ..Verdict::default()
    };
    for f in w.found {
        if scope.refuse_under.iter().any(|r| f.starts_with(r)) {
            v.refuse.push(f);
        } else {
            v.hide.push(f);
        }
    }
    Ok(v)
}

/// Why a run granted `secrets` may not start (`None`: it may), after
/// [`check`] gave `v` (ADR 0314): a granted secret recorded as exposed,
/// or a file of the run's writable side holding a piece of a value,
/// which records the secrets it holds as exposed. The message names no
/// file (the sandboxed side reads it and would learn which of its
/// candidates held a piece, atk27o F9); the files are in the record and
/// in `~/.local/state/skarn/exposed/last-refusal`, which no run can read.
pub fn refusal(secrets: &RunSecrets, v: &Verdict, home: Option<&Path>) -> Option<String> {
    use super::exposed;
    let marks: Vec<Option<PathBuf>> = secrets
        .specs
        .iter()
        .map(|s| home.and_then(|h| exposed::mark(h, &s.name, s.value.as_bytes())))
        .collect();
    let _ = secrets.marks.set(marks.clone());
    let marked = |pick: &dyn Fn(usize) -> bool| {
        let mut names = Vec::new();
        let mut files = Vec::new();
        for (i, s) in secrets.specs.iter().enumerate() {
            if let Some(m) = &marks[i]
                && pick(i)
            {
                names.push(s.name.clone());
                files.push(m.clone());
            }
        }
        (names, files)
    };
    let (names, files) = marked(&|i| marks[i].as_deref().is_some_and(exposed::is_marked));
    if !names.is_empty() {
        return Some(exposed::refusal(&names, &files));
    }
    if v.refuse.is_empty() {
        return None;
    }
    let listed: Vec<String> = v.refuse.iter().map(|p| p.display().to_string()).collect();
    let log = home.map(|h| h.join(exposed::DIR).join("last-refusal"));
    if let Some(l) = &log {
        let _ = std::fs::remove_file(l);
        let _ = exposed::record(
            l,
            &format!(
                "a granted secret's value is in (or these files cannot be checked): {}",
                listed.join(", ")
            ),
        );
    }
    let held: Vec<bool> = secrets
        .specs
        .iter()
        .map(|s| v.refuse.iter().any(|f| file_holds(f, s.value.as_bytes())))
        .collect();
    for (i, s) in secrets.specs.iter().enumerate() {
        if let (true, Some(m)) = (held[i], &marks[i]) {
            let _ = exposed::record(
                m,
                &format!(
                    "the start-up check found a piece of {}'s value in {}",
                    s.name,
                    listed.join(", ")
                ),
            );
        }
    }
    let (names, files) = marked(&|i| held[i]);
    if !names.is_empty() {
        return Some(exposed::refusal(&names, &files));
    }
    let shown = log.map_or_else(
        || "the workspace's files".to_string(),
        |l| l.display().to_string(),
    );
    Some(format!(
        "a granted secret's real value may be stored in a file the command can write, over \
         1 MiB and named like a credential file (it cannot be checked): the files are listed \
         in {shown}; remove it from there and run again"
    ))
}

/// Whether `f` (at most 1 MiB, read whole) holds a piece of `value`.
fn file_holds(f: &Path, value: &[u8]) -> bool {
    use std::io::Read;
    let Ok(file) = open_nonblocking(f) else {
        return false;
    };
    let mut text = Vec::new();
    if file.take(1 << 20).read_to_end(&mut text).is_err() {
        return false;
    }
    let Ok(v) = std::str::from_utf8(value) else {
        return false;
    };
    memchr::memmem::find(&text, value).is_some()
        || skarn_egress::ValueFinder::for_values([v]).found_in(&text)
}

fn walk_scope(w: &mut Walk<'_>, scope: &Scope) -> Result<(), Exhausted> {
    for root in &scope.walked {
        // The repository's configuration may lie outside the root (a
        // `.git` file naming another directory).
        look_at(w, root)?;
        w.walk(root)?;
    }
    for root in &scope.toolchains {
        w.walk_toolchain(root)?;
    }
    for f in &scope.files {
        if let Ok(md) = std::fs::metadata(f)
            && md.is_file()
        {
            w.file(f, &md)?;
        }
    }
    Ok(())
}

/// The credential places of `root` ([`candidates`]) through the walk.
fn look_at(w: &mut Walk<'_>, root: &Path) -> Result<(), Exhausted> {
    if !root.is_dir() {
        return Ok(());
    }
    for f in candidates(root) {
        if let Ok(md) = std::fs::symlink_metadata(&f)
            && md.is_file()
        {
            w.file(&f, &md)?;
        }
    }
    Ok(())
}

/// A small regular file's text (a `.git` file, `commondir`); nothing for
/// anything else.
fn read_small(f: &Path) -> Option<String> {
    use std::io::Read;
    let file = open_nonblocking(f).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(64 << 10).read_to_string(&mut text).ok()?;
    Some(text)
}

/// The credential places of one directory: [`PLACES`], every `.env*`, and
/// the git configuration of its repository (a `.git` directory, or the
/// directory a `.git` file names, with its linked work trees).
fn candidates(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = PLACES.iter().map(|p| root.join(p)).collect();
    if let Ok(rd) = std::fs::read_dir(root) {
        for e in rd.flatten().take(MAX_ENTRIES) {
            let name = e.file_name();
            if name.to_string_lossy().starts_with(".env") {
                out.push(e.path());
            }
        }
    }
    if let Some(git) = git_dir(root) {
        out.push(git.join("config"));
        out.push(git.join("config.worktree"));
        if let Some(common) = read_small(&git.join("commondir")) {
            let common = git.join(common.trim());
            out.push(common.join("config"));
        }
        if let Ok(rd) = std::fs::read_dir(git.join("worktrees")) {
            for e in rd.flatten().take(MAX_ENTRIES) {
                out.push(e.path().join("config.worktree"));
            }
        }
    }
    out
}

/// `root/.git` when it is a directory, or the directory a `.git` file's
/// `gitdir:` line names (relative to `root`).
fn git_dir(root: &Path) -> Option<PathBuf> {
    let dot = root.join(".git");
    let meta = std::fs::metadata(&dot).ok()?;
    if meta.is_dir() {
        return Some(dot);
    }
    let text = read_small(&dot)?;
    let named = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    Some(root.join(named))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets(value: &str) -> RunSecrets {
        RunSecrets::for_tests(value, None, "example.test")
    }

    /// atk27g F10: a FIFO named like an env file (or `.git`) does not
    /// stall the check; it holds nothing.
    #[test]
    fn a_fifo_named_like_a_credential_file_does_not_block() {
        let dir = skarn_test_support::TempDir::new("stored_fifo");
        let ws = dir.path().to_path_buf();
        for n in [".env.production", ".git"] {
            let c = std::ffi::CString::new(ws.join(n).as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        }
        let s = secrets("sk-live-Abc123Def456Ghi789Jkl012Mno345");
        assert!(stored_in(&s, std::slice::from_ref(&ws)).is_empty());
    }

    #[test]
    fn a_value_in_the_workspace_credential_places_is_found() {
        let dir = skarn_test_support::TempDir::new("stored_values");
        let ws = dir.path().to_path_buf();
        let value = "sk-live-Abc123Def456Ghi789Jkl012Mno345";
        let s = secrets(value);
        assert!(stored_in(&s, std::slice::from_ref(&ws)).is_empty());
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::write(
            ws.join(".git/config"),
            format!("[remote \"origin\"]\n\turl = https://x:{value}@example.test/r.git\n"),
        )
        .unwrap();
        std::fs::write(
            ws.join(".npmrc"),
            format!("//example.test/:_authToken={value}\n"),
        )
        .unwrap();
        std::fs::write(ws.join(".env.local"), format!("TOKEN={value}\n")).unwrap();
        std::fs::write(ws.join("README"), format!("{value}\n")).unwrap();
        let found = stored_in(&s, std::slice::from_ref(&ws));
        let names: Vec<String> = found
            .iter()
            .map(|p| p.strip_prefix(&ws).unwrap().display().to_string())
            .collect();
        assert_eq!(names, [".npmrc", ".env.local", ".git/config"], "{names:?}");
    }
}
