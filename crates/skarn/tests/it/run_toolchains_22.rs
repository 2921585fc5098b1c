//! `skarn run`, issue 22 (attack atk22e/f A and B): toolchains and Python
//! environments of the home that the host runs later, whose files lie in
//! the workspace through a link (`rustup toolchain link dev <dir>`, a
//! pyenv version or nvm node linked to a local build, a poetry or home
//! environment whose site-packages is a link). A run cannot rewrite them;
//! checked from outside by running the host's program afterwards.

use std::path::Path;

use crate::common::*;
use skarn_test_support::TempDir;

fn link(to: &Path, at: &Path) {
    std::fs::create_dir_all(at.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(to, at).unwrap();
}

fn program(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The host runs each toolchain's program after the run: none ran what
/// the run planted (the marker is missing).
#[test]
fn toolchains_linked_into_the_workspace_cannot_be_rewritten() {
    let t = TempDir::new("tc22-links");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let progs = [
        ("tc/bin/rustc", ".rustup/toolchains/dev"),
        ("pv/bin/python3", ".pyenv/versions/3.12-dev"),
        ("nd/bin/node", ".nvm/versions/node/v99.0.0"),
        ("rb/bin/ruby", ".rbenv/versions/dev"),
        ("jdk/bin/java", ".sdkman/candidates/java/dev"),
    ];
    for (prog, at) in progs {
        program(&ws.join(prog));
        let top = prog.split('/').next().unwrap();
        link(&ws.join(top), &home.join(at));
    }
    let marker = t.path().join("PLANTED-RAN");
    let script = progs
        .iter()
        .map(|(p, _)| {
            format!(
                "printf '#!/bin/sh\\ntouch {}\\n' > {p} 2>/dev/null",
                marker.display()
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    let o = run_command(&ws, &home, &[], &["sh", "-c", &format!("{script}; true")])
        // The tools' own variables, as a host shell has them: pyenv moved.
        .env("PYENV_ROOT", home.join(".pyenv"))
        .env_remove("RUSTUP_HOME")
        .env_remove("NVM_DIR")
        .env_remove("RBENV_ROOT")
        .env_remove("SDKMAN_DIR")
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    for (prog, at) in progs {
        // The host runs the toolchain's program by its home name.
        let name = home.join(at).join(prog.split_once('/').unwrap().1);
        let s = std::process::Command::new(&name).status().unwrap();
        assert!(s.success(), "{}", name.display());
        assert!(
            !marker.exists(),
            "the host's {} ran what the run planted: {}",
            name.display(),
            err(&o)
        );
    }
}

/// Python environments outside the workspace (home `.venv`, poetry's at
/// the place its configuration names) whose site-packages, or whole
/// directory, is a link into the workspace: no `.pth` or customize module
/// can be planted there.
#[test]
fn python_environments_linking_into_the_workspace_cannot_get_start_up_code() {
    let t = TempDir::new("tc22-envs");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let elsewhere = t.dir("poetry-envs");
    t.file(
        "home/.config/pypoetry/config.toml",
        format!("[virtualenvs]\npath = \"{}\"\n", elsewhere.display()),
    );
    t.dir("ws/sp");
    t.dir("ws/penv/lib/python3.12/site-packages");
    t.file("ws/penv/pyvenv.cfg", "home = /usr/bin\n");
    link(
        &ws.join("sp"),
        &home.join(".venv/lib/python3.12/site-packages"),
    );
    link(&ws.join("penv"), &elsewhere.join("proj-AbC123-py3.12"));
    let o = run_command(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "echo 'import os' > sp/evil.pth 2>/dev/null; \
             echo 'import os' > penv/lib/python3.12/site-packages/evil.pth 2>/dev/null; \
             echo x > penv/lib/python3.12/site-packages/sitecustomize.py 2>/dev/null; \
             echo ok > src.txt",
        ],
    )
    .env_remove("POETRY_VIRTUALENVS_PATH")
    .env_remove("POETRY_CONFIG_DIR")
    .env_remove("VIRTUAL_ENV")
    .output()
    .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    for f in [
        "sp/evil.pth",
        "penv/lib/python3.12/site-packages/evil.pth",
        "penv/lib/python3.12/site-packages/sitecustomize.py",
    ] {
        assert!(!ws.join(f).exists(), "{f} was planted: {}", err(&o));
    }
    // The rest of the workspace stays writable.
    assert_eq!(std::fs::read_to_string(ws.join("src.txt")).unwrap(), "ok\n");
}

/// A version manager whose home the caller keeps inside the workspace
/// (`RBENV_ROOT`, `ASDF_DATA_DIR`, `SDKMAN_DIR` set to a directory of the
/// project; pyenv's and nvm's are granted read-only by the presets): its
/// installed toolchains cannot be rewritten either.
#[test]
fn toolchains_of_a_version_manager_home_inside_the_workspace_cannot_be_rewritten() {
    let t = TempDir::new("tc22-homes");
    let home = t.dir("home");
    let ws = t.dir("ws");
    let progs = [
        (".rbenv/versions/3.3.0/bin/ruby", "RBENV_ROOT", ".rbenv"),
        (
            ".asdf/installs/nodejs/20.0.0/bin/node",
            "ASDF_DATA_DIR",
            ".asdf",
        ),
        (
            ".sdkman/candidates/java/21/bin/java",
            "SDKMAN_DIR",
            ".sdkman",
        ),
    ];
    for (p, _, _) in progs {
        program(&ws.join(p));
    }
    let marker = t.path().join("PLANTED-RAN");
    let script = progs
        .iter()
        .map(|(p, _, _)| {
            format!(
                "printf '#!/bin/sh\\ntouch {}\\n' > {p} 2>/dev/null",
                marker.display()
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    let mut c = run_command(&ws, &home, &[], &["sh", "-c", &format!("{script}; true")]);
    for (_, var, dir) in progs {
        c.env(var, ws.join(dir));
    }
    let o = c.output().unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    for (p, _, _) in progs {
        let s = std::process::Command::new(ws.join(p)).status().unwrap();
        assert!(s.success(), "{p}");
        assert!(
            !marker.exists(),
            "the host's {p} ran what the run planted: {}",
            err(&o)
        );
    }
}
