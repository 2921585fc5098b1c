//! One AppContainer run, end to end: repair what killed runs left, plan,
//! journal, apply, start, relay, wait (timeout), kill the tree, revert.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::windows::io::AsRawHandle;
use std::path::Path;

use windows_sys::Win32::Foundation::{WAIT_OBJECT_0, WAIT_TIMEOUT};
use windows_sys::Win32::System::Threading::{
    GetExitCodeProcess, INFINITE, ResumeThread, WaitForSingleObject,
};

use super::job::Job;
use super::sid::Sid;
use super::{acl, ctrl, last_error, spawn};
use crate::policy::Policy;
use crate::policy::provenance::Provenance;
use crate::report::{Enforcement, ReportFormat, RestrictionReport};
use crate::windows::journal::{self, Journal};
use crate::windows::{WindowsError, WindowsHostFacts, WindowsPlan, layers, plan};

/// Exit status when the timeout killed the command.
pub(crate) const TIMEOUT_EXIT: i32 = 124;

/// Run `command` confined per `policy` (assembled with `provenance`, for
/// the report) in the workspace's AppContainer; returns the command's exit
/// status (124 on timeout, 130 on Ctrl-C).
pub fn run(
    policy: &Policy,
    provenance: &Provenance,
    command: &[OsString],
    env: &[(OsString, OsString)],
    report_format: ReportFormat,
) -> Result<i32, WindowsError> {
    let facts = WindowsHostFacts::probe(policy);
    let mut plan = plan(policy, &facts, command, env, report_format)?;
    plan.report.provenance = crate::report::report_provenance::for_report(policy, provenance);
    let Some(lad) = facts.local_app_data.as_deref() else {
        return Err(WindowsError::Os {
            call: "reading %LOCALAPPDATA%".into(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        });
    };
    let dir = journal::dir(lad);
    std::fs::create_dir_all(&dir).map_err(|source| WindowsError::Os {
        call: format!("creating {}", dir.display()),
        source,
    })?;
    repair_finished_runs(&dir, &plan.profile.name);
    let jpath = journal::journal_path(&dir, &plan.profile.name);
    let _lock = journal::lock(&journal::lock_path(&dir, &plan.profile.name))?;
    if let Some(old) = journal::read(&jpath)? {
        revert(&old)?;
        journal::remove(&jpath)?;
    }
    let container = super::sid::container_sid(&plan.profile)?;
    let j = Journal {
        version: journal::VERSION,
        profile: plan.profile.name.clone(),
        sid: container.to_string_form()?,
        paths: plan.revert.clone(),
        placeholders: plan.placeholders.iter().map(|p| p.path.clone()).collect(),
        remove_after: plan.remove_after.iter().map(|p| p.path.clone()).collect(),
    };
    journal::write(&jpath, &j)?;
    let mut applied = Vec::new();
    let outcome = confine_and_run(&plan, &container, &mut applied);
    let restored = revert(&j);
    ctrl::restored();
    if restored.is_ok() {
        journal::remove(&jpath)?;
    }
    let mut report = plan.report.clone();
    report.layers = layers::complete(applied);
    print_report(plan.report_format, &report);
    let code = outcome?;
    restored?;
    Ok(code)
}

/// Apply the plan's ACLs, run the command, return its status; each layer
/// goes into `applied` once in force.
fn confine_and_run(
    plan: &WindowsPlan,
    container: &Sid,
    applied: &mut Vec<Enforcement>,
) -> Result<i32, WindowsError> {
    for p in &plan.placeholders {
        match std::fs::create_dir(&p.path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(source) => {
                return Err(WindowsError::Os {
                    call: format!("reserving {}", p.path),
                    source,
                });
            }
        }
    }
    for path in &plan.revert {
        let changes: Vec<_> = plan
            .acl
            .iter()
            .filter(|c| crate::windows::winpath::same(&c.path, path))
            .collect();
        if !changes.is_empty() {
            acl::add(path, &changes, container.as_ptr())?;
        }
    }
    applied.push(layers::acls(plan));
    if let Some((_, temp)) = plan.process.env.iter().find(|(k, _)| k == "TEMP") {
        // The profile creates it; make sure it is there.
        let _ = std::fs::create_dir_all(temp);
    }
    let caps = plan
        .capabilities
        .iter()
        .map(|c| Sid::parse(&c.sid))
        .collect::<Result<Vec<_>, _>>()?;
    let job = Job::create(&plan.job)?;
    let guard = ctrl::Guard::install(job.raw());
    let child = match spawn::spawn(&plan.process, container, &caps) {
        Ok(c) => c,
        // As on Linux: 127 not found, 126 not executable.
        Err(WindowsError::Os { source, .. })
            if matches!(source.raw_os_error(), Some(2 | 3 | 5 | 193)) =>
        {
            let code = if matches!(source.raw_os_error(), Some(2 | 3)) {
                127
            } else {
                126
            };
            eprintln!("skarn: {}: {source}", plan.process.argv[0]);
            return Ok(code);
        }
        Err(e) => return Err(e),
    };
    applied.push(layers::appcontainer(plan));
    if let Err(e) = job.assign(child.process.as_raw_handle()) {
        job.terminate(1);
        // The suspended child is not in the job: end it directly.
        // SAFETY: a valid process handle we own.
        unsafe {
            windows_sys::Win32::System::Threading::TerminateProcess(
                child.process.as_raw_handle(),
                1,
            )
        };
        return Err(e);
    }
    applied.push(layers::job(plan));
    // SAFETY: the main thread handle of the suspended child.
    if unsafe { ResumeThread(child.thread.as_raw_handle()) } == u32::MAX {
        job.terminate(1);
        return Err(last_error("ResumeThread"));
    }
    let spawn::Child {
        process,
        thread: _thread,
        mut stdin,
        stdout,
        stderr,
    } = child;
    // stdin: copied until our stdin ends (the thread is left behind if the
    // command ends first; it holds nothing but the pipe).
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut stdin);
    });
    let out = relay(stdout, false);
    let err = relay(stderr, true);
    let ms = plan.timeout_secs.map_or(INFINITE, |s| {
        u32::try_from(s.saturating_mul(1000)).unwrap_or(INFINITE - 1)
    });
    // SAFETY: a valid process handle.
    let waited = unsafe { WaitForSingleObject(process.as_raw_handle(), ms) };
    let code = if waited == WAIT_TIMEOUT {
        job.terminate(TIMEOUT_EXIT as u32);
        eprintln!(
            "skarn: timeout after {} s: the process tree was killed",
            plan.timeout_secs.unwrap_or(0)
        );
        TIMEOUT_EXIT
    } else if waited == WAIT_OBJECT_0 {
        let mut c = 0u32;
        // SAFETY: a valid, signalled process handle.
        if unsafe { GetExitCodeProcess(process.as_raw_handle(), &mut c) } == 0 {
            return Err(last_error("GetExitCodeProcess"));
        }
        if guard.interrupted() {
            ctrl::INTERRUPTED as i32
        } else {
            c as i32
        }
    } else {
        job.terminate(1);
        return Err(last_error("WaitForSingleObject"));
    };
    // The tree ends with its first process, as in a Linux PID namespace.
    job.terminate(code as u32);
    let _ = out.join();
    let _ = err.join();
    drop(guard);
    Ok(code)
}

/// Copy a child pipe to our stdout or stderr until it ends.
fn relay(mut from: std::fs::File, to_stderr: bool) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let w = if to_stderr {
                std::io::stderr().lock().write_all(&buf[..n])
            } else {
                let mut o = std::io::stdout().lock();
                o.write_all(&buf[..n]).and_then(|()| o.flush())
            };
            if w.is_err() {
                break;
            }
        }
    })
}

/// Remove every explicit ACE of the journal's SID from its paths, the
/// placeholders that are still empty directories, and the git files the
/// command created that must not stay.
fn revert(j: &Journal) -> Result<(), WindowsError> {
    let sid = Sid::parse(&j.sid)?;
    let mut failed = None;
    for p in &j.paths {
        if let Err(e) = acl::remove_sid(p, sid.as_ptr()) {
            eprintln!("skarn: {e}");
            failed.get_or_insert_with(|| p.clone());
        }
    }
    for p in &j.placeholders {
        // Only an empty directory goes (remove_dir refuses anything else).
        if let Err(e) = std::fs::remove_dir(p)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            eprintln!("skarn: placeholder {p} left in place: {e}");
        }
    }
    for p in &j.remove_after {
        let path = Path::new(p);
        let Ok(m) = std::fs::symlink_metadata(path) else {
            continue;
        };
        // Never followed: a link or junction is removed itself.
        let r = if m.is_dir() && !m.file_type().is_symlink() {
            std::fs::remove_dir_all(path)
        } else {
            std::fs::remove_file(path).or_else(|_| std::fs::remove_dir(path))
        };
        match r {
            Ok(()) => eprintln!("skarn: removed {p}, created during the run (git would trust it)"),
            Err(e) => {
                eprintln!("skarn: could not remove {p}, created during the run: {e}");
                failed.get_or_insert_with(|| p.clone());
            }
        }
    }
    match failed {
        Some(p) => Err(WindowsError::Restore(p)),
        None => Ok(()),
    }
}

/// Repair journals of other workspaces whose run is over (its lock free).
fn repair_finished_runs(dir: &Path, current: &str) {
    for profile in journal::pending(dir) {
        if profile == current {
            continue;
        }
        let Ok(Some(_lock)) = journal::try_lock(&journal::lock_path(dir, &profile)) else {
            continue;
        };
        let jp = journal::journal_path(dir, &profile);
        match journal::read(&jp) {
            Ok(Some(j)) => match revert(&j) {
                Ok(()) => {
                    let _ = journal::remove(&jp);
                    eprintln!("skarn: repaired the ACLs left by an interrupted run ({profile})");
                }
                Err(e) => eprintln!("skarn: {e}"),
            },
            Ok(None) => {}
            Err(e) => eprintln!("skarn: {e}"),
        }
    }
}

fn print_report(format: ReportFormat, report: &RestrictionReport) {
    match format {
        ReportFormat::None => {}
        ReportFormat::Text => eprint!("{}", report.render_text()),
        ReportFormat::Json => match serde_json::to_string(report) {
            Ok(s) => eprintln!("{s}"),
            Err(e) => eprintln!("skarn: report: {e}"),
        },
    }
}
