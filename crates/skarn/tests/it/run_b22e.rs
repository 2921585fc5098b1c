//! `skarn run`, attack atk22l (issue 22): what host tools load on their own
//! from files git does not show, and the workspace rule. A compiled build
//! script planted in cargo's `target/` that host `cargo check` ran (F8), a
//! new virtual environment's interpreter or standard library (F10,
//! F10b), an ignored `*.egg-info` entry point host pytest imported (F17),
//! a workspace that is a `.git` directory (F2), and the scripts MCP
//! servers and hooks name by a bare or relative word (F5). Each attack is
//! made for real and judged from outside, after the host tool acted, on
//! both workspace layers, as root and as uid 65534 where that differs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::*;
use crate::support_secret_sources::as_user;
use crate::support_secret_sources::users;
use skarn_test_support::TempDir;

const LAYERS: &[&str] = &["cow", "direct"];

/// `sh -c script` in `ws` in a run on `layer`, as uid 65534 when
/// `nobody` (the tree of `t` is given to it first).
fn attack(t: &TempDir, ws: &Path, home: &Path, layer: &str, nobody: bool, script: &str) -> Output {
    let c = run_command(
        ws,
        home,
        &["--workspace-layer", layer],
        &["sh", "-c", script],
    );
    let mut c = if nobody { as_user(c, t.path()) } else { c };
    c.output().expect("spawn skarn")
}

fn host(program: impl AsRef<std::ffi::OsStr>, dir: &Path, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("spawn host program")
}

fn have(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

// ---- F8: cargo's target directory ----

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// Host cargo in `dir` (offline, the project's own target directory).
fn host_cargo(dir: &Path, args: &[&str]) -> Output {
    Command::new(cargo())
        .args(args)
        .arg("--offline")
        .current_dir(dir)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .env_remove("RUSTC_WRAPPER")
        .env("CARGO_INCREMENTAL", "0")
        .output()
        .expect("spawn cargo")
}

/// The first entry of `dir` whose name starts with `prefix` and for which
/// `keep` holds.
fn entry(dir: &Path, prefix: &str, keep: impl Fn(&Path) -> bool) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
                && keep(p)
        })
        .unwrap_or_else(|| panic!("no {prefix}* in {}", dir.display()))
}

#[test]
fn a_build_script_or_binary_planted_in_target_is_not_run_by_host_cargo() {
    if !have(&cargo(), &["--version"]) {
        skarn_test_support::skip!("cargo is not installed");
    }
    // Host cargo is root's toolchain here: the run is made as root only
    // (the rule does not depend on the uid).
    for layer in LAYERS {
        let t = TempDir::new("b22e-f8");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        let mark = t.path().join("PWNED");
        t.file(
            "ws/Cargo.toml",
            "[package]\nname = \"p\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        );
        t.file("ws/src/main.rs", "fn main() { println!(\"genuine\"); }\n");
        t.file(
            "ws/build.rs",
            "fn main() { println!(\"cargo:rerun-if-changed=build.rs\"); }\n",
        );
        let o = host_cargo(&ws, &["build", "-q"]);
        assert!(o.status.success(), "host cargo build: {}", err(&o));
        // The compiled build script, the build script's run unit
        // (removing its fingerprint makes cargo run the script again
        // without compiling it) and the binary `cargo run` runs.
        let build = ws.join("target/debug/build");
        let script_dir = entry(&build, "p-", |p| p.join("build-script-build").exists());
        let script = entry(&script_dir, "build_script_build-", |_| true);
        let run_unit = entry(&build, "p-", |p| p.join("output").exists());
        let run_fp = ws
            .join("target/debug/.fingerprint")
            .join(run_unit.file_name().unwrap());
        let bin = entry(&ws.join("target/debug/deps"), "p-", |p| {
            p.extension().is_none()
        });
        let planted = format!("#!/bin/sh\\ntouch {}\\n", mark.display());
        let s = format!(
            "for f in {script} {bin}; do printf '{planted}' > $f.new && chmod +x $f.new && \
             mv $f.new $f; done; rm -rf {run_fp}; echo PLANTED",
            script = script.display(),
            bin = bin.display(),
            run_fp = run_fp.display()
        );
        let o = attack(&t, &ws, &home, layer, false, &s);
        assert!(out(&o).contains("PLANTED"), "{layer}: {}", err(&o));
        let check = host_cargo(&ws, &["check", "-q"]);
        let run = host_cargo(&ws, &["run", "-q"]);
        assert!(
            !mark.exists(),
            "{layer}: host cargo ran what the run planted in target/: {}",
            err(&o)
        );
        // Usability: host cargo still builds and runs the project.
        assert!(check.status.success(), "{layer}: {}", err(&check));
        assert!(out(&run).contains("genuine"), "{layer}: {}", err(&run));
    }
}

// ---- F10, F10b: a new virtual environment ----

fn run_venv_python(ws: &Path) -> Option<Output> {
    let py = ws.join(".venv/bin/python");
    std::fs::symlink_metadata(&py).ok()?;
    Command::new(py)
        .args(["-c", "pass"])
        .current_dir(ws)
        .output()
        .ok()
}

#[test]
fn a_new_environment_s_planted_interpreter_is_not_run_by_the_host() {
    for layer in LAYERS {
        for nobody in users() {
            let t = TempDir::new("b22e-f10");
            let (home, ws) = (t.dir("home"), t.dir("ws"));
            let mark = t.path().join("PWNED");
            let s = format!(
                "mkdir -p .venv/bin && printf 'home = /usr/bin\\n' > .venv/pyvenv.cfg && \
                 printf '#!/bin/sh\\ntouch {}\\n' > .venv/bin/python && chmod +x \
                 .venv/bin/python && echo PLANTED",
                mark.display()
            );
            let o = attack(&t, &ws, &home, layer, nobody, &s);
            assert!(out(&o).contains("PLANTED"), "{layer}: {}", err(&o));
            run_venv_python(&ws);
            assert!(
                !mark.exists(),
                "{layer} (uid 65534: {nobody}): the host ran the run's .venv/bin/python: {}",
                err(&o)
            );
        }
    }
}

#[test]
fn a_new_environment_s_home_in_the_workspace_is_not_the_host_s_standard_library() {
    let lib = Path::new("/usr/lib/python3.11");
    if !lib.join("encodings/__init__.py").exists() || !Path::new("/usr/bin/python3.11").exists() {
        skarn_test_support::skip!("no /usr/bin/python3.11");
    }
    for layer in LAYERS {
        for nobody in users() {
            let t = TempDir::new("b22e-f10b");
            let (home, ws) = (t.dir("home"), t.dir("ws"));
            let mark = t.path().join("PWNED");
            let s = format!(
                "L=.x/lib/python3.11; mkdir -p .venv/bin .x/bin $L && ln -s /usr/bin/python3.11 \
                 .venv/bin/python && printf 'home = {ws}/.x/bin\\n' > .venv/pyvenv.cfg && \
                 cp -r {lib}/encodings $L/ && cp {lib}/*.py $L/ && ln -s {lib}/lib-dynload \
                 $L/lib-dynload && echo 'import posix as _p; _p.close(_p.open(\"{m}\", 0o101, 0o644))' \
                 >> $L/encodings/__init__.py && \
                 echo PLANTED",
                ws = ws.display(),
                lib = lib.display(),
                m = mark.display()
            );
            let o = attack(&t, &ws, &home, layer, nobody, &s);
            assert!(out(&o).contains("PLANTED"), "{layer}: {}", err(&o));
            run_venv_python(&ws);
            assert!(
                !mark.exists(),
                "{layer} (uid 65534: {nobody}): the environment's python loaded the run's \
                 standard library: {}",
                err(&o)
            );
        }
    }
}

#[test]
fn python_m_venv_in_a_run_leaves_a_working_environment() {
    if !have("/usr/bin/python3", &["-c", "import venv"]) {
        skarn_test_support::skip!("no /usr/bin/python3 with venv");
    }
    for layer in LAYERS {
        for nobody in users() {
            let t = TempDir::new("b22e-venv");
            let (home, ws) = (t.dir("home"), t.dir("ws"));
            let s = "/usr/bin/python3 -m venv --without-pip .venv && echo MADE";
            let o = attack(&t, &ws, &home, layer, nobody, s);
            assert!(out(&o).contains("MADE"), "{layer}: {}", err(&o));
            let py = ws.join(".venv/bin/python");
            let p = host(&py, &ws, &["-c", "import sys; print(sys.prefix)"]);
            assert_eq!(
                out(&p).trim(),
                ws.join(".venv").display().to_string(),
                "{layer} (uid 65534: {nobody}): {}{}",
                err(&o),
                err(&p)
            );
        }
    }
}

// ---- F17: distribution metadata outside site-packages ----

#[test]
fn an_egg_info_entry_point_the_run_wrote_is_not_imported_by_host_pytest() {
    if !have("python3", &["-c", "import pytest"]) {
        skarn_test_support::skip!("pytest is not installed for python3");
    }
    for layer in LAYERS {
        for nobody in users() {
            let t = TempDir::new("b22e-f17");
            let (home, ws) = (t.dir("home"), t.dir("ws"));
            let mark = t.path().join("PWNED");
            t.file("ws/.gitignore", "*.egg-info/\nbuild/\n");
            t.file("ws/test_a.py", "def test_a():\n    pass\n");
            let s = format!(
                "mkdir -p zz.egg-info build && printf 'Metadata-Version: 2.1\\nName: zz\\n\
                 Version: 1\\n' > zz.egg-info/PKG-INFO && printf '[pytest11]\\nzz = \
                 build.zzplug\\n' > zz.egg-info/entry_points.txt && echo 'open(\"{}\", \"w\")' \
                 > build/zzplug.py && echo PLANTED",
                mark.display()
            );
            let o = attack(&t, &ws, &home, layer, nobody, &s);
            assert!(out(&o).contains("PLANTED"), "{layer}: {}", err(&o));
            let p = host(
                "python3",
                &ws,
                &[
                    "-m",
                    "pytest",
                    "--collect-only",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                ],
            );
            assert!(
                !mark.exists(),
                "{layer} (uid 65534: {nobody}): host pytest imported the run's plugin: {}{}",
                err(&o),
                out(&p)
            );
            assert!(out(&p).contains("test_a"), "{layer}: {}", out(&p));
        }
    }
}

// ---- F2: a workspace that is a git directory ----

#[test]
fn a_git_directory_is_never_a_workspace() {
    if !have("git", &["--version"]) {
        skarn_test_support::skip!("git is not installed");
    }
    for nobody in users() {
        for how in ["--workspace", "cwd"] {
            let t = TempDir::new("b22e-f2");
            let (home, ws) = (t.dir("home"), t.dir("ws"));
            let mark = t.path().join("PWNED");
            let g = host("git", &ws, &["init", "-q", "."]);
            assert!(g.status.success(), "{}", err(&g));
            let s = format!(
                "printf '[core]\\n\\tfsmonitor = touch {} #\\n' >> config; echo PLANTED",
                mark.display()
            );
            let gitdir = ws.join(".git");
            let mut c = if how == "cwd" {
                let mut c = Command::new(exe());
                c.args(["run", "--no-config", "--workspace-root", "cwd", "--"])
                    .args(["sh", "-c", &s])
                    .current_dir(&gitdir)
                    .env("HOME", &home)
                    .env_remove("XDG_STATE_HOME")
                    .env_remove("CLAUDECODE")
                    .stdin(std::process::Stdio::null());
                c
            } else {
                run_command(&gitdir, &home, &[], &["sh", "-c", &s])
            };
            if nobody {
                // (`as_user` keeps no working directory.)
                c = as_user(c, t.path());
                if how == "cwd" {
                    c.current_dir(&gitdir);
                }
            }
            let o = c.output().expect("spawn skarn");
            let status = host("git", &ws, &["status", "--short"]);
            assert!(
                !mark.exists() && !out(&o).contains("PLANTED"),
                "{how} (uid 65534: {nobody}): a run in the git directory changed its \
                 configuration and host git ran it: {}{}",
                err(&o),
                err(&status)
            );
            assert!(
                err(&o).contains("is a git directory"),
                "{how}: no clear refusal: {}",
                err(&o)
            );
        }
    }
}

// ---- F5: scripts named by a bare or relative word ----

#[test]
fn scripts_mcp_servers_and_hooks_name_by_a_bare_word_stay_the_user_s() {
    for layer in LAYERS {
        for nobody in users() {
            let t = TempDir::new("b22e-f5");
            let (home, ws) = (t.dir("home"), t.dir("ws"));
            let wsc = std::fs::canonicalize(&ws).unwrap();
            t.file(
                "ws/.mcp.json",
                format!(
                    "{{\"mcpServers\":{{\"dev\":{{\"command\":\"node\",\"args\":[\"server.js\"]}},\
                     \"py\":{{\"command\":\"uv\",\"args\":[\"--directory\",\"{}\",\"run\",\
                     \"srv.py\"]}}}}}}",
                    wsc.display()
                ),
            );
            t.file(
                "ws/.claude/settings.json",
                "{\"hooks\":{\"Stop\":[{\"hooks\":[{\"type\":\"command\",\"command\":\
                 \"python3 check.py\"}]}]}}",
            );
            t.file(
                "home/.claude.json",
                format!(
                    "{{\"projects\":{{\"{}\":{{\"mcpServers\":{{\"local\":{{\"type\":\"stdio\",\
                     \"command\":\"node\",\"args\":[\"build/index.js\"]}}}}}}}}}}",
                    wsc.display()
                ),
            );
            let files = ["server.js", "srv.py", "check.py", "build/index.js"];
            for f in files {
                t.file(format!("ws/{f}"), "ORIGINAL\n");
            }
            let s = "for f in server.js srv.py check.py build/index.js; do \
                     echo 'planted' > $f 2>/dev/null; done; echo PLANTED";
            let o = attack(&t, &ws, &home, layer, nobody, s);
            assert!(out(&o).contains("PLANTED"), "{layer}: {}", err(&o));
            for f in files {
                assert_eq!(
                    std::fs::read_to_string(ws.join(f)).unwrap(),
                    "ORIGINAL\n",
                    "{layer} (uid 65534: {nobody}): {f}, which an agent client starts \
                     unconfined, was rewritten by the run: {}",
                    err(&o)
                );
            }
        }
    }
}
