//! The helper: a single-threaded process that executes a [`Plan`] and
//! never changes it. It is either the `skarn run` process itself (checked
//! single-threaded, see [`crate::linux::launch::run_in_this_process`]) or, from a
//! multi-threaded caller, a fresh exec of the binary with `__sandbox-helper`.
//!
//! Process tree and the module doing each job:
//! - **helper** (this process, [`run`]): the reservation step
//!   ([`reserve`], undone by [`release`]), the check of files given as
//!   standard descriptors ([`stdio_files`]), the reaper ([`reaper`]), the
//!   run's cgroups ([`cgroup`]), the proxy ([`egress`](self::egress)), the
//!   user/PID/network/IPC/UTS namespaces (or the plan's namespace
//!   fallback), the host private tmp ([`host_tmp`]), then supervision
//!   ([`supervision`]: timeout, signals, report, exit status) and the
//!   persistence checks after the run ([`persistence`]);
//! - **init** (PID 1 of the new PID namespace, [`init`]): builds the new
//!   root in a fresh mount namespace, starts the target and reaps; when it
//!   exits the kernel kills everything left in the namespace;
//! - **target** ([`target`]): new session, parent-death signal, rlimits,
//!   caps dropped, no_new_privs, Landlock, seccomp, descriptors > 2
//!   closed, `execve`.
//!
//! Init and the target report to the helper with typed messages
//! ([`stage_status`]). All three are single-threaded, so allocating
//! between fork and exec is safe.

mod absorb;
mod after_run;
mod cgroup;
mod dead_index;
pub mod dead_runs;
mod egress;
mod git_layer;
mod home_writes;
mod host_tmp;
mod init;
mod layer;
mod layer_report;
mod nested_named;
mod persistence;
mod plan_transfer;
mod publish;
mod reaper;
mod records;
mod release;
mod reserve;
mod signals;
mod stage_status;
mod stdio_files;
mod store;
mod supervision;
mod target;
mod walk_cut;
mod workspace_setup;
mod ws_entries;

use std::os::fd::AsFd;
use std::path::Path;

use crate::linux::plan::{FsOp, NsFallback, Plan};
use crate::{linux::ns, linux::privs, linux::sys, linux::terminal};

pub(crate) use plan_transfer::{
    MAX_PLAN_BYTES, PLAN_ENV, PLAN_FD_ENV, plan_piece_var, read_plan_fd,
};

/// Exit status for a set-up failure.
pub(crate) const EXIT_SETUP: i32 = 2;
/// Exit status when the timeout fired.
pub(crate) const EXIT_TIMEOUT: i32 = 124;
/// Exit status when the command could not be executed.
pub(crate) const EXIT_NOT_EXECUTABLE: i32 = 126;
/// Exit status when the command was not found.
pub(crate) const EXIT_NOT_FOUND: i32 = 127;

fn err_line(msg: &str) {
    sys::write_fd(2, format!("skarn: error: {msg}\n").as_bytes());
}

/// Entry point of `skarn __sandbox-helper`: reads the plan from
/// [`PLAN_ENV`], runs the command, returns the exit status.
pub fn helper_main() -> i32 {
    if let Some(fd) = std::env::var_os(PLAN_FD_ENV) {
        // SAFETY: the helper is single-threaded (fresh exec, no threads spawned).
        unsafe { std::env::remove_var(PLAN_FD_ENV) };
        let Some(raw) = fd
            .to_str()
            .and_then(|f| f.parse().ok())
            .and_then(read_plan_fd)
        else {
            err_line("internal: the sandbox plan could not be read");
            return EXIT_SETUP;
        };
        return match serde_json::from_slice::<Plan>(&raw) {
            Ok(plan) => {
                drop(raw);
                run(plan)
            }
            Err(e) => {
                err_line(&format!("internal: bad sandbox plan: {e}"));
                EXIT_SETUP
            }
        };
    }
    let Some(first) = std::env::var_os(PLAN_ENV) else {
        err_line("internal: sandbox helper started without a plan");
        return EXIT_SETUP;
    };
    // SAFETY: the helper is single-threaded (fresh exec, no threads spawned).
    unsafe { std::env::remove_var(PLAN_ENV) };
    // The text may hold secrets' values (issue 27): zeroed once parsed.
    let mut raw = zeroize::Zeroizing::new(std::os::unix::ffi::OsStringExt::into_vec(first));
    // The rest of a plan too large for one variable (see `launch`).
    for i in 1.. {
        let name = plan_piece_var(i);
        let Some(piece) = std::env::var_os(&name) else {
            break;
        };
        // SAFETY: as above.
        unsafe { std::env::remove_var(&name) };
        let piece = zeroize::Zeroizing::new(std::os::unix::ffi::OsStringExt::into_vec(piece));
        raw.extend_from_slice(&piece);
    }
    let plan: Plan = match serde_json::from_slice(&raw) {
        Ok(p) => p,
        Err(e) => {
            err_line(&format!("internal: bad sandbox plan: {e}"));
            return EXIT_SETUP;
        }
    };
    drop(raw);
    run(plan)
}

/// The plan with what the helper made or saw at run time, handed to init
/// and the target.
#[derive(Clone, Copy)]
pub(super) struct Run<'a> {
    /// The plan.
    pub(super) plan: &'a Plan,
    /// The new-root steps after the reservation step.
    pub(super) fs: &'a [FsOp],
    /// The host private tmp made from the plan's `host_tmp`.
    pub(super) host_tmp: Option<&'a Path>,
    /// The memory cgroup was planned but not made: its `fallback_as`
    /// applies.
    pub(super) memory_fallback: bool,
    /// The walk of the writable grants was cut short: the target's
    /// filter refuses unix sockets ([`walk_cut`]).
    pub(super) deny_unix_sockets: bool,
    /// The run's cgroups as made, and how init enters them.
    cgroup: &'a cgroup::CgroupSetup,
    cgroup_entry: &'a cgroup::Entry,
}

/// A pipe with both ends close-on-exec: (read, write).
fn pipe() -> Option<(libc::c_int, libc::c_int)> {
    let mut p = [0; 2];
    // SAFETY: p is a valid 2-int array.
    (unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) } >= 0).then_some((p[0], p[1]))
}

/// Run a recorded pending check ([`crate::protect::run_record`]).
pub(crate) fn catch_up(record: &[u8]) -> Result<Vec<String>, String> {
    persistence::catch_up(record)
}

/// Namespace flags the helper unshares (all but the mount namespace, which
/// init creates so that this process keeps the host view for clean-up).
fn unshare_flags(plan: &Plan) -> libc::c_int {
    let ns = plan.ns;
    [
        (ns.user, libc::CLONE_NEWUSER),
        (ns.pid, libc::CLONE_NEWPID),
        (ns.net, libc::CLONE_NEWNET),
        (ns.ipc, libc::CLONE_NEWIPC),
        (ns.uts, libc::CLONE_NEWUTS),
    ]
    .into_iter()
    .filter(|(on, _)| *on)
    .fold(0, |acc, (_, f)| acc | f)
}

/// Execute `plan`; the command's exit status.
pub(crate) fn run(mut plan: Plan) -> i32 {
    egress::keep_audit_from_exec(&plan);
    // The plan holds the secrets' values and the run CA's key: a helper
    // started by a fresh `execve` is dumpable again (atk27l F12).
    if plan.egress.as_ref().is_some_and(|e| !e.secrets.is_empty())
        && let Err(e) = crate::secrets::no_core::forbid_core_dumps()
    {
        err_line(&format!(
            "sandbox set-up failed: cannot turn off core dumps: {e}"
        ));
        return EXIT_SETUP;
    }
    if plan.die_with_parent {
        let _ = privs::set_parent_death_signal(libc::SIGKILL);
    }
    if plan
        .fs
        .iter()
        .any(|o| matches!(o, crate::linux::plan::FsOp::IdmapBind { .. }))
        && let Err(e) = crate::linux::idmap::prepare()
    {
        err_line(&format!(
            "sandbox set-up failed: user namespace for the idmapped binds: {e}"
        ));
        return EXIT_SETUP;
    }
    let mut report = plan.report.clone();
    if plan.workspace_idmap
        && let Err(e) = crate::linux::idmap_workspace::prepare_for(&plan.workspace)
    {
        report.degrade(format!(
            "workspace {}: the user namespace for its owner's id mapping could not be made \
             ({e}): files there that only their owner may write are read-only to the command",
            plan.workspace.display()
        ));
    }
    let (runs, mut record) = records::Runs::start(&plan, &mut report);
    if let Some(p) = runs.edit_since_planned(&plan) {
        // The agent's file tool was allowed to write there while this run
        // was being planned: not held by the plan (ADR 0244).
        if let Some(r) = record.take() {
            r.finish();
        }
        sys::write_fd(
            2,
            format!(
                "skarn: sandbox: the agent's file tool was allowed to write {} while this run \
                 was being prepared; the command did not start: run it again\n",
                crate::protect::terminal_filter::printable(&p.display().to_string())
            )
            .as_bytes(),
        );
        return EXIT_SETUP;
    }
    let Ok(workspace_setup::Workspace {
        cow,
        gitl,
        mut reserved,
        rnotes,
    }) = workspace_setup::set_up(&plan, &runs, &mut report)
    else {
        return EXIT_SETUP;
    };
    if let Some(why) = stdio_files::refusal(&reserved.fs) {
        err_line(&why);
        release::release(reserved);
        return EXIT_SETUP;
    }
    let cg_parents = cgroup::parents(&plan);
    let reaper = if !cg_parents.is_empty()
        || reserved.leaves_anything()
        || cow.is_some()
        || record.is_some()
    {
        reaper::spawn(&cg_parents, &reserved, cow.as_ref(), record.as_ref())
    } else {
        Some(())
    };
    let cg = cgroup::set_up(&plan, reaper.is_some(), &mut report);
    let entry = cg.cgroup.as_ref().map(|c| c.entry()).unwrap_or_default();
    // Init born into a v2 cgroup also gets its PID namespace from that
    // clone3: a clone failing after the kernel gave it a pid would leave an
    // unshared PID namespace unusable (no first process), while a failed
    // clone3 with CLONE_NEWPID leaves nothing behind.
    let pid_ns_by_clone = entry.born_into.is_some() && plan.ns.pid;
    let proxy = match egress::start(&mut plan) {
        Ok(p) => p,
        Err(e) => {
            err_line(&format!("cannot start the network proxy: {e}"));
            release::release(reserved);
            return EXIT_SETUP;
        }
    };
    // The workspace's store, locked by this process (and init) only: the
    // reaper and the proxy, started before, do not hold it.
    let _store = store::hold(&plan, &mut reserved.fs, &mut report);
    // The proxy has the secrets' values and the CA key now; init, forked
    // next, must not carry them.
    if let Some(e) = plan.egress.as_mut() {
        e.forget_secrets();
    }
    // Published ports: bound on the host before the namespace is entered.
    let published = match publish::bind(&plan.publish) {
        Ok(l) => l,
        Err(e) => {
            err_line(&format!("--publish: cannot listen on the host: {e}"));
            if let Some(p) = proxy {
                p.kill();
            }
            release::release(reserved);
            return EXIT_SETUP;
        }
    };
    let flags = unshare_flags(&plan)
        & !if pid_ns_by_clone {
            libc::CLONE_NEWPID
        } else {
            0
        };
    if flags != 0 {
        let r = sys::unshare(flags).and_then(|_| {
            if plan.ns.user {
                ns::write_self_maps(plan.uid, plan.gid)
            } else {
                Ok(())
            }
        });
        if let Err(e) = r {
            if let Some(p) = proxy {
                p.kill();
            }
            release::release(reserved);
            if let Some(c) = cg.cgroup {
                c.remove();
            }
            if let Some(h) = record.take() {
                h.finish();
            }
            return fall_back(&plan, &e);
        }
    }
    report.layers.push(layer_report::namespaces(&plan));
    let host_tmp = plan.host_tmp.as_ref().and_then(host_tmp::make);

    // Host terminal settings, put back after the run whatever happens to it.
    let tty = terminal::Saved::take();
    let Some((rd, wr)) = pipe() else {
        err_line("pipe2 failed");
        return EXIT_SETUP;
    };
    // Cgroup hand-shake (v2 only): init waits on `cg_rd` until the helper
    // has moved it into the run's cgroup (b'1') or failed to (b'0').
    let (cg_rd, cg_wr) = if entry.by_helper.is_empty() {
        (-1, -1)
    } else {
        match pipe() {
            Some(p) => p,
            None => {
                err_line("pipe2 failed");
                return EXIT_SETUP;
            }
        }
    };
    // With the layer, the other writable grants are still checked after
    // the run as in the direct mode (the layer vets only the workspace).
    let others = cow
        .as_ref()
        .and_then(|_| persistence::layered_others(&plan));
    let saved = match (&cow, &others) {
        (None, _) => Some(persistence::before(
            &plan,
            &reserved.fs,
            &reserved.nested,
            rnotes.repos_cut,
        )),
        (Some(_), Some(o)) => Some(persistence::before_layered(
            o,
            &plan.workspace,
            &reserved.nested,
            rnotes.repos_cut,
        )),
        (Some(_), None) => None,
    };
    let checked_after = match &cow {
        None => plan.after_run.as_ref(),
        Some(_) => others.as_ref(),
    };
    if let Some(h) = &record
        && let Some(saved) = &saved
        && let Some(bytes) = persistence::pending(checked_after, saved, &reserved.nested)
        && let Err(e) = h.pending(&bytes)
    {
        report.notes.push(format!(
            "could not record the check after the run ({e}): if this run is killed, that \
             check is not caught up later"
        ));
    }
    let stages = Run {
        plan: &plan,
        fs: &reserved.fs,
        host_tmp: host_tmp.as_deref(),
        memory_fallback: cg.memory_fallback,
        deny_unix_sockets: rnotes.walk_cut.is_some(),
        cgroup: &cg,
        cgroup_entry: &entry,
    };
    // v2: init born inside the run's cgroup when the kernel can; else the
    // PID namespace as usual, a fork, and the helper's move.
    let born = entry
        .born_into
        .as_ref()
        // SAFETY: the helper is single-threaded (a fresh exec that starts no threads).
        .and_then(|fd| unsafe { sys::fork_into_cgroup(fd.as_fd(), pid_ns_by_clone) }.ok());
    let forked = match born {
        Some(pid) => Ok(pid),
        None if pid_ns_by_clone => sys::unshare(libc::CLONE_NEWPID).and_then(|()| {
            // SAFETY: the helper is single-threaded (a fresh exec that
            // starts no threads).
            unsafe { sys::fork() }
        }),
        // SAFETY: the helper is single-threaded (a fresh exec that starts no threads).
        None => unsafe { sys::fork() },
    };
    let child = match forked {
        Ok(0) => {
            // SAFETY: closing our copies of the helper's pipe ends.
            unsafe {
                libc::close(rd);
                if cg_wr >= 0 {
                    libc::close(cg_wr);
                }
            }
            init::init_main(&stages, wr, cg_rd)
        }
        Ok(pid) => pid,
        Err(e) => {
            err_line(&format!("fork failed: {e}"));
            return EXIT_SETUP;
        }
    };
    // Init has its own copy of the prepared idmapped trees.
    crate::linux::idmap::release();
    crate::linux::idmap_workspace::release();
    if cg_wr >= 0 {
        let joined = born.is_some() || entry.attach(child).is_ok();
        sys::write_fd(cg_wr, if joined { b"1" } else { b"0" });
        // SAFETY: closing our own pipe ends.
        unsafe {
            libc::close(cg_wr);
            libc::close(cg_rd);
        }
    }
    drop(entry);
    // SAFETY: closing our copy of the write end.
    unsafe { libc::close(wr) };
    // Published ports: the relay, forked now that init is (ADR 0183).
    published.start(plan.ns.pid && !pid_ns_by_clone);
    signals::install_forwarders();
    let out = supervision::supervise(child, rd, plan.timeout_ms, plan.ns.pid, &cg.cgroup);
    // The terminal first: anything written to it before (a note on
    // stderr) would block for good if the command stopped its output.
    after_run::Ending {
        tty,
        cgroup: cg,
        git_layer: gitl,
        saved,
        cow,
        others,
        reserved,
        record,
        proxy,
        host_tmp,
        degraded: rnotes.degraded,
    }
    .end(&plan, report, out)
}

/// Creating the namespaces failed at run time: run the plan's fallback
/// (planned for this host without namespaces), or refuse as it says.
fn fall_back(plan: &Plan, e: &std::io::Error) -> i32 {
    match &plan.ns_fallback {
        Some(NsFallback::Plan { plan: f }) => {
            let mut p = (**f).clone();
            // Set by the caller after planning.
            p.report_format = plan.report_format;
            p.report.removed_env = plan.report.removed_env.clone();
            p.report.provenance = plan.report.provenance.clone();
            p.report
                .degrade(format!("creating namespaces failed at run time: {e}"));
            run(p)
        }
        Some(NsFallback::Refuse { reason }) => {
            err_line(&format!("{reason} (namespaces failed: {e})"));
            EXIT_SETUP
        }
        None => {
            err_line(&format!("creating namespaces failed: {e}"));
            EXIT_SETUP
        }
    }
}
