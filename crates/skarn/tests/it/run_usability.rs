//! `skarn run`: ordinary agent work still runs inside the sandbox, and the
//! command-line contract (streams, exit codes) holds.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::common::*;
use skarn_test_support::TempDir;

fn sh(
    ws: &std::path::Path,
    home: &std::path::Path,
    flags: &[&str],
    script: &str,
) -> std::process::Output {
    run_in(ws, home, flags, &["sh", "-c", script])
}

#[test]
fn everyday_tools_work() {
    let t = TempDir::new("tools");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::write(ws.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    let o = sh(
        &ws,
        &home,
        &[],
        "ls -la && cat a.txt | grep t | sort | wc -l",
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(
        out(&o).contains("a.txt") && out(&o).trim_end().ends_with('2'),
        "{}",
        out(&o)
    );
    let o = sh(
        &ws,
        &home,
        &[],
        "f=$(mktemp) && echo tmp > $f && cat $f && echo $TMPDIR && d=$(mktemp -d) && ls -d $d",
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(out(&o).starts_with("tmp\n/tmp\n/tmp/"), "{}", out(&o));
    // /proc/self from a child process.
    let o = sh(
        &ws,
        &home,
        &[],
        "cat /proc/self/status | grep -c '^Pid:'; sh -c 'readlink /proc/self/exe'",
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(out(&o).starts_with("1\n"), "{}", out(&o));
    // /dev basics.
    let o = sh(
        &ws,
        &home,
        &[],
        "head -c 4 /dev/urandom | wc -c; echo x > /dev/null; head -c 3 /dev/zero | wc -c",
    );
    assert_eq!(out(&o), "4\n3\n", "{}", err(&o));
}

#[test]
fn python_and_git_work() {
    let t = TempDir::new("pygit");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    if std::path::Path::new("/usr/bin/python3").exists() {
        let o = run_in(
            &ws,
            &home,
            &[],
            &[
                "/usr/bin/python3",
                "-c",
                "import json,sys; print(json.dumps({'ok': sum(range(5))}))",
            ],
        );
        assert_eq!(out(&o), "{\"ok\": 10}\n", "{}", err(&o));
    } else {
        println!("/usr/bin/python3 missing on this host: python check not possible");
    }
    assert!(
        Command::new("git")
            .args(["init", "-q"])
            .current_dir(&ws)
            .status()
            .unwrap()
            .success()
    );
    std::fs::write(ws.join("file.txt"), "x").unwrap();
    let o = sh(
        &ws,
        &home,
        &[],
        "git status --porcelain && git add file.txt && git -c user.name=a -c user.email=a@b commit -qm m && git log --oneline | wc -l",
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(out(&o), "?? file.txt\n1\n", "{}", err(&o));
}

#[test]
fn loopback_server_and_client_talk() {
    let t = TempDir::new("loop");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let py = "import socket,threading\n\
s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(1); p=s.getsockname()[1]\n\
def srv():\n    c,_=s.accept(); c.sendall(c.recv(100).upper()); c.close()\n\
th=threading.Thread(target=srv, daemon=True); th.start()\n\
c=socket.create_connection(('127.0.0.1',p), timeout=10); c.sendall(b'ping'); print(c.recv(100).decode()); th.join()\n";
    let o = run_in(
        &ws,
        &home,
        &["--net", "loopback"],
        &["/usr/bin/python3", "-c", py],
    );
    assert_eq!(out(&o), "PING\n", "{}", err(&o));
    // Under the default policy there is no loopback at all.
    let o = run_in(
        &ws,
        &home,
        &["--timeout", "60"],
        &["/usr/bin/python3", "-c", py],
    );
    assert_ne!(code(&o), 0);
    assert_ne!(out(&o), "PING\n");
}

#[test]
fn exit_statuses_follow_the_command() {
    let t = TempDir::new("exit");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    assert_eq!(code(&sh(&ws, &home, &[], "exit 7")), 7);
    assert_eq!(code(&sh(&ws, &home, &[], "kill -TERM $$")), 143);
    assert_eq!(code(&sh(&ws, &home, &[], "kill -KILL $$")), 137);
    let o = run_in(&ws, &home, &[], &["definitely-not-a-command-xyz"]);
    assert_eq!(code(&o), 127);
    assert!(err(&o).contains("command not found"), "{}", err(&o));
    let o = run_in(&ws, &home, &[], &["/nonexistent/bin/tool"]);
    assert_eq!(code(&o), 127);
    // Present but not granted for execution (outside every grant).
    let o = run_in(&ws, &home, &["--bogus-flag"], &["true"]);
    assert_eq!(code(&o), 2);
    assert!(!err(&o).contains("panicked"));
    let o = Command::new(exe())
        .args(["run", "--workspace", "/nonexistent/ws", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 2);
    assert_eq!(err(&o).lines().count(), 1, "{}", err(&o));
    let o = Command::new(exe())
        .args(["run", "--read", "/nonexistent/x", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 2);
    let o = Command::new(exe()).args(["run"]).output().unwrap();
    assert_eq!(code(&o), 2);
}

#[test]
fn output_streams_before_exit() {
    let t = TempDir::new("stream");
    let mut c = Command::new(exe())
        .args(["run", "--no-config", "--workspace"])
        .arg(t.path())
        .args(["--", "sh", "-c", "echo first; read x; echo second"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut r = BufReader::new(c.stdout.take().unwrap());
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    assert_eq!(line, "first\n");
    // The command is still waiting for input: nothing buffered until exit.
    assert!(c.try_wait().unwrap().is_none());
    use std::io::Write;
    c.stdin.take().unwrap().write_all(b"go\n").unwrap();
    line.clear();
    r.read_line(&mut line).unwrap();
    assert_eq!(line, "second\n");
    assert!(c.wait().unwrap().success());
}

#[test]
fn termination_signals_reach_the_command() {
    let t = TempDir::new("sig");
    let mut c = Command::new(exe())
        .args(["run", "--no-config", "--workspace"])
        .arg(t.path())
        .args([
            "--",
            "sh",
            "-c",
            "trap 'echo got-term; exit 42' TERM; echo ready; while :; do sleep 0.1; done",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut r = BufReader::new(c.stdout.take().unwrap());
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
    line.clear();
    r.read_line(&mut line).unwrap();
    assert_eq!(line, "got-term\n");
    assert_eq!(c.wait().unwrap().code(), Some(42));
}

#[test]
fn config_files_layer_and_flags_override() {
    let t = TempDir::new("cfg");
    let (ws, home, a, b) = (t.dir("ws"), t.dir("home"), t.dir("a"), t.dir("b"));
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[run]\nread = [\"{}\"]\ntimeout = 50\nnet = \"loopback\"\n",
            a.display()
        ),
    )
    .unwrap();
    std::fs::write(
        ws.join("skarn.toml"),
        format!(
            "[gateway]\n# read by skarn serve\n\n[run]\nread = [\"{}\"]\ntimeout = 60\n",
            b.display()
        ),
    )
    .unwrap();
    trust(&ws.join("skarn.toml"), &home);
    std::fs::write(a.join("fa"), "A").unwrap();
    std::fs::write(b.join("fb"), "B").unwrap();
    let run = |flags: &[&str]| {
        Command::new(exe())
            .args(["run", "--json", "--workspace"])
            .arg(&ws)
            .args(flags)
            .args(["--", "sh", "-c"])
            .arg(format!("cat {}/fa {}/fb", a.display(), b.display()))
            .env("HOME", &home)
            .output()
            .unwrap()
    };
    let o = run(&[]);
    assert_eq!(out(&o), "AB", "{}", err(&o));
    let v: serde_json::Value = serde_json::from_str(err(&o).lines().last().unwrap()).unwrap();
    let timeout = v["limits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "timeout")
        .unwrap()
        .clone();
    assert_eq!(timeout["value"], "60 s");
    assert!(
        timeout["source"]
            .as_str()
            .unwrap()
            .ends_with("ws/skarn.toml:6:11"),
        "{timeout}"
    );
    assert!(
        v["net"].as_str().unwrap().starts_with("loopback (")
            && v["net"].as_str().unwrap().contains("config.toml:4:7"),
        "{}",
        v["net"]
    );
    let grants = v["grants"].as_array().unwrap();
    let src = |p: &std::path::Path| {
        grants
            .iter()
            .find(|g| g["path"] == p.display().to_string())
            .map(|g| g["source"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert!(
        src(&a).contains(".config/skarn/config.toml:2:"),
        "{}",
        src(&a)
    );
    assert!(src(&b).contains("ws/skarn.toml:5:"), "{}", src(&b));
    let o = run(&["--timeout", "70", "--net", "deny", "--no-config"]);
    assert_ne!(out(&o), "AB");
    let v: serde_json::Value = serde_json::from_str(err(&o).lines().last().unwrap()).unwrap();
    assert!(v["limits"].to_string().contains("70 s"));
    assert_eq!(v["net"], "deny (--net)");
}

/// Run an ecosystem's test command with the real HOME (toolchains live there).
/// The workspace's store in the real home is removed after the run.
fn eco(ws: &std::path::Path, cmd: &[&str]) -> std::process::Output {
    let o = Command::new(exe())
        .args(["run", "--no-config", "--report", "--workspace"])
        .arg(ws)
        .arg("--")
        .args(cmd)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let c = Command::new(exe())
        .args(["cache", "clear", "--workspace"])
        .arg(ws)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(code(&c), 0, "skarn cache clear: {}", err(&c));
    o
}

#[test]
fn cargo_test_in_a_rust_project() {
    if !host_has("cargo", "--version") {
        skarn_test_support::skip!(
            "cargo is not usable by this user: the Rust ecosystem cannot be checked here"
        );
    }
    let t = TempDir::new("rust");
    let ws = t.dir("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(
        ws.join("Cargo.toml"),
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(ws.join("src/lib.rs"), "pub fn add(a: u32, b: u32) -> u32 { a + b }\n#[test]\nfn adds() { assert_eq!(add(2, 2), 4); }\n").unwrap();
    let o = eco(&ws, &["cargo", "test", "--offline"]);
    assert_eq!(code(&o), 0, "{}\n{}", out(&o), err(&o));
    assert!(out(&o).contains("test adds ... ok"), "{}", out(&o));
    assert!(err(&o).contains("preset rust"), "{}", err(&o));
}

#[test]
fn npm_test_in_a_node_project() {
    if !host_has("npm", "--version") {
        skarn_test_support::skip!(
            "npm is not usable by this user: the Node ecosystem cannot be checked here"
        );
    }
    let t = TempDir::new("node");
    let ws = t.dir("ws");
    std::fs::write(
        ws.join("package.json"),
        "{\"name\":\"demo\",\"version\":\"1.0.0\",\"scripts\":{\"test\":\"node --test\"}}\n",
    )
    .unwrap();
    std::fs::create_dir_all(ws.join("test")).unwrap();
    std::fs::write(ws.join("test/add.test.js"), "const test = require('node:test');\nconst assert = require('node:assert');\ntest('adds', () => assert.strictEqual(1 + 1, 2));\n").unwrap();
    let o = eco(&ws, &["npm", "test"]);
    assert_eq!(code(&o), 0, "{}\n{}", out(&o), err(&o));
    assert!(out(&o).contains("pass 1"), "{}", out(&o));
}

#[test]
fn pytest_in_a_python_project() {
    if !host_has("pytest", "--version") {
        skarn_test_support::skip!(
            "pytest is not usable by this user: the Python ecosystem cannot be checked here"
        );
    }
    let t = TempDir::new("python");
    let ws = t.dir("ws");
    std::fs::write(
        ws.join("pyproject.toml"),
        "[project]\nname = \"demo\"\nversion = \"0.1\"\n",
    )
    .unwrap();
    std::fs::write(
        ws.join("test_add.py"),
        "def test_add():\n    assert 1 + 1 == 2\n",
    )
    .unwrap();
    let o = eco(&ws, &["pytest", "-q", "-p", "no:cacheprovider"]);
    assert_eq!(code(&o), 0, "{}\n{}", out(&o), err(&o));
    assert!(out(&o).contains("1 passed"), "{}", out(&o));
}

#[test]
fn a_host_program_outside_the_grants_is_named_with_its_grant() {
    let t = TempDir::new("notfound");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    // A tool in a PATH directory the run does not see (/tmp is private).
    let bin = t.dir("hostbin");
    let tool = bin.join("skarn-test-tool");
    std::fs::write(&tool, "#!/bin/sh\necho hi\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = run_command(&ws, &home, &[], &["skarn-test-tool"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert_eq!(code(&o), 127, "{}", err(&o));
    let want = format!("is {} on the host", tool.display());
    assert!(err(&o).contains(&want), "{}", err(&o));
    assert!(
        err(&o).contains(&format!("--exec {}", bin.display())),
        "{}",
        err(&o)
    );
    // Granted, it runs.
    let o = run_command(
        &ws,
        &home,
        &["--exec", bin.to_str().unwrap()],
        &["skarn-test-tool"],
    )
    .env("PATH", &path)
    .output()
    .unwrap();
    assert_eq!((code(&o), out(&o).as_str()), (0, "hi\n"), "{}", err(&o));
    // A 127 of the command's own (a visible program) keeps the usual line.
    let o = sh(&ws, &home, &[], "exit 127");
    assert_eq!(code(&o), 127);
    assert!(!err(&o).contains("on the host"), "{}", err(&o));
}
