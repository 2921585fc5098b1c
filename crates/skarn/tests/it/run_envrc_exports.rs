//! The attack pass atk24d on issue 24 (notes: findings-atk24d), F3 and
//! F4: what an allowed `.envrc` exports (`PYTHONPATH`, `BASH_ENV`,
//! `PATH_add`) and the names bash resolves without running the project
//! (`"$(pwd)/x"`, `"$(dirname "${BASH_SOURCE[0]}")/x"`, braces, `$'x'`,
//! `${V:-x}`), and the reader's cap. Each is the attack judged from
//! outside: the planted file not kept, host bash and python (run as
//! direnv leaves the user's shell) run nothing the run wrote.

use std::path::Path;
use std::process::Command;

use crate::agent_files::{git_ok, judge, run_sh};
use crate::common::*;
use skarn_test_support::TempDir;

/// A git work tree `ws` with `envrc` committed, past the after-run
/// check's clock margin.
fn workspace(t: &TempDir, envrc: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    git_ok(&ws, &["init", "-q", "."]);
    std::fs::write(ws.join(".envrc"), envrc).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    (ws, home)
}

/// Host `program args` in `ws` with a clean environment plus `env`.
fn host(ws: &Path, env: &[(&str, String)], program: &str, args: &[&str]) {
    let mut c = Command::new(program);
    c.args(args)
        .current_dir(ws)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin");
    for (k, v) in env {
        c.env(k, v);
    }
    let _ = c.output();
}

/// F3: `export PYTHONPATH="$PWD/src"`, `BASH_ENV`, `NODE_OPTIONS`,
/// `PATH_add bin`: a command cannot plant `src/sitecustomize.py`,
/// the `BASH_ENV` file or a program in `bin`; host python and bash with
/// the `.envrc`'s environment run nothing; the file guard refuses them.
#[test]
fn what_an_envrc_exports_is_not_left_for_the_host() {
    if !host_has("bash", "--version") || !host_has("python3", "--version") {
        skarn_test_support::skip!("bash or python3 is not installed");
    }
    let t = TempDir::new("envrc_exports");
    let (ws, home) = workspace(
        &t,
        "export PYTHONPATH=\"$PWD/src\"\nexport BASH_ENV=\"$PWD/lib/bashenv\"\n\
         export NODE_OPTIONS=\"--require $PWD/lib/init.js\"\nPATH_add bin\n",
    );
    for d in ["src", "lib", "bin"] {
        std::fs::create_dir_all(ws.join(d)).unwrap();
    }
    std::fs::write(ws.join("src/app.py"), "print(1)\n").unwrap();
    let mark = t.path().join("ran");
    let m = mark.display();
    let o = run_sh(
        &ws,
        &home,
        &format!(
            "echo 'open(\"{m}\", \"a\").write(\"SITECUSTOMIZE\\n\")' > src/sitecustomize.py; \
             echo 'echo BASHENV >> {m}' > lib/bashenv; \
             printf '#!/bin/sh\\necho PROGRAM >> {m}\\n' > bin/python3; chmod +x bin/python3; \
             echo ok > other.txt"
        ),
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("other.txt")).unwrap_or_default(),
        "ok\n",
        "{o:?}"
    );
    for f in ["src/sitecustomize.py", "lib/bashenv", "bin/python3"] {
        assert!(
            !std::fs::read_to_string(ws.join(f))
                .unwrap_or_default()
                .contains(&m.to_string()),
            "{f} was written: {o:?}"
        );
    }
    // What the user's shell runs once direnv applied the exports.
    let src = ws.join("src").display().to_string();
    let env = [
        ("PYTHONPATH", src),
        ("BASH_ENV", ws.join("lib/bashenv").display().to_string()),
        (
            "PATH",
            format!("{}:/usr/local/bin:/usr/bin:/bin", ws.join("bin").display()),
        ),
    ];
    host(&ws, &env, "python3", &["-c", "pass"]);
    host(&ws, &env, "bash", &["-c", "true"]);
    host(&ws, &env, "sh", &["-c", "python3 -c pass"]);
    assert!(
        !mark.exists(),
        "planted code ran: {:?}",
        std::fs::read_to_string(&mark)
    );
    for f in [
        "src/sitecustomize.py",
        "lib/bashenv",
        "lib/init.js",
        "bin/ls",
    ] {
        let why = judge(&ws.join(f).display().to_string(), &ws, &home);
        // (A customize module is refused anywhere, whatever names it.)
        assert!(
            why.as_deref()
                .is_some_and(|w| w.contains("direnv") || w.contains("customize module")),
            "{f}: {why:?}"
        );
    }
    // The rest of the project stays writable.
    assert_eq!(
        judge(&ws.join("other.py").display().to_string(), &ws, &home),
        None
    );
}

/// F4: names bash resolves statically, and the literal tail of one it
/// cannot: each file is kept from the run and bash sourcing the `.envrc`
/// (direnv's calls as sourcing functions) runs nothing the run wrote.
#[test]
fn names_bash_resolves_statically_are_protected() {
    if !host_has("bash", "--version") {
        skarn_test_support::skip!("bash is not installed");
    }
    let t = TempDir::new("envrc_static");
    let names = [
        ".envrc.dev",
        ".envrc.team",
        ".envrc.ci",
        "scripts/env.sh",
        ".envrc.top",
        ".envrc.ansi",
        ".envrc.dflt",
        "conf/tail.sh",
    ];
    let (ws, home) = workspace(
        &t,
        "source_env_if_exists \"$(pwd)/.envrc.dev\"\n\
         source_env_if_exists .envrc.{team,ci}\n\
         source_env_if_exists \"$(dirname \"${BASH_SOURCE[0]}\")/scripts/env.sh\"\n\
         source_env_if_exists \"$(git rev-parse --show-toplevel)/.envrc.top\"\n\
         source_env_if_exists $'.envrc.ansi'\n\
         source_env_if_exists ${LOCAL_ENV:-.envrc.dflt}\n\
         top() { echo .; }\nsource_env_if_exists \"$(top)/conf/tail.sh\"\n",
    );
    std::fs::create_dir_all(ws.join("scripts")).unwrap();
    std::fs::create_dir_all(ws.join("conf")).unwrap();
    let mark = t.path().join("ran");
    let script: String = names
        .iter()
        .map(|n| format!("echo 'echo {n} >> {}' > {n}; ", mark.display()))
        .collect();
    let o = run_sh(&ws, &home, &format!("{script}echo ok > other.txt"));
    assert_eq!(
        std::fs::read_to_string(ws.join("other.txt")).unwrap_or_default(),
        "ok\n",
        "{o:?}"
    );
    let _ = Command::new("bash")
        .arg("-c")
        .arg(
            "source_env_if_exists() { [ -f \"$1\" ] && . \"$1\"; }; \
             source_env() { . \"$1\"; }; . ./.envrc",
        )
        .current_dir(&ws)
        .env("HOME", &home)
        .output()
        .unwrap();
    assert!(
        !mark.exists(),
        "planted code ran: {:?} ({o:?})",
        std::fs::read_to_string(&mark)
    );
    for n in names {
        let why = judge(&ws.join(n).display().to_string(), &ws, &home);
        assert!(
            why.as_deref().is_some_and(|w| w.contains("direnv")),
            "{n}: {why:?}"
        );
    }
}

/// F4: more names than the reader keeps make the whole workspace
/// read-only for the run, said on stderr (no silent cut).
#[test]
fn too_many_envrc_names_make_the_workspace_read_only() {
    let t = TempDir::new("envrc_cap");
    let text: String = (0..5000)
        .map(|i| format!("watch_file w{i}.txt\n"))
        .collect();
    let (ws, home) = workspace(&t, &format!("{text}source_env x.sh\n"));
    let o = run_sh(&ws, &home, "echo ok > other.txt; echo bad > x.sh");
    assert!(!ws.join("other.txt").exists(), "{o:?}");
    assert!(!ws.join("x.sh").exists(), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("read-only for this run"), "{err}");
    // The file guard refuses the same tree.
    let why = judge(&ws.join("other.txt").display().to_string(), &ws, &home);
    assert!(
        why.as_deref().is_some_and(|w| w.contains("too many")),
        "{why:?}"
    );
}

/// F3: a missing `PATH_add` directory is not reserved (`npm install`
/// makes `node_modules/.bin`): the run creates it, and a new program
/// there named like a host program is set aside after the run; the
/// user's shell with the `.envrc`'s `PATH` runs the host's.
#[test]
fn a_missing_path_add_directory_is_checked_after_the_run() {
    let t = TempDir::new("envrc_path_add");
    let (ws, home) = workspace(&t, "PATH_add node_modules/.bin\n");
    let mark = t.path().join("ran");
    let o = run_sh(
        &ws,
        &home,
        &format!(
            "mkdir -p node_modules/.bin && printf '#!/bin/sh\\necho LS >> {}\\n' > \
             node_modules/.bin/ls && chmod +x node_modules/.bin/ls && \
             echo tool > node_modules/.bin/my-own-tool && echo ok > other.txt",
            mark.display()
        ),
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("other.txt")).unwrap_or_default(),
        "ok\n",
        "{o:?}"
    );
    assert!(ws.join("node_modules/.bin/my-own-tool").exists(), "{o:?}");
    assert!(!ws.join("node_modules/.bin/ls").exists(), "{o:?}");
    let path = format!(
        "{}:/usr/local/bin:/usr/bin:/bin",
        ws.join("node_modules/.bin").display()
    );
    host(&ws, &[("PATH", path)], "sh", &["-c", "ls >/dev/null"]);
    assert!(!mark.exists(), "the planted ls ran");
}

/// atk22e: `layout node` and `layout php` put `node_modules/.bin` and
/// `vendor/bin` on the user's PATH (direnv's standard library): a program
/// planted there, named like a host program, is not left for the host.
#[test]
fn layout_node_and_php_bin_directories_get_no_planted_programs() {
    for (layout, bin) in [("node", "node_modules/.bin"), ("php", "vendor/bin")] {
        let t = TempDir::new(&format!("envrc_layout_{layout}"));
        let (ws, home) = workspace(&t, &format!("layout {layout}\n"));
        std::fs::create_dir_all(ws.join(bin)).unwrap();
        let o = run_sh(
            &ws,
            &home,
            &format!(
                "printf '#!/bin/sh\\necho PWN\\n' > {bin}/git; chmod +x {bin}/git; \
                 echo ok > other.txt"
            ),
        );
        assert_eq!(
            std::fs::read_to_string(ws.join("other.txt")).unwrap_or_default(),
            "ok\n",
            "{o:?}"
        );
        assert!(!ws.join(bin).join("git").exists(), "{layout}: {o:?}");
    }
}
