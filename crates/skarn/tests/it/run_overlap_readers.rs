//! While a `skarn run` lives in a workspace (an agent's dev server), its
//! placeholders at the missing protected names (`skarn.toml`, `.mcp.json`,
//! `.claude`, ...) are "absent" to `skarn doctor`, `serve` and `init`, for
//! root (ENXIO) and for other users (EACCES); `init` never writes over
//! one (attack atk24d F5).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::common::*;
use skarn_test_support::TempDir;

/// A run in `ws` that lives until the file `ws/stop` appears.
struct LiveRun {
    child: Option<Child>,
    stop: std::path::PathBuf,
}

impl LiveRun {
    /// Start it and wait for its placeholder at `ws/name`.
    fn start(ws: &Path, home: &Path, name: &str) -> LiveRun {
        // Not `--no-config`: the run reads (and reserves) `skarn.toml`.
        // Pinned to `direct`: the readers take the direct mode's
        // placeholders, and the run waits for a file the host makes (ADR
        // 0226: not seen in the default layer until the next run).
        let child = Command::new(exe())
            .args(["run", "--workspace-layer", "direct", "--workspace"])
            .arg(ws)
            .args(["--", "sh", "-c", "while [ ! -e stop ]; do sleep 0.05; done"])
            .env("HOME", home)
            .env_remove("XDG_STATE_HOME")
            .env_remove("SKARN_CALLER")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let run = LiveRun {
            child: Some(child),
            stop: ws.join("stop"),
        };
        wait_for_placeholder(&ws.join(name));
        run
    }

    /// Let it end on its own (its placeholders removed), and check it did.
    fn end(mut self) {
        std::fs::write(&self.stop, "").unwrap();
        let o = self.child.take().unwrap().wait_with_output().unwrap();
        assert_eq!(code(&o), 0, "{}", err(&o));
        let _ = std::fs::remove_file(&self.stop);
    }
}

impl Drop for LiveRun {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = std::fs::write(&self.stop, "");
            let _ = c.wait();
        }
    }
}

/// Wait until `p` is a socket (a live run's placeholder), at most 20 s.
fn wait_for_placeholder(p: &Path) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        if is_placeholder(p) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("no placeholder at {} after 20 s", p.display());
}

fn is_placeholder(p: &Path) -> bool {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    std::fs::symlink_metadata(p)
        .is_ok_and(|m| m.file_type().is_socket() && m.permissions().mode() & 0o7777 == 0)
}

fn skarn(ws: &Path, home: &Path, args: &[&str]) -> Output {
    Command::new(exe())
        .args(args)
        .current_dir(ws)
        .env("HOME", home)
        .env_remove("SKARN_CONFIG")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// What `skarn serve` (in `ws`, default configuration) answers to an
/// `initialize` over stdio; `Err` with its stderr when it exits instead.
fn serve_initialize(ws: &Path, home: &Path) -> Result<serde_json::Value, String> {
    let mut child = Command::new(exe())
        .arg("serve")
        .current_dir(ws)
        .env("HOME", home)
        .env_remove("SKARN_CONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in out.lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let _ = writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"0"}}}}}}"#
    );
    let _ = stdin.flush();
    // The reader ends (channel closed) when serve exits.
    let answer = rx.recv_timeout(Duration::from_secs(60));
    drop(stdin);
    let _ = child.kill();
    let o = child.wait_with_output().unwrap();
    match answer {
        Ok(line) => Ok(serde_json::from_str(&line).unwrap()),
        Err(_) => Err(err(&o)),
    }
}

#[test]
fn doctor_serve_and_init_take_a_live_runs_placeholders_for_absent() {
    let t = TempDir::new("overlap-readers");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    git(&ws, &["init", "-q"]);
    let run = LiveRun::start(&ws, &home, ".mcp.json");
    for p in ["skarn.toml", ".mcp.json", ".claude"] {
        wait_for_placeholder(&ws.join(p));
    }
    // doctor: no configuration, as without the run.
    let d = skarn(&ws, &home, &["doctor"]);
    assert_eq!(code(&d), 0, "{}", err(&d));
    assert!(out(&d).contains("none configured"), "{}", out(&d));
    // serve: the missing file named as missing, not an I/O error.
    let e = serve_initialize(&ws, &home).expect_err("serve without a skarn.toml");
    assert!(e.contains("no such file"), "{e}");
    assert!(!e.contains("os error"), "{e}");
    // init --print reads every file it merges (absent ones included).
    let p = skarn(&ws, &home, &["init", "--client", "claude-code", "--print"]);
    assert_eq!(code(&p), 0, "{}", err(&p));
    assert!(out(&p).contains("mcpServers"), "{}", out(&p));
    // init refuses to write over the run's placeholders, and says why.
    let i = skarn(&ws, &home, &["init", "--client", "claude-code"]);
    assert_eq!(code(&i), 2, "{}", err(&i));
    assert!(err(&i).contains("reserved by a `skarn run`"), "{}", err(&i));
    assert!(!err(&i).contains("os error"), "{}", err(&i));
    for p in ["skarn.toml", ".mcp.json", ".claude"] {
        assert!(is_placeholder(&ws.join(p)), "{p} was replaced");
    }
    let written: Vec<_> = std::fs::read_dir(&ws)
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|f| f.is_file()))
        .map(|e| e.file_name())
        .collect();
    assert!(written.is_empty(), "init wrote {written:?}");
    run.end();
    // Once the run has ended, the same init writes.
    let i = skarn(&ws, &home, &["init", "--client", "claude-code"]);
    assert_eq!(code(&i), 0, "{}", err(&i));
    for p in ["skarn.toml", ".mcp.json", ".claude/settings.json"] {
        assert!(ws.join(p).is_file(), "{p}");
    }
}

#[test]
fn serve_doctor_and_init_work_in_a_set_up_project_while_a_run_lives() {
    let t = TempDir::new("overlap-readers-set-up");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    git(&ws, &["init", "-q"]);
    let i = skarn(&ws, &home, &["init", "--client", "claude-code"]);
    assert_eq!(code(&i), 0, "{}", err(&i));
    let before = std::fs::read(ws.join(".mcp.json")).unwrap();
    let run = LiveRun::start(&ws, &home, ".gemini");
    let a = serve_initialize(&ws, &home).unwrap();
    assert!(a["result"]["serverInfo"].is_object(), "{a}");
    let d = skarn(&ws, &home, &["doctor"]);
    assert_eq!(code(&d), 0, "{}", err(&d));
    let i = skarn(&ws, &home, &["init", "--client", "claude-code"]);
    assert_eq!(code(&i), 0, "{}", err(&i));
    assert!(err(&i).contains("already set up"), "{}", err(&i));
    assert_eq!(std::fs::read(ws.join(".mcp.json")).unwrap(), before);
    run.end();
}
