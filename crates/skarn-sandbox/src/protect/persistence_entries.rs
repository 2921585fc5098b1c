//! The shape of the persistence table of [`crate::protect::persistence`]
//! (each workspace path host tools run code from, when a missing one is
//! reserved, and why it is listed) and the git directory's part; the
//! other parts are in `persistence_editors`, `persistence_tools` and
//! `persistence_hooks` (data only).

/// When a missing persistence path is reserved (kept from being created).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reserve {
    /// Always: the tool reads the path whenever the folder is opened.
    Always,
    /// Only when the workspace is the home directory (shell start-up files).
    IfHome,
    /// Only when one of these workspace paths exists (the tool is set up
    /// in this project; without it, a new file is never read on its own).
    IfAny(&'static [&'static str]),
    /// Never: any inode there changes how tools behave; write-protected
    /// only when present.
    Never,
}

/// One persistence path, relative to the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Path relative to the workspace root.
    pub path: &'static str,
    /// Reservation rule when it is missing.
    pub reserve: Reserve,
    /// Why a host tool runs code from it.
    pub reason: &'static str,
}

/// Families of file names, each with why a host program loads them (the
/// shape of `persistence_lint`'s tables).
pub(crate) type Groups = &'static [(&'static [&'static str], &'static str)];

pub(crate) const fn e(path: &'static str, reserve: Reserve, reason: &'static str) -> Entry {
    Entry {
        path,
        reserve,
        reason,
    }
}

use Reserve::{Always, Never};

pub(crate) use crate::protect::persistence_families::{LINT_STAGED, MISE};

/// Paths inside the workspace's `.git` directory planned statically (when
/// `.git` is a directory at the workspace root). The helper adds what the
/// effective configuration names ([`crate::protect::git::git_vet`]) before the run.
pub const GIT_DIR_ENTRIES: &[Entry] = &[
    e(".git/hooks", Always, "hooks run by git on the host"),
    e(
        ".git/config",
        Always,
        "core.hooksPath, fsmonitor, filters, aliases",
    ),
    e(
        ".git/modules",
        Always,
        "submodules' git directories (hooks, config)",
    ),
    e(
        ".git/objects/info/alternates",
        Always,
        "makes git read objects from anywhere (a place the command chose)",
    ),
    e(
        ".git/commondir",
        Never,
        "redirects the common directory (hooks, config); an unreadable one stops git",
    ),
    e(
        ".git/config.worktree",
        Never,
        "per-worktree config when extensions.worktreeConfig is set",
    ),
];
