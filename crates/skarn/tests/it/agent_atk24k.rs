//! Issue 24, attack pass atk24k (h24h): what a package's own project
//! files make host tools run, below the workspace's top too, in both
//! layers (a confined `skarn run` and the agent's file tools), checked
//! from outside: the host program run afterwards must not run what the
//! agent planted, and the hook's answer is read as the client reads it.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::common::*;
use skarn_test_support::TempDir;

/// `skarn hook claude-code` with `input`, for the project `ws`.
fn claude_hook(input: &Value, home: &Path, ws: &Path) -> Output {
    let mut c = Command::new(exe())
        .args(["hook", "claude-code"])
        .current_dir(ws)
        .env("HOME", home)
        .env("CLAUDE_PROJECT_DIR", ws)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = c
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes());
    c.wait_with_output().unwrap()
}

/// Whether Claude Code goes on with a Write of `path` (exit 2 or a deny
/// stops it; anything else lets it write).
fn write_goes_on(ws: &Path, home: &Path, path: &Path) -> bool {
    let o = claude_hook(
        &json!({"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": ws,
                "tool_input": {"file_path": path, "content": "x"}}),
        home,
        ws,
    );
    if code(&o) == 2 {
        return false;
    }
    if o.stdout.is_empty() {
        return true;
    }
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {o:?}"));
    v["hookSpecificOutput"]["permissionDecision"] != "deny"
}

/// F2: a nested package's `.npmrc` (`frontend/.npmrc` beside
/// `frontend/package.json`): npm reads the project file of the package it
/// runs in, so its `script-shell` ran the agent's program at the user's
/// next `npm run` there. Neither a confined run nor the Write tool may
/// leave one, nor yarn's, pnpm's, lint-staged's, nix-direnv's, bazel's
/// or Gradle's files of a nested package or build.
#[test]
fn a_nested_packages_project_files_are_protected_in_both_layers() {
    let t = TempDir::new("atk24k_f2");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    assert!(git(&ws, &["init", "-q"]).status.success());
    std::fs::create_dir_all(ws.join("frontend")).unwrap();
    std::fs::write(
        ws.join("frontend/package.json"),
        r#"{"name":"fe","version":"1.0.0","private":true,"scripts":{"build":"echo building"}}"#,
    )
    .unwrap();
    let victim = t.path().join("by-npmrc");
    let plant = format!(
        "mkdir -p frontend/tools && printf '#!/bin/sh\\ntouch {v}\\nexec /bin/sh \"$@\"\\n' > \
         frontend/tools/sh.sh && chmod +x frontend/tools/sh.sh && \
         printf 'script-shell={w}/frontend/tools/sh.sh\\n' > frontend/.npmrc",
        v = victim.display(),
        w = ws.display()
    );
    let o = run_in(&ws, &home, &[], &["sh", "-c", &plant]);
    let kept = std::fs::read_to_string(ws.join("frontend/.npmrc")).unwrap_or_default();
    assert!(
        !kept.contains("script-shell"),
        "the run's frontend/.npmrc was kept: {}",
        err(&o)
    );
    if host_has("npm", "--version") {
        let n = Command::new("npm")
            .args(["run", "build"])
            .current_dir(ws.join("frontend"))
            .env("HOME", &home)
            .env("npm_config_update_notifier", "false")
            .env("npm_config_cache", t.path().join("npm-cache"))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(n.status.success(), "{n:?}");
        assert!(!victim.exists(), "host npm ran the planted script-shell");
    }
    // The same class, written by the run and by the Write tool.
    for f in [
        "frontend/.npmrc",
        "frontend/.yarnrc",
        "frontend/.yarnrc.yml",
        "frontend/.pnpmfile.cjs",
        "frontend/.yarn/releases/yarn.cjs",
        "frontend/.yarn/plugins/p.cjs",
        "frontend/.lintstagedrc.js",
        "frontend/lint-staged.config.mjs",
        "frontend/.direnv/bin/x",
        "frontend/tools/bazel",
        "frontend/gradle/wrapper/gradle-wrapper.properties",
        ".lintstagedrc.js",
    ] {
        let p = ws.join(f);
        assert!(!write_goes_on(&ws, &home, &p), "Write of {f} goes on");
        let script = format!(
            "mkdir -p '{d}' && echo '# planted' >> '{p}'",
            d = p.parent().unwrap().display(),
            p = p.display()
        );
        let o = run_in(&ws, &home, &[], &["sh", "-c", &script]);
        let left = std::fs::read_to_string(&p).unwrap_or_default();
        assert!(
            !left.contains("# planted"),
            "the run's {f} was kept: {}",
            err(&o)
        );
    }
    // An ordinary file of the package stays writable in both layers.
    let ok = ws.join("frontend/src/app.js");
    assert!(write_goes_on(&ws, &home, &ok));
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "mkdir -p frontend/src && echo x > frontend/src/app.js",
        ],
    );
    assert!(ok.exists(), "{}", err(&o));
}
