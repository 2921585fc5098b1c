//! The hidden entry `__source-helper N PLACE... PROGRAM ARG...` (ADR
//! 0283): a fresh single-threaded process that makes a private mount
//! namespace, covers each PLACE with an empty read-only tmpfs (a file
//! with `/dev/null`), and executes the source there, as the user, with
//! no privilege it did not have.
//!
//! As root only the mount namespace is new. Otherwise a user namespace
//! maps the user (and group) to itself: the capabilities it gives are used
//! for the mounts and lost at `execve` (the source's user id is not 0
//! there), and whoever the source talks to (a D-Bus keyring, an agent's
//! socket) still sees the real user. Mounts are made private first, so
//! nothing reaches the host's namespace.
//!
//! Standard input is the writing end of the caller's status pipe: why the
//! source could not be started is written there (`N...`: no namespace can
//! be made here; `E...`: anything else, also a source that cannot be
//! traced); when the traced source ends (ADR 0319, [`super::source_trace`])
//! `T` and the files it opened or executed, each ended by a NUL byte. The
//! source's standard input is `/dev/null`; the helper exits with its code.

use std::ffi::OsString;
use std::io::Write;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use rustix::mount::{MountFlags, MountPropagationFlags};
use rustix::thread::UnshareFlags;

/// Run the helper (argv[2..] as above); returns the exit code when the
/// source was not started.
pub fn helper_main() -> i32 {
    let Ok(fd) = std::io::stdin().as_fd().try_clone_to_owned() else {
        return 125;
    };
    let mut status = std::fs::File::from(fd);
    let args: Vec<OsString> = std::env::args_os().skip(2).collect();
    let (hide, argv) = match parse(&args) {
        Some(x) => x,
        None => {
            let _ = status.write_all(b"Esource helper: malformed arguments");
            return 125;
        }
    };
    if let Err(e) = enter_namespace() {
        let _ = status.write_all(format!("N{e}").as_bytes());
        return 0;
    }
    for p in &hide {
        if let Err(e) = cover(p) {
            let _ = status.write_all(
                format!("Ehiding {} from the source failed: {e}", p.display()).as_bytes(),
            );
            return 125;
        }
    }
    let Some((prog, rest)) = argv.split_first() else {
        let _ = status.write_all(b"Ecommand is empty");
        return 125;
    };
    // The source runs traced (ADR 0319): what it opened and executed is
    // written back, and where it cannot be traced it does not run.
    let _ = (prog, rest);
    match super::source_trace::run(&argv) {
        Ok(t) => {
            let mut msg = b"T".to_vec();
            for f in &t.files {
                msg.extend_from_slice(f.as_os_str().as_encoded_bytes());
                msg.push(0);
            }
            // A list that is not whole refuses the source (atk27q F8): a
            // file past it could not be hidden from runs.
            if t.cut || msg.len() >= MAX_STATUS {
                let _ = status.write_all(
                    format!(
                        "Ethe source opened more than {} files (system files counted, or their \
                         list is over {} KiB): where its value lies cannot all be recorded, so \
                         it is refused (fail closed: ADR 0319, 0334)",
                        super::source_trace::MAX_FILES,
                        MAX_STATUS >> 10
                    )
                    .as_bytes(),
                );
                return 125;
            }
            let _ = status.write_all(&msg);
            match (libc::WIFEXITED(t.status), libc::WIFSIGNALED(t.status)) {
                (true, _) => libc::WEXITSTATUS(t.status),
                (_, true) => 128 + libc::WTERMSIG(t.status),
                _ => 125,
            }
        }
        Err(e) => {
            let _ = status.write_all(format!("E{e}").as_bytes());
            127
        }
    }
}

/// Most bytes of the files' list (the reader keeps 1 MiB).
const MAX_STATUS: usize = (1 << 20) - 64;

/// `N PLACE... PROGRAM ARG...` into the places and the source's argv.
fn parse(args: &[OsString]) -> Option<(Vec<PathBuf>, Vec<OsString>)> {
    let n: usize = args.first()?.to_str()?.parse().ok()?;
    let hide = args.get(1..=n)?.iter().map(PathBuf::from).collect();
    Some((hide, args.get(n + 1..)?.to_vec()))
}

/// A private mount namespace (and, when not root or when root may not
/// make one, a user namespace mapping the user to itself).
fn enter_namespace() -> Result<(), String> {
    let uid = rustix::process::getuid();
    let gid = rustix::process::getgid();
    // SAFETY: this process is single-threaded (the hidden entry runs
    // before `main` starts any thread or runtime) and the flags hold no
    // CLONE_FILES, so no thread can observe a descriptor table change.
    let plain =
        uid.is_root() && unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWNS) }.is_ok();
    if !plain {
        // SAFETY: as above (single-threaded, no CLONE_FILES).
        unsafe { rustix::thread::unshare_unsafe(UnshareFlags::NEWUSER | UnshareFlags::NEWNS) }
            .map_err(|e| format!("no user namespace can be made: {e}"))?;
        let map = |f: &str, text: String| {
            std::fs::write(format!("/proc/self/{f}"), text)
                .map_err(|e| format!("writing /proc/self/{f}: {e}"))
        };
        map("setgroups", "deny".into())?;
        map("uid_map", format!("{0} {0} 1\n", uid.as_raw()))?;
        map("gid_map", format!("{0} {0} 1\n", gid.as_raw()))?;
    }
    rustix::mount::mount_change(
        "/",
        MountPropagationFlags::PRIVATE | MountPropagationFlags::REC,
    )
    .map_err(|e| format!("making mounts private: {e}"))
}

/// Cover `p` with nothing: an empty read-only tmpfs over a directory,
/// `/dev/null` over anything else. A path that is gone (or already under
/// a covered place) needs nothing.
fn cover(p: &Path) -> Result<(), String> {
    let Ok(md) = std::fs::metadata(p) else {
        return Ok(());
    };
    let r = if md.is_dir() {
        rustix::mount::mount(
            "skarn-hidden",
            p,
            "tmpfs",
            MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
            c"size=4k,mode=0555",
        )
    } else {
        rustix::mount::mount_bind("/dev/null", p)
    };
    match r {
        Ok(()) => Ok(()),
        // What the user cannot enter or read (another user's run
        // directory) the source, running as the user, cannot load either.
        Err(_) if rustix::fs::access(p, reach(md.is_dir())).is_err() => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

/// What the source needs to reach something inside a directory, or to
/// read a file.
fn reach(dir: bool) -> rustix::fs::Access {
    match dir {
        true => rustix::fs::Access::EXEC_OK,
        false => rustix::fs::Access::READ_OK,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_split_into_places_and_the_source() {
        let a: Vec<OsString> = ["2", "/a", "/b", "sh", "-c", "x"]
            .iter()
            .map(OsString::from)
            .collect();
        let (h, argv) = parse(&a).unwrap();
        assert_eq!(h, vec![PathBuf::from("/a"), PathBuf::from("/b")]);
        assert_eq!(argv, vec!["sh", "-c", "x"]);
        assert!(parse(&a[..2]).is_none());
        assert!(parse(&[OsString::from("x")]).is_none());
    }
}
