//! [`HostFacts`]: what this host offers, probed once before planning.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Environment variable naming mechanisms to treat as missing, comma
/// separated (`namespaces`, `userns`, `landlock`, `landlock-net`,
/// `landlock-scope`, `seccomp`, `cgroup`). A testing aid to exercise the
/// degraded paths on a fully capable host; it can only weaken confinement,
/// and every weakening shows up in the report.
pub const SIMULATE_MISSING_ENV: &str = "SKARN_SANDBOX_SIMULATE_MISSING";

/// Facts about the host that the pure planner needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostFacts {
    /// Real uid / gid of the caller.
    pub uid: u32,
    /// Real gid of the caller.
    pub gid: u32,
    /// Home directory (`$HOME`).
    pub home: Option<PathBuf>,
    /// Highest Landlock ABI offered (0 = none).
    pub landlock_abi: u32,
    /// Namespaces can be created (as root directly, else through a user namespace).
    pub namespaces: bool,
    /// A user namespace is needed to create the others (non-root caller).
    pub needs_userns: bool,
    /// seccomp-bpf filters can be installed.
    pub seccomp: bool,
    /// Writable pids cgroup directory to create the run's cgroup in.
    pub cgroup_pids: Option<PathBuf>,
    /// CPU architecture (`x86_64`, `aarch64`, ...).
    pub arch: String,
}

impl HostFacts {
    /// Probe the running host. Cheap (a few syscalls and small file reads).
    pub fn probe() -> HostFacts {
        let missing = std::env::var(SIMULATE_MISSING_ENV).unwrap_or_default();
        let missing: Vec<&str> = missing.split(',').map(str::trim).collect();
        let has = |m: &str| !missing.contains(&m);
        // SAFETY: getuid/getgid cannot fail and touch no memory.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let mut abi = if has("landlock") {
            crate::landlock_rules::kernel_abi()
        } else {
            0
        };
        if !has("landlock-scope") {
            abi = abi.min(5);
        }
        if !has("landlock-net") {
            abi = abi.min(3);
        }
        let is_root = uid == 0 && has("root");
        let userns_ok = has("userns") && userns_sysctls_allow();
        let namespaces = has("namespaces") && (is_root || userns_ok);
        let cgroup_pids = if is_root && has("cgroup") {
            find_pids_cgroup()
        } else {
            None
        };
        HostFacts {
            uid,
            gid,
            home: std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute()),
            landlock_abi: abi,
            namespaces,
            needs_userns: !is_root,
            seccomp: has("seccomp") && seccomp_available(),
            cgroup_pids,
            arch: std::env::consts::ARCH.to_string(),
        }
    }
}

fn read_num(path: &str) -> Option<i64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Whether the sysctls allow unprivileged user namespaces.
fn userns_sysctls_allow() -> bool {
    if read_num("/proc/sys/user/max_user_namespaces") == Some(0) {
        return false;
    }
    if read_num("/proc/sys/kernel/unprivileged_userns_clone") == Some(0) {
        return false;
    }
    true
}

fn seccomp_available() -> bool {
    // PR_GET_SECCOMP returns 0 when seccomp is compiled in and unused here.
    // SAFETY: prctl(PR_GET_SECCOMP) reads no memory from us.
    let r = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    r >= 0
}

/// A pids cgroup directory (v2 unified, or v1 `pids` hierarchy) where a
/// child cgroup can be created by this (root) process.
fn find_pids_cgroup() -> Option<PathBuf> {
    let cg = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in cg.lines() {
        let mut parts = line.splitn(3, ':');
        let (_id, ctrl, path) = (parts.next()?, parts.next()?, parts.next()?);
        if ctrl.split(',').any(|c| c == "pids") {
            let dir = PathBuf::from("/sys/fs/cgroup/pids").join(path.trim_start_matches('/'));
            if usable_cgroup_dir(&dir) {
                return Some(dir);
            }
        } else if ctrl.is_empty() {
            // cgroup v2: a child of our cgroup if pids is delegated to its
            // children, else of the root cgroup (exempt from the
            // no-internal-processes rule).
            let root = PathBuf::from("/sys/fs/cgroup");
            for dir in [root.join(path.trim_start_matches('/')), root.clone()] {
                let sub =
                    std::fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
                if sub.split_whitespace().any(|c| c == "pids") && usable_cgroup_dir(&dir) {
                    return Some(dir);
                }
            }
        }
    }
    None
}

fn usable_cgroup_dir(dir: &std::path::Path) -> bool {
    dir.join("cgroup.procs").exists() && access_w(dir)
}

fn access_w(p: &std::path::Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(p.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: c is a valid NUL-terminated string.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}
