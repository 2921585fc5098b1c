//! Issue 24, what the attack passes of 6 December left open (helper
//! h24k). Each test makes the real attempt and judges from outside: the
//! run's exit code, what host git runs afterwards, the hook's answer as
//! the agent reads it.

use std::path::Path;
use std::process::Command;

use crate::common::*;
use crate::support_agent::{
    Setup, agent_plants_config, claude_bash_hook, claude_decision_of, client_starts, hook_answer,
    init_client, json_commands, setup_git,
};
use skarn_test_support::TempDir;

/// The two ways a run writes the workspace.
const LAYERS: [&[&str]; 2] = [&[], &["--workspace-layer", "direct"]];

fn name(layer: &[&str]) -> &'static str {
    if layer.is_empty() { "cow" } else { "direct" }
}

/// Host git in `repo` the way the user runs it, its output ignored: what
/// it runs is what counts.
fn host_git(repo: &Path, home: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(repo)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .unwrap()
}

/// atk24l F7: a workspace whose `.git` is a symbolic link (the Android
/// `repo` tool's `.git -> .repo/projects/p.git`; a git directory kept
/// elsewhere, `.git -> ~/store/p.git`) could run no command: `skarn run`
/// exited 2 at set-up. Now the command runs, commits land (a git
/// directory inside the workspace), and the git directory is protected as
/// a `.git` directory is: its hooks and configuration stay read-only by
/// either name, and the link cannot be replaced by a directory of the
/// run's own.
#[test]
fn f7_a_workspace_whose_git_is_a_link_runs_with_its_git_directory_protected() {
    for layer in LAYERS {
        for outside in [false, true] {
            let tag = format!("{}-{}", name(layer), if outside { "out" } else { "in" });
            let t = TempDir::new(&format!("k-f7-{tag}"));
            let home = t.dir("home");
            let ws = t.dir("home/p");
            let real = if outside {
                t.dir("home/store").join("p.git")
            } else {
                t.dir("home/p/.repo/projects").join("p.git")
            };
            let st = Command::new("git")
                .args(["init", "-q", "--bare"])
                .arg(&real)
                .status()
                .unwrap();
            assert!(st.success());
            let link = if outside {
                real.display().to_string()
            } else {
                ".repo/projects/p.git".to_string()
            };
            std::os::unix::fs::symlink(&link, ws.join(".git")).unwrap();
            assert!(
                host_git(&ws, &home, &["config", "core.bare", "false"])
                    .status
                    .success()
            );
            t.file("home/p/README", "x\n");
            host_git(&ws, &home, &["add", "README"]);
            assert!(
                host_git(&ws, &home, &["commit", "-qm", "init"])
                    .status
                    .success()
            );
            let victim = t.join("victim");
            let r = real.display().to_string();
            let plant = format!(
                "echo RAN; \
                 git -c user.name=t -c user.email=t@t commit -q --allow-empty -m inside \
                 && echo COMMITTED; \
                 printf '#!/bin/sh\\ntouch {v}-hook\\n' > .git/hooks/pre-commit \
                 && chmod +x .git/hooks/pre-commit && echo WROTE-hook; \
                 printf '#!/bin/sh\\ntouch {v}-realhook\\n' > {r}/hooks/post-commit \
                 && chmod +x {r}/hooks/post-commit && echo WROTE-realhook; \
                 printf '[core]\\n\\tfsmonitor = \"touch {v}-fsmonitor; false\"\\n' >> .git/config \
                 && echo WROTE-config; \
                 (rm -f .git && mkdir -p .git/hooks && cp -r {r}/. .git/ \
                 && printf '#!/bin/sh\\ntouch {v}-newgit\\n' > .git/hooks/pre-commit \
                 && chmod +x .git/hooks/pre-commit && echo REPLACED-link) 2>/dev/null; true",
                v = victim.display()
            );
            let o = run_in(&ws, &home, layer, &["sh", "-c", &plant]);
            let what = format!("{tag}: rc={} {}{}", code(&o), out(&o), err(&o));
            // The command ran (the old binary failed at set-up, exit 2).
            assert_eq!(code(&o), 0, "{what}");
            assert!(out(&o).contains("RAN"), "{what}");
            assert!(!out(&o).contains("WROTE"), "{what}");
            assert!(!out(&o).contains("REPLACED"), "{what}");
            if !outside {
                // The git directory is in the workspace: git works.
                assert!(out(&o).contains("COMMITTED"), "{what}");
                let log = host_git(&ws, &home, &["log", "--format=%s"]);
                assert!(out(&log).contains("inside"), "{what}: {}", out(&log));
            }
            // The link still leads where it led.
            let md = std::fs::symlink_metadata(ws.join(".git")).unwrap();
            assert!(md.file_type().is_symlink(), "{what}");
            assert_eq!(
                std::fs::read_link(ws.join(".git")).unwrap(),
                Path::new(&link),
                "{what}"
            );
            // The user's next commit runs nothing the run planted.
            t.file("home/p/README", "y\n");
            host_git(&ws, &home, &["commit", "-qam", "user"]);
            host_git(&ws, &home, &["status"]);
            for m in ["hook", "realhook", "fsmonitor", "newgit"] {
                assert!(
                    !t.join(format!("victim-{m}")).exists(),
                    "host git ran the planted {m} ({what})"
                );
            }
        }
    }
}

/// Codex's own hooks (`config.toml` `[hooks]`, a project's
/// `.codex/hooks.json`) and `notify` ran on the host in the project, and
/// neither `init --client codex` nor the hook looked at them: a formatter
/// hook loading the project's configuration ran the agent's code
/// unconfined. Now the hook refuses every call while one is unwrapped,
/// `init` wraps them, and the wrapped ones run the planted code confined.
#[test]
fn codexs_own_hooks_and_notify_run_confined_after_init() {
    let c = setup_git("k-codex-hooks");
    std::fs::create_dir_all(c.home.join(".codex")).unwrap();
    std::fs::write(
        c.home.join(".codex/config.toml"),
        format!(
            "# the user's\nnotify = [{f:?}]\n\n[[hooks.PostToolUse]]\nmatcher = \"apply_patch\"\n\
             [[hooks.PostToolUse.hooks]]\ntype = \"command\"\ncommand = {f:?}\n",
            f = c.fmt_cmd()
        ),
    )
    .unwrap();
    std::fs::create_dir_all(c.ws.join(".codex")).unwrap();
    let project = serde_json::json!({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": c.fmt_cmd()}]}]}});
    std::fs::write(c.ws.join(".codex/hooks.json"), project.to_string()).unwrap();
    let patch = serde_json::json!({"hook_event_name": "PreToolUse", "tool_name": "apply_patch",
        "cwd": c.ws, "tool_use_id": "c1",
        "tool_input": {"command": "*** Begin Patch\n*** Add File: notes.md\n+hi\n*** End Patch\n"}});
    // Before init: refused (exit 2, the reason on stderr, as Codex reads it).
    let o = hook_answer(&c, "codex", &patch);
    assert_eq!(code(&o), 2, "unwrapped hooks must stop every call: {o:?}");
    assert!(err(&o).contains("hook command(s)"), "{}", err(&o));
    let o = init_client(&c, "codex");
    assert_eq!(code(&o), 0, "{}", err(&o));
    // What Codex now runs: every hook command of both files, and notify.
    let cfg: toml::Table = std::fs::read_to_string(c.home.join(".codex/config.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let mut cmds = Vec::new();
    json_commands(
        &serde_json::to_value(cfg.get("hooks").unwrap()).unwrap(),
        &mut cmds,
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(c.ws.join(".codex/hooks.json")).unwrap())
            .unwrap();
    json_commands(&v, &mut cmds);
    assert_eq!(cmds.len(), 3, "the two hooks and skarn's own: {cmds:?}");
    let notify: Vec<String> = cfg["notify"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect();
    agent_plants_config(&c);
    let post = serde_json::json!({"hook_event_name": "PostToolUse", "tool_name": "apply_patch",
        "cwd": c.ws, "tool_use_id": "c1", "tool_input": {"command": "x"}});
    for cmd in &cmds {
        let argv = vec!["/bin/sh".to_string(), "-c".to_string(), cmd.clone()];
        client_starts(&c, &argv, Some(&post.to_string()));
    }
    let mut argv = notify.clone();
    argv.push(serde_json::json!({"type": "agent-turn-complete", "cwd": c.ws}).to_string());
    let o = client_starts(&c, &argv, None);
    assert_eq!(code(&o), 0, "notify: {o:?}");
    assert!(
        c.victim_files().is_empty(),
        "a Codex hook or notify ran the planted code on the host: {:?} (notify {notify:?})",
        c.victim_files()
    );
    // The hooks wrapped, calls go through again.
    let o = hook_answer(&c, "codex", &patch);
    assert_eq!(code(&o), 0, "{o:?}");
    // A project that switches Codex's hooks off (skarn's too) is refused.
    std::fs::write(
        c.ws.join(".codex/config.toml"),
        "[features]\nhooks = false\n",
    )
    .unwrap();
    let o = init_client(&c, "codex");
    assert_ne!(code(&o), 0, "{}", err(&o));
    assert!(err(&o).contains("hooks = false"), "{}", err(&o));
    drop(c.t);
}

/// Windsurf's workspace `.windsurf/hooks.json` (Cascade runs it on the
/// host in the workspace) was neither wrapped by `init --client windsurf`
/// nor looked at by the hook.
#[test]
fn windsurfs_own_hooks_run_confined_after_init() {
    let c = setup_git("k-windsurf-hooks");
    std::fs::create_dir_all(c.ws.join(".windsurf")).unwrap();
    let project = serde_json::json!({"hooks": {"post_write_code": [
        {"command": c.fmt_cmd(), "show_output": true}]}});
    std::fs::write(c.ws.join(".windsurf/hooks.json"), project.to_string()).unwrap();
    let write = serde_json::json!({"agent_action_name": "pre_write_code",
        "tool_info": {"file_path": c.ws.join("notes.md"), "edits": []}});
    let o = hook_answer(&c, "windsurf", &write);
    assert_eq!(code(&o), 2, "unwrapped hooks must stop every call: {o:?}");
    assert!(err(&o).contains("hook command(s)"), "{}", err(&o));
    let o = init_client(&c, "windsurf");
    assert_eq!(code(&o), 0, "{}", err(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(c.ws.join(".windsurf/hooks.json")).unwrap())
            .unwrap();
    let mut cmds = Vec::new();
    json_commands(&v, &mut cmds);
    assert_eq!(cmds.len(), 1, "{v}");
    agent_plants_config(&c);
    let post = serde_json::json!({"agent_action_name": "post_write_code",
        "tool_info": {"file_path": c.ws.join("notes.md")}});
    let argv = vec!["/bin/sh".to_string(), "-c".to_string(), cmds[0].clone()];
    client_starts(&c, &argv, Some(&post.to_string()));
    assert!(
        c.victim_files().is_empty(),
        "a Windsurf hook ran the planted code on the host: {:?}",
        c.victim_files()
    );
    let o = hook_answer(&c, "windsurf", &write);
    assert_eq!(code(&o), 0, "{o:?}");
}

/// `doctor`'s lines about MCP servers outside skarn.
fn doctor_servers(c: &Setup) -> String {
    let o = Command::new(exe())
        .arg("doctor")
        .current_dir(&c.ws)
        .env("HOME", &c.home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("CODEX_HOME")
        .env("XDG_STATE_HOME", state_home())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    out(&o)
        .lines()
        .filter(|l| l.contains("mcp server outside skarn"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// MCP servers a client lists besides skarn's own (a cloned repository's
/// `.mcp.json`, the user's Codex `[mcp_servers]`) run on the host in the
/// project, and a server that loads project files runs the agent's code
/// unconfined; `init` only listed them. Now `init` wraps each local
/// server in `skarn run` and `doctor` names the ones left (ADR 0273).
#[test]
fn mcp_servers_the_clients_list_run_confined_after_init() {
    let c = setup_git("k-mcp-wrap");
    let mcp = serde_json::json!({"mcpServers": {"docs": {"command": c.fmt_cmd(), "args": [],
        "env": {"DOCS_TOKEN": "t"}}}});
    std::fs::write(c.ws.join(".mcp.json"), mcp.to_string()).unwrap();
    std::fs::create_dir_all(c.home.join(".codex")).unwrap();
    std::fs::write(
        c.home.join(".codex/config.toml"),
        format!(
            "[mcp_servers.lint]\ncommand = {:?}\nargs = []\n",
            c.fmt_cmd()
        ),
    )
    .unwrap();
    let before = doctor_servers(&c);
    assert!(
        before.contains("docs") && before.contains("lint"),
        "doctor names both: {before}"
    );
    // (Codex's hook only: its `[mcp_servers.skarn]` would name the
    // project from the home, which makes the project read-only to runs.)
    for (agent, only) in [("claude-code", None), ("codex", Some("--hook-only"))] {
        let o = Command::new(exe())
            .args(["init", "--client", agent, "--accept-project-settings"])
            .args(only)
            .current_dir(&c.ws)
            .env("HOME", &c.home)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CODEX_HOME")
            .env_remove("CLAUDE_CONFIG_DIR")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{agent}: {}", err(&o));
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(c.ws.join(".mcp.json")).unwrap()).unwrap();
    let docs = &v["mcpServers"]["docs"];
    let cfg: toml::Table = std::fs::read_to_string(c.home.join(".codex/config.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let lint = serde_json::to_value(&cfg["mcp_servers"]["lint"]).unwrap();
    agent_plants_config(&c);
    // The client starts each server as configured, in the project.
    for s in [docs, &lint] {
        let mut argv = vec![s["command"].as_str().unwrap().to_string()];
        argv.extend(
            s["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string()),
        );
        let o = client_starts(&c, &argv, Some(""));
        assert_eq!(code(&o), 0, "{argv:?}: {o:?}");
    }
    assert!(
        c.victim_files().is_empty(),
        "an MCP server ran the planted code on the host: {:?} ({docs}, {lint})",
        c.victim_files()
    );
    let after = doctor_servers(&c);
    assert!(after.is_empty(), "{after}");
}

/// atk24l F9: current Codex applies a PreToolUse hook's `updatedInput`
/// with `allow` (the last finished rewrite wins among its hooks); older
/// releases took such an answer as invalid and ran the original command.
/// With `[hook] codex_rewrite = true` the hook rewrites like Claude
/// Code's, and the command Codex then runs is confined; with another
/// PreToolUse hook beside skarn's, or by default, it refuses as before.
#[test]
fn codex_gets_the_confined_command_as_a_rewrite_when_the_user_says_so() {
    let c = setup_git("k-codex-rewrite");
    let cfg = c.home.join(".config/skarn/config.toml");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str("[hook]\ncodex_rewrite = true\n");
    std::fs::write(&cfg, text).unwrap();
    let outside = c.victim.join("written");
    let bash = serde_json::json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
        "cwd": c.ws, "tool_use_id": "c2",
        "tool_input": {"command": format!("touch {}", outside.display())}});
    let o = hook_answer(&c, "codex", &bash);
    assert_eq!(code(&o), 0, "{o:?}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let h = &v["hookSpecificOutput"];
    assert_eq!(h["permissionDecision"], "allow", "{v}");
    let cmd = h["updatedInput"]["command"].as_str().unwrap().to_string();
    // What Codex runs: the rewritten command.
    let argv = vec!["/bin/sh".to_string(), "-c".to_string(), cmd.clone()];
    client_starts(&c, &argv, None);
    assert!(
        !outside.exists(),
        "the rewritten command ran unconfined: {cmd}"
    );
    // Another PreToolUse hook (trusted by the user, so not refused for
    // being unconfined) could replace the rewrite: refused instead.
    std::fs::create_dir_all(c.ws.join(".codex")).unwrap();
    let peer = serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "Bash",
        "hooks": [{"type": "command", "command": "audit-log"}]}]}});
    std::fs::write(c.ws.join(".codex/hooks.json"), peer.to_string()).unwrap();
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text = text.replace(
        "codex_rewrite = true\n",
        "codex_rewrite = true\ntrusted_hooks = [\"audit-log\"]\n",
    );
    std::fs::write(&cfg, text).unwrap();
    let o = hook_answer(&c, "codex", &bash);
    assert_eq!(code(&o), 2, "{o:?}");
    assert!(err(&o).contains("Run exactly this instead"), "{}", err(&o));
}

/// `skarn hook claude-code` for a Bash call in `c.ws` with `env` set: the
/// decision as Claude Code reads it ("" for no answer) and the reason.
fn claude_decision(c: &Setup, env: &[(&str, &str)]) -> (String, String) {
    claude_decision_of(&claude_bash_hook(c, "true", env))
}

/// atk24m F1: the form `init` installs counted as skarn's own hook for any
/// binary: a cloned repository's `'sh' hook claude-code` (Claude Code runs
/// `sh` on the workspace file `hook`) was neither refused by the hook nor
/// wrapped by `init`. Now only the form naming this skarn is skarn's own.
#[test]
fn m_f1_the_installed_hook_form_naming_another_binary_is_not_skarns() {
    let c = setup_git("k-m-f1");
    std::fs::create_dir_all(c.ws.join(".claude")).unwrap();
    let settings = serde_json::json!({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "'sh' hook claude-code"}]}]}});
    std::fs::write(c.ws.join(".claude/settings.json"), settings.to_string()).unwrap();
    let (d, why) = claude_decision(&c, &[]);
    assert_eq!(d, "deny", "{why}");
    let o = Command::new(exe())
        .args([
            "init",
            "--client",
            "claude-code",
            "--accept-project-settings",
        ])
        .current_dir(&c.ws)
        .env("HOME", &c.home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(c.ws.join(".claude/settings.json")).unwrap())
            .unwrap();
    let mut stop = Vec::new();
    json_commands(&v["hooks"]["Stop"], &mut stop);
    assert_eq!(stop.len(), 1, "{v}");
    // The agent's confined command writes the workspace file `hook`.
    let marker = c.victim.join("by-stop-hook");
    let o = Command::new(exe())
        .args(["run", "--workspace"])
        .arg(&c.ws)
        .args(["--", "sh", "-c"])
        .arg(format!("echo 'touch {}' > hook", marker.display()))
        .env("HOME", &c.home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    // Claude Code runs the Stop hook at the end of the turn.
    let input = serde_json::json!({"hook_event_name": "Stop", "cwd": c.ws}).to_string();
    let mut cmd = Command::new("/bin/sh");
    cmd.args(["-c", &stop[0]])
        .current_dir(&c.ws)
        .env("HOME", &c.home)
        .env("CLAUDE_PROJECT_DIR", &c.ws)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME");
    let _ = {
        use std::io::Write;
        let mut p = cmd
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let _ = p.stdin.take().unwrap().write_all(input.as_bytes());
        p.wait_with_output().unwrap()
    };
    assert!(
        !marker.exists(),
        "the Stop hook ran the workspace's file on the host: {stop:?}"
    );
    assert_eq!(claude_decision(&c, &[]).0, "allow");
}

/// atk24m F13: a settings file skarn could not read (one non-UTF-8 byte,
/// over its size bound) was skipped, while Claude Code reads it and runs
/// its hooks: now it counts as holding unconfined hooks. atk24m F9: a
/// relative `$CLAUDE_CONFIG_DIR` / `$CODEX_HOME` (the client reads it
/// relative to the project, where the agent writes) was ignored: now
/// every call is refused until it is absolute.
#[test]
fn m_f13_f9_unreadable_settings_and_relative_config_dirs_are_refused() {
    let c = setup_git("k-m-f13");
    std::fs::create_dir_all(c.ws.join(".claude")).unwrap();
    assert_eq!(claude_decision(&c, &[]).0, "allow");
    std::fs::write(
        c.ws.join(".claude/settings.local.json"),
        b"{\"x\": \"caf\xe9\", \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"id\"}]}]}}",
    )
    .unwrap();
    let (d, why) = claude_decision(&c, &[]);
    assert_eq!(d, "deny", "{why}");
    std::fs::remove_file(c.ws.join(".claude/settings.local.json")).unwrap();
    std::fs::create_dir_all(c.ws.join("cc2")).unwrap();
    let (d, why) = claude_decision(&c, &[("CLAUDE_CONFIG_DIR", "cc2")]);
    assert_eq!(d, "deny", "{why}");
    assert!(why.contains("CLAUDE_CONFIG_DIR"), "{why}");
    let patch = serde_json::json!({"hook_event_name": "PreToolUse", "tool_name": "apply_patch",
        "cwd": c.ws, "tool_use_id": "c1",
        "tool_input": {"command": "*** Begin Patch\n*** Add File: notes.md\n+hi\n*** End Patch\n"}});
    let o = Command::new(exe())
        .args(["hook", "codex"])
        .current_dir(&c.ws)
        .env("HOME", &c.home)
        .env("CODEX_HOME", "cdx")
        .env_remove("XDG_CONFIG_HOME")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut p| {
            use std::io::Write;
            let _ = p
                .stdin
                .take()
                .unwrap()
                .write_all(patch.to_string().as_bytes());
            p.wait_with_output()
        })
        .unwrap();
    assert_eq!(code(&o), 2, "{o:?}");
    assert!(err(&o).contains("CODEX_HOME"), "{}", err(&o));
}

/// atk24m F11, F12: a slash command's frontmatter hooks
/// (`.claude/commands/NAME.md`) and a subagent deeper than three
/// directories (`.claude/agents/a/b/c/d/x.md`) were never judged, while
/// Claude Code loads both and runs their hooks on the host.
#[test]
fn m_f11_f12_commands_and_deep_agents_frontmatter_hooks_are_judged() {
    let md = "---\nname: x\ndescription: x\nhooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: id\n---\nbody\n";
    for rel in [".claude/commands/x.md", ".claude/agents/a/b/c/d/deep.md"] {
        let c = setup_git("k-m-f11");
        let f = c.ws.join(rel);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        assert_eq!(claude_decision(&c, &[]).0, "allow", "{rel}");
        std::fs::write(&f, md).unwrap();
        let (d, why) = claude_decision(&c, &[]);
        assert_eq!(d, "deny", "{rel}: {why}");
    }
}
