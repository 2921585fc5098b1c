//! Shared set-up of the agent integration tests (issue 24): a home with a
//! project inside, a formatter installed outside every workspace that the
//! user's configuration lets confined commands run, a victim directory
//! outside both, and the agent's client as the tests stand it in (running
//! `skarn init`, starting a hook, reading the hook's answer).

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::common::*;
use skarn_test_support::TempDir;

/// A formatter that, like prettier or eslint, loads the project's
/// configuration file (`.fmtrc`, code) from where it runs, then formats
/// (upper-cases) the file the hook input names.
pub(crate) const FORMATTER: &str = "#!/bin/sh\n\
    f=$(sed -n 's/.*\"file_path\": *\"\\([^\"]*\\)\".*/\\1/p')\n\
    [ -f .fmtrc ] && . ./.fmtrc\n\
    tr a-z A-Z < \"$f\" > \"$f.fmt\" && cat \"$f.fmt\" > \"$f\" && rm -f \"$f.fmt\"\n";

/// A formatter that only loads the project's configuration.
pub(crate) const LOADER: &str = "#!/bin/sh\n[ -f .fmtrc ] && . ./.fmtrc\nexit 0\n";

pub(crate) struct Setup {
    pub(crate) t: TempDir,
    pub(crate) home: PathBuf,
    /// The project, `home/p`.
    pub(crate) ws: PathBuf,
    /// The installed formatter.
    pub(crate) fmt: PathBuf,
    pub(crate) victim: PathBuf,
}

/// A project with a minimal `.git` of its own and `src/a.js`; the
/// formatter formats.
pub(crate) fn setup(tag: &str) -> Setup {
    let s = project(tag, FORMATTER);
    std::fs::create_dir_all(s.ws.join(".git/objects")).unwrap();
    std::fs::create_dir_all(s.ws.join(".git/refs")).unwrap();
    std::fs::write(s.ws.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::create_dir_all(s.ws.join("src")).unwrap();
    std::fs::write(s.ws.join("src/a.js"), "const a = 1\n").unwrap();
    s
}

/// A project made by `git init`; the formatter only loads `.fmtrc`.
pub(crate) fn setup_git(tag: &str) -> Setup {
    let s = project(tag, LOADER);
    git(&s.ws, &["init", "-q"]);
    s
}

fn project(tag: &str, formatter: &str) -> Setup {
    let t = TempDir::new(tag);
    let (home, ws, tools, victim) = (
        t.dir("home"),
        t.dir("home/p"),
        t.dir("tools"),
        t.dir("victim"),
    );
    for d in [t.path(), &home, &ws, &tools, &victim] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let fmt = tools.join("fmt");
    std::fs::write(&fmt, formatter).unwrap();
    std::fs::set_permissions(&fmt, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The user's configuration lets confined commands run the formatter
    // (installed where a sandbox does not see by default).
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        format!("[run]\nexec = [{:?}]\n", tools.display().to_string()),
    )
    .unwrap();
    Setup {
        t,
        home,
        ws,
        fmt,
        victim,
    }
}

impl Setup {
    /// The formatter's path as a string (as a hook command names it).
    pub(crate) fn fmt_cmd(&self) -> String {
        self.fmt.display().to_string()
    }

    /// What is in the victim directory (empty: nothing was written there).
    pub(crate) fn victim_files(&self) -> Vec<String> {
        std::fs::read_dir(&self.victim)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    }
}

/// `skarn init --client claude-code --accept-project-settings EXTRA...`.
pub(crate) fn init(s: &Setup, extra: &[&str]) -> Output {
    let mut args = vec!["--client", "claude-code", "--accept-project-settings"];
    args.extend(extra);
    init_by(s, &exe(), &args)
}

/// `skarn init --client AGENT --hook-only --accept-project-settings`.
pub(crate) fn init_client(s: &Setup, agent: &str) -> Output {
    init_by(
        s,
        &exe(),
        &[
            "--client",
            agent,
            "--hook-only",
            "--accept-project-settings",
        ],
    )
}

/// `BIN init ARGS...` in the project, as the user runs it.
pub(crate) fn init_by(s: &Setup, bin: &std::path::Path, args: &[&str]) -> Output {
    Command::new(bin)
        .arg("init")
        .args(args)
        .current_dir(&s.ws)
        .env("HOME", &s.home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("CODEX_HOME")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Run `cmd` as Claude Code runs a hook: through a shell, in the project,
/// `$CLAUDE_PROJECT_DIR` set, the input on stdin.
pub(crate) fn client_runs_hook(s: &Setup, cmd: &str, input: &Value) -> Output {
    let mut c = Command::new("/bin/sh")
        .args(["-c", cmd])
        .current_dir(&s.ws)
        .env("HOME", &s.home)
        .env("CLAUDE_PROJECT_DIR", &s.ws)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
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

/// A program the client starts on the host in the project (a hook, with
/// `input` on stdin, or Codex's `notify` argv).
pub(crate) fn client_starts(s: &Setup, argv: &[String], input: Option<&str>) -> Output {
    let mut p = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(&s.ws)
        .env("HOME", &s.home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .env_remove("CODEX_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = p.stdin.take().unwrap();
    let _ = stdin.write_all(input.unwrap_or("").as_bytes());
    drop(stdin);
    p.wait_with_output().unwrap()
}

/// `skarn hook AGENT` with `input`, as the client starts it.
pub(crate) fn hook_answer(s: &Setup, agent: &str, input: &Value) -> Output {
    let argv = vec![
        exe().display().to_string(),
        "hook".to_string(),
        agent.to_string(),
    ];
    client_starts(s, &argv, Some(&input.to_string()))
}

/// The agent's confined command plants the project's formatter
/// configuration (an ordinary project file), as the hook's rewrite runs it.
pub(crate) fn agent_plants_config(s: &Setup) {
    let marker = s.victim.join("by-fmtrc");
    let o = Command::new(exe())
        .args(["run", "--workspace"])
        .arg(&s.ws)
        .args(["--", "sh", "-c"])
        .arg(format!("echo 'touch {}' > .fmtrc", marker.display()))
        .env("HOME", &s.home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(s.ws.join(".fmtrc").is_file(), "the plant landed");
}

/// `skarn hook claude-code` for a Bash call running `cmd` in the project,
/// `env` set, as Claude Code starts it.
pub(crate) fn claude_bash_hook(s: &Setup, cmd: &str, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(exe());
    c.args(["hook", "claude-code"])
        .current_dir(&s.ws)
        .env("HOME", &s.home)
        .env("CLAUDE_PROJECT_DIR", &s.ws)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut c = c.spawn().unwrap();
    let i = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": s.ws,
                   "tool_use_id": "t1", "session_id": "s", "tool_input": {"command": cmd}});
    let _ = c.stdin.take().unwrap().write_all(i.to_string().as_bytes());
    c.wait_with_output().unwrap()
}

/// A Claude Code hook's decision as the client reads it (`deny`, `allow`,
/// `ask`, or "" for no answer) and its reason (stderr when no answer).
pub(crate) fn claude_decision_of(o: &Output) -> (String, String) {
    if o.stdout.is_empty() {
        return (String::new(), err(o));
    }
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {o:?}"));
    let h = &v["hookSpecificOutput"];
    (
        h["permissionDecision"].as_str().unwrap_or("").to_string(),
        h["permissionDecisionReason"]
            .as_str()
            .unwrap_or("")
            .to_string(),
    )
}

/// The hook's answer to a Bash call running `ls`.
pub(crate) fn bash_decision(s: &Setup) -> (String, String) {
    claude_decision_of(&claude_bash_hook(s, "ls", &[]))
}

/// Every `command` string under `v`.
pub(crate) fn json_commands(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => m.iter().for_each(|(k, x)| match x {
            serde_json::Value::String(s) if k == "command" => out.push(s.clone()),
            _ => json_commands(x, out),
        }),
        serde_json::Value::Array(a) => a.iter().for_each(|x| json_commands(x, out)),
        _ => {}
    }
}
