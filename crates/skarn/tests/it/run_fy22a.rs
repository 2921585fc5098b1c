//! `skarn run`, attack atk22o (issue 22) on the default settings: a
//! directory host tools search by name made a link (F1 cargo's build
//! directories, F5 `node_modules/.bin` and `node_modules`), a compiled
//! twin of a project's Python module (F9), and search-path variables
//! naming the current directory (F4). Each attempt is made for real and
//! judged from outside (the host's loader, shell and python), as root and
//! as uid 65534; the direct mode too where it has its own check.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::*;
use crate::support_attempt::{self, LAYERS, SYS_PATH, repo, users};
use skarn_test_support::TempDir;

/// `sh -c script` in a run started in `cwd`, with `flags`, `envs` set.
fn attempt(
    t: &TempDir,
    cwd: &Path,
    flags: &[&str],
    envs: &[(&str, &str)],
    nobody: bool,
    script: &str,
) -> Output {
    let unset = [
        "ZDOTDIR",
        "NODE_OPTIONS",
        "NODE_PATH",
        "CLASSPATH",
        "PYTHONPATH",
        "LD_LIBRARY_PATH",
    ];
    support_attempt::attempt(t, cwd, flags, &unset, envs, nobody, script)
}

fn cc(args: &[&str]) -> bool {
    Command::new("gcc")
        .args(args)
        .status()
        .is_ok_and(|s| s.success())
}

/// Builds, in `t/stage`, `libfy22a.so` (its constructor writes `mark`)
/// and `prog`, a host program that needs it (found by the loader's
/// search only). `None` without a C compiler.
fn plant(t: &TempDir, mark: &Path) -> Option<(PathBuf, PathBuf)> {
    let stage = t.dir("stage");
    let src = t.file(
        "stage/plant.c",
        format!(
            "#include <stdio.h>\n__attribute__((constructor)) static void p(void) {{ FILE *f = \
             fopen(\"{}\", \"w\"); if (f) {{ fputs(\"ran\\n\", f); fclose(f); }} }}\nint \
             fy22a_f(void) {{ return 0; }}\n",
            mark.display()
        ),
    );
    let main = t.file(
        "stage/main.c",
        "int fy22a_f(void);\nint main(void) { return fy22a_f(); }\n",
    );
    let lib = stage.join("libfy22a.so");
    let prog = stage.join("prog");
    let (s, l, m, p) = (src.to_str()?, lib.to_str()?, main.to_str()?, prog.to_str()?);
    let d = format!("-L{}", stage.display());
    if !cc(&["-shared", "-fPIC", "-o", l, s])
        || !cc(&["-o", p, m, &d, "-lfy22a", "-Wl,--allow-shlib-undefined"])
    {
        return None;
    }
    Some((lib, prog))
}

/// Runs the host program `prog` in `cwd` with `LD_LIBRARY_PATH=llp`.
fn host_prog(prog: &Path, cwd: &Path, llp: &str) {
    let _ = Command::new(prog)
        .current_dir(cwd)
        .env("LD_LIBRARY_PATH", llp)
        .output();
}

// ---- F1: a cargo build directory made a link ----

#[test]
fn a_cargo_build_directory_made_a_link_is_not_applied() {
    for layer in LAYERS {
        for nobody in users() {
            for place in ["target/debug/deps", "target/debug/build/x-1/out"] {
                let t = TempDir::new("fy22a-cargo");
                let mark = t.path().join("PWNED");
                let Some((lib, prog)) = plant(&t, &mark) else {
                    skarn_test_support::skip!("no C compiler");
                };
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
                t.dir("rs/target/debug/.fingerprint/rs-1");
                t.dir("rs/target/debug/deps");
                t.dir("rs/target/debug/build/x-1/out");
                let up = "../".repeat(place.matches('/').count());
                let s = format!(
                    "rm -rf {place} && mkdir .x && cp {} .x/ && ln -s {up}.x {place} && echo PLANTED",
                    lib.display()
                );
                let o = attempt(&t, &ws, layer, &[], nobody, &s);
                assert!(out(&o).contains("PLANTED"), "{}{}", out(&o), err(&o));
                // What cargo gives rustc and the build scripts.
                let d = ws.join("target/debug");
                let llp = format!(
                    "{}:{}:{}",
                    d.display(),
                    d.join("deps").display(),
                    d.join("build/x-1/out").display()
                );
                host_prog(&prog, &ws, &llp);
                assert!(
                    !mark.exists(),
                    "{layer:?} uid 65534: {nobody}: the host loaded the library through the \
                     link at {place}: {}",
                    err(&o)
                );
                assert!(
                    !std::fs::symlink_metadata(ws.join(place))
                        .is_ok_and(|m| m.file_type().is_symlink()),
                    "{layer:?}: {place} is a link"
                );
                // (The direct mode removes the link after the run.)
                let said = if layer.is_empty() { place } else { "link(s)" };
                assert!(err(&o).contains(said), "no word about it: {}", err(&o));
            }
        }
    }
}

// ---- F5: node_modules/.bin or a node_modules made a link ----

#[test]
fn a_node_bin_directory_made_a_link_is_not_applied() {
    for nobody in users() {
        for (dir, target, cwd) in [
            ("node_modules/.bin", ".cache/t", "."),
            ("packages/a/node_modules", "../../.cache/nm", "packages/a"),
        ] {
            let t = TempDir::new("fy22a-nbin");
            let mark = t.path().join("PWNED");
            let ws = repo(
                &t,
                "nj",
                &[
                    (
                        "package.json",
                        r#"{"name":"nj","version":"1.0.0","scripts":{"test":"node -e 0 && git --version"}}"#,
                    ),
                    (
                        "packages/a/package.json",
                        r#"{"name":"a","version":"1.0.0","scripts":{"test":"git --version"}}"#,
                    ),
                    (".gitignore", "node_modules\n.cache\n"),
                ],
            );
            t.dir("nj/node_modules/.bin");
            // The directory the link leads to, relative to the workspace.
            let real = Path::new(dir).parent().unwrap().join(target);
            let bin = if dir.ends_with(".bin") {
                real.clone()
            } else {
                real.join(".bin")
            };
            let s = format!(
                "rm -rf {dir} && mkdir -p {b} && for p in node git; do printf \
                 '#!/bin/sh\\ntouch {m}\\n' > {b}/$p; chmod +x {b}/$p; done && \
                 ln -s {target} {dir} && echo PLANTED",
                b = bin.display(),
                m = mark.display()
            );
            let o = attempt(&t, &ws, &[], &[], nobody, &s);
            assert!(out(&o).contains("PLANTED"), "{}{}", out(&o), err(&o));
            // What npm does for `npm test` there: each `node_modules/.bin`
            // above the package first on PATH.
            let cwd = ws.join(cwd);
            let path = format!(
                "{}:{}:{SYS_PATH}",
                cwd.join("node_modules/.bin").display(),
                ws.join("node_modules/.bin").display()
            );
            let _ = Command::new("sh")
                .args(["-c", "node -e 0; git --version"])
                .env("PATH", &path)
                .current_dir(&cwd)
                .output();
            assert!(
                !mark.exists(),
                "uid 65534: {nobody}: the host ran a planted program through {dir}: {}",
                err(&o)
            );
            assert!(err(&o).contains(dir), "no word about it: {}", err(&o));
        }
    }
}

// ---- F9: a compiled twin of a project's Python module ----

#[test]
fn a_compiled_twin_of_a_source_module_is_not_applied() {
    let py = Path::new("/usr/bin/python3");
    if !py.exists() {
        skarn_test_support::skip!("no /usr/bin/python3");
    }
    for layer in LAYERS {
        for nobody in users() {
            for twin in [
                "pkg/util.so",
                "pkg/util.abi3.so",
                "pkg/util.cpython-311-x86_64-linux-gnu.so",
                "pkg/__init__.cpython-311-x86_64-linux-gnu.so",
            ] {
                let t = TempDir::new("fy22a-pyext");
                let mark = t.path().join("PWNED");
                let Some((lib, _)) = plant(&t, &mark) else {
                    skarn_test_support::skip!("no C compiler");
                };
                let ws = repo(
                    &t,
                    "py",
                    &[
                        ("pkg/__init__.py", ""),
                        ("pkg/util.py", "def f():\n    return 'real'\n"),
                        ("pkg/fast.py", "def g():\n    return 'slow'\n"),
                        ("pkg/fast.c", "int fast_g(void) { return 1; }\n"),
                        ("main.py", "from pkg import util\nprint(util.f())\n"),
                        (".gitignore", "*.so\n__pycache__/\n"),
                    ],
                );
                let s = format!(
                    "cp {l} {twin} && cp {l} pkg/fast.cpython-311-x86_64-linux-gnu.so && \
                     echo PLANTED",
                    l = lib.display()
                );
                let o = attempt(&t, &ws, layer, &[], nobody, &s);
                assert!(out(&o).contains("PLANTED"), "{}{}", out(&o), err(&o));
                let r = Command::new(py)
                    .arg("main.py")
                    .current_dir(&ws)
                    .env_remove("PYTHONPATH")
                    .output()
                    .unwrap();
                assert!(
                    !mark.exists() && out(&r) == "real\n",
                    "{layer:?} uid 65534: {nobody}: host python loaded {twin}: {}{}",
                    out(&r),
                    err(&o)
                );
                assert!(
                    err(&o).contains("util") || err(&o).contains("__init__"),
                    "{}",
                    err(&o)
                );
                // Built beside its own C source (`build_ext --inplace`): kept.
                assert!(
                    ws.join("pkg/fast.cpython-311-x86_64-linux-gnu.so").exists(),
                    "{layer:?}: the extension built from fast.c was not kept: {}",
                    err(&o)
                );
            }
        }
    }
}

// ---- F4: search-path variables naming the current directory ----

#[test]
fn search_paths_naming_the_current_directory_refuse_the_run() {
    for nobody in users() {
        let t = TempDir::new("fy22a-llp");
        let mark = t.path().join("PWNED");
        let Some((lib, prog)) = plant(&t, &mark) else {
            skarn_test_support::skip!("no C compiler");
        };
        let ws = repo(&t, "ll", &[("README", "hi\n"), ("preload.js", "// dev\n")]);
        let s = format!(
            "cp {} . && echo 'require(\"fs\").writeFileSync(\"{}\",\"x\")' >> preload.js && \
             echo PLANTED",
            lib.display(),
            mark.display()
        );
        for (var, val) in [
            ("LD_LIBRARY_PATH", ":/usr/local/lib"),
            ("LD_LIBRARY_PATH", "/usr/local/lib:."),
            ("PYTHONPATH", "."),
            ("NODE_PATH", "lib"),
            ("NODE_OPTIONS", "--require ./preload.js"),
            ("NODE_OPTIONS", "--import=./preload.js"),
        ] {
            let o = attempt(&t, &ws, &[], &[(var, val)], nobody, &s);
            assert!(
                !o.status.success() && !out(&o).contains("PLANTED"),
                "{var}={val} (uid 65534: {nobody}): the run was accepted: {}{}",
                out(&o),
                err(&o)
            );
            assert!(
                err(&o).contains(var) && err(&o).contains("--allow-non-project-workspace"),
                "{var}: no clear refusal: {}",
                err(&o)
            );
            assert!(
                !ws.join("libfy22a.so").exists(),
                "{var}: the library landed"
            );
            host_prog(&prog, &ws, ":/usr/local/lib");
            if Path::new("/usr/bin/node").exists() {
                let _ = Command::new("/usr/bin/node")
                    .args(["-e", "0"])
                    .env("NODE_OPTIONS", "--require ./preload.js")
                    .current_dir(&ws)
                    .output();
            }
            assert!(!mark.exists(), "{var}={val}: the host ran planted code");
        }
        // Absolute entries, and the flag that accepts the risk: runs.
        for (flags, var, val) in [
            (&[][..], "LD_LIBRARY_PATH", "/usr/local/lib"),
            (&[][..], "NODE_OPTIONS", "--max-old-space-size=256"),
            (
                &["--allow-non-project-workspace"][..],
                "LD_LIBRARY_PATH",
                ":/usr/local/lib",
            ),
        ] {
            let o = attempt(&t, &ws, flags, &[(var, val)], nobody, "echo DONE");
            assert!(
                out(&o).contains("DONE"),
                "{var}={val} {flags:?}: {}{}",
                out(&o),
                err(&o)
            );
        }
    }
}
