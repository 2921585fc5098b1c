//! A granted secret's real value on `skarn run`'s standard input never
//! reaches the command (atk27t F4): `echo "$TOKEN" | skarn run --secret s
//! -- docker login --password-stdin` handed the command the credential
//! the argument check refuses in argv.
//!
//! When secrets are granted and standard input is a pipe, socket or
//! regular file, a relay process outside the sandbox reads it and writes
//! what it read to a pipe that becomes the command's standard input,
//! with every form of each value the proxy's echo scrubber knows
//! replaced by the same form of its placeholder (the same length), so
//! `--password-stdin` gets the placeholder the proxy swaps back toward
//! the value's own hosts. A terminal is left as it is (what a person
//! types is theirs) and so is a character device (`/dev/null`).
//!
//! The relay is forked twice (no process of the run's tree waits for
//! it), is not dumpable and keeps only its three descriptors; it ends at
//! the input's end or when the command's side of the pipe is closed.

use std::io::{Read, Write};
use std::os::fd::FromRawFd;

use skarn_egress::StreamScrub;
use skarn_egress::secrets::SecretSpec;

/// Whether standard input is a stream the relay must read: a pipe, a
/// socket or a regular file (not a terminal, not a character device).
fn needs_relay() -> bool {
    // SAFETY: an all-zero `stat` is a valid value to be filled in.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat of descriptor 0 into a local buffer.
    if unsafe { libc::fstat(0, &mut st) } != 0 {
        return false;
    }
    matches!(
        st.st_mode & libc::S_IFMT,
        libc::S_IFIFO | libc::S_IFSOCK | libc::S_IFREG
    )
}

/// Put the relay between standard input and the command, for `specs`'
/// values; whether it was put. Call while this process has one thread
/// (it forks).
pub fn interpose(specs: &[SecretSpec]) -> std::io::Result<bool> {
    if !needs_relay() {
        return Ok(false);
    }
    // The windows are built in the relay, after the fork (atk27u F2: built
    // here, a 900-byte value's automaton held the command back seconds
    // even when nothing came on standard input).
    if !StreamScrub::wanted(specs) {
        return Ok(false);
    }
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 into a local array of two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let [r, w] = fds;
    // SAFETY: this process is single-threaded here (the caller's
    // contract: `skarn run` starts no thread before the helper); the
    // child only forks again and exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        let e = std::io::Error::last_os_error();
        // SAFETY: closes the two descriptors made above.
        unsafe { (libc::close(r), libc::close(w)) };
        return Err(e);
    }
    if pid == 0 {
        // SAFETY: fork in the single-threaded child; the grandchild runs
        // the relay and never returns, the child exits at once.
        let gpid = unsafe { libc::fork() };
        if gpid == 0 {
            relay(r, w, specs);
        }
        // SAFETY: ends the intermediate child without running destructors
        // (they belong to the parent).
        unsafe { libc::_exit(if gpid < 0 { 1 } else { 0 }) };
    }
    let mut status = 0;
    // SAFETY: waits for the child forked above (it exits at once), then
    // makes the pipe's read end standard input and closes both ends.
    let ok = unsafe {
        libc::waitpid(pid, &mut status, 0);
        libc::close(w);
        let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 && libc::dup2(r, 0) == 0;
        libc::close(r);
        ok
    };
    if !ok {
        return Err(std::io::Error::other(
            "cannot start the relay of standard input",
        ));
    }
    Ok(true)
}

/// The relay: standard input to the pipe's write end `w`, scrubbed of
/// `specs`' values (their windows built here, while the command starts);
/// never returns.
fn relay(r: i32, w: i32, specs: &[SecretSpec]) -> ! {
    let _ = super::no_core::forbid_core_dumps();
    // SAFETY: this process's own descriptors and signal disposition: a
    // closed pipe is seen as EPIPE from write; only standard input, the
    // pipe (as standard output) and standard error stay open, so no
    // descriptor of the run is held past its end.
    let ok = unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        libc::close(r);
        let ok = libc::dup2(w, 1) == 1;
        libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
        ok
    };
    let mut scrub = StreamScrub::new(specs).filter(|_| ok);
    let code = match scrub.as_mut().map(pump) {
        Some(Ok(())) => 0,
        _ => 1,
    };
    // SAFETY: ends the relay without running the parent's destructors.
    unsafe { libc::_exit(code) }
}

/// Waits until standard input is readable; `false` once the command's
/// end of the pipe is closed (nothing more can be delivered).
fn readable() -> bool {
    let mut p = [
        libc::pollfd {
            fd: 0,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: 1,
            events: 0,
            revents: 0,
        },
    ];
    loop {
        // SAFETY: poll over a local array of two entries.
        let n = unsafe { libc::poll(p.as_mut_ptr(), 2, -1) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return false;
        }
        if p[1].revents & (libc::POLLERR | libc::POLLHUP) != 0 {
            return false;
        }
        if p[0].revents != 0 {
            return true;
        }
    }
}

fn pump(scrub: &mut StreamScrub) -> std::io::Result<()> {
    // SAFETY: descriptors 0 and 1 are this process's own (set up above);
    // ManuallyDrop leaves closing them to the process's exit.
    let (mut input, mut output) = unsafe {
        (
            std::mem::ManuallyDrop::new(std::fs::File::from_raw_fd(0)),
            std::mem::ManuallyDrop::new(std::fs::File::from_raw_fd(1)),
        )
    };
    let mut buf = zeroize::Zeroizing::new(vec![0u8; 64 * 1024]);
    let mut said = false;
    loop {
        if !readable() {
            return Err(std::io::ErrorKind::BrokenPipe.into());
        }
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let out = scrub.push(&buf[..n]);
        said = say_once(scrub, said);
        output.write_all(&out)?;
    }
    let out = scrub.finish();
    say_once(scrub, said);
    output.write_all(&out)
}

/// Say (once, when it first happens) that a value was replaced.
fn say_once(scrub: &StreamScrub, said: bool) -> bool {
    if scrub.replaced() && !said {
        eprintln!(
            "skarn: the command's standard input held a granted secret's real value: the \
             command got its placeholder in its place"
        );
    }
    said || scrub.replaced()
}
