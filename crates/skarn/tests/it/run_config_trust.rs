//! `skarn run` does not trust a `skarn.toml` that an earlier sandboxed run
//! could have written: every run records its workspace and write grants
//! (in the state directory, which no sandboxed command can write), and a
//! workspace configuration inside a recorded directory (below a recorded
//! workspace's root, or anywhere in a write grant) is not used. Checked
//! from outside: the file the planted configuration would have allowed is
//! not written, the variable it would have kept is removed.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::common::*;
use skarn_test_support::TempDir;

/// `skarn run` with configuration files, from `cwd`, with `HOME=home`.
fn run_from(cwd: &Path, home: &Path, script: &str) -> Output {
    run_from_with(cwd, home, &[], script)
}

/// A planting run: pinned to `--workspace-layer direct`, the mode in which
/// a plant reaches the host at all (set aside after the run, put back
/// below as a user would); the default layer never applies it (ADR 0226).
fn plant_from(cwd: &Path, home: &Path, script: &str) -> Output {
    run_from_with(cwd, home, &["--workspace-layer", "direct"], script)
}

fn run_from_with(cwd: &Path, home: &Path, flags: &[&str], script: &str) -> Output {
    Command::new(exe())
        .arg("run")
        .args(flags)
        .args(["--", "sh", "-c", script])
        .current_dir(cwd)
        .env("HOME", home)
        .env_remove("XDG_STATE_HOME")
        .env("MY_SECRET_TOKEN", "s3cr3t-value")
        .stdin(Stdio::null())
        .output()
        .expect("spawn skarn")
}

fn git_repo(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["init", "-q"])
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

/// `dir/skarn.toml` made during a run is set aside after it (settings read
/// in any directory); put it back as a user who renames it back without
/// reviewing it would, so that the trust rule, the second layer, is tried.
fn put_back_set_aside(dir: &Path, stderr: &str) {
    let f = dir.join("skarn.toml");
    if f.exists() {
        return;
    }
    assert!(stderr.contains("set aside"), "{stderr}");
    let aside = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name().is_some_and(|n| {
                n.to_string_lossy()
                    .starts_with("skarn.toml.skarn-quarantine-")
            })
        })
        .expect("set-aside skarn.toml");
    std::fs::rename(aside, &f).unwrap();
}

#[test]
fn a_skarn_toml_planted_below_the_workspace_is_not_trusted_later() {
    let t = TempDir::new("cfgtrust");
    let (ws, home, outside) = (t.join("ws"), t.dir("home"), t.dir("out"));
    git_repo(&ws);
    // Run 1: the command makes `sub` a repository of its own (a workspace
    // for later runs from there) with settings widening the sandbox.
    let plant = format!(
        "mkdir -p sub && cd sub && git init -q . && \
         printf '[run]\\nwrite = [\"{}\"]\\nallow_env = [\"MY_SECRET_TOKEN\"]\\n' > skarn.toml",
        outside.display()
    );
    let o = plant_from(&ws, &home, &plant);
    assert_eq!(code(&o), 0, "{}", err(&o));
    put_back_set_aside(&ws.join("sub"), &err(&o));
    // Run 2, from `sub`: its skarn.toml is not used.
    let o = run_from(
        &ws.join("sub"),
        &home,
        &format!(
            "echo x > {}/marker; echo token=$MY_SECRET_TOKEN",
            outside.display()
        ),
    );
    assert!(!outside.join("marker").exists(), "{}", err(&o));
    assert!(!out(&o).contains("s3cr3t"), "{}", out(&o));
    assert!(err(&o).contains("not used"), "{}", err(&o));
    assert!(err(&o).contains("granted-dirs"), "{}", err(&o));
}

/// `skarn trust FILE` with `HOME=home`.
fn trust(file: &Path, home: &Path) -> Output {
    Command::new(exe())
        .arg("trust")
        .arg(file)
        .env("HOME", home)
        .stdin(Stdio::null())
        .output()
        .expect("spawn skarn")
}

#[test]
fn the_users_own_workspace_config_is_still_used_once_trusted() {
    let t = TempDir::new("cfgtrust2");
    let (ws, home) = (t.join("ws"), t.dir("home"));
    git_repo(&ws);
    std::fs::write(
        ws.join("skarn.toml"),
        "[run]\nallow_env = [\"MY_SECRET_TOKEN\"]\n",
    )
    .unwrap();
    let o = trust(&ws.join("skarn.toml"), &home);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(
        err(&o).contains("allow_env"),
        "shows what it widens: {}",
        err(&o)
    );
    // Used on the first run and on later ones: the workspace root's own
    // file is protected during runs.
    for _ in 0..2 {
        let o = run_from(&ws, &home, "echo token=$MY_SECRET_TOKEN");
        assert_eq!(code(&o), 0, "{}", err(&o));
        assert!(out(&o).contains("token=s3cr3t-value"), "{}", err(&o));
        assert!(!err(&o).contains("not used"), "{}", err(&o));
    }
}

/// `XDG_STATE_HOME` naming a directory inside the workspace does not move
/// the record there, where a command could empty it.
#[test]
fn the_record_stays_out_of_reach_whatever_xdg_state_home_says() {
    let t = TempDir::new("cfgtrust3");
    let (ws, home) = (t.join("ws"), t.dir("home"));
    git_repo(&ws);
    let o = Command::new(exe())
        // Direct: the plant reaches the host (see `plant_from`).
        .args(["run", "--workspace-layer", "direct", "--", "sh", "-c"])
        .arg(
            "mkdir -p .state/skarn && : > .state/skarn/granted-dirs; \
             mkdir sub && cd sub && git init -q . && \
             printf '[run]\\nallow_env = [\"MY_SECRET_TOKEN\"]\\n' > skarn.toml",
        )
        .current_dir(&ws)
        .env("HOME", &home)
        .env("XDG_STATE_HOME", ws.join(".state"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    put_back_set_aside(&ws.join("sub"), &err(&o));
    assert!(home.join(".local/state/skarn/granted-dirs").exists());
    let o = run_from(&ws.join("sub"), &home, "echo token=$MY_SECRET_TOKEN");
    assert!(!out(&o).contains("s3cr3t"), "{}", out(&o));
    assert!(err(&o).contains("not used"), "{}", err(&o));
}

/// The attack of issue 24: the agent (its Write tool, or anything outside
/// the sandbox) writes `<workspace>/skarn.toml` granting a directory
/// outside, the whole network and a secret variable. Until the user trusts
/// that exact content, none of it applies (and stderr says so); once
/// trusted it does; one changed byte makes it untrusted again.
#[test]
fn an_untrusted_workspace_skarn_toml_only_narrows() {
    let t = TempDir::new("cfgtrust4");
    let (ws, home, outside) = (t.join("ws"), t.dir("home"), t.dir("out"));
    git_repo(&ws);
    let file = ws.join("skarn.toml");
    let widening = format!(
        "[run]\nwrite = [\"{}\"]\nnet = \"all\"\nallow_env = [\"MY_SECRET_TOKEN\"]\n\
         fail_closed = false\ndeny_read = [\"private.txt\"]\n",
        outside.display()
    );
    std::fs::write(&file, &widening).unwrap();
    std::fs::write(ws.join("private.txt"), "PRIVATE-WORDS").unwrap();
    let script = format!(
        "echo x > {}/marker; echo token=$MY_SECRET_TOKEN; cat private.txt",
        outside.display()
    );
    let o = run_from(&ws, &home, &script);
    assert!(!outside.join("marker").exists(), "{}", err(&o));
    assert!(!out(&o).contains("s3cr3t"), "{}", out(&o));
    // Narrowing applies untrusted: the denied file stays unreadable.
    assert!(!out(&o).contains("PRIVATE-WORDS"), "{}", out(&o));
    for w in [
        "not trusted",
        "skarn trust",
        "write",
        "net",
        "allow_env",
        "fail_closed",
    ] {
        assert!(err(&o).contains(w), "{w}: {}", err(&o));
    }
    // Trusted: applied.
    let o = trust(&file, &home);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let o = run_from(&ws, &home, &script);
    assert!(outside.join("marker").exists(), "{}", err(&o));
    assert!(out(&o).contains("token=s3cr3t-value"), "{}", out(&o));
    assert!(!err(&o).contains("not trusted"), "{}", err(&o));
    // Changed afterwards (one byte): untrusted again.
    std::fs::remove_file(outside.join("marker")).unwrap();
    std::fs::write(&file, format!("{widening}\n")).unwrap();
    let o = run_from(&ws, &home, &script);
    assert!(!outside.join("marker").exists(), "{}", err(&o));
    assert!(err(&o).contains("not trusted"), "{}", err(&o));
}

/// A sandboxed command cannot trust a file itself: the record lives in
/// skarn's state directory, which no sandbox may write (nor read).
#[test]
fn skarn_trust_from_inside_the_sandbox_records_nothing() {
    let t = TempDir::new("cfgtrust5");
    let (ws, home, outside) = (t.join("ws"), t.dir("home"), t.dir("out"));
    git_repo(&ws);
    std::fs::create_dir_all(home.join(".local/state/skarn")).unwrap();
    std::fs::write(
        ws.join("skarn.toml"),
        format!("[run]\nwrite = [\"{}\"]\n", outside.display()),
    )
    .unwrap();
    let o = run_from(
        &ws,
        &home,
        &format!(
            "{} trust skarn.toml; printf 'x\\t{}/skarn.toml\\n' >> \"$HOME/.local/state/skarn/trusted\"",
            exe().display(),
            ws.display()
        ),
    );
    assert!(
        !home.join(".local/state/skarn/trusted").exists(),
        "{}",
        err(&o)
    );
    let o = run_from(
        &ws,
        &home,
        &format!("echo x > {}/marker", outside.display()),
    );
    assert!(!outside.join("marker").exists(), "{}", err(&o));
}

/// atk24h F13: `skarn trust` shows a server's environment values whole
/// (they were cut at 80 characters, so the user trusted what they did not
/// see), with control characters spelled out.
#[test]
fn skarn_trust_shows_server_environment_values_whole() {
    let t = TempDir::new("trust-env-whole");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let tail = "END-OF-THE-VALUE";
    let long = format!("{}{tail}", "a".repeat(200));
    let file = ws.join("skarn.toml");
    std::fs::write(
        &file,
        format!(
            "[servers.docs]\ncommand = \"docs-server\"\nenv = {{ LONG = \"{long}\", ESC = \"x\\u001b[2Ky\" }}\n"
        ),
    )
    .unwrap();
    let o = trust(&file, &home);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(e.contains(tail), "{e}");
    assert!(!e.contains('\u{1b}'), "{e}");
}
