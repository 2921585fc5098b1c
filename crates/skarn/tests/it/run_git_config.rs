//! Repository configuration in the default (direct) workspace mode
//! (issue 23 item 3, ADR 0181): the workspace's `.git` is a copy-on-write
//! layer of its own, so everyday git commands that change `.git/config`,
//! `.git/modules`, `.git/worktrees` and `.gitmodules` work, and their safe
//! changes reach the repository after the run; code-running keys and
//! hooks are dropped, each said in one line. Checked with host git from
//! outside.

use std::path::Path;
use std::process::Command;

use crate::common::*;
use skarn_test_support::TempDir;

/// Host git, without the user's or system configuration (as `git` in
/// common, plus `safe.directory` for a run as another user).
fn host_git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "safe.directory=*"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A repository with one commit at `at`.
fn repo(at: &Path) {
    assert!(git(at, &["init", "-q", "-b", "main"]).status.success());
    assert!(
        git(at, &["commit", "-q", "--allow-empty", "-m", "first"])
            .status
            .success()
    );
}

fn skip_without_git() -> bool {
    !host_has("git", "--version")
}

#[test]
fn remote_add_config_and_branch_upstream_reach_the_repository() {
    if skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    let t = TempDir::new("gitcfg-remote");
    let (ws, home, up) = (t.dir("ws"), t.dir("home"), t.dir("upstream"));
    repo(&up);
    repo(&ws);
    let script = format!(
        "set -e; git remote add origin {up}; git config user.email me@example.test; \
         git fetch -q origin; git branch -u origin/main; git config --get user.email",
        up = up.display()
    );
    let o = run_in(
        &ws,
        &home,
        &["--read", up.to_str().unwrap()],
        &["sh", "-c", &script],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!err(&o).contains("error:"), "{}", err(&o));
    assert_eq!(
        host_git(&ws, &["config", "--get", "remote.origin.url"]).trim(),
        up.to_str().unwrap()
    );
    assert_eq!(
        host_git(&ws, &["config", "--get", "user.email"]).trim(),
        "me@example.test"
    );
    assert_eq!(
        host_git(&ws, &["rev-parse", "--abbrev-ref", "main@{upstream}"]).trim(),
        "origin/main"
    );
}

#[test]
fn code_running_keys_and_hooks_are_dropped_and_said() {
    if skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    let t = TempDir::new("gitcfg-bad");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    repo(&ws);
    let planted = t.path().join("planted");
    let script = format!(
        "git config user.name Kept; git config core.fsmonitor 'touch {p}'; \
         git config core.hooksPath /tmp; git config alias.st '!touch {p}'; \
         git config filter.x.clean 'touch {p}'; git config include.path /tmp/x; \
         printf '#!/bin/sh\\ntouch {p}\\n' > .git/hooks/pre-commit; \
         chmod +x .git/hooks/pre-commit; true",
        p = planted.display()
    );
    let o = run_in(&ws, &home, &[], &["sh", "-c", &script]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(
        host_git(&ws, &["config", "--get", "user.name"]).trim(),
        "Kept"
    );
    for key in [
        "core.fsmonitor",
        "core.hookspath",
        "alias.st",
        "filter.x.clean",
        "include.path",
    ] {
        assert_eq!(host_git(&ws, &["config", "--get", key]), "", "{key} kept");
        assert!(
            err(&o)
                .lines()
                .any(|l| l.contains(key) && l.contains("dropped")),
            "{key} not said: {}",
            err(&o)
        );
    }
    assert!(!ws.join(".git/hooks/pre-commit").exists(), "hook planted");
    // Host git does not run anything the run named.
    let c = git(&ws, &["commit", "-q", "--allow-empty", "-m", "host"]);
    assert!(c.status.success());
    let _ = host_git(&ws, &["status"]);
    assert!(!planted.exists(), "host git ran planted code");
}

#[test]
fn submodule_add_with_a_local_repository_and_worktree_add_work() {
    if skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    let t = TempDir::new("gitcfg-sub");
    let (ws, home, lib) = (t.dir("ws"), t.dir("home"), t.dir("lib"));
    repo(&lib);
    repo(&ws);
    let script = format!(
        "set -e; git -c protocol.file.allow=always submodule add -q {lib} vendor/lib; \
         git worktree add -q ./wt; git -C wt status --short; git submodule status",
        lib = lib.display()
    );
    let o = run_in(
        &ws,
        &home,
        &["--read", lib.to_str().unwrap()],
        &["sh", "-c", &script],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!err(&o).contains("quarantine"), "{}", err(&o));
    // The submodule: its git directory, link and settings are there.
    assert!(ws.join(".git/modules/vendor/lib/HEAD").is_file());
    assert!(ws.join("vendor/lib/.git").is_file());
    assert!(host_git(&ws, &["submodule", "status"]).contains("vendor/lib"));
    assert!(
        host_git(&ws, &["config", "--get", "submodule.vendor/lib.url"])
            .trim()
            .ends_with("lib")
    );
    assert!(
        std::fs::read_to_string(ws.join(".gitmodules"))
            .unwrap()
            .contains("path = vendor/lib")
    );
    // The worktree: listed without "prunable", usable from the host.
    let list = host_git(&ws, &["worktree", "list", "--porcelain"]);
    assert!(list.contains("/wt\n"), "{list}");
    assert!(!list.contains("prunable"), "{list}");
    assert_eq!(
        host_git(&ws.join("wt"), &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "wt"
    );
}

// Pinned to `--workspace-layer direct`: asserts the direct mode's own
// mechanism (placeholders, set-aside names or its messages); the default
// layer refuses the same plants when applied (ADR 0226).
#[test]
fn a_gitmodules_that_names_a_command_is_put_back() {
    if skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    let t = TempDir::new("gitcfg-gitmodules");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    repo(&ws);
    let o = run_in(
        &ws,
        &home,
        &["--workspace-layer", "direct"],
        &[
            "sh",
            "-c",
            "printf '[submodule \"x\"]\\n\\tpath = x\\n\\tupdate = !touch /tmp/p\\n' > .gitmodules",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!ws.join(".gitmodules").exists(), "{}", err(&o));
    assert!(err(&o).contains("submodule.x.update"), "{}", err(&o));
}

/// A workspace on another file system than skarn's state directory (a
/// tmpfs under /dev/shm; `/tmp` on many distributions): the git layer's
/// directory then lies in the workspace, and every run used to warn that
/// `.git/config`, `hooks`, `modules` and `objects` "were not applied" (the
/// reservation took the layer's upper `.git` for a nested repository).
/// Now a plain run says nothing, and a planted hook is still dropped.
// Pinned to `--workspace-layer direct`: asserts the direct mode's own
// mechanism (placeholders, set-aside names or its messages); the default
// layer refuses the same plants when applied (ADR 0226).
#[test]
fn a_workspace_on_tmpfs_runs_quietly_and_still_drops_planted_hooks() {
    if skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() || std::fs::metadata(shm).is_ok_and(|m| m.permissions().readonly()) {
        skarn_test_support::skip!("/dev/shm is not a writable directory here");
    }
    let t = TempDir::new_in(shm, "gitcfg-tmpfs");
    let home = TempDir::new("gitcfg-tmpfs-home");
    let ws = t.dir("ws");
    repo(&ws);
    let o = run_in(
        &ws,
        home.path(),
        &["--workspace-layer", "direct"],
        &["true"],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!err(&o).contains("was not applied"), "{}", err(&o));
    let planted = t.path().join("planted");
    let script = format!(
        "printf '#!/bin/sh\\ntouch {p}\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit",
        p = planted.display()
    );
    let o = run_in(
        &ws,
        home.path(),
        &["--workspace-layer", "direct"],
        &["sh", "-c", &script],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!ws.join(".git/hooks/pre-commit").exists(), "hook planted");
    let names: Vec<String> = std::fs::read_dir(&ws)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, [".git"], "left in the workspace: {names:?}");
}

/// atk22e: a run cannot redirect where the host's git sends the
/// repository: an existing remote keeps its URL and gets no push URL, and
/// a branch's upstream cannot move to a remote the host does not have;
/// a new remote at a network address is not added. Checked with host git after the run.
#[test]
fn existing_remotes_and_upstreams_are_not_redirected() {
    if skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    let t = TempDir::new("gitcfg-redirect");
    let (ws, home, up) = (t.dir("ws"), t.dir("home"), t.dir("upstream"));
    repo(&up);
    repo(&ws);
    let ups = up.to_str().unwrap();
    assert!(git(&ws, &["remote", "add", "origin", ups]).status.success());
    assert!(git(&ws, &["fetch", "-q", "origin"]).status.success());
    assert!(git(&ws, &["branch", "-u", "origin/main"]).status.success());
    let script = "git remote set-url origin https://evil.test/p.git; \
                  git remote set-url --push origin https://evil.test/push.git; \
                  git remote add evil https://evil.test/q.git; \
                  git config branch.main.remote evil; \
                  git remote add fork https://fork.test/p.git; true";
    let o = run_in(&ws, &home, &["--read", ups], &["sh", "-c", script]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(
        host_git(&ws, &["config", "--get-all", "remote.origin.url"]).trim(),
        ups
    );
    assert_eq!(
        host_git(&ws, &["config", "--get-all", "remote.origin.pushurl"]).trim(),
        ""
    );
    assert_eq!(
        host_git(&ws, &["config", "--get", "branch.main.remote"]).trim(),
        "origin"
    );
    // A new remote at a network address is dropped too: host git would
    // contact it on `git fetch --all` (atk22h F29, F36, ADR 0267).
    assert_eq!(
        host_git(&ws, &["config", "--get", "remote.fork.url"]).trim(),
        ""
    );
    assert!(err(&o).contains("remote.origin.url"), "{}", err(&o));
}

/// atk22e: replace refs (loose or packed), grafts and new exclude lines
/// made by a run do not reach the repository: host git would show and
/// check out other objects than the refs name (a planted `.envrc` on the
/// user's next `git checkout`), or hide files from `git status`.
#[test]
fn replace_refs_grafts_and_exclude_lines_do_not_reach_the_repository() {
    if skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    let t = TempDir::new("gitcfg-replace");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    repo(&ws);
    std::fs::write(ws.join("a.txt"), "real\n").unwrap();
    assert!(git(&ws, &["add", "a.txt"]).status.success());
    assert!(git(&ws, &["commit", "-q", "-m", "a"]).status.success());
    let script = "set -e; old=$(git rev-parse HEAD:a.txt); \
                  new=$(printf 'planted\\n' | git hash-object -w --stdin); \
                  git replace \"$old\" \"$new\"; \
                  echo secret-file >> .git/info/exclude; \
                  git pack-refs --all; git replace -l";
    let o = run_in(&ws, &home, &[], &["sh", "-c", script]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(
        !out(&o).trim().is_empty(),
        "the replace ref was made inside"
    );
    assert_eq!(host_git(&ws, &["replace", "-l"]).trim(), "");
    assert_eq!(host_git(&ws, &["show", "HEAD:a.txt"]), "real\n");
    let exclude = std::fs::read_to_string(ws.join(".git/info/exclude")).unwrap_or_default();
    assert!(!exclude.contains("secret-file"), "{exclude}");
}

/// atk22f: a HOME naming a missing directory is never created (the git
/// layer made `.local/state/skarn/layers` in it); the repository's
/// configuration still changes as it would.
#[test]
fn a_missing_home_is_never_created() {
    if skip_without_git() {
        skarn_test_support::skip!("git is not installed");
    }
    let t = TempDir::new("gitcfg-nohome");
    let ws = t.dir("ws");
    repo(&ws);
    let home = t.join("missing-home");
    let o = run_in(
        &ws,
        &home,
        &[],
        &["git", "config", "user.email", "me@example.test"],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!home.exists(), "{} was created", home.display());
    assert_eq!(
        host_git(&ws, &["config", "--get", "user.email"]).trim(),
        "me@example.test"
    );
}
