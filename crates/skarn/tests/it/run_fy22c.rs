//! Issue 22, attack pass atk22o F10, F7, F8, F2: the agent's file tools
//! are judged by the content they leave (the layer's own rules, with the
//! new content in a private upper), never get more than a confined
//! command (`node_modules` packages, cargo's profile directories), and a
//! run may not change a package of `node_modules` in place (ESLint loads
//! `espree` from beside it). Each write the hook allows is made as the
//! client makes it, then the host program is run and must not have run
//! the planted code.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::common::*;
use crate::support_hook::{FILE_GUARD, claude_hook};
use crate::support_secret_sources::{as_user, users};
use skarn_test_support::TempDir;

/// Claude Code's call `tool` with `input` in `ws`: whether the client
/// goes on with it.
fn allowed(ws: &Path, home: &Path, tool: &str, input: Value) -> bool {
    let i = json!({"session_id": "s", "transcript_path": home.join("t.jsonl"), "cwd": ws,
                   "permission_mode": "default", "hook_event_name": "PreToolUse",
                   "tool_name": tool, "tool_input": input});
    let o = claude_hook(ws, home, None, FILE_GUARD, &i);
    assert_eq!(code(&o), 0, "{o:?}");
    o.stdout.is_empty()
        || serde_json::from_slice::<Value>(&o.stdout).unwrap()["hookSpecificOutput"]["permissionDecision"]
            != "deny"
}

/// Claude Code's Write of `body` at `rel`, made when the hook allows it.
fn write(ws: &Path, home: &Path, rel: &str, body: &str) -> bool {
    let p = ws.join(rel);
    let ok = allowed(ws, home, "Write", json!({"file_path": p, "content": body}));
    if ok {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, body).unwrap();
    }
    ok
}

/// Claude Code's Edit of `rel` (`old` once to `new`), made when allowed.
fn edit(ws: &Path, home: &Path, rel: &str, old: &str, new: &str) -> bool {
    let p = ws.join(rel);
    let ok = allowed(
        ws,
        home,
        "Edit",
        json!({"file_path": p, "old_string": old, "new_string": new}),
    );
    if ok {
        let t = std::fs::read_to_string(&p).unwrap();
        std::fs::write(&p, t.replacen(old, new, 1)).unwrap();
    }
    ok
}

fn git_init(ws: &Path) {
    let o = Command::new("git")
        .args(["init", "-q", "."])
        .current_dir(ws)
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
}

fn node(ws: &Path, args: &[&str]) -> std::process::Output {
    Command::new("node")
        .args(args)
        .current_dir(ws)
        .output()
        .unwrap()
}

/// A project with a stand-in `prettier` (loads the `prettier` key of
/// `package.json` as its configuration, as Prettier does) and `eslint`
/// (loads its parser from the sibling `espree`, as ESLint does).
fn node_project(ws: &Path) {
    git_init(ws);
    std::fs::write(
        ws.join("package.json"),
        "{\n  \"name\": \"pj\",\n  \"version\": \"1.0.0\"\n}\n",
    )
    .unwrap();
    let pkg = |name: &str, version: &str, main: &str, body: &str| {
        let d = ws.join("node_modules").join(name);
        std::fs::create_dir_all(d.join(Path::new(main).parent().unwrap())).unwrap();
        std::fs::write(
            d.join("package.json"),
            format!("{{\"name\":\"{name}\",\"version\":\"{version}\",\"main\":\"{main}\"}}\n"),
        )
        .unwrap();
        std::fs::write(d.join(main), body).unwrap();
    };
    pkg(
        "prettier",
        "3.0.0",
        "index.cjs",
        "const c = require(process.cwd() + '/package.json').prettier;\n\
         if (c) require(require('path').resolve(c));\n",
    );
    pkg(
        "espree",
        "9.6.1",
        "dist/espree.cjs",
        "module.exports = { parse() {} };\n",
    );
    pkg(
        "eslint",
        "8.57.0",
        "lib/cli.js",
        "require('espree');\nmodule.exports = {};\n",
    );
    std::fs::write(ws.join(".gitignore"), "node_modules\n").unwrap();
}

/// A planted line writing `marker`.
fn plant(marker: &Path) -> String {
    format!(
        "require('fs').writeFileSync({:?}, 'x');\n",
        marker.display().to_string()
    )
}

#[test]
fn file_tools_are_judged_by_the_content_they_leave() {
    let t = TempDir::new("fy22c-f10");
    let (home, ws) = (t.dir("home"), t.dir("ws"));
    node_project(&ws);
    let marker = t.path().join("PWN_prettier");
    // F10: a `prettier` key naming a new module, added by Edit.
    let e1 = edit(
        &ws,
        &home,
        "package.json",
        "\"version\": \"1.0.0\"",
        "\"version\": \"1.0.0\",\n  \"prettier\": \"./fmt.cjs\"",
    );
    let e2 = write(&ws, &home, "fmt.cjs", &plant(&marker));
    let o = node(&ws, &["node_modules/prettier/index.cjs"]);
    assert!(
        !marker.exists(),
        "host prettier ran the planted configuration (edit {e1}, write {e2}): {o:?}"
    );
    // An edit that does not apply is refused (the client fails it too).
    assert!(!edit(&ws, &home, "package.json", "no such text", "x"));
    // Usability: ordinary edits of the same file and of sources.
    assert!(edit(&ws, &home, "package.json", "\"1.0.0\"", "\"1.0.1\""));
    assert!(write(&ws, &home, "src/a.js", "var a = 1;\n"));
    assert!(edit(&ws, &home, "src/a.js", "var a = 1;", "let a = 2;"));
}

#[test]
fn file_tools_may_not_change_node_modules_packages_in_place() {
    let t = TempDir::new("fy22c-f7");
    let (home, ws) = (t.dir("home"), t.dir("ws"));
    node_project(&ws);
    let marker = t.path().join("PWN_hook");
    // F7 (a tool package) and F2 (a package the tool loads).
    let a = edit(
        &ws,
        &home,
        "node_modules/eslint/lib/cli.js",
        "require('espree');",
        &format!("require('espree');{}", plant(&marker)),
    );
    let b = write(
        &ws,
        &home,
        "node_modules/espree/dist/espree.cjs",
        &format!("{}module.exports = {{ parse() {{}} }};\n", plant(&marker)),
    );
    let c = write(
        &ws,
        &home,
        "node_modules/espree/dist/extra.cjs",
        &plant(&marker),
    );
    let o = node(&ws, &["node_modules/eslint/lib/cli.js"]);
    assert!(
        !marker.exists() && !a && !b && !c,
        "host eslint ran the planted code ({a} {b} {c}): {o:?}"
    );
    // A new package is the agent's to write.
    assert!(write(&ws, &home, "node_modules/mine/index.js", "1;\n"));
}

#[test]
fn a_run_may_not_change_the_packages_a_tool_loads_in_place() {
    let mut failed = Vec::new();
    for other in users() {
        let t = TempDir::new("fy22c-f2");
        let (home, ws) = (t.dir("home"), t.dir("ws"));
        node_project(&ws);
        let marker = t.path().join("PWN_espree");
        let script = format!(
            "{{ echo \"{}\"; cat node_modules/espree/dist/espree.cjs; }} > x && \
             mv x node_modules/espree/dist/espree.cjs",
            plant(&marker).trim().replace('"', "\\\"")
        );
        let mut c = run_command(&ws, &home, &[], &["sh", "-c", &script]);
        if other {
            c = as_user(c, t.path());
        }
        let e = err(&c.stdin(Stdio::null()).output().unwrap());
        let o = node(&ws, &["node_modules/eslint/lib/cli.js"]);
        if marker.exists() {
            failed.push(format!(
                "[65534={other}] host eslint ran espree's plant: {e} {o:?}"
            ));
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn installs_and_reinstalls_in_node_modules_are_applied() {
    let t = TempDir::new("fy22c-npm");
    let (home, ws) = (t.dir("home"), t.dir("ws"));
    node_project(&ws);
    // A reinstall (same bytes), an update (a new version) and a new package.
    let o = run_command(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "cp -a node_modules .nm && rm -rf node_modules && mv .nm node_modules && \
             sed -i 's/9.6.1/9.6.2/' node_modules/espree/package.json && \
             echo '// UPDATED' >> node_modules/espree/dist/espree.cjs && \
             mkdir -p node_modules/added && echo 1 > node_modules/added/index.js",
        ],
    )
    .stdin(Stdio::null())
    .output()
    .unwrap();
    let e = std::fs::read_to_string(ws.join("node_modules/espree/dist/espree.cjs")).unwrap();
    assert!(e.contains("UPDATED"), "{e:?}: {}", err(&o));
    assert!(
        ws.join("node_modules/added/index.js").exists(),
        "{}",
        err(&o)
    );
    assert!(
        ws.join("node_modules/eslint/lib/cli.js").exists(),
        "{}",
        err(&o)
    );
}

#[test]
fn file_tools_may_not_write_cargo_outputs() {
    if Command::new("cargo").arg("--version").output().is_err() {
        skarn_test_support::skip!("cargo is not installed");
    }
    let t = TempDir::new("fy22c-f8");
    let (home, ws) = (t.dir("home"), t.dir("ws"));
    git_init(&ws);
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(
        ws.join("Cargo.toml"),
        "[package]\nname = \"rs\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(ws.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(
        ws.join("build.rs"),
        "fn main() { println!(\"cargo:rerun-if-changed=build.rs\"); }\n",
    )
    .unwrap();
    let cargo = || {
        Command::new("cargo")
            .args(["build", "--offline", "-q"])
            .current_dir(&ws)
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("CARGO_BUILD_TARGET_DIR")
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .output()
            .unwrap()
    };
    let o = cargo();
    assert!(o.status.success(), "{o:?}");
    let out = std::fs::read_dir(ws.join("target/debug/build"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("output"))
        .find(|p| p.exists())
        .unwrap();
    let rel = out.strip_prefix(&ws).unwrap().to_str().unwrap().to_owned();
    let marker = t.path().join("PWN_specs");
    let w = |rel: &str, body: String| write(&ws, &home, rel, &body);
    let a = w(
        &rel,
        format!(
            "cargo:rerun-if-changed=build.rs\ncargo:rustc-link-arg=-specs={}\n",
            ws.join("target/x.specs").display()
        ),
    );
    w(
        "target/x.specs",
        format!(
            "*link_command:\nsh {}\n\n",
            ws.join("target/e.sh").display()
        ),
    );
    w("target/e.sh", format!("touch {}\n", marker.display()));
    let b = w("target/.rustc_info.json", "{}".into());
    assert!(w(
        "src/main.rs",
        "fn main() { println!(\"edited\"); }\n".into()
    ));
    let o = cargo();
    assert!(
        !marker.exists() && !a && !b,
        "host cargo ran the planted link command ({a} {b}): {o:?}"
    );
}
