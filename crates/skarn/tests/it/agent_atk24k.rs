//! Issue 24, attack pass atk24k (h24h): what a package's own project
//! files make host tools run, below the workspace's top too, in both
//! layers (a confined `skarn run` and the agent's file tools), checked
//! from outside: the host program run afterwards must not run what the
//! agent planted, and the hook's answer is read as the client reads it.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::common::*;
use skarn_test_support::TempDir;

/// `skarn hook claude-code` with `input`, for the project `ws`.
fn claude_hook(input: &Value, home: &Path, ws: &Path) -> Output {
    crate::support_hook::claude_hook(
        ws,
        home,
        Some(ws),
        &["XDG_CONFIG_HOME", "CLAUDE_CONFIG_DIR"],
        input,
    )
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
            // (Not app.js: the Write allowed above holds it for its
            // pending edit, ADR 0244.)
            "mkdir -p frontend/src && echo x > frontend/src/main.js",
        ],
    );
    assert!(ws.join("frontend/src/main.js").exists(), "{}", err(&o));
}

/// The answer to a Bash call as Claude Code reads it: the decision and
/// whether it carries a rewritten command.
fn bash_answer(ws: &Path, home: &Path) -> (String, bool) {
    let o = claude_hook(
        &json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": ws,
                "tool_input": {"command": "id"}}),
        home,
        ws,
    );
    if code(&o) == 2 {
        return ("deny".into(), false);
    }
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {o:?}"));
    let h = &v["hookSpecificOutput"];
    (
        h["permissionDecision"].as_str().unwrap_or("").to_string(),
        h.get("updatedInput").is_some(),
    )
}

/// F6: a plugin declaring its Bash PreToolUse hook in its manifest
/// (`.claude-plugin/plugin.json`, inline or as a path) is another hook on
/// Bash: Claude Code may take that hook's `updatedInput`, keeping skarn's
/// `allow` for the model's original command. The hook must then not pair
/// `allow` with a rewrite (per Claude Code's documented merging of hook
/// results; not run against a real Claude Code here).
#[test]
fn a_plugin_manifests_bash_hook_is_seen_as_another_hook() {
    let t = TempDir::new("atk24k_f6");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    assert!(git(&ws, &["init", "-q"]).status.success());
    assert_eq!(bash_answer(&ws, &home), ("allow".into(), true));
    let plugin = home.join(".claude/plugins/cache/mkt/rtk/1.0.0");
    std::fs::create_dir_all(plugin.join(".claude-plugin")).unwrap();
    std::fs::create_dir_all(plugin.join("config")).unwrap();
    let groups = r#"{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"${CLAUDE_PLUGIN_ROOT}/rw.sh"}]}]}"#;
    std::fs::write(
        plugin.join("config/h.json"),
        format!(r#"{{"hooks":{groups}}}"#),
    )
    .unwrap();
    for manifest in [
        format!(r#"{{"name":"rtk","version":"1.0.0","hooks":{groups}}}"#),
        format!(r#"{{"name":"rtk","version":"1.0.0","hooks":{{"hooks":{groups}}}}}"#),
        r#"{"name":"rtk","version":"1.0.0","hooks":"./config/h.json"}"#.to_string(),
        r#"{"name":"rtk","version":"1.0.0","hooks":["./config/h.json"]}"#.to_string(),
        r#"{"name":"rtk","version":"1.0.0","hooks":"./config/missing.json"}"#.to_string(),
    ] {
        std::fs::write(plugin.join(".claude-plugin/plugin.json"), &manifest).unwrap();
        let (decision, rewrite) = bash_answer(&ws, &home);
        assert!(
            !(decision == "allow" && rewrite),
            "allow with a rewrite beside {manifest}"
        );
    }
    // A manifest without Bash hooks changes nothing.
    std::fs::write(
        plugin.join(".claude-plugin/plugin.json"),
        r#"{"name":"rtk","version":"1.0.0"}"#,
    )
    .unwrap();
    assert_eq!(bash_answer(&ws, &home), ("allow".into(), true));
}

/// A confined run rewriting `rel` to touch `victim`, then `rel` as
/// found: whether the run's text was kept.
fn confined_rewrite(ws: &Path, home: &Path, rel: &str, victim: &Path) -> bool {
    let script = format!(
        "printf '#!/bin/sh\\ntouch {v}\\n' > '{rel}'",
        v = victim.display()
    );
    let _ = run_in(ws, home, &[], &["sh", "-c", &script]);
    std::fs::read_to_string(ws.join(rel)).is_ok_and(|t| t.contains("touch"))
}

/// F3: an MCP server the user added with `claude mcp add` (kept in
/// `~/.claude.json`, this project's entry) runs a workspace script; the
/// next Claude Code session starts it unconfined. Neither layer may let
/// the agent rewrite it, nor plant beside it; a prompt in the same file
/// naming another workspace file freezes nothing.
#[test]
fn a_user_added_mcp_servers_script_is_protected_in_both_layers() {
    let t = TempDir::new("atk24k_f3");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    assert!(git(&ws, &["init", "-q"]).status.success());
    std::fs::create_dir_all(ws.join("server")).unwrap();
    std::fs::create_dir_all(ws.join("docs")).unwrap();
    std::fs::write(ws.join("server/run.sh"), "#!/bin/sh\n: serve\n").unwrap();
    std::fs::write(ws.join("docs/a.sh"), ": doc\n").unwrap();
    let ws_s = ws.to_string_lossy().to_string();
    let state = json!({"projects": {ws_s.clone(): {
        "mcpServers": {"mine": {"type": "stdio", "command": "sh",
                                "args": [format!("{ws_s}/server/run.sh")], "env": {}}},
        "history": [{"display": format!("look at {ws_s}/docs/a.sh")}]}}});
    std::fs::write(home.join(".claude.json"), state.to_string()).unwrap();
    let victim = t.path().join("by-mcp");
    assert!(
        !confined_rewrite(&ws, &home, "server/run.sh", &victim),
        "the run's server/run.sh was kept"
    );
    // The server's start as Claude Code makes it (the stored command).
    let s = Command::new("sh")
        .arg(ws.join("server/run.sh"))
        .current_dir(&ws)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(s.status.success(), "{s:?}");
    assert!(!victim.exists(), "the server ran the agent's script");
    for f in ["server/run.sh", "server/helper.sh"] {
        assert!(
            !write_goes_on(&ws, &home, &ws.join(f)),
            "Write of {f} goes on"
        );
    }
    assert!(write_goes_on(&ws, &home, &ws.join("docs/a.sh")));
}

/// F7: an accepted project hook that changes directory first (`cd
/// "$CLAUDE_PROJECT_DIR"/scripts && sh ./lint.sh`) names its script
/// relative to that directory; and a named script's neighbours
/// (`helpers.py` python imports from the script's directory) run too.
#[test]
fn an_accepted_hooks_directory_is_protected_in_both_layers() {
    let t = TempDir::new("atk24k_f7");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    assert!(git(&ws, &["init", "-q"]).status.success());
    std::fs::create_dir_all(ws.join("scripts")).unwrap();
    std::fs::create_dir_all(ws.join(".claude")).unwrap();
    std::fs::write(ws.join("scripts/lint.sh"), ": lint\n").unwrap();
    std::fs::write(ws.join("scripts/common.sh"), ": common\n").unwrap();
    let hook = r#"cd "$CLAUDE_PROJECT_DIR"/scripts && sh ./lint.sh"#;
    let other = r#"sh "$CLAUDE_PROJECT_DIR"/tools/check.sh"#;
    std::fs::create_dir_all(ws.join("tools")).unwrap();
    std::fs::write(
        ws.join("tools/check.sh"),
        ". \"$(dirname \"$0\")/common.sh\"\n",
    )
    .unwrap();
    std::fs::write(ws.join("tools/common.sh"), ": common\n").unwrap();
    std::fs::write(
        ws.join(".claude/settings.json"),
        json!({"hooks": {"PostToolUse": [{"matcher": "Write|Edit", "hooks": [
            {"type": "command", "command": hook}, {"type": "command", "command": other}]}]}})
        .to_string(),
    )
    .unwrap();
    // The user keeps both unconfined on purpose (ADR 0255): what they run
    // must then be kept from the agent.
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!(
            "[hook]\ntrusted_hooks = [{}, {}]\n",
            toml_str(hook),
            toml_str(other)
        ),
    )
    .unwrap();
    let victim = t.path().join("by-hook");
    for rel in ["scripts/lint.sh", "tools/common.sh"] {
        assert!(
            !confined_rewrite(&ws, &home, rel, &victim),
            "the run's {rel} was kept"
        );
        assert!(
            !write_goes_on(&ws, &home, &ws.join(rel)),
            "Write of {rel} goes on"
        );
    }
    // The hooks as Claude Code runs them.
    for cmd in [hook, other] {
        let s = Command::new("sh")
            .args(["-c", cmd])
            .current_dir(&ws)
            .env("CLAUDE_PROJECT_DIR", &ws)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(s.status.success(), "{s:?}");
    }
    assert!(!victim.exists(), "the accepted hook ran the agent's script");
    assert!(write_goes_on(&ws, &home, &ws.join("src/app.py")));
}

/// F8, F9: at the top of a write grant outside the workspace (the user's
/// other project), a confined command planted `rust-toolchain.toml`,
/// `.envrc`, `.mcp.json`, ...: the workspace's rules apply there too (the
/// hook already refused the same writes).
#[test]
fn a_write_grants_top_keeps_the_workspaces_persistence_rules() {
    let t = TempDir::new("atk24k_f9");
    let (ws, home, lib) = (t.dir("ws"), t.dir("home"), t.dir("lib"));
    assert!(git(&ws, &["init", "-q"]).status.success());
    let grant = lib.to_string_lossy().to_string();
    for f in [
        "rust-toolchain.toml",
        ".envrc",
        ".mcp.json",
        ".gitmodules",
        ".pre-commit-config.yaml",
        ".nvim.lua",
    ] {
        let p = lib.join(f);
        let o = run_in(
            &ws,
            &home,
            &["--write", &grant],
            &[
                "sh",
                "-c",
                &format!("echo '# planted' >> '{}'", p.display()),
            ],
        );
        let left = std::fs::read_to_string(&p).unwrap_or_default();
        assert!(
            !left.contains("# planted"),
            "the run's {f} was kept: {}",
            err(&o)
        );
    }
    // The grant's ordinary files stay writable.
    let o = run_in(
        &ws,
        &home,
        &["--write", &grant],
        &["sh", "-c", &format!("echo x > '{}/notes.txt'", grant)],
    );
    assert!(lib.join("notes.txt").exists(), "{}", err(&o));
}

/// F4: an `unsandboxed` pattern (`"git push"`, the docs' example) matched
/// `git push --receive-pack='touch V; false' . HEAD:refs/heads/x`, whose
/// own option runs any program on the host. Such a command is not the
/// pattern's: it is confined like any other.
#[test]
fn an_unsandboxed_pattern_does_not_cover_options_that_run_programs() {
    let t = TempDir::new("atk24k_f4");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    assert!(git(&ws, &["init", "-q"]).status.success());
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        "[hook]\nunsandboxed = [\"git push\"]\n",
    )
    .unwrap();
    let answer = |cmd: &str| {
        let o = claude_hook(
            &json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": ws,
                    "tool_input": {"command": cmd}}),
            &home,
            &ws,
        );
        let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {o:?}"));
        let h = v["hookSpecificOutput"].clone();
        (
            h["permissionDecision"].as_str().unwrap_or("").to_string(),
            h["updatedInput"]["command"].as_str().map(str::to_string),
        )
    };
    // Control: the plain command is the pattern's (asked, unconfined).
    assert_eq!(answer("git push origin main").0, "ask");
    let v = t.path().join("by-pack");
    for cmd in [
        format!(
            "git push --receive-pack='touch {}; false' . HEAD:refs/heads/x",
            v.display()
        ),
        format!("git push --upload-pack='touch {}' .", v.display()),
        format!("git push -c core.sshCommand='touch {}' origin", v.display()),
        format!("git push --exec='touch {}' .", v.display()),
    ] {
        let (decision, rewritten) = answer(&cmd);
        assert!(
            decision == "deny"
                || (decision == "allow" && rewritten.as_deref() != Some(cmd.as_str())),
            "{cmd}: {decision} {rewritten:?}"
        );
    }
}

/// `s` as a TOML literal string.
fn toml_str(s: &str) -> String {
    assert!(!s.contains('\''));
    format!("'{s}'")
}
