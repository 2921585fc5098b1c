//! `skarn run`, attack round 3: the boundary is the user's. Home files and
//! skarn's own configuration that link into a writable grant, secrets
//! linked the same way, caches the host trusts, places git's global
//! configuration or `PATH` make the host run. Each attempted for real and
//! checked from outside (the host's file unchanged, not created).

use std::os::unix::fs::symlink;
use std::path::Path;

use crate::common::*;
use skarn_test_support::TempDir;

fn sh(ws: &Path, home: &Path, flags: &[&str], script: &str) -> std::process::Output {
    run_in(ws, home, flags, &["sh", "-c", script])
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| format!("<{e}>"))
}

/// A dotfiles repository as the workspace: `~/.bashrc`, `~/.config/nvim`
/// (a directory link), `~/.config/skarn/config.toml`, `~/.ssh/config`, a
/// file the global git configuration includes, and a start-up file whose
/// link dangles into the workspace. The run can change none of them, and
/// the next run does not get the network from skarn's own configuration.
#[test]
fn home_files_linking_into_the_workspace_stay_read_only() {
    let t = TempDir::new("links-home");
    let home = t.dir("home");
    let ws = t.dir("home/dotfiles");
    t.file("home/dotfiles/bashrc", "# bashrc\n");
    t.file("home/dotfiles/nvim/init.lua", "-- nvim\n");
    t.file("home/dotfiles/skarn.toml", "[run]\n");
    t.file("home/dotfiles/ssh_config", "Host *\n");
    t.file("home/dotfiles/git.inc", "[user]\n name = t\n");
    t.file(
        "home/dotfiles/gitconfig",
        "[include]\n path = ~/dotfiles/git.inc\n",
    );
    t.dir("home/.config/skarn");
    t.dir("home/.ssh");
    symlink(ws.join("bashrc"), home.join(".bashrc")).unwrap();
    symlink(ws.join("nvim"), home.join(".config/nvim")).unwrap();
    symlink(
        ws.join("skarn.toml"),
        home.join(".config/skarn/config.toml"),
    )
    .unwrap();
    symlink(ws.join("ssh_config"), home.join(".ssh/config")).unwrap();
    symlink(ws.join("gitconfig"), home.join(".gitconfig")).unwrap();
    symlink(ws.join("profile"), home.join(".profile")).unwrap();
    let o = sh(
        &ws,
        &home,
        &["--report"],
        "for f in bashrc nvim/init.lua skarn.toml ssh_config git.inc gitconfig; do \
           echo 'touch /tmp/PWNED' >> $f; done; \
         printf '[run]\\nnet = \"all\"\\n' > skarn.toml; \
         echo planted > nvim/new.lua; echo 'touch PWNED' > profile; true",
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    for (f, want) in [
        ("bashrc", "# bashrc\n"),
        ("nvim/init.lua", "-- nvim\n"),
        ("skarn.toml", "[run]\n"),
        ("ssh_config", "Host *\n"),
        ("git.inc", "[user]\n name = t\n"),
        ("gitconfig", "[include]\n path = ~/dotfiles/git.inc\n"),
    ] {
        assert_eq!(read(&ws.join(f)), want, "{f} changed: {}", err(&o));
    }
    assert!(!ws.join("nvim/new.lua").exists());
    assert!(
        !ws.join("profile").exists(),
        "a dangling start-up link was filled"
    );
    // The report names the links followed and the protection applied:
    // the workspace, a start-up file's directory, is read-only.
    let e = err(&o);
    assert!(e.contains("home/.bashrc ("), "{e}");
    assert!(e.contains("is read-only for this run"), "{e}");
}

/// Secrets whose entries link into the workspace or a write grant are
/// unreadable there (the directory holding them is a real directory).
#[test]
fn secrets_linking_into_grants_are_hidden() {
    let t = TempDir::new("links-secret");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let other = t.dir("other");
    t.file("ws/aws-creds", "AKIA-SECRET-1\n");
    t.file("ws/gh.yml", "oauth_token: SECRET-2\n");
    t.file("other/kubeconfig", "token: SECRET-3\n");
    t.dir("home/.aws");
    t.dir("home/.config/gh");
    t.dir("home/.kube");
    symlink(ws.join("aws-creds"), home.join(".aws/credentials")).unwrap();
    symlink(ws.join("gh.yml"), home.join(".config/gh/hosts.yml")).unwrap();
    symlink(other.join("kubeconfig"), home.join(".kube/config")).unwrap();
    let w = other.display().to_string();
    let o = sh(
        &ws,
        &home,
        &["--write", &w],
        &format!("cat aws-creds gh.yml {w}/kubeconfig; echo EVIL > aws-creds; true"),
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    let seen = out(&o);
    assert!(
        !seen.contains("SECRET"),
        "a linked secret was readable: {seen}"
    );
    assert_eq!(read(&ws.join("aws-creds")), "AKIA-SECRET-1\n");
}

/// cargo's `.global-cache` database and its lock files are private copies:
/// a row planted inside never reaches the host's cargo.
#[test]
fn cargo_cache_files_are_private_copies() {
    let t = TempDir::new("links-cargo");
    let home = t.dir("home");
    let ws = t.dir("ws");
    t.file("ws/Cargo.toml", "[package]\nname = \"x\"\n");
    let db = t.file("home/.cargo/.global-cache", "GOOD-DB");
    let lock = t.file("home/.cargo/.package-cache", "");
    let o = std::process::Command::new(exe())
        .args(["run", "--no-config", "--preset", "rust", "--workspace"])
        .arg(&ws)
        .args(["--", "sh", "-c"])
        .arg(
            "echo EVIL-ROW > ~/.cargo/.global-cache && cat ~/.cargo/.global-cache && \
             echo L > ~/.cargo/.package-cache",
        )
        .env("HOME", &home)
        .env("CARGO_HOME", home.join(".cargo"))
        .env_remove("CARGO_TARGET_DIR")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    // Writable inside (cargo takes its lock, updates its database) ...
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(out(&o), "EVIL-ROW\n");
    // ... and the host's files never change.
    assert_eq!(read(&db), "GOOD-DB");
    assert_eq!(read(&lock), "");
}

/// A program the global git configuration names (a pager in a dotfiles
/// checkout) and a `PATH` directory inside the workspace (direnv's
/// `PATH_add bin`) cannot be planted or changed.
#[test]
fn programs_the_host_runs_from_grants_cannot_be_planted() {
    let t = TempDir::new("links-programs");
    let home = t.dir("home");
    let ws = t.dir("ws");
    t.file("ws/tools/pager", "#!/bin/sh\ncat\n");
    t.file(
        "home/.gitconfig",
        format!("[core]\n pager = {}/tools/pager -R\n", ws.display()),
    );
    t.file("ws/xdg/fish/config.fish", "# fish\n");
    t.file("ws/kube.yaml", "token: KUBE-SECRET\n");
    let path = format!(
        "{}/bin:{}",
        ws.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = run_command(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "echo 'touch PWNED' > tools/pager; mkdir -p bin; \
             printf '#!/bin/sh\\ntouch PWNED\\n' > bin/ls; chmod +x bin/ls; \
             echo evil >> xdg/fish/config.fish; cat kube.yaml; true",
        ],
    )
    .env("PATH", &path)
    .env("XDG_CONFIG_HOME", ws.join("xdg"))
    .env("KUBECONFIG", ws.join("kube.yaml"))
    .output()
    .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(read(&ws.join("tools/pager")), "#!/bin/sh\ncat\n");
    assert!(!ws.join("bin/ls").exists(), "a program was planted on PATH");
    assert_eq!(read(&ws.join("xdg/fish/config.fish")), "# fish\n");
    assert!(!out(&o).contains("KUBE-SECRET"), "{}", out(&o));
}

/// A HOME naming a missing directory is never created (as root that
/// would be a new directory under `/`), with or without `--compress`.
#[test]
fn a_missing_home_is_never_created() {
    let t = TempDir::new("links-nohome");
    let ws = t.dir("ws");
    let home = t.join("missing/home");
    for flags in [&[][..], &["--compress"][..]] {
        let o = run_in(&ws, &home, flags, &["true"]);
        assert_eq!(code(&o), 0, "{}", err(&o));
        assert!(!t.join("missing").exists(), "HOME was created ({flags:?})");
    }
}

/// Every program git's global configuration names inside the workspace
/// (editor, sequence editor, template directory, credential helper,
/// external diff, merge tool, pager from an included file) stays as it
/// was: host git runs them on its own.
#[test]
fn git_config_programs_in_the_workspace_cannot_be_planted() {
    let t = TempDir::new("links-gitprogs");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let tools = ["editor", "seqed", "cred", "diff", "merge", "pager"];
    for f in tools {
        t.file(format!("ws/tools/{f}"), "#!/bin/sh\ntrue\n");
    }
    t.dir("ws/tpl/hooks");
    let w = ws.display();
    t.file(
        "home/.gitconfig",
        format!(
            "[core]\n editor = {w}/tools/editor\n[sequence]\n editor = \"{w}/tools/seqed\" -x\n\
             [init]\n templateDir = {w}/tpl\n[credential]\n helper = {w}/tools/cred\n\
             [diff]\n external = {w}/tools/diff\n[mergetool \"m\"]\n cmd = {w}/tools/merge $LOCAL\n\
             [include]\n path = {}/home/inc.cfg\n",
            t.path().display()
        ),
    );
    t.file(
        "home/inc.cfg",
        format!("[core]\n pager = {w}/tools/pager\n"),
    );
    let o = sh(
        &ws,
        &home,
        &[],
        "for f in editor seqed cred diff merge pager; do \
           echo 'touch /tmp/PWNED' > tools/$f; done; \
         echo 'touch PWNED' > tpl/hooks/post-checkout; true",
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    for f in tools {
        assert_eq!(
            read(&ws.join("tools").join(f)),
            "#!/bin/sh\ntrue\n",
            "{f} changed: {}",
            err(&o)
        );
    }
    assert!(
        !ws.join("tpl/hooks/post-checkout").exists(),
        "a hook was planted in the template directory: {}",
        err(&o)
    );
}
