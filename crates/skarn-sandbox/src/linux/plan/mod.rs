//! The pure planner: [`plan`] turns a [`Policy`] and [`HostFacts`] into a
//! [`Plan`], the final list of steps the helper executes. It looks at
//! nothing but its arguments. Everything decided for a run is decided here
//! (including the plan to fall back to when namespaces fail at run time);
//! what can only be observed at run time is a planned step with its rule.
//!
//! Parts, in the order they run: [`grants`](self::grants) (merge, secrets),
//! [`filesystem`](self::filesystem) (namespaces, new root),
//! [`protect`](self::protect) (masks, persistence, pins, reservation),
//! [`landlock`](self::landlock), [`seccomp`](self::seccomp),
//! [`network`](self::network), [`limits`](self::limits),
//! [`hint`](self::hint). The data types are in `fs_op`, `mechanisms` and
//! `model`.

pub mod egress;
mod filesystem;
mod fs_op;
mod grant_named;
mod grants;
mod held;
mod hint;
pub mod idmap;
mod landlock;
mod limits;
mod mechanisms;
mod mentions;
mod model;
mod network;
mod protect;
mod protect_checks;
mod seccomp;
mod trusted;

use std::ffi::OsString;

pub use fs_op::{Access, FsOp};
pub use held::failure_line as held_failure_line;
pub use hint::ADVICE as FAILURE_ADVICE;
pub use hint::READ_ADVICE;
pub use mechanisms::{LandlockAccess, LandlockPlan, LandlockRule, Namespaces, Rlimit, SeccompPlan};
pub use model::{
    AfterRun, HomeQuarantine, HostTmp, MemoryCgroup, NsFallback, Plan, PlanError, ReportFormat,
    Reservation, WorkspaceLayer,
};

use crate::linux::host::HostFacts;
use crate::policy::Policy;
use crate::report::{Backend, RestrictionReport, Status};

/// Turn a policy into a plan for this host. Pure: looks at nothing but its
/// arguments (existence of paths is handled by the helper at run time,
/// by the rules the plan states).
/// Grants are expected canonical ([`crate::policy::grants::canonicalize`]): the
/// secret checks compare paths, and a grant reached through a symlink is
/// bound at what the symlink named when the plan was made.
pub fn plan(policy: &Policy, host: &HostFacts, argv: &[OsString]) -> Result<Plan, PlanError> {
    let mut p = plan_for(policy, host, argv)?;
    if p.ns.helper_unshares_any() {
        let without = crate::linux::plan::idmap::without_namespaces(host);
        p.ns_fallback = Some(match plan_for(policy, &without, argv) {
            Ok(f) => NsFallback::Plan { plan: Box::new(f) },
            Err(e) => NsFallback::Refuse {
                reason: e.to_string(),
            },
        });
    }
    Ok(p)
}

/// The line naming a program the host has outside what the run may see
/// (printed when the command is not found, exit 127), for callers to put
/// in [`Plan::not_found_hint`]. Looks at the host (the command's `PATH`,
/// the file system), so it stays out of the pure [`plan`].
pub(crate) fn not_found_hint(
    policy: &Policy,
    host: &HostFacts,
    plan: &Plan,
    path_var: Option<&std::ffi::OsStr>,
) -> Option<String> {
    // Only a new root hides host programs from the command.
    if !plan.ns.mount {
        return None;
    }
    let g = grants::collect(policy, host, &mut empty_report(policy, host)).ok()?;
    let own = plan
        .set_env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| std::ffi::OsString::from(v));
    hint::not_found_hint(&plan.argv, own.as_deref().or(path_var), &g)
}

/// The line naming paths the command names that the host has outside
/// what the run may read (printed when the command fails and nothing was
/// recorded), for callers to put in [`Plan::read_hint`]. Looks at the
/// host's file system, so it stays out of the pure [`plan`].
pub(crate) fn read_hint(policy: &Policy, host: &HostFacts, plan: &Plan) -> Option<String> {
    // Only a new root hides host paths from the command.
    if !plan.ns.mount {
        return None;
    }
    let g = grants::collect(policy, host, &mut empty_report(policy, host)).ok()?;
    hint::read_hint(&plan.argv, host.home.as_deref(), &g)
}

/// One plan, without its namespace fallback.
fn plan_for(policy: &Policy, host: &HostFacts, argv: &[OsString]) -> Result<Plan, PlanError> {
    if argv.is_empty() {
        return Err(PlanError::NoCommand);
    }
    grants::check_absolute(policy)?;
    let mut report = empty_report(policy, host);
    let abi = host.landlock_abi;
    if !host.namespaces && abi == 0 {
        let why = "this host offers neither namespaces nor Landlock".to_string();
        if policy.fail_closed {
            return Err(PlanError::CannotEnforce(why));
        }
        report.status = Status::NotEnforced;
        report
            .notes
            .push(format!("{why}: only seccomp and limits apply"));
    }
    if !host.seccomp && policy.fail_closed {
        // Without the filter, ptrace, bpf, io_uring, new user namespaces and
        // the socket families the plan refuses stay open (attack atk24i F4).
        return Err(PlanError::CannotEnforce(
            "this host cannot install seccomp filters, so dangerous syscalls (ptrace, bpf, \
             io_uring, ...) would not be filtered"
                .to_string(),
        ));
    }
    let g = grants::collect(policy, host, &mut report)?;
    let ns = filesystem::namespaces(policy, host, &mut report);
    let home = filesystem::private_home(policy, &g, ns, &mut report);
    let mut fs = Vec::new();
    if ns.mount {
        fs = filesystem::root_steps(policy, host, &g, home.as_ref());
    }
    let store = filesystem::store_steps(policy, host, home.as_ref(), &mut fs, &mut report);
    fs.extend(protect::steps(policy, host, &g, ns, &mut report)?);
    let landlock = landlock::plan(policy, abi, &g, ns, home.as_ref(), &mut report);
    let seccomp = seccomp::plan(policy, host, ns, &mut report);
    network::notes(policy, ns, abi, seccomp.is_some(), &mut report);
    let limits = limits::plan(policy, host, ns, &mut report);

    let ws = policy.workspace.clone();
    let mut set_env = Vec::new();
    if ns.mount {
        set_env.push(("TMPDIR".to_string(), "/tmp".to_string()));
    }
    // ---- egress (issue 11) ----
    let egress = egress::plan_egress(&policy.net, ns.net, &mut set_env);
    if crate::policy::offline_env::is_offline(&policy.net) {
        set_env.extend(crate::policy::offline_env::offline_env(&policy.net));
        report
            .notes
            .push(crate::policy::offline_env::offline_note());
    }
    if !ns.pid {
        report.degrade(
            "no PID namespace: host processes are visible in /proc; the timeout kills the \
             command's process group",
        );
    }
    let host_tmp = (!ns.mount).then(|| HostTmp {
        template: "/tmp/skarn-tmp-XXXXXX".into(),
        env: "TMPDIR".into(),
        landlock: landlock.as_ref().map(|_| LandlockAccess::ReadWrite),
    });
    Ok(Plan {
        argv: argv.to_vec(),
        cwd: policy.cwd.clone().unwrap_or_else(|| ws.clone()),
        runs_dir: host.home.as_deref().map(crate::protect::run_record::dir),
        state_keep: policy.state_keep,
        uid: host.uid,
        gid: host.gid,
        ns,
        loopback_up: network::loopback_up(policy, ns),
        stdio_sockets_kept: matches!(policy.net, crate::policy::NetPolicy::AllowAll),
        egress,
        fs,
        reservation: ns.mount.then(|| protect::reservation(policy, host, &g)),
        landlock,
        seccomp,
        rlimits: limits.rlimits,
        cgroup: limits.cgroup,
        memory_cgroup: limits.memory_cgroup,
        tmpfs_bytes: limits.tmpfs_bytes,
        timeout_ms: limits.timeout_ms,
        set_env,
        host_tmp,
        die_with_parent: true,
        fail_closed: policy.fail_closed,
        report,
        report_format: ReportFormat::None,
        failure_hint: hint::failure_hint(policy, &g, ns, home.is_some()),
        not_found_hint: None,
        read_hint: None,
        caller: Default::default(),
        publish: Vec::new(),
        tmp_watch: hint::tmp_watch(&ws, ns),
        // Seen when planned (held only with a mount namespace: the
        // report says otherwise).
        pending_edits: held::paths(host, &g),
        after_run: (ns.mount && policy.protect_persistence)
            .then(|| protect::after_run(policy, host, &g)),
        ns_fallback: None,
        workspace_idmap: grants::workspace_idmap(policy, host, &g, ns.mount),
        // With the protections off (`--no-protect-persistence`) there is
        // nothing to vet nor reserve: the workspace is written directly.
        workspace_layer: (ns.mount
            && policy.protect_persistence
            && policy.workspace_layer == crate::policy::WorkspaceLayerMode::Cow)
            .then(|| WorkspaceLayer {
                state: host
                    .home
                    .as_ref()
                    .map(|h| h.join(".local/state/skarn/layers")),
                asked: policy.sources.contains_key("workspace_layer"),
            }),
        store,
        workspace: ws,
    })
}

/// The report before any part has spoken.
fn empty_report(policy: &Policy, host: &HostFacts) -> RestrictionReport {
    RestrictionReport {
        backend: Backend::Linux,
        status: Status::FullyEnforced,
        notes: Vec::new(),
        net: format!(
            "{} ({})",
            policy.net.as_str(),
            policy
                .sources
                .get("net")
                .map(String::as_str)
                .unwrap_or("default")
        ),
        grants: Vec::new(),
        limits: Vec::new(),
        removed_env: Vec::new(),
        landlock_abi: host.landlock_abi,
        egress: None,
        provenance: Default::default(),
        layers: Vec::new(),
        workspace_changes: None,
        denied: Vec::new(),
    }
}
