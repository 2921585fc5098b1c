//! `skarn run` writes the workspace through a copy-on-write layer (ADR
//! 0130): nothing reaches the host's workspace before the run ends, and
//! then only what the protection lists allow. Every check looks at the
//! host's workspace from outside.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::Stdio;

use crate::common::*;
use skarn_test_support::TempDir;

/// The mode under test, whatever the default.
const COW: &[&str] = &["--workspace-layer", "cow"];

/// The workspace's entries, sorted (names only).
fn listing(ws: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(ws)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn the_first_command_of_the_readme_lists_nothing_extra_in_an_empty_directory() {
    let t = TempDir::new("layer-ls");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let o = run_in(&ws, &home, COW, &["ls", "-A"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(out(&o), "", "an empty workspace lists nothing inside");
    assert!(listing(&ws).is_empty(), "nothing left on the host");
    // Nothing beside the workspace either (the layer lives in skarn's
    // state directory or is removed).
    assert_eq!(listing(t.path()), vec!["home", "ws"]);
}

#[test]
fn plants_of_each_protected_kind_stay_out_of_the_workspace() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed");
    }
    let t = TempDir::new("layer-plants");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    assert!(git(&ws, &["init", "-q"]).status.success());
    let script = "set -u
        echo work > work.txt
        echo 'echo PWN' > .envrc
        mkdir -p pkg/.claude .vscode sub && echo {} > pkg/.claude/settings.json
        echo 'echo PWN' > pkg/.envrc
        echo {} > .vscode/tasks.json
        echo '[toolchain]' > sub/rust-toolchain.toml
        echo {} > x.code-workspace
        git init -q nested && git -C nested config core.fsmonitor 'echo PWN'
        mkdir -p hooked/.git/hooks && printf '#!/bin/sh\\necho PWN\\n' > hooked/.git/hooks/pre-commit
        echo 'echo PWN' > .git/hooks/pre-commit 2>/dev/null || true
        git config core.fsmonitor 'echo PWN' 2>/dev/null || true
        true";
    let o = run_in(
        &ws,
        &home,
        &["--workspace-layer", "cow", "--report", "--json"],
        &["sh", "-c", script],
    );
    let e = err(&o);
    assert_eq!(code(&o), 0, "{e}");
    assert_eq!(
        std::fs::read_to_string(ws.join("work.txt")).unwrap(),
        "work\n"
    );
    for p in [
        ".envrc",
        "pkg/.claude",
        "pkg/.envrc",
        ".vscode",
        "sub/rust-toolchain.toml",
        "x.code-workspace",
        "nested/.git",
        "hooked/.git",
        ".git/hooks/pre-commit",
    ] {
        assert!(
            std::fs::symlink_metadata(ws.join(p)).is_err(),
            "{p} reached the workspace: {e}"
        );
    }
    let cfg = std::fs::read_to_string(ws.join(".git/config")).unwrap();
    assert!(!cfg.contains("fsmonitor"), "{cfg}");
    // One line names what was refused; the report lists why.
    assert!(e.contains("were not applied to the workspace: "), "{e}");
    assert!(e.contains(".envrc"), "{e}");
    assert!(e.contains("\"refused\""), "{e}");
    assert!(e.contains("\"+ work.txt\""), "{e}");
}

#[test]
fn host_programs_do_not_see_the_runs_files_while_it_runs() {
    let t = TempDir::new("layer-during");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let mut c = run_command(
        &ws,
        &home,
        COW,
        &[
            "sh",
            "-c",
            "echo 'echo PWN' > .envrc; echo n > note.txt; echo ready; read x",
        ],
    )
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .spawn()
    .unwrap();
    let mut line = String::new();
    BufReader::new(c.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "ready\n");
    // Mid-run: a host program (an editor, a shell prompt) sees neither.
    assert!(listing(&ws).is_empty(), "{:?}", listing(&ws));
    c.stdin.take().unwrap().write_all(b"go\n").unwrap();
    assert!(c.wait().unwrap().success());
    assert_eq!(listing(&ws), vec!["note.txt"]);
}

#[test]
fn a_killed_run_applies_nothing_unvetted() {
    let t = TempDir::new("layer-kill");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let mut c = run_command(
        &ws,
        &home,
        COW,
        &[
            "sh",
            "-c",
            "echo w > work.txt; mkdir -p k1/.claude; echo {} > k1/.claude/settings.json; \
             echo 'echo PWN' > k1/.envrc; echo ready; sleep 600",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let mut line = String::new();
    BufReader::new(c.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "ready\n");
    c.kill().unwrap(); // SIGKILL: no after-run step of the helper runs
    c.wait().unwrap();
    // The reaper applies the vetted layer once the sandbox is gone; the next
    // run applies what is left. Either way: the work, never the plants.
    let mut applied = false;
    for _ in 0..200 {
        if ws.join("work.txt").exists() {
            applied = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    if !applied {
        let o = run_in(&ws, &home, COW, &["true"]);
        assert_eq!(code(&o), 0, "{}", err(&o));
    }
    assert_eq!(std::fs::read_to_string(ws.join("work.txt")).unwrap(), "w\n");
    assert!(!ws.join("k1/.claude").exists());
    assert!(!ws.join("k1/.envrc").exists());
}

#[test]
fn the_next_run_vets_and_applies_a_layer_left_behind() {
    use std::os::unix::fs::DirBuilderExt;
    let t = TempDir::new("layer-left");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let ws = std::fs::canonicalize(ws).unwrap();
    // A layer as a run killed together with its reaper leaves it.
    let layers = home.join(".local/state/skarn/layers");
    let base = layers.join("layer-0123456789abcdef");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(base.join("u/pkg"))
        .unwrap();
    std::fs::create_dir(base.join("w")).unwrap();
    std::fs::write(base.join("workspace"), ws.as_os_str().as_encoded_bytes()).unwrap();
    std::fs::write(base.join("u/left.txt"), "left\n").unwrap();
    std::fs::write(base.join("u/pkg/.envrc"), "echo PWN\n").unwrap();
    // And one of a workspace that is gone: it can never be applied.
    let orphan = layers.join("layer-fedcba9876543210");
    std::fs::create_dir_all(orphan.join("u")).unwrap();
    std::fs::write(
        orphan.join("workspace"),
        t.join("gone").as_os_str().as_encoded_bytes(),
    )
    .unwrap();
    let o = run_in(
        &ws,
        &home,
        &["--workspace-layer", "cow", "--report"],
        &["true"],
    );
    let e = err(&o);
    assert_eq!(code(&o), 0, "{e}");
    assert_eq!(
        std::fs::read_to_string(ws.join("left.txt")).unwrap(),
        "left\n"
    );
    assert!(!ws.join("pkg/.envrc").exists());
    assert!(e.contains("ended without applying its changes"), "{e}");
    assert!(e.contains("pkg/.envrc"), "{e}");
    assert!(!base.exists(), "the layer is removed once applied");
    assert!(
        !orphan.exists(),
        "a layer of a removed workspace is removed"
    );
}

#[test]
fn writing_through_a_link_out_of_the_workspace_is_refused() {
    let t = TempDir::new("layer-link");
    let (ws, home, outside) = (t.dir("ws"), t.dir("home"), t.dir("outside"));
    std::os::unix::fs::symlink(&outside, ws.join("lnk")).unwrap();
    let o = run_in(
        &ws,
        &home,
        COW,
        &[
            "sh",
            "-c",
            "echo PWN > lnk/x; echo PWN > lnk/../outside-too; true",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(listing(&outside).is_empty());
    assert!(!t.join("outside-too").exists());
    // The link itself is still the host's.
    assert_eq!(std::fs::read_link(ws.join("lnk")).unwrap(), outside);
}

#[test]
fn a_link_made_in_the_run_is_applied_as_a_link_never_written_through() {
    let t = TempDir::new("layer-made-link");
    let (ws, home, outside) = (t.dir("ws"), t.dir("home"), t.dir("outside"));
    let target = outside.join("f");
    let script = format!(
        "ln -s {} made && echo data > plain && rm -rf gone; mkdir -p dir && echo x > dir/y",
        target.display()
    );
    std::fs::create_dir(ws.join("gone")).unwrap();
    std::fs::write(ws.join("gone/z"), "z").unwrap();
    let o = run_in(&ws, &home, COW, &["sh", "-c", &script]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(std::fs::read_link(ws.join("made")).unwrap(), target);
    assert!(!target.exists(), "applying never writes through a link");
    assert!(!ws.join("gone").exists(), "a removal is applied");
    assert_eq!(std::fs::read_to_string(ws.join("dir/y")).unwrap(), "x\n");
}

#[test]
fn git_commit_in_the_run_reaches_the_repository() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed");
    }
    let t = TempDir::new("layer-git");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    assert!(git(&ws, &["init", "-q"]).status.success());
    std::fs::write(ws.join("a.txt"), "a\n").unwrap();
    let o = run_in(
        &ws,
        &home,
        COW,
        &[
            "sh",
            "-c",
            "git add a.txt && git -c user.name=t -c user.email=t@t commit -qm first && \
             git checkout -qb topic && echo b > b.txt && git add b.txt && \
             git -c user.name=t -c user.email=t@t commit -qm second",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    let log = git(&ws, &["log", "--format=%s", "topic"]);
    assert_eq!(String::from_utf8_lossy(&log.stdout), "second\nfirst\n");
    let st = git(&ws, &["status", "--porcelain"]);
    assert_eq!(String::from_utf8_lossy(&st.stdout), "");
}

#[test]
fn a_repository_made_in_an_empty_workspace_is_moved_in_vetted() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed");
    }
    let t = TempDir::new("layer-git-new");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let o = run_in(
        &ws,
        &home,
        COW,
        &[
            "sh",
            "-c",
            "git init -q && echo a > a && git add a && git -c user.name=t -c user.email=t@t \
             commit -qm one && git config core.pager 'sh -c PWN' && \
             printf '#!/bin/sh\\necho PWN\\n' > .git/hooks/post-checkout",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    let log = git(&ws, &["log", "--format=%s"]);
    assert_eq!(String::from_utf8_lossy(&log.stdout), "one\n");
    assert!(!ws.join(".git/hooks/post-checkout").exists());
    let cfg = std::fs::read_to_string(ws.join(".git/config")).unwrap();
    assert!(!cfg.contains("pager"), "{cfg}");
}

#[test]
fn a_python_venv_made_in_the_run_works_on_the_host() {
    let venv = std::process::Command::new("python3")
        .args(["-c", "import venv, ensurepip"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !venv {
        skarn_test_support::skip!("python3 with venv is not installed");
    }
    let t = TempDir::new("layer-venv");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    // A local package installed without the network.
    t.file("ws/pkg/mod_from_run.py", "X = 42\n");
    let o = run_in(
        &ws,
        &home,
        COW,
        &[
            "sh",
            "-c",
            "python3 -m venv --without-pip .venv && \
             cp pkg/mod_from_run.py \"$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')\"/",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    let h = std::process::Command::new(ws.join(".venv/bin/python"))
        .args(["-c", "import mod_from_run; print(mod_from_run.X)"])
        .output()
        .unwrap();
    assert_eq!(out(&h), "42\n", "{}", err(&h));
}

#[test]
fn cargo_build_output_reaches_the_workspace() {
    if !host_has("cargo", "--version") {
        skarn_test_support::skip!("cargo is not installed");
    }
    let t = TempDir::new("layer-cargo");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    t.file(
        "ws/Cargo.toml",
        "[package]\nname = \"lay\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    t.file("ws/src/main.rs", "fn main() { println!(\"built\"); }\n");
    let o = run_in(&ws, &home, COW, &["cargo", "build", "--offline", "-q"]);
    if code(&o) != 0 && err(&o).contains("command not found") {
        skarn_test_support::skip!("cargo is not reachable inside the sandbox for this user");
    }
    assert_eq!(code(&o), 0, "{}", err(&o));
    let h = std::process::Command::new(ws.join("target/debug/lay"))
        .output()
        .unwrap();
    assert_eq!(out(&h), "built\n");
}

#[test]
fn npm_install_of_a_local_package_reaches_the_workspace() {
    if !host_has("npm", "--version") {
        skarn_test_support::skip!("npm is not installed");
    }
    let t = TempDir::new("layer-npm");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    t.file(
        "ws/package.json",
        "{\"name\":\"app\",\"version\":\"1.0.0\"}\n",
    );
    t.file(
        "ws/dep/package.json",
        "{\"name\":\"dep\",\"version\":\"1.0.0\",\"main\":\"i.js\"}\n",
    );
    t.file("ws/dep/i.js", "module.exports = 7;\n");
    let o = run_in(
        &ws,
        &home,
        COW,
        &[
            "npm",
            "install",
            "--offline",
            "--no-audit",
            "--no-fund",
            "./dep",
        ],
    );
    assert_eq!(code(&o), 0, "{}{}", out(&o), err(&o));
    assert!(ws.join("package-lock.json").exists());
    assert!(std::fs::symlink_metadata(ws.join("node_modules/dep")).is_ok());
}

#[test]
fn the_direct_mode_stays_available() {
    let t = TempDir::new("layer-direct");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let o = run_in(
        &ws,
        &home,
        &["--workspace-layer", "direct", "--report"],
        &["sh", "-c", "echo d > d.txt"],
    );
    let e = err(&o);
    assert_eq!(code(&o), 0, "{e}");
    assert!(ws.join("d.txt").exists());
    assert!(
        e.contains("workspace_layer=direct") || e.contains("--workspace-layer"),
        "{e}"
    );
    assert!(!e.contains("copy-on-write layer ("), "{e}");
}

/// Other names of home files inside the workspace (hard links): the
/// secret's stays hidden, the start-up file's is never changed.
#[test]
fn hard_links_of_home_files_stay_covered_through_the_layer() {
    let t = TempDir::new("layer-hard");
    let home = t.dir("home");
    let ws = t.dir("home/proj");
    t.file("home/.zshrc", "echo ORIG\n");
    t.file(
        "home/.aws/credentials",
        "aws_secret_access_key=HARDSECRET\n",
    );
    std::fs::hard_link(home.join(".zshrc"), ws.join("zshrc_hl")).unwrap();
    std::fs::hard_link(home.join(".aws/credentials"), ws.join("creds")).unwrap();
    let o = run_in(
        &ws,
        &home,
        COW,
        &[
            "sh",
            "-c",
            "echo 'echo PWNED' >> zshrc_hl; cat creds; echo x > zshrc_hl2; true",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(home.join(".zshrc")).unwrap(),
        "echo ORIG\n"
    );
    assert!(!out(&o).contains("HARDSECRET"), "{}", out(&o));
    assert!(ws.join("zshrc_hl2").exists());
}

/// A directory of the workspace that is a host mount point (here another
/// mount of the home) is never written by applying the layer.
#[test]
fn applying_never_writes_into_another_mount() {
    if !skarn_test_support::is_root() {
        skarn_test_support::skip!("a bind mount needs root");
    }
    let t = TempDir::new("layer-bind");
    let (ws, home, other) = (t.dir("ws"), t.dir("home"), t.dir("other"));
    let mnt = t.dir("ws/mnt");
    let ok = std::process::Command::new("mount")
        .arg("--bind")
        .arg(&other)
        .arg(&mnt)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        skarn_test_support::skip!("mount --bind failed");
    }
    let o = run_in(
        &ws,
        &home,
        COW,
        &["sh", "-c", "echo PWN > mnt/x; echo ok > y; true"],
    );
    let _ = std::process::Command::new("umount")
        .arg("-l")
        .arg(&mnt)
        .status();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!other.join("x").exists(), "{}", err(&o));
    assert!(ws.join("y").exists());
}

/// Git directories that are not named `.git` (a bare repository split
/// through `commondir`): their configuration and hooks keep their
/// protection; one made in the run is refused whole.
#[test]
fn git_directories_by_any_name_are_vetted() {
    let t = TempDir::new("layer-commondir");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    for d in ["X", "Y/objects", "Y/refs/heads", "Y/hooks"] {
        std::fs::create_dir_all(ws.join(d)).unwrap();
    }
    std::fs::write(ws.join("X/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(ws.join("X/commondir"), "../Y\n").unwrap();
    std::fs::write(ws.join("Y/config"), "[core]\n\tbare = true\n").unwrap();
    let o = run_in(
        &ws,
        &home,
        COW,
        &[
            "sh",
            "-c",
            "printf '[core]\\n\\tpager = touch /tmp/p\\n' >> Y/config; \
             echo '#!/bin/sh' > Y/hooks/pre-commit; \
             mkdir -p A B/objects B/refs; echo 'ref: refs/heads/main' > A/HEAD; \
             echo ../B > A/commondir; \
             mkdir -p C/objects C/refs C/hooks; echo 'ref: refs/heads/main' > C/HEAD; \
             echo x > C/hooks/post-checkout; true",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(ws.join("Y/config")).unwrap(),
        "[core]\n\tbare = true\n"
    );
    assert!(!ws.join("Y/hooks/pre-commit").exists());
    assert!(!ws.join("A").exists(), "{}", err(&o));
    assert!(!ws.join("C").exists(), "{}", err(&o));
}

/// A file the host changes while the run also changes it: the host's
/// version is kept, the run's is refused and named.
#[test]
fn a_file_the_host_changes_during_the_run_keeps_the_hosts_version() {
    let t = TempDir::new("layer-conflict");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::write(ws.join("shared.txt"), "before\n").unwrap();
    let mut c = run_command(
        &ws,
        &home,
        COW,
        &[
            "sh",
            "-c",
            "echo run > shared.txt; echo run > own.txt; echo ready; read x",
        ],
    )
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut line = String::new();
    BufReader::new(c.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "ready\n");
    std::fs::write(ws.join("shared.txt"), "host edit\n").unwrap();
    c.stdin.take().unwrap().write_all(b"go\n").unwrap();
    let o = c.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(ws.join("shared.txt")).unwrap(),
        "host edit\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("own.txt")).unwrap(),
        "run\n"
    );
    assert!(err(&o).contains("shared.txt"), "{}", err(&o));
}

/// `git remote add` and `git config user.email` reach the repository's
/// configuration; a key that runs programs does not (and takes the rest of
/// that run's config change with it, named).
#[test]
fn safe_git_config_changes_reach_the_repository() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed");
    }
    let t = TempDir::new("layer-gitcfg");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    assert!(git(&ws, &["init", "-q"]).status.success());
    let o = run_in(
        &ws,
        &home,
        COW,
        &[
            "sh",
            "-c",
            "git remote add origin ./elsewhere && git config user.email a@b",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    let cfg = std::fs::read_to_string(ws.join(".git/config")).unwrap();
    assert!(cfg.contains("./elsewhere") && cfg.contains("a@b"), "{cfg}");
    let o = run_in(
        &ws,
        &home,
        COW,
        &[
            "sh",
            "-c",
            "git config core.fsmonitor 'echo PWN' && git config user.name x",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    let cfg = std::fs::read_to_string(ws.join(".git/config")).unwrap();
    assert!(!cfg.contains("fsmonitor") && cfg.contains("a@b"), "{cfg}");
    assert!(err(&o).contains(".git/config"), "{}", err(&o));
}
