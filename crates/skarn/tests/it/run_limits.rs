//! `skarn run`: timeouts, process, memory and file-size limits and the
//! run's cgroups, checked from outside.

use crate::common::*;
use skarn_test_support::{TempDir, is_root};

#[test]
fn timeout_kills_the_whole_tree_with_124() {
    let t = TempDir::new("timeout");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let marker = format!("{}", 900000 + std::process::id() % 99999);
    let script = format!("sleep {marker} & sh -c 'sleep {marker}' & setsid sleep {marker} & wait");
    let o = run_in(&ws, &home, &["--timeout", "1"], &["sh", "-c", &script]);
    assert_eq!(code(&o), 124, "{}", err(&o));
    assert!(err(&o).contains("timeout"));
    // A killed process may take a moment to disappear from /proc on a
    // loaded host; a survivor is one still there after 20 s.
    let survivors = || -> Vec<String> {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .filter(|c| c.contains(&format!("sleep {marker}")))
            .collect()
    };
    for _ in 0..200 {
        if survivors().is_empty() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("survivors: {:?}", survivors());
}

#[test]
fn process_memory_and_file_size_limits_hold() {
    let t = TempDir::new("limits");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let o = probe(&ws, &home, &["--max-procs", "20"], &["forks", "200"]);
    let n: usize = out(&o)
        .trim()
        .strip_prefix("forked ")
        .and_then(|n| n.parse().ok())
        .unwrap();
    // 20 processes for the command's tree: the probe and 19 children (the
    // sandbox's init is not counted against the command).
    assert_eq!(n, 19, "forked {n} with a cap of 20");
    let o = run_in(&ws, &home, &["--max-procs", "1"], &["true"]);
    assert_eq!(code(&o), 0, "--max-procs 1: {}", err(&o));
    let o = probe(&ws, &home, &[], &["forks", "50"]);
    assert_eq!(out(&o).trim(), "forked 50", "default cap too low");
    let o = probe(&ws, &home, &["--memory", "64"], &["alloc", "256"]);
    assert_eq!(code(&o), 1, "{}", out(&o));
    let o = probe(&ws, &home, &["--memory", "512"], &["alloc", "64"]);
    assert_eq!(code(&o), 0, "{}", out(&o));
    let o = run_in(
        &ws,
        &home,
        &["--max-file-size", "1"],
        &["sh", "-c", "head -c 3000000 /dev/zero > big"],
    );
    assert_ne!(code(&o), 0);
    assert!(std::fs::metadata(ws.join("big")).unwrap().len() <= 1024 * 1024);
}

/// The path of the v1 hierarchy holding controller `ctl` in a
/// `/proc/<pid>/cgroup` text (`N:ctl[,ctl...]:/path` lines).
fn cgroup_path<'a>(text: &'a str, ctl: &str) -> Option<&'a str> {
    text.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, ctls, path) = (f.next()?, f.next()?, f.next()?);
        ctls.split(',').any(|c| c == ctl).then_some(path)
    })
}

/// As root with pids and memory controllers, every process of the run is
/// inside the run's cgroups (init enters them itself before the target
/// starts), and the memory limit is one budget for the whole tree: three
/// processes holding 48 MiB each cannot all live under `--memory 96`,
/// which per-process limits would allow.
#[test]
fn as_root_the_whole_tree_is_in_the_runs_cgroups() {
    let host = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let (Some(pids_path), Some(_)) = (cgroup_path(&host, "pids"), cgroup_path(&host, "memory"))
    else {
        skarn_test_support::skip!("needs v1 pids and memory hierarchies");
    };
    if !is_root() {
        skarn_test_support::skip!("needs root");
    }
    let t = TempDir::new("cgroups");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    // Left by a run whose helper and reaper were killed together: removed
    // by the next run. One named after a live process stays.
    let pids_parent =
        std::path::PathBuf::from("/sys/fs/cgroup/pids").join(pids_path.trim_start_matches('/'));
    let mut dead = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = dead.id();
    let _ = dead.wait();
    let stale = pids_parent.join(format!("skarn-{dead_pid}-5ca1ab1e"));
    let live = pids_parent.join(format!("skarn-{}-5ca1ab1e", std::process::id()));
    std::fs::create_dir(&stale).unwrap();
    std::fs::create_dir(&live).unwrap();
    let o = run_in(
        &ws,
        &home,
        &["--report"],
        &[
            "sh",
            "-c",
            "cat /proc/self/cgroup; sh -c 'cat /proc/self/cgroup'",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    let text = out(&o);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| cgroup_path(l, "pids").is_some() || cgroup_path(l, "memory").is_some())
        .collect();
    assert_eq!(lines.len(), 4, "{text}");
    for l in lines {
        assert!(l.contains("/skarn-"), "outside the run's cgroup: {l}");
    }
    assert!(
        err(&o).contains("layer cgroup         enforced"),
        "{}",
        err(&o)
    );
    let (stale_left, live_left) = (stale.exists(), live.exists());
    let _ = std::fs::remove_dir(&stale);
    let _ = std::fs::remove_dir(&live);
    assert!(
        !stale_left,
        "a dead run's cgroup was left: {}",
        stale.display()
    );
    assert!(live_left, "a live pid's cgroup was removed");
    let e = exe();
    let e = e.to_str().unwrap();
    let each = format!("{e} __sandbox-helper probe alloc 48:1500");
    let script = format!("{each} & {each} & {each} & wait");
    let o = run_in(
        &ws,
        &home,
        &["--exec", e, "--memory", "96"],
        &["sh", "-c", &script],
    );
    let held = out(&o).matches("allocated 48 MiB").count();
    assert!(
        held < 3,
        "three 48 MiB processes under --memory 96: {}",
        out(&o)
    );
    // Socket buffers count too (v1 charges them once the TCP limit is set):
    // without it 40 connections queued about 150 MiB under --memory 64.
    let o = probe(
        &ws,
        &home,
        &["--net", "loopback", "--memory", "64"],
        &["tcp-queue", "40"],
    );
    let mib: u64 = out(&o)
        .trim()
        .strip_prefix("queued ")
        .and_then(|r| r.strip_suffix(" MiB"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{} {}", out(&o), err(&o)));
    assert!(
        mib <= 80,
        "{mib} MiB queued in TCP sockets under --memory 64"
    );
}
