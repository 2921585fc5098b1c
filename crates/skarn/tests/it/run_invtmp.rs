//! invtmp: sandboxed stdio servers died by SIGKILL about 10 s after
//! their start when the machine was slow (serve_hostile_budget,
//! serve_hostile_down, worker_limits, serve_python under load; stray
//! files in /tmp only made the host scans slower). The gateway forked
//! each server from a tokio thread lent to the blocking pool and asked
//! for a death signal on its parent's end; Linux sends it when the
//! forking *thread* ends, and the pool retires an idle thread after
//! 10 s. Judged from outside: the server's own process is still the
//! same one well past that, and the gateway reports no crash.

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use crate::serve_hostile_down::{Gw, hostile_server, text};
use skarn_test_support::TempDir;

/// Pids of live processes whose command line holds `marker`.
fn pids_with(marker: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let live = std::fs::read_to_string(e.path().join("stat"))
            .ok()
            .and_then(|s| s.rsplit_once(')').map(|(_, r)| r.trim_start().to_owned()))
            .is_some_and(|r| !r.starts_with('Z') && !r.starts_with('X'));
        let argv: Vec<&[u8]> = cmd.split(|b| *b == 0).collect();
        let is_server = argv
            .first()
            .is_some_and(|a| a.ends_with(b"skarn-hostile-server"));
        if live && is_server && argv.contains(&marker.as_bytes()) {
            out.push(pid);
        }
    }
    out.sort();
    out
}

#[test]
fn a_sandboxed_server_outlives_the_thread_that_started_it() {
    let dir = TempDir::new("run_invtmp");
    let marker = format!(
        "invtmp-{}",
        dir.path().file_name().unwrap().to_string_lossy()
    );
    let cfg = hostile_server("ok", &["--name", &marker]);
    let mut gw = Gw::start_config(dir.path(), &dir.path().join("home"), &cfg, json!({}));
    let r = gw.call("search", json!({"query": "notify"}));
    assert!(text(&r).contains("ok__notify"), "{r}");
    let before = pids_with(&marker);
    assert_eq!(before.len(), 1, "{before:?}");
    // Past tokio's 10 s keep-alive of an idle blocking thread (the
    // gateway is idle meanwhile, so that thread does retire).
    std::thread::sleep(Duration::from_secs(16));
    assert!(
        Path::new("/proc").join(before[0].to_string()).exists(),
        "the server (pid {}) was killed while idle",
        before[0]
    );
    let r = gw.call("search", json!({"query": "notify"}));
    let t = text(&r);
    assert!(t.contains("ok__notify") && !t.contains("crashed"), "{r}");
    assert_eq!(pids_with(&marker), before, "the server was restarted");
    gw.terminate();
}
