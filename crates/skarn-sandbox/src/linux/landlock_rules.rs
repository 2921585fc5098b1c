//! Landlock: the filesystem/network allow-list and the ABI 6 scopes, as
//! a thin user of the confinement kit (`skarn-confine`): the kit pins the
//! ABI and applies the ruleset; this file maps the plan's access classes
//! to rights and chooses the compatibility level of each part. Every part
//! is best effort here: the helper decides what a partial or missing
//! Landlock means (with no mount namespace and `fail_closed`, a refusal).

use std::path::{Path, PathBuf};

use skarn_confine::landlock::{
    self as ll, Access, AccessFs, AccessNet, BitFlags, Need, PINNED_ABI as BEST, Scope,
};

use crate::linux::plan::{LandlockAccess, LandlockPlan};

/// Errors applying a Landlock ruleset.
#[derive(Debug, thiserror::Error)]
pub enum LandlockError {
    /// The kit (the landlock crate) reported an error.
    #[error(transparent)]
    Ruleset(#[from] ll::LandlockError),
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
    ll::kernel_abi()
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

/// Expand a grant so that none of `secrets` is reachable through it: a
/// directory containing a secret is replaced by rules on each of its
/// children except the secret (recursively). Used when no mount namespace
/// can hide the secret. Files created later directly in such a directory
/// are not covered.
pub(crate) fn expand_excluding(path: &Path, secrets: &[PathBuf], out: &mut Vec<PathBuf>) {
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
/// children). Requires no_new_privs. Missing paths are skipped.
pub fn apply(plan: &LandlockPlan) -> Result<Enforced, LandlockError> {
    apply_reporting(plan).map(|o| match o.status {
        skarn_confine::Status::FullyEnforced => Enforced::Fully,
        skarn_confine::Status::PartiallyEnforced => Enforced::Partially,
        skarn_confine::Status::NotEnforced => Enforced::Not,
    })
}

/// [`apply`], returning the kit's per-part outcome.
pub(crate) fn apply_reporting(plan: &LandlockPlan) -> Result<ll::Outcome, LandlockError> {
    let mut net: BitFlags<AccessNet> = BitFlags::empty();
    if plan.deny_tcp_bind {
        net |= AccessNet::BindTcp;
    }
    if plan.deny_tcp_connect {
        net |= AccessNet::ConnectTcp;
    }
    let mut scopes: BitFlags<Scope> = BitFlags::empty();
    if plan.scope_signal {
        scopes |= Scope::Signal;
    }
    if plan.scope_abstract_unix {
        scopes |= Scope::AbstractUnixSocket;
    }
    let mut rules = Vec::new();
    for rule in &plan.rules {
        let mut paths = Vec::new();
        if plan.secrets.is_empty() {
            paths.push(rule.path.clone());
        } else {
            expand_excluding(&rule.path, &plan.secrets, &mut paths);
        }
        let access = fs_access(rule.access);
        rules.extend(paths.into_iter().map(|p| (p, access)));
    }
    let req = ll::Request {
        fs_floor: Need::BestEffort,
        fs_newer: Need::BestEffort,
        net: (!net.is_empty()).then_some((net, Need::BestEffort)),
        scopes: (!scopes.is_empty()).then_some((scopes, Need::BestEffort)),
        rules,
    };
    Ok(ll::restrict_self(&req)?)
}

/// Restrict the calling thread with a ruleset that grants nothing: no file
/// can be opened, created or executed, no TCP bind/connect, and (ABI 6) no
/// signals or abstract-unix connections outside the domain. Sets
/// no_new_privs. Meant for a worker that already holds every descriptor it
/// needs.
pub(crate) fn restrict_nothing() -> Result<Enforced, LandlockError> {
    apply(&LandlockPlan {
        rules: Vec::new(),
        secrets: Vec::new(),
        deny_tcp_bind: true,
        deny_tcp_connect: true,
        scope_signal: true,
        scope_abstract_unix: true,
    })
}
