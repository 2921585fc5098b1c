//! `skarn run`, issue 22 (item A): a workspace virtual environment's
//! other ways in. A plain `.pth` line (an editable install's `src`) puts a
//! directory of the workspace on host python's path, from which python
//! imports `sitecustomize` at every start; the environment's
//! `bin/python` and `bin/activate` are run and sourced by path. Judged
//! from outside: host python of the environment did not run the plant.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;
use skarn_test_support::TempDir;

/// The two workspace modes.
const MODES: [&[&str]; 2] = [&[], &["--workspace-layer", "cow"]];

/// A virtual environment `ws/.venv` made by host python, with a plain
/// `.pth` naming `ws/src` (what an editable install writes).
fn venv(ws: &Path) -> Option<PathBuf> {
    git(ws, &["init", "-q"]);
    let o = Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(ws.join(".venv"))
        .output()
        .ok()?;
    if !o.status.success() {
        return None;
    }
    let ver = std::fs::read_dir(ws.join(".venv/lib"))
        .ok()?
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("python"))?;
    let sp = ver.path().join("site-packages");
    std::fs::create_dir_all(&sp).ok()?;
    std::fs::create_dir_all(ws.join("src")).ok()?;
    std::fs::write(
        sp.join("__editable__.proj.pth"),
        format!("{}\n", ws.join("src").display()),
    )
    .ok()?;
    // Past the after-run check's clock margin (what is here is the user's).
    std::thread::sleep(std::time::Duration::from_millis(200));
    Some(sp)
}

/// Host python of the environment starts: its status.
fn host_python(ws: &Path, code: &str) -> std::process::Output {
    Command::new(ws.join(".venv/bin/python"))
        .args(["-c", code])
        .env_remove("PYTHONPATH")
        .output()
        .unwrap()
}

#[test]
fn a_customize_module_in_a_directory_a_pth_names_is_not_left_for_host_python() {
    let mut own = false;
    for flags in MODES {
        let t = TempDir::new("venv22-pth");
        let home = t.dir("home");
        let ws = t.dir("ws");
        let Some(_sp) = venv(&ws) else {
            skarn_test_support::skip!("host python3 cannot make a virtual environment");
        };
        // Python imports the first sitecustomize on its path: one in the
        // standard library (Debian's) hides any other.
        own = host_python(&ws, "import sitecustomize").status.success();
        let marker = t.join("PLANTED-RAN");
        let plant = format!(
            "import os; open({:?}, 'a').write('x')\n",
            marker.display().to_string()
        );
        let script = "printf '%s' \"$P\" > src/sitecustomize.py; mkdir -p src/deep; \
             printf '%s' \"$P\" > src/deep/sitecustomize.py; echo ok > src/mod.py";
        let o = run_command(&ws, &home, flags, &["sh", "-c", script])
            .env("P", &plant)
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{flags:?}: {}", err(&o));
        // The rest of the source directory stays writable.
        assert_eq!(
            std::fs::read_to_string(ws.join("src/mod.py")).unwrap_or_default(),
            "ok\n",
            "{flags:?}: {}",
            err(&o)
        );
        let planted = std::fs::read_to_string(ws.join("src/sitecustomize.py")).unwrap_or_default();
        assert!(
            !planted.contains("PLANTED"),
            "{flags:?}: the run left src/sitecustomize.py: {}",
            err(&o)
        );
        let h = host_python(&ws, "pass");
        assert!(h.status.success(), "host python: {}", err(&h));
        assert!(
            !marker.exists(),
            "{flags:?}: host python ran the sitecustomize the run planted: {}",
            err(&o)
        );
        assert!(!ws.join("src/deep/sitecustomize.py").exists(), "{flags:?}");
    }
    if own {
        skarn_test_support::skip!(
            "host python3 has its own sitecustomize: only the files were checked, host python \
             would not have imported the plant anyway"
        );
    }
}

#[test]
fn an_environments_interpreter_and_activation_script_are_not_replaced() {
    for flags in MODES {
        let t = TempDir::new("venv22-bin");
        let home = t.dir("home");
        let ws = t.dir("ws");
        if venv(&ws).is_none() {
            skarn_test_support::skip!("host python3 cannot make a virtual environment");
        }
        let marker = t.join("PLANTED-RAN");
        let script = format!(
            "rm -f .venv/bin/python; printf '#!/bin/sh\\ntouch {m}\\n' > .venv/bin/python; \
             chmod +x .venv/bin/python; echo 'touch {m}' >> .venv/bin/activate; \
             echo ok > .venv/bin/tool; true",
            m = marker.display()
        );
        let o = run_command(&ws, &home, flags, &["sh", "-c", &script])
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{flags:?}: {}", err(&o));
        // What the host does next: an IDE runs the interpreter, a shell
        // sources the activation script.
        let _ = Command::new(ws.join(".venv/bin/python"))
            .args(["-c", "pass"])
            .output();
        let _ = Command::new("sh")
            .arg("-c")
            .arg(format!(". {}/.venv/bin/activate", ws.display()))
            .output();
        assert!(
            !marker.exists(),
            "{flags:?}: the host ran what the run put in .venv/bin: {}",
            err(&o)
        );
        // A console script, as pip writes one, stays.
        assert!(ws.join(".venv/bin/tool").exists(), "{flags:?}: {}", err(&o));
    }
}
