//! The record files skarn keeps in its state directory (ADR 0317: one
//! module finds, checks, reads and writes them). Judged from outside:
//! the place's mode after a real run, and whether a later run or hook
//! call still finishes when its record is replaced by a FIFO (a record
//! opened as a plain file blocked there for good), as root and as uid
//! 65534.

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::*;
use crate::support_agent::{claude_decision_of, init, setup_git};
use crate::support_secret_sources::is_root;
use skarn_test_support::TempDir;

/// The whole of `dir` given to uid 65534 (before the settling wait: a
/// change of owner moves the change times).
fn give(dir: &Path) {
    let st = Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(dir)
        .status();
    assert!(st.unwrap().success());
}

/// `c` as uid 65534 when `nobody`.
fn user(c: Command, nobody: bool) -> Command {
    if !nobody {
        return c;
    }
    let mut n = Command::new("setpriv");
    n.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(c.get_program())
        .args(c.get_args());
    if let Some(d) = c.get_current_dir() {
        n.current_dir(d);
    }
    for (k, v) in c.get_envs() {
        match v {
            Some(v) => n.env(k, v),
            None => n.env_remove(k),
        };
    }
    n
}

/// Run `c` (`input` on stdin); `None` when it has not finished after a
/// minute (it is killed then). Not a timing check: a run here takes well
/// under a second, a blocked one never ends.
fn finishes(mut c: Command, input: &[u8]) -> Option<Output> {
    let mut p = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = p.stdin.take().unwrap().write_all(input);
    let start = Instant::now();
    while p.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = p.kill();
            let _ = p.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Some(p.wait_with_output().unwrap())
}

/// Every file of `dir` replaced by a FIFO; how many.
fn fifos_in_place(dir: &Path) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        std::fs::remove_file(e.path()).unwrap();
        let st = Command::new("mkfifo").arg(e.path()).status().unwrap();
        assert!(st.success());
        n += 1;
    }
    n
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().mode() & 0o777
}

/// The records of earlier scans: their place is private to the user, and
/// a FIFO planted in place of a record is no record (the run finishes,
/// lists again and writes a real record back).
#[test]
fn scan_records_are_private_and_a_fifo_in_their_place_blocks_no_run() {
    let users: &[bool] = if is_root() { &[false, true] } else { &[false] };
    for &nobody in users {
        let t = TempDir::new(if nobody { "r1-scan-nobody" } else { "r1-scan" });
        let ws = t.dir("ws");
        assert!(git(&ws, &["init", "-q"]).status.success());
        let home = t.dir("home");
        let sp = home.join(".pyenv/versions/3.12.0/lib/python3.12/site-packages");
        for p in 0..5 {
            std::fs::create_dir_all(sp.join(format!("pkg{p}"))).unwrap();
        }
        std::os::unix::fs::symlink("/usr/lib", sp.join("linked")).unwrap();
        if nobody {
            give(t.path());
        }
        // (What changed within 2 s of a scan is not recorded.)
        std::thread::sleep(Duration::from_millis(2200));
        let run = || {
            let mut c = Command::new(exe());
            c.args(["run", "--", "true"])
                .current_dir(&ws)
                .env("HOME", &home)
                .env_remove("XDG_CONFIG_HOME")
                .env_remove("XDG_STATE_HOME");
            finishes(user(c, nobody), b"")
        };
        let o = run().expect("the first run did not finish");
        assert_eq!(code(&o), 0, "{}", err(&o));
        let rec = home.join(".local/state/skarn/scan-cache");
        for p in [home.join(".local/state/skarn"), rec.clone()] {
            assert_eq!(mode(&p), 0o700, "{} is open to others", p.display());
        }
        assert!(fifos_in_place(&rec) > 0, "no record kept");
        if nobody {
            give(t.path());
        }
        let o = run().expect("a FIFO in place of a scan record blocked the run");
        assert_eq!(code(&o), 0, "{}", err(&o));
        let regular = std::fs::read_dir(&rec)
            .unwrap()
            .flatten()
            .any(|e| e.file_type().unwrap().is_file());
        assert!(regular, "no record written back");
        // Usability: the run still writes its workspace.
        let mut c = Command::new(exe());
        c.args(["run", "--", "sh", "-c", "echo ok > f.txt"])
            .current_dir(&ws)
            .env("HOME", &home);
        let o = finishes(user(c, nobody), b"").unwrap();
        assert_eq!(code(&o), 0, "{}", err(&o));
        assert_eq!(std::fs::read_to_string(ws.join("f.txt")).unwrap(), "ok\n");
    }
}

/// The hook's kept walk: a FIFO in place of it is no record (the hook
/// walks again and answers), and its place is private.
#[test]
fn a_fifo_in_place_of_the_hook_walk_blocks_no_hook_call() {
    let users: &[bool] = if is_root() { &[false, true] } else { &[false] };
    for &nobody in users {
        let s = setup_git(if nobody { "r1-walk-nobody" } else { "r1-walk" });
        std::fs::create_dir_all(s.ws.join("packages/a/src")).unwrap();
        std::fs::write(s.ws.join("packages/a/src/lib.rs"), "// TODO\n").unwrap();
        let o = init(&s, &[]);
        assert_eq!(code(&o), 0, "{}", err(&o));
        if nobody {
            give(s.t.path());
        }
        std::thread::sleep(Duration::from_millis(2600));
        let call = || {
            let i = json!({"session_id": "s", "transcript_path": s.home.join("t.jsonl"),
                "cwd": s.ws, "permission_mode": "default", "hook_event_name": "PreToolUse",
                "tool_name": "Read", "tool_input": {"file_path": s.ws.join("packages/a/src/lib.rs")},
                "tool_use_id": "toolu_1"});
            let mut c = Command::new(exe());
            c.args(["hook", "claude-code"])
                .current_dir(&s.ws)
                .env("HOME", &s.home)
                .env("CLAUDE_PROJECT_DIR", &s.ws)
                .env_remove("XDG_CONFIG_HOME")
                .env_remove("XDG_STATE_HOME")
                .env_remove("CLAUDE_CONFIG_DIR");
            finishes(user(c, nobody), i.to_string().as_bytes())
        };
        let o = call().expect("the first hook call did not finish");
        assert_eq!(code(&o), 0, "{o:?}");
        assert_eq!(claude_decision_of(&o).0, "", "{o:?}");
        let kept = s.home.join(".local/state/skarn/hook-walks");
        assert_eq!(mode(&kept), 0o700, "{} is open to others", kept.display());
        assert!(fifos_in_place(&kept) > 0, "no walk kept (nobody: {nobody})");
        if nobody {
            give(s.t.path());
        }
        let o = call().expect("a FIFO in place of the kept walk blocked the hook");
        assert_eq!(code(&o), 0, "{o:?}");
        assert_eq!(claude_decision_of(&o).0, "", "{o:?}");
    }
}

/// `[run] scan_cache_max` in the user's file bounds each record of
/// earlier scans (0: none kept); the workspace's file cannot set it.
#[test]
fn the_scan_cache_size_is_a_user_setting() {
    let t = TempDir::new("r1-scan-max");
    let ws = t.dir("ws");
    assert!(git(&ws, &["init", "-q"]).status.success());
    let home = t.dir("home");
    std::fs::create_dir_all(home.join(".pyenv/versions/3.12.0/lib/python3.12/pkg")).unwrap();
    std::thread::sleep(Duration::from_millis(2200));
    let run = |home: &Path| {
        let mut c = Command::new(exe());
        c.args(["run", "--", "true"])
            .current_dir(&ws)
            .env("HOME", home)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_STATE_HOME");
        finishes(c, b"").unwrap()
    };
    let records = |home: &Path| {
        std::fs::read_dir(home.join(".local/state/skarn/scan-cache"))
            .map(|r| {
                r.flatten()
                    .filter(|e| e.metadata().unwrap().len() > 0)
                    .count()
            })
            .unwrap_or(0)
    };
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        "[run]\nscan_cache_max = 0\n",
    )
    .unwrap();
    let o = run(&home);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(records(&home), 0, "a record was kept past the bound");
    // The workspace's file asks for more: ignored, said.
    std::fs::write(ws.join("skarn.toml"), "[run]\nscan_cache_max = \"8MiB\"\n").unwrap();
    let o = run(&home);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(err(&o).contains("scan_cache_max is ignored"), "{}", err(&o));
    assert_eq!(records(&home), 0);
    // Without the setting, records are kept.
    std::fs::remove_file(ws.join("skarn.toml")).unwrap();
    std::fs::write(home.join(".config/skarn/config.toml"), "[run]\n").unwrap();
    let o = run(&home);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(records(&home) > 0, "no record kept by default");
}
