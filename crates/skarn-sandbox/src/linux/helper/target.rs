//! The target: the last stage before the command. New session,
//! parent-death signal, rlimits, working directory, environment,
//! no_new_privs, capabilities dropped, Landlock, seccomp, descriptors
//! above 2 closed on exec, then the PATH search and `execve`.

use std::borrow::Cow;
use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;

use skarn_confine::{Enforcement, Layer, Status};

use super::signals::reset_forwarded;
use super::stage_status::{StageMsg, fatal, layer, send};
use super::{EXIT_NOT_EXECUTABLE, EXIT_NOT_FOUND};
use super::{Run, layer_report};
use crate::linux::plan::{LandlockPlan, LandlockRule, Rlimit};
use crate::{linux::landlock_rules, linux::privs, linux::seccomp, linux::sys, linux::terminal};

fn rlimit_resource(r: Rlimit) -> libc::__rlimit_resource_t {
    match r {
        Rlimit::Data => libc::RLIMIT_DATA,
        Rlimit::As => libc::RLIMIT_AS,
        Rlimit::Nproc => libc::RLIMIT_NPROC,
        Rlimit::Fsize => libc::RLIMIT_FSIZE,
        Rlimit::Core => libc::RLIMIT_CORE,
    }
}

/// The rlimits to apply: the plan's, plus the memory cgroup's
/// `fallback_as` when the run is not in a memory cgroup after all.
fn rlimits(run: &Run) -> Vec<(Rlimit, u64)> {
    let mut r = run.plan.rlimits.clone();
    if let Some(m) = &run.plan.memory_cgroup
        && run.memory_fallback
    {
        r.push((Rlimit::As, m.fallback_as));
    }
    r
}

/// The environment: the inherited one (already scrubbed), the plan's
/// variables, and the host private tmp's.
fn environment(run: &Run) -> Vec<(OsString, OsString)> {
    let mut set: Vec<(OsString, OsString)> = run
        .plan
        .set_env
        .iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
    if let (Some(t), Some(dir)) = (&run.plan.host_tmp, run.host_tmp) {
        set.push((t.env.clone().into(), dir.as_os_str().to_owned()));
    }
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| !set.iter().any(|(s, _)| s == k))
        .collect();
    env.extend(set);
    env
}

/// The Landlock rules: the plan's, plus the host private tmp's.
fn landlock<'a>(run: &Run<'a>) -> Option<Cow<'a, LandlockPlan>> {
    let l = run.plan.landlock.as_ref()?;
    match (&run.plan.host_tmp, run.host_tmp) {
        (Some(t), Some(dir)) if t.landlock.is_some() => {
            let mut l = l.clone();
            l.rules.extend(t.landlock.map(|access| LandlockRule {
                path: dir.to_path_buf(),
                access,
            }));
            Some(Cow::Owned(l))
        }
        _ => Some(Cow::Borrowed(l)),
    }
}

/// The target: confine and exec.
pub(super) fn target_main(run: &Run, wr: libc::c_int) -> ! {
    let plan = run.plan;
    reset_forwarded();
    // SAFETY: setsid takes no arguments; we are not a group leader.
    unsafe { libc::setsid() };
    layer(
        wr,
        match privs::set_parent_death_signal(libc::SIGKILL) {
            Ok(()) => Enforcement::full(Layer::ParentDeath, "SIGKILL"),
            Err(e) => Enforcement::not_enforced(Layer::ParentDeath, e.to_string()),
        },
    );
    // Before anything reads a path: a standard descriptor that is a
    // directory would resolve names in the caller's file tree, a network
    // socket would reach the caller's network.
    match privs::neutralize_stdio_handles(plan.stdio_sockets_kept) {
        Ok(replaced) => {
            for r in replaced {
                let name = ["standard input", "standard output", "standard error"][r.fd as usize];
                send(
                    wr,
                    &StageMsg::Info(format!("{name} was {}: replaced by /dev/null", r.was)),
                );
            }
        }
        Err(e) => fatal(wr, &format!("replacing a standard descriptor: {e}")),
    }
    let limits = rlimits(run);
    let mut refused = Vec::new();
    for (r, v) in &limits {
        if let Err(e) = privs::set_rlimit(rlimit_resource(*r), *v) {
            refused.push(*r);
            send(
                wr,
                &StageMsg::Degraded(format!("rlimit {r:?} not applied: {e}")),
            );
        }
    }
    layer(wr, layer_report::rlimits(&limits, &refused));
    if let Err(e) = sys::chdir(&plan.cwd) {
        fatal(
            wr,
            &format!("cannot enter working directory {}: {e}", plan.cwd.display()),
        );
    }
    let env = environment(run);
    let envp: Vec<CString> = env
        .iter()
        .filter_map(|(k, v)| {
            let mut b = k.as_bytes().to_vec();
            b.push(b'=');
            b.extend_from_slice(v.as_bytes());
            CString::new(b).ok()
        })
        .collect();
    let argv: Vec<CString> = plan
        .argv
        .iter()
        .map(|a| CString::new(a.as_bytes()).unwrap_or_default())
        .collect();
    let path_var = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    let seccomp_progs = match &plan.seccomp {
        Some(s) => {
            let mut extra = Vec::new();
            if s.deny_inet_sockets {
                extra.push(seccomp::DENY_INET_SOCKETS);
            }
            if s.deny_listen {
                extra.push(seccomp::DENY_LISTEN);
            }
            if s.deny_tiocswinsz_on_host_tty && terminal::host_tty_inherited() {
                extra.push(seccomp::DENY_TIOCSWINSZ);
            }
            if run.deny_unix_sockets || crate::linux::mounts::socket_moved() {
                extra.extend(seccomp::DENY_UNIX_SOCKETS);
            }
            match seccomp::deny_programs(&extra) {
                Ok(p) => Some((p, seccomp::DENY_LIST.len() + extra.len())),
                Err(e) => fatal(wr, &e.to_string()),
            }
        }
        None => None,
    };

    if let Err(e) = privs::set_no_new_privs() {
        fatal(wr, &format!("no_new_privs: {e}"));
    }
    layer(wr, Enforcement::full(Layer::NoNewPrivs, "set"));
    match privs::drop_all_capabilities() {
        Ok(true) => layer(
            wr,
            Enforcement::full(
                Layer::Capabilities,
                "all dropped: bounding, ambient, effective, permitted, inheritable",
            ),
        ),
        Ok(false) => {
            send(
                wr,
                &StageMsg::Info(
                    "capability bounding set left as is (no CAP_SETPCAP outside a user \
                     namespace); the process holds no capabilities and no_new_privs prevents \
                     gaining any"
                        .into(),
                ),
            );
            layer(
                wr,
                Enforcement::partial(
                    Layer::Capabilities,
                    "none held; bounding set left as is (no CAP_SETPCAP outside a user \
                     namespace), no_new_privs prevents gaining any",
                ),
            );
        }
        Err(e) => fatal(wr, &format!("dropping capabilities: {e}")),
    }
    let landlock_net = match landlock(run) {
        Some(l) => apply_landlock(plan, &l, wr),
        None => None,
    };
    if let Some((p, rules)) = &seccomp_progs {
        if let Err(e) = seccomp::install(p) {
            fatal(wr, &e.to_string());
        }
        layer(
            wr,
            Enforcement::full(Layer::Seccomp, format!("deny-list of {rules} rules")),
        );
    }
    if !plan.ns.net {
        layer(
            wr,
            layer_report::network_on_host(plan, landlock_net, seccomp_progs.is_some()),
        );
    }
    if let Err(e) = privs::close_fds_above_stderr_on_exec() {
        fatal(wr, &format!("closing descriptors: {e}"));
    }
    layer(
        wr,
        Enforcement::full(
            Layer::Descriptors,
            "every descriptor above 2 closed on exec; 0-2 are streams (a directory, path \
             handle or network socket there is replaced by /dev/null)",
        ),
    );
    exec_search(&argv, &envp, &path_var)
}

/// Apply the Landlock ruleset and report it; the outcome of its network
/// part (when one was asked).
fn apply_landlock(
    plan: &crate::linux::plan::Plan,
    l: &LandlockPlan,
    wr: libc::c_int,
) -> Option<Status> {
    let outcome = match landlock_rules::apply_reporting(l) {
        Ok(o) => o,
        Err(e) => fatal(wr, &e.to_string()),
    };
    match outcome.status {
        Status::FullyEnforced => {}
        Status::PartiallyEnforced => send(
            wr,
            &StageMsg::Degraded("Landlock only partially enforced by this kernel".into()),
        ),
        Status::NotEnforced => {
            if !plan.ns.mount && plan.fail_closed {
                fatal(
                    wr,
                    "Landlock is not enforced and there is no mount namespace",
                );
            }
            send(
                wr,
                &StageMsg::Degraded("Landlock not enforced by this kernel".into()),
            );
        }
    }
    layer(wr, outcome.enforcement());
    outcome
        .parts
        .iter()
        .find(|p| p.part == "net")
        .map(|p| p.status)
}

fn exec_search(argv: &[CString], envp: &[CString], path_var: &OsString) -> ! {
    let Some(name) = argv.first() else {
        sys::write_fd(2, b"skarn: no command given\n");
        sys::exit_now(EXIT_NOT_FOUND)
    };
    let show = String::from_utf8_lossy(name.as_bytes()).into_owned();
    let fail = |code: i32, why: &str| -> ! {
        sys::write_fd(2, format!("skarn: {show}: {why}\n").as_bytes());
        sys::exit_now(code)
    };
    if name.as_bytes().contains(&b'/') {
        let e = sys::execve(name, argv, envp);
        match e.raw_os_error() {
            Some(libc::ENOENT) | Some(libc::ENOTDIR) => fail(EXIT_NOT_FOUND, "command not found"),
            _ => fail(EXIT_NOT_EXECUTABLE, &format!("cannot execute: {e}")),
        }
    }
    let mut denied: Option<std::io::Error> = None;
    for dir in path_var.as_bytes().split(|b| *b == b':') {
        let dir: &[u8] = if dir.is_empty() { b"." } else { dir };
        let mut full = dir.to_vec();
        full.push(b'/');
        full.extend_from_slice(name.as_bytes());
        let Ok(c) = CString::new(full) else { continue };
        let e = sys::execve(&c, argv, envp);
        match e.raw_os_error() {
            Some(libc::ENOENT) | Some(libc::ENOTDIR) => {}
            _ => {
                if denied.is_none() {
                    denied = Some(e);
                }
            }
        }
    }
    match denied {
        Some(e) => fail(
            EXIT_NOT_EXECUTABLE,
            &format!("cannot execute: {e} (is it granted for execution?)"),
        ),
        None => fail(EXIT_NOT_FOUND, "command not found"),
    }
}
