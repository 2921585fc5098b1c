//! Attack atk22k, the copy-on-write layer's share (b22a), on the default
//! settings, as root and as uid 65534, judged from outside:
//! - F5: modes a run sets are not put back wider than the host's: another
//!   local account cannot then plant a hook that host git runs;
//! - F12: a `package.json` (or `package.yaml`) replaced by a link is not
//!   put back (the hook managers follow it and run what it names);
//! - F15, F15b: a Git LFS object that is not the object it names (host
//!   `git lfs` checks it out in place of the committed file) and a
//!   git-crypt key are not put back, in nested repositories too.

use crate::common::*;
use crate::support_secret_sources::{as_user, is_root};
use skarn_test_support::TempDir;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

/// Whether the runs are made as the caller (`false`) or as uid 65534
/// (`true`, root only).
fn owners() -> Vec<bool> {
    if is_root() {
        vec![false, true]
    } else {
        vec![false]
    }
}

/// `skarn run` of `script` in `ws` on the default settings, as the owner.
fn run_as(nobody: bool, t: &TempDir, ws: &Path, home: &Path, script: &str) -> String {
    let c = run_command(ws, home, &[], &["sh", "-c", script]);
    let mut c = if nobody { as_user(c, t.path()) } else { c };
    let o = c.output().unwrap();
    let all = format!("{}{}", out(&o), err(&o));
    assert!(out(&o).contains("ran"), "the run did not run: {all}");
    all
}

/// `cmd` on the host as the owner of the workspace.
fn host(nobody: bool, t: &TempDir, cmd: Command) -> std::process::Output {
    let mut c = if nobody { as_user(cmd, t.path()) } else { cmd };
    c.output().unwrap()
}

/// Host git in `dir`, no configuration but `home`'s.
fn host_git(dir: &Path, home: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("git");
    c.arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", home);
    c
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().permissions().mode() & 0o7777
}

fn has(prog: &str) -> bool {
    Command::new(prog)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// F5: `chmod 0777 .git`, `chmod 0666 .git/config`, new entries made
/// 0777, a sticky bit: none reaches the workspace wider than the host's
/// entry was (a new one: no group or other write, no set-ID bits; the
/// run's seccomp filter refuses set-ID bits, the unit tests of the layer
/// cover them). Narrowing applies, and a mode the host already had is kept.
#[test]
fn modes_a_run_widens_are_not_put_back() {
    for nobody in owners() {
        let t = TempDir::new("b22a-f5");
        let (ws, home) = (t.dir("ws"), t.dir("home"));
        git(&ws, &["init", "-q"]);
        git(&ws, &["commit", "-q", "--allow-empty", "-m", "first"]);
        std::fs::write(ws.join("private"), "p\n").unwrap();
        std::fs::write(ws.join("tool.sh"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(ws.join("tool.sh"), PermissionsExt::from_mode(0o755)).unwrap();
        let shared = t.dir("ws/shared");
        std::fs::set_permissions(&shared, PermissionsExt::from_mode(0o775)).unwrap();
        let script = "chmod 0777 .git; chmod 0666 .git/config; chmod 0777 .git/hooks; \
                      chmod 0777 .git/refs; \
                      mkdir -p new/deep; chmod 0777 new new/deep; printf x > new/f; \
                      chmod 0777 new/f; printf y > g; chmod 0666 g; chmod 0600 private; \
                      chmod 1777 shared; chmod 0777 tool.sh; echo ran";
        let said = run_as(nobody, &t, &ws, &home, script);
        for (p, want) in [
            (".git", 0o755),
            (".git/config", 0o644),
            (".git/hooks", 0o755),
            (".git/refs", 0o755),
            ("new", 0o755),
            ("new/deep", 0o755),
            ("new/f", 0o755),
            ("g", 0o644),
            ("private", 0o600),
            ("shared", 0o775),
            ("tool.sh", 0o755),
        ] {
            assert_eq!(mode(&ws.join(p)), want, "{p} (as 65534: {nobody}): {said}");
        }
    }
}

/// F5 from outside: after a run's `chmod`, another local account (uid
/// 4242) tries to point the repository's hooks at its own directory; the
/// owner's next `git commit` on the host must not run its hook.
#[test]
fn another_account_cannot_plant_a_hook_after_a_runs_chmod() {
    if !is_root() {
        skarn_test_support::skip!("another local account needs root (setpriv)");
    }
    for nobody in owners() {
        let t = TempDir::new("b22a-f5-other");
        let (ws, home) = (t.dir("ws"), t.dir("home"));
        git(&ws, &["init", "-q"]);
        git(&ws, &["commit", "-q", "--allow-empty", "-m", "first"]);
        let marks = t.dir("marks");
        std::fs::set_permissions(&marks, PermissionsExt::from_mode(0o777)).unwrap();
        let theirs = t.dir("theirs");
        let mark = marks.join("planted-hook-ran");
        std::fs::write(
            theirs.join("pre-commit"),
            format!("#!/bin/sh\ntouch {}\n", mark.display()),
        )
        .unwrap();
        std::fs::set_permissions(theirs.join("pre-commit"), PermissionsExt::from_mode(0o755))
            .unwrap();
        let said = run_as(
            nobody,
            &t,
            &ws,
            &home,
            "chmod 0777 .git; chmod 0666 .git/config; echo ran",
        );
        // (`as_user` gave the tree to 65534: the other account's files
        // are given back to it.)
        let st = Command::new("chown")
            .args(["-R", "4242:4242"])
            .arg(&theirs)
            .status()
            .unwrap();
        assert!(st.success());
        let line = format!("[core]\n\thooksPath = {}\n", theirs.display());
        let attack = format!(
            "cd {ws} && (printf '{line}' >> .git/config) 2>/dev/null || \
             (cp .git/config .git/c.new && printf '{line}' >> .git/c.new && \
              mv -f .git/c.new .git/config); true",
            ws = ws.display(),
            line = line.replace('\n', "\\n").replace('\t', "\\t"),
        );
        let o = Command::new("setpriv")
            .args(["--reuid=4242", "--regid=4242", "--clear-groups", "--"])
            .args(["sh", "-c", &attack])
            .output()
            .unwrap();
        let c = host(
            nobody,
            &t,
            host_git(
                &ws,
                &home,
                &["commit", "-q", "--allow-empty", "-m", "second"],
            ),
        );
        assert!(
            !mark.exists(),
            "as 65534: {nobody}: another account's hook ran on the owner's commit: {said}\n{}{}\n{}",
            out(&o),
            err(&o),
            err(&c)
        );
        assert!(c.status.success(), "{}", err(&c));
    }
}

/// F12: a `package.json` (and lint-staged's `package.yaml`) replaced in
/// the run by a link to a workspace file no one judges, a new
/// `package.json` made a link, or a FIFO: none is put back; a plain edit
/// of `package.json` is.
#[test]
fn a_package_json_replaced_by_a_link_is_not_put_back() {
    for nobody in owners() {
        let t = TempDir::new("b22a-f12");
        let (ws, home) = (t.dir("ws"), t.dir("home"));
        git(&ws, &["init", "-q"]);
        let host_text = "{\"name\":\"p\",\"version\":\"1.0.0\"}\n";
        std::fs::write(ws.join("package.json"), host_text).unwrap();
        std::fs::create_dir_all(ws.join("packages/a")).unwrap();
        std::fs::create_dir_all(ws.join("packages/b")).unwrap();
        let script = "echo '{\"lint-staged\":{\"*.js\":\"touch /tmp/never\"}}' > pkg.json; \
                      printf 'lint-staged:\\n  \"*.js\": touch /tmp/never\\n' > cfg.yml; \
                      ln -sf pkg.json package.json; ln -s ../../cfg.yml packages/a/package.yaml; \
                      ln -s ../../pkg.json packages/a/package.json; \
                      mkfifo packages/b/package.json; echo ran";
        let said = run_as(nobody, &t, &ws, &home, script);
        let md = std::fs::symlink_metadata(ws.join("package.json")).unwrap();
        assert!(
            md.is_file(),
            "as 65534: {nobody}: package.json is a link: {said}"
        );
        assert_eq!(
            std::fs::read_to_string(ws.join("package.json")).unwrap(),
            host_text,
            "{said}"
        );
        for p in [
            "packages/a/package.yaml",
            "packages/a/package.json",
            "packages/b/package.json",
        ] {
            assert!(
                std::fs::symlink_metadata(ws.join(p)).is_err(),
                "as 65534: {nobody}: {p} was put back: {said}"
            );
        }
        // Usability: an edit of package.json by the tool itself is applied.
        if has("npm") {
            let said = run_as(
                nobody,
                &t,
                &ws,
                &home,
                "npm pkg set version=1.2.3 && echo ran",
            );
            let now = std::fs::read_to_string(ws.join("package.json")).unwrap();
            assert!(now.contains("1.2.3"), "npm's edit was not applied: {said}");
        }
    }
}

/// The SHA-256 of `b` in hex, by coreutils.
fn sha256(b: &[u8]) -> String {
    use std::io::Write;
    let mut c = Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(b).unwrap();
    let o = c.wait_with_output().unwrap();
    String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

fn lfs_path(oid: &str) -> String {
    format!(".git/lfs/objects/{}/{}/{oid}", &oid[..2], &oid[2..4])
}

/// A repository at `dir` whose `a.bin` is kept by Git LFS with the
/// content `GOODGOOD` (with git-lfs: committed through it; without: the
/// object alone, where git-lfs keeps it). Returns the object's path.
fn lfs_repo(dir: &Path, home: &Path, lfs: bool) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q"]);
    let oid = sha256(b"GOODGOOD");
    if lfs {
        for args in [
            &["lfs", "install", "--local"][..],
            &["lfs", "track", "*.bin"],
        ] {
            let o = host_git(dir, home, args).output().unwrap();
            assert!(o.status.success(), "{}", err(&o));
        }
        std::fs::write(dir.join("a.bin"), "GOODGOOD").unwrap();
        for args in [&["add", "."][..], &["commit", "-q", "-m", "lfs"]] {
            let o = host_git(dir, home, args).output().unwrap();
            assert!(o.status.success(), "{}", err(&o));
        }
    } else {
        let p = dir.join(lfs_path(&oid));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, "GOODGOOD").unwrap();
    }
    let p = dir.join(lfs_path(&oid));
    assert_eq!(std::fs::read(&p).unwrap(), b"GOODGOOD");
    p
}

/// F15: the run rewrites a Git LFS object of the workspace's repository
/// and of a nested one (same size: git-lfs checks only that) and plants
/// another under a name that is not its hash: none is put back, and host
/// `git lfs` checks out the committed content. An object the run's own
/// `git add` stored (its name is its hash) is put back.
#[test]
fn a_git_lfs_object_that_is_not_its_content_is_not_put_back() {
    let lfs = has("git-lfs");
    for nobody in owners() {
        let t = TempDir::new("b22a-f15");
        let (ws, home) = (t.dir("ws"), t.dir("home"));
        let top = lfs_repo(&ws, &home, lfs);
        let nested = lfs_repo(&ws.join("vendor/sub"), &home, lfs);
        let fake = sha256(b"never stored");
        let script = format!(
            "rm -f {top} {nested}; printf EVILEVIL > {top}; printf EVILEVIL > {nested}; \
             mkdir -p $(dirname {fake}) && printf other > {fake}; echo ran",
            top = top.strip_prefix(&ws).unwrap().display(),
            nested = nested.strip_prefix(&ws).unwrap().display(),
            fake = lfs_path(&fake),
        );
        let said = run_as(nobody, &t, &ws, &home, &script);
        for p in [&top, &nested] {
            assert_eq!(
                std::fs::read(p).unwrap(),
                b"GOODGOOD",
                "as 65534: {nobody}: {} was put back: {said}",
                p.display()
            );
        }
        assert!(!ws.join(lfs_path(&fake)).exists(), "{said}");
        if !lfs {
            continue;
        }
        // Host git-lfs smudges the committed file from the local object.
        for dir in [ws.clone(), ws.join("vendor/sub")] {
            std::fs::remove_file(dir.join("a.bin")).unwrap();
            let o = host(nobody, &t, host_git(&dir, &home, &["checkout", "a.bin"]));
            assert!(o.status.success(), "{}", err(&o));
            assert_eq!(std::fs::read(dir.join("a.bin")).unwrap(), b"GOODGOOD");
        }
        // Usability: git-lfs's own store of a new file in the run.
        let said = run_as(
            nobody,
            &t,
            &ws,
            &home,
            "printf NEWNEW > b.bin && git -c user.name=t -c user.email=t@t add b.bin \
             && git -c user.name=t -c user.email=t@t commit -q -m b && echo ran",
        );
        let p = ws.join(lfs_path(&sha256(b"NEWNEW")));
        assert_eq!(
            std::fs::read(&p).unwrap_or_default(),
            b"NEWNEW",
            "the run's own LFS object was not put back: {said}"
        );
    }
}

/// F15b: the run replaces the repository's git-crypt key (and a nested
/// repository's) and adds one: none is put back.
#[test]
fn a_git_crypt_key_written_in_a_run_is_not_put_back() {
    for nobody in owners() {
        let t = TempDir::new("b22a-f15b");
        let (ws, home) = (t.dir("ws"), t.dir("home"));
        let sub = ws.join("vendor/sub");
        let mut keys = Vec::new();
        for dir in [&ws, &sub] {
            std::fs::create_dir_all(dir).unwrap();
            git(dir, &["init", "-q"]);
            let made = has("git-crypt")
                && Command::new("git-crypt")
                    .arg("init")
                    .current_dir(dir)
                    .env("HOME", &home)
                    .output()
                    .is_ok_and(|o| o.status.success());
            let k = dir.join(".git/git-crypt/keys/default");
            if !made {
                std::fs::create_dir_all(k.parent().unwrap()).unwrap();
                std::fs::write(&k, b"host key bytes").unwrap();
            }
            keys.push((k.clone(), std::fs::read(&k).unwrap()));
        }
        let said = run_as(
            nobody,
            &t,
            &ws,
            &home,
            "for k in .git/git-crypt/keys vendor/sub/.git/git-crypt/keys; do \
             printf 'the runs key' > $k/default; printf x > $k/other; done; echo ran",
        );
        for (k, old) in &keys {
            assert_eq!(
                &std::fs::read(k).unwrap(),
                old,
                "as 65534: {nobody}: {} was replaced: {said}",
                k.display()
            );
            assert!(!k.with_file_name("other").exists(), "{said}");
        }
    }
}

/// F15's class: git-annex's objects, which the work tree's links lead to
/// (host programs read the annexed file through them): a rewritten one is
/// not put back.
#[test]
fn a_git_annex_object_that_is_not_its_key_is_not_put_back() {
    for nobody in owners() {
        let t = TempDir::new("b22a-f15-annex");
        let (ws, home) = (t.dir("ws"), t.dir("home"));
        git(&ws, &["init", "-q"]);
        let key = format!("SHA256E-s8--{}.bin", sha256(b"GOODGOOD"));
        let rel = format!(".git/annex/objects/Xq/9z/{key}/{key}");
        std::fs::create_dir_all(ws.join(&rel).parent().unwrap()).unwrap();
        std::fs::write(ws.join(&rel), "GOODGOOD").unwrap();
        std::os::unix::fs::symlink(&rel, ws.join("a.bin")).unwrap();
        let said = run_as(
            nobody,
            &t,
            &ws,
            &home,
            &format!("rm -f {rel} && printf EVILEVIL > {rel}; echo ran"),
        );
        assert_eq!(
            std::fs::read(ws.join("a.bin")).unwrap(),
            b"GOODGOOD",
            "as 65534: {nobody}: the annexed file reads the run's object: {said}"
        );
    }
}
