//! Ending stdio downstream servers with every process they started.
//!
//! Each stdio child leads its own process group. A group kill misses
//! descendants that left the group (`setsid`, `setpgid`), so every kill
//! first walks `/proc` for the whole tree under the child and signals each
//! process as well as the group. A descendant whose parent already exited is
//! re-parented: to init normally, out of reach; to the gateway when the
//! gateway is a child subreaper ([`become_subreaper`], which `skarn serve`
//! calls), and then [`ChildRegistry::kill_all`] ends every descendant of the
//! gateway on shutdown.
//!
//! Other systems: macOS has no `/proc` and no subreaper, so only the
//! process group is signalled there (a descendant that left the group is
//! missed). On Windows there are no signals: each stdio child runs in a job
//! object that is closed, killing the whole tree, when the child is
//! dropped ([`crate::stdio_child`]); the registry's kills do nothing more.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Make this process the reaper of its orphaned descendants, so that a
/// downstream's detached grandchildren stay reachable. Linux only; returns
/// whether it worked.
#[cfg(target_os = "linux")]
pub fn become_subreaper() -> bool {
    // SAFETY: prctl with integer arguments only changes this process's flags.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 }
}

/// No subreaper off Linux: always `false`.
#[cfg(not(target_os = "linux"))]
pub fn become_subreaper() -> bool {
    false
}

#[cfg(not(target_os = "linux"))]
fn is_subreaper() -> bool {
    false
}

#[cfg(target_os = "linux")]
fn is_subreaper() -> bool {
    let mut v: libc::c_int = 0;
    // SAFETY: PR_GET_CHILD_SUBREAPER writes one int to the pointer given.
    let r = unsafe { libc::prctl(libc::PR_GET_CHILD_SUBREAPER, &mut v as *mut libc::c_int) };
    r == 0 && v != 0
}

/// Parent of every live process, from `/proc/<pid>/stat`.
fn parents() -> HashMap<i32, i32> {
    let mut map = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return map;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // "pid (comm) state ppid ...": comm may contain spaces and ')'.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let mut f = rest.split_whitespace();
        let state = f.next();
        if matches!(state, Some("Z") | Some("X")) {
            continue;
        }
        if let Some(ppid) = f.next().and_then(|s| s.parse().ok()) {
            map.insert(pid, ppid);
        }
    }
    map
}

/// Every live descendant of `root` (not `root` itself).
pub fn descendants(root: i32) -> Vec<i32> {
    let parents = parents();
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for (&pid, &ppid) in &parents {
        children.entry(ppid).or_default().push(pid);
    }
    let mut out = Vec::new();
    let mut todo = vec![root];
    let mut seen = HashSet::new();
    while let Some(p) = todo.pop() {
        for &c in children.get(&p).map(Vec::as_slice).unwrap_or(&[]) {
            if seen.insert(c) {
                out.push(c);
                todo.push(c);
            }
        }
    }
    out
}

#[cfg(unix)]
const SIGKILL: i32 = libc::SIGKILL;
#[cfg(unix)]
const SIGTERM: i32 = libc::SIGTERM;
#[cfg(not(unix))]
const SIGKILL: i32 = 9;
#[cfg(not(unix))]
const SIGTERM: i32 = 15;

#[cfg(not(unix))]
fn signal(_pid: i32, _sig: i32) {}

#[cfg(not(unix))]
fn kill_group(_pgid: i32, _sig: i32) {}

#[cfg(not(unix))]
fn alive(_pid: i32) -> bool {
    false
}

#[cfg(not(unix))]
fn group_alive(_pgid: i32) -> bool {
    false
}

#[cfg(unix)]
fn signal(pid: i32, sig: i32) {
    if pid > 1 {
        // SAFETY: kill only sends a signal; a stale pid fails with ESRCH.
        unsafe {
            libc::kill(pid, sig);
        }
    }
}

#[cfg(unix)]
fn kill_group(pgid: i32, sig: i32) {
    if pgid > 1 {
        // SAFETY: killpg only sends a signal; a stale group id fails with ESRCH.
        unsafe {
            libc::killpg(pgid, sig);
        }
    }
}

#[cfg(unix)]
fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence/permission.
    pid > 1 && unsafe { libc::kill(pid, 0) } == 0 && !zombie(pid)
}

#[cfg(unix)]
fn zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            let state = s.rsplit_once(')').map(|(_, r)| r.trim_start());
            state.is_some_and(|r| r.starts_with('Z') || r.starts_with('X'))
        })
        .unwrap_or(true)
}

/// Process groups of every stdio child still running.
#[derive(Debug, Default)]
pub struct ChildRegistry {
    groups: Mutex<HashSet<i32>>,
}

impl ChildRegistry {
    pub(crate) fn add(&self, pgid: i32) {
        self.groups
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(pgid);
    }

    /// Kill one child's group and every descendant (SIGKILL), and forget it.
    pub fn kill(&self, pgid: i32) {
        let known = self
            .groups
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&pgid);
        if known {
            let tree = descendants(pgid);
            kill_group(pgid, SIGKILL);
            for p in tree {
                signal(p, SIGKILL);
            }
        }
    }

    /// Terminate every group and every descendant: SIGTERM, a short grace
    /// period, then SIGKILL. When this process is a subreaper, every one of
    /// its descendants is included (detached grandchildren re-parented to
    /// it, and the Code Mode workers: this is for shutdown).
    pub fn kill_all(&self, grace: Duration) {
        let groups: Vec<i32> = self
            .groups
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
            .collect();
        let mut procs: Vec<i32> = groups.iter().flat_map(|&g| descendants(g)).collect();
        if is_subreaper() {
            procs.extend(descendants(std::process::id() as i32));
        }
        if groups.is_empty() && procs.is_empty() {
            return;
        }
        for &g in &groups {
            kill_group(g, SIGTERM);
        }
        for &p in &procs {
            signal(p, SIGTERM);
        }
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline
            && (groups.iter().any(|&g| group_alive(g)) || procs.iter().any(|&p| alive(p)))
        {
            std::thread::sleep(Duration::from_millis(10));
        }
        for &g in &groups {
            kill_group(g, SIGKILL);
        }
        for &p in &procs {
            signal(p, SIGKILL);
        }
    }

    /// Process groups still registered (for tests and diagnostics).
    pub fn groups(&self) -> Vec<i32> {
        self.groups
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .copied()
            .collect()
    }
}

#[cfg(unix)]
fn group_alive(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence/permission.
    pgid > 1 && unsafe { libc::killpg(pgid, 0) } == 0
}

#[cfg(all(test, unix))] // sh and signals
mod tests {
    #[test]
    fn finds_a_grandchild() {
        let mut c = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & wait"])
            .spawn()
            .unwrap();
        let pid = c.id() as i32;
        let mut found = Vec::new();
        for _ in 0..500 {
            found = super::descendants(pid);
            if !found.is_empty() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(found.len(), 1, "{found:?}");
        for p in found {
            super::signal(p, libc::SIGKILL);
        }
        let _ = c.wait();
    }
}
