//! Source modules named like the standard library's that git shows (a
//! follow-up on b22c, ADR 0310): a run that writes a plain `token.py` or
//! `email/__init__.py` the user sees in `git status` keeps it (visible
//! source is the user's to review like `main.py`); one hidden by the
//! ignore rules of before the run, one under an ignore file the run made
//! or changed, a link by such a name, and a compiled one are still not
//! kept: host python runs the standard library's module. Tried for real
//! as root and as uid 65534, in the default layer and the direct mode.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::*;
use crate::support_secret_sources::{LAYER_FLAGS, run_as, users};

use skarn_test_support::TempDir;

/// What the host's `git status` lists in `ws` (any owner).
fn host_status(ws: &Path) -> String {
    out(&git(
        ws,
        &["-c", "safe.directory=*", "status", "--porcelain", "-uall"],
    ))
}

/// Host python runs `script` in `dir`; its output.
fn host_python(dir: &Path, script: &str) -> Output {
    Command::new("python3")
        .arg(script)
        .current_dir(dir)
        .env_remove("PYTHONPATH")
        .env_remove("PYTHONSAFEPATH")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap()
}

/// A git project with `main.py` (imports `json`) at the top and in
/// `build/`, and a `.gitignore` of before the run that ignores `build/`.
fn project(t: &TempDir) -> (std::path::PathBuf, std::path::PathBuf) {
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    git(&ws, &["init", "-q"]);
    let script = "import json\nprint(json.dumps([1]))\n";
    t.file("ws/main.py", script);
    t.file("ws/build/main.py", script);
    t.file("ws/app/main.py", script);
    t.file("ws/.gitignore", "build/\n");
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-qm", "init"]);
    (ws, home)
}

/// Usability: visible sources named like the standard library's (at the
/// top, in a package and in a directory the run makes) are kept and git
/// lists them.
#[test]
fn visible_standard_library_named_sources_are_kept() {
    if !host_has("python3", "--version") || !host_has("git", "--version") {
        skarn_test_support::skip!("python3 or git is not installed");
    }
    for nobody in users() {
        for layer in LAYER_FLAGS {
            let t = TempDir::new("b22g-keep");
            let (ws, home) = project(&t);
            std::thread::sleep(std::time::Duration::from_millis(200));
            let write = "printf 'X = 1\\n' > token.py && mkdir -p email scripts && \
                         printf 'Y = 2\\n' > email/__init__.py && \
                         printf 'Z = 3\\n' > scripts/queue.py && echo done";
            let o = run_as(t.path(), &ws, &home, nobody, layer, &["sh", "-c", write]);
            assert_eq!(code(&o), 0, "{nobody} {layer:?}: {}{}", out(&o), err(&o));
            for f in ["token.py", "email/__init__.py", "scripts/queue.py"] {
                let kept = std::fs::read_to_string(ws.join(f)).unwrap_or_default();
                assert!(
                    kept.contains(" = "),
                    "{nobody} {layer:?}: {f} was not kept: {}",
                    err(&o)
                );
            }
            let st = host_status(&ws);
            assert!(st.contains("?? token.py"), "{st}");
            assert!(st.contains("?? email/__init__.py"), "{st}");
            assert!(
                !err(&o).contains("named like the standard library"),
                "{}",
                err(&o)
            );
        }
    }
}

/// Security: what git would not show is still not kept: a package under a
/// directory ignored before the run, a module under a `.gitignore` the
/// run changed (appending a line), and a link by a module's name; host
/// python at each place runs the standard library's `json`.
#[test]
fn hidden_or_linked_standard_library_named_modules_are_not_kept() {
    if !host_has("python3", "--version") || !host_has("git", "--version") {
        skarn_test_support::skip!("python3 or git is not installed");
    }
    for nobody in users() {
        for layer in LAYER_FLAGS {
            let t = TempDir::new("b22g-hide");
            let (ws, home) = project(&t);
            let marker = t.path().join("ran");
            let body = format!(
                "open({:?}, 'a').write('X\\n')\ndumps = repr\n",
                marker.display().to_string()
            );
            std::fs::write(t.path().join("body.py"), &body).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(200));
            let plant = format!(
                "mkdir -p build/json && cp {b} build/json/__init__.py && \
                 cp {b} app/evil.py && ln -s evil.py app/json.py && \
                 cp {b} json.py && printf 'json.py\\n' >> .gitignore && echo planted",
                b = t.path().join("body.py").display()
            );
            let b = t.path().display().to_string();
            let mut flags = layer.to_vec();
            flags.extend(["--read", &b]);
            let o = run_as(t.path(), &ws, &home, nobody, &flags, &["sh", "-c", &plant]);
            assert_eq!(code(&o), 0, "{nobody} {layer:?}: {}{}", out(&o), err(&o));
            for dir in [".", "build", "app"] {
                let h = host_python(&ws.join(dir), "main.py");
                assert_eq!(code(&h), 0, "{nobody} {layer:?} {dir}: {}", err(&h));
                assert_eq!(out(&h).trim(), "[1]", "{nobody} {layer:?} {dir}");
                assert!(
                    !marker.exists(),
                    "{nobody} {layer:?} {dir}: host python imported the planted module"
                );
            }
        }
    }
}
