//! Regression tests for attacks found by red-teaming `skarn run`, each
//! checked from outside the sandbox.

use std::path::{Path, PathBuf};
use std::process::Command;

const SKARN: &str = env!("CARGO_BIN_EXE_skarn");

struct Tmp(PathBuf);
impl Tmp {
    fn new(tag: &str) -> Tmp {
        let p = std::env::temp_dir().join(format!("skarn-hard-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Tmp(p)
    }
}
impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run_in(ws: &Path, script: &str, env: &[(&str, &Path)]) -> std::process::Output {
    let mut c = Command::new(SKARN);
    c.args(["run", "--no-config", "--workspace"])
        .arg(ws)
        .args(["--", "sh", "-c", script]);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn git(ws: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(ws)
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
        .args(args)
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok, "git {args:?}");
}

#[test]
fn git_dir_cannot_be_swapped_for_one_with_hooks() {
    let t = Tmp::new("git");
    git(&t.0, &["init", "-q"]);
    std::fs::write(t.0.join("a"), "a\n").unwrap();
    git(&t.0, &["add", "a"]);
    git(&t.0, &["commit", "-qm", "init"]);
    let out = run_in(
        &t.0,
        "mv .git .git_old; mkdir -p .git_new/hooks; \
         printf '#!/bin/sh\\ntouch PWNED\\n' > .git/hooks/pre-commit; \
         chmod +x .git/hooks/pre-commit 2>/dev/null; \
         git -c user.email=t@example.com -c user.name=t commit -q --allow-empty -m inside && echo COMMITTED",
        &[],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Outside: .git is still the real repository, no hook was planted.
    assert!(t.0.join(".git/HEAD").exists());
    assert!(!t.0.join(".git_old").exists());
    assert!(!t.0.join(".git/hooks/pre-commit").exists());
    // Usability: git still commits inside the sandbox.
    assert!(
        stdout.contains("COMMITTED"),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn no_setuid_or_setgid_file_survives_the_run() {
    let t = Tmp::new("suid");
    let _ = run_in(
        &t.0,
        "cp /bin/sh rs; chmod 4755 rs; chmod g+s rs; \
         python3 -c 'import os; os.open(\"x\", os.O_CREAT|os.O_WRONLY, 0o6755)' 2>/dev/null; true",
        &[],
    );
    use std::os::unix::fs::PermissionsExt;
    for f in ["rs", "x"] {
        if let Ok(md) = std::fs::metadata(t.0.join(f)) {
            assert_eq!(md.permissions().mode() & 0o6000, 0, "{f} is set-id");
        }
    }
    assert!(t.0.join("rs").exists(), "plain copy should work");
}

#[test]
fn secret_behind_a_symlink_stays_hidden() {
    let t = Tmp::new("symsecret");
    let home = t.0.join("home");
    let real = home.join("dotfiles/ssh");
    std::fs::create_dir_all(&real).unwrap();
    std::fs::write(real.join("id_test"), "SKARN-SECRET-MARKER\n").unwrap();
    std::os::unix::fs::symlink(&real, home.join(".ssh")).unwrap();
    let ws = t.0.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let out = Command::new(SKARN)
        .args(["run", "--no-config", "--read"])
        .arg(&home)
        .arg("--workspace")
        .arg(&ws)
        .args(["--", "sh", "-c"])
        .arg(format!(
            "cat {0}/.ssh/id_test {0}/dotfiles/ssh/id_test; echo done",
            home.display()
        ))
        .env("HOME", &home)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("done"), "{stdout}");
    assert!(!stdout.contains("SKARN-SECRET-MARKER"), "{stdout}");
}

#[test]
fn agent_configs_cannot_be_planted() {
    let t = Tmp::new("agentcfg");
    let _ = run_in(
        &t.0,
        "mkdir -p .claude; echo '{}' > .claude/settings.json; echo x > .pre-commit-config.yaml; true",
        &[],
    );
    assert!(!t.0.join(".claude").exists());
    assert!(!t.0.join(".pre-commit-config.yaml").exists());
}
