//! Python code a run leaves for the host or for later runs (attack pass
//! atk22k, fourth round): F3, a compiled extension module named like the
//! standard library's (`json.cpython-311-x86_64-linux-gnu.so`,
//! `json.abi3.so`, `json.so`, a package `json/__init__.<suffix>`) beside a
//! script; F14, a package named like the standard library's that a
//! self-ignoring `.gitignore` hides from `git status`; F19, a `.pth` or
//! customize module planted in the python preset's user site kept in the
//! workspace's store, which ran in later runs of the workspace, one given
//! a secret included. Each is tried for real (as root and as uid 65534)
//! and judged from outside: host python imports the standard library's
//! module and no planted code leaves its mark.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::*;
use crate::support_secret_sources::{LAYER_FLAGS, run_as, users};
use crate::support_secret_sources::{setup, write_config};
use skarn_test_support::TempDir;

/// Host python runs `script` in `ws` (bytecode on, no search path from
/// the environment).
fn host_python(ws: &Path, script: &str) -> Output {
    Command::new("python3")
        .arg(script)
        .current_dir(ws)
        .env_remove("PYTHONPATH")
        .env_remove("PYTHONDONTWRITEBYTECODE")
        .env_remove("PYTHONSAFEPATH")
        .output()
        .unwrap()
}

/// The host's python3's extension-module suffixes.
fn extension_suffixes() -> Vec<String> {
    let o = Command::new("python3")
        .args([
            "-c",
            "import importlib.machinery as m; print('\\n'.join(m.EXTENSION_SUFFIXES))",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    out(&o).lines().map(str::to_string).collect()
}

/// A real extension module `json` (built on the host) whose init leaves
/// `marker`; None without a C compiler or Python's headers.
fn build_extension(dir: &Path, marker: &Path) -> Option<PathBuf> {
    let inc = Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['include'])",
        ])
        .output()
        .ok()?;
    let inc = out(&inc).trim().to_string();
    if !Path::new(&inc).join("Python.h").is_file() || !host_has("cc", "--version") {
        return None;
    }
    let c = dir.join("ext.c");
    std::fs::write(
        &c,
        format!(
            "#include <Python.h>\n#include <stdio.h>\n\
             static struct PyModuleDef m = {{PyModuleDef_HEAD_INIT, \"json\", NULL, -1, NULL}};\n\
             PyMODINIT_FUNC PyInit_json(void) {{\n\
               FILE *f = fopen({:?}, \"a\"); if (f) {{ fputs(\"EXT\\n\", f); fclose(f); }}\n\
               return PyModule_Create(&m);\n}}\n",
            marker.display().to_string()
        ),
    )
    .unwrap();
    let so = dir.join("ext.so");
    let o = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(&c)
        .arg(format!("-I{inc}"))
        .output()
        .ok()?;
    (code(&o) == 0).then_some(so)
}

/// F3: every extension-module suffix of the host's python, and a package
/// whose `__init__` is one, planted beside a script: host python imports
/// the standard library's `json` and the planted init never runs. A
/// non-stdlib extension module (`build_ext --inplace`) and the package's
/// own sources are kept.
#[test]
fn f3_extension_modules_named_like_the_standard_library_are_not_kept() {
    if !host_has("python3", "--version") {
        skarn_test_support::skip!("python3 is not installed");
    }
    for nobody in users() {
        for layer in LAYER_FLAGS {
            f3_attempt(nobody, layer);
        }
    }
}

fn f3_attempt(nobody: bool, layer: &[&str]) {
    let t = TempDir::new("b22c-f3");
    let (ws, home, ext) = (t.dir("ws"), t.dir("home"), t.dir("ext"));
    let marker = t.path().join("ran");
    let Some(so) = build_extension(&ext, &marker) else {
        skarn_test_support::skip!("no C compiler or Python headers to build an extension");
    };
    git(&ws, &["init", "-q"]);
    let suffixes = extension_suffixes();
    let script = "import json\nprint(json.dumps([1]))\n";
    let mut plant = String::new();
    let mut dirs = Vec::new();
    for (i, suf) in suffixes.iter().enumerate() {
        let d = format!("d{i}");
        t.file(format!("ws/{d}/main.py"), script);
        plant.push_str(&format!("cp {} {d}/json{suf} && ", so.display()));
        dirs.push(d);
    }
    t.file("ws/p/main.py", script);
    plant.push_str(&format!(
        "mkdir -p p/json && cp {} p/json/__init__{} && ",
        so.display(),
        suffixes[0]
    ));
    dirs.push("p".into());
    // Usability: a project's own extension module and package.
    std::fs::create_dir_all(ws.join("mylib")).unwrap();
    t.file("ws/mylib/__init__.py", "");
    plant.push_str(&format!(
        "cp {} mylib/_speedups{} && echo 'X = 1' > mylib/types.py && git status --short >/dev/null && echo planted",
        so.display(),
        suffixes[0]
    ));
    std::thread::sleep(std::time::Duration::from_millis(200));
    let mut flags = layer.to_vec();
    let e = ext.display().to_string();
    flags.extend(["--read", &e]);
    let o = run_as(t.path(), &ws, &home, nobody, &flags, &["sh", "-c", &plant]);
    assert_eq!(code(&o), 0, "{nobody} {layer:?}: {}{}", out(&o), err(&o));
    assert_eq!(out(&o).trim(), "planted", "{}", err(&o));
    for d in &dirs {
        let h = host_python(&ws.join(d), "main.py");
        assert_eq!(code(&h), 0, "{nobody} {layer:?} {d}: {}", err(&h));
        assert_eq!(out(&h).trim(), "[1]", "{d}");
        assert!(
            !marker.exists(),
            "{nobody} {layer:?} {d}: host python loaded the planted extension module"
        );
    }
    // Said (the layer names what it did not apply; the direct mode why).
    assert!(err(&o).contains("p/json/__init__"), "{}", err(&o));
    assert!(ws.join(format!("mylib/_speedups{}", suffixes[0])).is_file());
    assert!(ws.join("mylib/types.py").is_file());
}

/// F14: a package named like the standard library's, hidden from `git
/// status` by a `.gitignore` that ignores itself (`*`, or naming itself
/// and the package; nested too): host python runs the script at the top
/// and the one in `tools/` with the standard library's `json`.
#[test]
fn f14_a_package_hidden_from_git_is_judged_on_disk() {
    if !host_has("python3", "--version") {
        skarn_test_support::skip!("python3 is not installed");
    }
    for nobody in users() {
        for layer in LAYER_FLAGS {
            f14_attempt(nobody, layer);
        }
    }
}

fn f14_attempt(nobody: bool, layer: &[&str]) {
    let t = TempDir::new("b22c-f14");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let marker = t.path().join("ran");
    git(&ws, &["init", "-q"]);
    let script = "import json\nprint(json.dumps([1]))\n";
    t.file("ws/main.py", script);
    t.file("ws/tools/run.py", script);
    t.file("ws/lib/main.py", script);
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-qm", "init"]);
    let body = format!(
        "import os\nopen({:?}, 'a').write('PKG\\n')\ndumps = repr\n",
        marker.display().to_string()
    );
    std::fs::write(t.path().join("body.py"), &body).unwrap();
    let plant = format!(
        "mkdir -p json tools/json lib/json && cp {b} json/__init__.py && \
         cp {b} tools/json/__init__.py && cp {b} lib/json/__init__.py && \
         printf '*\\n' > .gitignore && printf '*\\n' > tools/.gitignore && \
         printf '/.gitignore\\n/json/\\n' > lib/.gitignore && git status --porcelain",
        b = t.path().join("body.py").display()
    );
    std::thread::sleep(std::time::Duration::from_millis(200));
    let b = t.path().display().to_string();
    let mut flags = layer.to_vec();
    flags.extend(["--read", &b]);
    let o = run_as(t.path(), &ws, &home, nobody, &flags, &["sh", "-c", &plant]);
    assert_eq!(code(&o), 0, "{nobody} {layer:?}: {}{}", out(&o), err(&o));
    // Hidden from git inside the run: the attack's premise.
    assert_eq!(out(&o).trim(), "", "{}", err(&o));
    for (dir, s) in [(".", "main.py"), ("tools", "run.py"), ("lib", "main.py")] {
        let h = host_python(&ws.join(dir), s);
        assert_eq!(code(&h), 0, "{nobody} {layer:?} {dir}: {}", err(&h));
        assert_eq!(out(&h).trim(), "[1]", "{nobody} {layer:?} {dir}");
        assert!(
            !marker.exists(),
            "{nobody} {layer:?} {dir}: host python imported the planted package"
        );
    }
    assert!(err(&o).contains("json/__init__.py"), "{}", err(&o));
}

/// The user site's `site-packages` in the store of `home`, where run one
/// left it (None when the store kept none).
fn stored_site(home: &Path) -> Option<PathBuf> {
    let stores = home.join(".local/state/skarn/store");
    for s in std::fs::read_dir(stores).ok()?.flatten() {
        for c in std::fs::read_dir(s.path().join("c")).ok()?.flatten() {
            let Ok(rd) = std::fs::read_dir(c.path().join("u")) else {
                continue;
            };
            for v in rd.flatten() {
                let sp = v.path().join("site-packages");
                if sp.join("zz-plant.pth").exists() {
                    return Some(sp);
                }
            }
        }
    }
    None
}

/// F19: run one of a workspace plants a `.pth` (an import line), a
/// `usercustomize.py` and a `sitecustomize` package in the user site the
/// store keeps; run two, given a secret, starts python: none of them
/// runs (nothing is left in the workspace by them), and a plain module
/// and a `.pth` of plain paths installed there are still importable.
#[test]
fn f19_start_up_code_in_the_stores_user_site_does_not_run_in_later_runs() {
    if !host_has("python3", "--version") {
        skarn_test_support::skip!("python3 is not installed");
    }
    for nobody in users() {
        f19_attempt(nobody);
    }
}

fn f19_attempt(nobody: bool) {
    let s = setup("b22c-f19");
    let (root, home) = (s.root.clone(), s.home.clone());
    let _stores = Stores(home.clone());
    write_config(
        &home,
        &format!(
            "[secrets.ok]\ncommand = [{:?}]\nhosts = [\"example.test\"]\n",
            home.join("bin/tok").display().to_string()
        ),
    );
    let ws = root.join("ws");
    std::fs::create_dir_all(ws.join("srcdir")).unwrap();
    std::fs::write(ws.join("requirements.txt"), "").unwrap();
    std::fs::write(ws.join("srcdir/fromsrc.py"), "V = 'src'\n").unwrap();
    let leak = |w: &str| {
        format!(
            "import os; open(os.path.join(os.getcwd(), 'leak-{w}'), 'a').write(os.environ.get('OK', '-'))"
        )
    };
    let plant = format!(
        "import os, site\n\
         d = site.getusersitepackages()\n\
         os.makedirs(d + '/sitecustomize', exist_ok=True)\n\
         open(d + '/zz-plant.pth', 'w').write({pth:?})\n\
         open(d + '/usercustomize.py', 'w').write({uc:?})\n\
         open(d + '/sitecustomize/__init__.py', 'w').write({sc:?})\n\
         open(d + '/keptmod.py', 'w').write('V = \"kept\"\\n')\n\
         open(d + '/paths.pth', 'w').write({src:?} + '\\n')\n\
         os.chmod(d, 0o555)\n\
         print('planted')\n",
        pth = format!("/nonexistent\n{}\n", leak("pth")),
        uc = format!("{}\n", leak("user")),
        sc = format!("{}\n", leak("site")),
        src = ws.join("srcdir").display().to_string(),
    );
    let o = run_as(&root, &ws, &home, nobody, &[], &["python3", "-c", &plant]);
    assert_eq!(code(&o), 0, "{nobody}: {}{}", out(&o), err(&o));
    assert_eq!(out(&o).trim(), "planted", "{}", err(&o));
    // The store kept the plant for the next run (the attack's premise).
    assert!(
        stored_site(&home).is_some(),
        "{nobody}: no plant in the store"
    );
    let o = run_as(
        &root,
        &ws,
        &home,
        nobody,
        &["--secret", "ok"],
        &[
            "python3",
            "-c",
            "import keptmod, fromsrc; print('second', keptmod.V, fromsrc.V)",
        ],
    );
    assert_eq!(code(&o), 0, "{nobody}: {}{}", out(&o), err(&o));
    assert_eq!(out(&o).trim(), "second kept src", "{}", err(&o));
    let left: Vec<String> = std::fs::read_dir(&ws)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("leak-"))
        .collect();
    assert!(
        left.is_empty(),
        "{nobody}: the planted start-up code ran in the run given a secret: {left:?}"
    );
    assert!(err(&o).contains("zz-plant.pth"), "{}", err(&o));
}
