//! Directories the caller's environment names as places host programs
//! load code or start-up files from, as workspaces (attack atk22n F4):
//! `$ZDOTDIR` (zsh's `.zshenv`, `.zshrc`), `$PYTHONPATH` (a `json.py`
//! there shadows the standard library's for every host python),
//! `$LD_LIBRARY_PATH`, `$NODE_PATH`, `$PERL5LIB`, `$RUBYLIB`,
//! `$GEM_PATH`, `$CLASSPATH`, `$CURL_HOME`, `$IPYTHONDIR`, ... (the
//! planner's list, [`crate::protect::env_places::ENV_PLACES`]). A
//! workspace that is or lies in one of them would let a run add what host
//! programs load next, where the planner can protect nothing (the grant
//! is the trusted place itself). One such directory inside the workspace
//! (`PYTHONPATH=<project>/src`) is kept read-only by the planner, as a
//! `PATH` directory there is.

use std::path::{Path, PathBuf};

/// Entries of one variable looked at, at most.
const MAX_ENTRIES: usize = 1000;

/// The entries of `var` (`:`-separated, a leading `~` the home), each
/// canonical, that are existing directories.
fn dirs_of(var: &str) -> Vec<(PathBuf, PathBuf)> {
    let Some(v) = std::env::var_os(var) else {
        return Vec::new();
    };
    let home = std::env::var_os("HOME").map(PathBuf::from);
    std::env::split_paths(&v)
        .take(MAX_ENTRIES)
        .map(|d| match (&home, d.to_str()) {
            (Some(h), Some("~")) => h.clone(),
            (Some(h), Some(s)) if s.starts_with("~/") => h.join(&s[2..]),
            _ => d,
        })
        .filter(|d| d.is_absolute())
        .filter_map(|d| {
            let real = std::fs::canonicalize(&d).ok()?;
            real.is_dir().then_some((real, d))
        })
        .collect()
}

/// Why `ws` (canonical) is or lies in a directory an environment variable
/// of the caller names as a place host programs load from; `homes`
/// (canonical): a variable naming a home or a shared directory
/// (`ZDOTDIR=$HOME`) refuses that directory only, not what lies in it.
pub(super) fn reason(ws: &Path, homes: &[PathBuf]) -> Option<String> {
    for (var, _) in crate::protect::env_places::ENV_PLACES {
        for (real, shown) in dirs_of(var) {
            let broad = !super::is_prefix(&real, homes);
            let how = if ws == real {
                "is"
            } else if ws.starts_with(&real) && !broad {
                "lies in"
            } else {
                continue;
            };
            return Some(format!(
                "{} {how} the directory ${var} names ({}): host programs load code or start-up \
                 files from there, so a file the command put there would run on the host",
                ws.display(),
                shown.display()
            ));
        }
    }
    None
}
