//! `skarn run`, attack atk22n (issue 22) on the default settings: a new
//! `node_modules/.bin` program named like a host program (F6), a
//! workspace an environment variable names as a place host programs load
//! from (F4), an installation under `/opt` a `PATH` link leads to (F3),
//! and shared objects left in a cargo build directory (F5). Each attempt
//! is made for real and judged from outside, as root and as uid 65534.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::*;
use crate::support_attempt::{self, SYS_PATH, repo, users};
use skarn_test_support::TempDir;

/// `sh -c script` in a run started in `cwd` (its workspace), with `envs`
/// set, as uid 65534 when `nobody`.
fn attempt(t: &TempDir, cwd: &Path, envs: &[(&str, &Path)], nobody: bool, script: &str) -> Output {
    let unset = ["ZDOTDIR", "PYTHONPATH", "LD_LIBRARY_PATH"];
    support_attempt::attempt(t, cwd, &[], &unset, envs, nobody, script)
}

// ---- F6: node_modules/.bin programs named like host programs ----

#[test]
fn a_new_node_bin_program_named_like_a_host_program_is_set_aside() {
    for nobody in users() {
        let t = TempDir::new("fx22a-nbin");
        let ws = repo(
            &t,
            "nj",
            &[
                (
                    "package.json",
                    r#"{"name":"nj","version":"1.0.0","scripts":{"test":"node -e 0 && git --version"}}"#,
                ),
                (".gitignore", "node_modules\n"),
                (
                    "node_modules/node/package.json",
                    r#"{"name":"node","version":"1.0.0","bin":{"node":"bin/node"}}"#,
                ),
                ("node_modules/node/bin/node", "#!/bin/sh\nexit 0\n"),
            ],
        );
        t.dir("nj/node_modules/.bin");
        let mark = t.path().join("PWNED");
        let s = format!(
            "for p in node git; do printf '#!/bin/sh\\ntouch {m}_'$p'\\n' > node_modules/.bin/$p; \
             chmod +x node_modules/.bin/$p; done; \
             printf '#!/bin/sh\\nexit 0\\n' > node_modules/.bin/nj-own-tool; \
             chmod +x node_modules/.bin/nj-own-tool; echo PLANTED",
            m = mark.display()
        );
        let o = attempt(&t, &ws, &[], nobody, &s);
        assert!(out(&o).contains("PLANTED"), "{}{}", out(&o), err(&o));
        let bin = ws.join("node_modules/.bin");
        for p in ["node", "git"] {
            assert!(
                std::fs::symlink_metadata(bin.join(p)).is_err(),
                "uid 65534: {nobody}: .bin/{p} was kept: {}",
                err(&o)
            );
        }
        // What npm does for `npm test`: `.bin` first on PATH.
        let path = format!("{}:{SYS_PATH}", bin.display());
        let _ = Command::new("sh")
            .args(["-c", "node -e 0; git --version"])
            .env("PATH", &path)
            .current_dir(&ws)
            .output();
        for p in ["node", "git"] {
            assert!(
                !t.path().join(format!("PWNED_{p}")).exists(),
                "the host ran the planted .bin/{p}"
            );
        }
        // The project's own program, of a name no host program has, stays.
        assert!(bin.join("nj-own-tool").exists(), "{}", err(&o));
        // A link into the package declaring that program is what npm
        // makes: kept.
        let o = attempt(
            &t,
            &ws,
            &[],
            nobody,
            "ln -s ../node/bin/node node_modules/.bin/node && echo LINKED",
        );
        assert!(out(&o).contains("LINKED"), "{}{}", out(&o), err(&o));
        assert_eq!(
            std::fs::read_link(bin.join("node")).ok().as_deref(),
            Some(Path::new("../node/bin/node")),
            "uid 65534: {nobody}: npm's link was not kept: {}",
            err(&o)
        );
    }
}

// ---- F4: a workspace named by $ZDOTDIR, $PYTHONPATH, ... ----

#[test]
fn a_workspace_an_environment_variable_names_is_refused() {
    for nobody in users() {
        for var in ["ZDOTDIR", "PYTHONPATH", "LD_LIBRARY_PATH"] {
            let t = TempDir::new("fx22a-envdir");
            let ws = repo(&t, "cfg", &[(".zshrc", "# rc\n")]);
            let sub = t.dir("cfg/sub");
            for (cwd, what) in [(&ws, "is"), (&sub, "lies in")] {
                let o = attempt(
                    &t,
                    cwd,
                    &[(var, &ws)],
                    nobody,
                    "echo 'touch PWN' > .zshenv; echo 'open(\"PWN\",\"w\")' > json.py; \
                     echo PLANTED",
                );
                assert!(
                    !o.status.success() && !out(&o).contains("PLANTED"),
                    "${var} {what}: the run was accepted (uid 65534: {nobody}): {}{}",
                    out(&o),
                    err(&o)
                );
                assert!(
                    err(&o).contains("--allow-non-project-workspace") && err(&o).contains(var),
                    "${var}: no clear refusal: {}",
                    err(&o)
                );
                for f in [".zshenv", "json.py"] {
                    assert!(!cwd.join(f).exists(), "${var}: {f} was written");
                }
            }
        }
        // A search path inside the project (`PYTHONPATH=<project>/src`)
        // leaves the project a workspace.
        let t = TempDir::new("fx22a-envdir-src");
        let ws = repo(&t, "p", &[("src/m.py", "x = 1\n")]);
        let src = ws.join("src");
        let o = attempt(
            &t,
            &ws,
            &[("PYTHONPATH", &src)],
            nobody,
            "echo ok > notes.txt && echo DONE",
        );
        assert!(out(&o).contains("DONE"), "{}{}", out(&o), err(&o));
        assert!(ws.join("notes.txt").exists(), "{}", err(&o));
    }
}

// ---- F3: an installation under /opt a PATH link leads to ----

/// Removes a link of `/usr/local/bin` when dropped.
struct Link(std::path::PathBuf);

impl Drop for Link {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn an_installation_under_opt_a_path_link_leads_to_is_refused() {
    if !skarn_test_support::is_root() {
        skarn_test_support::skip!("needs root (a link in /usr/local/bin, a directory in /opt)");
    }
    for nobody in users() {
        for bin_layout in [false, true] {
            let t = TempDir::new("fx22a-opt");
            t.dir("home");
            let o_dir = TempDir::new_in("/opt", "fx22a-opt");
            let top = std::fs::canonicalize(o_dir.path()).unwrap();
            let app = top.join("app");
            let name = format!(
                "fx22a-app-{}-{}",
                std::process::id(),
                u8::from(nobody) * 2 + u8::from(bin_layout)
            );
            let prog = if bin_layout {
                app.join("bin").join(&name)
            } else {
                app.join(&name)
            };
            std::fs::create_dir_all(prog.parent().unwrap()).unwrap();
            std::fs::write(&prog, "#!/bin/sh\necho real\n").unwrap();
            std::fs::set_permissions(&prog, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
            let _link = Link(Path::new("/usr/local/bin").join(&name));
            std::os::unix::fs::symlink(&prog, &_link.0).unwrap();
            if nobody {
                let st = Command::new("chown")
                    .args(["-R", "65534:65534"])
                    .arg(&top)
                    .status()
                    .unwrap();
                assert!(st.success());
                let st = Command::new("chmod").arg("755").arg(&top).status().unwrap();
                assert!(st.success());
            }
            let rel = prog.strip_prefix(&app).unwrap().display().to_string();
            let s = format!("printf '#!/bin/sh\\necho planted\\n' > {rel} && echo PLANTED");
            for cwd in [&app, &top] {
                let s = if cwd == &top {
                    format!("cd app && {s}")
                } else {
                    s.clone()
                };
                let o = attempt(&t, cwd, &[], nobody, &s);
                assert!(
                    !out(&o).contains("PLANTED"),
                    "{} (bin: {bin_layout}, uid 65534: {nobody}): the program was rewritten: {}{}",
                    cwd.display(),
                    out(&o),
                    err(&o)
                );
                // The installation itself is refused; a directory holding
                // it is accepted with the installation read-only whole
                // (ADR 0332).
                if cwd == &app {
                    assert!(
                        !o.status.success() && err(&o).contains("--allow-non-project-workspace"),
                        "no clear refusal: {}",
                        err(&o)
                    );
                }
                // The host's next call by the PATH name runs the real one.
                let r = Command::new(&name).env("PATH", SYS_PATH).output().unwrap();
                assert_eq!(out(&r), "real\n", "the host ran the planted program");
            }
        }
    }
}

// ---- F5: shared objects in a cargo build directory ----

#[test]
fn shared_objects_left_in_a_cargo_profile_are_removed() {
    for nobody in users() {
        for built in [false, true] {
            let t = TempDir::new("fx22a-cargo");
            let ws = repo(
                &t,
                "rs",
                &[
                    (
                        "Cargo.toml",
                        "[package]\nname = \"rs\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
                    ),
                    ("src/main.rs", "fn main() {}\n"),
                    (".gitignore", "target\n"),
                ],
            );
            if built {
                t.dir("rs/target/debug/.fingerprint/rs-1");
                t.dir("rs/target/debug/deps");
            }
            let o = attempt(
                &t,
                &ws,
                &[],
                nobody,
                "mkdir -p target/debug/deps target/debug/build/x-1/out && \
                 echo x > target/debug/libgcc_s.so.1 && echo x > target/debug/deps/libz.so && \
                 echo x > target/debug/build/x-1/out/libq.so.2 && \
                 echo kept > target/debug/notes.txt && echo PLANTED",
            );
            assert!(out(&o).contains("PLANTED"), "{}{}", out(&o), err(&o));
            for f in ["libgcc_s.so.1", "deps/libz.so", "build/x-1/out/libq.so.2"] {
                assert!(
                    !ws.join("target/debug").join(f).exists(),
                    "built: {built}, uid 65534: {nobody}: target/debug/{f} was kept: {}",
                    err(&o)
                );
            }
            assert!(
                err(&o).contains("shared object"),
                "no word about it: {}",
                err(&o)
            );
            assert!(ws.join("target/debug/notes.txt").exists(), "{}", err(&o));
        }
    }
}
