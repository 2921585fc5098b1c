//! Escape probes: tiny attacks run *inside* a sandbox by `skarn doctor
//! --self-test` and by the tests (`skarn __sandbox-helper probe KIND ARG`).
//! Each prints one line and exits 0 when the attempt SUCCEEDED (an escape,
//! or for `forks`/`alloc` a measurement) and 1 when it was blocked. The
//! verdict that matters is always re-checked from outside the sandbox.

use std::io::{Read, Write};

/// Marker payload sent by network probes.
pub const MARKER: &[u8] = b"skarn-escape-marker";

fn done(ok: bool, what: &str) -> i32 {
    println!("{} {what}", if ok { "ESCAPED" } else { "blocked" });
    if ok { 0 } else { 1 }
}

fn res<T>(r: std::io::Result<T>, what: &str) -> i32 {
    match r {
        Ok(_) => done(true, what),
        Err(e) => done(false, &format!("{what}: {e}")),
    }
}

/// Connect standard input (a TCP socket) to the IPv4 address `arg` and
/// send the marker.
fn connect_stdin(arg: &str) -> std::io::Result<()> {
    let a: std::net::SocketAddrV4 = arg
        .parse()
        .map_err(|_| std::io::Error::other("not an IPv4 address:port"))?;
    let sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*a.ip()).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: sin is a valid sockaddr_in of the length given.
    let r = unsafe {
        libc::connect(
            0,
            (&sin as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: writing the marker's bytes to fd 0.
    let n = unsafe { libc::write(0, MARKER.as_ptr().cast(), MARKER.len()) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Whether the host could bind vsock `port` itself (`None`: no vsock here).
pub fn host_can_bind_vsock(port: u32) -> Option<bool> {
    // SAFETY: socket takes integers.
    let fd = unsafe { libc::socket(libc::AF_VSOCK, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return None;
    }
    // SAFETY: zeroed sockaddr_vm is valid; fields set below.
    let mut sa: libc::sockaddr_vm = unsafe { std::mem::zeroed() };
    sa.svm_family = libc::AF_VSOCK as libc::sa_family_t;
    sa.svm_port = port;
    sa.svm_cid = libc::VMADDR_CID_ANY;
    // SAFETY: sa is a valid sockaddr_vm of the size given; fd is ours.
    let r = unsafe {
        let r = libc::bind(
            fd,
            (&sa as *const libc::sockaddr_vm).cast(),
            std::mem::size_of::<libc::sockaddr_vm>() as libc::socklen_t,
        );
        libc::close(fd);
        r
    };
    Some(r == 0)
}

/// Run probe `args[0]` with parameter `args[1]`; returns the exit status.
pub fn run_probe(args: &[String]) -> i32 {
    let kind = args.first().map(String::as_str).unwrap_or("");
    let arg = args.get(1).map(String::as_str).unwrap_or("");
    match kind {
        "write" => res(std::fs::write(arg, MARKER), "write"),
        "rename" => {
            let to = args.get(2).map(String::as_str).unwrap_or("");
            res(std::fs::rename(arg, to), "rename")
        }
        "read" => match std::fs::read(arg) {
            Ok(b) => {
                println!("ESCAPED read {} bytes", b.len());
                let _ = std::io::stdout().write_all(&b);
                0
            }
            Err(e) => done(false, &format!("read: {e}")),
        },
        "fd" => {
            let fd: i32 = arg.parse().unwrap_or(-1);
            let mut b = [0u8; 256];
            // SAFETY: reading into a valid buffer from an integer fd.
            let n = unsafe { libc::read(fd, b.as_mut_ptr().cast(), b.len()) };
            if n >= 0 {
                println!("ESCAPED fd {n} bytes");
                let _ = std::io::stdout().write_all(&b[..n as usize]);
                0
            } else {
                done(false, &format!("fd: {}", std::io::Error::last_os_error()))
            }
        }
        "tcp" => res(
            std::net::TcpStream::connect(arg).and_then(|mut s| s.write_all(MARKER)),
            "tcp connect",
        ),
        "tcp-bind" => res(std::net::TcpListener::bind(arg), "tcp bind"),
        // ---- egress (issue 11): CONNECT through the in-sandbox proxy ----
        "proxy-connect" => res(probe_connect(arg), "proxy CONNECT"),
        "udp" => res(
            std::net::UdpSocket::bind("0.0.0.0:0").and_then(|s| s.send_to(MARKER, arg)),
            "udp send",
        ),
        // A socket the caller gave as standard input (issue: stdio handles).
        "stdin-udp" => {
            use std::os::fd::FromRawFd;
            // SAFETY: fd 0 stays open; ManuallyDrop never closes it.
            let s = std::mem::ManuallyDrop::new(unsafe { std::net::UdpSocket::from_raw_fd(0) });
            res(s.send_to(MARKER, arg), "udp send through stdin")
        }
        "stdin-tcp" => res(connect_stdin(arg), "tcp connect through stdin"),
        "unix" => res(
            std::os::unix::net::UnixStream::connect(arg).and_then(|mut s| s.write_all(MARKER)),
            "unix connect",
        ),
        "abstract" => {
            use std::os::linux::net::SocketAddrExt;
            let r = std::os::unix::net::SocketAddr::from_abstract_name(arg.as_bytes())
                .and_then(|a| std::os::unix::net::UnixStream::connect_addr(&a))
                .and_then(|mut s| s.write_all(MARKER));
            res(r, "abstract unix connect")
        }
        "kill" => {
            let pid: i32 = arg.parse().unwrap_or(0);
            // SAFETY: kill takes integers.
            let r = unsafe { libc::kill(pid, libc::SIGTERM) };
            res(
                if r == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                },
                "kill",
            )
        }
        "ptrace" => {
            let pid: i32 = arg.parse().unwrap_or(1);
            // SAFETY: PTRACE_ATTACH takes integers.
            let r = unsafe { libc::ptrace(libc::PTRACE_ATTACH, pid, 0, 0) };
            res(
                if r == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                },
                "ptrace",
            )
        }
        "io_uring" => {
            let mut params = [0u8; 120];
            // SAFETY: io_uring_setup(entries, params) with a zeroed params buffer.
            let r = unsafe { libc::syscall(libc::SYS_io_uring_setup, 4u32, params.as_mut_ptr()) };
            res(
                if r >= 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                },
                "io_uring_setup",
            )
        }
        "unshare" => {
            // SAFETY: unshare takes flags.
            let r = unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) };
            res(
                if r == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                },
                "unshare",
            )
        }
        "tioclinux" => {
            // TIOCLINUX on a pty: the kernel says ENOTTY/EINVAL; seccomp says EPERM.
            let f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/ptmx");
            let Ok(f) = f else {
                return done(false, "tioclinux: no /dev/ptmx");
            };
            let mut sub = [0u8; 2];
            use std::os::fd::AsRawFd;
            // SAFETY: ioctl with a valid buffer.
            let r = unsafe { libc::ioctl(f.as_raw_fd(), 0x541C, sub.as_mut_ptr()) };
            let e = std::io::Error::last_os_error();
            let filtered = r < 0 && e.raw_os_error() == Some(libc::EPERM);
            done(!filtered, &format!("ioctl(TIOCLINUX): {e}"))
        }
        "setuid-openat2" => {
            // struct open_how { flags, mode, resolve }: the mode is behind
            // a pointer, out of seccomp's sight.
            let how: [u64; 3] = [
                (libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC) as u64,
                0o4755,
                0,
            ];
            let Ok(c) = std::ffi::CString::new(arg) else {
                return done(false, "openat2: bad path");
            };
            // SAFETY: valid path and open_how of the size given.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_openat2,
                    libc::AT_FDCWD,
                    c.as_ptr(),
                    how.as_ptr(),
                    std::mem::size_of_val(&how),
                )
            };
            if r >= 0 {
                // SAFETY: closing the descriptor just opened.
                unsafe { libc::close(r as i32) };
            }
            res(
                if r >= 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                },
                "openat2(O_CREAT, 04755)",
            )
        }
        "vsock" => {
            let port: u32 = arg.parse().unwrap_or(0);
            // SAFETY: socket takes integers.
            let fd =
                unsafe { libc::socket(libc::AF_VSOCK, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
            if fd < 0 {
                return done(
                    false,
                    &format!("vsock socket: {}", std::io::Error::last_os_error()),
                );
            }
            // SAFETY: zeroed sockaddr_vm is valid; fields set below.
            let mut sa: libc::sockaddr_vm = unsafe { std::mem::zeroed() };
            sa.svm_family = libc::AF_VSOCK as libc::sa_family_t;
            sa.svm_port = port;
            sa.svm_cid = libc::VMADDR_CID_ANY;
            // SAFETY: sa is a valid sockaddr_vm of the size given.
            let r = unsafe {
                libc::bind(
                    fd,
                    (&sa as *const libc::sockaddr_vm).cast(),
                    std::mem::size_of::<libc::sockaddr_vm>() as libc::socklen_t,
                )
            };
            let r = if r == 0 {
                // SAFETY: listen takes integers.
                unsafe { libc::listen(fd, 1) }
            } else {
                r
            };
            let e = std::io::Error::last_os_error();
            if r == 0 {
                println!("ESCAPED vsock listening on port {port}");
                // Hold the port until stdin closes, so the verdict can be
                // checked from outside.
                let mut b = Vec::new();
                let _ = std::io::stdin().read_to_end(&mut b);
                0
            } else {
                done(false, &format!("vsock bind/listen: {e}"))
            }
        }
        "growsdown" => {
            let mb: usize = arg.parse().unwrap_or(1024);
            let len = mb * 1024 * 1024;
            // SAFETY: anonymous private mapping; no existing memory touched.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_GROWSDOWN,
                    -1,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                return done(
                    false,
                    &format!("mmap {mb} MiB: {}", std::io::Error::last_os_error()),
                );
            }
            let base = p.cast::<u8>();
            for off in (0..len).step_by(4096) {
                // SAFETY: off < len, inside the mapping just made.
                unsafe { base.add(off).write_volatile(1) };
            }
            done(
                true,
                &format!("touched {mb} MiB of a MAP_GROWSDOWN mapping"),
            )
        }
        "forks" => {
            let n: usize = arg.parse().unwrap_or(10);
            let mut pids = Vec::new();
            for _ in 0..n {
                // SAFETY: the probe is single-threaded; the child only pauses.
                match unsafe { libc::fork() } {
                    0 => loop {
                        // SAFETY: pause takes nothing.
                        unsafe { libc::pause() };
                    },
                    p if p > 0 => pids.push(p),
                    _ => break,
                }
            }
            println!("forked {}", pids.len());
            for p in pids {
                // SAFETY: killing and reaping our own children.
                unsafe {
                    libc::kill(p, libc::SIGKILL);
                    libc::waitpid(p, std::ptr::null_mut(), 0);
                }
            }
            0
        }
        "alloc" => {
            // MiB[:MS]: allocate and touch MiB, then hold it MS milliseconds.
            let (mb, hold) = arg.split_once(':').unwrap_or((arg, "0"));
            let mb: usize = mb.parse().unwrap_or(64);
            let mut v: Vec<u8> = Vec::new();
            match v.try_reserve_exact(mb * 1024 * 1024) {
                Ok(()) => {
                    v.resize(mb * 1024 * 1024, 1);
                    println!("allocated {mb} MiB");
                    let ms = hold.parse().unwrap_or(0);
                    std::thread::sleep(std::time::Duration::from_millis(ms));
                    std::hint::black_box(&v);
                    0
                }
                Err(e) => {
                    println!("allocation of {mb} MiB failed: {e}");
                    1
                }
            }
        }
        "tcp-queue" => {
            // N loopback connections to ourselves, each written to without
            // reading until the kernel refuses more: what socket buffers
            // can hold.
            let n: usize = arg.parse().unwrap_or(40);
            let Ok(l) = std::net::TcpListener::bind("127.0.0.1:0") else {
                println!("no loopback listener");
                return 1;
            };
            let Ok(at) = l.local_addr() else { return 1 };
            let buf = vec![b'x'; 1 << 16];
            let (mut total, mut keep) = (0usize, Vec::new());
            for _ in 0..n {
                let Ok(mut c) = std::net::TcpStream::connect(at) else {
                    break;
                };
                let Ok((s, _)) = l.accept() else { break };
                let _ = c.set_nonblocking(true);
                while let Ok(k) = std::io::Write::write(&mut c, &buf) {
                    total += k;
                }
                keep.push((c, s));
            }
            println!("queued {} MiB", total >> 20);
            0
        }
        "self-confine" => self_confine(arg),
        "stdin" => {
            let mut s = String::new();
            let _ = std::io::stdin().read_to_string(&mut s);
            print!("{s}");
            0
        }
        _ => {
            eprintln!("unknown probe {kind:?}");
            2
        }
    }
}

/// Exercise the reusable self-confinement pieces on this very process (as a
/// Code Mode worker would), then try to get out. Exit 0 when everything was
/// blocked, 1 otherwise, 2 when a piece failed to apply.
fn self_confine(addr: &str) -> i32 {
    let steps: [(&str, Result<(), String>); 5] = [
        (
            "unshare_network",
            crate::linux::ns::unshare_network().map_err(|e| e.to_string()),
        ),
        (
            "no_new_privs",
            crate::linux::privs::set_no_new_privs().map_err(|e| e.to_string()),
        ),
        (
            "drop_all_capabilities",
            crate::linux::privs::drop_all_capabilities()
                .map(|_| ())
                .map_err(|e| e.to_string()),
        ),
        (
            "restrict_nothing",
            crate::linux::landlock_rules::restrict_nothing()
                .map(|_| ())
                .map_err(|e| e.to_string()),
        ),
        (
            "seccomp",
            crate::linux::seccomp::deny_programs(&[])
                .and_then(|p| crate::linux::seccomp::install(&p))
                .map_err(|e| e.to_string()),
        ),
    ];
    for (name, r) in &steps {
        if let Err(e) = r {
            println!("failed to apply {name}: {e}");
            return 2;
        }
    }
    let mut escaped = Vec::new();
    if std::fs::read("/etc/hostname").is_ok() {
        escaped.push("read /etc/hostname");
    }
    if std::fs::write("/tmp/skarn-self-confine-probe", b"x").is_ok() {
        escaped.push("write /tmp");
    }
    if std::net::TcpStream::connect(addr).is_ok() {
        escaped.push("tcp connect");
    }
    let mut params = [0u8; 120];
    // SAFETY: io_uring_setup with a zeroed params buffer we own.
    if unsafe { libc::syscall(libc::SYS_io_uring_setup, 4u32, params.as_mut_ptr()) } >= 0 {
        escaped.push("io_uring");
    }
    if escaped.is_empty() {
        println!("confined");
        0
    } else {
        println!("ESCAPED {}", escaped.join(", "));
        1
    }
}

/// Probe for `skarn doctor --self-test`: `CONNECT addr` through the
/// in-sandbox HTTP proxy, then send the probe marker.
fn probe_connect(addr: &str) -> std::io::Result<()> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", crate::linux::egress::HTTP_PORT))?;
    s.set_read_timeout(Some(std::time::Duration::from_secs(20)))?;
    s.write_all(format!("CONNECT {addr} HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())?;
    let mut b = [0u8; 512];
    let n = s.read(&mut b)?;
    let head = String::from_utf8_lossy(&b[..n]);
    if !head.starts_with("HTTP/1.1 200") {
        return Err(std::io::Error::other(
            head.lines().next().unwrap_or("").to_string(),
        ));
    }
    s.write_all(MARKER)
}
