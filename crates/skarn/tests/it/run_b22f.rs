//! `skarn run`, issue 22 (b22f), the fifth attack pass (atk22l) on files
//! host programs load on their own. F1: linters' and formatters'
//! configuration below the top (the tools look for it from the file's
//! directory up); F4, F13: pylint's TOML files, RuboCop's and the other
//! languages' linters; F9, F12, F16, F15: `uv.toml`, `bunfig.toml`,
//! `.pdm-python`, aider's model settings; F3 (and F4, F9 by key): the same
//! settings as keys of `package.json`, `pyproject.toml`, `setup.cfg`,
//! `tox.ini`. Each attack is made in both workspace layers, as root and
//! as uid 65534, and judged from outside after the run: the host's file
//! is the user's, the run's is not where the host tool reads it.

use std::path::Path;
use std::process::Command;

use crate::common::*;
use crate::support_h22p::{LAYERS, failures};
use crate::support_hook::claude_write;
use crate::support_secret_sources::as_user;
use crate::support_secret_sources::users;
use skarn_test_support::TempDir;

/// `skarn run` in `ws` of `sh -c script`, as the caller or (with `other`)
/// as uid 65534; the stderr.
fn run(t: &TempDir, ws: &Path, home: &Path, layer: &str, other: bool, script: &str) -> String {
    let mut c = run_command(
        ws,
        home,
        &["--workspace-layer", layer],
        &["sh", "-c", script],
    );
    if other {
        c = as_user(c, t.path());
    }
    err(&c.output().unwrap())
}

/// Files a run writes, each holding `PLANTED`: configuration the host's
/// linters, formatters, package tools and aider load (new ones, at the
/// top and below it).
const PLANTS: &[&str] = &[
    // F1: below the top.
    "packages/web/.prettierrc.cjs",
    "packages/web/.eslintrc.js",
    "packages/new/eslint.config.js",
    "sub/tailwind.config.js",
    "sub/.stylelintrc.json",
    // F4.
    ".pylintrc.toml",
    "pylintrc.toml",
    "sub/.pylintrc",
    // F13 and the other languages' linters.
    ".rubocop.yml",
    "app/.rubocop.yml",
    ".golangci.yml",
    ".php-cs-fixer.php",
    ".flake8",
    ".markdownlint-cli2.cjs",
    // F9, F12, F16, F15.
    "uv.toml",
    "sub/uv.toml",
    "bunfig.toml",
    ".pdm-python",
    "poetry.toml",
    ".aider.model.settings.yml",
];

/// Whether `p` holds what the run planted.
fn planted(p: &Path) -> bool {
    std::fs::read_to_string(p).is_ok_and(|s| s.contains("PLANTED"))
}

#[test]
fn configuration_host_tools_load_is_refused_at_any_depth() {
    let mut failed = Vec::new();
    for layer in LAYERS {
        for other in users() {
            let t = TempDir::new("b22f-names");
            let (home, ws) = (t.dir("home"), t.dir("ws"));
            // The user's own configuration below the top.
            std::fs::create_dir_all(ws.join("packages/web")).unwrap();
            std::fs::write(ws.join("packages/web/.prettierrc.json"), "{}\n").unwrap();
            let mut script = String::from("echo PLANTED >> packages/web/.prettierrc.json; ");
            for p in PLANTS {
                let dir = Path::new(p)
                    .parent()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                if !dir.is_empty() {
                    script += &format!("mkdir -p {dir}; ");
                }
                script += &format!("echo '// PLANTED' > {p}; ");
            }
            let e = run(&t, &ws, &home, layer, other, &script);
            for p in PLANTS.iter().chain(&["packages/web/.prettierrc.json"]) {
                if planted(&ws.join(p)) {
                    failed.push(format!("[{layer} 65534={other}] {p} applied: {e}"));
                }
            }
        }
    }
    failures(failed);
}

/// The user's project files, and what a run writes over them: each sets
/// a key the host's tools load code from or take their index from.
const KEYED: &[(&str, &str, &str)] = &[
    (
        "package.json",
        "{\"name\":\"p\"}\n",
        "{\"name\":\"p\",\"prettier\":\"./PLANTED.cjs\"}\n",
    ),
    (
        "pyproject.toml",
        "[project]\nname = \"p\"\nversion = \"0.1\"\n",
        "[project]\nname = \"p\"\nversion = \"0.1\"\n[tool.pylint.main]\ninit-hook = 'PLANTED'\n",
    ),
    (
        "setup.cfg",
        "[metadata]\nname = p\n",
        "[metadata]\nname = p\n[mypy]\nplugins = PLANTED.py\n",
    ),
    (
        "tox.ini",
        "[tox]\nenvlist = py3\n",
        "[tox]\nenvlist = py3\n[flake8:local-plugins]\npaths = ./PLANTED\n",
    ),
];

#[test]
fn tool_keys_of_project_files_are_judged() {
    let mut failed = Vec::new();
    for layer in LAYERS {
        for other in users() {
            for pyproject_uv in [false, true] {
                let t = TempDir::new("b22f-keys");
                let (home, ws) = (t.dir("home"), t.dir("ws"));
                let mut script = String::new();
                for (k, (name, host, new)) in KEYED.iter().enumerate() {
                    std::fs::write(ws.join(name), host).unwrap();
                    let new = if pyproject_uv && *name == "pyproject.toml" {
                        "[project]\nname = \"p\"\n[tool.uv]\nfind-links = [\"PLANTED\"]\n"
                    } else {
                        new
                    };
                    std::fs::write(t.path().join(format!("new{k}")), new).unwrap();
                    script += &format!("cat {}/new{k} > {name}; ", t.path().display());
                }
                let mut c = run_command(
                    &ws,
                    &home,
                    &[
                        "--workspace-layer",
                        layer,
                        "--read",
                        &t.path().to_string_lossy(),
                    ],
                    &["sh", "-c", &script],
                );
                if other {
                    c = as_user(c, t.path());
                }
                let e = err(&c.output().unwrap());
                for (name, host, _) in KEYED {
                    let now = std::fs::read_to_string(ws.join(name)).unwrap_or_default();
                    if now.contains("PLANTED") || now != *host {
                        failed.push(format!(
                            "[{layer} 65534={other} uv={pyproject_uv}] {name}: {now:?}: {e}"
                        ));
                    }
                }
            }
        }
    }
    failures(failed);
}

#[test]
fn a_nested_package_json_key_is_judged_by_the_layer() {
    let mut failed = Vec::new();
    for other in users() {
        let t = TempDir::new("b22f-nested");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        std::fs::create_dir_all(ws.join("packages/web")).unwrap();
        std::fs::write(ws.join("packages/web/package.json"), "{\"name\":\"w\"}\n").unwrap();
        let e = run(
            &t,
            &ws,
            &home,
            "cow",
            other,
            "echo '{\"name\":\"w\",\"eslintConfig\":{\"parser\":\"./PLANTED.js\"}}' > \
             packages/web/package.json; echo '{\"name\":\"n\",\"stylelint\":{\"plugins\":\
             [\"./PLANTED.js\"]}}' > packages/new.json; mkdir -p packages/n; \
             mv packages/new.json packages/n/package.json",
        );
        for p in ["packages/web/package.json", "packages/n/package.json"] {
            if planted(&ws.join(p)) {
                failed.push(format!("[65534={other}] {p} applied: {e}"));
            }
        }
    }
    failures(failed);
}

#[test]
fn installed_packages_and_ordinary_edits_are_applied() {
    let mut failed = Vec::new();
    for layer in LAYERS {
        let t = TempDir::new("b22f-usable");
        let (home, ws, dep) = (t.dir("home"), t.dir("ws"), t.dir("dep"));
        // A package shipping its own lint configuration, packed by npm.
        std::fs::write(
            dep.join("package.json"),
            "{\"name\":\"dep\",\"version\":\"1.0.0\",\"eslintConfig\":{\"root\":true},\
             \"prettier\":{\"semi\":false}}\n",
        )
        .unwrap();
        std::fs::write(dep.join(".eslintrc.json"), "{}\n").unwrap();
        std::fs::write(dep.join(".prettierrc"), "{}\n").unwrap();
        std::fs::write(dep.join("index.js"), "module.exports = 1;\n").unwrap();
        let o = Command::new("npm")
            .args(["pack", "--silent"])
            .current_dir(&dep)
            .env("HOME", &home)
            .output()
            .unwrap();
        assert!(o.status.success(), "npm pack: {o:?}");
        let tgz = dep.join("dep-1.0.0.tgz");
        std::fs::write(
            ws.join("package.json"),
            "{\"name\":\"p\",\"version\":\"1.0.0\"}\n",
        )
        .unwrap();
        std::fs::write(
            ws.join("pyproject.toml"),
            "[project]\nname = \"p\"\nversion = \"0.1\"\n[tool.pylint.main]\njobs = 2\n",
        )
        .unwrap();
        let script = format!(
            "npm install --offline --no-audit --no-fund --ignore-scripts {} >/dev/null && \
             sed -i 's/0.1/0.2/; s/jobs = 2/jobs = 4/' pyproject.toml && \
             mkdir -p packages/web && echo 'let x = 1' > packages/web/a.js",
            tgz.display()
        );
        let mut c = run_command(
            &ws,
            &home,
            &["--workspace-layer", layer, "--read", &dep.to_string_lossy()],
            &["sh", "-c", &script],
        );
        let o = c.output().unwrap();
        let e = err(&o);
        if code(&o) != 0 {
            failed.push(format!("[{layer}] the run failed: {e}"));
        }
        for p in [
            "node_modules/dep/.eslintrc.json",
            "node_modules/dep/.prettierrc",
            "node_modules/dep/index.js",
            "packages/web/a.js",
        ] {
            if !ws.join(p).is_file() {
                failed.push(format!("[{layer}] {p} missing: {e}"));
            }
        }
        let pkg =
            std::fs::read_to_string(ws.join("node_modules/dep/package.json")).unwrap_or_default();
        if !pkg.contains("eslintConfig") {
            failed.push(format!(
                "[{layer}] the installed package.json: {pkg:?}: {e}"
            ));
        }
        let top = std::fs::read_to_string(ws.join("package.json")).unwrap_or_default();
        if !top.contains("\"dep\"") {
            failed.push(format!(
                "[{layer}] the dependency was not recorded: {top:?}: {e}"
            ));
        }
        let py = std::fs::read_to_string(ws.join("pyproject.toml")).unwrap_or_default();
        if !py.contains("0.2") || !py.contains("jobs = 4") {
            failed.push(format!("[{layer}] pyproject.toml: {py:?}: {e}"));
        }
    }
    failures(failed);
}

#[test]
fn the_agent_file_tools_are_denied_the_same_files() {
    let t = TempDir::new("b22f-hook");
    let (home, ws) = (t.dir("home"), t.dir("ws"));
    for p in PLANTS {
        if claude_write(&ws.join(p), &ws, &home, "// PLANTED").is_none() {
            panic!("Write of {p} was allowed");
        }
    }
    assert!(claude_write(&ws.join("packages/web/a.js"), &ws, &home, "1").is_none());
}

/// A project with an installed `prettier` (version 3.0.0) and its `.bin`
/// link, as npm leaves them.
fn with_prettier(ws: &Path) {
    let pkg = ws.join("node_modules/prettier");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::create_dir_all(ws.join("node_modules/.bin")).unwrap();
    std::fs::write(
        pkg.join("package.json"),
        "{\"name\":\"prettier\",\"version\":\"3.0.0\",\"main\":\"index.cjs\"}\n",
    )
    .unwrap();
    std::fs::write(pkg.join("index.cjs"), "module.exports = {};\n").unwrap();
    std::fs::write(pkg.join("bin.cjs"), "#!/usr/bin/env node\n").unwrap();
    std::os::unix::fs::symlink("../prettier/bin.cjs", ws.join("node_modules/.bin/prettier"))
        .unwrap();
}

#[test]
fn the_tools_editors_load_from_node_modules_are_not_changed_in_place() {
    let mut failed = Vec::new();
    for other in users() {
        let t = TempDir::new("b22f-node");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        with_prettier(&ws);
        let e = run(
            &t,
            &ws,
            &home,
            "cow",
            other,
            "cd node_modules; { echo '// PLANTED'; cat prettier/index.cjs; } > x && \
             mv x prettier/index.cjs; echo '// PLANTED' > prettier/extra.cjs; \
             rm .bin/prettier; printf '#!/bin/sh\\n# PLANTED\\n' > .bin/prettier; \
             chmod +x .bin/prettier; printf '#!/bin/sh\\n# PLANTED\\n' > .bin/eslint",
        );
        for p in [
            "prettier/index.cjs",
            "prettier/extra.cjs",
            ".bin/prettier",
            ".bin/eslint",
        ] {
            if planted(&ws.join("node_modules").join(p)) {
                failed.push(format!("[65534={other}] node_modules/{p} applied: {e}"));
            }
        }
        let link = std::fs::read_link(ws.join("node_modules/.bin/prettier"));
        if link.as_deref().ok() != Some(Path::new("../prettier/bin.cjs")) {
            failed.push(format!("[65534={other}] .bin/prettier is {link:?}: {e}"));
        }
    }
    failures(failed);
}

#[test]
fn an_update_of_node_modules_tools_is_applied() {
    let t = TempDir::new("b22f-node-update");
    let (home, ws) = (t.dir("home"), t.dir("ws"));
    with_prettier(&ws);
    let e = run(
        &t,
        &ws,
        &home,
        "cow",
        false,
        "cd node_modules; sed -i 's/3.0.0/3.1.0/' prettier/package.json; \
         echo 'module.exports = 2; // UPDATED' > prettier/index.cjs; \
         mkdir -p dep && echo 'module.exports = 1' > dep/index.js && \
         ln -s ../dep/index.js .bin/dep",
    );
    let idx = std::fs::read_to_string(ws.join("node_modules/prettier/index.cjs")).unwrap();
    assert!(idx.contains("UPDATED"), "{idx:?}: {e}");
    assert!(
        std::fs::read_link(ws.join("node_modules/.bin/dep")).is_ok(),
        "{e}"
    );
}
