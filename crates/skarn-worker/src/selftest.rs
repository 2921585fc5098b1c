//! The confinement self-test: run inside an already-confined worker instead
//! of a script, it attempts what an escaped script would try and reports
//! each error. Used by the tests (which check from outside that nothing
//! happened) and by `skarn doctor`. It is reachable only through a job the
//! parent sends; a script cannot trigger it, and every attempt is something
//! the confinement must refuse anyway.

use std::ffi::CString;
use std::io;

use crate::protocol::{Attempt, SelftestSpec};

fn attempt(what: impl Into<String>, r: io::Result<String>) -> Attempt {
    match r {
        Ok(success) => Attempt {
            what: what.into(),
            blocked: false,
            detail: success,
        },
        Err(e) => Attempt {
            what: what.into(),
            blocked: true,
            detail: e.to_string(),
        },
    }
}

fn cvt(r: libc::c_long) -> io::Result<libc::c_long> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn cstr(s: &str) -> CString {
    CString::new(s.replace('\0', "")).unwrap_or_default()
}

fn open(path: &str, flags: libc::c_int) -> io::Result<String> {
    let p = cstr(path);
    // SAFETY: `p` is a valid NUL-terminated string for the call's duration.
    let fd = cvt(unsafe { libc::open(p.as_ptr(), flags, 0o600) } as libc::c_long)?;
    // SAFETY: fd was just returned by open and is owned by nobody else.
    unsafe { libc::close(fd as libc::c_int) };
    Ok(format!("opened {path}"))
}

fn write_file(path: &str) -> io::Result<String> {
    let p = cstr(path);
    // SAFETY: valid C string; plain open/write/close on our own descriptor.
    unsafe {
        let fd =
            cvt(libc::open(p.as_ptr(), libc::O_CREAT | libc::O_WRONLY, 0o600) as libc::c_long)?;
        let msg = b"escaped";
        let n = libc::write(fd as libc::c_int, msg.as_ptr().cast(), msg.len());
        libc::close(fd as libc::c_int);
        cvt(n as libc::c_long)?;
    }
    Ok(format!("wrote {path}"))
}

fn socket(domain: libc::c_int, ty: libc::c_int) -> io::Result<String> {
    // SAFETY: socket takes integers only.
    let fd = cvt(unsafe { libc::socket(domain, ty, 0) } as libc::c_long)?;
    // SAFETY: our own descriptor.
    unsafe { libc::close(fd as libc::c_int) };
    Ok("socket created".into())
}

fn connect_loopback(port: u16) -> io::Result<String> {
    // Through std, as a script escaping into Rust code would.
    std::net::TcpStream::connect(("127.0.0.1", port))
        .map(|_| format!("connected to 127.0.0.1:{port}"))
}

fn connect_abstract(name: &str) -> io::Result<String> {
    #[cfg(target_os = "linux")]
    {
        use std::os::linux::net::SocketAddrExt;
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
        std::os::unix::net::UnixStream::connect_addr(&addr)
            .map(|_| format!("connected to abstract unix socket {name:?}"))
    }
    #[cfg(not(target_os = "linux"))]
    {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("no abstract unix sockets here ({name:?})"),
        ))
    }
}

fn fork() -> io::Result<String> {
    // SAFETY: in the child we only call _exit, which is async-signal-safe.
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => Err(io::Error::last_os_error()),
        // SAFETY: the child of fork exits at once without touching shared state.
        0 => unsafe { libc::_exit(0) },
        pid => {
            let mut status = 0;
            // SAFETY: waiting for the child we just created.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            Ok(format!("forked pid {pid}"))
        }
    }
}

fn spawn(program: &str) -> io::Result<String> {
    let mut child = std::process::Command::new(program).spawn()?;
    let _ = child.wait();
    Ok(format!("spawned {program}"))
}

fn execve(program: &str) -> io::Result<String> {
    let p = cstr(program);
    let argv = [p.as_ptr(), std::ptr::null()];
    let envp = [std::ptr::null::<libc::c_char>()];
    // SAFETY: NUL-terminated argv/envp arrays of valid C strings. On success
    // this never returns (and the parent sees no self-test result: a failure).
    cvt(unsafe { libc::execve(p.as_ptr(), argv.as_ptr(), envp.as_ptr()) } as libc::c_long)?;
    Ok(format!("executed {program}"))
}

fn raw(name: &str, r: libc::c_long) -> io::Result<String> {
    cvt(r).map(|v| format!("{name} returned {v}"))
}

/// Run every attempt; `execve` last, since success would replace us.
pub fn run(spec: &SelftestSpec) -> Vec<Attempt> {
    let ppid = rustix::process::getppid().map_or(0, |p| p.as_raw_nonzero().get());
    let mut out = vec![
        attempt(
            format!("open {} for reading", spec.read_path),
            open(&spec.read_path, libc::O_RDONLY),
        ),
        attempt(
            format!("create and write {}", spec.write_path),
            write_file(&spec.write_path),
        ),
        attempt(
            "open / as a directory",
            open("/", libc::O_RDONLY | libc::O_DIRECTORY),
        ),
        attempt(
            "create a TCP socket",
            socket(libc::AF_INET, libc::SOCK_STREAM),
        ),
        attempt(
            "create a UDP socket",
            socket(libc::AF_INET6, libc::SOCK_DGRAM),
        ),
        attempt(
            "create a unix socket",
            socket(libc::AF_UNIX, libc::SOCK_STREAM),
        ),
        attempt(
            "create a netlink socket",
            socket(libc::AF_NETLINK, libc::SOCK_RAW),
        ),
        attempt(
            format!("connect to 127.0.0.1:{}", spec.connect_port),
            connect_loopback(spec.connect_port),
        ),
    ];
    if let Some(name) = &spec.abstract_name {
        out.push(attempt(
            format!("connect to abstract unix socket {name:?}"),
            connect_abstract(name),
        ));
    }
    out.extend([
        attempt("fork", fork()),
        attempt(
            format!("spawn {}", spec.spawn_program),
            spawn(&spec.spawn_program),
        ),
        // SAFETY (all raw calls below): integer arguments only, or null pointers the kernel checks.
        attempt(
            "signal the parent (kill)",
            // SAFETY: kill with signal 0 only checks permission; integers only.
            raw("kill", unsafe { libc::kill(ppid, 0) } as libc::c_long),
        ),
        attempt(
            "ptrace the parent",
            // SAFETY: ptrace attempt on the parent: integer arguments and null pointers; the call is expected to fail.
            raw("ptrace", unsafe {
                libc::ptrace(
                    libc::PTRACE_ATTACH,
                    ppid,
                    std::ptr::null_mut::<libc::c_void>(),
                    std::ptr::null_mut::<libc::c_void>(),
                )
            }),
        ),
        attempt(
            "unshare a user namespace",
            // SAFETY: unshare takes a flag integer.
            raw("unshare", unsafe { libc::unshare(libc::CLONE_NEWUSER) }
                as libc::c_long),
        ),
        attempt("map executable memory", {
            // SAFETY: mmap of a fresh anonymous mapping; the result is only compared and unmapped.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    4096,
                    libc::PROT_READ | libc::PROT_EXEC,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                Err(io::Error::last_os_error())
            } else {
                Ok("mapped PROT_EXEC".into())
            }
        }),
        attempt(
            "memfd_create",
            // SAFETY: memfd_create reads the static NUL-terminated name.
            raw("memfd_create", unsafe {
                libc::syscall(libc::SYS_memfd_create, c"x".as_ptr(), 0)
            }),
        ),
        attempt(
            "io_uring_setup",
            // SAFETY: io_uring_setup writes into the params buffer we own (expected to fail).
            raw("io_uring_setup", unsafe {
                libc::syscall(
                    libc::SYS_io_uring_setup,
                    1,
                    std::ptr::null_mut::<libc::c_void>(),
                )
            }),
        ),
        attempt("raise the address-space limit", {
            let lim = libc::rlimit {
                rlim_cur: libc::RLIM_INFINITY,
                rlim_max: libc::RLIM_INFINITY,
            };
            raw(
                "setrlimit",
                // SAFETY: setrlimit reads the rlimit struct we own.
                unsafe { libc::setrlimit(libc::RLIMIT_AS, &lim) } as libc::c_long,
            )
        }),
    ]);
    out.push(attempt(
        format!("execve {}", spec.spawn_program),
        execve(&spec.spawn_program),
    ));
    out
}
