//! `skarn run`: what may be a workspace. Directories of the home that host
//! programs read or run on their own, shared temporary directories,
//! system directories and `PATH` directories are refused (named or
//! reached through the current directory), each with the flag that
//! allows it; when allowed, they are protected like a home workspace.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::*;
use skarn_test_support::TempDir;

/// `skarn run` started in `dir` without `--workspace` (the current
/// directory chooses), HOME=home.
fn run_from(dir: &Path, home: &Path, flags: &[&str], script: &str) -> std::process::Output {
    Command::new(exe())
        .arg("run")
        .arg("--no-config")
        .args(flags)
        .args(["--", "sh", "-c", script])
        .current_dir(dir)
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn home_directories_that_host_programs_run_from_are_refused() {
    let t = TempDir::new("wskind-home");
    let home = t.dir("home");
    for rel in [
        ".config/systemd/user",
        ".config/fish/conf.d",
        ".ipython/profile_default/startup",
        ".bashrc.d",
        ".local/share/applications",
        "bin",
        "go/bin",
    ] {
        let dir = t.dir(format!("home/{rel}"));
        let o = run_from(&dir, &home, &[], "echo '[Service]' > planted.service");
        assert_eq!(code(&o), 2, "{rel}: {}", err(&o));
        assert!(
            err(&o).contains("--allow-home-workspace"),
            "{rel}: {}",
            err(&o)
        );
        assert!(!dir.join("planted.service").exists(), "{rel}");
        // Named with --workspace: the same.
        let o = run_in(&dir, &home, &[], &["sh", "-c", "echo x > planted"]);
        assert_eq!(code(&o), 2, "{rel}: {}", err(&o));
        assert!(!dir.join("planted").exists(), "{rel}");
    }
}

#[test]
fn a_directory_a_home_dotfile_links_into_is_refused() {
    let t = TempDir::new("wskind-linked");
    let home = t.dir("home");
    let nvim = t.dir("home/dotfiles/nvim");
    t.dir("home/.config");
    std::os::unix::fs::symlink(&nvim, home.join(".config/nvim")).unwrap();
    let o = run_from(&nvim, &home, &[], "echo 'os.execute(1)' > init.lua");
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(err(&o).contains("--allow-home-workspace"), "{}", err(&o));
    assert!(!nvim.join("init.lua").exists());
}

#[test]
fn shared_system_and_path_directories_are_refused() {
    let t = TempDir::new("wskind-shared");
    let home = t.dir("home");
    let tools = t.dir("tools");
    let path = format!(
        "{}:{}",
        tools.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // /tmp itself (host sockets live there), from the current directory.
    let o = run_from(Path::new("/tmp"), &home, &[], "true");
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(
        err(&o).contains("--allow-non-project-workspace"),
        "{}",
        err(&o)
    );
    for ws in ["/var/tmp", "/var/lib", "/srv", "/mnt", "/run"] {
        if Path::new(ws).is_dir() {
            let o = run_in(Path::new(ws), &home, &[], &["true"]);
            assert_eq!(code(&o), 2, "{ws}: {}", err(&o));
        }
    }
    // A directory on PATH: a planted `ls` would run on the host.
    let o = run_command(&tools, &home, &[], &["sh", "-c", "echo x > ls"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(
        err(&o).contains("--allow-non-project-workspace"),
        "{}",
        err(&o)
    );
    assert!(!tools.join("ls").exists());
}

/// Allowed, a non-project workspace is protected like a home: its
/// existing dot entries stay read-only, shell start-up files cannot be
/// created, new dot entries are set aside; ordinary files work.
#[test]
fn an_allowed_non_project_workspace_is_protected_like_a_home() {
    let t = TempDir::new("wskind-allowed");
    let home = t.dir("home");
    let tools = t.dir("tools");
    t.file("tools/.profile", "# profile\n");
    let path = format!(
        "{}:{}",
        tools.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = run_command(
        &tools,
        &home,
        &["--allow-non-project-workspace"],
        &[
            "sh",
            "-c",
            "echo evil >> .profile; echo evil > .bashrc; echo x > .newrc; echo ok > tool; true",
        ],
    )
    .env("PATH", &path)
    .output()
    .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(tools.join(".profile")).unwrap(),
        "# profile\n"
    );
    assert!(!tools.join(".bashrc").exists());
    assert!(!tools.join(".newrc").exists());
    assert_eq!(std::fs::read_to_string(tools.join("tool")).unwrap(), "ok\n");
}

/// Attack atk22c F4: another account's home (a directory of /home, any
/// home of /etc/passwd) is not a project: as root a run there could plant
/// that account's start-up files, keys and user units.
#[test]
fn another_accounts_home_is_refused() {
    if !skarn_test_support::is_root() {
        skarn_test_support::skip!("only root may make a directory in /home");
    }
    let t = TempDir::new("other-home");
    let home = t.dir("home");
    let other = Path::new("/home").join(format!("skarn-test-{}", std::process::id()));
    std::fs::create_dir_all(&other).unwrap();
    struct Gone<'a>(&'a Path);
    impl Drop for Gone<'_> {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(self.0);
        }
    }
    let _gone = Gone(&other);
    let o = run_from(&other, &home, &[], "touch .bash_profile");
    assert_ne!(code(&o), 0, "{}", err(&o));
    assert!(
        err(&o).contains("home directory of the account"),
        "{}",
        err(&o)
    );
    assert!(!other.join(".bash_profile").exists());
    // Its configuration directory too.
    let cfg = other.join(".config");
    std::fs::create_dir_all(&cfg).unwrap();
    let o = run_from(&cfg, &home, &[], "touch x");
    assert_ne!(code(&o), 0, "{}", err(&o));
    assert!(!cfg.join("x").exists());
}
