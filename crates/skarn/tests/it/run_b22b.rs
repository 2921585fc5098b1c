//! `skarn run`, issue 22 (b22b), the fourth attack pass on files host
//! programs run on their own. atk22k F1c: a command line in an `.env` a
//! shell sources; F16: make's `!=`, rules and functions in an `.env` a
//! Makefile includes; F2b: a bare word naming a module the interpreter
//! imports (`_PYTHON_SYSCONFIGDATA_NAME`, `FLASK_APP`); F9's files:
//! husky 4's, nano-staged's and simple-git-hooks' configuration; F18: the
//! pnpmfile `pnpm-workspace.yaml` or `.npmrc` names, and pnpm's
//! `.pnpmfile.mjs`. Each attack is made in both workspace layers, as
//! root and as uid 65534, and judged from outside after the run: the host
//! shell, make or python did not run the planted code, the host's file is
//! the user's.

use std::path::Path;
use std::process::Command;

use crate::common::*;
use crate::support_h22p::{LAYERS, failures};
use crate::support_secret_sources::as_user;
use crate::support_secret_sources::users;
use skarn_test_support::TempDir;

/// `skarn run` in `ws` of `sh -c script` with `P` set to `planted`, as
/// the caller or (with `other`) as uid 65534; the stderr.
fn run(
    t: &TempDir,
    ws: &Path,
    home: &Path,
    layer: &str,
    other: bool,
    script: &str,
    planted: &str,
) -> String {
    let mut c = run_command(
        ws,
        home,
        &["--workspace-layer", layer],
        &["sh", "-c", script],
    );
    c.env("P", planted);
    if other {
        c = as_user(c, t.path());
    }
    let o = c.output().unwrap();
    err(&o)
}

/// The host program `cmd` (in `ws`): what the user runs there later.
fn host(ws: &Path, cmd: &str) {
    let _ = Command::new("sh")
        .current_dir(ws)
        .args(["-c", cmd])
        .env_remove("MAKEFLAGS")
        .output();
}

/// What the host runs with the `.env` loaded by a shell (an entrypoint,
/// `set -a; . ./.env`), by make (`-include .env`), and by Python given
/// its variables.
const HOST_LOADERS: &[&str] = &[
    "set -a; . ./.env; set +a",
    "make -s >/dev/null 2>&1",
    "set -a; . ./.env; set +a; python3 -c 'import sysconfig; sysconfig.get_config_vars()'",
    "set -a; . ./.env; set +a; python3 -c \
     'import os, importlib; importlib.import_module(os.environ[\"FLASK_APP\"].split(\":\")[0])'",
];

/// `.env` bodies a run writes, with a Python module it writes beside
/// them (empty: none). Each makes a host loader create `pwned`.
const ENV_PLANTS: &[(&str, &str)] = &[
    // F1c: a command line, a command after an assignment.
    ("APP=demo\ntouch pwned\n", ""),
    ("PORT=3000 touch pwned\n", ""),
    // F16: make's shell assignment, and a rule inside what a shell reads
    // as a quoted value (the default goal: `-include .env` comes first).
    ("X != touch pwned\n", ""),
    ("A='\npwn:\n\ttouch pwned\n#'\n", ""),
    // F2b: a module's bare name.
    ("_PYTHON_SYSCONFIGDATA_NAME=evil\n", "evil"),
    ("FLASK_APP=evil:create_app\n", "evil"),
];

#[test]
fn an_env_file_runs_no_line_a_shell_make_or_python_would() {
    let module = "open('pwned', 'w').write('x')\nbuild_time_vars = {}\n";
    let mut failed = Vec::new();
    for layer in LAYERS {
        for other in users() {
            for (k, (body, beside)) in ENV_PLANTS.iter().enumerate() {
                let t = TempDir::new("b22b-env");
                let (home, ws) = (t.dir("home"), t.dir("ws"));
                // The user's Makefile reads the settings first.
                std::fs::write(ws.join("Makefile"), "-include .env\nall:\n\t@true\n").unwrap();
                let mut script = String::from("printf %s \"$P\" > .env");
                if !beside.is_empty() {
                    script += &format!("; printf %s \"$M\" > {beside}.py");
                }
                let mut c = run_command(
                    &ws,
                    &home,
                    &["--workspace-layer", layer],
                    &["sh", "-c", &script],
                );
                c.env("P", body).env("M", module);
                if other {
                    c = as_user(c, t.path());
                }
                let o = c.output().unwrap();
                let ctx = format!("[{layer} 65534={other} #{k} {body:?}] {}", err(&o));
                for cmd in HOST_LOADERS {
                    host(&ws, cmd);
                    if ws.join("pwned").exists() {
                        failed.push(format!("{ctx}: the host ran the planted code by `{cmd}`"));
                        let _ = std::fs::remove_file(ws.join("pwned"));
                    }
                }
            }
        }
    }
    failures(failed);
}

#[test]
fn an_env_file_of_plain_settings_is_kept() {
    // Usability: an application's settings, written by the run, stay.
    let body = "# app\nAPP_NAME=demo\nexport PORT=3000\nDEBUG=1\nSECRET_KEY='a b c'\n\
                DATABASE_URL=postgres://u@localhost/db\nFLASK_DEBUG=1\nPYTHONUNBUFFERED=1\n";
    let mut failed = Vec::new();
    for layer in LAYERS {
        let t = TempDir::new("b22b-env-ok");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        let o = run_command(
            &ws,
            &home,
            &["--workspace-layer", layer],
            &[
                "sh",
                "-c",
                "printf %s \"$P\" > .env && git init -q . && git add .env",
            ],
        )
        .env("P", body)
        .output()
        .unwrap();
        let ctx = format!("[{layer}] {}", err(&o));
        if !o.status.success() {
            failed.push(format!("{ctx}: the run failed"));
        }
        if std::fs::read_to_string(ws.join(".env")).ok().as_deref() != Some(body) {
            failed.push(format!("{ctx}: a plain .env was not kept"));
        }
    }
    failures(failed);
}

/// The hook managers' files (atk22k F9): a new one at the top, and the
/// user's one, which the run rewrites.
const RC_NEW: &[&str] = &[
    ".huskyrc",
    ".huskyrc.json",
    "husky.config.js",
    ".config/huskyrc.js",
    ".nano-staged.json",
    "nano-staged.mjs",
    ".nanostagedrc",
    ".simple-git-hooks.json",
    "simple-git-hooks.cjs",
];

#[test]
fn hook_managers_files_stay_the_users() {
    let planted = "{\"hooks\":{\"pre-commit\":\"touch pwned\"},\"*\":\"touch pwned\",\
                   \"pre-commit\":\"touch pwned\"}\n";
    let user = "{\"hooks\":{\"pre-commit\":\"npm test\"}}\n";
    let mut failed = Vec::new();
    for layer in LAYERS {
        for other in users() {
            let t = TempDir::new("b22b-rc");
            let (home, ws) = (t.dir("home"), t.dir("ws"));
            std::fs::write(ws.join("package.json"), "{\"name\":\"p\"}\n").unwrap();
            // The user's husky 4 setup in a package of a mono-repository.
            t.file("ws/web/package.json", "{\"name\":\"web\"}\n");
            t.file("ws/web/.huskyrc.json", user);
            let mut script = String::from("mkdir -p .config; for f in");
            for f in RC_NEW {
                script += &format!(" {f}");
            }
            script += "; do printf %s \"$P\" > $f; done; printf %s \"$P\" > web/.huskyrc.json; \
                       echo ok > index.js; true";
            let e = run(&t, &ws, &home, layer, other, &script, planted);
            let ctx = format!("[{layer} 65534={other}] {e}");
            if std::fs::read_to_string(ws.join("index.js")).ok().as_deref() != Some("ok\n") {
                failed.push(format!("{ctx}: an ordinary file was not written"));
            }
            if std::fs::read_to_string(ws.join("web/.huskyrc.json")).unwrap() != user {
                failed.push(format!("{ctx}: web/.huskyrc.json was changed"));
            }
            for f in RC_NEW {
                if std::fs::read_to_string(ws.join(f)).is_ok_and(|s| s.contains("pwned")) {
                    failed.push(format!("{ctx}: a planted {f} is at the workspace's top"));
                }
            }
        }
    }
    failures(failed);
}

#[test]
fn the_pnpmfile_pnpm_runs_stays_the_users() {
    let planted = "require('child_process').execSync('touch pwned');\n";
    let user = "module.exports = { hooks: {} };\n";
    let mut failed = Vec::new();
    for layer in LAYERS {
        for other in users() {
            let t = TempDir::new("b22b-pnpm");
            let (home, ws) = (t.dir("home"), t.dir("ws"));
            let wsy = "packages:\n  - 'pkgs/*'\npnpmfile: hooks/pnpmfile.cjs\n";
            t.file("ws/pnpm-workspace.yaml", wsy);
            t.file("ws/hooks/pnpmfile.cjs", user);
            t.file("ws/app/.npmrc", "pnpmfile=tools/p.cjs\n");
            t.file("ws/app/tools/p.cjs", user);
            // Its own nested workspace: the key is new there.
            t.file("ws/other/pnpm-workspace.yaml", "packages:\n  - 'x'\n");
            let script = "printf %s \"$P\" > hooks/pnpmfile.cjs; printf %s \"$P\" > app/tools/p.cjs; \
                 printf %s \"$P\" > .pnpmfile.mjs; printf %s \"$P\" > other/evil.cjs; \
                 printf 'packages:\\n  - x\\npnpmfile: evil.cjs\\n' > other/pnpm-workspace.yaml; \
                 printf 'catalog:\\n  left-pad: 1.3.0\\n' >> pnpm-workspace.yaml; \
                 echo ok > index.js; true";
            let e = run(&t, &ws, &home, layer, other, script, planted);
            let ctx = format!("[{layer} 65534={other}] {e}");
            let read = |p: &str| std::fs::read_to_string(ws.join(p)).unwrap_or_default();
            if read("index.js") != "ok\n" {
                failed.push(format!("{ctx}: an ordinary file was not written"));
            }
            for p in ["hooks/pnpmfile.cjs", "app/tools/p.cjs"] {
                if read(p) != user {
                    failed.push(format!("{ctx}: the pnpmfile {p} was changed"));
                }
            }
            if read(".pnpmfile.mjs").contains("pwned") {
                failed.push(format!("{ctx}: a planted .pnpmfile.mjs is at the top"));
            }
            // (The direct mode compares the top's file only.)
            if *layer == "cow" && read("other/pnpm-workspace.yaml").contains("pnpmfile") {
                failed.push(format!(
                    "{ctx}: other/pnpm-workspace.yaml names the run's pnpmfile"
                ));
            }
            // Usability: the catalog pnpm writes is kept.
            if !read("pnpm-workspace.yaml").contains("left-pad") {
                failed.push(format!(
                    "{ctx}: a catalog entry in pnpm-workspace.yaml was lost"
                ));
            }
        }
    }
    failures(failed);
}

#[test]
fn a_pnpmfile_setting_is_not_added() {
    let mut failed = Vec::new();
    for layer in LAYERS {
        for other in users() {
            let t = TempDir::new("b22b-pnpm-key");
            let (home, ws) = (t.dir("home"), t.dir("ws"));
            t.file("ws/pnpm-workspace.yaml", "packages:\n  - 'pkgs/*'\n");
            let script = "printf %s \"$P\" > evil.cjs; \
                 printf 'pnpmfile: evil.cjs\\n' >> pnpm-workspace.yaml; echo ok > index.js; true";
            let planted = "require('child_process').execSync('touch pwned');\n";
            let e = run(&t, &ws, &home, layer, other, script, planted);
            let ctx = format!("[{layer} 65534={other}] {e}");
            let read = |p: &str| std::fs::read_to_string(ws.join(p)).unwrap_or_default();
            if read("index.js") != "ok\n" {
                failed.push(format!("{ctx}: an ordinary file was not written"));
            }
            if read("pnpm-workspace.yaml").contains("pnpmfile") {
                failed.push(format!(
                    "{ctx}: pnpm-workspace.yaml names the run's pnpmfile"
                ));
            }
        }
    }
    failures(failed);
}
