//! `skarn run`: persistence paths (git hooks and config, editor and
//! folder-opening tool files) stay read-only, checked from outside.

use std::process::Command;

use crate::common::*;
use skarn_test_support::TempDir;

// Pinned to `--workspace-layer direct`: asserts the direct mode's own
// mechanism (placeholders, set-aside names or its messages); the default
// layer refuses the same plants when applied (ADR 0226).
#[test]
fn persistence_paths_stay_read_only_whether_or_not_they_exist() {
    let t = TempDir::new("persist");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    assert!(
        Command::new("git")
            .args(["init", "-q"])
            .current_dir(&ws)
            .status()
            .unwrap()
            .success()
    );
    std::fs::write(ws.join(".bashrc"), "original\n").unwrap();
    let script = "echo evil > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; \
                  printf '[core]\n\tfsmonitor = evil\n' >> .git/config; echo evil > .envrc; mkdir -p .vscode; \
                  echo '{}' > .vscode/tasks.json; echo '{}' > .mcp.json; echo evil >> .bashrc; \
                  echo evil > .zshrc; printf '[run]\\nwrite=[\"/\"]\\n' > skarn.toml; \
                  echo x > .gitmodules; mv .bashrc gone; rm -rf .git/hooks; echo ok > normal.txt";
    let cfg_before = std::fs::read(ws.join(".git/config")).unwrap();
    let o = run_in(
        &ws,
        &home,
        &["--workspace-layer", "direct"],
        &["sh", "-c", script],
    );
    assert!(ws.join("normal.txt").exists(), "{}", err(&o));
    assert!(!ws.join(".git/hooks/pre-commit").exists());
    assert!(ws.join(".git/hooks").is_dir());
    assert_eq!(std::fs::read(ws.join(".git/config")).unwrap(), cfg_before);
    for p in [
        ".envrc",
        ".vscode",
        ".mcp.json",
        "skarn.toml",
        ".gitmodules",
        "gone",
    ] {
        assert!(!ws.join(p).exists(), "{p} exists after the run");
    }
    assert_eq!(
        std::fs::read_to_string(ws.join(".bashrc")).unwrap(),
        "original\n"
    );
    // A missing shell rc file cannot be created when the workspace is HOME
    // (elsewhere no shell reads it; it is kept read-only only if it exists).
    assert_eq!(
        std::fs::read_to_string(ws.join(".zshrc")).unwrap(),
        "evil\n"
    );
    std::fs::remove_file(ws.join(".zshrc")).unwrap();
    let o = run_in(
        &ws,
        &ws,
        &["--workspace-layer", "direct"],
        &["sh", "-c", "echo evil > .zshrc; echo evil > .profile"],
    );
    assert_ne!(code(&o), 0);
    assert!(!ws.join(".zshrc").exists() && !ws.join(".profile").exists());
    // Turned off: the same writes succeed.
    let o = run_in(
        &ws,
        &home,
        &["--no-protect-persistence"],
        &["sh", "-c", "echo fine > .envrc"],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(ws.join(".envrc")).unwrap(),
        "fine\n"
    );
}

#[test]
fn missing_git_dir_cannot_be_created_with_hooks() {
    let t = TempDir::new("nogit");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "mkdir -p .git/hooks && echo evil > .git/hooks/post-checkout; echo x > .git/commondir",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(err(&o).contains("discarded"), "{}", err(&o));
    assert!(!ws.join(".git").exists());
}

#[test]
fn git_init_inside_is_staged_and_moved_in_without_hooks_or_code_config() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed on this host");
    }
    let t = TempDir::new("gitinit");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let script = "git init -q && echo hi > f && git add f && \
                  git -c user.name=a -c user.email=b commit -qm first && \
                  git config core.fsmonitor 'touch /tmp/pwned' && git config alias.x '!evil' && \
                  git remote add origin https://example.invalid/r && \
                  printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit && \
                  chmod +x .git/hooks/pre-commit && echo /elsewhere > .git/commondir && \
                  echo ok";
    let o = run_in(&ws, &home, &[], &["sh", "-c", script]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(out(&o), "ok\n");
    let e = err(&o);
    for d in ["hooks/pre-commit", "core.fsmonitor", "alias.x", "commondir"] {
        assert!(e.contains(d), "{d} not reported: {e}");
    }
    // The repository works on the host, with its history and remote.
    let log = git(&ws, &["log", "--format=%s"]);
    assert_eq!(String::from_utf8_lossy(&log.stdout), "first\n");
    let cfg = std::fs::read_to_string(ws.join(".git/config")).unwrap();
    assert!(cfg.contains("https://example.invalid/r"), "{cfg}");
    assert!(!cfg.contains("fsmonitor") && !cfg.contains("evil"), "{cfg}");
    assert!(!ws.join(".git/hooks/pre-commit").exists());
    assert!(!ws.join(".git/commondir").exists());
    let left: Vec<_> = std::fs::read_dir(ws.join(".git"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".skarn"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // A second run sees an ordinary, protected repository: what it writes
    // in .git goes to the run's git layer (ADR 0181), a hook is refused.
    let o = run_in(
        &ws,
        &home,
        &[],
        &["sh", "-c", "echo evil > .git/hooks/pre-commit"],
    );
    assert!(err(&o).contains(".git/hooks"), "{}", err(&o));
    assert!(!ws.join(".git/hooks/pre-commit").exists());
}

#[test]
fn effective_git_config_paths_stay_read_only() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed on this host");
    }
    let t = TempDir::new("gitcfg");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    assert!(git(&ws, &["init", "-q"]).status.success());
    std::fs::create_dir_all(ws.join("tools/hooks")).unwrap();
    std::fs::write(ws.join("tools/inc.cfg"), "[core]\n").unwrap();
    for (k, v) in [
        ("core.hooksPath", "tools/hooks"),
        ("include.path", "../tools/inc.cfg"),
        ("includeIf.onbranch:other.path", "../later.cfg"),
        ("extensions.worktreeConfig", "true"),
    ] {
        assert!(git(&ws, &["config", k, v]).status.success());
    }
    let inc_before = std::fs::read(ws.join("tools/inc.cfg")).unwrap();
    let script = "echo evil > tools/hooks/pre-commit; \
                  echo '[core] fsmonitor = evil' >> tools/inc.cfg; \
                  echo '[core] fsmonitor = evil' > later.cfg; \
                  echo '[core] fsmonitor = evil' > .git/config.worktree; \
                  mv tools tools2; mkdir -p tools/hooks; echo evil > tools/hooks/post-merge; \
                  echo /elsewhere > .git/commondir; echo ok > normal.txt";
    let o = run_in(&ws, &home, &[], &["sh", "-c", script]);
    assert!(ws.join("normal.txt").exists(), "{}", err(&o));
    assert!(!ws.join("tools/hooks/pre-commit").exists());
    assert!(!ws.join("tools/hooks/post-merge").exists());
    assert!(!ws.join("tools2").exists());
    assert_eq!(std::fs::read(ws.join("tools/inc.cfg")).unwrap(), inc_before);
    for p in ["later.cfg", ".git/config.worktree", ".git/commondir"] {
        assert!(
            std::fs::symlink_metadata(ws.join(p)).is_err(),
            "{p} exists after the run"
        );
    }
    // Usability: committing inside still works.
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "echo a > a && git add a && git -c user.name=a -c user.email=b commit -qm a && echo ok",
        ],
    );
    assert_eq!(out(&o), "ok\n", "{}", err(&o));
}

#[test]
fn linked_worktree_and_its_common_dir_stay_protected() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed on this host");
    }
    // The workspace's layer must not change what is reserved in another
    // writable grant (`--write` of the main checkout, written directly).
    for layer in ["direct", "cow"] {
        linked_worktree_case(layer);
    }
}

fn linked_worktree_case(layer: &str) {
    let t = TempDir::new(&format!("gitwt-{layer}"));
    let (main, home) = (t.dir("main"), t.dir("home"));
    assert!(git(&main, &["init", "-q"]).status.success());
    std::fs::write(main.join("f"), "x").unwrap();
    assert!(git(&main, &["add", "f"]).status.success());
    assert!(git(&main, &["commit", "-qm", "m"]).status.success());
    assert!(
        git(&main, &["config", "extensions.worktreeConfig", "true"])
            .status
            .success()
    );
    let ws = t.join("feat");
    let ws_s = ws.display().to_string();
    assert!(
        git(&main, &["worktree", "add", "-q", &ws_s])
            .status
            .success()
    );
    let wt = main.join(".git/worktrees/feat");
    let gitfile = std::fs::read(ws.join(".git")).unwrap();
    let main_s = main.display().to_string();
    let script = format!(
        "echo /elsewhere > {w}/commondir; echo '[core] fsmonitor = evil' > {w}/config.worktree; \
         echo evil > {m}/.git/hooks/post-checkout; echo '[core]' >> {m}/.git/config; \
         echo gitdir: /elsewhere > .git; mv {w} {w}.x; echo ok > normal.txt",
        w = wt.display(),
        m = main_s
    );
    let o = run_in(
        &ws,
        &home,
        &["--write", &main_s, "--workspace-layer", layer],
        &["sh", "-c", &script],
    );
    assert!(ws.join("normal.txt").exists(), "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(wt.join("commondir")).unwrap(),
        "../..\n"
    );
    assert!(!wt.join("config.worktree").exists());
    assert!(!main.join(".git/hooks/post-checkout").exists());
    assert_eq!(std::fs::read(ws.join(".git")).unwrap(), gitfile);
    let st = git(&ws, &["status", "--porcelain"]);
    assert!(st.status.success());
}

#[test]
fn workspace_below_a_repository_cannot_reach_its_git_dir() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed on this host");
    }
    let t = TempDir::new("gitsub");
    let (repo, home) = (t.dir("repo"), t.dir("home"));
    assert!(git(&repo, &["init", "-q"]).status.success());
    let ws = t.dir("repo/sub");
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "echo evil > ../.git/hooks/pre-commit; git init -q; echo ok",
        ],
    );
    assert_eq!(out(&o), "ok\n", "{}", err(&o));
    assert!(!repo.join(".git/hooks/pre-commit").exists());
    // The repository made inside was moved in, vetted.
    assert!(ws.join(".git/HEAD").exists());
}

#[test]
fn folder_opening_tools_are_protected_and_reserved_when_used() {
    let t = TempDir::new("tools");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::write(ws.join("lefthook.yml"), "pre-commit: {}\n").unwrap();
    std::fs::write(ws.join(".envrc"), "use flake\n").unwrap();
    std::fs::write(ws.join("flake.nix"), "{}\n").unwrap();
    let script = "echo evil > lefthook-local.yml; echo evil >> lefthook.yml; \
                  echo evil > .gemini; mkdir .codex; echo '{}' > opencode.json; \
                  echo evil > flake.nix; echo evil > shell.nix; mkdir .direnv; \
                  echo x > .lintstagedrc; echo ok > normal.txt";
    let o = run_in(&ws, &home, &[], &["sh", "-c", script]);
    assert!(ws.join("normal.txt").exists(), "{}", err(&o));
    for p in [
        "lefthook-local.yml",
        ".gemini",
        ".codex",
        "opencode.json",
        "shell.nix",
        ".direnv",
    ] {
        assert!(
            std::fs::symlink_metadata(ws.join(p)).is_err(),
            "{p} exists after the run"
        );
    }
    assert_eq!(
        std::fs::read_to_string(ws.join("lefthook.yml")).unwrap(),
        "pre-commit: {}\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("flake.nix")).unwrap(),
        "{}\n"
    );
    // lint-staged may be set up by a `package.json` key, and a new file
    // wins over it: a new one is set aside even here (atk24k F2).
    assert!(!ws.join(".lintstagedrc").exists());
}
