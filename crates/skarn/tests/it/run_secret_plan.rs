//! Attack atk27d F2: the sandbox plan (the secrets' values, the run CA's
//! key) travelled to a re-executed helper in its environment, readable in
//! /proc/PID/environ by any process of the same user for the helper's
//! whole life. `skarn run --compress` re-executes the helper: while its
//! command runs, no process of the run shows the value or the key there.
//! Checked from outside, on /proc.

use std::time::{Duration, Instant};

use crate::common::*;
use skarn_test_support::TempDir;

const REAL: &str = "plan-REAL-value-0123456789abcdef";

/// Every descendant of `pid` (from /proc/*/stat).
fn descendants(pid: u32) -> Vec<u32> {
    let mut parent_of = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let ppid = stat[close + 1..]
            .split_whitespace()
            .nth(1)
            .and_then(|x| x.parse::<u32>().ok());
        if let Some(pp) = ppid {
            parent_of.push((p, pp));
        }
    }
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() {
        let cur = out[i];
        out.extend(
            parent_of
                .iter()
                .filter(|(_, pp)| *pp == cur)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    out
}

#[test]
fn the_plan_is_not_in_the_helpers_environment() {
    let t = TempDir::new("sec-plan");
    let home = t.dir("home");
    let vals = t.dir("vals");
    std::fs::write(vals.join("tok"), REAL).unwrap();
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[secrets.tok]\nfile = \"{}\"\nhosts = [\"localhost:1\"]\nenv = \"TOKEN\"\n",
            vals.join("tok").display()
        ),
    )
    .unwrap();
    let ws = t.dir("ws");
    let mut child = run_command(
        &ws,
        &home,
        &["--compress", "--secret", "tok"],
        &["sh", "-c", "exec sleep 60"],
    )
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()
    .unwrap();
    let pid = child.id();
    // Wait until the sandboxed sleep runs (the helper has read its plan).
    let start = Instant::now();
    let mut found = Vec::new();
    while start.elapsed() < Duration::from_secs(60) {
        let procs = descendants(pid);
        let sleeping = procs.iter().any(|p| {
            std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| c.starts_with(b"sleep\0"))
        });
        if sleeping {
            found = procs;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut leaks = Vec::new();
    for p in &found {
        let env = std::fs::read(format!("/proc/{p}/environ")).unwrap_or_default();
        let env = String::from_utf8_lossy(&env);
        if env.contains(REAL) || env.contains("PRIVATE KEY") {
            leaks.push(*p);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    if found.is_empty() {
        panic!("the sandboxed command never started");
    }
    assert!(found.len() > 2, "{found:?}");
    assert!(
        leaks.is_empty(),
        "the plan is in the environment of {leaks:?}"
    );
}
