//! How a worker ended, in words: "exit status 3", "killed by signal 9
//! (SIGKILL)".

#[cfg(unix)]
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

/// "exit status 3", "killed by signal 9 (SIGKILL)"...
pub fn describe_status(status: Option<ExitStatus>) -> String {
    match status {
        None => "status unknown".into(),
        Some(s) => match (s.code(), signal_of(&s)) {
            (Some(c), _) => format!("exit status {c}"),
            (None, Some(sig)) => format!("killed by signal {sig}{}", signal_name(sig)),
            _ => "status unknown".into(),
        },
    }
}

#[cfg(unix)]
fn signal_of(s: &ExitStatus) -> Option<i32> {
    s.signal()
}

#[cfg(not(unix))]
fn signal_of(_: &ExitStatus) -> Option<i32> {
    None
}

#[cfg(unix)]
fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGKILL => " (SIGKILL)",
        libc::SIGSEGV => " (SIGSEGV)",
        libc::SIGABRT => " (SIGABRT)",
        libc::SIGSYS => " (SIGSYS)",
        libc::SIGBUS => " (SIGBUS)",
        _ => "",
    }
}

#[cfg(not(unix))]
fn signal_name(_: i32) -> &'static str {
    ""
}
