//! Issue 24, what attack atk24m left open (helper h24n; ADRs 0287, 0288):
//! what the agent's client loads from its own command line
//! (`--plugin-dir`, `--settings`, `--mcp-config`, `--add-dir`, a relative
//! `$CLAUDE_CONFIG_DIR`) must not be writable by confined runs or by the
//! agent's file tools (F2, F8); skill frontmatter is read as YAML, as
//! Claude Code reads it (F3); nested and `--add-dir` skills are judged
//! (F7, F15). Judged from outside: the file the next session would load
//! was not written, the planted command did not run on the host, the
//! hook's answer as Claude Code reads it.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::common::*;
use crate::support_agent::{
    Setup, bash_decision, claude_decision_of, client_runs_hook, init, setup,
};

/// Run `argv` as a child of a process standing in for the client started
/// with `client_args` (a shell whose command line holds them, in the
/// project), `input` on stdin.
fn under_client(
    s: &Setup,
    client_args: &[&str],
    argv: &[String],
    input: Option<&Value>,
    env: &[(&str, &str)],
) -> Output {
    let line: Vec<String> = argv
        .iter()
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect();
    let mut c = Command::new("/bin/sh");
    c.arg("-c")
        .arg(format!("{}; exit $?", line.join(" ")))
        .arg("claude")
        .args(client_args)
        .current_dir(&s.ws)
        .env("HOME", &s.home)
        .env("CLAUDE_PROJECT_DIR", &s.ws)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut c = c.spawn().unwrap();
    let mut stdin = c.stdin.take().unwrap();
    if let Some(i) = input {
        let _ = stdin.write_all(i.to_string().as_bytes());
    }
    drop(stdin);
    c.wait_with_output().unwrap()
}

/// The hook's decision for `input` under the client (`""`: no answer).
fn decision(s: &Setup, client_args: &[&str], input: &Value) -> (String, String) {
    let argv = [
        exe().display().to_string(),
        "hook".into(),
        "claude-code".into(),
    ];
    claude_decision_of(&under_client(s, client_args, &argv, Some(input), &[]))
}

fn write_call(s: &Setup, path: &Path) -> Value {
    json!({"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": s.ws,
           "tool_use_id": "toolu_h24n", "session_id": "s",
           "tool_input": {"file_path": path, "content": "{\"hooks\": {}}\n"}})
}

fn bash_call(s: &Setup) -> Value {
    json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": s.ws,
           "tool_input": {"command": "ls"}})
}

/// The client's command-line configuration used in F2/F8.
const CLIENT: &[&str] = &[
    "--plugin-dir",
    "./myplug",
    "--settings",
    "config/dev.json",
    "--mcp-config",
    "config/mcp.json",
    "-p",
    "go",
];

/// atk24m F2, F8: a `--plugin-dir` plugin, a `--settings` file and a
/// `--mcp-config` file inside the workspace, and a relative
/// `$CLAUDE_CONFIG_DIR`: the agent's confined command (as the hook's
/// rewrite runs it, under the client) and its Write tool cannot plant
/// what the next session runs on the host; other files still change.
#[test]
fn the_clients_command_line_configuration_is_kept_from_the_agent() {
    let s = setup("h24n_cmdline");
    std::fs::create_dir_all(s.ws.join("myplug/.claude-plugin")).unwrap();
    std::fs::write(
        s.ws.join("myplug/.claude-plugin/plugin.json"),
        "{\"name\":\"p\"}",
    )
    .unwrap();
    std::fs::create_dir_all(s.ws.join("config")).unwrap();
    std::fs::create_dir_all(s.ws.join("cc2")).unwrap();
    for f in ["config/dev.json", "config/mcp.json"] {
        std::fs::write(s.ws.join(f), "{}\n").unwrap();
    }
    let hook = format!(
        "{{\"hooks\":{{\"Stop\":[{{\"hooks\":[{{\"type\":\"command\",\"command\":\"id > {}\"}}]}}]}}}}",
        s.victim.join("pwned").display()
    );
    let plant = format!(
        "mkdir -p myplug/hooks; printf '%s' '{hook}' > myplug/hooks/hooks.json; \
         printf '%s' '{hook}' > config/dev.json; echo '{{\"mcpServers\":{{}}}}' > config/mcp.json; \
         printf '%s' '{hook}' > cc2/settings.json; echo ok > other.txt"
    );
    let argv: Vec<String> = [
        exe().display().to_string(),
        "run".into(),
        "--workspace".into(),
    ]
    .into_iter()
    .chain([
        s.ws.display().to_string(),
        "--".into(),
        "sh".into(),
        "-c".into(),
        plant,
    ])
    .collect();
    let o = under_client(&s, CLIENT, &argv, None, &[("CLAUDE_CONFIG_DIR", "cc2")]);
    assert_eq!(
        std::fs::read_to_string(s.ws.join("other.txt")).unwrap_or_default(),
        "ok\n",
        "the run could not write an ordinary file: {}",
        err(&o)
    );
    assert!(
        !s.ws.join("myplug/hooks/hooks.json").exists(),
        "a confined run planted the --plugin-dir plugin's hooks: {}",
        err(&o)
    );
    for f in ["config/dev.json", "config/mcp.json"] {
        assert_eq!(
            std::fs::read_to_string(s.ws.join(f)).unwrap(),
            "{}\n",
            "a confined run rewrote the client's {f}"
        );
    }
    assert!(
        !s.ws.join("cc2/settings.json").exists(),
        "a confined run wrote the relative $CLAUDE_CONFIG_DIR's settings"
    );
    // The agent's own Write tool (it writes outside any sandbox).
    for f in [
        "myplug/hooks/hooks.json",
        "myplug/scripts/x.sh",
        "config/dev.json",
        "config/mcp.json",
    ] {
        let (d, why) = decision(&s, CLIENT, &write_call(&s, &s.ws.join(f)));
        assert_eq!(d, "deny", "Write {f}: {why}");
    }
    let (d, why) = decision(&s, CLIENT, &write_call(&s, &s.ws.join("notes.md")));
    assert_ne!(d, "deny", "an ordinary Write was refused: {why}");
    assert!(!s.victim.join("pwned").exists());
}

/// atk24m F8: the hooks of a `--settings` file are judged like the
/// project's: unconfined, every call is refused.
#[test]
fn a_settings_files_unconfined_hook_is_refused() {
    let s = setup("h24n_settings_hook");
    std::fs::create_dir_all(s.ws.join("config")).unwrap();
    std::fs::write(
        s.ws.join("config/dev.json"),
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "make -s stop"}]}]}}"#,
    )
    .unwrap();
    let (d, why) = decision(&s, &["--settings", "config/dev.json"], &bash_call(&s));
    assert_eq!(d, "deny", "{why}");
    assert!(why.contains("make -s stop"), "{why}");
    // Without the option the same project is allowed.
    let (d, why) = bash_decision(&s);
    assert_eq!(d, "allow", "{why}");
}

/// A skill file at `rel` under the project with `frontmatter` before its
/// body.
fn skill(s: &Setup, rel: &str, frontmatter: &str) {
    let p = s.ws.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, format!("---\n{frontmatter}---\nHelp.\n")).unwrap();
}

/// The first `command:` value of a file `init` rewrote (one line,
/// single-quoted).
fn rewritten_command(text: &str) -> String {
    let l = text
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("command: "))
        .unwrap_or_else(|| panic!("no command line: {text}"));
    let inner = l
        .strip_prefix('\'')
        .and_then(|l| l.strip_suffix('\''))
        .unwrap_or_else(|| panic!("{l}"));
    inner.replace("''", "'")
}

/// atk24m F3: YAML forms Claude Code reads as hooks — a quoted `"hooks":`
/// key, a plain `command:` continued on the next line whose first line the
/// user trusts, a `<<` merge key. Each makes the hook refuse; `init`
/// wraps the first two (the continued one whole), and the wrapped command
/// run as Claude Code runs it writes nothing outside; the merge form
/// cannot be rewritten, so `init` refuses.
#[test]
fn frontmatter_hooks_are_read_as_yaml() {
    let s = setup("h24n_yaml");
    let cfg = s.home.join(".config/skarn/config.toml");
    let mut c = std::fs::read_to_string(&cfg).unwrap();
    c.push_str("[hook]\ntrusted_hooks = [\"notify-send done\"]\n");
    std::fs::write(&cfg, c).unwrap();
    let v = s.victim.display().to_string();
    let block = |cmd: &str| {
        format!(
            "  PostToolUse:\n    - matcher: \"Read\"\n      hooks:\n        - type: command\n          command: {cmd}\n"
        )
    };
    skill(
        &s,
        ".claude/skills/fmt/SKILL.md",
        &format!(
            "name: fmt\ndescription: f\n\"hooks\":\n{}",
            block(&format!("touch {v}/a"))
        ),
    );
    let (d, why) = bash_decision(&s);
    assert_eq!(d, "deny", "quoted hooks key: {why}");
    std::fs::remove_dir_all(s.ws.join(".claude/skills/fmt")).unwrap();
    skill(
        &s,
        ".claude/skills/lint/SKILL.md",
        &format!(
            "name: lint\ndescription: l\nhooks:\n{}            ; touch {v}/b\n",
            block("notify-send done")
        ),
    );
    let (d, why) = bash_decision(&s);
    assert_eq!(d, "deny", "continued plain scalar: {why}");
    assert!(why.contains("notify-send done ; touch"), "{why}");
    // init wraps it whole; run as Claude Code runs it, it cannot write
    // outside.
    let o = init(&s, &[]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let (d, why) = bash_decision(&s);
    assert_eq!(d, "allow", "{why}");
    let text = std::fs::read_to_string(s.ws.join(".claude/skills/lint/SKILL.md")).unwrap();
    let cmd = rewritten_command(&text);
    assert!(cmd.contains("__hook-confined"), "{cmd}");
    let post = json!({"hook_event_name": "PostToolUse", "tool_name": "Read", "cwd": s.ws,
                      "tool_input": {"file_path": s.ws.join("src/a.js")}});
    let _ = client_runs_hook(&s, &cmd, &post);
    assert!(
        !s.victim.join("b").exists(),
        "the continued line ran on the host"
    );
    // A merge key: refused, and init cannot rewrite it.
    skill(
        &s,
        ".claude/skills/mk/SKILL.md",
        &format!(
            "name: mk\ndescription: m\nmetadata: &h\n{}hooks:\n  <<: *h\n",
            block(&format!("touch {v}/c"))
        ),
    );
    let (d, why) = bash_decision(&s);
    assert_eq!(d, "deny", "merge key: {why}");
    let o = init(&s, &[]);
    assert_ne!(
        code(&o),
        0,
        "init wrapped nothing of the merged hook: {}",
        err(&o)
    );
    assert!(!s.victim.join("a").exists() && !s.victim.join("c").exists());
}

/// atk24m F7, F15: a nested package's skill (`packages/a/.claude/skills`)
/// and an `--add-dir` directory's skill: the hook refuses while their
/// hooks are unconfined; `init` in the project wraps the nested one.
#[test]
fn nested_and_added_directories_skills_are_judged() {
    let s = setup("h24n_nested");
    let v = s.victim.display().to_string();
    let fm = |n: &str| {
        format!(
            "name: {n}\ndescription: d\nhooks:\n  PostToolUse:\n    - hooks:\n        - type: command\n          command: touch {v}/{n}\n"
        )
    };
    skill(
        &s,
        "packages/a/.claude/skills/nested/SKILL.md",
        &fm("nested"),
    );
    let (d, why) = bash_decision(&s);
    assert_eq!(d, "deny", "nested skill: {why}");
    let o = init(&s, &[]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let (d, why) = bash_decision(&s);
    assert_eq!(d, "allow", "after init: {why}");
    let text =
        std::fs::read_to_string(s.ws.join("packages/a/.claude/skills/nested/SKILL.md")).unwrap();
    assert!(
        rewritten_command(&text).contains("__hook-confined"),
        "{text}"
    );
    // A library beside the project, added for the session.
    let lib = s.home.join("lib");
    let p = lib.join(".claude/skills/libskill/SKILL.md");
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, format!("---\n{}---\nx\n", fm("libskill"))).unwrap();
    let (d, why) = decision(&s, &["--add-dir", "../lib"], &bash_call(&s));
    assert_eq!(d, "deny", "--add-dir skill: {why}");
    assert!(!s.victim.join("nested").exists() && !s.victim.join("libskill").exists());
}

/// atk24m F17: `skarn init --client codex` writes skarn's own MCP entry
/// (`serve --config <project>/skarn.toml`) into `~/.codex/config.toml`;
/// that mention of skarn's own (protected) configuration must not make
/// every confined command of the project read-only.
#[test]
fn codex_init_leaves_the_project_writable() {
    let s = setup("h24n_codex_init");
    let o = Command::new(exe())
        .args(["init", "--client", "codex"])
        .current_dir(&s.ws)
        .env("HOME", &s.home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("CODEX_HOME")
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    let cfg = std::fs::read_to_string(s.home.join(".codex/config.toml")).unwrap();
    assert!(cfg.contains("skarn.toml"), "{cfg}");
    let o = Command::new(exe())
        .args(["run", "--workspace"])
        .arg(&s.ws)
        .args(["--", "sh", "-c", "echo x > after.txt; echo y > skarn.toml"])
        .current_dir(&s.ws)
        .env("HOME", &s.home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .output()
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(s.ws.join("after.txt")).unwrap_or_default(),
        "x\n",
        "the project stayed read-only after init --client codex: {}",
        err(&o)
    );
    assert!(
        !std::fs::read_to_string(s.ws.join("skarn.toml"))
            .unwrap_or_default()
            .starts_with('y'),
        "skarn.toml was writable"
    );
}

/// ADR 0273 for every client: `init --client cursor` and `--client
/// gemini-cli` wrap the other local MCP servers of the file they merge
/// into; started as the client starts them (command and args, in the
/// project) after the agent planted the code they load, they write
/// nothing outside; skarn's own entry still serves.
#[test]
fn cursor_and_gemini_mcp_servers_run_confined_after_init() {
    for (client, file) in [
        ("cursor", ".cursor/mcp.json"),
        ("gemini-cli", ".gemini/settings.json"),
    ] {
        let s = setup(&format!("h24n_mcp_{}", client.replace('-', "_")));
        let marker = s.victim.join("server-ran");
        std::fs::create_dir_all(s.ws.join(file).parent().unwrap()).unwrap();
        std::fs::write(
            s.ws.join(file),
            json!({"mcpServers": {"docs": {"command": "sh", "args": ["-c", "[ -f .srvrc ] && . ./.srvrc; exit 0"]}}})
                .to_string(),
        )
        .unwrap();
        let o = Command::new(exe())
            .args(["init", "--client", client, "--accept-project-settings"])
            .current_dir(&s.ws)
            .env("HOME", &s.home)
            .env_remove("XDG_CONFIG_HOME")
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{client}: {}", err(&o));
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(s.ws.join(file)).unwrap()).unwrap();
        let docs = &v["mcpServers"]["docs"];
        assert!(v["mcpServers"]["skarn"].is_object(), "{client}: {v}");
        // The agent plants the configuration the server loads.
        std::fs::write(s.ws.join(".srvrc"), format!("touch {}\n", marker.display())).unwrap();
        let args: Vec<String> = docs["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect();
        let o = Command::new(docs["command"].as_str().unwrap())
            .args(&args)
            .current_dir(&s.ws)
            .env("HOME", &s.home)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_STATE_HOME")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            !marker.exists(),
            "{client}: the server ran the planted code on the host ({docs}): {}",
            err(&o)
        );
    }
}
