//! Running a command with stdout and stderr on one pipe, so its output is
//! captured in the real interleaved order (as a terminal would show it),
//! then compressing it.
//!
//! Integration with another spawner (for example the sandbox's): call
//! [`one_pipe`], hand the two `Stdio` ends to the child as stdout and
//! stderr, drop every other copy of the write end, then [`read_capped`]
//! the reader until EOF and pass the bytes to
//! [`Compressor::compress_recoverable`](crate::Compressor::compress_recoverable).

use std::io::{PipeReader, Read};
use std::process::{Command, ExitStatus, Stdio};

use crate::error::CaptureError;
use crate::store::Store;
use crate::{Compressor, Outcome};

/// Default cap on captured output kept in memory (head and tail halves).
pub const DEFAULT_MAX_CAPTURE: usize = 64 * 1024 * 1024;

/// Output of a finished command.
#[derive(Debug)]
pub struct Captured {
    /// stdout and stderr, interleaved in the order they were written.
    pub output: Vec<u8>,
    pub status: ExitStatus,
}

/// A pipe whose write end is duplicated for stdout and stderr of a child.
/// Returns the read end and the two `Stdio`s.
/// Both ends are close-on-exec (not inherited) on unix.
pub fn one_pipe() -> std::io::Result<(PipeReader, Stdio, Stdio)> {
    let (r, w) = std::io::pipe()?;
    let w2 = w.try_clone()?;
    Ok((r, Stdio::from(w), Stdio::from(w2)))
}

/// Read until EOF, keeping at most `max` bytes (at least 1 KiB): the first
/// and last halves, with one marker line standing for the bytes dropped in
/// between.
pub fn read_capped(mut r: impl Read, max: usize) -> std::io::Result<Vec<u8>> {
    let max = max.max(1024);
    let half = max / 2;
    let mut head: Vec<u8> = Vec::new();
    let mut tail: std::collections::VecDeque<u8> = std::collections::VecDeque::new();
    let mut dropped: u64 = 0;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let mut chunk = &buf[..n];
        if head.len() < half {
            let take = (half - head.len()).min(chunk.len());
            head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        tail.extend(chunk.iter().copied());
        if tail.len() > half {
            let excess = tail.len() - half;
            tail.drain(..excess);
            dropped += excess as u64;
        }
    }
    if dropped > 0 {
        head.extend_from_slice(
            format!("\n[skarn: {dropped} bytes of output dropped during capture]\n").as_bytes(),
        );
    }
    head.extend(tail);
    Ok(head)
}

/// Spawn `cmd` (stdin inherited) with stdout and stderr on one pipe, read
/// everything (capped at `max_bytes`), and wait for it.
pub fn capture(mut cmd: Command, max_bytes: usize) -> Result<Captured, CaptureError> {
    let (reader, out, err) = one_pipe()?;
    cmd.stdout(out).stderr(err);
    let mut child = cmd.spawn().map_err(|source| CaptureError::Spawn {
        program: cmd.get_program().to_string_lossy().into_owned(),
        source,
    })?;
    // The Command still owns our copies of the write end: drop them, or the
    // read below never sees EOF.
    drop(cmd);
    let output = read_capped(reader, max_bytes)?;
    let status = child.wait()?;
    Ok(Captured { output, status })
}

/// The shell convention: the exit code, or 128 + signal number (unix).
pub fn exit_code(status: &ExitStatus) -> i32 {
    #[cfg(unix)]
    let signal = std::os::unix::process::ExitStatusExt::signal(status);
    #[cfg(not(unix))]
    let signal: Option<i32> = None;
    match (status.code(), signal) {
        (Some(c), _) => c,
        (None, Some(s)) => 128 + s,
        (None, None) => 1,
    }
}

/// Run `cmd`, capture its interleaved output, compress it for
/// `command_line`, saving the raw output in `store`. Returns the outcome and
/// the command's exit code.
pub fn run_and_compress(
    cmd: Command,
    command_line: &str,
    compressor: &Compressor,
    store: Option<&Store>,
    max_bytes: usize,
) -> Result<(Outcome, i32), CaptureError> {
    let cap = capture(cmd, max_bytes)?;
    let code = exit_code(&cap.status);
    let outcome = compressor.compress_recoverable(&cap.output, command_line, Some(code), store);
    Ok((outcome, code))
}

#[cfg(all(test, unix))]
mod tests {
    #[test]
    fn the_pipe_is_not_inherited_by_other_children() {
        use std::os::fd::AsFd;
        let (r, _out, _err) = super::one_pipe().unwrap();
        let flags = rustix::io::fcntl_getfd(r.as_fd()).unwrap();
        assert!(flags.contains(rustix::io::FdFlags::CLOEXEC));
    }
}
