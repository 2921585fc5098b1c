//! The helper: a single-threaded process that builds the confinement and
//! execs the target. It is either the `skarn run` process itself (checked
//! single-threaded, see [`crate::launch::run_in_this_process`]) or, from a
//! multi-threaded caller, a fresh exec of the binary with `__sandbox-helper`.
//!
//! Process tree:
//! - **helper** (this process): creates the pids cgroup and the user/PID/
//!   network/IPC/UTS namespaces, enforces the timeout, forwards signals,
//!   cleans up, prints the report and exits with the command's status;
//! - **init** (PID 1 of the new PID namespace): builds the new root in a
//!   fresh mount namespace, starts the target and reaps; when it exits the
//!   kernel kills everything left in the namespace;
//! - **target**: new session, parent-death signal, rlimits, caps dropped,
//!   no_new_privs, Landlock, seccomp, descriptors > 2 closed, `execve`.
//!
//! All three are single-threaded, so allocating between fork and exec is safe.

use std::ffi::{CString, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::plan::{Plan, ReportFormat, Rlimit, plan as make_plan};
use crate::report::Status;
use crate::{landlock_rules, mounts, ns, privs, seccomp, sys, terminal};

/// Environment variable carrying the JSON plan to the helper.
pub const PLAN_ENV: &str = "SKARN_SANDBOX_PLAN";

/// Exit status for a set-up failure.
pub const EXIT_SETUP: i32 = 2;
/// Exit status when the timeout fired.
pub const EXIT_TIMEOUT: i32 = 124;
/// Exit status when the command could not be executed.
pub const EXIT_NOT_EXECUTABLE: i32 = 126;
/// Exit status when the command was not found.
pub const EXIT_NOT_FOUND: i32 = 127;

static PENDING: AtomicU64 = AtomicU64::new(0);
const FORWARDED: &[libc::c_int] = &[
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGWINCH,
];

extern "C" fn on_signal(sig: libc::c_int) {
    PENDING.fetch_or(1 << sig, Ordering::SeqCst);
}

fn install_forwarders() {
    for &s in FORWARDED {
        // SAFETY: zeroed sigaction is valid; the handler is async-signal-safe
        // (one atomic op). No SA_RESTART, so blocking calls return EINTR.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(s, &sa, std::ptr::null_mut());
        }
    }
}

fn forward_pending(to: libc::pid_t) {
    let bits = PENDING.swap(0, Ordering::SeqCst);
    for &s in FORWARDED {
        if bits & (1 << s) != 0 {
            sys::kill(to, s);
        }
    }
}

fn err_line(msg: &str) {
    sys::write_fd(2, format!("skarn: error: {msg}\n").as_bytes());
}

/// Entry point of `skarn __sandbox-helper`: reads the plan from
/// [`PLAN_ENV`], runs the command, returns the exit status.
pub fn helper_main() -> i32 {
    let Some(raw) = std::env::var_os(PLAN_ENV) else {
        err_line("internal: sandbox helper started without a plan");
        return EXIT_SETUP;
    };
    // SAFETY: the helper is single-threaded (fresh exec, no threads spawned).
    unsafe { std::env::remove_var(PLAN_ENV) };
    let plan: Plan = match serde_json::from_slice(raw.as_bytes()) {
        Ok(p) => p,
        Err(e) => {
            err_line(&format!("internal: bad sandbox plan: {e}"));
            return EXIT_SETUP;
        }
    };
    run(plan)
}

/// A pids cgroup for the run (root only).
///
/// The helper itself never joins it: it moves init in right after forking
/// it, while init builds the new root, and init waits for that move to be
/// confirmed before it starts the target. Moving a process between
/// cgroups is slow (the kernel waits for an RCU grace period: 0.5 to 20 ms
/// on a loaded host), so overlapping it with the mount work takes it off
/// the critical path without letting any process of the sandbox escape it.
struct Cgroup {
    /// One directory per hierarchy (v1: pids and memory are separate; v2:
    /// one directory holds both).
    dirs: Vec<PathBuf>,
}

/// The run's cgroup directory under `parent`.
fn cgroup_dir(parent: &Path) -> PathBuf {
    parent.join(format!("skarn-{}", std::process::id()))
}

/// Create (or reuse) the run's directory under `parent` and write `files`
/// (name, value, optional) in order. A directory this call created is
/// removed again on failure.
fn cgroup_create(parent: &Path, files: &[(&str, String, bool)]) -> std::io::Result<PathBuf> {
    let dir = cgroup_dir(parent);
    let created = match std::fs::create_dir(&dir) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
        Err(e) => return Err(e),
    };
    for (name, value, optional) in files {
        let f = dir.join(name);
        if *optional && !f.exists() {
            continue;
        }
        if let Err(e) = sys::write_file(&f, value.as_bytes())
            && !optional
        {
            if created {
                let _ = std::fs::remove_dir(&dir);
            }
            return Err(e);
        }
    }
    Ok(dir)
}

impl Cgroup {
    /// Move process `pid` (init, not yet running anything else) in.
    fn attach(&self, pid: libc::pid_t) -> std::io::Result<()> {
        for d in &self.dirs {
            sys::write_file(&d.join("cgroup.procs"), pid.to_string().as_bytes())?;
        }
        Ok(())
    }

    fn kill_all(&self) {
        let me = std::process::id() as i32;
        for d in &self.dirs {
            if let Ok(s) = std::fs::read_to_string(d.join("cgroup.procs")) {
                for pid in s.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                    if pid != me {
                        sys::kill(pid, libc::SIGKILL);
                    }
                }
            }
        }
    }

    fn remove(self) {
        for _ in 0..200 {
            self.kill_all();
            let left = self
                .dirs
                .iter()
                .filter(|d| std::fs::remove_dir(d).is_err() && d.exists())
                .count();
            if left == 0 {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// A placeholder is a unix-socket inode with exactly this mode (none):
/// creating and removing one touches no data block, git ignores it (so
/// `git status`/`git add -A` stay clean), and `open(2)` on it fails at once
/// with ENXIO for everyone, root included, so host tools never hang on it.
pub const PLACEHOLDER_MODE: u32 = 0o000;

/// The metadata of `path` if it is a placeholder made by a run.
pub fn is_placeholder(path: &Path) -> Option<std::fs::Metadata> {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let md = std::fs::symlink_metadata(path).ok()?;
    (md.file_type().is_socket() && md.permissions().mode() & 0o7777 == PLACEHOLDER_MODE)
        .then_some(md)
}

/// Create a socket inode at `path` with mode 000 (`mknod(S_IFSOCK)`: no
/// listener, no `sun_path` length limit, no privilege needed).
pub fn make_socket_inode(path: &Path) -> std::io::Result<()> {
    let c = sys::cstr(path.as_os_str())?;
    // SAFETY: valid path; S_IFSOCK needs no capability.
    sys::check(unsafe { libc::mknod(c.as_ptr(), libc::S_IFSOCK | PLACEHOLDER_MODE, 0) }).map(|_| ())
}

/// Placeholders of one run, its stage for a new `.git` and the run's
/// shared lock on the workspace directory: a run removes placeholders (and
/// an empty `.git`) only when it can take that lock exclusively, i.e. when
/// no other run in the same workspace still uses them.
struct Reserved {
    lock_fd: libc::c_int,
    paths: Vec<PathBuf>,
    stage: Option<PathBuf>,
    ws: PathBuf,
    /// Files git would follow that were absent at the start and cannot be
    /// reserved (`commondir`): removed if the run created them.
    absent: Vec<PathBuf>,
    /// Empty files made to reserve git configuration files, with their
    /// inode: removed like placeholders if still empty and the same file.
    empties: Vec<(PathBuf, u64)>,
    /// Nested repositories found before the run.
    nested: Vec<PathBuf>,
}

fn make_empty_file(p: &Path) -> std::io::Result<u64> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(p)?;
    Ok(f.metadata()?.ino())
}

fn remove_empties(empties: &[(PathBuf, u64)]) {
    use std::os::unix::fs::MetadataExt;
    for (p, ino) in empties {
        if std::fs::symlink_metadata(p)
            .is_ok_and(|m| m.is_file() && m.ino() == *ino && m.len() == 0)
        {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Remove what the run created at paths that had to stay absent.
fn remove_created(paths: &[PathBuf]) -> Vec<String> {
    let mut removed = Vec::new();
    for p in paths {
        if std::fs::symlink_metadata(p).is_ok_and(|m| !m.is_dir())
            && is_placeholder(p).is_none()
            && std::fs::remove_file(p).is_ok()
        {
            removed.push(p.display().to_string());
        }
    }
    removed
}

fn open_dir(path: &Path) -> Option<libc::c_int> {
    let c = sys::cstr(path.as_os_str()).ok()?;
    // SAFETY: valid path.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    (fd >= 0).then_some(fd)
}

/// Remove the placeholders if no other run holds the workspace lock, and
/// move a repository created in the sandbox into place (vetted).
fn release_placeholders(r: Reserved) {
    let removed = remove_created(&r.absent);
    if !removed.is_empty() {
        sys::write_fd(
            2,
            format!(
                "skarn: removed what the command created at {} (it redirects git)\n",
                removed.join(", ")
            )
            .as_bytes(),
        );
    }
    if r.lock_fd < 0 {
        return;
    }
    let mut exclusive = false;
    if !r.paths.is_empty() || r.stage.is_some() || !r.empties.is_empty() {
        // SAFETY: lock_fd is open; a non-blocking exclusive attempt.
        exclusive = unsafe { libc::flock(r.lock_fd, libc::LOCK_EX | libc::LOCK_NB) } == 0;
        if exclusive {
            remove_placeholders(&r.paths);
            remove_empties(&r.empties);
        }
    }
    if let Some(stage) = &r.stage
        && let Some(msg) = crate::staging::finalize(&r.ws, stage, exclusive)
    {
        sys::write_fd(2, format!("{msg}\n").as_bytes());
    }
    // SAFETY: closing our own fd (drops the lock).
    unsafe { libc::close(r.lock_fd) };
}

fn remove_placeholders(paths: &[PathBuf]) {
    for p in paths.iter().rev() {
        if is_placeholder(p).is_some() {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Decide, before any namespace exists, how each persistence path is
/// protected: existing paths are bound read-only by init; missing ones get
/// a placeholder (a socket inode of mode [`PLACEHOLDER_MODE`], covered
/// read-only, removed after the run) so they cannot be created during it.
/// The git directory follows git's effective layout and configuration
/// ([`crate::git_vet`]); a missing `.git` is staged ([`crate::staging`]).
fn prepare_protect(plan: &mut Plan, notes: &mut Vec<String>) -> Reserved {
    use crate::plan::{Access, FsOp};
    let ws = plan.workspace.clone();
    let lock_fd = open_dir(&ws).unwrap_or(-1);
    if lock_fd >= 0 {
        // SAFETY: lock_fd is open. Blocks only while another run removes
        // its placeholders.
        unsafe { libc::flock(lock_fd, libc::LOCK_SH) };
    }
    let git = ws.join(".git");
    let git_md = std::fs::symlink_metadata(&git).ok();
    let unborn = git_md.is_none() || crate::staging::is_unborn(&git);
    let stage = if unborn {
        match crate::staging::prepare(&ws) {
            Ok(s) => Some(s),
            Err(e) => {
                notes.push(format!(
                    "could not stage a new .git ({e}); .git is reserved instead"
                ));
                None
            }
        }
    } else {
        None
    };
    let git_is_dir = git_md.as_ref().is_some_and(|m| m.is_dir());
    let writable: Vec<PathBuf> = plan
        .fs
        .iter()
        .filter_map(|o| match o {
            FsOp::Bind {
                path,
                access: Access::ReadWrite,
            } => Some(path.clone()),
            _ => None,
        })
        .collect();
    let mut ops: Vec<(PathBuf, bool, bool)> = Vec::new();
    let mut out = Vec::new();
    let mut at = None;
    let mut exists: std::collections::HashMap<PathBuf, bool> = Default::default();
    for op in std::mem::take(&mut plan.fs) {
        let (path, reserve, reserve_if) = match &op {
            FsOp::Protect {
                path,
                reserve,
                reserve_if,
            } => (path, reserve, reserve_if.as_slice()),
            FsOp::Mask {
                path,
                reserve: true,
            } => {
                // A secret under a writable grant: reserved when missing.
                at.get_or_insert(out.len());
                ops.push((path.clone(), true, true));
                continue;
            }
            _ => {
                out.push(op);
                continue;
            }
        };
        at.get_or_insert(out.len());
        // (Families of names share one answer: each path is looked at once.)
        let reserve = *reserve
            || reserve_if.iter().any(|p| {
                *exists
                    .entry(p.clone())
                    .or_insert_with(|| std::fs::symlink_metadata(p).is_ok())
            });
        if path.starts_with(&git) && path != &git {
            if stage.is_some() {
                continue; // staged: vetted after the run
            }
            if !git_is_dir {
                // .git missing (no stage) or a gitdir file: protect .git itself.
                if !ops.iter().any(|(p, _, _)| p == &git) {
                    ops.push((git.clone(), true, false));
                }
                continue;
            }
        }
        ops.push((path.clone(), reserve, false));
    }
    // Repositories nested below the writable grants: their hooks and
    // configuration are protected too (a missing hooks directory reserved).
    let (nested, nested_truncated) = crate::nested_git::find(&writable);
    for g in &nested {
        if std::fs::symlink_metadata(g).is_ok_and(|m| m.is_dir()) {
            for (f, reserve) in [
                ("hooks", true),
                ("config", false),
                ("config.worktree", false),
                ("commondir", false),
            ] {
                ops.push((g.join(f), reserve, false));
            }
        } else {
            ops.push((g.clone(), false, false));
        }
    }
    if nested_truncated {
        notes.push(format!(
            "more than {} directories under the writable grants: repositories nested deeper \
             are not protected",
            crate::nested_git::MAX_DIRS
        ));
    }
    let mut empty_kind = Vec::new();
    if stage.is_none() {
        let guards = crate::git_vet::guards(&ws, &writable, plan.host.home.as_deref());
        let mut extra = Vec::new();
        for g in guards {
            if g.empty_file {
                empty_kind.push(g.path.clone());
            }
            match ops.iter_mut().find(|(p, _, _)| *p == g.path) {
                Some(o) => o.1 |= g.reserve,
                None => {
                    extra.push(g.path.display().to_string());
                    ops.push((g.path, g.reserve, false));
                }
            }
        }
        if !extra.is_empty() {
            plan.report.notes.push(format!(
                "read-only as named by the effective git configuration: {}",
                extra.join(", ")
            ));
        }
    }
    let mut paths = Vec::new();
    let mut prot = Vec::new();
    let mut absent = Vec::new();
    let mut empties = Vec::new();
    for (mut target, reserve, is_mask) in ops {
        let missing = std::fs::symlink_metadata(&target).is_err();
        if missing && target.file_name() == Some(std::ffi::OsStr::new("commondir")) {
            absent.push(target.clone());
        }
        if missing && !reserve {
            continue;
        }
        if missing && empty_kind.contains(&target) {
            match make_empty_file(&target) {
                Ok(ino) => empties.push((target.clone(), ino)),
                Err(e) => {
                    notes.push(format!(
                        "could not reserve missing git file {} ({e}); it is not protected",
                        target.display()
                    ));
                    continue;
                }
            }
        } else if missing {
            // Reserve the first missing component: with it taken, nothing
            // below it can be created either.
            match first_missing(&target) {
                Ok(Some(c)) => target = c,
                Ok(None) => continue, // an ancestor is not a directory
                Err(why) => {
                    notes.push(format!(
                        "could not reserve missing protected path {} ({why}); it is not protected",
                        target.display()
                    ));
                    continue;
                }
            }
            if paths.contains(&target) {
                continue;
            }
            if let Err(e) = make_socket_inode(&target)
                && std::fs::symlink_metadata(&target).is_err()
            {
                notes.push(format!(
                    "could not reserve missing protected path {} ({e}); it is not protected",
                    target.display()
                ));
                continue;
            }
        }
        if is_placeholder(&target).is_some() && !paths.contains(&target) {
            paths.push(target.clone());
        }
        prot.push(if is_mask {
            FsOp::Mask {
                path: target,
                reserve,
            }
        } else {
            FsOp::Protect {
                path: target,
                reserve,
                reserve_if: Vec::new(),
            }
        });
    }
    if let Some(s) = &stage {
        prot.push(FsOp::Stage {
            path: git.clone(),
            from: s.clone(),
        });
        plan.report.notes.push(
            "the workspace has no .git: a repository created by the command is staged and \
             moved into place after the run without hooks or code-running configuration"
                .into(),
        );
    }
    if !paths.is_empty() {
        plan.report.notes.push(format!(
            "{} missing persistence paths are reserved during the run by placeholders \
             (unreadable socket inodes, removed afterwards)",
            paths.len()
        ));
    }
    let at = at.unwrap_or(out.len());
    out.splice(at..at, prot);
    plan.fs = out;
    Reserved {
        lock_fd,
        paths,
        stage,
        ws,
        absent,
        empties,
        nested,
    }
}

/// The first component of `path` that does not exist (`path` itself when
/// only its last component is missing). `Ok(None)` when an existing
/// ancestor is not a directory (nothing can be created below it); an error
/// when an ancestor is a symlink (the name would be created wherever it
/// points).
fn first_missing(path: &Path) -> Result<Option<PathBuf>, &'static str> {
    let mut acc = PathBuf::new();
    for c in path.components() {
        acc.push(c);
        match std::fs::symlink_metadata(&acc) {
            Ok(m) if m.file_type().is_symlink() => return Err("an ancestor is a symlink"),
            Ok(m) if acc.as_path() != path && !m.is_dir() => return Ok(None),
            Ok(_) => {}
            Err(_) => return Ok(Some(acc)),
        }
    }
    Ok(None)
}

/// Start a detached process that, once this helper and everything holding
/// the pipe are gone, removes the run's cgroup and any placeholder the
/// helper could not remove (because it was killed). The exit status never
/// waits for the kernel to release the cgroup. Forked before the PID
/// namespace exists (a dead namespace refuses new children).
fn spawn_reaper(cgroup_parents: &[PathBuf], reserved: &Reserved, ws: &Path) -> Option<()> {
    let cg = (!cgroup_parents.is_empty()).then(|| Cgroup {
        dirs: cgroup_parents.iter().map(|p| cgroup_dir(p)).collect(),
    });
    let paths = reserved.paths.clone();
    let stage = reserved.stage.clone();
    let absent = reserved.absent.clone();
    let empties = reserved.empties.clone();
    let mut fds = [0; 2];
    // SAFETY: fds is a valid 2-int array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return None;
    }
    if let Ok(0) = sys::fork() {
        // SAFETY: setsid/open/dup2/read/close on our own descriptors. Our
        // copy of the workspace lock is closed at once so that it does not
        // keep other runs from cleaning up.
        unsafe {
            libc::close(fds[1]);
            if reserved.lock_fd >= 0 {
                libc::close(reserved.lock_fd);
            }
            libc::setsid();
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            for fd in 0..3 {
                libc::dup2(null, fd);
            }
            let mut b = [0u8; 1];
            while libc::read(fds[0], b.as_mut_ptr().cast(), 1) != 0 {
                if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                    break;
                }
            }
        }
        // The dead helper's descriptors (and its shared lock) may close a
        // moment after the pipe reports EOF: retry briefly. A run still
        // using the workspace keeps its lock and cleans up itself.
        remove_created(&absent);
        let staged = stage.as_ref().is_some_and(|s| s.exists());
        if (staged || !empties.is_empty() || paths.iter().any(|p| is_placeholder(p).is_some()))
            && let Some(fd) = open_dir(ws)
        {
            let mut exclusive = false;
            for _ in 0..50 {
                // SAFETY: fd is open; non-blocking exclusive attempt.
                if unsafe { libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                    remove_placeholders(&paths);
                    remove_empties(&empties);
                    exclusive = true;
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            if let Some(s) = &stage {
                let _ = crate::staging::finalize(ws, s, exclusive);
            }
            // SAFETY: closing our own fd.
            unsafe { libc::close(fd) };
        }
        if let Some(cg) = cg {
            cg.remove();
        }
        sys::exit_now(0)
    }
    // SAFETY: the helper keeps only the write end (close-on-exec).
    unsafe { libc::close(fds[0]) };
    Some(())
}

fn make_host_tmp() -> Option<PathBuf> {
    let mut t = b"/tmp/skarn-tmp-XXXXXX\0".to_vec();
    // SAFETY: t is a writable NUL-terminated template.
    let r = unsafe { libc::mkdtemp(t.as_mut_ptr().cast()) };
    if r.is_null() {
        return None;
    }
    t.pop();
    Some(PathBuf::from(OsString::from_vec(t)))
}

pub(crate) fn run(mut plan: Plan) -> i32 {
    let mut notes: Vec<String> = Vec::new();
    if plan.die_with_parent {
        let _ = privs::set_parent_death_signal(libc::SIGKILL);
    }
    // Namespaces (everything but the mount namespace, which init creates so
    // that this process keeps the host view for clean-up).
    let ns = plan.ns;
    let mut flags = 0;
    for (on, f) in [
        (ns.user, libc::CLONE_NEWUSER),
        (ns.pid, libc::CLONE_NEWPID),
        (ns.net, libc::CLONE_NEWNET),
        (ns.ipc, libc::CLONE_NEWIPC),
        (ns.uts, libc::CLONE_NEWUTS),
    ] {
        if on {
            flags |= f;
        }
    }
    let created = if plan.ns.mount {
        prepare_protect(&mut plan, &mut notes)
    } else {
        Reserved {
            lock_fd: -1,
            paths: Vec::new(),
            stage: None,
            ws: plan.workspace.clone(),
            absent: Vec::new(),
            empties: Vec::new(),
            nested: Vec::new(),
        }
    };
    let mut cg_parents: Vec<PathBuf> = plan
        .cgroup
        .iter()
        .chain(plan.memory_cgroup.iter())
        .map(|(d, _)| d.clone())
        .collect();
    cg_parents.dedup();
    let reaper = if !cg_parents.is_empty()
        || !created.paths.is_empty()
        || created.stage.is_some()
        || !created.absent.is_empty()
        || !created.empties.is_empty()
    {
        let ws = plan.workspace.clone();
        spawn_reaper(&cg_parents, &created, &ws)
    } else {
        Some(())
    };
    let mut cg_dirs: Vec<PathBuf> = Vec::new();
    if let Some((dir, max)) = &plan.cgroup {
        match reaper.and_then(|_| cgroup_create(dir, &[("pids.max", max.to_string(), false)]).ok())
        {
            Some(d) => cg_dirs.push(d),
            None => plan
                .report
                .degrade("pids cgroup could not be created: max_procs NOT enforced"),
        }
    }
    if let Some((dir, bytes)) = plan.memory_cgroup.clone() {
        let files = crate::memory::limit_files(&dir, bytes);
        match reaper
            .ok_or_else(|| std::io::Error::other("no clean-up process"))
            .and_then(|_| cgroup_create(&dir, &files))
        {
            Ok(d) => {
                if !cg_dirs.contains(&d) {
                    cg_dirs.push(d);
                }
            }
            Err(e) => {
                // Fall back to the per-process address-space limit.
                plan.memory_cgroup = None;
                plan.rlimits
                    .push((Rlimit::As, crate::memory::address_space_limit(bytes)));
                for l in plan.report.limits.iter_mut().filter(|l| l.name == "memory") {
                    l.mechanism = crate::memory::mech_rlimit_as(bytes);
                }
                plan.report.degrade(format!(
                    "memory cgroup could not be created ({e}): memory limited per process by \
                     RLIMIT_AS instead"
                ));
            }
        }
    }
    let cgroup = (!cg_dirs.is_empty()).then_some(Cgroup { dirs: cg_dirs });
    // ---- egress (issue 11): the proxy stays in the host network ----
    let proxy = match &plan.egress {
        Some(e) => match crate::egress::spawn(e) {
            Ok(p) => {
                crate::egress::set_handover_fd(p.fd());
                Some(p)
            }
            Err(e) => {
                err_line(&format!("cannot start the network proxy: {e}"));
                release_placeholders(created);
                return EXIT_SETUP;
            }
        },
        None => None,
    };
    if flags != 0 {
        let r = sys::unshare(flags).and_then(|_| {
            if ns.user {
                ns::write_self_maps(plan.uid, plan.gid)
            } else {
                Ok(())
            }
        });
        if let Err(e) = r {
            if let Some(p) = proxy {
                p.kill();
            }
            release_placeholders(created);
            // Re-plan without namespaces; this may refuse (fail_closed).
            let mut host = plan.host.clone();
            host.namespaces = false;
            let (argv, fmt, removed) = (
                plan.argv.clone(),
                plan.report_format,
                plan.report.removed_env.clone(),
            );
            match make_plan(&plan.policy, &host, &argv) {
                Ok(mut p) => {
                    p.report_format = fmt;
                    p.report.removed_env = removed;
                    p.report
                        .degrade(format!("creating namespaces failed at run time: {e}"));
                    if let Some(c) = cgroup {
                        c.remove();
                    }
                    return run(p);
                }
                Err(pe) => {
                    err_line(&format!("{pe} (namespaces failed: {e})"));
                    if let Some(c) = cgroup {
                        c.remove();
                    }
                    return EXIT_SETUP;
                }
            }
        }
    }
    let host_tmp = if plan.host_private_tmp {
        make_host_tmp()
    } else {
        None
    };
    if let Some(t) = &host_tmp {
        plan.set_env
            .push(("TMPDIR".into(), t.display().to_string()));
        if let Some(l) = &mut plan.landlock {
            l.rules.push(crate::plan::LandlockRule {
                path: t.clone(),
                access: crate::plan::LandlockAccess::ReadWrite,
            });
        }
    }

    // Host terminal settings, put back after the run whatever happens to it.
    let tty = terminal::Saved::take();
    let mut fds = [0; 2];
    // SAFETY: fds is a valid 2-int array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        err_line("pipe2 failed");
        return EXIT_SETUP;
    }
    let (rd, wr) = (fds[0], fds[1]);
    // Cgroup hand-shake: init waits on `cg_rd` until the helper has moved
    // it into the pids cgroup (b'1') or failed to (b'0').
    let (cg_rd, cg_wr) = if cgroup.is_some() {
        let mut p = [0; 2];
        // SAFETY: p is a valid 2-int array.
        if unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
            err_line("pipe2 failed");
            return EXIT_SETUP;
        }
        (p[0], p[1])
    } else {
        (-1, -1)
    };
    // Protected files whose read-only bind a host rename could detach.
    let protected: Vec<PathBuf> = plan
        .fs
        .iter()
        .filter_map(|o| match o {
            crate::plan::FsOp::Protect { path, .. } => Some(path.clone()),
            _ => None,
        })
        .collect();
    let snapshots = crate::lapse::snapshot(&protected);
    let head_guard = crate::nested_git::HeadGuard::save(&plan.workspace);
    let child = match sys::fork() {
        Ok(0) => {
            // SAFETY: closing our copies of the helper's pipe ends.
            unsafe {
                libc::close(rd);
                if cg_wr >= 0 {
                    libc::close(cg_wr);
                }
            }
            init_main(&plan, wr, cg_rd)
        }
        Ok(pid) => pid,
        Err(e) => {
            err_line(&format!("fork failed: {e}"));
            return EXIT_SETUP;
        }
    };
    if let Some(c) = &cgroup {
        let ok = c.attach(child).is_ok();
        sys::write_fd(cg_wr, if ok { b"1" } else { b"0" });
        // SAFETY: closing our own pipe ends.
        unsafe {
            libc::close(cg_wr);
            libc::close(cg_rd);
        }
    }
    // SAFETY: closing our copy of the write end.
    unsafe { libc::close(wr) };
    install_forwarders();
    let (code, timed_out, status_text) = supervise(child, rd, plan.timeout_ms, ns.pid, &cgroup);
    if plan.ns.mount && plan.policy.protect_persistence {
        let roots: Vec<PathBuf> = plan
            .fs
            .iter()
            .filter_map(|o| match o {
                crate::plan::FsOp::Bind {
                    path,
                    access: crate::plan::Access::ReadWrite,
                } => Some(path.clone()),
                _ => None,
            })
            .collect();
        let home_jail = match &plan.host.home {
            Some(h) if plan.policy.allow_home_workspace && h.starts_with(&plan.workspace) => {
                crate::nested_git::quarantine_new_dot_entries(
                    h,
                    &plan.host.home_entries,
                    std::process::id(),
                )
            }
            _ => Vec::new(),
        };
        for w in head_guard
            .check()
            .into_iter()
            .chain(home_jail)
            .chain(crate::nested_git::vet_new(
                &roots,
                &created.nested,
                std::process::id(),
            ))
        {
            sys::write_fd(2, format!("skarn: warning: {w}\n").as_bytes());
            plan.report.degrade(w);
        }
    }
    for w in crate::lapse::check(&snapshots, std::process::id()) {
        sys::write_fd(2, format!("skarn: warning: {w}\n").as_bytes());
        plan.report.degrade(w);
    }
    if tty.any() {
        let n = tty.restore();
        plan.report.notes.push(if n > 0 {
            format!(
                "host terminal settings changed by the command were restored on {n} descriptor(s)"
            )
        } else {
            "host terminal inherited: its settings are restored after the run; TIOCSWINSZ refused"
                .into()
        });
    }
    drop(cgroup); // removed by the reaper once this process exits
    if let Some(p) = proxy {
        plan.report.egress = p.finish();
        if plan.report.egress.is_none() {
            plan.report.degrade(
                "the network proxy's counters could not be read after the run: the allowed and \
                 denied hosts of this run are not listed",
            );
        }
    }
    release_placeholders(created);
    if let Some(t) = host_tmp {
        let _ = std::fs::remove_dir_all(t);
    }

    // Merge run-time notes.
    let mut fatal = false;
    for line in status_text.lines() {
        if let Some(n) = line.strip_prefix("note:") {
            plan.report.degrade(n.to_string());
        } else if let Some(n) = line.strip_prefix("info:") {
            plan.report.notes.push(n.to_string());
        } else if let Some(n) = line.strip_prefix("lost:") {
            let msg = format!(
                "written to the run's private /tmp beside the workspace, and discarded: {n} \
                 (only the workspace {} is kept)",
                plan.workspace.display()
            );
            sys::write_fd(2, format!("skarn: warning: {msg}\n").as_bytes());
            plan.report.degrade(msg);
        } else if let Some(n) = line.strip_prefix("fatal:") {
            fatal = true;
            plan.report.notes.push(format!("set-up failed: {n}"));
            plan.report.status = Status::NotEnforced;
        }
    }
    for n in notes {
        plan.report.degrade(n);
    }
    if timed_out {
        let secs = plan.timeout_ms.unwrap_or(0) / 1000;
        sys::write_fd(
            2,
            format!("skarn: timeout: the command ran longer than {secs} s; its whole process tree was killed\n")
                .as_bytes(),
        );
    }
    if !timed_out && !fatal && code != 0 && !plan.failure_hint.is_empty() {
        sys::write_fd(2, format!("{}\n", plan.failure_hint).as_bytes());
    }
    match plan.report_format {
        ReportFormat::None => {}
        ReportFormat::Text => sys::write_fd(2, plan.report.render_text().as_bytes()),
        ReportFormat::Json => {
            let mut s = serde_json::to_string(&plan.report).unwrap_or_default();
            s.push('\n');
            sys::write_fd(2, s.as_bytes());
        }
    }
    if fatal {
        return EXIT_SETUP;
    }
    if timed_out { EXIT_TIMEOUT } else { code }
}

/// Wait for init with an optional timeout, collecting its status lines.
/// Returns (exit code, timed out, status text).
fn supervise(
    child: libc::pid_t,
    rd: libc::c_int,
    timeout_ms: Option<u64>,
    pidns: bool,
    cgroup: &Option<Cgroup>,
) -> (i32, bool, String) {
    let deadline =
        timeout_ms.map(|t| std::time::Instant::now() + std::time::Duration::from_millis(t));
    // SAFETY: pidfd_open takes integers.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, child, 0) } as libc::c_int;
    let mut buf = Vec::new();
    let mut rd_open = true;
    let mut timed_out = false;
    loop {
        forward_pending(child);
        let wait_ms: i32 = match deadline {
            Some(d) => {
                let now = std::time::Instant::now();
                if now >= d {
                    timed_out = true;
                    break;
                }
                (d - now).as_millis().min(i32::MAX as u128) as i32
            }
            None => -1,
        };
        if pidfd < 0 {
            break; // no pidfd: plain blocking wait below (no timeout)
        }
        let mut pfds = [
            libc::pollfd {
                fd: pidfd,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: if rd_open { rd } else { -1 },
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: pfds is a valid array of 2 pollfd.
        let n = unsafe { libc::poll(pfds.as_mut_ptr(), 2, wait_ms) };
        if n < 0 {
            continue; // EINTR: forward signals and loop
        }
        if pfds[1].revents != 0 {
            rd_open = drain(rd, &mut buf);
        }
        if pfds[0].revents != 0 {
            break;
        }
    }
    if timed_out {
        sys::kill(child, libc::SIGKILL);
        if !pidns {
            drain(rd, &mut buf);
            if let Some(t) = tpid(&buf) {
                sys::kill(-t, libc::SIGKILL);
            }
        }
        if let Some(c) = cgroup {
            c.kill_all();
        }
    }
    let mut status = 0;
    loop {
        // SAFETY: status is a valid int.
        let r = unsafe { libc::waitpid(child, &mut status, 0) };
        if r == child {
            break;
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break;
        }
        forward_pending(child);
    }
    while drain(rd, &mut buf) {}
    (
        sys::exit_code(status),
        timed_out,
        String::from_utf8_lossy(&buf).into_owned(),
    )
}

fn tpid(buf: &[u8]) -> Option<libc::pid_t> {
    String::from_utf8_lossy(buf)
        .lines()
        .find_map(|l| l.strip_prefix("tpid:")?.trim().parse().ok())
}

/// Read what is available; false at EOF or error.
fn drain(fd: libc::c_int, buf: &mut Vec<u8>) -> bool {
    let mut tmp = [0u8; 4096];
    // SAFETY: tmp is a valid buffer.
    let n = unsafe { libc::read(fd, tmp.as_mut_ptr().cast(), tmp.len()) };
    if n > 0 {
        buf.extend_from_slice(&tmp[..n as usize]);
        true
    } else {
        n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    }
}

fn status(wr: libc::c_int, kind: &str, msg: &str) {
    let line = format!("{kind}:{}\n", msg.replace('\n', " "));
    sys::write_fd(wr, line.as_bytes());
}

fn fatal(wr: libc::c_int, msg: &str) -> ! {
    status(wr, "fatal", msg);
    err_line(&format!("sandbox set-up failed: {msg}"));
    sys::exit_now(EXIT_SETUP)
}

/// PID 1 of the sandbox: build the root, start the target, reap.
fn init_main(plan: &Plan, wr: libc::c_int, cg_rd: libc::c_int) -> ! {
    let _ = privs::set_parent_death_signal(libc::SIGKILL);
    if plan.ns.mount {
        if let Err(e) = sys::unshare(libc::CLONE_NEWNS) {
            fatal(wr, &format!("mount namespace: {e}"));
        }
        let mut notes = Vec::new();
        // The private tmpfs mounts hold at most the memory limit each, so
        // files there cannot pin more memory than the command may allocate.
        let tmpfs_bytes = plan
            .rlimits
            .iter()
            .find(|(r, _)| *r == crate::plan::Rlimit::Data)
            .map(|(_, v)| *v);
        if let Err(e) = mounts::build_root(&plan.fs, tmpfs_bytes, &mut notes) {
            fatal(wr, &e.to_string());
        }
        for n in notes {
            status(wr, "note", &n);
        }
    }
    if plan.loopback_up
        && let Err(e) = ns::loopback_up()
    {
        fatal(wr, &format!("bringing lo up: {e}"));
    }
    if let Some(e) = &plan.egress
        && let Err(err) = crate::egress::hand_over(crate::egress::handover_fd(), e)
    {
        fatal(wr, &format!("network proxy sockets: {err}"));
    }
    if plan.ns.uts {
        let name = b"skarn-sandbox";
        // SAFETY: valid buffer and length.
        unsafe { libc::sethostname(name.as_ptr().cast(), name.len()) };
    }
    // Out of the terminal's foreground group: the helper forwards signals.
    // SAFETY: setpgid takes integers.
    unsafe { libc::setpgid(0, 0) };
    install_forwarders();
    let mut cgroup_joined = true;
    if cg_rd >= 0 {
        // Nothing may start before init is inside the pids cgroup.
        let mut b = [0u8; 1];
        let n = loop {
            // SAFETY: reading one byte into a valid buffer.
            let n = unsafe { libc::read(cg_rd, b.as_mut_ptr().cast(), 1) };
            if n >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                break n;
            }
        };
        match (n, b[0]) {
            (1, b'1') => {}
            (1, _) => {
                cgroup_joined = false;
                status(
                    wr,
                    "note",
                    "the run's cgroup could not be joined: max_procs NOT enforced by it \
                     (a cgroup memory limit falls back to RLIMIT_AS per process)",
                )
            }
            _ => fatal(wr, "the helper went away before the pids cgroup was joined"),
        }
        // SAFETY: closing our own descriptor.
        unsafe { libc::close(cg_rd) };
    }
    // Not in the memory cgroup: the per-process address-space limit instead.
    let fallback;
    let plan = match &plan.memory_cgroup {
        Some((_, bytes)) if !cgroup_joined => {
            let mut p = plan.clone();
            p.rlimits
                .push((Rlimit::As, crate::memory::address_space_limit(*bytes)));
            fallback = p;
            &fallback
        }
        _ => plan,
    };
    let t = match sys::fork() {
        Ok(0) => target_main(plan, wr),
        Ok(pid) => pid,
        Err(e) => fatal(wr, &format!("fork: {e}")),
    };
    status(wr, "tpid", &t.to_string());
    let mut code = 1;
    loop {
        forward_pending(-t);
        let mut st = 0;
        // SAFETY: st is a valid int.
        let r = unsafe { libc::waitpid(-1, &mut st, 0) };
        if r == t {
            code = sys::exit_code(st);
            break;
        }
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::ECHILD) {
                break;
            }
        }
    }
    if !plan.ns.pid {
        sys::kill(-t, libc::SIGKILL);
    }
    if let Some(ws) = &plan.tmp_watch {
        // What the plan itself put in /tmp (grants, the private home).
        let planned: Vec<&Path> = plan
            .fs
            .iter()
            .filter_map(|o| match o {
                crate::plan::FsOp::Bind { path, .. }
                | crate::plan::FsOp::Home { path }
                | crate::plan::FsOp::Symlink { path, .. } => Some(path.as_path()),
                _ => None,
            })
            .collect();
        let lost: Vec<String> = written_beside_paths(ws)
            .into_iter()
            .filter(|e| !planned.iter().any(|p| p.starts_with(e)))
            .map(|p| p.display().to_string())
            .collect();
        if !lost.is_empty() {
            status(wr, "lost", &lost.join(" "));
        }
    }
    sys::exit_now(code)
}

/// Entries of the private /tmp along the way to the workspace other than
/// that way itself: what the command wrote there is discarded with the run.
fn written_beside_paths(ws: &Path) -> Vec<PathBuf> {
    let Ok(rel) = ws.strip_prefix("/tmp") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut dir = PathBuf::from("/tmp");
    for next in rel.components() {
        if let Ok(rd) = std::fs::read_dir(&dir) {
            for e in rd.flatten() {
                if e.file_name() != next.as_os_str() && out.len() < 8 {
                    out.push(e.path());
                }
            }
        }
        dir.push(next);
    }
    out
}

fn rlimit_resource(r: Rlimit) -> libc::__rlimit_resource_t {
    match r {
        Rlimit::Data => libc::RLIMIT_DATA,
        Rlimit::As => libc::RLIMIT_AS,
        Rlimit::Nproc => libc::RLIMIT_NPROC,
        Rlimit::Fsize => libc::RLIMIT_FSIZE,
        Rlimit::Core => libc::RLIMIT_CORE,
    }
}

/// The target: confine and exec.
fn target_main(plan: &Plan, wr: libc::c_int) -> ! {
    // Default dispositions for forwarded signals (inherited handlers would
    // otherwise survive until exec).
    for &s in FORWARDED {
        // SAFETY: resetting a disposition to default.
        unsafe { libc::signal(s, libc::SIG_DFL) };
    }
    // SAFETY: setsid takes no arguments; we are not a group leader.
    unsafe { libc::setsid() };
    let _ = privs::set_parent_death_signal(libc::SIGKILL);
    for (r, v) in &plan.rlimits {
        if let Err(e) = privs::set_rlimit(rlimit_resource(*r), *v) {
            status(wr, "note", &format!("rlimit {r:?} not applied: {e}"));
        }
    }
    if let Err(e) = sys::chdir(&plan.cwd) {
        fatal(
            wr,
            &format!("cannot enter working directory {}: {e}", plan.cwd.display()),
        );
    }
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(k, _)| {
            !plan
                .set_env
                .iter()
                .any(|(s, _)| k.as_bytes() == s.as_bytes())
        })
        .collect();
    for (k, v) in &plan.set_env {
        env.push((k.into(), v.into()));
    }
    let envp: Vec<CString> = env
        .iter()
        .filter_map(|(k, v)| {
            let mut b = k.as_bytes().to_vec();
            b.push(b'=');
            b.extend_from_slice(v.as_bytes());
            CString::new(b).ok()
        })
        .collect();
    let argv: Vec<CString> = plan
        .argv
        .iter()
        .map(|a| CString::new(a.as_bytes()).unwrap_or_default())
        .collect();
    let path_var = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    let seccomp_progs = match &plan.seccomp {
        Some(s) => {
            let mut extra = Vec::new();
            if s.deny_inet_sockets {
                extra.push(seccomp::DENY_INET_SOCKETS);
            }
            if s.deny_listen {
                extra.push(seccomp::DENY_LISTEN);
            }
            if terminal::host_tty_inherited() {
                extra.push(seccomp::DENY_TIOCSWINSZ);
            }
            match seccomp::deny_programs(&extra) {
                Ok(p) => Some(p),
                Err(e) => fatal(wr, &e.to_string()),
            }
        }
        None => None,
    };

    if let Err(e) = privs::set_no_new_privs() {
        fatal(wr, &format!("no_new_privs: {e}"));
    }
    match privs::drop_all_capabilities() {
        Ok(true) => {}
        Ok(false) => status(
            wr,
            "info",
            "capability bounding set left as is (no CAP_SETPCAP outside a user namespace); \
             the process holds no capabilities and no_new_privs prevents gaining any",
        ),
        Err(e) => fatal(wr, &format!("dropping capabilities: {e}")),
    }
    if let Some(l) = &plan.landlock {
        match landlock_rules::apply(l) {
            Ok(landlock_rules::Enforced::Fully) => {}
            Ok(landlock_rules::Enforced::Partially) => status(
                wr,
                "note",
                "Landlock only partially enforced by this kernel",
            ),
            Ok(landlock_rules::Enforced::Not) => {
                if !plan.ns.mount && plan.fail_closed {
                    fatal(
                        wr,
                        "Landlock is not enforced and there is no mount namespace",
                    );
                }
                status(wr, "note", "Landlock not enforced by this kernel");
            }
            Err(e) => fatal(wr, &e.to_string()),
        }
    }
    if let Some(p) = &seccomp_progs
        && let Err(e) = seccomp::install(p)
    {
        fatal(wr, &e.to_string());
    }
    if let Err(e) = privs::close_fds_above_stderr_on_exec() {
        fatal(wr, &format!("closing descriptors: {e}"));
    }
    exec_search(&argv, &envp, &path_var)
}

fn exec_search(argv: &[CString], envp: &[CString], path_var: &OsString) -> ! {
    let name = &argv[0];
    let show = String::from_utf8_lossy(name.as_bytes()).into_owned();
    let fail = |code: i32, why: &str| -> ! {
        sys::write_fd(2, format!("skarn: {show}: {why}\n").as_bytes());
        sys::exit_now(code)
    };
    if name.as_bytes().contains(&b'/') {
        let e = sys::execve(name, argv, envp);
        match e.raw_os_error() {
            Some(libc::ENOENT) | Some(libc::ENOTDIR) => fail(EXIT_NOT_FOUND, "command not found"),
            _ => fail(EXIT_NOT_EXECUTABLE, &format!("cannot execute: {e}")),
        }
    }
    let mut denied: Option<std::io::Error> = None;
    for dir in path_var.as_bytes().split(|b| *b == b':') {
        let dir: &[u8] = if dir.is_empty() { b"." } else { dir };
        let mut full = dir.to_vec();
        full.push(b'/');
        full.extend_from_slice(name.as_bytes());
        let Ok(c) = CString::new(full) else { continue };
        let e = sys::execve(&c, argv, envp);
        match e.raw_os_error() {
            Some(libc::ENOENT) | Some(libc::ENOTDIR) => {}
            _ => {
                if denied.is_none() {
                    denied = Some(e);
                }
            }
        }
    }
    match denied {
        Some(e) => fail(
            EXIT_NOT_EXECUTABLE,
            &format!("cannot execute: {e} (is it granted for execution?)"),
        ),
        None => fail(EXIT_NOT_FOUND, "command not found"),
    }
}
