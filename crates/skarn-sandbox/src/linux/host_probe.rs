//! Probing the running host for [`HostFacts`] ([`HostFacts::probe`],
//! [`HostFacts::observe_policy`]): the host side's syscalls before
//! planning. Kept apart from the data type so that the planner, which
//! reads the facts, does not depend on the mechanisms that find them.

use std::path::{Path, PathBuf};

use crate::linux::host::{HostFacts, SIMULATE_MISSING_ENV};

/// The home directory the password database gives `uid`.
pub fn passwd_home(uid: u32) -> Option<PathBuf> {
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
fn secret_aliases(home: Option<&Path>, uid: u32) -> Vec<PathBuf> {
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
    let mut cache = crate::policy::canonical::CanonicalCache::following_dangling_links();
    for p in named {
        if let Some(real) = cache.resolve(&p)
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
        let missing = crate::linux::simulate::simulated_missing();
        let has = |m: &str| !missing.iter().any(|x| x == m);
        // SAFETY: getuid/getgid cannot fail and touch no memory.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let mut abi = if has("landlock") {
            crate::linux::landlock_rules::kernel_abi()
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
            find_memory_cgroup()
        } else {
            None
        };
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| passwd_home(uid));
        let secret_aliases = secret_aliases(home.as_deref(), uid);
        let (idmap_dirs, idmap_unavailable) = if !(is_root && namespaces) {
            (Vec::new(), None)
        } else if has("idmap") {
            let (dirs, why) = crate::linux::idmap::probe();
            (dirs, why.map(|e| e.to_string()))
        } else {
            (
                Vec::new(),
                Some(format!("simulated missing ({SIMULATE_MISSING_ENV})")),
            )
        };
        let passwd_home = passwd_home(uid).filter(|p| Some(p) != home.as_ref());
        let home_real = home
            .as_deref()
            .and_then(crate::policy::canonical::canonical_lossy)
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
            idmap_dirs,
            idmap_unavailable,
            workspace_owner: None,
            trusted: Vec::new(),
            trusted_unfinished: Vec::new(),
            empty_when_missing: Vec::new(),
            trusted_unresolved: Vec::new(),
            config_notes: Vec::new(),
            home_like_workspace: None,
            home_mentions: Default::default(),
            configured_programs: Vec::new(),
            startup_relative: Vec::new(),
            workspace_dot_entries: Vec::new(),
            pending_edits: Vec::new(),
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
        self.observe_policy_without_walk(policy);
        if self.uid == 0 {
            self.walk_closed_files(policy);
        }
    }

    /// [`HostFacts::observe_policy`] without root's walk of the system
    /// directories: for facts probed and walked once and reused for
    /// several policies (a gateway's servers). Everything that depends on
    /// the policy's grants (the trusted places leading into them) is
    /// observed again.
    pub fn observe_policy_without_walk(&mut self, policy: &crate::Policy) {
        use std::os::unix::fs::MetadataExt;
        self.home_entries.clear();
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
        self.observe_trusted(policy);
        if let Some(h) = &self.home
            && policy.protect_persistence
        {
            let grants: Vec<PathBuf> = std::iter::once(policy.workspace.clone())
                .chain(policy.write.iter().map(|g| g.path.clone()))
                .collect();
            let cwd = policy
                .cwd
                .clone()
                .unwrap_or_else(|| policy.workspace.clone());
            let path = crate::protect::host_programs::path_dirs(&cwd, Some(h));
            self.home_mentions = crate::protect::home_mentions::scan_with_path(h, &grants, &path);
        }
        if policy.protect_persistence {
            self.configured_programs =
                crate::protect::configured_programs::names(self.home.as_deref(), &policy.workspace);
        }
    }

    /// Follow the home's trusted files, git's global configuration and
    /// `PATH` to their real places; keep those inside a grant.
    fn observe_trusted(&mut self, policy: &crate::Policy) {
        let cwd = policy
            .cwd
            .clone()
            .unwrap_or_else(|| policy.workspace.clone());
        let f = crate::protect::host_places::collect(
            self.home.as_deref(),
            &policy.workspace,
            &cwd,
            &policy.host_places,
        );
        let mut found = f.trusted;
        self.trusted_unfinished = f.unfinished;
        self.trusted_unresolved = f.unresolved;
        self.config_notes = f.config_notes;
        self.startup_relative = f.relative;
        self.empty_when_missing = f.empty_when_missing;
        // The same upward-searched configuration for the other writable
        // grants (the workspace's is in `collect`).
        for g in &policy.write {
            found.extend(crate::protect::ancestor_config::places(
                &g.path,
                self.home.as_deref(),
            ));
        }
        // Secret files the caller's environment and git's configuration
        // name (`PGPASSFILE`, `http.sslKey`, the key of `core.sshCommand`):
        // hidden wherever they lie inside a grant.
        {
            use crate::protect::trusted::Trusted;
            let mut cache = crate::policy::canonical::CanonicalCache::following_dangling_links();
            let here = std::env::current_dir().unwrap_or_else(|_| policy.workspace.clone());
            let mut secret_files = crate::secrets::env_files::places(self.home.as_deref(), &here);
            if let Some(h) = &self.home {
                let git = policy.workspace.join(".git");
                let repo = git.is_dir().then_some(git.as_path());
                secret_files.extend(crate::secrets::git_files::places(
                    h,
                    repo,
                    &policy.workspace,
                ));
            }
            // A secret directory among them, or one `--deny-read` names:
            // the links inside it lead on to what is as secret.
            let inner = crate::protect::home_links::secret_links(
                secret_files
                    .iter()
                    .map(|(p, _)| p.as_path())
                    .chain(policy.deny_read.iter().map(|g| g.path.as_path())),
            );
            found.extend(inner.trusted);
            self.trusted_unfinished.extend(inner.unfinished);
            for (p, via) in secret_files {
                if let Some(target) = cache.resolve(&p) {
                    found.push(Trusted::new(&p, target, via, true));
                }
            }
            // A `--deny-read` path reached through links: the links on the
            // way stay as they are (kept read-only inside writable grants),
            // or one run re-points them and the next one reads the old
            // file (atk27j F5).
            for g in &policy.deny_read {
                if crate::protect::trusted::link_hops(&g.path).is_empty() {
                    continue;
                }
                if let Some(target) = cache.resolve(&g.path) {
                    let via = format!("hidden ({})", g.source);
                    found.push(Trusted::new(&g.path, target, via, true));
                }
            }
        }
        // Secrets are hidden under the default system grants too.
        let system = crate::policy::SYSTEM_EXEC_DIRS.iter().map(Path::new);
        let roots: Vec<&Path> = std::iter::once(policy.workspace.as_path())
            .chain(system)
            .chain(
                [&policy.write, &policy.read, &policy.exec, &policy.overlay]
                    .into_iter()
                    .flatten()
                    .map(|g| g.path.as_path()),
            )
            .collect();
        // A secret file outside every grant can still have another name
        // inside one (a hard link in the workspace: attack atk22i F5):
        // its place is kept among the secret paths' other names, whose
        // hard links the reservation step looks for.
        let secret_targets: Vec<PathBuf> = found
            .iter()
            .filter(|t| t.secret)
            .map(|t| t.target.clone())
            .collect();
        found.retain(|t| {
            // `/` or an ancestor of the home is no file a host program
            // runs: a link re-pointed there must not make every path a
            // protected one.
            let too_wide = t.target.parent().is_none()
                || self.home.as_ref().is_some_and(|h| h.starts_with(&t.target));
            !too_wide
                && roots.iter().any(|r| {
                    t.target.starts_with(r)
                        || t.hops.iter().any(|h| h.starts_with(r))
                        || t.tree == Some(crate::protect::trusted::Tree::Below)
                            && r.starts_with(&t.target)
                })
        });
        // Outside the system grants, only for secrets. A system target
        // reached through a link inside a writable grant stays (h22b D:
        // `~/.local/bin/x -> <ws>/link -> /usr/bin/true`: the command can
        // re-point the link).
        found.retain(|t| {
            let writable = |p: &Path| {
                std::iter::once(&policy.workspace)
                    .chain(policy.write.iter().map(|g| &g.path))
                    .any(|w| p.starts_with(w))
            };
            t.secret
                || !crate::policy::SYSTEM_EXEC_DIRS
                    .iter()
                    .any(|d| t.target.starts_with(d))
                || writable(&t.target)
                || t.hops.iter().any(|h| writable(h))
        });
        self.trusted = found;
        for t in secret_targets {
            let too_wide =
                t.parent().is_none() || self.home.as_ref().is_some_and(|h| h.starts_with(&t));
            if !too_wide
                && !self.trusted.iter().any(|k| k.target == t)
                && !self.secret_aliases.contains(&t)
            {
                self.secret_aliases.push(t);
            }
        }
    }

    /// The workspace is not a project directory (`why`), and the user
    /// allowed it: protect it like a home (its dot entries read-only, new
    /// ones set aside after the run, shell start-up files reserved).
    pub fn treat_workspace_as_home(&mut self, policy: &crate::Policy, why: String) {
        self.home_like_workspace = Some(why);
        if let Ok(rd) = std::fs::read_dir(&policy.workspace) {
            self.workspace_dot_entries = rd
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with('.') && n != ".git")
                .take(4096)
                .collect();
            self.workspace_dot_entries.sort();
        }
    }

    /// Root only: walk the system directories not bound idmapped (or
    /// holding a private cache layer, which an idmapped bind does not
    /// cover) for entries closed to others (see [`crate::protect::owner_only`]).
    fn walk_closed_files(&mut self, policy: &crate::Policy) {
        let dirs: Vec<&str> = crate::protect::owner_only::WALKED_DIRS
            .iter()
            .copied()
            .filter(|d| {
                !self.idmap_dirs.iter().any(|i| i == Path::new(d))
                    || policy.overlay.iter().any(|g| g.path.starts_with(d))
            })
            .collect();
        if dirs.is_empty() {
            return;
        }
        let skip: Vec<PathBuf> = std::iter::once(policy.workspace.clone())
            .chain(policy.write.iter().map(|g| g.path.clone()))
            .collect();
        let found = crate::protect::owner_only::find(&dirs, &skip);
        self.owner_only = found.paths;
        self.owner_only_truncated = found.truncated;
    }
}

fn read_num(path: &str) -> Option<i64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Whether the sysctls allow unprivileged user namespaces.
pub(crate) fn userns_sysctls_allow() -> bool {
    if read_num("/proc/sys/user/max_user_namespaces") == Some(0) {
        return false;
    }
    if read_num("/proc/sys/kernel/unprivileged_userns_clone") == Some(0) {
        return false;
    }
    true
}

pub(crate) fn seccomp_available() -> bool {
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

fn usable_cgroup_dir(dir: &Path) -> bool {
    dir.join("cgroup.procs").exists() && access_w(dir)
}

fn access_w(p: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(p.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: c is a valid NUL-terminated string.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

/// A memory-controller directory where this (root) process can create the
/// run's cgroup: its own cgroup in the v1 `memory` hierarchy, or in the v2
/// hierarchy its own cgroup (or the root) when `memory` is delegated to
/// children.
pub(crate) fn find_memory_cgroup() -> Option<PathBuf> {
    let cg = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in cg.lines() {
        let mut parts = line.splitn(3, ':');
        let (_id, ctrl, path) = (parts.next()?, parts.next()?, parts.next()?);
        let rel = path.trim_start_matches('/');
        if ctrl.split(',').any(|c| c == "memory") {
            let dir = Path::new("/sys/fs/cgroup/memory").join(rel);
            if dir.join("memory.limit_in_bytes").exists() && usable_cgroup_dir(&dir) {
                return Some(dir);
            }
        } else if ctrl.is_empty() {
            let root = PathBuf::from("/sys/fs/cgroup");
            for dir in [root.join(rel), root.clone()] {
                let sub =
                    std::fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
                if sub.split_whitespace().any(|c| c == "memory") && usable_cgroup_dir(&dir) {
                    return Some(dir);
                }
            }
        }
    }
    None
}

#[cfg(test)]
#[path = "host_probe_tests.rs"]
mod tests;
