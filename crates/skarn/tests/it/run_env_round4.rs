//! `skarn run`, issue 22's third attack pass (atk22 F2, F5, F6, F8, F9,
//! F10, F11): each attack attempted for real and checked from outside
//! (the host file as it was, the host program did not run planted code,
//! the listener got nothing, the secret not printed), with the usability
//! side (git inside still works).

use std::path::Path;

use crate::common::*;
use skarn_test_support::TempDir;

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| format!("<{e}>"))
}

/// A host python usable by this user (not a per-user shim).
fn host_python() -> Option<&'static str> {
    ["/usr/bin/python3", "/usr/local/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).exists())
}

/// F2: a `.` or empty `PATH` entry makes the workspace a `PATH` directory
/// for a host shell started there: the run is refused, naming the flag;
/// the program the command would plant is not written.
#[test]
fn relative_path_entry_is_refused() {
    let t = TempDir::new("r4-relpath");
    let home = t.dir("home");
    let ws = t.dir("ws");
    git(&ws, &["init", "-q"]);
    let base = std::env::var("PATH").unwrap_or_default();
    for path in [format!("{base}:"), format!(".:{base}")] {
        let o = run_command(
            &ws,
            &home,
            &[],
            &["sh", "-c", "printf '#!/bin/sh\\necho PWN\\n' > cargo"],
        )
        .env("PATH", &path)
        .output()
        .unwrap();
        assert_ne!(code(&o), 0, "{path}: {}", err(&o));
        assert!(err(&o).contains("relative entry"), "{}", err(&o));
        assert!(
            err(&o).contains("--allow-non-project-workspace"),
            "{}",
            err(&o)
        );
        assert!(!ws.join("cargo").exists(), "{path}");
    }
}

/// F5: the global git configuration's relative `core.hooksPath`
/// (`.githooks`) names a hooks directory in every nested repository: an
/// existing nested repository's is reserved, a repository made during the
/// run with one is set aside; host git commits there run no planted hook.
#[test]
fn global_relative_hooks_path_is_protected_in_nested_repositories() {
    for layer in ["direct", "cow"] {
        hooks_path_case(layer);
    }
}

fn hooks_path_case(layer: &str) {
    let t = TempDir::new(&format!("r4-hookspath-{layer}"));
    let home = t.dir("home");
    let ws = t.dir("ws");
    let marker = t.path().join("pwn-hook");
    t.file("home/.gitconfig", "[core]\n\thooksPath = .githooks\n");
    git(&ws, &["init", "-q"]);
    let sub = t.dir("ws/sub");
    git(&sub, &["init", "-q"]);
    t.file("ws/sub/a", "a\n");
    let hook = format!("#!/bin/sh\\necho PWN > {}\\n", marker.display());
    let script = format!(
        "set -e; mkdir new; (cd new; git init -q; echo a > a; git add a); (cd sub; git add a)
         for d in sub new; do mkdir -p $d/.githooks 2>/dev/null && \
           printf '{hook}' > $d/.githooks/pre-commit && chmod +x $d/.githooks/pre-commit || true; done
         echo ok"
    );
    let o = run_in(
        &ws,
        &home,
        &["--workspace-layer", layer],
        &["sh", "-c", &script],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(out(&o).contains("ok"), "{}", err(&o));
    // Host git, as the user (the global configuration applies), commits.
    for d in ["sub", "new"] {
        let _ = std::process::Command::new("git")
            .arg("-C")
            .arg(ws.join(d))
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(["commit", "-q", "--allow-empty", "-m", "x"])
            .env("HOME", &home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
    }
    assert!(
        !marker.exists(),
        "{layer}: host git ran the planted hook: {}",
        err(&o)
    );
}

/// F6: a host server's socket below a directory the walk cannot list
/// (search-only, 0311) is unreachable; the listener gets nothing.
#[test]
fn socket_below_search_only_directory_is_unreachable() {
    use std::os::unix::fs::PermissionsExt;
    let t = TempDir::new("r4-sock");
    let home = t.dir("home");
    let ws = t.dir("ws");
    git(&ws, &["init", "-q"]);
    let inner = t.dir("ws/hid/inner");
    let sock = inner.join("s.sock");
    let l = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    l.set_nonblocking(true).unwrap();
    let hid = ws.join("hid");
    std::fs::set_permissions(&hid, std::fs::Permissions::from_mode(0o311)).unwrap();
    let s = sock.display().to_string();
    let o = probe(&ws, &home, &["--report"], &["unix", &s]);
    std::fs::set_permissions(&hid, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_ne!(code(&o), 0, "{s} was reachable: {}", out(&o));
    assert!(l.accept().is_err(), "the listener got a connection");
}

/// F8: an ssh key that `~/.ssh/config` names (`IdentityFile`) inside the
/// workspace is hidden.
#[test]
fn ssh_identity_file_in_workspace_is_hidden() {
    let t = TempDir::new("r4-sshkey");
    let home = t.dir("home");
    let ws = t.dir("home/dotfiles");
    git(&ws, &["init", "-q"]);
    t.file("home/dotfiles/keys/id_work", "SECRET-KEY-R4\n");
    t.file(
        "home/.ssh/config",
        "Host *\n  IdentityFile ~/dotfiles/keys/id_work\n",
    );
    let o = run_in(&ws, &home, &[], &["sh", "-c", "cat keys/id_work; true"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!out(&o).contains("SECRET-KEY-R4"), "{}", out(&o));
}

/// F9: `.cargo/config.toml` (a `build.rustc-wrapper` host cargo runs on
/// `cargo metadata`) cannot be planted at the top or below: an existing
/// one stays as it was, new ones are set aside after the run.
#[test]
fn cargo_config_cannot_be_planted() {
    let t = TempDir::new("r4-cargo");
    let home = t.dir("home");
    let ws = t.dir("ws");
    git(&ws, &["init", "-q"]);
    t.file("ws/old/.cargo/config.toml", "[build]\njobs = 1\n");
    // Past the after-run check's 50 ms clock margin (a file made just
    // before the run would count as the run's).
    std::thread::sleep(std::time::Duration::from_millis(200));
    let cfg = "[build]\\nrustc-wrapper = \\\".cargo/w.sh\\\"\\n";
    let script = format!(
        "for d in . sub old; do mkdir -p $d/.cargo; printf '{cfg}' > $d/.cargo/config.toml; \
         printf '{cfg}' > $d/.cargo/config; done; echo ok"
    );
    let o = run_in(&ws, &home, &[], &["sh", "-c", &script]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(
        read(&ws.join("old/.cargo/config.toml")),
        "[build]\njobs = 1\n"
    );
    for f in [
        ".cargo/config.toml",
        ".cargo/config",
        "sub/.cargo/config.toml",
        "sub/.cargo/config",
        "old/.cargo/config",
    ] {
        assert!(
            !read(&ws.join(f)).contains("rustc-wrapper"),
            "{f} planted: {}",
            err(&o)
        );
    }
}

/// F10: directories of the caller's PYTHONPATH, NODE_PATH and
/// LD_LIBRARY_PATH inside the workspace are read-only: a module shadowing
/// the standard library's is not planted; host python imports the real
/// one.
#[test]
fn search_path_directories_are_read_only() {
    let t = TempDir::new("r4-search");
    let home = t.dir("home");
    let ws = t.dir("ws");
    git(&ws, &["init", "-q"]);
    let src = t.dir("ws/src");
    let node = t.dir("ws/node");
    let lib = t.dir("ws/lib");
    let marker = t.path().join("pwn-py");
    let script = format!(
        "echo 'open(\"{}\",\"w\").write(\"PWN\")' > src/json.py; mkdir -p node/lodash; \
         echo x > node/lodash/index.js; echo x > lib/libselinux.so.1; echo ok > other; true",
        marker.display()
    );
    let o = run_command(&ws, &home, &[], &["sh", "-c", &script])
        .env("PYTHONPATH", &src)
        .env("NODE_PATH", &node)
        .env("LD_LIBRARY_PATH", &lib)
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!src.join("json.py").exists(), "{}", err(&o));
    assert!(!node.join("lodash").exists(), "{}", err(&o));
    assert!(!lib.join("libselinux.so.1").exists(), "{}", err(&o));
    // The rest of the workspace stays writable.
    assert_eq!(read(&ws.join("other")), "ok\n");
    if let Some(py) = host_python() {
        let _ = std::process::Command::new(py)
            .args(["-c", "import json"])
            .env("PYTHONPATH", &src)
            .output();
        assert!(!marker.exists(), "host python ran the planted module");
    }
}

/// F11: the workspace's own `.hg/hgrc-not-shared` (read by share-safe
/// repositories) and `.hg/requires` cannot be written.
#[test]
fn top_level_hg_not_shared_config_cannot_be_planted() {
    let t = TempDir::new("r4-hg");
    let home = t.dir("home");
    let ws = t.dir("ws");
    git(&ws, &["init", "-q"]);
    t.file("ws/.hg/requires", "share-safe\nstore\n");
    t.file("ws/.hg/hgrc", "[ui]\n");
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "printf '[hooks]\\npre-status = echo PWN\\n' > .hg/hgrc-not-shared; \
             echo shared >> .hg/requires; echo ../x > .hg/sharedpath; true",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(
        !read(&ws.join(".hg/hgrc-not-shared")).contains("PWN"),
        "{}",
        err(&o)
    );
    assert_eq!(read(&ws.join(".hg/requires")), "share-safe\nstore\n");
    assert!(!read(&ws.join(".hg/sharedpath")).contains("../x"));
}

/// F13: a project virtual environment that is not activated: a `.pth`
/// that runs code planted in its site-packages is set aside after the
/// run (host python started from it does not run it), while
/// `pip install -e` of a src-layout project inside works and stays.
#[test]
fn venv_start_up_files_cannot_be_planted_and_pip_editable_works() {
    let Some(py) = host_python() else {
        skarn_test_support::skip!("no system python3");
    };
    let t = TempDir::new("r4-venv");
    let home = t.dir("home");
    let ws = t.dir("ws");
    git(&ws, &["init", "-q"]);
    let marker = t.path().join("pwn-pth");
    let mk = std::process::Command::new(py)
        .args(["-m", "venv", "--without-pip", "--system-site-packages"])
        .arg(ws.join(".venv"))
        .output()
        .unwrap();
    if !mk.status.success() {
        skarn_test_support::skip!("python3 -m venv failed: {}", err(&mk));
    }
    let vpy = ws.join(".venv/bin/python");
    let site = std::process::Command::new(&vpy)
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ])
        .output()
        .unwrap();
    let site = out(&site).trim().to_string();
    let pip_ok = std::process::Command::new(&vpy)
        .args(["-c", "import pip, setuptools"])
        .env("SETUPTOOLS_USE_DISTUTILS", "stdlib")
        .output()
        .unwrap()
        .status
        .success();
    t.file(
        "ws/pkg/pyproject.toml",
        "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n\
         [project]\nname = \"r4pkg\"\nversion = \"0.1\"\n",
    );
    t.file("ws/pkg/src/r4pkg/__init__.py", "X = 42\n");
    let pip = if pip_ok {
        ".venv/bin/python -m pip install -q --no-build-isolation --no-deps --no-index -e ./pkg \
         && echo PIP-OK"
    } else {
        "true"
    };
    let script = format!(
        "echo 'import os; open(\"{m}\",\"w\").write(\"PWN\")' > {site}/evil.pth; \
         echo 'open(\"{m}\",\"w\").write(\"PWN\")' > {site}/sitecustomize.py; {pip}",
        m = marker.display()
    );
    let o = run_command(&ws, &home, &[], &["sh", "-c", &script])
        .env_remove("VIRTUAL_ENV")
        .env("SETUPTOOLS_USE_DISTUTILS", "stdlib")
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    // Host python of that environment, outside the sandbox.
    let h = std::process::Command::new(&vpy)
        .args(["-c", "import r4pkg; print(r4pkg.X)"])
        .env("HOME", &home)
        .output()
        .unwrap();
    assert!(
        !marker.exists(),
        "host python ran the planted .pth: {}",
        err(&o)
    );
    if !pip_ok {
        skarn_test_support::skip!("pip or setuptools missing: the pip side was not run");
    }
    assert!(out(&o).contains("PIP-OK"), "{}", err(&o));
    assert_eq!(out(&h).trim(), "42", "editable install lost: {}", err(&h));
}

/// atk22e: the caller's options that make a runtime load code on every
/// start (`JAVA_TOOL_OPTIONS=-javaagent:<jar>`, `PERL5OPT=-I<dir>`,
/// `RUBYOPT=-r<file>`, `JDK_JAVA_OPTIONS=@<argfile>`) name files the run
/// cannot change when they lie in the workspace.
#[test]
fn runtime_option_variables_name_read_only_files() {
    let t = TempDir::new("r4-opts");
    let home = t.dir("home");
    let ws = t.dir("ws");
    git(&ws, &["init", "-q"]);
    t.file("ws/agent.jar", "jar\n");
    t.file("ws/args.txt", "-Dx=1\n");
    t.file("ws/init.rb", "# mine\n");
    let perl = t.dir("ws/perl");
    let o = run_command(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "echo PWN > agent.jar; echo PWN > args.txt; echo PWN > init.rb; \
             echo PWN > perl/strict.pm; echo ok > other; true",
        ],
    )
    .env(
        "JAVA_TOOL_OPTIONS",
        format!("-javaagent:{}=opt", ws.join("agent.jar").display()),
    )
    .env(
        "JDK_JAVA_OPTIONS",
        format!("@{}", ws.join("args.txt").display()),
    )
    .env("RUBYOPT", format!("-r{}", ws.join("init.rb").display()))
    .env("PERL5OPT", format!("-I{} -Mstrict", perl.display()))
    .output()
    .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(read(&ws.join("agent.jar")), "jar\n", "{}", err(&o));
    assert_eq!(read(&ws.join("args.txt")), "-Dx=1\n");
    assert_eq!(read(&ws.join("init.rb")), "# mine\n");
    assert!(!perl.join("strict.pm").exists(), "{}", err(&o));
    assert_eq!(read(&ws.join("other")), "ok\n");
}
