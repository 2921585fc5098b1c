//! A worker dies with its parent (PR_SET_PDEATHSIG), so a gateway killed
//! with SIGKILL leaves no worker behind.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().next()?.chars().next()
}

fn seccomp_mode(pid: u32) -> Option<String> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("Seccomp:"))
        .map(|v| v.trim().to_string())
}

#[test]
fn worker_dies_when_its_parent_is_killed() {
    // A stand-in parent (sh) starts a worker whose stdin is our pipe (kept
    // open, so the worker waits for a job), reports its pid, then waits.
    let script =
        r#"exec 3<&0; "$0" __codemode-worker --parent-pid $$ <&3 3<&- > /dev/null & echo $!; wait"#;
    let mut parent = Command::new("/bin/sh")
        .args(["-c", script, env!("CARGO_BIN_EXE_skarn")])
        .stdout(Stdio::piped())
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let _keep_stdin_open = parent.stdin.take();
    let mut line = String::new();
    BufReader::new(parent.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let worker: u32 = line.trim().parse().unwrap();
    // Wait until it is confined (its filter is the last step).
    let t = Instant::now();
    while seccomp_mode(worker).as_deref() != Some("2") {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "worker never confined itself"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    parent.kill().unwrap();
    parent.wait().unwrap();
    let t = Instant::now();
    loop {
        match state(worker) {
            None | Some('Z') | Some('X') => break,
            Some(_) if t.elapsed() > Duration::from_secs(20) => {
                panic!("worker {worker} outlived its parent")
            }
            Some(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}
