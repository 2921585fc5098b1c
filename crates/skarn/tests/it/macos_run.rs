//! `skarn run` on macOS (Seatbelt): real escape attempts, each checked from
//! outside the sandbox, and everyday commands that must keep working.
//! Runs on macOS runners only; type-checked for aarch64-apple-darwin.

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::*;
use skarn_test_support::TempDir;

const SECRET: &str = "skarn-macos-test-SECRET-51c2";

fn sh(ws: &Path, home: &Path, flags: &[&str], script: &str) -> std::process::Output {
    run_in(ws, home, flags, &["/bin/sh", "-c", script])
}

/// A workspace and a home holding a secret key, side by side.
fn setup(tag: &str) -> (TempDir, std::path::PathBuf, std::path::PathBuf) {
    let t = TempDir::new(tag);
    let ws = t.dir("ws");
    let home = t.dir("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), SECRET).unwrap();
    (t, ws, home)
}

#[test]
fn writes_land_only_in_the_workspace() {
    let (t, ws, home) = setup("write");
    let outside = t.dir("outside");
    let script = format!(
        "echo in > ok.txt; echo x > '{o}/escape.txt'; echo y > \"$HOME/.zshrc\"; \
         mkdir \"$HOME/Library\" 2>/dev/null; echo z > /tmp/skarn-macos-escape-$$; \
         echo t > \"$TMPDIR/scratch\" && echo tmp-ok; true",
        o = outside.display()
    );
    let o = sh(&ws, &home, &[], &script);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(
        ws.join("ok.txt").exists(),
        "workspace not writable: {}",
        err(&o)
    );
    assert!(out(&o).contains("tmp-ok"), "per-run TMPDIR not writable");
    assert!(!outside.join("escape.txt").exists(), "wrote outside");
    assert!(!home.join(".zshrc").exists(), "wrote the home");
    assert!(
        !home.join("Library").exists(),
        "made a directory in the home"
    );
}

#[test]
fn secrets_are_not_readable_under_any_name() {
    let (_t, ws, home) = setup("secret");
    let key = home.join(".ssh/id_ed25519");
    let real = std::fs::canonicalize(&key).unwrap();
    let upper = home.join(".SSH/ID_ED25519");
    let script = format!(
        "cat '{k}'; cat '{r}'; cat '{u}'; cat '/System/Volumes/Data{r}'; \
         ln '{k}' hard 2>/dev/null; cat hard; cp -c '{k}' clone 2>/dev/null; cat clone; \
         mv \"$HOME/.ssh\" moved 2>/dev/null; cat moved/id_ed25519; true",
        k = key.display(),
        r = real.display(),
        u = upper.display()
    );
    let o = sh(&ws, &home, &[], &script);
    assert!(!out(&o).contains(SECRET), "secret read: {}", out(&o));
    assert!(key.exists(), "the secret was moved away");
    assert!(!ws.join("moved").exists());
}

#[test]
fn no_connection_to_a_host_listener_unless_loopback_is_allowed() {
    let (_t, ws, home) = setup("net");
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.set_nonblocking(true).unwrap();
    let port = l.local_addr().unwrap().port();
    // bash's /dev/tcp: a plain connect(2) to the listener.
    let script = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected; true");
    for net in ["deny", "allow:example.com"] {
        let o = run_in(&ws, &home, &["--net", net], &["/bin/bash", "-c", &script]);
        assert!(!out(&o).contains("connected"), "{}", out(&o));
        assert!(
            l.accept().is_err(),
            "the listener got a connection (--net {net})"
        );
    }
    // Usability: --net loopback reaches localhost (shared with the host).
    let o = run_in(
        &ws,
        &home,
        &["--net", "loopback"],
        &["/bin/bash", "-c", &script],
    );
    assert!(out(&o).contains("connected"), "{}", err(&o));
}

#[test]
fn persistence_paths_are_neither_written_nor_moved() {
    let (_t, ws, home) = setup("persist");
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed on this host");
    }
    let st = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&ws)
        .status()
        .unwrap();
    assert!(st.success());
    let config = std::fs::read_to_string(ws.join(".git/config")).unwrap();
    let script = "echo evil > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; \
                  echo '[core] fsmonitor = evil' >> .git/config; echo x > .envrc; \
                  echo x > .ENVRC; mkdir -p .vscode; echo '{}' > .vscode/tasks.json; \
                  mv .git .git-moved; mv .git/hooks h; true";
    let o = sh(&ws, &home, &[], script);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!ws.join(".git/hooks/pre-commit").exists(), "hook planted");
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        config
    );
    assert!(!ws.join(".git-moved").exists() && ws.join(".git/hooks").is_dir());
    let entries: Vec<String> = std::fs::read_dir(&ws)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_lowercase())
        .collect();
    assert!(!entries.contains(&".envrc".to_string()), "{entries:?}");
    assert!(!entries.contains(&".vscode".to_string()), "{entries:?}");
}

#[test]
fn host_processes_cannot_be_signalled() {
    let (_t, ws, home) = setup("signal");
    let mut victim = Command::new("sleep")
        .arg("60")
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let o = sh(&ws, &home, &[], &format!("kill -9 {}; true", victim.id()));
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(
        victim.try_wait().unwrap().is_none(),
        "the host process was killed"
    );
    let _ = victim.kill();
    let _ = victim.wait();
}

#[test]
fn launchd_does_not_run_a_job_for_the_sandbox() {
    let (t, ws, home) = setup("launchd");
    let outside = t.dir("outside");
    let marker = outside.join("launchd-ran");
    let label = format!("skarn.test.escape.{}", std::process::id());
    let script = format!(
        "launchctl submit -l {label} -- /usr/bin/touch '{m}'; true",
        m = marker.display()
    );
    let o = sh(&ws, &home, &[], &script);
    assert_eq!(code(&o), 0, "{}", err(&o));
    // Give launchd the chance to start the job it may have accepted, then
    // decide from outside (and clean up from outside).
    let mut ran = false;
    for _ in 0..30 {
        if marker.exists() {
            ran = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = Command::new("launchctl")
        .args(["remove", &label])
        .stderr(Stdio::null())
        .status();
    assert!(!ran, "launchd ran a job submitted from inside the sandbox");
}

#[test]
fn timeout_kills_the_process_group_with_124() {
    let (_t, ws, home) = setup("timeout");
    let o = sh(
        &ws,
        &home,
        &["--timeout", "1s"],
        "sleep 100 & echo $! > bg.pid; sleep 100",
    );
    assert_eq!(code(&o), 124, "{}", err(&o));
    let pid: i32 = std::fs::read_to_string(ws.join("bg.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: signal 0 only checks whether the pid exists.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    assert!(!alive, "a background job survived the timeout");
}

#[test]
fn everyday_commands_work() {
    let (_t, ws, home) = setup("usable");
    std::fs::write(ws.join("a.txt"), "hello\n").unwrap();
    let o = run_in(&ws, &home, &[], &["ls", "-la"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(out(&o).contains("a.txt"));
    if host_has("git", "--version") {
        let o = sh(
            &ws,
            &home,
            &[],
            "git init -q . 2>/dev/null; git status --short; git add a.txt && \
             git -c user.name=t -c user.email=t@e commit -qm m && git log --oneline | wc -l",
        );
        assert!(
            out(&o).contains('1') || out(&o).contains("a.txt"),
            "{}",
            err(&o)
        );
    }
    if host_has("cc", "--version") {
        std::fs::write(
            ws.join("hello.c"),
            "#include <stdio.h>\nint main(void){puts(\"hi from cc\");return 0;}\n",
        )
        .unwrap();
        let o = sh(&ws, &home, &[], "cc -o hello hello.c && ./hello");
        assert_eq!(code(&o), 0, "{}", err(&o));
        assert!(out(&o).contains("hi from cc"));
    }
    let o = run_in(&ws, &home, &[], &["no-such-command-skarn"]);
    assert_eq!(code(&o), 127, "{}", err(&o));
}

#[test]
fn report_says_what_seatbelt_enforces() {
    let (_t, ws, home) = setup("report");
    let o = run_in(&ws, &home, &["--report"], &["true"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let e = err(&o);
    assert!(e.contains("backend=seatbelt"), "{e}");
    assert!(e.contains("reads: coarse"), "{e}");
    let o = run_in(&ws, &home, &["--json"], &["true"]);
    let line = err(&o);
    let v: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(v["backend"], "seatbelt");
    // run_in passes --no-config: the network policy is the default.
    assert_eq!(v["provenance"]["net"]["origin"], "default");
    assert_eq!(v["layers"][0]["layer"], "seatbelt");
    assert_eq!(v["layers"][0]["status"], "PartiallyEnforced");
}

#[test]
fn environment_secrets_are_removed() {
    let (_t, ws, home) = setup("env");
    let o = Command::new(exe())
        .args(["run", "--no-config", "--workspace"])
        .arg(&ws)
        .args(["--", "/usr/bin/env"])
        .env("HOME", &home)
        .env("GITHUB_TOKEN", "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!out(&o).contains("ghp_"), "token passed through");
    assert!(out(&o).contains("TMPDIR="));
}

#[test]
fn doctor_reports_seatbelt_and_the_confined_worker() {
    let mut o = Command::new(exe())
        .arg("doctor")
        .stdout(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let mut s = String::new();
    o.stdout.take().unwrap().read_to_string(&mut s).unwrap();
    assert!(o.wait().unwrap().success());
    assert!(s.contains("backend: seatbelt"), "{s}");
    assert!(s.contains("reads: coarse"), "{s}");
    assert!(
        s.contains("seatbelt: deny default"),
        "worker not confined: {s}"
    );
}
