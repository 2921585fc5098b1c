//! Landlock: the filesystem/network allow-list and the ABI 6 scopes.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope,
};

use crate::plan::{LandlockAccess, LandlockPlan};

/// Highest ABI this library knows.
const BEST: ABI = ABI::V7;

/// Errors applying a Landlock ruleset.
#[derive(Debug, thiserror::Error)]
pub enum LandlockError {
    /// The landlock crate reported an error.
    #[error("landlock: {0}")]
    Ruleset(#[from] landlock::RulesetError),
}

/// What the kernel enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enforced {
    /// Everything requested.
    Fully,
    /// Part of it (older ABI).
    Partially,
    /// Nothing (Landlock disabled).
    Not,
}

/// The Landlock ABI version offered by the running kernel (0 = none).
pub fn kernel_abi() -> u32 {
    // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
    // only returns the ABI version; it reads no memory.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    if r < 0 { 0 } else { r as u32 }
}

fn fs_access(kind: LandlockAccess) -> BitFlags<AccessFs> {
    match kind {
        LandlockAccess::Read => AccessFs::ReadFile | AccessFs::ReadDir,
        LandlockAccess::ReadExec => AccessFs::from_read(BEST),
        LandlockAccess::ReadWrite => AccessFs::from_all(BEST),
        LandlockAccess::Device => {
            AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev | AccessFs::ReadDir
        }
        // Read-only: a uid-0 sandbox (root caller) must not write /proc/sys
        // or /proc/sysrq-trigger, which DAC alone would allow it.
        LandlockAccess::Proc => AccessFs::ReadFile | AccessFs::ReadDir,
        LandlockAccess::ListOnly => AccessFs::ReadDir.into(),
    }
}

fn is_dir(p: &Path) -> Option<bool> {
    std::fs::metadata(p).ok().map(|m| m.is_dir())
}

/// Expand a grant so that none of `secrets` is reachable through it: a
/// directory containing a secret is replaced by rules on each of its
/// children except the secret (recursively). Used when no mount namespace
/// can hide the secret. Files created later directly in such a directory
/// are not covered.
pub fn expand_excluding(path: &Path, secrets: &[PathBuf], out: &mut Vec<PathBuf>) {
    if secrets.iter().any(|s| path.starts_with(s)) {
        return;
    }
    let inside = secrets.iter().any(|s| s.starts_with(path) && s != path);
    if !inside {
        out.push(path.to_path_buf());
        return;
    }
    if let Ok(rd) = std::fs::read_dir(path) {
        for e in rd.flatten() {
            expand_excluding(&e.path(), secrets, out);
        }
    }
}

/// Apply the plan's ruleset to the calling thread (and its future
/// children). Sets no_new_privs. Missing paths are skipped.
pub fn apply(plan: &LandlockPlan) -> Result<Enforced, LandlockError> {
    let mut rs = Ruleset::default().handle_access(AccessFs::from_all(BEST))?;
    let mut net: BitFlags<AccessNet> = BitFlags::empty();
    if plan.deny_tcp_bind {
        net |= AccessNet::BindTcp;
    }
    if plan.deny_tcp_connect {
        net |= AccessNet::ConnectTcp;
    }
    if !net.is_empty() {
        rs = rs.handle_access(net)?;
    }
    let mut scopes: BitFlags<Scope> = BitFlags::empty();
    if plan.scope_signal {
        scopes |= Scope::Signal;
    }
    if plan.scope_abstract_unix {
        scopes |= Scope::AbstractUnixSocket;
    }
    if !scopes.is_empty() {
        rs = rs.scope(scopes)?;
    }
    let mut created = rs.create()?;
    for rule in &plan.rules {
        let mut paths = Vec::new();
        if plan.secrets.is_empty() {
            paths.push(rule.path.clone());
        } else {
            expand_excluding(&rule.path, &plan.secrets, &mut paths);
        }
        for p in paths {
            let Some(dir) = is_dir(&p) else { continue };
            let Ok(fd) = PathFd::new(&p) else { continue };
            let mut access = fs_access(rule.access);
            if !dir {
                access &= AccessFs::from_file(BEST);
            }
            if access.is_empty() {
                continue;
            }
            created = created.add_rule(PathBeneath::new(fd, access))?;
        }
    }
    let st = created.restrict_self()?;
    Ok(match st.ruleset {
        RulesetStatus::FullyEnforced => Enforced::Fully,
        RulesetStatus::PartiallyEnforced => Enforced::Partially,
        RulesetStatus::NotEnforced => Enforced::Not,
    })
}

/// Restrict the calling thread with a ruleset that grants nothing: no file
/// can be opened, created or executed, no TCP bind/connect, and (ABI 6) no
/// signals or abstract-unix connections outside the domain. Sets
/// no_new_privs. Meant for a worker that already holds every descriptor it
/// needs.
pub fn restrict_nothing() -> Result<Enforced, LandlockError> {
    apply(&LandlockPlan {
        rules: Vec::new(),
        secrets: Vec::new(),
        deny_tcp_bind: true,
        deny_tcp_connect: true,
        scope_signal: true,
        scope_abstract_unix: true,
    })
}
