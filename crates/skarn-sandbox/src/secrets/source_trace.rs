//! What a `command` source really reads (ADR 0319): the source helper
//! starts it as its traced child (`ptrace`, following every fork, clone
//! and `execve`) and notes each regular file a process of the source
//! opened (`open`, `openat`, `openat2` that succeeded: the path is read
//! back from `/proc/PID/fd/N`, so no text is guessed) and each program
//! it executed (`/proc/PID/exe`). The list goes back to the caller, which
//! hides the files holding the value from every run (`source_reads`).
//!
//! Every system call of the source stops it twice (entry and exit): no
//! seccomp `RET_TRACE` filter, because a filter stays with a process the
//! tracer lets go, and a daemon the source leaves behind (`gpg-agent`
//! started by `pass`) would then see every `open` fail. The trace ends
//! when the source's first process exits: the helper exits, and the
//! kernel detaches what is left, untouched.

use std::collections::HashSet;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// Most distinct files noted for one source, system files included (one
/// cap: atk27r F7, a file past a list dropped silently could not be
/// hidden); a source opening more is refused (atk27q F8).
pub const MAX_FILES: usize = 12288;

/// What the kernel returns for `PTRACE_GET_SYSCALL_INFO` (its ABI: a
/// 24-byte head, then the entry, exit or seccomp part).
#[repr(C)]
#[derive(Default)]
struct SyscallInfo {
    op: u8,
    _pad: [u8; 3],
    arch: u32,
    _ip: u64,
    _sp: u64,
    data: [u64; 8],
}

const PTRACE_GET_SYSCALL_INFO: libc::c_uint = 0x420e;
const OP_ENTRY: u8 = 1;
const OP_EXIT: u8 = 2;
/// `AUDIT_ARCH_I386`: a 32-bit program on a 64-bit kernel.
const ARCH_I386: u32 = 0x4000_0003;

/// Whether system call `nr` of `arch` opens a file by name.
fn opens(arch: u32, nr: u64) -> bool {
    if arch == ARCH_I386 {
        // open, openat, openat2 of the 32-bit table.
        return matches!(nr, 5 | 295 | 437);
    }
    #[cfg(target_arch = "x86_64")]
    if nr == libc::SYS_open as u64 || nr == libc::SYS_creat as u64 {
        return true;
    }
    nr == libc::SYS_openat as u64 || nr == 437
}

/// The outcome of a traced source.
pub struct Traced {
    /// How its first process ended (a `waitpid` status).
    pub status: libc::c_int,
    /// The regular files its processes opened or executed.
    pub files: Vec<PathBuf>,
    /// Whether it opened more than `MAX_FILES` files (the list is then
    /// incomplete).
    pub cut: bool,
}

/// Start `argv` as a traced child (standard input `/dev/null`) and follow
/// it until its first process ends. `Err` before it started: tracing
/// cannot be set up here (`ptrace` refused), or it could not be
/// executed. The caller must be single-threaded (a plain `fork`).
pub fn run(argv: &[std::ffi::OsString]) -> Result<Traced, String> {
    let args: Vec<CString> = argv
        .iter()
        .map(|a| CString::new(a.as_bytes()).map_err(|_| "a NUL byte in the command".to_string()))
        .collect::<Result<_, _>>()?;
    let Some(prog) = args.first() else {
        return Err("command is empty".into());
    };
    let mut ptrs: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    // What the child reports before `execve`: its errno and the step.
    let mut fds = [0; 2];
    // SAFETY: `fds` is a valid array of two ints.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(format!("a pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: the helper is single-threaded (see `source_helper`): the
    // child only makes system calls on memory prepared above until
    // `execvp` or `_exit`.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: async-signal-safe calls only, on prepared memory.
        unsafe { child(fds[1], prog.as_ptr(), ptrs.as_ptr()) }
    }
    // SAFETY: closing our copy of the writing end.
    unsafe { libc::close(fds[1]) };
    let mut st: libc::c_int = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut st, libc::__WALL) };
    if !libc::WIFSTOPPED(st) {
        let mut buf = [0u8; 8];
        // SAFETY: reading at most 8 bytes into `buf`.
        let n = unsafe { libc::read(fds[0], buf.as_mut_ptr().cast(), 8) };
        // SAFETY: our descriptor.
        unsafe { libc::close(fds[0]) };
        let errno = i32::from_ne_bytes([buf[0], buf[1], buf[2], buf[3]]);
        let err = std::io::Error::from_raw_os_error(errno);
        return Err(match (n, buf[4]) {
            (8, b'T') => format!("the source cannot be traced here (ptrace refused: {err})"),
            (8, _) => format!("{}: {err}", argv[0].to_string_lossy()),
            _ => "the source's process ended before it started".into(),
        });
    }
    let opts = libc::PTRACE_O_TRACESYSGOOD
        | libc::PTRACE_O_TRACECLONE
        | libc::PTRACE_O_TRACEFORK
        | libc::PTRACE_O_TRACEVFORK
        | libc::PTRACE_O_TRACEEXEC;
    // SAFETY: `pid` is our stopped tracee.
    if unsafe { libc::ptrace(libc::PTRACE_SETOPTIONS, pid, 0, opts) } != 0 {
        let e = std::io::Error::last_os_error();
        // SAFETY: our child; it has not run the source.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        return Err(format!("the source cannot be traced here: {e}"));
    }
    // SAFETY: our descriptor (the child's end closed at `execve`).
    unsafe { libc::close(fds[0]) };
    let (files, cut) = follow(pid, &mut st);
    Ok(Traced {
        status: st,
        files,
        cut,
    })
}

/// The child: traced, stopped until the tracer is ready, then the source.
///
/// # Safety
/// Called right after `fork` in a single-threaded process.
unsafe fn child(report: i32, prog: *const libc::c_char, argv: *const *const libc::c_char) -> ! {
    let fail = |step: u8| {
        let e = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        let b = e.to_ne_bytes();
        let msg = [b[0], b[1], b[2], b[3], step, 0, 0, 0];
        // SAFETY: writing 8 bytes from `msg`, then leaving.
        unsafe {
            libc::write(report, msg.as_ptr().cast(), 8);
            libc::_exit(127)
        }
    };
    // SAFETY: plain system calls on valid arguments.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY);
        if null < 0 || libc::dup2(null, 0) < 0 {
            fail(b'N');
        }
        if libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) != 0 {
            fail(b'T');
        }
        libc::raise(libc::SIGSTOP);
        libc::execvp(prog, argv);
    }
    fail(b'X')
}

/// Follow `main` and its descendants until `main` ends (`st` gets its
/// status); the files they opened or executed, and whether more were
/// opened than noted.
fn follow(main: libc::pid_t, st: &mut libc::c_int) -> (Vec<PathBuf>, bool) {
    let mut seen: HashSet<libc::pid_t> = HashSet::from([main]);
    let mut files: Vec<PathBuf> = Vec::new();
    let mut noted: HashSet<PathBuf> = HashSet::new();
    let mut cut = false;
    // Processes announced by a fork event whose first stop is to come.
    let mut born: HashSet<libc::pid_t> = HashSet::new();
    let mut note = |p: PathBuf| {
        if !std::fs::metadata(&p).is_ok_and(|m| m.is_file()) {
            return;
        }
        let real = std::fs::canonicalize(&p).unwrap_or(p);
        if noted.contains(&real) {
            return;
        }
        if noted.len() >= MAX_FILES {
            cut = true;
            return;
        }
        noted.insert(real.clone());
        files.push(real);
    };
    let resume = |pid: libc::pid_t, sig: libc::c_int| {
        // SAFETY: `pid` is a stopped tracee of ours.
        unsafe { libc::ptrace(libc::PTRACE_SYSCALL, pid, 0, sig) };
    };
    resume(main, 0);
    loop {
        let mut s: libc::c_int = 0;
        // SAFETY: waiting for any tracee of ours.
        let pid = unsafe { libc::waitpid(-1, &mut s, libc::__WALL) };
        if pid < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            break;
        }
        if libc::WIFEXITED(s) || libc::WIFSIGNALED(s) {
            seen.remove(&pid);
            if pid == main {
                *st = s;
                break;
            }
            continue;
        }
        if !libc::WIFSTOPPED(s) {
            continue;
        }
        let sig = libc::WSTOPSIG(s);
        let event = (s >> 16) & 0xff;
        if sig == libc::SIGTRAP | 0x80 {
            if let Some(p) = opened(pid) {
                note(p);
            }
            resume(pid, 0);
        } else if sig == libc::SIGTRAP && event != 0 {
            if matches!(
                event,
                libc::PTRACE_EVENT_FORK | libc::PTRACE_EVENT_VFORK | libc::PTRACE_EVENT_CLONE
            ) {
                let mut child: libc::c_ulong = 0;
                // SAFETY: `pid` is stopped at a fork event; the kernel
                // writes one `unsigned long` into `child`.
                let got =
                    unsafe { libc::ptrace(libc::PTRACE_GETEVENTMSG, pid, 0, &mut child as *mut _) }
                        == 0;
                let child = child as libc::pid_t;
                if got && !seen.contains(&child) {
                    born.insert(child);
                }
            }
            if event == libc::PTRACE_EVENT_EXEC
                && let Ok(p) = std::fs::read_link(format!("/proc/{pid}/exe"))
            {
                note(p);
            }
            resume(pid, 0);
        } else if seen.insert(pid) && sig == libc::SIGSTOP {
            // A new process's first stop.
            born.remove(&pid);
            resume(pid, 0);
        } else {
            let mut si: libc::siginfo_t = unsafe_zeroed();
            // SAFETY: `si` is a valid siginfo buffer; `pid` is stopped.
            let delivery =
                unsafe { libc::ptrace(libc::PTRACE_GETSIGINFO, pid, 0, &mut si as *mut _) } == 0;
            resume(pid, if delivery { sig } else { 0 });
        }
    }
    // A process born just before the first one ended still has its
    // first stop (a SIGSTOP) to come: once the helper exits it would
    // stay stopped, holding the source's output open. Wait for that stop
    // and let it go.
    for pid in born {
        let mut s: libc::c_int = 0;
        // SAFETY: waiting for a tracee of ours, then detaching it.
        unsafe {
            if libc::waitpid(pid, &mut s, libc::__WALL) == pid && libc::WIFSTOPPED(s) {
                libc::ptrace(libc::PTRACE_DETACH, pid, 0, 0);
            }
        }
    }
    (files, cut)
}

/// A zeroed `siginfo_t`.
fn unsafe_zeroed() -> libc::siginfo_t {
    // SAFETY: `siginfo_t` is plain data; all-zero is a valid value.
    unsafe { std::mem::zeroed() }
}

/// At a system call stop of `pid`: the file an `open*` that just
/// succeeded returned, by the name the kernel gives its descriptor.
fn opened(pid: libc::pid_t) -> Option<PathBuf> {
    thread_local! {
        static PENDING: std::cell::RefCell<std::collections::HashMap<libc::pid_t, bool>> =
            std::cell::RefCell::default();
    }
    let mut info = SyscallInfo::default();
    // SAFETY: the kernel writes at most `size_of::<SyscallInfo>()` bytes
    // into `info`; `pid` is a stopped tracee of ours.
    let n = unsafe {
        libc::ptrace(
            PTRACE_GET_SYSCALL_INFO as _,
            pid,
            std::mem::size_of::<SyscallInfo>(),
            &mut info as *mut SyscallInfo,
        )
    };
    if n <= 0 {
        return None;
    }
    match info.op {
        OP_ENTRY => {
            let is_open = opens(info.arch, info.data[0]);
            PENDING.with(|m| m.borrow_mut().insert(pid, is_open));
            None
        }
        OP_EXIT => {
            let was_open = PENDING
                .with(|m| m.borrow_mut().remove(&pid))
                .unwrap_or(false);
            let rval = info.data[0] as i64;
            let is_error = info.data[1] & 0xff != 0;
            if !was_open || is_error || rval < 0 {
                return None;
            }
            let fd = PathBuf::from(format!("/proc/{pid}/fd/{rval}"));
            // A regular file only (not a pipe, socket or device).
            std::fs::metadata(&fd).ok().filter(|m| m.is_file())?;
            std::fs::read_link(&fd).ok().filter(|p| p.is_absolute())
        }
        _ => None,
    }
}
