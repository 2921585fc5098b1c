//! Attack atk22k, helper b22d's share, each checked from outside, as
//! root and as uid 65534: a nested repository renamed in a run keeps its
//! history (F17); a project installed by pnpm 10 (whose store links to
//! it) is accepted as a workspace (F20); a `PATH` script naming a data
//! directory of the workspace (`HOMEDIR=${HOME}/lib/cs`) keeps that
//! directory read-only, not the whole workspace; the terminal on fd 0
//! gets no raw control strings with stdout and stderr redirected (F4).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use skarn_test_support::TempDir;

use crate::common::*;
use crate::support_secret_sources::{as_user, is_root};

/// Run `c` as the caller and, when root, again as uid 65534 (owning
/// `dir`), each run checked by `check` before the next.
fn both(dir: &Path, c: impl Fn() -> Command, mut check: impl FnMut(&str, Output)) {
    check("caller", c().output().unwrap());
    if is_root() {
        check("uid 65534", as_user(c(), dir).output().unwrap());
    }
}

/// A workspace repository holding the nested repository `app` (one
/// commit, a pre-commit hook: a new repository with one is refused).
fn nested_repo(t: &TempDir) -> (PathBuf, PathBuf) {
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    git(&ws, &["init", "-q"]);
    let app = t.dir("ws/app");
    git(&app, &["init", "-q"]);
    std::fs::write(app.join("a.txt"), "a\n").unwrap();
    git(&app, &["add", "a.txt"]);
    git(&app, &["commit", "-qm", "first"]);
    std::fs::write(app.join(".git/hooks/pre-commit"), "#!/bin/sh\nexit 0\n").unwrap();
    (ws, home)
}

/// The branch commit of the git directory `g`.
fn head_commit(g: &Path) -> Option<String> {
    let head = std::fs::read_to_string(g.join("HEAD")).ok()?;
    let r = head.trim().strip_prefix("ref: ")?;
    std::fs::read_to_string(g.join(r))
        .ok()
        .map(|s| s.trim().to_string())
}

#[test]
fn a_renamed_nested_repository_keeps_its_history() {
    for who in ["caller", "uid 65534"] {
        if who != "caller" && !is_root() {
            continue;
        }
        for (script, moved) in [
            ("mv app app-old", true),
            // The copy changed in the run: not the same repository, so
            // the rename is refused and the original kept.
            ("mv app app-old && echo x >> app-old/.git/HEAD", false),
        ] {
            let t = TempDir::new("b22d-f17");
            let (ws, home) = nested_repo(&t);
            let first = head_commit(&ws.join("app/.git")).unwrap();
            let c = run_command(&ws, &home, &[], &["sh", "-c", script]);
            let o = if who == "caller" {
                run_command(&ws, &home, &[], &["sh", "-c", script])
                    .output()
                    .unwrap()
            } else {
                as_user(c, t.path()).output().unwrap()
            };
            assert_eq!(code(&o), 0, "{who} {script}: {}", err(&o));
            let at = if moved {
                ws.join("app-old/.git")
            } else {
                ws.join("app/.git")
            };
            assert_eq!(
                head_commit(&at).as_deref(),
                Some(first.as_str()),
                "{who} {script}: the repository's history was lost: {}",
                err(&o)
            );
            assert!(ws.join("app-old/a.txt").exists(), "{who} {script}");
            if !moved {
                assert!(ws.join("app/a.txt").exists(), "{who}: original kept whole");
            }
        }
    }
    // An ordinary removal is still applied.
    let t = TempDir::new("b22d-f17-rm");
    let (ws, home) = nested_repo(&t);
    let o = run_in(&ws, &home, &[], &["rm", "-rf", "app"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(!ws.join("app").exists(), "{}", err(&o));
}

/// A package tarball `dep-1.0.0.tgz` in `dir` (index.js exports 42).
fn dep_tarball(dir: &Path) {
    let src = dir.join("src/package");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("package.json"),
        r#"{"name":"dep","version":"1.0.0","main":"index.js"}"#,
    )
    .unwrap();
    std::fs::write(src.join("index.js"), "module.exports = 42;\n").unwrap();
    let st = Command::new("tar")
        .arg("czf")
        .arg(dir.join("dep-1.0.0.tgz"))
        .arg("-C")
        .arg(dir.join("src"))
        .arg("package")
        .status()
        .unwrap();
    assert!(st.success());
    std::fs::remove_dir_all(dir.join("src")).unwrap();
}

#[test]
fn a_project_pnpm_10_installed_is_a_workspace() {
    if !host_has("pnpm", "--version") || !host_has("node", "--version") {
        skarn_test_support::skip!("no pnpm or node on the host");
    }
    let t = TempDir::new("b22d-f20");
    let (ws, home) = (t.dir("proj"), t.dir("home"));
    git(&ws, &["init", "-q"]);
    dep_tarball(&t.dir("proj/vendor"));
    std::fs::write(
        ws.join("package.json"),
        r#"{"name":"proj","version":"1.0.0","dependencies":{"dep":"file:vendor/dep-1.0.0.tgz"}}"#,
    )
    .unwrap();
    // A look-alike of pnpm's project record outside a store: still a home
    // link into a directory, which is refused.
    let other = t.dir("other");
    let fake = t.dir("home/.local/share/tool/v10/projects");
    std::os::unix::fs::symlink(&other, fake.join("0123456789abcdef0123456789abcdef")).unwrap();
    let install = || {
        let mut c = Command::new("pnpm");
        // (`--dir`: `as_user` keeps no working directory.)
        c.arg("--dir")
            .arg(&ws)
            .args(["install", "--offline"])
            .env("HOME", &home)
            .env_remove("XDG_DATA_HOME")
            .env_remove("PNPM_HOME");
        c
    };
    let run = |dir: &Path| {
        let mut c = run_command(
            dir,
            &home,
            &[],
            &[
                "sh",
                "-c",
                "pnpm install --offline >&2 && node -e 'console.log(require(\"dep\"))'",
            ],
        );
        c.env_remove("XDG_DATA_HOME").env_remove("PNPM_HOME");
        c
    };
    for who in ["caller", "uid 65534"] {
        if who != "caller" && !is_root() {
            continue;
        }
        let _ = std::fs::remove_dir_all(ws.join("node_modules"));
        let _ = std::fs::remove_dir_all(home.join(".local/share/pnpm"));
        let o = if who == "caller" {
            install().output().unwrap()
        } else {
            as_user(install(), t.path()).output().unwrap()
        };
        assert!(
            o.status.success(),
            "{who}: host pnpm install: {} {}",
            out(&o),
            err(&o)
        );
        let store = home.join(".local/share/pnpm/store");
        assert!(store.exists(), "{who}: pnpm keeps its store elsewhere");
        let o = if who == "caller" {
            run(&ws).output().unwrap()
        } else {
            as_user(run(&ws), t.path()).output().unwrap()
        };
        assert_eq!(code(&o), 0, "{who}: {}", err(&o));
        assert_eq!(out(&o).trim(), "42", "{who}: {}", err(&o));
        // The refusal's protection stays for other links.
        let mut c = run_command(&other, &home, &[], &["sh", "-c", "echo x > planted"]);
        c.env_remove("XDG_DATA_HOME");
        let o = if who == "caller" {
            c.output().unwrap()
        } else {
            as_user(c, t.path()).output().unwrap()
        };
        assert_eq!(code(&o), 2, "{who}: {}", err(&o));
        assert!(!other.join("planted").exists(), "{who}");
    }
}

#[test]
fn a_path_script_naming_a_data_directory_keeps_only_that_directory() {
    let t = TempDir::new("b22d-pathdata");
    let home = t.dir("home");
    let ws = t.dir("home/lib");
    t.dir("home/lib/cs");
    git(&ws, &["init", "-q"]);
    let tools = t.dir("tools");
    let script = |name: &str, body: &str| {
        use std::os::unix::fs::PermissionsExt;
        let p = tools.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    // cscope's wrapper: its databases under ~/lib/cs.
    script(
        "cstool",
        "HOMEDIR=${HOME}/lib/cs\nDIR=${HOMEDIR}$PWD\nexec cscope -f ${DIR}/cscope.out",
    );
    let path = format!(
        "{}:{}",
        tools.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let attempt = "echo ok > f; echo planted > cs/cscope.out; mkdir -p cs/x; true";
    let run = || {
        let mut c = run_command(&ws, &home, &[], &["sh", "-c", attempt]);
        c.env("PATH", &path);
        c
    };
    both(t.path(), run, |who, o| {
        assert_eq!(code(&o), 0, "{who}: {}", err(&o));
        assert!(
            std::fs::read_to_string(ws.join("f")).is_ok_and(|s| s == "ok\n"),
            "{who}: the workspace stayed read-only: {}",
            err(&o)
        );
        assert!(!ws.join("cs/cscope.out").exists(), "{who}: {}", err(&o));
        assert!(!ws.join("cs/x").exists(), "{who}: {}", err(&o));
        let _ = std::fs::remove_file(ws.join("f"));
    });
    // A program of the workspace the script runs, or a script that can
    // climb from the directory it names: the whole workspace.
    for (name, body) in [
        ("pytool", "exec python3 ${HOME}/lib/tool/main.py \"$@\""),
        (
            "climb",
            "D=${HOME}/lib/cs\n. \"$(dirname \"$D\")/setup.sh\"",
        ),
    ] {
        std::fs::create_dir_all(ws.join("tool")).unwrap();
        std::fs::write(ws.join("tool/main.py"), "print(1)\n").unwrap();
        script(name, body);
        both(t.path(), run, |who, o| {
            assert!(!ws.join("f").exists(), "{name} {who}: {}", err(&o));
        });
        std::fs::remove_file(tools.join(name)).unwrap();
    }
}

#[test]
fn the_terminal_on_standard_input_gets_no_raw_control_strings() {
    if !host_has("script", "--version") {
        skarn_test_support::skip!("no `script` on the host");
    }
    let t = TempDir::new("b22d-f4");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let res = t.dir("res");
    let payload = "[ -t 0 ] && echo input-is-a-terminal; \
                   printf 'A\\033]52;c;ZXZpbA==\\007B\\033]0;title\\007C' >&0; \
                   printf 'D\\033]52;c;ZXZpbA==\\007E' 1<>/proc/self/fd/0; true";
    let line = format!(
        "{} run --no-config --workspace {} -- sh -c \"{}\" >{}/out 2>{}/err",
        exe().display(),
        ws.display(),
        payload.replace('"', "\\\""),
        res.display(),
        res.display()
    );
    let run = || {
        let mut c = Command::new("script");
        c.args(["-qec", &line, "/dev/null"])
            .env("HOME", &home)
            .stdin(std::process::Stdio::null());
        c
    };
    both(t.path(), run, |who, o| {
        let tty = out(&o);
        let said = std::fs::read_to_string(res.join("out")).unwrap_or_default();
        let errs = std::fs::read_to_string(res.join("err")).unwrap_or_default();
        assert!(
            said.contains("input-is-a-terminal"),
            "{who}: the command lost its terminal input: {said:?} {errs}"
        );
        assert!(
            !tty.contains("\x1b]52") && !tty.contains("\x1b]0;"),
            "{who}: raw control strings reached the terminal: {tty:?} {errs}"
        );
    });
}
