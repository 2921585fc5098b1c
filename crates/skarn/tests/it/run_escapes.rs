//! `skarn run`: the escape classes of the second attack round (grants
//! through symlinks, protected paths that do not exist yet, renamed
//! ancestors, caches the host executes later, owner-only files), each
//! attempted for real and checked from outside, across two runs where the
//! attack needs two.

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use crate::common::*;
use skarn_test_support::{TempDir, is_root};

fn sh(ws: &Path, home: &Path, flags: &[&str], script: &str) -> std::process::Output {
    run_in(ws, home, flags, &["sh", "-c", script])
}

#[test]
fn a_workspace_holding_home_is_refused_unless_allowed() {
    let t = TempDir::new("homews");
    let home = t.dir("home");
    let o = sh(&home, &home, &[], "true");
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(err(&o).contains("--allow-home-workspace"), "{}", err(&o));
    // An ancestor of home too.
    let o = sh(t.path(), &home, &[], "true");
    assert_eq!(code(&o), 2, "{}", err(&o));
}

#[test]
fn protected_paths_that_do_not_exist_cannot_be_created_even_in_home() {
    let t = TempDir::new("missing");
    let home = t.dir("home");
    std::fs::create_dir_all(home.join(".config")).unwrap();
    let attack = "mkdir -p ~/.config/skarn; echo '[run]' > ~/.config/skarn/config.toml; \
                  printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > ~/.gitconfig; \
                  mkdir -p ~/.ssh; echo key >> ~/.ssh/authorized_keys; \
                  mkdir -p ~/.aws; echo '[default]' > ~/.aws/config; \
                  echo //x/:_authToken=t > ~/.npmrc; mkdir -p ~/.local/bin; \
                  echo evil > ~/.local/bin/git; echo 'evil' > ~/.bashrc; true";
    for _ in 0..2 {
        let o = sh(&home, &home, &["--allow-home-workspace"], attack);
        assert_eq!(code(&o), 0, "{}", err(&o));
    }
    for p in [
        ".config/skarn",
        ".gitconfig",
        ".ssh",
        ".aws",
        ".npmrc",
        // (`.local/state/skarn` holds skarn's own record of granted
        // directories, written by skarn on the host before the run.)
        ".local/bin",
        ".bashrc",
    ] {
        assert!(
            std::fs::symlink_metadata(home.join(p)).is_err(),
            "{p} was created in the home directory"
        );
    }
    // Existing dot entries of the home are read-only in this mode (the
    // host's toolchains, caches and configurations live there).
    std::fs::create_dir_all(home.join(".cargo")).unwrap();
    std::fs::create_dir_all(home.join(".ipython/profile_default")).unwrap();
    let o = sh(
        &home,
        &home,
        &["--allow-home-workspace"],
        "echo evil > ~/.cargo/env; echo x > ~/.bash_aliases; echo y > ~/.tmux.conf; \
         mkdir -p ~/.ipython/profile_default/startup; echo z > ~/.config/new.conf; true",
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    for p in [
        ".cargo/env",
        ".bash_aliases",
        ".tmux.conf",
        ".ipython/profile_default/startup",
        ".config/new.conf",
    ] {
        assert!(
            std::fs::symlink_metadata(home.join(p)).is_err(),
            "{p} was created in the home directory"
        );
    }
    // Normal work in the home still succeeds.
    let o = sh(
        &home,
        &home,
        &["--allow-home-workspace"],
        "echo ok > notes.txt",
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(home.join("notes.txt")).unwrap(),
        "ok\n"
    );
}

#[test]
fn ancestors_of_protected_paths_cannot_be_renamed() {
    let t = TempDir::new("rename");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::create_dir_all(ws.join("conf/deep")).unwrap();
    std::fs::write(ws.join("conf/deep/secret.env"), "TOPSECRET").unwrap();
    let deny = ws.join("conf/deep/secret.env");
    let flags = ["--deny-read", deny.to_str().unwrap()];
    // Run 1 tries to move the masked file's ancestors aside.
    let o = sh(
        &ws,
        &home,
        &flags,
        "mv conf moved; mv conf/deep conf/moved; mv conf/deep/secret.env x; true",
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(ws.join("conf/deep/secret.env").exists(), "the secret moved");
    assert!(!ws.join("moved").exists() && !ws.join("x").exists());
    // Run 2 reads wherever it could have moved.
    let o = sh(
        &ws,
        &home,
        &flags,
        "cat conf/deep/secret.env moved/deep/secret.env x 2>&1",
    );
    assert!(!out(&o).contains("TOPSECRET"), "{}", out(&o));

    // Home as workspace: ~/.config cannot be moved from over its secrets.
    let home2 = t.dir("home2");
    std::fs::create_dir_all(home2.join(".config/gcloud")).unwrap();
    std::fs::write(home2.join(".config/gcloud/creds"), "TOPSECRET").unwrap();
    let o = sh(
        &home2,
        &home2,
        &["--allow-home-workspace"],
        "mv ~/.config ~/.cfg; cat ~/.config/gcloud/creds ~/.cfg/gcloud/creds 2>&1; true",
    );
    assert!(!out(&o).contains("TOPSECRET"), "{}", out(&o));
    assert!(home2.join(".config/gcloud/creds").exists());
    assert!(!home2.join(".cfg").exists());
}

#[test]
fn grants_through_planted_symlinks_never_reach_secrets() {
    let t = TempDir::new("symgrant");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "TOPSECRET").unwrap();
    let outside = t.dir("outside");
    std::fs::write(outside.join("data"), "OUTSIDE").unwrap();
    // An earlier run plants links in the workspace (writable).
    symlink(home.join(".ssh"), ws.join("keys")).unwrap();
    symlink(&outside, ws.join("pip-cache")).unwrap();
    // A later run grants them by their planted names.
    let keys = ws.join("keys");
    let o = sh(
        &ws,
        &home,
        &["--read", keys.to_str().unwrap(), "--report"],
        "cat keys/id_ed25519 2>&1; true",
    );
    assert!(!out(&o).contains("TOPSECRET"), "{}", out(&o));
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(err(&o).contains("could have planted it"), "{}", err(&o));
    // The same planted link as an explicit write grant (here: to the real
    // home) is refused too, and nothing is written through it.
    symlink(&home, ws.join("build")).unwrap();
    let build = ws.join("build");
    let o = sh(
        &ws,
        &home,
        &["--write", build.to_str().unwrap()],
        "echo evil > build/.tmux.conf",
    );
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(!home.join(".tmux.conf").exists());
    // A link outside any writable grant that names a secret is dropped.
    let link = t.join("keys-link");
    symlink(home.join(".ssh"), &link).unwrap();
    let o = sh(
        &ws,
        &home,
        &["--read", link.to_str().unwrap(), "--report"],
        &format!("cat {}/id_ed25519 2>&1; true", link.display()),
    );
    assert!(!out(&o).contains("TOPSECRET"), "{}", out(&o));
    assert!(
        err(&o).contains("dropped: it is a secret path"),
        "{}",
        err(&o)
    );

    // A preset cache planted as a link in a writable home is not followed.
    let home3 = t.dir("home3");
    std::fs::create_dir_all(home3.join(".cache")).unwrap();
    std::fs::write(home3.join("pyproject.toml"), "").unwrap();
    // (Planted by an earlier run in a writable home: today ~/.cache is
    // read-only when the workspace holds the home, so the link is made
    // here as that earlier run would have.)
    let o = sh(
        &home3,
        &home3,
        &["--allow-home-workspace"],
        &format!("ln -s {} ~/.cache/pip", outside.display()),
    );
    assert_ne!(code(&o), 0, "~/.cache was writable: {}", err(&o));
    symlink(&outside, home3.join(".cache/pip")).unwrap();
    let o = sh(
        &home3,
        &home3,
        &["--allow-home-workspace", "--report"],
        "cat ~/.cache/pip/data 2>&1; true",
    );
    assert!(!out(&o).contains("OUTSIDE"), "{}", out(&o));
    assert!(err(&o).contains("inside a writable grant"), "{}", err(&o));
}

#[test]
fn caches_are_private_layers_the_host_never_sees_changed() {
    let t = TempDir::new("cache");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::fs::write(ws.join("Cargo.toml"), "[package]\nname='x'\n").unwrap();
    let cache = home.join(".cargo/registry/cache/idx");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::write(cache.join("serde-1.0.0.crate"), "GOOD").unwrap();
    let o = std::process::Command::new(exe())
        .args(["run", "--no-config", "--preset", "rust", "--workspace"])
        .arg(&ws)
        .args(["--", "sh", "-c"])
        .arg(
            "echo EVIL > ~/.cargo/registry/cache/idx/serde-1.0.0.crate && \
         echo NEW > ~/.cargo/registry/cache/idx/new-0.1.0.crate && \
         cat ~/.cargo/registry/cache/idx/serde-1.0.0.crate && mkdir -p ~/.cache/pip && \
         echo wheel > ~/.cache/pip/w",
        )
        .env("HOME", &home)
        .env("CARGO_HOME", home.join(".cargo"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    // Writes work inside (a fetch of a new crate succeeds) ...
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(out(&o), "EVIL\n");
    // ... and never reach the host's cache.
    assert_eq!(
        std::fs::read_to_string(cache.join("serde-1.0.0.crate")).unwrap(),
        "GOOD"
    );
    assert!(!cache.join("new-0.1.0.crate").exists());
    assert!(!home.join(".cache").exists());
}

#[test]
fn files_closed_to_others_stay_closed_for_root() {
    if !is_root() {
        skarn_test_support::skip!("needs root: only root could read them in the first place");
    }
    let t = TempDir::new("ownonly");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let etc = TempDir::new_in("/etc", "ownonly");
    let dir = etc.path();
    let key = dir.join("wg0.conf");
    std::fs::write(&key, "PrivateKey=TOPSECRET").unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(dir.join("public.conf"), "PUBLIC").unwrap();
    let o = sh(
        &ws,
        &home,
        &[],
        &format!("cat {0}/wg0.conf {0}/public.conf 2>&1; true", dir.display()),
    );
    drop(etc);
    assert!(!out(&o).contains("TOPSECRET"), "{}", out(&o));
    assert!(out(&o).contains("PUBLIC"), "{}", out(&o));
}

/// The file `rel` in `dir`, written with `contents` and given `mode`.
fn write_mode(dir: &TempDir, rel: &str, contents: &str, mode: u32) -> std::path::PathBuf {
    let p = dir.file(rel, contents);
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    p
}

#[test]
fn files_the_host_closes_during_a_root_run_stay_closed() {
    if !is_root() {
        skarn_test_support::skip!("needs root: only root could read them in the first place");
    }
    let t = TempDir::new("ownlive");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let etc = TempDir::new_in("/etc", "live");
    let opt = TempDir::new_in("/opt", "live");
    // Deeper than any walk before the run looked, and world-readable.
    let deep = write_mode(&opt, "a/b/c/deep.key", "TOPSECRET-deep", 0o600);
    let public = write_mode(&etc, "public.conf", "PUBLIC", 0o644);
    let denied = write_mode(&etc, "denied.conf", "PUBLIC-denied", 0o644);
    let (new, renamed) = (etc.join("new.key"), etc.join("renamed.key"));
    let script = format!(
        "echo ready; while [ ! -e go ]; do sleep 0.02; done; \
         for f in {} {} {} {} {}; do cat $f 2>&1; echo; done",
        new.display(),
        renamed.display(),
        denied.display(),
        deep.display(),
        public.display()
    );
    let mut c = std::process::Command::new(exe())
        .args([
            "run",
            "--no-config",
            "--workspace-layer",
            "direct",
            "--report",
            "--timeout",
            "120s",
            "--deny-read",
        ])
        .arg(&denied)
        .arg("--workspace")
        .arg(&ws)
        .args(["--", "sh", "-c", &script])
        .env("HOME", &home)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(c.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
    assert_eq!(line, "ready\n");
    // While the command runs, the host adds a closed file, replaces one by
    // a rename (as passwd does with /etc/shadow) and swaps a closed file
    // in over a denied one (which detaches its mask).
    write_mode(&etc, "new.key", "TOPSECRET-new", 0o600);
    let tmp = write_mode(&etc, "renamed.tmp", "TOPSECRET-renamed", 0o600);
    std::fs::rename(&tmp, &renamed).unwrap();
    let tmp = write_mode(&etc, "denied.tmp", "TOPSECRET-denied", 0o600);
    std::fs::rename(&tmp, &denied).unwrap();
    std::fs::write(ws.join("go"), "").unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let o = c.wait_with_output().unwrap();
    drop((etc, opt));
    assert_eq!(code(&o), 0, "{rest}{}", err(&o));
    if !err(&o).contains("through an id mapping") {
        // Without idmapped binds (the filesystem refuses them) only the
        // walk before the run applies: files added later are not covered.
        skarn_test_support::skip!("idmapped binds unavailable here: {}", err(&o));
    }
    assert!(!rest.contains("TOPSECRET"), "{rest}");
    assert!(rest.contains("PUBLIC"), "{rest}");
    assert!(rest.contains("Permission denied"), "{rest}");
}

#[test]
fn without_idmapped_binds_the_walk_still_hides_closed_files() {
    if !is_root() {
        skarn_test_support::skip!("needs root");
    }
    let t = TempDir::new("ownwalk");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let etc = TempDir::new_in("/etc", "walk");
    let key = write_mode(&etc, "wg0.conf", "PrivateKey=TOPSECRET", 0o600);
    let public = write_mode(&etc, "public.conf", "PUBLIC", 0o644);
    // Deeper than the old two-level walk of /opt: the walk goes all the way
    // down where the id mapping is missing.
    let opt = std::path::Path::new("/opt")
        .is_dir()
        .then(|| TempDir::new_in("/opt", "walk"));
    let deep = opt
        .as_ref()
        .map(|o| write_mode(o, "app/conf/keys/db.key", "DEEPSECRET", 0o600));
    let o = std::process::Command::new(exe())
        .args(["run", "--no-config", "--report", "--workspace"])
        .arg(&ws)
        .args(["--", "sh", "-c"])
        .arg(format!(
            "cat {} {} {} 2>&1; true",
            key.display(),
            public.display(),
            deep.as_ref()
                .map_or(String::new(), |d| d.display().to_string())
        ))
        .env("HOME", &home)
        .env("SKARN_SANDBOX_SIMULATE_MISSING", "idmap")
        .output()
        .unwrap();
    drop(etc);
    drop(opt);
    assert!(!out(&o).contains("TOPSECRET"), "{}", out(&o));
    assert!(!out(&o).contains("DEEPSECRET"), "{}", out(&o));
    assert!(out(&o).contains("PUBLIC"), "{}", out(&o));
    assert!(err(&o).contains("hidden by a walk"), "{}", err(&o));
}

#[test]
fn write_grants_that_do_not_exist_yet_are_created() {
    let t = TempDir::new("mkwrite");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let out_dir = t.join("out/nested");
    let o = sh(
        &ws,
        &home,
        &["--write", out_dir.to_str().unwrap()],
        &format!("echo x > {}/f", out_dir.display()),
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(std::fs::read_to_string(out_dir.join("f")).unwrap(), "x\n");
}

#[test]
fn a_tools_temporary_files_in_tmp_give_no_warning() {
    let t = TempDir::new("scratch");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    // What test runners do: scratch directories in /tmp itself and temp
    // files beside the workspace.
    let o = sh(
        &ws,
        &home,
        &[],
        "mkdir /tmp/pytest-of-me /tmp/results && echo x > ../tmpa1b2c3 && echo y > ../build.tmp",
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!err(&o).contains("warning"), "{}", err(&o));
}

#[test]
fn writes_beside_a_workspace_in_tmp_are_not_lost_silently() {
    let t = TempDir::new("lost");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let o = sh(&ws, &home, &[], "mkdir ../wt && echo x > ../wt/f");
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!t.join("wt").exists());
    assert!(
        err(&o).contains("discarded") && err(&o).contains("/wt"),
        "{}",
        err(&o)
    );
}

#[test]
fn a_git_config_replaced_by_the_host_during_the_run_gains_no_hooks() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed on this host");
    }
    let t = TempDir::new("lapse");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let g = std::process::Command::new("git")
        .args(["init", "-q"])
        .arg(&ws)
        .status()
        .unwrap();
    assert!(g.success());
    // The direct mode's race with the host (the default layer keeps the
    // run's config in the layer, vetted key by key: run_workspace_layer.rs);
    // the script also waits for a file the host makes (ADR 0226).
    let mut c = std::process::Command::new(exe())
        .args([
            "run",
            "--no-config",
            "--workspace-layer",
            "direct",
            "--workspace",
        ])
        .arg(&ws)
        .args([
            "--",
            "sh",
            "-c",
            "echo ready; while [ ! -e stop ]; do \
             printf '[core]\\n\\tfsmonitor = touch PWNED\\n' >> .git/config 2>/dev/null; \
             sleep 0.02; done",
        ])
        .env("HOME", &home)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(c.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, "ready\n");
    // The host rewrites the config by rename, as git does.
    let g = std::process::Command::new("git")
        .arg("-C")
        .arg(&ws)
        .args(["config", "user.name", "host"])
        .status()
        .unwrap();
    assert!(g.success());
    for _ in 0..200 {
        let cfg = std::fs::read_to_string(ws.join(".git/config")).unwrap_or_default();
        if cfg.contains("fsmonitor") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    std::fs::write(ws.join("stop"), "").unwrap();
    let o = c.wait_with_output().unwrap();
    let cfg = std::fs::read_to_string(ws.join(".git/config")).unwrap();
    assert!(!cfg.contains("fsmonitor"), "{cfg}");
    let e = String::from_utf8_lossy(&o.stderr);
    if std::fs::read_dir(ws.join(".git"))
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().contains("skarn-rejected"))
    {
        assert!(e.contains("core.fsmonitor"), "{e}");
    }
}

#[test]
fn nested_repositories_are_protected_and_new_ones_vetted() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is not installed on this host");
    }
    let t = TempDir::new("nested");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let lib = t.dir("ws/vendor/lib");
    let g = std::process::Command::new("git")
        .args(["init", "-q"])
        .arg(&lib)
        .status()
        .unwrap();
    assert!(g.success());
    // Per-worktree config on: a new config.worktree would be read by git.
    let g = std::process::Command::new("git")
        .arg("-C")
        .arg(&lib)
        .args(["config", "extensions.worktreeConfig", "true"])
        .status()
        .unwrap();
    assert!(g.success());
    let o = sh(
        &ws,
        &home,
        &[],
        "printf '#!/bin/sh\\ntouch PWNED\\n' > vendor/lib/.git/hooks/pre-commit; \
         printf '[core]\\n\\tfsmonitor = touch PWNED\\n' >> vendor/lib/.git/config; \
         git init -q --bare .cache-x; git -C .cache-x config core.fsmonitor 'touch PWNED'; \
         mkdir -p src; echo 'gitdir: ../.cache-x' > src/.git; \
         git init -q clean; mkdir -p vendor/lib/.git/modules/sub/hooks; \
         printf '#!/bin/sh\\ntouch PWNED\\n' > vendor/lib/.git/modules/sub/hooks/post-checkout; \
         printf '[core]\\n\\tfsmonitor = touch PWNED\\n' > vendor/lib/.git/modules/sub/config; \
         printf '[core]\\n\\tfsmonitor = touch PWNED\\n' > vendor/lib/.git/config.worktree; true",
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!lib.join(".git/hooks/pre-commit").exists());
    // A submodule's git directory (own hooks and config) cannot be planted
    // (the direct mode reserves `.git/modules`; the layer vets what lands
    // there: empty directories may, a hook or code-running key may not).
    let sub = lib.join(".git/modules/sub");
    assert!(!sub.join("hooks/post-checkout").exists(), "{}", err(&o));
    let sub_cfg = std::fs::read_to_string(sub.join("config")).unwrap_or_default();
    assert!(!sub_cfg.contains("fsmonitor"), "{sub_cfg}");
    let wt = std::fs::read_to_string(lib.join(".git/config.worktree")).unwrap_or_default();
    assert!(!wt.contains("fsmonitor"), "{wt}");
    let cfg = std::fs::read_to_string(lib.join(".git/config")).unwrap();
    assert!(!cfg.contains("fsmonitor"), "{cfg}");
    // The planted gitdir link is set aside (the direct mode) or not applied
    // (the layer), and said; a clean new repository is kept.
    assert!(!ws.join("src/.git").exists(), "{}", err(&o));
    assert!(
        err(&o).contains("set aside") || err(&o).contains("src/.git"),
        "{}",
        err(&o)
    );
    assert!(ws.join("clean/.git/HEAD").exists());
    // The bare repository with a code-running setting is set aside too.
    assert!(!ws.join(".cache-x").exists(), "{}", err(&o));
}

#[test]
fn a_secret_linked_to_a_missing_place_in_the_workspace_cannot_be_created() {
    // ~/.aws -> <ws>/awsdir, which does not exist yet: a command creating
    // awsdir/credentials would write the host's ~/.aws/credentials (and
    // an AWS config can run programs on the host).
    let t = TempDir::new("dangling");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    std::os::unix::fs::symlink(ws.join("awsdir"), home.join(".aws")).unwrap();
    // ~/.gnupg -> <ws>/a/../gpg: leads into the workspace once `a` exists.
    std::os::unix::fs::symlink(ws.join("a/../gpg"), home.join(".gnupg")).unwrap();
    let o = sh(
        &ws,
        &home,
        &[],
        "mkdir awsdir; echo '[default]' > awsdir/credentials; \
         mkdir a; mkdir gpg; echo S > gpg/pubring.kbx; true",
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(
        !ws.join("awsdir/credentials").exists(),
        "the command wrote the host's ~/.aws/credentials"
    );
    assert!(!ws.join("awsdir").exists(), "awsdir was left behind");
    assert!(
        std::fs::read(home.join(".gnupg/pubring.kbx")).is_err(),
        "the command wrote a file the host reads as ~/.gnupg/pubring.kbx"
    );
}

#[test]
fn new_dot_files_in_a_home_workspace_are_moved_aside() {
    let t = TempDir::new("dotnew");
    let home = t.dir("home");
    let o = sh(
        &home,
        &home,
        &["--allow-home-workspace"],
        "printf '#env\\nLESSOPEN=|touch PWNED\\n' > ~/.lesskey; echo x > ~/.psqlrc; echo ok > plain.txt",
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!home.join(".lesskey").exists() && !home.join(".psqlrc").exists());
    assert!(err(&o).contains(".lesskey"), "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(home.join("plain.txt")).unwrap(),
        "ok\n"
    );
}

/// A directory (or a path handle) given as a standard descriptor is no
/// stream: through it `openat(0, ...)` and `/proc/self/fd/0/...` would
/// resolve names in the caller's file tree, past every mask and read-only
/// bind of the sandbox. The command gets /dev/null there instead.
#[test]
fn standard_descriptors_that_are_directories_reach_nothing() {
    use std::os::unix::fs::OpenOptionsExt;
    let t = TempDir::new("stdio-dir");
    let home = t.dir("home");
    let ws = t.dir("ws");
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::write(ws.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::create_dir_all(ws.join(".git/objects")).unwrap();
    let outside = t.dir("outside");
    std::fs::write(outside.join("secret.txt"), "SECRET-OUTSIDE\n").unwrap();
    let script = "cat /proc/self/fd/0/secret.txt /proc/self/fd/0/../outside/secret.txt; \
                  echo x > /proc/self/fd/0/planted; \
                  echo x > /proc/self/fd/0/../ws/.git/hooks/pre-commit; \
                  echo x > /proc/self/fd/0/.git/hooks/pre-commit; true";
    let handles = [
        std::fs::File::open(&outside).unwrap(),
        std::fs::File::open(&ws).unwrap(),
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_DIRECTORY)
            .open(&outside)
            .unwrap(),
    ];
    for (i, h) in handles.into_iter().enumerate() {
        let o = run_command(&ws, &home, &["--json"], &["sh", "-c", script])
            .stdin(std::process::Stdio::from(h))
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{}", err(&o));
        assert!(!out(&o).contains("SECRET"), "handle {i}: {}", out(&o));
        assert!(!outside.join("planted").exists(), "handle {i}");
        assert!(!ws.join("planted").exists(), "handle {i}");
        assert!(
            !ws.join(".git/hooks/pre-commit").exists(),
            "handle {i}: a hook was planted through the standard input"
        );
        assert!(
            err(&o).contains("replaced by /dev/null"),
            "handle {i}: {}",
            err(&o)
        );
    }
}

/// A file the sandbox keeps read-only inside the workspace, given as a
/// standard descriptor, could be reopened for writing through
/// /proc/self/fd (it is the caller's mount, not the read-only bind): the
/// run is refused. Ordinary files still work both ways.
#[test]
fn protected_files_given_as_standard_descriptors_are_refused() {
    let t = TempDir::new("stdio-file");
    let home = t.dir("home");
    let ws = t.dir("ws");
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(ws.join(".git/objects")).unwrap();
    std::fs::write(ws.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(ws.join(".git/config"), "[core]\n\tbare = false\n").unwrap();
    std::fs::write(ws.join("input.txt"), "line one\n").unwrap();
    let script = "echo '#planted' >> /proc/self/fd/0; cat";
    let o = run_command(&ws, &home, &[], &["sh", "-c", script])
        .stdin(std::fs::File::open(ws.join(".git/config")).unwrap())
        .output()
        .unwrap();
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(err(&o).contains("give it through a pipe"), "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        "[core]\n\tbare = false\n"
    );
    // An ordinary file of the workspace as stdin and stdout.
    let o = run_command(&ws, &home, &[], &["sh", "-c", "cat; echo written"])
        .stdin(std::fs::File::open(ws.join("input.txt")).unwrap())
        .stdout(std::fs::File::create(ws.join("out.txt")).unwrap())
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(ws.join("out.txt")).unwrap(),
        "line one\nwritten\n"
    );
}

/// A directory git takes for a bare repository through `commondir` (HEAD
/// here, objects, refs, config and hooks in the directory it names):
/// before the run its common config and hooks are read-only; one created
/// during the run is set aside.
#[test]
fn repositories_split_through_commondir_are_protected_and_vetted() {
    let t = TempDir::new("commondir");
    let home = t.dir("home");
    let ws = t.dir("ws");
    for d in ["X", "Y/objects", "Y/refs/heads", "Y/hooks"] {
        std::fs::create_dir_all(ws.join(d)).unwrap();
    }
    std::fs::write(ws.join("X/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(ws.join("X/commondir"), "../Y\n").unwrap();
    std::fs::write(ws.join("Y/config"), "[core]\n\tbare = true\n").unwrap();
    let o = sh(
        &ws,
        &home,
        &[],
        "printf '[core]\\n\\tpager = touch /tmp/p\\n' >> Y/config; \
         echo '#!/bin/sh' > Y/hooks/pre-commit; \
         mkdir -p A B/objects B/refs; echo 'ref: refs/heads/main' > A/HEAD; echo ../B > A/commondir; true",
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(ws.join("Y/config")).unwrap(),
        "[core]\n\tbare = true\n"
    );
    assert!(!ws.join("Y/hooks/pre-commit").exists());
    assert!(
        !ws.join("A").exists(),
        "the new split repository was not set aside"
    );
}
