//! `skarn run`: round 3's remaining classes, each attempted for real and
//! checked from outside: other names of protected files (hard links,
//! another mount of the same tree), host sockets below dependency trees,
//! files host tools look up from any subdirectory, files the shell
//! start-up files source, links in and environments around `PATH`
//! directories, a missing `PATH` directory the run creates, and a secret
//! inside a repository (said in the report).

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use crate::common::*;
use skarn_test_support::TempDir;

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| format!("<{e}>"))
}

fn path_with(dirs: &[&Path]) -> String {
    let mut v: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    v.push(std::env::var("PATH").unwrap_or_default());
    v.join(":")
}

fn executable(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut m = std::fs::metadata(p).unwrap().permissions();
    m.set_mode(0o755);
    std::fs::set_permissions(p, m).unwrap();
}

/// A home start-up file and a secret hard-linked into the workspace: the
/// start-up file's other name is read-only, the secret's is hidden.
#[test]
fn hard_links_of_home_files_are_protected() {
    let t = TempDir::new("r3c-hard");
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
        &[],
        &[
            "sh",
            "-c",
            "echo 'echo PWNED' >> zshrc_hl; cat creds; rm -f zshrc_hl creds; true",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(read(&home.join(".zshrc")), "echo ORIG\n", "{}", err(&o));
    assert!(!out(&o).contains("HARDSECRET"), "{}", out(&o));
}

/// Unmounts on drop.
struct Mounted(PathBuf);
impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// A dotfile that reaches the workspace through another mount of the
/// same tree (`~/.bashrc -> /alt/dotfiles/bashrc`, `/alt` a bind mount of
/// the home) is the same file: read-only.
#[test]
fn files_reached_through_another_mount_are_protected() {
    if !skarn_test_support::is_root() {
        skarn_test_support::skip!("a bind mount needs root");
    }
    let t = TempDir::new("r3c-bind");
    let home = t.dir("home");
    let ws = t.dir("home/dotfiles");
    let alt = t.dir("alt");
    t.file("home/dotfiles/bashrc", "echo ORIG\n");
    let ok = std::process::Command::new("mount")
        .arg("--bind")
        .arg(&home)
        .arg(&alt)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        skarn_test_support::skip!("mount --bind failed");
    }
    let _m = Mounted(alt.clone());
    symlink(alt.join("dotfiles/bashrc"), home.join(".bashrc")).unwrap();
    let o = run_in(
        &ws,
        &home,
        &[],
        &["sh", "-c", "echo 'echo PWNED' > bashrc; true"],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(read(&home.join(".bashrc")), "echo ORIG\n", "{}", err(&o));
}

/// Host servers' sockets below `node_modules`, `target`, `.venv` and
/// inside `.git` are unreachable; the listeners get nothing.
#[test]
fn sockets_below_dependency_trees_are_unreachable() {
    let t = TempDir::new("r3c-socks");
    let home = t.dir("home");
    let ws = t.dir("ws");
    git(&ws, &["init", "-q"]);
    let mut ls = Vec::new();
    for d in ["node_modules/.cache", "target/debug", ".venv", ".git/x"] {
        let dir = t.dir(format!("ws/{d}"));
        let sock = dir.join("srv.sock");
        let l = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        l.set_nonblocking(true).unwrap();
        ls.push((sock, l));
    }
    for (sock, l) in &ls {
        let s = sock.display().to_string();
        let o = probe(&ws, &home, &[], &["unix", &s]);
        assert_ne!(code(&o), 0, "{s} was reachable: {}", out(&o));
        assert!(l.accept().is_err(), "the listener at {s} got a connection");
    }
}

/// `rust-toolchain.toml`, `.hg/hgrc` in subdirectories: an existing one
/// stays as it was; ones the run writes are set aside after it.
// Pinned to `--workspace-layer direct`: asserts the direct mode's own
// mechanism (placeholders, set-aside names or its messages); the default
// layer refuses the same plants when applied (ADR 0226).
#[test]
fn files_host_tools_look_up_from_subdirectories_cannot_be_planted() {
    let t = TempDir::new("r3c-upward");
    let home = t.dir("home");
    let ws = t.dir("ws");
    t.file(
        "ws/crate-a/rust-toolchain.toml",
        "[toolchain]\nchannel = \"stable\"\n",
    );
    t.dir("ws/crate-b");
    // Older than the after-run check's 50 ms margin for coarse file-system
    // clocks (a file changed within it counts as the run's).
    std::thread::sleep(std::time::Duration::from_millis(200));
    let o = run_in(
        &ws,
        &home,
        &["--workspace-layer", "direct"],
        &[
            "sh",
            "-c",
            "printf '[toolchain]\\npath = \"/tmp/x\"\\n' > crate-a/rust-toolchain.toml; \
             printf '[toolchain]\\npath = \"/tmp/x\"\\n' > crate-b/rust-toolchain.toml; \
             mkdir -p crate-b/.hg && printf '[hooks]\\npre-status = touch /tmp/x\\n' > crate-b/.hg/hgrc; \
             true",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(
        read(&ws.join("crate-a/rust-toolchain.toml")),
        "[toolchain]\nchannel = \"stable\"\n"
    );
    assert!(
        !ws.join("crate-b/rust-toolchain.toml").exists(),
        "{}",
        err(&o)
    );
    assert!(!ws.join("crate-b/.hg/hgrc").exists(), "{}", err(&o));
    assert!(err(&o).contains("set aside"), "{}", err(&o));
}

/// Files the shell start-up files source by path (`. ~/dotfiles/x.sh`),
/// existing or not yet, cannot be written from the workspace.
#[test]
fn files_sourced_by_shell_start_up_files_are_protected() {
    let t = TempDir::new("r3c-source");
    let home = t.dir("home");
    let ws = t.dir("home/dotfiles");
    t.file("home/dotfiles/aliases.sh", "alias ll='ls -l'\n");
    t.file(
        "home/.bashrc",
        "source ~/dotfiles/aliases.sh\n[ -f \"$HOME/dotfiles/local.sh\" ] && . \"$HOME/dotfiles/local.sh\"\n",
    );
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "echo 'touch /tmp/pwned' >> aliases.sh; echo 'touch /tmp/pwned' > local.sh; true",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(read(&ws.join("aliases.sh")), "alias ll='ls -l'\n");
    assert!(
        std::fs::read_to_string(ws.join("local.sh")).is_err(),
        "{}",
        err(&o)
    );
}

/// A link in a `PATH` directory leads into the workspace (`bin/foo ->
/// ../scripts/foo.sh`): its target is read-only. A virtual environment
/// whose `bin` is on PATH is read-only (a `.pth` would run in the host's
/// python), and is refused as a workspace.
#[test]
fn links_in_path_directories_and_environments_are_protected() {
    let t = TempDir::new("r3c-pathlinks");
    let home = t.dir("home");
    let ws = t.dir("home/proj");
    let tools = t.dir("tools");
    t.file("home/proj/scripts/foo.sh", "#!/bin/sh\necho orig\n");
    symlink(ws.join("scripts/foo.sh"), tools.join("foo")).unwrap();
    t.file("home/proj/.venv/pyvenv.cfg", "home = /usr/bin\n");
    let venv_bin = t.dir("home/proj/.venv/bin");
    t.dir("home/proj/.venv/lib");
    let o = run_command(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "echo 'echo PWNED' > scripts/foo.sh; echo 'import os' > .venv/lib/zz.pth; true",
        ],
    )
    .env("PATH", path_with(&[&tools, &venv_bin]))
    .output()
    .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(read(&ws.join("scripts/foo.sh")), "#!/bin/sh\necho orig\n");
    assert!(!ws.join(".venv/lib/zz.pth").exists(), "{}", err(&o));
    // The environment itself as the workspace.
    let venv = ws.join(".venv");
    let o = run_command(&venv, &home, &[], &["sh", "-c", "echo x > lib/zz.pth"])
        .env("PATH", path_with(&[&venv_bin]))
        .output()
        .unwrap();
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(
        err(&o).contains("--allow-non-project-workspace"),
        "{}",
        err(&o)
    );
    assert!(!venv.join("lib/zz.pth").exists());
}

/// A `PATH` directory missing before the run (`PATH_add
/// node_modules/.bin` in a fresh checkout) can be made by the run; a new
/// program there named like one later on PATH is set aside, others stay.
#[test]
fn a_missing_path_directory_can_be_made_but_cannot_shadow_programs() {
    let t = TempDir::new("r3c-pathnew");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let sys = t.dir("sys");
    t.file("sys/ls", "#!/bin/sh\n");
    executable(&sys.join("ls"));
    let bin = ws.join("node_modules/.bin");
    let o = run_command(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "mkdir -p node_modules/.bin && cd node_modules/.bin && \
             printf '#!/bin/sh\\necho PWNED\\n' > ls && cp ls jest && chmod +x ls jest",
        ],
    )
    .env("PATH", path_with(&[&bin, &sys]))
    .output()
    .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(bin.join("jest").exists(), "{}", err(&o));
    assert!(!bin.join("ls").exists(), "{}", err(&o));
}

/// A secret that lies inside a git repository in a grant is hidden, and
/// the report says its history may still hold it (not FullyEnforced).
#[test]
fn a_secret_inside_a_repository_lowers_the_report() {
    let t = TempDir::new("r3c-secret-repo");
    let home = t.dir("home");
    let ws = t.dir("home/dotfiles");
    git(&ws, &["init", "-q"]);
    t.file(
        "home/dotfiles/aws/credentials",
        "aws_secret_access_key=REPOSECRET\n",
    );
    t.dir("home/.aws");
    symlink(ws.join("aws/credentials"), home.join(".aws/credentials")).unwrap();
    let o = run_in(
        &ws,
        &home,
        &["--report"],
        &["sh", "-c", "cat aws/credentials; true"],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!out(&o).contains("REPOSECRET"), "{}", out(&o));
    assert!(err(&o).contains("git repository"), "{}", err(&o));
    assert!(!err(&o).contains("FullyEnforced"), "{}", err(&o));
}
