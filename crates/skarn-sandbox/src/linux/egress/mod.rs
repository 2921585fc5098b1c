//! `--net allow:...` (issue 11), sandbox side: the plan part, the proxy
//! process and the hand-over of its listening sockets.
//!
//! Before the namespaces exist, the helper forks the **proxy process**,
//! which stays in the host's network (and user) namespace. After `lo` is up
//! in the new network namespace, init binds the HTTP and SOCKS5 listening
//! sockets on 127.0.0.1 there and passes them to the proxy over a unix
//! socket pair (`SCM_RIGHTS`). A listening socket keeps the namespace it
//! was created in, so the proxy accepts inside and connects outside, to
//! the allowed hosts only. The proxy confines itself (Landlock: a few
//! resolver files readable, nothing writable, no TCP bind), dies with the
//! helper (parent-death signal, and the helper kills it after the run),
//! and returns its counters for the report. The plan part is
//! [`crate::linux::plan::egress`].

pub mod proxy;

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicI32, Ordering};

pub use crate::linux::plan::egress::{
    EgressPlan, HTTP_PORT, SOCKS_PORT, plan_egress, plan_notes, proxy_env,
};
use crate::linux::sys;

static HANDOVER_FD: AtomicI32 = AtomicI32::new(-1);

/// Remember the helper's end of the proxy socket pair for init.
pub(crate) fn set_handover_fd(fd: RawFd) {
    HANDOVER_FD.store(fd, Ordering::SeqCst);
}

/// The descriptor init sends the listening sockets on.
pub(crate) fn handover_fd() -> RawFd {
    HANDOVER_FD.load(Ordering::SeqCst)
}

/// The running proxy process, seen from the helper.
pub struct ProxyProc {
    pid: libc::pid_t,
    fd: RawFd,
}

impl ProxyProc {
    /// The helper's end of the socket pair (init sends the listeners on it).
    pub fn fd(&self) -> RawFd {
        self.fd
    }

    /// Ask the proxy to stop, collect its counters, make sure it is gone.
    pub fn finish(self) -> Option<skarn_egress::EgressReport> {
        sys::write_fd(self.fd, b"stop");
        let mut pfd = libc::pollfd {
            fd: self.fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut pfd, 1, 2000) } > 0;
        let mut buf = vec![0u8; 1 << 20];
        let n = if ready {
            // SAFETY: buf is valid for its length.
            unsafe { libc::recv(self.fd, buf.as_mut_ptr().cast(), buf.len(), 0) }
        } else {
            -1
        };
        self.kill();
        (n > 0)
            .then(|| serde_json::from_slice(&buf[..n as usize]).ok())
            .flatten()
    }

    /// Kill and reap the proxy.
    pub fn kill(self) {
        sys::kill(self.pid, libc::SIGKILL);
        let mut st = 0;
        // SAFETY: reaping our own child; closing our own descriptor.
        unsafe {
            while libc::waitpid(self.pid, &mut st, 0) < 0
                && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
            {}
            libc::close(self.fd);
        }
    }
}

/// Fork the proxy process (call before creating the namespaces).
pub fn spawn(plan: &EgressPlan) -> io::Result<ProxyProc> {
    let mut sv = [0; 2];
    // SAFETY: sv is a valid 2-int array.
    sys::check(unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            sv.as_mut_ptr(),
        )
    })?;
    // SAFETY: getpid cannot fail.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the helper is single-threaded (a fresh exec that starts no threads).
    match unsafe { sys::fork() } {
        Ok(0) => {
            // SAFETY: closing the helper's end in the child.
            unsafe { libc::close(sv[0]) };
            crate::linux::egress::proxy::proxy_main(plan, sv[1], parent)
        }
        Ok(pid) => {
            // SAFETY: closing the child's end in the helper.
            unsafe { libc::close(sv[1]) };
            Ok(ProxyProc { pid, fd: sv[0] })
        }
        Err(e) => {
            // SAFETY: closing both ends we own.
            unsafe {
                libc::close(sv[0]);
                libc::close(sv[1]);
            }
            Err(e)
        }
    }
}

/// In init, after `lo` is up: bind the proxy's listening sockets in this
/// network namespace and send them to the proxy. Closes `fd`.
pub(crate) fn hand_over(fd: RawFd, plan: &EgressPlan) -> io::Result<()> {
    let http = std::net::TcpListener::bind(("127.0.0.1", plan.http_port))?;
    let socks = std::net::TcpListener::bind(("127.0.0.1", plan.socks_port))?;
    use std::os::fd::AsRawFd;
    let r = crate::linux::egress_fd::send_fds(fd, &[http.as_raw_fd(), socks.as_raw_fd()]);
    // SAFETY: closing our own descriptor (the listeners close on drop).
    unsafe { libc::close(fd) };
    r
}
