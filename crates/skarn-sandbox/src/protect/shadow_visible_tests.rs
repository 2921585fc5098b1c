#![cfg(unix)]

use super::*;
use std::process::{Command, Stdio};

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

#[test]
fn a_module_git_lists_is_shown_unless_an_ignore_file_changed() {
    let t = skarn_test_support::TempDir::new("shadow-visible");
    let ws = t.path();
    git(ws, &["init", "-q"]);
    std::fs::write(ws.join(".gitignore"), "build/\n").unwrap();
    std::fs::create_dir_all(ws.join("email")).unwrap();
    let none = |_: &Path| false;
    assert!(shown_by_git(&ws.join("token.py"), &none));
    assert!(shown_by_git(&ws.join("email/__init__.py"), &none));
    assert!(shown_by_git(&ws.join("new/dir/json.py"), &none));
    // Ignored by the rules of before the run.
    assert!(!shown_by_git(&ws.join("build/json.py"), &none));
    // An ignore file on its way that the run made or changed.
    let gi = ws.join(".gitignore");
    assert!(!shown_by_git(&ws.join("token.py"), &|p| p == gi));
    let nested = ws.join("email/.gitignore");
    assert!(!shown_by_git(&ws.join("email/__init__.py"), &|p| p == nested));
    let exclude = ws.join(".git/info/exclude");
    assert!(!shown_by_git(&ws.join("token.py"), &|p| p == exclude));
    let config = ws.join(".git/config");
    assert!(!shown_by_git(&ws.join("token.py"), &|p| p == config));
    // A repository the run made.
    let inner = ws.join("sub/.git");
    assert!(!shown_by_git(&ws.join("sub/token.py"), &|p| p == inner));
    // No repository.
    let t2 = skarn_test_support::TempDir::new("shadow-visible-none");
    if !Command::new("git")
        .current_dir(t2.path())
        .args(["rev-parse", "--git-dir"])
        .stderr(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .unwrap()
        .success()
    {
        assert!(!shown_by_git(&t2.path().join("token.py"), &none));
    }
    // Untracked files turned off.
    git(ws, &["config", "status.showUntrackedFiles", "no"]);
    assert!(!shown_by_git(&ws.join("token.py"), &none));
}
