//! The filesystem steps of a plan ([`FsOp`]) and the access a grant gives
//! ([`Access`]). Data only.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Access given to one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// Read files, list directories.
    Read,
    /// Read and execute.
    ReadExec,
    /// Everything (read, write, create, remove, execute).
    ReadWrite,
    /// Read the host's copy; writes land in a private copy-on-write layer
    /// that is discarded after the run (toolchain caches).
    Private,
}

impl Access {
    /// How the report names it.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::ReadExec => "read+exec",
            Access::ReadWrite => "read-write",
            Access::Private => "read-write (private layer, discarded)",
        }
    }

    /// Order of access widths, to merge two grants of one path.
    pub(crate) fn rank(self) -> u8 {
        match self {
            Access::Read => 0,
            Access::ReadExec => 1,
            Access::Private => 2,
            Access::ReadWrite => 3,
        }
    }
}

/// One filesystem step of the new root, in order. Each step says what it
/// does when its path turns out, at run time, to be missing or a symlink:
/// those are the only things init observes while building the root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "op")]
pub enum FsOp {
    /// Bind the host path at the same place; read-only unless `ReadWrite`.
    /// A missing path is skipped (with a note).
    Bind {
        /// Host path.
        path: PathBuf,
        /// Access.
        access: Access,
    },
    /// Bind the host path read-only through an id mapping that makes
    /// root's files owned by nobody inside (a root caller's system
    /// directories and read-only grants in them; see [`crate::linux::idmap`]):
    /// what their owner closed to others stays closed to the command.
    /// A missing path is skipped (with a note), like [`FsOp::Bind`].
    IdmapBind {
        /// Host path.
        path: PathBuf,
        /// Access (read or read+exec).
        access: Access,
    },
    /// Fresh procfs for the new PID namespace at /proc.
    Proc,
    /// Minimal /dev: null zero full random urandom tty, private pts and shm.
    Dev,
    /// Private tmpfs at /tmp (TMPDIR points at it).
    Tmp,
    /// Private writable home: a tmpfs at this path (the canonical home
    /// directory), under which granted paths are bound; discarded after
    /// the run.
    Home {
        /// Canonical home directory.
        path: PathBuf,
    },
    /// A file written into the private home before the command starts
    /// (not when something is already there).
    File {
        /// Path (under the private home).
        path: PathBuf,
        /// Contents.
        contents: String,
    },
    /// A copy of a user's dotfile holding a granted secret's placeholder,
    /// written at every start into a directory kept between starts (a
    /// gateway server's state directory, its `$HOME`; issue 27, ADR 0252):
    /// it replaces whatever has the name, never written through a link
    /// (owner-only). A failure is a note: the command then lacks the
    /// credential, it never gets a value.
    StateFile {
        /// Path (under a granted, writable state directory).
        path: PathBuf,
        /// Contents.
        contents: String,
    },
    /// A CA bundle written into the private home (issue 27): the proxy's
    /// upstream roots when `roots` (the plan's egress part holds them once,
    /// certificates only, read and vetted by the planning process: atk27i
    /// F7), then `extra`.
    Bundle {
        /// Path (under the private home).
        path: PathBuf,
        /// Whether the proxy's upstream roots come first.
        roots: bool,
        /// Appended certificates (PEM).
        extra: String,
    },
    /// A symlink created in the new root where nothing else is (the name a
    /// grant was written with, or `$HOME` when it is a symlink).
    Symlink {
        /// Where the link goes.
        path: PathBuf,
        /// What it points at.
        target: PathBuf,
    },
    /// Bind a directory inside a writable grant onto itself (still
    /// writable): a mount point cannot be renamed or removed, so the
    /// command cannot move an ancestor of a protected path aside and make
    /// the protection miss it in a later run. Skipped when not a directory.
    Pin {
        /// Host path.
        path: PathBuf,
    },
    /// Hide a secret under a granted path (empty read-only file or
    /// directory). When it does not exist and lies in a writable grant,
    /// `reserve` keeps it from being created: the helper's reservation step
    /// ([`super::Reservation`]) gives the first missing component of the
    /// path a placeholder for the run.
    Mask {
        /// Host path.
        path: PathBuf,
        /// Reserve the name when it does not exist.
        #[serde(default)]
        reserve: bool,
        /// A host server's unix socket: its (device, inode) when the walk
        /// found it. Init hides exactly that inode (opened by path and
        /// checked, then covered through the open descriptor); when the
        /// path holds something else by then (a concurrent run renamed a
        /// directory: attack atk24e F1), the run makes no unix socket.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pin: Option<(u64, u64)>,
    },
    /// Keep a workspace persistence path read-only; when missing and
    /// `reserve` is set, an empty read-only placeholder keeps it from being
    /// created during the run (made by the reservation step).
    Protect {
        /// Host path.
        path: PathBuf,
        /// Reserve the name when it does not exist.
        reserve: bool,
        /// Also reserve it when one of these paths exists (looked at by the
        /// reservation step; see [`crate::protect::persistence::Reserve::IfAny`]).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        reserve_if: Vec<PathBuf>,
    },
    /// The workspace as a copy-on-write layer (ADR 0130): an overlayfs at
    /// `path` whose lower directory is the host's `path` and whose upper
    /// and work directories are the run's private layer (emitted by the
    /// helper in place of the workspace's read-write bind).
    Layer {
        /// The workspace (host path).
        path: PathBuf,
        /// The layer's upper directory (host path).
        upper: PathBuf,
        /// The layer's work directory (host path).
        work: PathBuf,
    },
    /// A toolchain cache kept in the workspace's store ([`crate::linux::store`],
    /// ADR 0175): an overlayfs at `path` whose lower directory is the
    /// host's `path` (read-only; none when the host has no such
    /// directory: then `upper` is bound there) and whose upper and work
    /// directories are the store's, kept for the next run of the same
    /// workspace.
    Store {
        /// The cache (path inside the sandbox, the host's when it has one).
        path: PathBuf,
        /// The store's upper directory for it (host path).
        upper: PathBuf,
        /// The store's work directory for it (host path).
        work: PathBuf,
    },
    /// Bind a run's private stage directory onto the workspace's `.git`
    /// (emitted by the reservation step when `.git` is missing; see
    /// [`crate::linux::staging`]).
    Stage {
        /// The `.git` mount point (host path).
        path: PathBuf,
        /// The stage directory (host path).
        from: PathBuf,
    },
}
