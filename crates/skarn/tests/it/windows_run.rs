//! `skarn run` on Windows (AppContainer): escape attempts checked from
//! outside (a file not written, a listener that saw no connection, a
//! persistence file unchanged, a late marker never written, ACLs identical
//! before and after) and everyday commands that must keep working.
//! Compiled and run on Windows only.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};

// Under %TEMP%, in the user profile: the container has no access to these
// directories unless granted.
use skarn_test_support::TempDir;

fn skarn(ws: &Path, flags: &[&str], cmd: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skarn"))
        .args(["run", "--no-config", "--preset", "none", "--workspace"])
        .arg(ws)
        .args(flags)
        .arg("--")
        .args(cmd)
        .current_dir(ws)
        .output()
        .unwrap()
}

/// `cmd /c LINE`. cmd.exe does not understand `\"` escapes, so LINE holds
/// no quotes (the temporary paths used have no spaces).
fn cmd_c(ws: &Path, flags: &[&str], line: &str) -> Output {
    assert!(!line.contains('"'), "{line}");
    skarn(ws, flags, &["cmd", "/c", line])
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The DACL of `p` as `icacls` prints it (the outside view of its ACL).
fn acl(p: &Path) -> String {
    let o = Command::new("icacls").arg(p).output().unwrap();
    assert!(o.status.success(), "icacls {}", p.display());
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn has_git() -> bool {
    Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn everyday_commands_work_and_exit_status_passes_through() {
    let t = TempDir::new("usable");
    let ws = t.dir("ws");
    std::fs::write(ws.join("hello.txt"), "hi").unwrap();
    let o = cmd_c(&ws, &[], "dir");
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(out(&o).contains("hello.txt"), "{}", out(&o));
    let o = cmd_c(&ws, &[], "echo made> made.txt");
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(ws.join("made.txt").exists(), "the workspace is writable");
    let o = cmd_c(&ws, &[], "exit 7");
    assert_eq!(code(&o), 7);
    let o = skarn(&ws, &[], &["skarn-no-such-program-here"]);
    assert_eq!(code(&o), 127, "{}", err(&o));
    if has_git() {
        let g = Command::new("git")
            .arg("init")
            .arg("-q")
            .arg(&ws)
            .output()
            .unwrap();
        assert!(g.status.success());
        let o = skarn(&ws, &[], &["git", "status"]);
        assert_eq!(code(&o), 0, "{}", err(&o));
        assert!(out(&o).contains("hello.txt"), "{}", out(&o));
    }
}

#[test]
fn a_write_outside_the_workspace_does_not_happen() {
    let t = TempDir::new("outside");
    let ws = t.dir("ws");
    let outside = t.dir("outside");
    let target = outside.join("pwned.txt");
    let o = cmd_c(&ws, &[], &format!("echo x> {}", target.display()));
    assert_ne!(code(&o), 0);
    assert!(!target.exists(), "written outside the workspace");
    // Nor by moving the workspace itself into the container's own
    // (writable) folder.
    let o = cmd_c(
        &ws,
        &[],
        &format!("cd \\ & move {} %TEMP%\\gone", ws.display()),
    );
    assert_ne!(code(&o), 0);
    assert!(ws.is_dir());
    // A --write grant is writable; a --read grant is not.
    let w = t.dir("granted");
    let r = t.dir("readonly");
    let flags = [
        "--write",
        w.to_str().unwrap(),
        "--read",
        r.to_str().unwrap(),
    ];
    let line = format!(
        "echo a> {} & echo b> {}",
        w.join("a.txt").display(),
        r.join("b.txt").display()
    );
    cmd_c(&ws, &flags, &line);
    assert!(w.join("a.txt").exists());
    assert!(!r.join("b.txt").exists());
}

#[test]
fn no_connection_reaches_a_local_listener() {
    let t = TempDir::new("net");
    let ws = t.dir("ws");
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    l.set_nonblocking(true).unwrap();
    for net in ["deny", "loopback", "outbound"] {
        let o = skarn(
            &ws,
            &["--net", net],
            &[
                "curl.exe",
                "-s",
                "--max-time",
                "5",
                &format!("http://127.0.0.1:{port}/"),
            ],
        );
        assert_ne!(code(&o), 0, "--net {net}");
        match l.accept() {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            other => panic!("--net {net}: the listener saw a connection: {other:?}"),
        }
    }
}

#[test]
fn persistence_paths_are_not_modified_nor_created() {
    let t = TempDir::new("persist");
    let ws = t.dir("ws");
    let hooks = ws.join(".git").join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::write(ws.join(".git").join("config"), "[core]\n").unwrap();
    std::fs::write(ws.join(".envrc"), "use nix\n").unwrap();
    let line = "echo evil> .git\\hooks\\pre-commit & echo [alias]>> .git\\config & \
                echo evil>> .envrc & mkdir .vscode & echo {}> .mcp.json & ren .git g2 & \
                echo ..\\evil> .git\\commondir & echo ok> fine.txt";
    cmd_c(&ws, &[], line);
    assert!(ws.join("fine.txt").exists(), "ordinary writes still work");
    assert!(!hooks.join("pre-commit").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join(".git").join("config")).unwrap(),
        "[core]\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join(".envrc")).unwrap(),
        "use nix\n"
    );
    assert!(
        !ws.join(".vscode").exists(),
        "placeholder removed, nothing created"
    );
    assert!(!ws.join(".mcp.json").exists());
    assert!(ws.join(".git").is_dir() && !ws.join("g2").exists());
    assert!(
        !ws.join(".git").join("commondir").exists(),
        "a commondir created inside outlives the run"
    );
}

#[test]
fn a_denied_file_under_a_read_grant_is_unreadable() {
    let t = TempDir::new("secret");
    let ws = t.dir("ws");
    let data = t.dir("data");
    std::fs::write(data.join("public.txt"), "PUBLIC-CONTENT").unwrap();
    std::fs::write(data.join("secret.txt"), "SECRET-CONTENT").unwrap();
    let secret = data.join("secret.txt");
    let o = cmd_c(
        &ws,
        &[
            "--read",
            data.to_str().unwrap(),
            "--deny-read",
            secret.to_str().unwrap(),
        ],
        &format!(
            "type {} & type {}",
            data.join("public.txt").display(),
            secret.display()
        ),
    );
    assert!(out(&o).contains("PUBLIC-CONTENT"), "{}", err(&o));
    assert!(!out(&o).contains("SECRET-CONTENT"));
    assert!(!err(&o).contains("SECRET-CONTENT"));
}

#[test]
fn the_timeout_kills_the_whole_tree() {
    let t = TempDir::new("timeout");
    let ws = t.dir("ws");
    // The marker would be written after ~4 s; the run is killed after 1 s.
    let o = cmd_c(
        &ws,
        &["--timeout", "1s"],
        "ping -n 5 127.0.0.1 >nul & echo late> late.txt",
    );
    assert_eq!(code(&o), 124, "{}", err(&o));
    // Wait past the marker's time: a surviving process would have written it.
    std::thread::sleep(std::time::Duration::from_secs(6));
    assert!(
        !ws.join("late.txt").exists(),
        "a process survived the timeout"
    );
}

#[test]
fn acls_are_restored_after_the_run() {
    let t = TempDir::new("restore");
    let ws = t.dir("ws");
    std::fs::create_dir_all(ws.join(".git").join("hooks")).unwrap();
    std::fs::write(ws.join(".git").join("config"), "[core]\n").unwrap();
    let data = t.dir("data");
    let watched = [
        ws.clone(),
        ws.join(".git"),
        ws.join(".git").join("hooks"),
        ws.join(".git").join("config"),
        data.clone(),
    ];
    let before: Vec<String> = watched.iter().map(|p| acl(p)).collect();
    let o = cmd_c(&ws, &["--read", data.to_str().unwrap()], "echo x> f.txt");
    assert_eq!(code(&o), 0, "{}", err(&o));
    let after: Vec<String> = watched.iter().map(|p| acl(p)).collect();
    assert_eq!(before, after);
    // A file created during the run keeps no ACE for the container either.
    let f = acl(&ws.join("f.txt"));
    assert!(!f.contains("S-1-15-2-") && !f.contains("skarn."), "{f}");
}

#[test]
fn secret_looking_environment_variables_are_removed() {
    let t = TempDir::new("env");
    let ws = t.dir("ws");
    let o = Command::new(env!("CARGO_BIN_EXE_skarn"))
        .args(["run", "--no-config", "--preset", "none", "--workspace"])
        .arg(&ws)
        .args(["--", "cmd", "/c", "set"])
        .env("GITHUB_TOKEN", "ghp_abcdefghijklmnopqrstuvwxyz0123456789")
        .env("SKARN_TEST_PLAIN", "visible")
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(out(&o).contains("SKARN_TEST_PLAIN=visible"));
    assert!(!out(&o).contains("ghp_"));
}

#[test]
fn a_junction_in_the_workspace_does_not_extend_the_grant() {
    let t = TempDir::new("junction");
    let ws = t.dir("ws");
    let outside = t.dir("outside");
    // Planted on the host (as a previous run could have): ws\j -> outside.
    let j = ws.join("j");
    let mk = Command::new("cmd")
        .arg("/c")
        .arg(format!("mklink /J {} {}", j.display(), outside.display()))
        .output()
        .unwrap();
    assert!(
        mk.status.success(),
        "{}",
        String::from_utf8_lossy(&mk.stderr)
    );
    let before = acl(&outside);
    cmd_c(&ws, &[], "echo x> j\\pwned.txt");
    assert!(
        !outside.join("pwned.txt").exists(),
        "wrote through the junction"
    );
    assert_eq!(
        acl(&outside),
        before,
        "the grant reached the junction's target"
    );
    // The junction itself goes before the temporary tree does.
    let _ = std::fs::remove_dir(&j);
}

#[test]
fn acls_left_by_a_killed_run_are_repaired_by_the_next_run() {
    let t = TempDir::new("killed");
    let ws = t.dir("ws");
    let before = acl(&ws);
    let real = std::fs::canonicalize(&ws).unwrap();
    let profile = skarn_sandbox::windows::profile_name::for_workspace(&real.to_string_lossy());
    let local = std::env::var("LOCALAPPDATA").unwrap();
    let journal = skarn_sandbox::windows::journal::journal_path(
        &skarn_sandbox::windows::journal::dir(&local),
        &profile.name,
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_skarn"))
        .args(["run", "--no-config", "--preset", "none", "--workspace"])
        .arg(&ws)
        .args(["--", "cmd", "/c", "ping -n 60 127.0.0.1 >nul"])
        .spawn()
        .unwrap();
    // The journal is written before the first ACL change; once the
    // workspace's ACL shows the change, the run is under way.
    let mut started = false;
    for _ in 0..600 {
        if journal.exists() && acl(&ws) != before {
            started = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(started, "the run never started");
    // Killed without a chance to revert (TerminateProcess).
    child.kill().unwrap();
    let _ = child.wait();
    assert_ne!(acl(&ws), before, "nothing left to repair");
    assert!(journal.exists());
    // The next run in the workspace repairs first, then reverts its own.
    let o = cmd_c(&ws, &[], "exit 0");
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(acl(&ws), before);
    assert!(!journal.exists());
}

#[test]
fn doctor_reports_the_appcontainer_backend() {
    let t = TempDir::new("doctor");
    let o = Command::new(env!("CARGO_BIN_EXE_skarn"))
        .current_dir(t.path())
        .args(["doctor", "--json"])
        .env_remove("SKARN_CONFIG")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["backend"], "appcontainer");
    assert!(
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["ok"] == true),
        "{v}"
    );
    assert_eq!(v["report"]["backend"], "appcontainer");
    assert_eq!(v["code_mode"]["auto_picks"], "in_process");
    let o = Command::new(env!("CARGO_BIN_EXE_skarn"))
        .current_dir(t.path())
        .args(["doctor", "--self-test"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}
