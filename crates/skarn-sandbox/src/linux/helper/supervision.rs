//! Supervision: the helper waits for init with the timeout (pidfd + poll),
//! forwards signals, collects the later stages' messages, kills the tree
//! when time is up, and finally turns all of it into the report and the
//! exit status.

use super::cgroup::Cgroup;
use super::signals::forward_pending;
use super::stage_status::{StageMsg, decode};
use super::{EXIT_SETUP, EXIT_TIMEOUT};
use crate::linux::plan::{Plan, ReportFormat};
use crate::linux::sys;
use crate::report::{RestrictionReport, Status};

/// How init ended.
pub(super) struct Outcome {
    /// Init's exit code (the target's).
    pub(super) code: i32,
    /// The timeout fired.
    pub(super) timed_out: bool,
    /// What init and the target reported.
    pub(super) msgs: Vec<StageMsg>,
}

/// Wait for init with an optional timeout, collecting its messages from
/// `rd`.
pub(super) fn supervise(
    child: libc::pid_t,
    rd: libc::c_int,
    timeout_ms: Option<u64>,
    pidns: bool,
    cgroup: &Option<Cgroup>,
) -> Outcome {
    let deadline =
        timeout_ms.map(|t| std::time::Instant::now() + std::time::Duration::from_millis(t));
    // SAFETY: pidfd_open takes integers.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, child, 0) } as libc::c_int;
    let mut buf = Vec::new();
    let mut rd_open = true;
    let mut timed_out = false;
    loop {
        forward_pending(child);
        let wait_ms: i32 = match deadline {
            Some(d) => {
                let now = std::time::Instant::now();
                if now >= d {
                    timed_out = true;
                    break;
                }
                (d - now).as_millis().min(i32::MAX as u128) as i32
            }
            None => -1,
        };
        if pidfd < 0 {
            break; // no pidfd: plain blocking wait below (no timeout)
        }
        let mut pfds = [
            libc::pollfd {
                fd: pidfd,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: if rd_open { rd } else { -1 },
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: pfds is a valid array of 2 pollfd.
        let n = unsafe { libc::poll(pfds.as_mut_ptr(), 2, wait_ms) };
        if n < 0 {
            continue; // EINTR: forward signals and loop
        }
        if pfds[1].revents != 0 {
            rd_open = drain(rd, &mut buf);
        }
        if pfds[0].revents != 0 {
            break;
        }
    }
    if timed_out {
        sys::kill(child, libc::SIGKILL);
        if !pidns {
            drain(rd, &mut buf);
            let target = decode(&buf).into_iter().find_map(|m| match m {
                StageMsg::TargetPid(t) => Some(t),
                _ => None,
            });
            if let Some(t) = target {
                sys::kill(-t, libc::SIGKILL);
            }
        }
        if let Some(c) = cgroup {
            c.kill_all();
        }
    }
    let mut status = 0;
    loop {
        // SAFETY: status is a valid int.
        let r = unsafe { libc::waitpid(child, &mut status, 0) };
        if r == child {
            break;
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break;
        }
        forward_pending(child);
    }
    while drain(rd, &mut buf) {}
    if pidfd >= 0 {
        // SAFETY: closing our own descriptor.
        unsafe { libc::close(pidfd) };
    }
    Outcome {
        code: sys::exit_code(status),
        timed_out,
        msgs: decode(&buf),
    }
}

/// Read what is available; false at EOF or error.
fn drain(fd: libc::c_int, buf: &mut Vec<u8>) -> bool {
    let mut tmp = [0u8; 4096];
    // SAFETY: tmp is a valid buffer.
    let n = unsafe { libc::read(fd, tmp.as_mut_ptr().cast(), tmp.len()) };
    if n > 0 {
        buf.extend_from_slice(&tmp[..n as usize]);
        true
    } else {
        n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    }
}

/// Put the stages' messages in the report; true when set-up failed.
fn merge(msgs: &[StageMsg], plan: &Plan, report: &mut RestrictionReport) -> bool {
    let mut fatal = false;
    for m in msgs {
        match m {
            StageMsg::Degraded(n) => report.degrade(n.clone()),
            StageMsg::Info(n) => report.notes.push(n.clone()),
            StageMsg::Lost(n) => {
                let msg = format!(
                    "written to the run's private /tmp beside the workspace, and discarded: {n} \
                     (only the workspace {} is kept)",
                    plan.workspace.display()
                );
                sys::write_fd(2, format!("skarn: warning: {msg}\n").as_bytes());
                report.degrade(msg);
            }
            StageMsg::HomeLost(n) => {
                let msg = format!(
                    "written to the run's private home and discarded: {n} (kept: the workspace{})",
                    if plan.store.is_some() {
                        " and the toolchain caches in its store (`skarn cache list`)"
                    } else {
                        ""
                    }
                );
                sys::write_fd(2, format!("skarn: warning: {msg}\n").as_bytes());
                report.notes.push(msg);
            }
            StageMsg::Fatal(n) => {
                fatal = true;
                report.notes.push(format!("set-up failed: {n}"));
                report.status = Status::NotEnforced;
            }
            StageMsg::Layer(e) => report.layers.push(e.clone()),
            StageMsg::NoRoute(n) => report.denied.push(crate::report::denials::network(*n)),
            StageMsg::TargetPid(_) => {}
        }
    }
    report.layers = super::layer_report::complete(plan, std::mem::take(&mut report.layers));
    fatal
}

/// The end of a run: merge the stages' messages and the helper's own gaps
/// (`late`) into the report, say why the command stopped, print the report
/// as asked, and return the exit status.
pub(super) fn finish(
    plan: &Plan,
    mut report: RestrictionReport,
    out: Outcome,
    late: Vec<String>,
) -> i32 {
    let fatal = merge(&out.msgs, plan, &mut report);
    for n in late {
        report.degrade(n);
    }
    if out.timed_out {
        let secs = plan.timeout_ms.unwrap_or(0) / 1000;
        sys::write_fd(
            2,
            format!(
                "skarn: timeout: the command ran longer than {secs} s; its whole process tree \
                 was killed\n"
            )
            .as_bytes(),
        );
    }
    let proxy = crate::report::denials::from_egress(&report);
    report.denied.extend(proxy);
    if !out.timed_out && !fatal && out.code == 127 && plan.not_found_hint.is_some() {
        if let Some(h) = &plan.not_found_hint {
            let h = crate::report::advice::for_caller(h, plan.caller);
            sys::write_fd(2, format!("{h}\n").as_bytes());
        }
    } else if !out.timed_out && !fatal && out.code != 0 {
        // Only what was recorded as denied (ADR 0182): a command that
        // fails on its own (`exit 7`, a failing test) gets no line.
        match crate::report::denials::line(&report.denied, plan.caller) {
            Some(l) => sys::write_fd(2, format!("{}\n", terminal_filter_line(&l)).as_bytes()),
            None => {
                // Nothing recorded: the paths the command names that are
                // outside the grants (derived from the policy, said so).
                if let Some(h) = &plan.read_hint {
                    let h = crate::report::advice::for_caller(h, plan.caller);
                    sys::write_fd(2, format!("{}\n", terminal_filter_line(&h)).as_bytes());
                }
                if !plan.failure_hint.is_empty() {
                    report.notes.push(format!(
                        "the command failed and no denial was recorded for this run (a read \
                         outside the grants finds a missing file, a write there a read-only \
                         file system; the kernel records neither here); what the sandbox denies \
                         by policy: {}{}PATH (or read = [...] under [run] in skarn.toml, for \
                         the hook and the run tool)",
                        plan.failure_hint
                            .trim_start_matches("skarn: sandbox: the command failed; "),
                        crate::linux::plan::READ_ADVICE,
                    ));
                }
            }
        }
    }
    print_report(plan.report_format, &report);
    if fatal {
        return EXIT_SETUP;
    }
    if out.timed_out {
        EXIT_TIMEOUT
    } else {
        out.code
    }
}

/// A line naming paths and hosts the command chose: control strings out.
fn terminal_filter_line(l: &str) -> String {
    crate::protect::terminal_filter::printable(l)
}

/// Print the report on stderr as asked.
pub(super) fn print_report(format: ReportFormat, report: &RestrictionReport) {
    match format {
        ReportFormat::None => {}
        ReportFormat::Text => sys::write_fd(2, report.render_text().as_bytes()),
        ReportFormat::Json => {
            let mut s = serde_json::to_string(report).unwrap_or_default();
            s.push('\n');
            sys::write_fd(2, s.as_bytes());
        }
    }
}
