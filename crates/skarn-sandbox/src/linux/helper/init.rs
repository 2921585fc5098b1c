//! Init: PID 1 of the sandbox. Builds the new root in a fresh mount
//! namespace, brings `lo` up, takes the proxy's sockets, waits to be in the
//! run's cgroup, starts the target and reaps; when it exits the kernel
//! kills everything left in the PID namespace.

use std::path::{Path, PathBuf};

use skarn_confine::{Enforcement, Layer};

use super::signals::{forward_pending, install_forwarders};
use super::stage_status::{StageMsg, fatal, layer, send};
use super::{Run, home_writes, layer_report, target};
use crate::linux::plan::FsOp;
use crate::{linux::mounts, linux::ns, linux::privs, linux::sys};

/// PID 1 of the sandbox: build the root, start the target, reap.
pub(super) fn init_main(run: &Run, wr: libc::c_int, cg_rd: libc::c_int) -> ! {
    let plan = run.plan;
    let _ = privs::set_parent_death_signal(libc::SIGKILL);
    // v1 cgroups: enter them now, moving this (only) thread (see `cgroup`).
    let entered = run.cgroup_entry.join_own().is_ok();
    let mut joined = run.cgroup.cgroup.is_none() || (entered && !run.cgroup_entry.failed);
    let mut home_snap = None;
    if plan.ns.mount {
        if let Err(e) = sys::unshare(libc::CLONE_NEWNS) {
            fatal(wr, &format!("mount namespace: {e}"));
        }
        let mut notes = Vec::new();
        let roots = plan
            .egress
            .as_ref()
            .and_then(|e| e.upstream_roots.as_ref())
            .map_or("", |r| r.pem.as_str());
        if let Err(e) = mounts::build_root(run.fs, roots, plan.tmpfs_bytes, &mut notes) {
            fatal(wr, &e.to_string());
        }
        let steps = run.fs.len();
        layer(
            wr,
            if notes.is_empty() {
                Enforcement::full(
                    Layer::Mounts,
                    format!("new root with the granted paths only ({steps} steps)"),
                )
            } else {
                Enforcement::partial(
                    Layer::Mounts,
                    format!(
                        "new root with the granted paths only ({steps} steps); {} gap(s), see notes",
                        notes.len()
                    ),
                )
            },
        );
        for n in notes {
            send(wr, &StageMsg::Degraded(n));
        }
        home_snap = home_writes::home_of(run.fs).and_then(home_writes::snapshot);
    }
    if plan.loopback_up
        && let Err(e) = ns::loopback_up()
    {
        fatal(wr, &format!("bringing lo up: {e}"));
    }
    if let Some(e) = &plan.egress
        && let Err(err) = crate::linux::egress::hand_over(crate::linux::egress::handover_fd(), e)
    {
        fatal(wr, &format!("network proxy sockets: {err}"));
    }
    if plan.ns.net {
        layer(wr, layer_report::network_in_namespace(plan));
    }
    if plan.ns.uts {
        let name = b"skarn-sandbox";
        // SAFETY: valid buffer and length.
        unsafe { libc::sethostname(name.as_ptr().cast(), name.len()) };
    }
    // Out of the terminal's foreground group: the helper forwards signals.
    // SAFETY: setpgid takes integers.
    unsafe { libc::setpgid(0, 0) };
    install_forwarders();
    if cg_rd >= 0 {
        joined &= wait_for_cgroup(wr, cg_rd);
    }
    if !joined {
        send(
            wr,
            &StageMsg::Degraded(
                "the run's cgroup could not be joined: max_procs NOT enforced by it \
                 (a cgroup memory limit falls back to RLIMIT_AS per process)"
                    .into(),
            ),
        );
    }
    if let Some(e) = run.cgroup.enforcement(plan, joined) {
        layer(wr, e);
    }
    // Not in the memory cgroup: the per-process address-space limit instead.
    let run = Run {
        memory_fallback: run.memory_fallback || !joined,
        ..*run
    };
    // SAFETY: init is single-threaded (forked from the single-threaded
    // helper; it starts no threads).
    let t = match unsafe { sys::fork() } {
        Ok(0) => target::target_main(&run, wr),
        Ok(pid) => pid,
        Err(e) => fatal(wr, &format!("fork: {e}")),
    };
    send(wr, &StageMsg::TargetPid(t));
    let code = reap(t);
    if !plan.ns.pid {
        sys::kill(-t, libc::SIGKILL);
    }
    // The kernel's record of refused connections and name lookups in the
    // run's own network namespace (ADR 0182).
    if plan.ns.net {
        let n = crate::report::denials::no_route_count();
        if n > 0 {
            send(wr, &StageMsg::NoRoute(n));
        }
    }
    if let Some(line) = home_snap.as_ref().and_then(|s| s.written()) {
        send(wr, &StageMsg::HomeLost(line));
    }
    if let Some(ws) = &plan.tmp_watch {
        let (warn, temp): (Vec<String>, Vec<String>) = written_beside(ws, run.fs)
            .into_iter()
            .partition(|p| looks_like_work(ws, Path::new(p)));
        if !warn.is_empty() {
            send(wr, &StageMsg::Lost(warn.join(" ")));
        }
        if !temp.is_empty() {
            // Tools' temporary files (a test run's scratch directories):
            // in the report, not a warning after every test run.
            send(
                wr,
                &StageMsg::Info(format!(
                    "temporary files written to the run's private /tmp and discarded: {}",
                    temp.join(" ")
                )),
            );
        }
    }
    sys::exit_now(code)
}

/// Nothing may start before init is inside the run's (v2) cgroup: wait for
/// the helper's word (b'1' moved, b'0' could not be). Returns whether init
/// joined.
fn wait_for_cgroup(wr: libc::c_int, cg_rd: libc::c_int) -> bool {
    let mut b = [0u8; 1];
    let n = loop {
        // SAFETY: reading one byte into a valid buffer.
        let n = unsafe { libc::read(cg_rd, b.as_mut_ptr().cast(), 1) };
        if n >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break n;
        }
    };
    let joined = match (n, b[0]) {
        (1, b'1') => true,
        (1, _) => false,
        _ => fatal(wr, "the helper went away before the pids cgroup was joined"),
    };
    // SAFETY: closing our own descriptor.
    unsafe { libc::close(cg_rd) };
    joined
}

/// Reap every child until the target exits; its exit code.
fn reap(t: libc::pid_t) -> i32 {
    loop {
        forward_pending(-t);
        let mut st = 0;
        // SAFETY: st is a valid int.
        let r = unsafe { libc::waitpid(-1, &mut st, 0) };
        if r == t {
            return sys::exit_code(st);
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD) {
            return 1;
        }
    }
}

/// What the command wrote in the private /tmp beside the way to the
/// workspace, other than what the plan itself put there (grants, the
/// private home): discarded with the run.
fn written_beside(ws: &Path, fs: &[FsOp]) -> Vec<String> {
    let planned: Vec<&Path> = fs
        .iter()
        .filter_map(|o| match o {
            FsOp::Bind { path, .. }
            | FsOp::IdmapBind { path, .. }
            | FsOp::Home { path }
            | FsOp::Symlink { path, .. } => Some(path.as_path()),
            _ => None,
        })
        .collect();
    written_beside_paths(ws)
        .into_iter()
        .filter(|e| !planned.iter().any(|p| p.starts_with(e)))
        .map(|p| p.display().to_string())
        .collect()
}

/// Whether an entry written beside the workspace looks like the user's
/// work (`git worktree add ../wt`, `cp -r . ../copy`): a sibling of the
/// workspace whose name is not one tools give their temporary files.
/// Anything else (entries higher up, `tmpXXXX`, `pytest-of-root`) is a
/// tool's scratch space.
fn looks_like_work(ws: &Path, entry: &Path) -> bool {
    const TEMP_PREFIXES: &[&str] = &[
        "tmp", ".tmp", "temp", "pytest-", "npm-", "node-", "v8-", "jest", "cargo", "rustc", "pip-",
        "go-build", "babel", "vite", "ts-node", "hsperf", ".X", "systemd-", "skarn-",
    ];
    let sibling = entry.parent() == ws.parent();
    let name = entry
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let temp = TEMP_PREFIXES
        .iter()
        .any(|p| name.starts_with(&p.to_lowercase()))
        || name.ends_with(".tmp")
        || name.ends_with(".lock");
    sibling && !temp
}

/// Entries of the private /tmp along the way to the workspace other than
/// that way itself: what the command wrote there is discarded with the run.
fn written_beside_paths(ws: &Path) -> Vec<PathBuf> {
    let Ok(rel) = ws.strip_prefix("/tmp") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut dir = PathBuf::from("/tmp");
    for next in rel.components() {
        if let Ok(rd) = std::fs::read_dir(&dir) {
            for e in rd.flatten() {
                if e.file_name() != next.as_os_str() && out.len() < 8 {
                    out.push(e.path());
                }
            }
        }
        dir.push(next);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::looks_like_work;
    use std::path::Path;

    #[test]
    fn siblings_are_work_and_tool_scratch_is_not() {
        let ws = Path::new("/tmp/proj/ws");
        assert!(looks_like_work(ws, Path::new("/tmp/proj/wt")));
        assert!(looks_like_work(ws, Path::new("/tmp/proj/copy")));
        for temp in ["tmpa1b2", "pytest-of-root", "npm-123", "x.tmp", "TMP9"] {
            assert!(
                !looks_like_work(ws, &Path::new("/tmp/proj").join(temp)),
                "{temp}"
            );
        }
        // Higher up: a tool's scratch space, whatever its name.
        assert!(!looks_like_work(ws, Path::new("/tmp/results")));
    }
}
