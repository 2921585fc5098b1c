//! The modules a protected JavaScript configuration loads through a
//! package name or a subpath import (attack atk22n F2): a workspace
//! package that `node_modules` links to (pnpm, yarn and npm workspaces),
//! `#rules` through `package.json`'s `imports`, a data configuration's
//! shared configuration (`"prettier": "@acme/prettier-config"`, ESLint's
//! `extends`), and the walk's bounds (more local modules than it follows:
//! their directories are kept read-only whole, and the report says so).
//! Each tried for real, as root and as uid 65534, in the default layer
//! and the direct mode, and checked from outside: host node did not run
//! the planted code.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::*;
use crate::support_secret_sources::{as_user, is_root};
use skarn_test_support::TempDir;

/// The workspace modes: the default (copy-on-write layer) and the direct.
const LAYERS: [&[&str]; 2] = [&[], &["--workspace-layer", "direct"]];

fn users() -> Vec<bool> {
    if is_root() {
        vec![false, true]
    } else {
        vec![false]
    }
}

fn run(root: &Path, ws: &Path, home: &Path, nobody: bool, flags: &[&str], cmd: &str) -> Output {
    let c = run_command(ws, home, flags, &["sh", "-c", cmd]);
    let mut c = if nobody { as_user(c, root) } else { c };
    c.stdin(std::process::Stdio::null()).output().unwrap()
}

/// Host node evaluates `script` in `dir` (as uid 65534 when `nobody`).
fn host_node(root: &Path, dir: &Path, nobody: bool, script: &str) -> Output {
    let mut c = Command::new("node");
    c.args(["-e", script]).current_dir(dir);
    let mut c = if nobody { as_user(c, root) } else { c };
    c.current_dir(dir).output().unwrap()
}

/// A committed monorepo in `t/ws`: `files`, and `node_modules/@acme/<x>`
/// linked to `packages/<x>` for each of `links`.
fn project(t: &TempDir, files: &[(String, String)], links: &[&str]) -> (PathBuf, PathBuf) {
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    git(&ws, &["init", "-q"]);
    for (p, text) in files {
        t.file(Path::new("ws").join(p), text);
    }
    t.file("ws/.gitignore", "node_modules\n");
    for l in links {
        std::fs::create_dir_all(ws.join("node_modules/@acme")).unwrap();
        std::os::unix::fs::symlink(
            format!("../../packages/{l}"),
            ws.join("node_modules/@acme").join(l),
        )
        .unwrap();
    }
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-qm", "init"]);
    std::thread::sleep(std::time::Duration::from_millis(200));
    (ws, home)
}

fn owned(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn monorepo(t: &TempDir) -> (PathBuf, PathBuf) {
    let files = owned(&[
        (
            "package.json",
            "{\"name\":\"mono\",\"private\":true,\"type\":\"module\",\
             \"imports\":{\"#rules\":\"./eslint/rules.js\"}}\n",
        ),
        (
            "packages/eslint-config/package.json",
            "{\"name\":\"@acme/eslint-config\",\"version\":\"1.0.0\",\"main\":\"index.js\"}\n",
        ),
        (
            "packages/eslint-config/index.js",
            "module.exports = [{rules:{}}];\n",
        ),
        ("packages/eslint-config/README.md", "config\n"),
        ("eslint/rules.js", "export default {};\n"),
        (
            "eslint.config.js",
            "import acme from '@acme/eslint-config';\nimport rules from '#rules';\n\
             export default [...acme, rules];\n",
        ),
        ("src/app.js", "export const a = 1;\n"),
    ]);
    project(t, &files, &["eslint-config"])
}

/// F2: the run rewrites the workspace package `@acme/eslint-config` (a
/// `node_modules` link) and `#rules`'s file; host node's load of
/// `eslint.config.js` (as ESLint loads it) does not run either.
#[test]
fn bare_and_subpath_imports_of_a_protected_config_stay_read_only() {
    if !host_has("node", "--version") || !host_has("git", "--version") {
        skarn_test_support::skip!("node or git is not installed");
    }
    for nobody in users() {
        for layer in LAYERS {
            let t = TempDir::new("f22k-bare");
            let (ws, home) = monorepo(&t);
            let (bare, hash) = (t.path().join("PWN_bare"), t.path().join("PWN_hash"));
            let plant = format!(
                "echo 'require(\"fs\").writeFileSync(\"{}\",\"x\"); module.exports=[];' > \
                 packages/eslint-config/index.js; echo 'import fs from \"fs\"; \
                 fs.writeFileSync(\"{}\",\"x\"); export default {{}};' > eslint/rules.js; echo done",
                bare.display(),
                hash.display()
            );
            let o = run(t.path(), &ws, &home, nobody, layer, &plant);
            let h = host_node(
                t.path(),
                &ws,
                nobody,
                "import(process.cwd()+'/eslint.config.js').then(()=>console.log('loaded'))",
            );
            assert!(out(&h).contains("loaded"), "{}", err(&h));
            assert!(
                !bare.exists() && !hash.exists(),
                "{nobody} {layer:?}: host node ran planted code: {}",
                err(&o)
            );
        }
    }
}

/// F2, data configurations: `"prettier": "@acme/prettier-config"` in
/// `package.json` and `.eslintrc.json`'s `extends: ["@acme"]` (ESLint's
/// short name of `@acme/eslint-config`) name workspace packages; the run's
/// rewrite of them does not reach host node.
#[test]
fn workspace_packages_data_configurations_name_stay_read_only() {
    if !host_has("node", "--version") || !host_has("git", "--version") {
        skarn_test_support::skip!("node or git is not installed");
    }
    for nobody in users() {
        for layer in LAYERS {
            let t = TempDir::new("f22k-data");
            let files = owned(&[
                (
                    "package.json",
                    "{\"name\":\"mono\",\"private\":true,\"prettier\":\"@acme/prettier-config\"}\n",
                ),
                (".eslintrc.json", "{\"extends\": [\"@acme\"]}\n"),
                (
                    "packages/prettier-config/package.json",
                    "{\"name\":\"@acme/prettier-config\",\"exports\":{\".\":{\"require\":\"./p.cjs\"}}}\n",
                ),
                ("packages/prettier-config/p.cjs", "module.exports = {};\n"),
                (
                    "packages/eslint-config/package.json",
                    "{\"name\":\"@acme/eslint-config\"}\n",
                ),
                ("packages/eslint-config/index.js", "module.exports = {};\n"),
            ]);
            let (ws, home) = project(&t, &files, &["prettier-config", "eslint-config"]);
            let mark = t.path().join("PWN_data");
            let line = format!(
                "require(\"fs\").writeFileSync(\"{}\",\"x\"); module.exports={{}};",
                mark.display()
            );
            let plant = format!(
                "echo '{line}' > packages/prettier-config/p.cjs; \
                 echo '{line}' > packages/eslint-config/index.js; echo done"
            );
            let o = run(t.path(), &ws, &home, nobody, layer, &plant);
            let h = host_node(
                t.path(),
                &ws,
                nobody,
                "require('@acme/prettier-config'); require('@acme/eslint-config'); \
                 console.log('loaded')",
            );
            assert!(out(&h).contains("loaded"), "{}", err(&h));
            assert!(
                !mark.exists(),
                "{nobody} {layer:?}: host node ran planted code: {}",
                err(&o)
            );
        }
    }
}

/// F2's bound: a local plugin of 1 100 rule files (more than the walk
/// follows one by one) stays read-only whole, and `--report` says the
/// run is partially enforced, naming the configuration.
#[test]
fn modules_past_the_walks_bound_are_kept_and_said() {
    if !host_has("node", "--version") || !host_has("git", "--version") {
        skarn_test_support::skip!("node or git is not installed");
    }
    let n = 1100;
    let mut files = owned(&[(
        "eslint.config.js",
        "module.exports = [require('./rules/index.js')];\n",
    )]);
    let mut index = String::new();
    for i in 0..n {
        index.push_str(&format!("require('./r{i:04}.js');\n"));
        files.push((format!("rules/r{i:04}.js"), "module.exports = 1;\n".into()));
    }
    index.push_str("module.exports = {};\n");
    files.push(("rules/index.js".into(), index));
    for nobody in users() {
        for layer in LAYERS {
            let t = TempDir::new("f22k-bound");
            let (ws, home) = project(&t, &files, &[]);
            let mark = t.path().join("PWN_bound");
            let line = format!(
                "require(\"fs\").writeFileSync(\"{}\",\"x\");",
                mark.display()
            );
            let plant = format!(
                "for f in rules/r0149.js rules/r1099.js; do echo '{line}' > $f; done; echo done"
            );
            let mut flags = layer.to_vec();
            flags.push("--report");
            let o = run(t.path(), &ws, &home, nobody, &flags, &plant);
            let h = host_node(
                t.path(),
                &ws,
                nobody,
                "require('./eslint.config.js'); console.log('loaded')",
            );
            assert!(out(&h).contains("loaded"), "{}", err(&h));
            assert!(
                !mark.exists(),
                "{nobody} {layer:?}: host node ran planted code: {}",
                err(&o)
            );
            let e = err(&o);
            assert!(e.contains("PartiallyEnforced"), "{nobody} {layer:?}: {e}");
            assert!(
                e.contains("loads more local modules than skarn follows")
                    && e.contains("eslint.config.js"),
                "{nobody} {layer:?}: {e}"
            );
        }
    }
}

/// Usability: inside a run node loads the configuration (bare and `#`
/// imports), the project's other sources and the config package's other
/// files are edited, and git commits.
#[test]
fn eslint_style_configs_still_load_and_sources_are_edited() {
    if !host_has("node", "--version") || !host_has("git", "--version") {
        skarn_test_support::skip!("node or git is not installed");
    }
    for nobody in users() {
        for layer in LAYERS {
            let t = TempDir::new("f22k-ok");
            let (ws, home) = monorepo(&t);
            let work = "node -e \"import(process.cwd()+'/eslint.config.js').then(c => \
                        console.log('config', c.default.length))\" && \
                        echo 'export const a = 2;' > src/app.js && \
                        echo more >> packages/eslint-config/README.md && \
                        git -c user.email=a@b -c user.name=a commit -qam edit && echo committed";
            let o = run(t.path(), &ws, &home, nobody, layer, work);
            assert_eq!(code(&o), 0, "{nobody} {layer:?}: {}{}", out(&o), err(&o));
            assert!(out(&o).contains("config 2"), "{}", out(&o));
            assert!(out(&o).contains("committed"), "{}", err(&o));
            let src = std::fs::read_to_string(ws.join("src/app.js")).unwrap_or_default();
            assert!(src.contains("a = 2"), "{nobody} {layer:?}: {}", err(&o));
        }
    }
}
