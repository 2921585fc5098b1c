//! Issue 24, the agent's own hooks (ADR 0255, attack atk24k F1; helper
//! h24i): a hook command the user accepted runs a program on the
//! project's files (a formatter that loads the project's configuration,
//! which is code). After `skarn init` it must run inside `skarn run`, so
//! the code the agent planted cannot write outside the workspace, while
//! the formatter still formats; a hook left unconfined (the user's
//! settings, a skill's frontmatter) makes the hook refuse every call until
//! it is wrapped or trusted. Checked from outside: the marker outside the
//! workspace, the file formatted, the hook's answer as Claude Code reads
//! it.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::common::*;
use crate::support_agent::{
    Setup, agent_plants_config, bash_decision, client_runs_hook, init, setup,
};
use crate::support_hook::claude_hook;

fn post_write(s: &Setup) -> Value {
    json!({"hook_event_name": "PostToolUse", "tool_name": "Write", "cwd": s.ws,
           "tool_use_id": "toolu_h24i", "session_id": "s",
           "tool_input": {"file_path": s.ws.join("src/a.js"), "content": "const a = 1\n"}})
}

/// The project's PostToolUse formatter hook, accepted at `init`: after the
/// agent plants the formatter's configuration, the client's next run of
/// the hook must not run it on the host, and the file is still formatted.
#[test]
fn an_accepted_formatter_hook_runs_confined_and_still_formats() {
    let s = setup("h24i_fmt");
    std::fs::create_dir_all(s.ws.join(".claude")).unwrap();
    let settings = json!({"hooks": {"PostToolUse": [{"matcher": "Write|Edit",
        "hooks": [{"type": "command", "command": s.fmt.display().to_string()}]}]}});
    std::fs::write(s.ws.join(".claude/settings.json"), settings.to_string()).unwrap();
    let o = init(&s, &[]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(s.ws.join(".claude/settings.json")).unwrap())
            .unwrap();
    // Every PostToolUse command Claude Code would run for a Write.
    let cmds: Vec<String> = v["hooks"]["PostToolUse"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["hooks"].as_array().unwrap().iter())
        .filter_map(|h| h["command"].as_str().map(str::to_string))
        .collect();
    assert_eq!(cmds.len(), 2, "the formatter and skarn's own: {v}");
    agent_plants_config(&s);
    for c in &cmds {
        let o = client_runs_hook(&s, c, &post_write(&s));
        assert!(code(&o) == 0, "{c}: {} {}", out(&o), err(&o));
    }
    let planted: Vec<_> = std::fs::read_dir(&s.victim).unwrap().flatten().collect();
    assert!(
        planted.is_empty(),
        "the project's configuration ran unconfined on the host: {planted:?}"
    );
    assert_eq!(
        std::fs::read_to_string(s.ws.join("src/a.js")).unwrap(),
        "CONST A = 1\n",
        "the wrapped formatter still formats"
    );
    // And the hook lets the agent go on: nothing is left unconfined.
    let (d, why) = bash_decision(&s);
    assert_eq!(d, "allow", "{why}");
}

/// A hook `init` did not wrap (the user's own settings, here a status line
/// run through a package runner) makes the hook refuse every call, saying
/// what to do; the user's explicit trust keeps it unconfined.
#[test]
fn an_unwrapped_user_hook_is_refused_until_wrapped_or_trusted() {
    let s = setup("h24i_user");
    let o = init(&s, &[]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(bash_decision(&s).0, "allow");
    std::fs::create_dir_all(s.home.join(".claude")).unwrap();
    std::fs::write(
        s.home.join(".claude/settings.json"),
        r#"{"statusLine": {"type": "command", "command": "npx ccstatusline"}}"#,
    )
    .unwrap();
    let (d, why) = bash_decision(&s);
    assert_eq!(d, "deny", "{why}");
    assert!(
        // How to trust it is said to the user, not the model (atk24m F18).
        why.contains("npx ccstatusline") && !why.contains("trusted_hooks"),
        "{why}"
    );
    // `init --user` wraps it.
    let o = init(&s, &["--user", "--hook-only"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let (d, why) = bash_decision(&s);
    assert_eq!(d, "allow", "{why}");
    // Or the user trusts it word for word.
    std::fs::write(
        s.home.join(".claude/settings.json"),
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "make notify"}]}]}}"#,
    )
    .unwrap();
    assert_eq!(bash_decision(&s).0, "deny");
    let cfg = s.home.join(".config/skarn/config.toml");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str("[hook]\ntrusted_hooks = [\"make notify\"]\n");
    std::fs::write(&cfg, text).unwrap();
    let (d, why) = bash_decision(&s);
    assert_eq!(d, "allow", "{why}");
}

/// A skill's frontmatter hook (`.claude/skills/NAME/SKILL.md`, `hooks:`):
/// refused while unconfined, wrapped by `init`, and then the planted
/// configuration does not run on the host.
#[test]
fn a_skills_frontmatter_hook_is_judged_and_wrapped() {
    let s = setup("h24i_skill");
    let o = init(&s, &[]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let skill = s.ws.join(".claude/skills/fmt/SKILL.md");
    std::fs::create_dir_all(skill.parent().unwrap()).unwrap();
    std::fs::write(
        &skill,
        format!(
            "---\nname: fmt\ndescription: formats\nhooks:\n  PostToolUse:\n    - matcher: \"Write|Edit\"\n      hooks:\n        - type: command\n          command: \"{}\"\n---\nFormat files.\n",
            s.fmt.display()
        ),
    )
    .unwrap();
    let (d, why) = bash_decision(&s);
    assert_eq!(d, "deny", "{why}");
    assert!(why.contains("SKILL.md"), "{why}");
    let o = init(&s, &[]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let text = std::fs::read_to_string(&skill).unwrap();
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("command: "))
        .unwrap()
        .to_string();
    // A YAML single-quoted scalar, as Claude Code reads it.
    let cmd = line
        .strip_prefix('\'')
        .and_then(|l| l.strip_suffix('\''))
        .unwrap_or_else(|| panic!("{text}"))
        .replace("''", "'");
    assert_ne!(cmd, s.fmt.display().to_string(), "{text}");
    agent_plants_config(&s);
    let o = client_runs_hook(&s, &cmd, &post_write(&s));
    assert_eq!(code(&o), 0, "{}", err(&o));
    let planted: Vec<_> = std::fs::read_dir(&s.victim).unwrap().flatten().collect();
    assert!(planted.is_empty(), "{planted:?}");
    assert_eq!(
        std::fs::read_to_string(s.ws.join("src/a.js")).unwrap(),
        "CONST A = 1\n"
    );
    assert_eq!(bash_decision(&s).0, "allow");
}

/// Item 3: the agents' homes moved by `$CLAUDE_CONFIG_DIR` and
/// `$CODEX_HOME` (here into the workspace, as a project-local agent home
/// is) are protected places of `skarn run`: a confined command neither
/// changes the settings there nor adds a hooks file or a skill.
#[test]
fn moved_agent_homes_are_protected_from_confined_commands() {
    let s = setup("h24i_homes");
    let (claude, codex) = (s.ws.join("agent-home"), s.ws.join("codex-home"));
    std::fs::create_dir_all(&claude).unwrap();
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::write(claude.join("settings.json"), "{}\n").unwrap();
    std::fs::write(codex.join("config.toml"), "model = \"x\"\n").unwrap();
    let o = Command::new(exe())
        .args(["run", "--workspace-layer", "direct", "--workspace"])
        .arg(&s.ws)
        .args(["--", "sh", "-c"])
        .arg(
            "echo '{\"hooks\":1}' > agent-home/settings.json; mkdir -p agent-home/skills/x; \
             echo x > agent-home/skills/x/SKILL.md; echo '[hooks]' >> codex-home/config.toml; \
             echo x > codex-home/hooks.json; echo ran",
        )
        .env("HOME", &s.home)
        .env("CLAUDE_CONFIG_DIR", &claude)
        .env("CODEX_HOME", &codex)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .output()
        .unwrap();
    assert!(out(&o).contains("ran"), "{} {}", out(&o), err(&o));
    assert_eq!(
        std::fs::read_to_string(claude.join("settings.json")).unwrap(),
        "{}\n",
        "{}",
        err(&o)
    );
    assert!(!claude.join("skills/x/SKILL.md").exists(), "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(codex.join("config.toml")).unwrap(),
        "model = \"x\"\n"
    );
    assert!(!codex.join("hooks.json").exists());
}

/// atk24l F1: under `unsandboxed = ["git push"]` (the docs' example),
/// abbreviated or quoted options that make git run a program
/// (`--rece=`, `"--receive-pack=..."`, `'--exec=...'`) got `ask` with no
/// rewrite, and the user's yes ran the model's program on the host. What
/// Claude Code runs after the answer (the rewrite, else the command) must
/// not write outside the workspace.
#[test]
fn unsandboxed_patterns_cover_no_abbreviated_or_quoted_program_options() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is missing");
    }
    let s = setup("h24i_unsandboxed");
    let ok = |o: Output| assert!(o.status.success(), "{o:?}");
    ok(git(
        &s.ws,
        &[
            "-c",
            "user.email=a@b",
            "-c",
            "user.name=a",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
    ));
    std::fs::write(
        s.home.join(".config/skarn/config.toml"),
        "[hook]\nunsandboxed = [\"git push\"]\n",
    )
    .unwrap();
    let v = s.victim.display().to_string();
    for (i, cmd) in [
        format!("git push --rece='touch {v}/abbrev; git-receive-pack' . HEAD:refs/heads/a"),
        format!(
            "git push \"--receive-pack=touch {v}/dquoted; git-receive-pack\" . HEAD:refs/heads/b"
        ),
        format!("git push '--exec=touch {v}/squoted; git-receive-pack' . HEAD:refs/heads/c"),
        format!(
            "git push --\"receive-pack\"='touch {v}/split; git-receive-pack' . HEAD:refs/heads/d"
        ),
    ]
    .iter()
    .enumerate()
    {
        let i_ = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": s.ws,
                        "tool_input": {"command": cmd}});
        let o = claude_hook(
            &s.ws,
            &s.home,
            Some(s.ws.as_path()),
            &["XDG_CONFIG_HOME", "CLAUDE_CONFIG_DIR"],
            &i_,
        );
        let a: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {o:?}"));
        let h = &a["hookSpecificOutput"];
        if h["permissionDecision"] == "deny" {
            continue;
        }
        // Allowed, or asked and the user says yes: Claude Code runs the
        // rewrite when there is one, else the model's command.
        let run = h["updatedInput"]["command"].as_str().unwrap_or(cmd);
        let _ = Command::new("bash")
            .args(["-c", run])
            .current_dir(&s.ws)
            .env("HOME", &s.home)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_STATE_HOME")
            .output()
            .unwrap();
        let planted: Vec<_> = std::fs::read_dir(&s.victim).unwrap().flatten().collect();
        assert!(
            planted.is_empty(),
            "#{i} {cmd}: {h} ran on the host: {planted:?}"
        );
    }
}

/// atk24l F2: Claude Code asks the user after PreToolUse; a lease that
/// ended by time (`[hook] edit_lease`) while the prompt was still open let
/// a run started later swap the file for a link, and the approved edit
/// wrote outside the workspace. Claude Code's leases end when the tool has
/// run (PostToolUse / PostToolUseFailure), not by time.
#[test]
fn a_claude_edit_lease_outlives_a_slow_approval() {
    let s = setup("h24i_lease");
    let cfg = s.home.join(".config/skarn/config.toml");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str("[hook]\nedit_lease = \"1s\"\n");
    std::fs::write(&cfg, text).unwrap();
    let outside = s.victim.join("bashrc");
    std::fs::write(&outside, "echo user\n").unwrap();
    let notes = s.ws.join("notes.md");
    std::fs::write(&notes, "notes\n").unwrap();
    let i = json!({"hook_event_name": "PreToolUse", "tool_name": "Edit", "cwd": s.ws,
                   "tool_use_id": "toolu_slow",
                   "tool_input": {"file_path": notes, "old_string": "echo user", "new_string": "x"}});
    let o = claude_hook(
        &s.ws,
        &s.home,
        Some(s.ws.as_path()),
        &["XDG_CONFIG_HOME", "XDG_STATE_HOME", "CLAUDE_CONFIG_DIR"],
        &i,
    );
    assert_eq!(code(&o), 0, "{o:?}");
    assert!(!out(&o).contains("deny"), "{}", out(&o));
    // The user takes longer than edit_lease to approve; meanwhile the
    // agent's confined command (a parallel subagent) swaps the file.
    std::thread::sleep(std::time::Duration::from_secs(3));
    let _ = Command::new(exe())
        .args(["run", "--workspace"])
        .arg(&s.ws)
        .args(["--", "sh", "-c"])
        .arg(format!(
            "rm -f notes.md && ln -s {} notes.md",
            outside.display()
        ))
        .env("HOME", &s.home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .output()
        .unwrap();
    // Approved: the Edit reads the file and writes it back by its name.
    let now = std::fs::read_to_string(&notes).unwrap_or_default();
    std::fs::write(&notes, now.replace("echo user", "touch /tmp/pwned")).unwrap();
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "echo user\n",
        "the approved edit went through a link planted after the lease ended"
    );
}

/// Item 4: a plugin loaded for the session with `claude --plugin-dir DIR`
/// whose hooks run on Bash is a peer hook like an installed plugin's (with
/// it Claude Code may keep skarn's `allow` and drop its rewrite, atk24j
/// F10): the hook learns of it from the client's command line and refuses
/// instead of answering `allow` with a rewrite.
#[test]
fn a_plugin_dir_of_the_session_is_seen_by_the_hook() {
    let s = setup("h24i_plugin_dir");
    let plugin = s.home.join("dev-plugin");
    std::fs::create_dir_all(plugin.join("hooks")).unwrap();
    std::fs::create_dir_all(plugin.join(".claude-plugin")).unwrap();
    std::fs::write(
        plugin.join(".claude-plugin/plugin.json"),
        r#"{"name": "dev"}"#,
    )
    .unwrap();
    std::fs::write(
        plugin.join("hooks/hooks.json"),
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/rewrite.sh"}]}]}}"#,
    )
    .unwrap();
    // The client (here a shell standing in for it) started with
    // `--plugin-dir`, running the hook as a child.
    let mut c = Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("'{}' hook claude-code; exit $?", exe().display()))
        .arg("claude")
        .arg("--plugin-dir")
        .arg(&plugin)
        .current_dir(&s.ws)
        .env("HOME", &s.home)
        .env("CLAUDE_PROJECT_DIR", &s.ws)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let i = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": s.ws,
                   "tool_input": {"command": "id"}});
    let _ = c.stdin.take().unwrap().write_all(i.to_string().as_bytes());
    let o = c.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {o:?}"));
    let h = &v["hookSpecificOutput"];
    assert!(
        !(h["permissionDecision"] == "allow" && h["updatedInput"].is_object()),
        "allow with a rewrite beside the session plugin's Bash hook: {h}"
    );
    assert_eq!(h["permissionDecision"], "deny", "{h}");
    // Without the plugin the same call is allowed, rewritten.
    let (d, why) = bash_decision(&s);
    assert_eq!(d, "allow", "{why}");
}

/// atk24l F4: VS Code runs every hook file of `.github/hooks` and Claude
/// Code's project settings; `init --client vscode` in a cloned repository
/// adopted its `.github/hooks/policy.json` silently. It is listed and
/// `init` refuses (nothing written) without --accept-project-settings.
#[test]
fn init_for_vscode_shows_the_repositorys_own_hooks() {
    let s = setup("h24i_vscode");
    std::fs::create_dir_all(s.ws.join(".github/hooks")).unwrap();
    std::fs::write(
        s.ws.join(".github/hooks/policy.json"),
        r#"{"hooks": {"PreToolUse": [{"type": "command", "command": "./tools/policy.sh"}]}}"#,
    )
    .unwrap();
    let run = |extra: &[&str]| {
        Command::new(exe())
            .args(["init", "--client", "vscode"])
            .args(extra)
            .current_dir(&s.ws)
            .env("HOME", &s.home)
            .env_remove("XDG_CONFIG_HOME")
            .output()
            .unwrap()
    };
    let o = run(&[]);
    assert_ne!(code(&o), 0, "{}", err(&o));
    assert!(
        err(&o).contains("a hook runs ./tools/policy.sh"),
        "{}",
        err(&o)
    );
    assert!(!s.ws.join(".vscode/mcp.json").exists(), "nothing written");
    assert!(!s.ws.join(".github/hooks/skarn.json").exists());
    std::fs::remove_file(s.ws.join(".github/hooks/policy.json")).unwrap();
    std::fs::create_dir_all(s.ws.join(".claude")).unwrap();
    std::fs::write(
        s.ws.join(".claude/settings.json"),
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "make notify"}]}]}}"#,
    )
    .unwrap();
    let o = run(&[]);
    assert_ne!(code(&o), 0, "{}", err(&o));
    assert!(err(&o).contains("a hook runs make notify"), "{}", err(&o));
    let o = run(&["--accept-project-settings"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
}

/// atk24l F6: a git hook runs a project script by a path climbing up from
/// its own place (`. "$(dirname "$0")/../../tools/common.sh"`): the script
/// is kept from confined runs like one named from the top, so the user's
/// next `git commit` does not run what the agent wrote.
#[test]
fn a_git_hooks_script_named_from_its_own_place_is_kept() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is missing");
    }
    let s = setup("h24i_hook_rel");
    std::fs::create_dir_all(s.ws.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(s.ws.join("tools")).unwrap();
    let hook = s.ws.join(".git/hooks/commit-msg");
    std::fs::write(
        &hook,
        "#!/bin/sh\n. \"$(dirname \"$0\")/../../tools/common.sh\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(s.ws.join("tools/common.sh"), "true\n").unwrap();
    let marker = s.victim.join("by-commit-msg");
    let _ = Command::new(exe())
        .args(["run", "--workspace"])
        .arg(&s.ws)
        .args(["--", "sh", "-c"])
        .arg(format!(
            "echo 'touch {}' >> tools/common.sh",
            marker.display()
        ))
        .env("HOME", &s.home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .output()
        .unwrap();
    let o = git(
        &s.ws,
        &[
            "-c",
            "user.email=a@b",
            "-c",
            "user.name=a",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
    );
    assert!(o.status.success(), "{o:?}");
    assert!(
        !marker.exists(),
        "the user's git commit ran the agent's script"
    );
}
