//! Attack atk27m, what helper h27o fixed, each checked from outside: a
//! `command` source's `~//abs` word runs what the checks judged (F1); a
//! `skarn exec --config` gateway leaves no core (F2); a gateway server
//! installed under the home never gets the home, or the directory its
//! `~/bin` link leads to, as "its installation" (F3, F3b, F3c).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;
use skarn_test_support::TempDir;

use crate::common::{err, exe, out, run_command, run_in, sibling};
use crate::serve_sandbox::Session;
use crate::support_secret_sources::write_config as config;

fn git_init(ws: &Path) {
    let _ = Command::new("git")
        .args(["init", "-q", "."])
        .current_dir(ws)
        .output();
}

/// F1: the user's helper named `"~/" + an absolute path` (a doubled
/// slash), as a program's argument and inside a shell string. The shell's
/// `~//ws/bin/tok` is `<home>//ws/bin/tok`; skarn judged that name but ran
/// `/ws/bin/tok`, a file a sandboxed run in the workspace could rewrite:
/// the host then ran the planted code at the next `--secret` run. Now the
/// source runs the name the checks judged: the planted code never runs
/// on the host.
#[test]
fn a_tilde_slash_absolute_word_runs_what_the_checks_judged() {
    for (form, cmd) in [
        ("argument", "[\"/bin/sh\", \"~/{tok}\"]"),
        ("shell string", "[\"/bin/sh\", \"-c\", \"~/{tok}\"]"),
    ] {
        let t = TempDir::new("h27o_f1");
        let home = t.dir("home");
        let ws = t.dir("ws");
        let other = t.dir("other");
        git_init(&ws);
        let vals = t.dir("vals");
        std::fs::write(vals.join("val"), "tildeSlashValue0123456789abcdefXY\n").unwrap();
        std::fs::create_dir_all(ws.join("bin")).unwrap();
        let tok = ws.join("bin/tok");
        std::fs::write(
            &tok,
            format!("#!/bin/sh\ncat {}\n", vals.join("val").display()),
        )
        .unwrap();
        std::fs::set_permissions(&tok, std::fs::Permissions::from_mode(0o755)).unwrap();
        let cmd = cmd.replace("{tok}", &tok.display().to_string());
        config(
            &home,
            &format!("[secrets.tlarg]\ncommand = {cmd}\nhosts = [\"example.test\"]\n"),
        );
        let marker = t.path().join("PLANTED_RAN");
        // A sandboxed run in the workspace appends to the helper (it may
        // be allowed to: the source never runs that file).
        let plant = run_in(
            &ws,
            &home,
            &["--workspace-layer", "direct"],
            &[
                "sh",
                "-c",
                &format!("echo 'echo planted > {}' >> bin/tok", marker.display()),
            ],
        );
        let granted = run_command(&other, &home, &["--secret", "tlarg"], &["true"])
            .output()
            .unwrap();
        assert!(
            !marker.exists(),
            "{form}: the host ran code a sandboxed run wrote:\nplant: {}{}\ngranted: {}{}",
            out(&plant),
            err(&plant),
            out(&granted),
            err(&granted)
        );
    }
}

/// The hard limit on core size of this process (`None`: unknown).
fn core_hard_limit() -> Option<String> {
    let o = Command::new("sh")
        .args(["-c", "ulimit -Hc"])
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// The "Max core file size" soft limit of `pid`.
fn core_limit_of(pid: u32) -> Option<String> {
    let t = std::fs::read_to_string(format!("/proc/{pid}/limits")).ok()?;
    let l = t.lines().find(|l| l.starts_with("Max core file size"))?;
    l.split_whitespace().nth(4).map(str::to_owned)
}

/// F2: `skarn exec --config` starts a gateway whose server is granted a
/// `from_env` secret: the process holds the value, so it must leave no
/// core (a core lands in the working directory, which later runs read).
/// Started with a core limit the caller raised, its limit is 0 from
/// outside (the kernel writes no core for it); the same for a `skarn
/// exec` with no gateway, as every subcommand is covered in `main`.
#[test]
fn skarn_exec_with_secrets_configured_leaves_no_core() {
    let hard = core_hard_limit().unwrap_or_default();
    if hard == "0" || hard.is_empty() {
        skarn_test_support::skip!("core dumps are off for this test (ulimit -Hc is {hard:?})");
    }
    let t = TempDir::new("h27o_f2");
    let home = t.dir("home");
    let wd = t.dir("wd");
    config(
        &home,
        "[secrets.npm]\nfrom_env = \"NPM_TOKEN\"\nhosts = [\"localhost:18443\"]\n",
    );
    let gw = t.path().join("gw.toml");
    std::fs::write(
        &gw,
        format!(
            "[servers.s]\ncommand = {:?}\nenv = {{ T = {{ secret = \"npm\" }} }}\n",
            sibling("skarn-example-server").display().to_string()
        ),
    )
    .unwrap();
    crate::common::trust(&gw, &home);
    for with_config in [true, false] {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg("ulimit -c unlimited 2>/dev/null || ulimit -c \"$(ulimit -Hc)\"; exec \"$@\"")
            .arg("sh")
            .arg(exe())
            .arg("exec");
        if with_config {
            c.arg("--config").arg(&gw);
        }
        let mut child = c
            .args([
                "--timeout",
                "60s",
                "--code",
                "const e = Date.now() + 20000; while (Date.now() < e) {} return 1",
            ])
            .current_dir(&wd)
            .env("HOME", &home)
            .env_remove("XDG_STATE_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .env("NPM_TOKEN", "npmREALcoreValue0123456789abcdef")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        let mut seen = None;
        for _ in 0..50 {
            std::thread::sleep(Duration::from_millis(200));
            // Past the shell's exec: the process is skarn (its command
            // line: `/proc/PID/exe` of an undumpable process is closed to
            // a caller without privileges).
            let is_skarn = std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.split(|b| *b == 0).nth(1) == Some(b"exec".as_slice()));
            if is_skarn {
                std::thread::sleep(Duration::from_millis(1500));
                seen = core_limit_of(pid);
                break;
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(
            seen.as_deref(),
            Some("0"),
            "config {with_config}: skarn exec may dump core (limit {seen:?})"
        );
    }
}

/// A copy of the test server at `p` (its directory made).
fn install_server(p: &Path) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::copy(sibling("skarn-hostile-server"), p).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Start a gateway with one sandboxed server `g` (`command`, more `table`
/// lines), run `sh` in it through its `attack` tool: what it printed and
/// the gateway's log.
fn attack(dir: &Path, home: &Path, command: &Path, table: &str, sh: &str) -> (String, String) {
    let cfg = dir.join("gw.toml");
    std::fs::write(
        &cfg,
        format!(
            "[gateway]\npassthrough = true\n\n[servers.g]\ncommand = {:?}\n\
             args = [\"--name\", \"g\"]\n{table}\n[servers.g.sandbox]\nenabled = true\n",
            command.display().to_string()
        ),
    )
    .unwrap();
    let log = dir.join("serve.log");
    let mut s = Session::start_logging(&cfg, home, &log, &[], "info");
    s.settle();
    let out = s.call(2, "g__attack", json!({ "sh": sh }));
    s.finish();
    (out, std::fs::read_to_string(&log).unwrap_or_default())
}

const NOTES: &str = "private notes of the user 4711";

/// A home with notes no grant names.
fn home_with_notes(home: &Path) -> PathBuf {
    let notes = home.join("notes/a.txt");
    std::fs::create_dir_all(notes.parent().unwrap()).unwrap();
    std::fs::write(&notes, format!("{NOTES}\n")).unwrap();
    notes
}

/// F3: a server installed as `~/bin/srv`, the home reached through a link
/// (`/home -> /data/home` set-ups) or the server's `env.HOME` set
/// elsewhere: the whole home was granted as its installation and the
/// server read the user's notes. Neither grants the home now.
#[test]
fn a_server_in_the_homes_bin_does_not_get_the_home() {
    for form in ["linked home", "server env.HOME"] {
        let t = TempDir::new("h27o_f3");
        let real = t.dir("hreal");
        let notes = home_with_notes(&real);
        install_server(&real.join("bin/srv"));
        let (home, command, table) = match form {
            "linked home" => {
                let l = t.path().join("hl");
                std::os::unix::fs::symlink(&real, &l).unwrap();
                (l.clone(), l.join("bin/srv"), String::new())
            }
            _ => {
                let fake = t.dir("fake");
                (
                    real.clone(),
                    real.join("bin/srv"),
                    format!("env = {{ HOME = {:?} }}\n", fake.display().to_string()),
                )
            }
        };
        let (out, log) = attack(
            t.path(),
            &home,
            &command,
            &table,
            &format!("cat {} 2>&1; echo done", notes.display()),
        );
        assert!(
            !out.contains(NOTES),
            "{form}: the server read the home:\n{out}\n{log}"
        );
        assert!(
            out.contains("done"),
            "{form}: the server did not run:\n{out}\n{log}"
        );
    }
}

/// F3b: the same server granted a secret, with `env.HOME` set elsewhere:
/// the home was its "installation" and counted as a toolchain, so the
/// value check did not look at `~/notes/tokens.txt`, and the server read
/// the real value there. The server now reads neither.
#[test]
fn a_server_granted_a_secret_does_not_read_it_from_the_home() {
    const REAL: &str = "npmREALhomeValue0123456789abcdefQ";
    let t = TempDir::new("h27o_f3b");
    let home = t.dir("home");
    let fake = t.dir("fake");
    let tokens = home.join("notes/tokens.txt");
    std::fs::create_dir_all(tokens.parent().unwrap()).unwrap();
    std::fs::write(&tokens, format!("npm token: {REAL}\n")).unwrap();
    let vals = t.dir("vals");
    std::fs::write(vals.join("tok"), format!("{REAL}\n")).unwrap();
    config(
        &home,
        &format!(
            "[secrets.npm]\nfile = {:?}\nhosts = [\"localhost:18443\"]\n",
            vals.join("tok").display().to_string()
        ),
    );
    install_server(&home.join("bin/srv"));
    let (out, log) = attack(
        t.path(),
        &home,
        &home.join("bin/srv"),
        &format!(
            "env = {{ T = {{ secret = \"npm\" }}, HOME = {:?} }}\n",
            fake.display().to_string()
        ),
        &format!("echo T=$T; cat {} 2>&1; echo done", tokens.display()),
    );
    assert!(!out.contains(REAL), "the server read the value:\n{out}");
    assert!(!log.contains(REAL), "the value is in the log");
    assert!(
        out.contains("done"),
        "the server did not run:\n{out}\n{log}"
    );
}

/// F3c: `~/bin -> ~/dotfiles/bin` (no linked home) and a server at
/// `~/bin/srv`: the whole dotfiles repository (its canonical `PREFIX`) was
/// granted as the server's installation, and a token kept in
/// `dotfiles/zsh/secrets.zsh` read. Not granted now.
#[test]
fn a_server_through_a_dotfiles_link_does_not_get_the_repository() {
    const TOKEN: &str = "ghp_REALdotfilesToken0123456789abcdefgh";
    let t = TempDir::new("h27o_f3c");
    let home = t.dir("home");
    let dots = home.join("dotfiles");
    std::fs::create_dir_all(dots.join("zsh")).unwrap();
    std::fs::create_dir_all(dots.join("share/doc")).unwrap();
    let secrets = dots.join("zsh/secrets.zsh");
    std::fs::write(&secrets, format!("export GITHUB_TOKEN={TOKEN}\n")).unwrap();
    git_init(&dots);
    install_server(&dots.join("bin/srv"));
    std::os::unix::fs::symlink("dotfiles/bin", home.join("bin")).unwrap();
    let (out, log) = attack(
        t.path(),
        &home,
        &home.join("bin/srv"),
        "",
        &format!("cat {} 2>&1; echo done", secrets.display()),
    );
    assert!(
        !out.contains(TOKEN),
        "the server read the dotfiles:\n{out}\n{log}"
    );
    assert!(
        out.contains("done"),
        "the server did not run:\n{out}\n{log}"
    );
}
