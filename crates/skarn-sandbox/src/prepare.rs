//! The front door: every caller that starts a sandboxed command goes
//! through [`prepare`] (Linux) or [`settle_grants`] (every OS), so the
//! security steps between "a policy was assembled" and "a plan runs" are
//! written once.
//!
//! The steps, in order:
//! 1. **Canonical grants** ([`crate::policy::grants::canonicalize`]): each grant is
//!    decided by what its path is (links resolved), not by its name.
//! 2. **The grant log** ([`crate::policy::granted::record_policy`]): the workspace
//!    and write grants are recorded before the command starts, so a later
//!    run does not trust a `skarn.toml` this one could plant. Servers of
//!    `skarn serve` are recorded like `skarn run` (they used to be missed:
//!    a server's write grant could plant `sub/skarn.toml` that a later
//!    `skarn run` in `sub` trusted).
//! 3. **Host facts for this policy** ([`HostFacts::observe_policy`]): the
//!    places the host trusts (home files through links, git's global
//!    programs, `PATH`) that lead into *this* policy's grants. A caller
//!    reusing probed facts (a gateway starting many servers) still gets
//!    them observed again for each policy; only root's walk of the system
//!    directories is done once.
//! 4. **Non-project workspaces** ([`crate::policy::workspace_kind`]): for
//!    [`Purpose::Run`], a workspace the user allowed although it is not a
//!    project (a flag) is protected like a home.
//! 5. **Other names of hidden files** ([`crate::protect::secret_names`]): hard
//!    links and bind mounts of them inside the grants are hidden too.
//! 6. **The plan** ([`crate::plan()`]), with the grant notes and, for
//!    [`Purpose::Run`], the hint naming a host program the sandbox hides;
//!    the agent's pending file-tool edits ([`crate::protect::edit_lease`],
//!    ADR 0244) are held by every plan.

use std::path::Path;

use crate::Policy;

/// Who starts the sandboxed command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// `skarn run` (a user, an agent's hook, the gateway's `run` tool):
    /// the workspace was chosen by whoever started it.
    Run,
    /// A downstream MCP server of `skarn serve`: its workspace is its
    /// configured working directory or its private state directory.
    Server,
}

/// Why a command cannot be prepared.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    /// A grant could not be made canonical.
    #[error(transparent)]
    Grant(#[from] crate::policy::grants::GrantError),
    /// The policy cannot be planned on this host.
    #[cfg(target_os = "linux")]
    #[error(transparent)]
    Plan(#[from] crate::PlanError),
}

/// What [`settle_grants`] decided.
#[derive(Debug, Default)]
pub struct Settled {
    /// Notes for the report (grants changed by canonicalisation).
    pub notes: Vec<String>,
    /// Warnings the caller shows at once (the grant log was not written).
    pub warnings: Vec<String>,
}

/// Steps 1 and 2, on every OS: make `policy`'s grants canonical and record
/// its writable directories in `home`'s grant log.
pub fn settle_grants(policy: &mut Policy, home: Option<&Path>) -> Result<Settled, PrepareError> {
    let notes = crate::policy::grants::canonicalize(policy)?;
    let warnings = crate::policy::granted::record_policy(policy, home);
    Ok(Settled { notes, warnings })
}

/// What to prepare.
#[cfg(target_os = "linux")]
pub struct Request<'a> {
    /// Who starts the command.
    pub purpose: Purpose,
    /// The assembled policy (grants not yet canonical).
    pub policy: Policy,
    /// The command and its arguments.
    pub argv: &'a [std::ffi::OsString],
    /// The user's home directory (where the grant log lives).
    pub home: Option<&'a Path>,
    /// Host facts probed (and walked) earlier, to reuse; `None` probes.
    pub host: Option<crate::HostFacts>,
    /// The caller's `PATH`, for the hint naming a hidden host program.
    pub path_var: Option<&'a std::ffi::OsStr>,
}

/// A prepared command: the final policy, the host facts it was planned
/// with, and the plan.
#[cfg(target_os = "linux")]
#[derive(Debug)]
pub struct Prepared {
    /// The policy with canonical grants.
    pub policy: Policy,
    /// The host facts observed for this policy.
    pub host: crate::HostFacts,
    /// The plan; its report carries the grant notes.
    pub plan: crate::Plan,
    /// Warnings the caller shows at once.
    pub warnings: Vec<String>,
}

/// Steps 1 to 6 (see the module text).
#[cfg(target_os = "linux")]
pub fn prepare(req: Request<'_>) -> Result<Prepared, PrepareError> {
    let Request {
        purpose,
        mut policy,
        argv,
        home,
        host,
        path_var,
    } = req;
    crate::protect::home_mentions::set_scan_cache_max(
        policy
            .scan_cache_max
            .unwrap_or(crate::protect::home_mentions::DEFAULT_SCAN_CACHE_MAX),
    );
    let settled = settle_grants(&mut policy, home)?;
    // From here to the plan nothing is written on the host: each name's
    // answer is asked once (ADR 0247).
    let _facts = crate::policy::link_facts::Scope::enter();
    let host = match host {
        Some(mut h) => {
            h.observe_policy_without_walk(&policy);
            h
        }
        None => {
            let mut h = crate::HostFacts::probe();
            h.observe_policy(&policy);
            h
        }
    };
    let mut host = host;
    // The agent's file tools' pending edits (ADR 0244): held by every
    // run, whoever starts it.
    let mut leases_cut = false;
    if let Some(h) = home {
        (host.pending_edits, leases_cut) = crate::protect::edit_lease::pending(h);
    }
    if purpose == Purpose::Run
        && let Some(n) = crate::policy::workspace_kind::non_project(&policy.workspace, home)
    {
        // Allowed by a flag (`skarn run` refuses it otherwise).
        host.treat_workspace_as_home(&policy, n.to_string());
    }
    // The credential files inside the toolchain trees every run reads
    // (atk22l F14): hidden in every run.
    let toolchain = crate::secrets::toolchain_files::hide(&mut policy, home);
    // Other names (hard links, bind mounts) of hidden files inside the
    // grants are hidden too, for every run (atk27i F2, atk22g F6).
    let other = crate::protect::secret_names::find(&policy, &host);
    for (p, _) in &other.hide {
        policy.deny_read.push(crate::policy::Grant::new(
            p.clone(),
            "default (another name of a hidden file)",
        ));
    }
    let mut plan = crate::plan(&policy, &host, argv)?;
    for (p, orig) in &other.hide {
        plan.report.notes.push(format!(
            "{} is another name (a hard link or another mount) of {}: hidden",
            p.display(),
            orig.display()
        ));
    }
    if let Some(cut) = other.cut {
        plan.report.degrade(cut);
    }
    plan.report.notes.extend(toolchain.notes);
    plan.set_env.extend(toolchain.env);
    if purpose == Purpose::Run {
        plan.not_found_hint = crate::linux::plan::not_found_hint(&policy, &host, &plan, path_var);
        plan.read_hint = crate::linux::plan::read_hint(&policy, &host, &plan);
    }
    plan.report.notes.extend(settled.notes);
    if leases_cut {
        plan.report.notes.push(format!(
            "more than {} paths of pending edits: the rest are not held by this run",
            crate::protect::edit_lease::MAX_HELD
        ));
    }
    let mut warnings = settled.warnings;
    warnings.extend(crate::linux::simulate::simulation_ignored());
    if purpose == Purpose::Run
        && policy.protect_persistence
        && let Some(w) = crate::protect::envrc::over_cap(&policy.workspace.join(".envrc"))
    {
        warnings.push(w);
    }
    Ok(Prepared {
        policy,
        host,
        plan,
        warnings,
    })
}
