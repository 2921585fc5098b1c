//! Deny-list family: the filesystem view and namespaces (mounting, the
//! root, new or joined namespaces, file handles that bypass paths).

use super::entries::{EPERM, deny, nosys};
use super::{ArgMatch, OnMatch, SyscallRule, newer};

/// Namespace-creating clone(2) flags.
const CLONE_NS_FLAGS: &[u64] = &[
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWCGROUP as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
];

pub(super) const RULES: &[SyscallRule] = &[
    deny("mount", libc::SYS_mount, "change the filesystem view"),
    deny(
        "umount2",
        libc::SYS_umount2,
        "uncover hidden paths by unmounting",
    ),
    deny(
        "pivot_root",
        libc::SYS_pivot_root,
        "change the root filesystem",
    ),
    deny("chroot", libc::SYS_chroot, "change the root directory"),
    deny(
        "fsopen",
        libc::SYS_fsopen,
        "new mount API: create a filesystem context",
    ),
    deny(
        "fsconfig",
        libc::SYS_fsconfig,
        "new mount API: configure a filesystem",
    ),
    deny(
        "fsmount",
        libc::SYS_fsmount,
        "new mount API: create a mount",
    ),
    deny(
        "fspick",
        libc::SYS_fspick,
        "new mount API: reconfigure a mount",
    ),
    deny(
        "move_mount",
        libc::SYS_move_mount,
        "new mount API: attach a mount",
    ),
    deny(
        "open_tree",
        libc::SYS_open_tree,
        "new mount API: clone a mount tree",
    ),
    deny(
        "open_tree_attr",
        newer::OPEN_TREE_ATTR,
        "new mount API: clone a mount tree with new attributes",
    ),
    deny(
        "mount_setattr",
        libc::SYS_mount_setattr,
        "change mount flags (e.g. drop read-only)",
    ),
    deny(
        "unshare",
        libc::SYS_unshare,
        "create new namespaces after set-up",
    ),
    deny("setns", libc::SYS_setns, "join another namespace"),
    SyscallRule {
        name: "clone",
        nr: libc::SYS_clone,
        args: ArgMatch::AnyBit {
            arg: 0,
            bits: CLONE_NS_FLAGS,
        },
        on_match: OnMatch::Errno(EPERM),
        why: "clone with CLONE_NEW* flags creates namespaces (plain fork/thread creation allowed)",
    },
    nosys(
        "clone3",
        libc::SYS_clone3,
        "flags are behind a pointer; libc falls back to clone",
    ),
    deny(
        "open_by_handle_at",
        libc::SYS_open_by_handle_at,
        "open files by handle, bypassing paths",
    ),
    deny(
        "name_to_handle_at",
        libc::SYS_name_to_handle_at,
        "obtain file handles",
    ),
];
