//! `--publish HOST_PORT:SANDBOX_PORT` (ADR 0183): a listener on the host's
//! 127.0.0.1, made before the helper enters the run's network namespace,
//! whose connections the helper relays, from inside that namespace, to a
//! port of the sandbox's own loopback (a dev server started by the
//! command). Only with `--net loopback`; off unless asked. Nothing of the
//! host's network is given to the command: it only receives connections
//! that host programs make to the published port.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};

/// The host-side listeners, bound before the namespace is entered.
pub(super) struct Listeners(Vec<(TcpListener, u16)>);

/// Bind every published host port on 127.0.0.1.
pub(super) fn bind(ports: &[(u16, u16)]) -> io::Result<Listeners> {
    let mut out = Vec::new();
    for (host, sandbox) in ports {
        let l = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, *host)))
            .map_err(|e| io::Error::new(e.kind(), format!("127.0.0.1:{host}: {e}")))?;
        out.push((l, *sandbox));
    }
    Ok(Listeners(out))
}

impl Listeners {
    /// Start the relay: a process forked by the helper once init is (the
    /// helper itself may start no thread after entering a new PID
    /// namespace). It lives in the run's network namespace and, with a
    /// PID namespace, in the run's: it ends when the run does (and when
    /// the helper dies). Each accepted connection is relayed to the
    /// sandbox's loopback port.
    pub(super) fn start(self, pid_ns: bool) {
        if self.0.is_empty() {
            return;
        }
        // SAFETY: the helper is single-threaded (a fresh exec that starts no threads).
        match unsafe { crate::linux::sys::fork() } {
            Ok(0) => {
                // In the run's PID namespace the relay is handed to its
                // init (which reaps it, and whose end kills it): a child
                // of the helper left unreaped would keep the namespace
                // from ending. Without one, it dies with the helper.
                if pid_ns {
                    // SAFETY: a child of the single-threaded helper.
                    match unsafe { crate::linux::sys::fork() } {
                        Ok(0) => {}
                        _ => crate::linux::sys::exit_now(0),
                    }
                } else {
                    let _ = super::privs::set_parent_death_signal(libc::SIGKILL);
                }
                let mut threads = Vec::new();
                for (l, port) in self.0 {
                    threads.push(std::thread::spawn(move || {
                        for conn in l.incoming().flatten() {
                            std::thread::spawn(move || {
                                let _ = pipe(conn, port);
                            });
                        }
                    }));
                }
                for t in threads {
                    let _ = t.join();
                }
                crate::linux::sys::exit_now(0)
            }
            // (The listeners close here: only the relay holds them.)
            Ok(pid) => {
                if pid_ns {
                    let mut st = 0;
                    // SAFETY: reaping our own short-lived child.
                    unsafe { libc::waitpid(pid, &mut st, 0) };
                }
            }
            Err(e) => super::err_line(&format!("--publish: the relay could not start: {e}")),
        }
    }
}

fn pipe(host: TcpStream, port: u16) -> io::Result<()> {
    let inner = TcpStream::connect(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))?;
    let (mut hr, mut iw) = (host.try_clone()?, inner.try_clone()?);
    let (mut ir, mut hw) = (inner, host);
    let up = std::thread::spawn(move || {
        let _ = io::copy(&mut hr, &mut iw);
        let _ = iw.shutdown(std::net::Shutdown::Write);
    });
    let _ = io::copy(&mut ir, &mut hw);
    let _ = hw.shutdown(std::net::Shutdown::Write);
    let _ = up.join();
    Ok(())
}
