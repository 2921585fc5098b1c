//! `skarn run`, attack atk22h (issue 22): what a run leaves in its other
//! writable grants (a `--write` directory that is a repository) and in
//! the workspace for host programs to run later. Each test makes the
//! attack for real in both workspace layers and judges from outside: the
//! host program started after the run did not run the planted command,
//! the file outside the grants was not written.

use std::path::Path;
use std::process::Command;

use crate::common::*;
use skarn_test_support::TempDir;

const LAYERS: &[&str] = &["direct", "cow"];

/// A repository with two commits at `dir`.
pub(super) fn repo(dir: &Path) {
    git(dir, &["init", "-q"]);
    std::fs::write(dir.join("a"), "one\n").unwrap();
    git(dir, &["add", "a"]);
    git(dir, &["commit", "-qm", "one"]);
    std::fs::write(dir.join("a"), "two\n").unwrap();
    git(dir, &["commit", "-qam", "two"]);
}

/// `sh -c script` in `ws` under `skarn run` with `layer` and `flags`; the
/// script ends with `echo RAN`, which must have run (the attack was made).
pub(crate) fn run_script(
    ws: &Path,
    home: &Path,
    layer: &str,
    flags: &[&str],
    script: &str,
) -> std::process::Output {
    let mut all = vec!["--workspace-layer", layer];
    all.extend_from_slice(flags);
    let o = run_command(ws, home, &all, &["sh", "-c", script])
        .output()
        .unwrap();
    assert!(out(&o).contains("RAN"), "{layer}: {}{}", out(&o), err(&o));
    o
}

/// Host git in `dir`, with the user's (empty) configuration of `home`.
pub(crate) fn host_git(dir: &Path, home: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_EDITOR", "true")
        .output()
        .unwrap()
}

#[test]
fn a_rebase_to_do_list_left_in_a_write_grants_repository_runs_nothing_on_the_host() {
    // F2: `exec` lines of an interactive rebase the run stopped at a
    // `break`; the user's `git rebase --continue` would run them.
    for layer in LAYERS {
        let t = TempDir::new("atk22h-f2");
        let home = t.dir("home");
        let ws = t.dir("ws");
        let lib = t.dir("lib");
        git(&ws, &["init", "-q"]);
        repo(&lib);
        let marker = t.join("PLANTED-RAN");
        let script = format!(
            "cd {lib} && GIT_SEQUENCE_EDITOR='printf \"break\\nexec touch {m}\\n\" >' \
             git -c user.name=t -c user.email=t@t rebase -i HEAD~1; echo RAN",
            lib = lib.display(),
            m = marker.display()
        );
        let lib_s = lib.display().to_string();
        let o = run_script(&ws, &home, layer, &["--write", &lib_s], &script);
        let _ = host_git(&lib, &home, &["rebase", "--continue"]);
        assert!(
            !marker.exists(),
            "{layer}: the host's `git rebase --continue` ran the run's exec line: {}",
            err(&o)
        );
    }
}

#[test]
fn a_link_planted_in_a_write_grants_git_directory_does_not_stay() {
    // F3: `.git/COMMIT_EDITMSG` made a link to the home's `.bashrc`; the
    // host's next commit would write through it.
    for layer in LAYERS {
        let t = TempDir::new("atk22h-f3");
        let home = t.dir("home");
        let bashrc = t.file("home/.bashrc", "echo the user's bashrc\n");
        let ws = t.dir("ws");
        let lib = t.dir("lib");
        git(&ws, &["init", "-q"]);
        repo(&lib);
        let script = format!(
            "cd {lib} && rm -f .git/COMMIT_EDITMSG && ln -s {b} .git/COMMIT_EDITMSG && echo RAN",
            lib = lib.display(),
            b = bashrc.display()
        );
        let lib_s = lib.display().to_string();
        let o = run_script(&ws, &home, layer, &["--write", &lib_s], &script);
        std::fs::write(lib.join("a"), "three\n").unwrap();
        let _ = host_git(&lib, &home, &["commit", "-qam", "echo PLANTED"]);
        assert_eq!(
            std::fs::read_to_string(&bashrc).unwrap(),
            "echo the user's bashrc\n",
            "{layer}: host git wrote through the run's link: {}",
            err(&o)
        );
    }
}

#[test]
fn a_killed_run_has_its_other_write_grants_checked_by_the_next() {
    // F6: a run killed before its own check (an agent's timeout) left a
    // repository with a planted `core.fsmonitor` in a `--write` grant.
    for layer in LAYERS {
        let t = TempDir::new("atk22h-f6");
        let home = t.dir("home");
        let ws = t.dir("ws");
        let lib = t.dir("lib");
        git(&ws, &["init", "-q"]);
        let marker = t.join("PLANTED-RAN");
        let ready = lib.join("planted");
        let script = format!(
            "cd {lib} && mkdir sub && cd sub && git init -q && \
             git config core.fsmonitor 'touch {m}; false' && touch {r} && sleep 60",
            lib = lib.display(),
            m = marker.display(),
            r = ready.display()
        );
        let lib_s = lib.display().to_string();
        let mut child = run_command(
            &ws,
            &home,
            &["--workspace-layer", layer, "--write", &lib_s],
            &["sh", "-c", &script],
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
        let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !ready.exists() && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert!(ready.exists(), "{layer}: the run never planted");
        // SAFETY: kill(2) on the pid of the child this test spawned.
        unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
        let _ = child.wait();
        // The sandbox's processes die with it; give them a moment.
        std::thread::sleep(std::time::Duration::from_millis(500));
        let o = run_command(
            &ws,
            &home,
            &["--workspace-layer", layer, "--write", &lib_s],
            &["true"],
        )
        .output()
        .unwrap();
        let _ = host_git(&lib.join("sub"), &home, &["status"]);
        assert!(
            !marker.exists(),
            "{layer}: host `git status` ran the killed run's fsmonitor; next run said: {}",
            err(&o)
        );
    }
}

#[test]
fn a_repository_put_together_over_two_runs_is_refused() {
    // F7: `objects` and `refs` in one run, `HEAD` and a `config` naming an
    // fsmonitor in the next: host git in `assets/img` finds `assets`.
    let t = TempDir::new("atk22h-f7");
    let home = t.dir("home");
    let ws = t.dir("ws");
    git(&ws, &["init", "-q"]);
    std::fs::write(ws.join("README"), "hi\n").unwrap();
    git(&ws, &["add", "README"]);
    git(&ws, &["commit", "-qm", "init"]);
    let marker = t.join("PLANTED-RAN");
    let first = "mkdir -p assets/objects assets/refs assets/img && touch assets/objects/.keep \
                 assets/refs/.keep assets/img/logo.txt";
    let o = run_command(&ws, &home, &[], &["sh", "-c", first])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    let second = format!(
        "printf 'ref: refs/heads/main\\n' > assets/HEAD && printf '[core]\\n\\trepositoryformatversion \
         = 0\\n\\tbare = false\\n\\tworktree = .\\n\\tfsmonitor = \"touch {m}; false\"\\n' > \
         assets/config",
        m = marker.display()
    );
    let o = run_command(&ws, &home, &[], &["sh", "-c", &second])
        .output()
        .unwrap();
    let _ = host_git(&ws.join("assets/img"), &home, &["status"]);
    assert!(
        !marker.exists(),
        "host git ran the fsmonitor of a repository made over two runs: {}",
        err(&o)
    );
    assert!(!ws.join("assets/HEAD").exists(), "{}", err(&o));
}

#[test]
fn a_link_out_through_a_host_link_or_a_climb_is_refused_by_the_layer() {
    // F10: `shared -> ../shared` is the user's; the run's `out ->
    // shared/bin` is lexically inside but leads out; `up/../x` is
    // resolved by the kernel after `up`.
    let t = TempDir::new("atk22h-f10");
    let home = t.dir("home");
    let ws = t.dir("ws");
    t.dir("shared/bin");
    t.dir("other");
    git(&ws, &["init", "-q"]);
    std::os::unix::fs::symlink("../shared", ws.join("shared")).unwrap();
    let script = format!(
        "ln -s shared/bin out && ln -s {o} up && ln -s up/../shared/bin out2 && echo RAN",
        o = t.join("other").display()
    );
    let o = run_command(&ws, &home, &[], &["sh", "-c", &script])
        .output()
        .unwrap();
    assert!(out(&o).contains("RAN"), "{}{}", out(&o), err(&o));
    for l in ["out", "out2"] {
        assert!(
            std::fs::symlink_metadata(ws.join(l)).is_err(),
            "the layer applied the link {l} out of the workspace: {}",
            err(&o)
        );
    }
}

#[test]
fn an_env_file_cannot_hide_a_code_variable_or_name_a_build_tools() {
    // F4: a byte-order mark before a name inside the file, U+2028 after a
    // quoted value (a line break to the JavaScript loader), U+001C (a
    // blank to Python's). F5: make's MAKEFILES, cargo's RUSTFLAGS.
    let cases: &[(&str, &str)] = &[
        ("APP=demo\n\u{feff}BASH_ENV=/w/t.sh\n", "BASH_ENV"),
        (
            "PORT='8080'\u{2028}NODE_OPTIONS=--require=/w/t.js\n",
            "NODE_OPTIONS",
        ),
        ("\u{1c}BASH_ENV=/w/t.sh\n", "BASH_ENV"),
        ("MAKEFILES=/w/common.mk\n", "MAKEFILES"),
        ("RUSTFLAGS=-C linker=/w/link.sh\n", "RUSTFLAGS"),
    ];
    for layer in LAYERS {
        for (text, name) in cases {
            let t = TempDir::new("atk22h-f4");
            let home = t.dir("home");
            let ws = t.dir("ws");
            git(&ws, &["init", "-q"]);
            let planted = t.file("planted.env", text);
            let script = format!("cp {} .env && echo RAN", planted.display());
            let planted_s = planted.display().to_string();
            let o = run_script(&ws, &home, layer, &["--read", &planted_s], &script);
            let now = std::fs::read_to_string(ws.join(".env")).unwrap_or_default();
            assert!(
                !now.contains(name),
                "{layer}: the run's .env setting {name} reached the host ({text:?}): {}",
                err(&o)
            );
        }
    }
}

#[test]
fn a_work_tree_inside_the_git_directory_is_refused() {
    // F30: `core.worktree = hooks` makes host git check tracked files
    // (a committed `pre-commit`) out into `.git/hooks`.
    for layer in LAYERS {
        let t = TempDir::new("atk22h-f30");
        let home = t.dir("home");
        let ws = t.dir("ws");
        repo(&ws);
        let marker = t.join("PLANTED-RAN");
        let script = format!(
            "printf '#!/bin/sh\\ntouch {m}\\n' > pre-commit && chmod +x pre-commit && \
             git add pre-commit && git -c user.name=t -c user.email=t@t commit -qm lint && \
             git config core.worktree hooks; echo RAN",
            m = marker.display()
        );
        let o = run_script(&ws, &home, layer, &[], &script);
        let _ = host_git(&ws, &home, &["reset", "-q", "--hard"]);
        let _ = host_git(&ws, &home, &["commit", "-q", "--allow-empty", "-m", "two"]);
        assert!(
            !marker.exists(),
            "{layer}: host git checked the run's file out into .git/hooks and ran it: {}",
            err(&o)
        );
    }
}

#[test]
fn lefthook_files_of_every_format_and_a_python_version_stay_the_users() {
    // F19: lefthook merges `lefthook-local.toml` (and .json, .jsonc,
    // `.config/lefthook.yml`) into the hooks host git runs. F20: uv runs
    // the interpreter a `.python-version` names, a path too.
    for layer in LAYERS {
        for (file, text) in [
            (
                "lefthook-local.toml",
                "[pre-commit.commands.lint]\nrun = \"touch /x\"\n",
            ),
            ("lefthook.json", "{}\n"),
            (".config/lefthook.yml", "pre-commit: {}\n"),
            (".python-version", "./tools/python3\n"),
        ] {
            let t = TempDir::new("atk22h-f19");
            let home = t.dir("home");
            let ws = t.dir("ws");
            git(&ws, &["init", "-q"]);
            t.file("ws/lefthook.yml", "pre-commit:\n  commands: {}\n");
            t.file("ws/.python-version", "3.11\n");
            t.dir("ws/.config");
            let script = format!(
                "mkdir -p $(dirname {file}); printf '{}' > {file}; echo RAN",
                text.replace('\n', "\\n")
            );
            let o = run_script(&ws, &home, layer, &[], &script);
            let now = std::fs::read_to_string(ws.join(file)).unwrap_or_default();
            assert!(
                now != text,
                "{layer}: the run's {file} reached the host: {}",
                err(&o)
            );
        }
    }
}

#[test]
fn a_link_to_a_file_the_user_can_write_outside_does_not_stay() {
    // F26: `package-lock.json -> ~/.bashrc`; host npm (any writer that
    // truncates an existing name) would rewrite the home's file. A link
    // to a system program (a venv's python) stays.
    for layer in LAYERS {
        let t = TempDir::new("atk22h-f26");
        let home = t.dir("home");
        let bashrc = t.file("home/.bashrc", "echo the user's bashrc\n");
        let ws = t.dir("ws");
        git(&ws, &["init", "-q"]);
        let script = format!(
            "ln -s {} package-lock.json && ln -s /usr/bin/env py && echo RAN",
            bashrc.display()
        );
        let o = run_script(&ws, &home, layer, &[], &script);
        // What host npm does with its lockfile.
        let _ = std::fs::write(ws.join("package-lock.json"), "{\"lockfileVersion\": 3}\n");
        assert_eq!(
            std::fs::read_to_string(&bashrc).unwrap(),
            "echo the user's bashrc\n",
            "{layer}: a host write went through the run's link: {}",
            err(&o)
        );
        assert!(
            std::fs::symlink_metadata(ws.join("py")).is_ok_and(|m| m.file_type().is_symlink()),
            "{layer}: a link to a system program was dropped: {}",
            err(&o)
        );
    }
}
