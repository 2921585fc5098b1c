//! The proxy process of `--net allow:...` (see [`crate::linux::egress`]): it
//! receives its listening sockets, confines itself, serves them with
//! `skarn_egress::Proxy` until the helper asks for its counters, and exits.

use std::os::fd::{BorrowedFd, FromRawFd, RawFd};
use std::path::PathBuf;

use crate::linux::plan::egress::EgressPlan;
use crate::linux::plan::{LandlockAccess, LandlockPlan, LandlockRule};
use crate::{linux::landlock_rules, linux::privs, linux::sys};

fn resolver_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = [
        "/etc/hosts",
        "/etc/resolv.conf",
        "/etc/nsswitch.conf",
        "/etc/host.conf",
        "/etc/gai.conf",
        "/etc/ld.so.cache",
        "/usr",
        "/lib",
        "/lib64",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    if let Ok(t) = std::fs::canonicalize("/etc/resolv.conf") {
        v.push(t);
    }
    v
}

pub(crate) fn proxy_main(plan: &EgressPlan, fd: RawFd, parent: libc::pid_t) -> ! {
    let _ = privs::set_parent_death_signal(libc::SIGKILL);
    if !plan.secrets.is_empty() {
        // It holds the secrets' values and the CA key: no core dump, and
        // no same-user process may read its memory.
        // SAFETY: prctl with integer arguments only.
        unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
    }
    // SAFETY: getppid/signal take integers only.
    unsafe {
        if libc::getppid() != parent {
            sys::exit_now(0);
        }
        // The terminal's signals are for the command; the helper ends us.
        for s in [libc::SIGINT, libc::SIGQUIT, libc::SIGTSTP, libc::SIGHUP] {
            libc::signal(s, libc::SIG_IGN);
        }
    }
    // SAFETY: `fd` is the handover socket, open in this freshly forked
    // process until `recv_fds` below; the borrow ends before that.
    let keep = unsafe { BorrowedFd::borrow_raw(fd) };
    // The write end of the caller's audit pipe (atk27h F4), kept open.
    let audit_fd = plan.audit_fd.filter(|&a| a > 2 && a != fd);
    // SAFETY: as above, the number was inherited from the helper for this
    // process and stays open until it exits.
    let audit_keep = audit_fd.map(|a| unsafe { BorrowedFd::borrow_raw(a) });
    let mut kept = vec![keep];
    kept.extend(audit_keep);
    // Freshly forked: no Rust object here owns another descriptor above 2.
    skarn_confine::fds::close_above_stderr_keeping(&kept);
    let Ok(fds) = crate::linux::egress_fd::recv_fds(fd, 2) else {
        sys::exit_now(0)
    };
    let rules = match skarn_egress::Rules::parse(&plan.allow, &plan.deny) {
        Ok(r) => r,
        Err(e) => {
            sys::write_fd(2, format!("skarn: error: {e}\n").as_bytes());
            sys::exit_now(2)
        }
    };
    // Root certificates are read now, before the proxy confines itself.
    let interceptor = match (&plan.ca, plan.secrets.is_empty()) {
        (_, true) => None,
        // From the paths the user chose (the plan), never this process's
        // environment, which for a gateway server is the server's (atk27h F3).
        // Certificates only, read and vetted by the planning process
        // (atk27i F3, F4, F7).
        (Some(ca), false) => match skarn_egress::Interceptor::with_upstream_roots(
            &plan.secrets,
            ca,
            plan.upstream_roots.as_ref().map_or("", |r| r.pem.as_str()),
        ) {
            Ok(ic) => Some(ic),
            Err(e) => {
                sys::write_fd(2, format!("skarn: error: secrets: {e}\n").as_bytes());
                sys::exit_now(2)
            }
        },
        (None, false) => {
            sys::write_fd(2, b"skarn: error: secrets without the run's CA\n");
            sys::exit_now(2)
        }
    };
    // A request carrying a piece of a value is recorded in the secret's
    // exposure record (ADR 0314): the proxy may write that directory only.
    let marks: Vec<(String, std::path::PathBuf)> = (plan.secrets.iter())
        .zip(&plan.exposure_marks)
        .filter_map(|(s, m)| Some((s.name.clone(), m.clone()?)))
        .collect();
    let mut fs_rules: Vec<LandlockRule> = resolver_files()
        .into_iter()
        .map(|path| LandlockRule {
            path,
            access: LandlockAccess::Read,
        })
        .collect();
    for dir in marks.iter().filter_map(|(_, m)| m.parent()) {
        if !fs_rules.iter().any(|r| r.path == dir) {
            fs_rules.push(LandlockRule {
                path: dir.to_path_buf(),
                access: LandlockAccess::ReadWrite,
            });
        }
    }
    let interceptor = interceptor.map(|ic| {
        ic.with_probe_hook(Box::new(move |name: &str, dest: &str| {
            for (n, m) in &marks {
                if n == name {
                    let _ = crate::secrets::exposed::record(
                        m,
                        &format!("the proxy refused {dest}: it carried a piece of {name}'s value"),
                    );
                }
            }
        }))
    });
    let ll = LandlockPlan {
        rules: fs_rules,
        secrets: Vec::new(),
        deny_tcp_bind: true,
        deny_tcp_connect: false,
        scope_signal: true,
        scope_abstract_unix: true,
    };
    let _ = privs::set_no_new_privs();
    let _ = landlock_rules::apply(&ll);
    // SAFETY: the descriptors were just received and are owned by us.
    let (http, socks) = unsafe {
        (
            std::net::TcpListener::from_raw_fd(fds[0]),
            std::net::TcpListener::from_raw_fd(fds[1]),
        )
    };
    let limits = skarn_egress::Limits {
        max_connections: plan.max_connections,
        connect_timeout: std::time::Duration::from_secs(plan.connect_timeout_secs),
        idle_timeout: std::time::Duration::from_secs(plan.idle_timeout_secs),
        max_total_bytes: plan.max_total_bytes,
    };
    let mut proxy = skarn_egress::Proxy::new(rules, skarn_egress::Resolver::system(), limits);
    if let Some(a) = audit_fd {
        // Records to the caller's pipe only: the stderr this process
        // shares with the sandboxed program carries nothing a reader
        // could mistake for the proxy's word, nor lose among its lines.
        proxy = proxy.with_log(None).with_audit(Some(audit_sink(a)));
    }
    if let Some(ic) = interceptor {
        proxy = proxy.with_secrets(ic);
    }
    let proxy = std::sync::Arc::new(proxy);
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(_) => sys::exit_now(2),
    };
    let listeners = skarn_egress::Listeners {
        http: Some(http),
        socks: Some(socks),
    };
    let stop = async move {
        // Any message (or EOF: the helper is gone) ends the proxy.
        let _ = tokio::task::spawn_blocking(move || {
            let mut b = [0u8; 16];
            // SAFETY: b is valid for its length.
            unsafe { libc::recv(fd, b.as_mut_ptr().cast(), b.len(), 0) }
        })
        .await;
    };
    let mut report = rt
        .block_on(proxy.serve(listeners, stop))
        .unwrap_or_default();
    // One datagram carries the counters back: keep it well under the
    // socket buffer (the busiest hosts first).
    report
        .allowed
        .sort_by_key(|a| std::cmp::Reverse(a.bytes_in + a.bytes_out));
    report.denied.sort_by_key(|d| std::cmp::Reverse(d.count));
    let mut json = serde_json::to_vec(&report).unwrap_or_default();
    while json.len() > 100_000 {
        report.allowed.truncate(report.allowed.len() / 2);
        report.denied.truncate(report.denied.len() / 2);
        json = serde_json::to_vec(&report).unwrap_or_default();
    }
    // SAFETY: sending our own buffer on our own socket.
    unsafe { libc::send(fd, json.as_ptr().cast(), json.len(), libc::MSG_NOSIGNAL) };
    sys::exit_now(0)
}

/// Records as JSON lines on descriptor `fd` (a pipe), each in one
/// `write` (a record is far under `PIPE_BUF`, so lines never interleave);
/// a full pipe blocks the writing task until the caller reads, and a
/// closed one drops the record.
fn audit_sink(fd: RawFd) -> skarn_egress::AuditSink {
    std::sync::Arc::new(move |r: &skarn_egress::AuditRecord| {
        // At most `MAX_LINE` (4096 = PIPE_BUF) bytes.
        let line = r.to_line();
        loop {
            // SAFETY: writing our own buffer to a descriptor this process
            // keeps open for its whole life.
            let n = unsafe { libc::write(fd, line.as_ptr().cast(), line.len()) };
            if n >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return;
            }
        }
    })
}
