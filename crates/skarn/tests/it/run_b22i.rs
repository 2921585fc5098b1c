//! `skarn run`, attack atk22m (issue 22): workspaces the confined side
//! chooses that are not projects, and host servers' sockets in read
//! grants. A Mercurial, Jujutsu or Sapling metadata directory (F5), a
//! cargo target or profile directory (F7), a directory inside a `PATH`
//! directory, an installation prefix above one, or a toolchain root (F8);
//! a host listener under `/opt` or a `--read` grant (SECURITY.md's open
//! item). Each attempt is made for real and judged from outside, as root
//! and as uid 65534.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::*;
use crate::support_secret_sources::as_user;
use skarn_test_support::TempDir;

/// The users a run is made as: root (as it is) and uid 65534 (when root).
fn users() -> Vec<bool> {
    if skarn_test_support::is_root() {
        vec![false, true]
    } else {
        vec![false]
    }
}

/// `sh -c script` in a run whose workspace is `ws` (`None`: the current
/// directory `cwd`, `--workspace-root repo`), with `extra` flags and
/// `path` as `PATH`, as uid 65534 when `nobody`.
fn attempt(t: &TempDir, run: Run<'_>, nobody: bool, script: &str) -> Output {
    let home = t.path().join("home");
    let mut c = Command::new(exe());
    c.args(["run", "--no-config"]);
    if let Some(ws) = run.ws {
        c.arg("--workspace").arg(ws);
    }
    c.args(run.extra)
        .args(["--", "sh", "-c", script])
        .current_dir(run.cwd)
        .env("HOME", &home)
        .env("PATH", run.path)
        .envs(run.goroot.map(|g| ("GOROOT", g)))
        .env_remove("XDG_STATE_HOME")
        .env_remove("CLAUDECODE")
        .stdin(std::process::Stdio::null());
    if nobody {
        // (`as_user` keeps no working directory.)
        c = as_user(c, t.path());
        c.current_dir(run.cwd);
    }
    c.output().expect("spawn skarn")
}

#[derive(Clone, Copy)]
struct Run<'a> {
    ws: Option<&'a Path>,
    cwd: &'a Path,
    extra: &'a [&'a str],
    path: &'a str,
    /// `$GOROOT` for skarn and the run.
    goroot: Option<&'a Path>,
}

const SYS_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

fn refused(o: &Output, what: &str, needle: &str) {
    assert!(
        !o.status.success() && !out(o).contains("PLANTED"),
        "{what}: the run was accepted: {}{}",
        out(o),
        err(o)
    );
    assert!(
        err(o).contains(needle),
        "{what}: no clear refusal: {}",
        err(o)
    );
}

// ---- F5: version-control metadata directories ----

#[test]
fn no_version_control_metadata_directory_is_a_workspace() {
    for nobody in users() {
        for (dir, file) in [
            (".hg", "hgrc"),
            (".hg/store", "../hgrc"),
            (".jj/repo", "config.toml"),
            (".sl", "config"),
        ] {
            let t = TempDir::new("b22i-vcs");
            t.dir("home");
            let ws = t.dir("p");
            let meta = t.dir(format!("p/{dir}"));
            let top_meta = ws.join(dir.split('/').next().unwrap_or(dir));
            std::fs::write(top_meta.join("requires"), "store\n").unwrap();
            let target = meta.join(file);
            std::fs::write(&target, "[ui]\n").unwrap();
            let mark = t.path().join("PWNED");
            let s = format!(
                "printf '[hooks]\\npre-status = touch {}\\n' >> {file} && echo PLANTED",
                mark.display()
            );
            let named = Run {
                ws: Some(&meta),
                cwd: &meta,
                extra: &[],
                path: SYS_PATH,
                goroot: None,
            };
            let o = attempt(&t, named, nobody, &s);
            refused(&o, dir, "version-control metadata");
            // Started there: the workspace is the repository's top, where
            // its configuration stays read-only.
            let o2 = attempt(&t, Run { ws: None, ..named }, nobody, &s);
            let after = std::fs::read_to_string(&target).unwrap();
            assert_eq!(
                after,
                "[ui]\n",
                "{dir} (uid 65534: {nobody}): the run wrote {file}: {}{}",
                out(&o2),
                err(&o2)
            );
        }
    }
}

// ---- F7: cargo's build directories ----

fn fake_target(t: &TempDir) -> std::path::PathBuf {
    let target = t.dir("crate/target");
    std::fs::write(
        target.join("CACHEDIR.TAG"),
        "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag \
         created by cargo.\n",
    )
    .unwrap();
    t.dir("crate/target/debug/.fingerprint/x-1");
    let b = t.dir("crate/target/debug/build/x-1");
    std::fs::write(b.join("build_script_build-1"), "#!/bin/sh\necho real\n").unwrap();
    target
}

#[test]
fn no_cargo_build_directory_is_a_workspace() {
    for nobody in users() {
        for rel in ["", "debug", "debug/build", "debug/build/x-1"] {
            let t = TempDir::new("b22i-cargo");
            t.dir("home");
            let target = fake_target(&t);
            let ws = target.join(rel);
            let script = target.join("debug/build/x-1/build_script_build-1");
            let s = format!("echo 'touch /tmp/x' > {} && echo PLANTED", script.display());
            let run = Run {
                ws: Some(&ws),
                cwd: &ws,
                extra: &[],
                path: SYS_PATH,
                goroot: None,
            };
            let o = attempt(&t, run, nobody, &s);
            refused(&o, rel, "--allow-non-project-workspace");
            let after = std::fs::read_to_string(&script).unwrap();
            assert_eq!(after, "#!/bin/sh\necho real\n", "{rel}: written");
        }
    }
}

/// Allowed by the flag, a run in `target/debug` still leaves host cargo
/// nothing to run unbuilt: the profile's fingerprints are removed.
#[test]
fn a_profile_directory_allowed_as_a_workspace_loses_its_fingerprints() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let t = TempDir::new("b22i-cargo-real");
    t.dir("home");
    let c = t.dir("cx");
    t.file(
        "cx/Cargo.toml",
        "[package]\nname = \"cx\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    t.file("cx/build.rs", "fn main() {}\n");
    t.file("cx/src/main.rs", "fn main() {}\n");
    let host_cargo = || {
        Command::new(&cargo)
            .args(["build", "-q", "--offline"])
            .current_dir(&c)
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("CARGO_BUILD_TARGET_DIR")
            .env_remove("RUSTC_WRAPPER")
            .env("CARGO_INCREMENTAL", "0")
            .output()
            .expect("spawn cargo")
    };
    let b = host_cargo();
    assert!(b.status.success(), "{}", err(&b));
    let debug = c.join("target/debug");
    let mark = t.path().join("PWNED");
    let s = format!(
        "for h in build/cx-*/build_script_build-*; do case $h in *.d) continue;; esac; \
         rm -f $h; printf '#!/bin/sh\\ntouch {}\\n' > $h; chmod +x $h; done",
        mark.display()
    );
    let run = Run {
        ws: Some(&debug),
        cwd: &debug,
        extra: &["--allow-non-project-workspace"],
        path: SYS_PATH,
        goroot: None,
    };
    let o = attempt(&t, run, false, &s);
    assert!(o.status.success(), "{}", err(&o));
    let b = host_cargo();
    assert!(
        !mark.exists(),
        "host cargo ran the planted build script: {}{}",
        err(&o),
        err(&b)
    );
}

// ---- F8: PATH directories, installation prefixes, toolchain roots ----

fn script(t: &TempDir, rel: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let p = t.file(rel, format!("#!/bin/sh\n{body}\n"));
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn no_tree_host_programs_run_from_is_a_workspace() {
    for nobody in users() {
        let t = TempDir::new("b22i-path");
        let h = t.dir("home");
        script(
            &t,
            "home/tools/bin/t",
            "exec \"$(dirname \"$0\")/../libexec/real\"",
        );
        script(&t, "home/tools/libexec/real", "echo real");
        script(
            &t,
            "home/flutter/bin/flutter",
            "exec \"$(dirname \"$0\")/cache/dart\"",
        );
        script(&t, "home/flutter/bin/cache/dart", "echo dart");
        script(&t, "home/sdk/go/bin/gox", "echo go");
        t.dir("home/sdk/go/src/fmt");
        t.dir("home/tools/share");
        t.dir("home/links");
        std::os::unix::fs::symlink(h.join("sdk/go/bin/gox"), h.join("links/gox")).unwrap();
        script(
            &t,
            "home/apps/nv/bin/nv",
            "exec sh \"$(dirname \"$0\")/../share/nv.sh\"",
        );
        t.file("home/apps/nv/share/nv.sh", "echo nv\n");
        let root = t.dir("home/toolroot");
        t.dir("home/toolroot/lib");
        let path = format!(
            "{}:{}:{}:{}:{SYS_PATH}",
            h.join("tools/bin").display(),
            h.join("flutter/bin").display(),
            h.join("links").display(),
            h.join("apps/nv/bin").display()
        );
        for (rel, plant) in [
            ("tools", "libexec/real"),
            ("tools/share", "../libexec/real"),
            ("flutter/bin/cache", "dart"),
            ("sdk/go/src/fmt", "../../bin/gox"),
            ("apps", "nv/share/nv.sh"),
            ("apps/nv/share", "nv.sh"),
            ("toolroot/lib", "x"),
        ] {
            let ws = h.join(rel);
            let s = format!("printf '#!/bin/sh\\necho PLANTED\\n' > {plant} && echo PLANTED");
            let run = Run {
                ws: Some(&ws),
                cwd: &ws,
                extra: &[],
                path: &path,
                goroot: Some(&root),
            };
            let o = attempt(&t, run, nobody, &s);
            refused(&o, rel, "--allow-non-project-workspace");
        }
        let host = Command::new("sh")
            .args(["-c", "t; flutter; gox; nv"])
            .env("PATH", &path)
            .output()
            .unwrap();
        assert_eq!(out(&host), "real\ndart\ngo\nnv\n", "{}", err(&host));
    }
}

/// The usability side: a project with its own `bin`, environment and
/// `node_modules/.bin` on `PATH` is a workspace, and git works in it.
#[test]
fn a_project_with_its_own_environment_on_path_is_a_workspace() {
    let t = TempDir::new("b22i-venv");
    t.dir("home");
    let ws = t.dir("proj");
    t.file("proj/.venv/pyvenv.cfg", "home = /usr/bin\n");
    t.dir("proj/.venv/bin");
    t.dir("proj/node_modules/.bin");
    t.dir("proj/bin"); // direnv's `PATH_add bin`
    assert!(
        Command::new("git")
            .args(["init", "-q"])
            .current_dir(&ws)
            .status()
            .unwrap()
            .success()
    );
    let path = format!(
        "{}:{}:{}:{SYS_PATH}",
        ws.join("bin").display(),
        ws.join(".venv/bin").display(),
        ws.join("node_modules/.bin").display()
    );
    let run = Run {
        ws: Some(&ws),
        cwd: &ws,
        extra: &[],
        path: &path,
        goroot: None,
    };
    let o = attempt(
        &t,
        run,
        false,
        "git status --short && echo x > f && echo OK",
    );
    assert!(out(&o).contains("OK"), "{}{}", out(&o), err(&o));
    assert!(ws.join("f").exists());
}

// ---- Sockets: a host server under a read grant ----

#[test]
fn a_host_listener_under_a_read_grant_gets_nothing() {
    for nobody in users() {
        for under_opt in [true, false] {
            let t = TempDir::new("b22i-sock");
            t.dir("home");
            let ws = t.dir("p");
            let o_dir = TempDir::new_in("/opt", "b22i-sock");
            let dir = if under_opt {
                std::fs::canonicalize(o_dir.path()).unwrap()
            } else {
                std::fs::canonicalize(t.dir("shared")).unwrap()
            };
            let sock = dir.join("db.sock");
            let l = std::os::unix::net::UnixListener::bind(&sock).unwrap();
            l.set_nonblocking(true).unwrap();
            let grant = dir.display().to_string();
            let extra: Vec<&str> = if under_opt {
                vec![]
            } else {
                vec!["--read", &grant]
            };
            let cmd = format!("chmod 755 {}; chmod 777 {}", dir.display(), sock.display());
            assert!(
                Command::new("sh")
                    .args(["-c", &cmd])
                    .status()
                    .unwrap()
                    .success()
            );
            let py = format!(
                "/usr/bin/python3 -c \"import socket\nc = socket.socket(socket.AF_UNIX)\n\
                 try:\n    c.connect('{}'); print('connected')\nexcept OSError as e:\n    \
                 print('refused', e.errno)\"",
                sock.display()
            );
            let run = Run {
                ws: Some(&ws),
                cwd: &ws,
                extra: &extra,
                path: SYS_PATH,
                goroot: None,
            };
            let o = attempt(&t, run, nobody, &py);
            let what = format!("under /opt: {under_opt}, uid 65534: {nobody}");
            assert!(
                out(&o).contains("refused"),
                "{what}: {}{}",
                out(&o),
                err(&o)
            );
            assert!(
                l.accept().is_err(),
                "{what}: the host listener got a connection"
            );
            assert!(
                !err(&o).contains("unix sockets are unavailable"),
                "{what}: {}",
                err(&o)
            );
        }
    }
}
