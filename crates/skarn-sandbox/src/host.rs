//! [`HostFacts`]: what this host offers, probed once before planning.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Environment variable naming mechanisms to treat as missing, comma
/// separated (`namespaces`, `userns`, `landlock`, `landlock-net`,
/// `landlock-scope`, `seccomp`, `cgroup`, `memory-cgroup`). A testing aid to exercise the
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
    /// Writable memory cgroup directory (v1 `memory` hierarchy, or v2 with
    /// `memory` delegated) to create the run's memory cgroup in.
    #[serde(default)]
    pub cgroup_memory: Option<PathBuf>,
    /// CPU architecture (`x86_64`, `aarch64`, ...).
    pub arch: String,
    /// Other names of the default secret paths: the same paths under the
    /// password database's home when it differs from `$HOME`, and the
    /// resolved target of every secret path (or home) reached through a
    /// symlink. Each is denied like the secret itself.
    #[serde(default)]
    pub secret_aliases: Vec<PathBuf>,
    /// Entries of granted system directories closed to others (see
    /// [`crate::owner_only`]); probed only for root, the one caller able to
    /// read them. Each is hidden like a secret.
    #[serde(default)]
    pub owner_only: Vec<PathBuf>,
    /// The owner-only walk stopped at its entry cap.
    #[serde(default)]
    pub owner_only_truncated: bool,
    /// The home directory the password database gives, when it differs
    /// from `home` (treated as the home too: never a workspace, secrets
    /// denied under it).
    #[serde(default)]
    pub passwd_home: Option<PathBuf>,
    /// The canonical home directory when `home` is or passes through a
    /// symlink.
    #[serde(default)]
    pub home_real: Option<PathBuf>,
    /// Names of the home directory's top-level dot entries, when the
    /// workspace holds the home (set by [`HostFacts::observe_policy`]): each
    /// is then read-only, since host programs read them.
    #[serde(default)]
    pub home_entries: Vec<String>,
    /// Owner of the workspace directory, when known (set by
    /// [`HostFacts::observe_policy`]).
    #[serde(default)]
    pub workspace_owner: Option<u32>,
}

/// The home directory the password database gives `uid`.
fn passwd_home(uid: u32) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let mut buf = vec![0 as libc::c_char; 4096];
    // SAFETY: zeroed passwd is a valid out-parameter.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call; buf outlives its use.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr(), buf.len(), &mut out) };
    if rc != 0 || out.is_null() || pw.pw_dir.is_null() {
        return None;
    }
    // SAFETY: pw_dir points into buf, NUL-terminated by getpwuid_r.
    let dir = unsafe { std::ffi::CStr::from_ptr(pw.pw_dir) };
    let p = PathBuf::from(std::ffi::OsStr::from_bytes(dir.to_bytes()));
    p.is_absolute().then_some(p)
}

/// See [`HostFacts::secret_aliases`].
fn secret_aliases(home: Option<&std::path::Path>, uid: u32) -> Vec<PathBuf> {
    let primary = crate::policy::default_secret_paths(home);
    let mut homes: Vec<PathBuf> = Vec::new();
    if let Some(h) = passwd_home(uid).filter(|h| Some(h.as_path()) != home) {
        homes.push(h);
    }
    let mut out: Vec<PathBuf> = Vec::new();
    for h in &homes {
        out.extend(crate::policy::default_secret_paths(Some(h)));
    }
    let named: Vec<PathBuf> = primary.iter().chain(out.iter()).cloned().collect();
    // Missing secrets too: a symlinked home (or ~/.config) moves where a
    // secret would be created, and that place must be reserved as well.
    for p in named {
        if let Some(real) = crate::grants::canonical_lossy(&p)
            && real != p
        {
            out.push(real);
        }
    }
    out.retain(|p| !primary.contains(p));
    out.sort();
    out.dedup();
    out
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
        let cgroup_memory = if is_root && has("cgroup") && has("memory-cgroup") {
            crate::memory::find_memory_cgroup()
        } else {
            None
        };
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| passwd_home(uid));
        let secret_aliases = secret_aliases(home.as_deref(), uid);
        let passwd_home = passwd_home(uid).filter(|p| Some(p) != home.as_ref());
        let home_real = home
            .as_deref()
            .and_then(crate::grants::canonical_lossy)
            .filter(|r| Some(r) != home.as_ref());
        HostFacts {
            uid,
            gid,
            home,
            landlock_abi: abi,
            namespaces,
            needs_userns: !is_root,
            seccomp: has("seccomp") && seccomp_available(),
            cgroup_pids,
            cgroup_memory,
            arch: std::env::consts::ARCH.to_string(),
            secret_aliases,
            owner_only: Vec::new(),
            owner_only_truncated: false,
            workspace_owner: None,
            home_entries: Vec::new(),
            home_real,
            passwd_home,
        }
    }

    /// Record facts that depend on the policy: the workspace's owner and,
    /// for root, the entries of system directories closed to others (the
    /// workspace and write grants are not walked: a command could fill them
    /// to exhaust the walk).
    pub fn observe_policy(&mut self, policy: &crate::Policy) {
        use std::os::unix::fs::MetadataExt;
        self.workspace_owner = std::fs::metadata(&policy.workspace).ok().map(|m| m.uid());
        if let Some(h) = &self.home
            && policy.allow_home_workspace
            && h.starts_with(&policy.workspace)
            && let Ok(rd) = std::fs::read_dir(h)
        {
            self.home_entries = rd
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with('.') && n != ".git")
                .collect();
            self.home_entries.sort();
        }
        if self.uid == 0 {
            let skip: Vec<PathBuf> = std::iter::once(policy.workspace.clone())
                .chain(policy.write.iter().map(|g| g.path.clone()))
                .collect();
            let found = crate::owner_only::find(crate::owner_only::WALKED_DIRS, &skip);
            self.owner_only = found.paths;
            self.owner_only_truncated = found.truncated;
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

pub(crate) fn usable_cgroup_dir(dir: &std::path::Path) -> bool {
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
