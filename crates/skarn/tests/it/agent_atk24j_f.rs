//! Issue 24 item 6, attack pass atk24j (F1, F6, F8, F11): the agent's own
//! file tools refuse what `skarn run` keeps read-only or sets aside, judged
//! by what a path is. Each write is offered to every client's hook as that
//! client sends it (Claude Code Write/Edit/MultiEdit, Codex apply_patch,
//! Gemini CLI write_file/replace, VS Code editFiles/create_file), and the
//! answer is read as the client reads it: a write the client would go on
//! with is made, and the host program then run must not run what it holds.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::common::*;
use skarn_test_support::TempDir;

/// `skarn hook CLIENT` with `input`, started in `ws`.
fn hook(client: &str, input: &Value, home: &Path, ws: &Path) -> Output {
    let dir_var = match client {
        "claude-code" => "CLAUDE_PROJECT_DIR",
        "gemini-cli" => "GEMINI_PROJECT_DIR",
        _ => "SKARN_TEST_UNUSED",
    };
    let mut c = Command::new(exe())
        .args(["hook", client])
        .current_dir(ws)
        .env("HOME", home)
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("GEMINI_PROJECT_DIR")
        .env_remove("GEMINI_CLI")
        .env(dir_var, ws)
        .env_remove("XDG_CONFIG_HOME")
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

/// Whether the client goes on with the call, read as each client reads the
/// hook's answer (exit 2 blocks every one; a deny in the JSON).
fn goes_on(client: &str, o: &Output) -> bool {
    if code(o) == 2 {
        return false;
    }
    assert_eq!(code(o), 0, "{client}: {o:?}");
    if o.stdout.is_empty() {
        return true;
    }
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {o:?}"));
    let deny = v["hookSpecificOutput"]["permissionDecision"] == "deny"
        || v["decision"] == "deny"
        || v["permission"] == "deny";
    !deny
}

/// Every client's file tool writing `path` (absolute): which ones would go
/// on with the write.
fn clients_writing(ws: &Path, home: &Path, path: &Path) -> Vec<String> {
    let p = path.to_string_lossy();
    let rel = path.strip_prefix(ws).unwrap_or(path).to_string_lossy();
    let claude = |tool: &str, ti: Value| json!({"hook_event_name": "PreToolUse", "tool_name": tool, "cwd": ws, "tool_input": ti});
    let calls: Vec<(&str, &str, Value)> = vec![
        (
            "claude-code",
            "Write",
            claude("Write", json!({"file_path": p, "content": "X=1\n"})),
        ),
        (
            "claude-code",
            "Edit",
            claude(
                "Edit",
                json!({"file_path": p, "old_string": "a", "new_string": "b"}),
            ),
        ),
        (
            "claude-code",
            "MultiEdit",
            claude("MultiEdit", json!({"file_path": p, "edits": []})),
        ),
        (
            "codex",
            "apply_patch",
            claude(
                "apply_patch",
                json!({"command": format!(
                    "*** Begin Patch\n*** Update File: {rel}\n@@\n+x\n*** End Patch\n")}),
            ),
        ),
        (
            "gemini-cli",
            "write_file",
            json!({"hook_event_name": "BeforeTool", "tool_name": "write_file", "cwd": ws,
                   "tool_input": {"file_path": p, "content": "X=1\n"}}),
        ),
        (
            "gemini-cli",
            "replace",
            json!({"hook_event_name": "BeforeTool", "tool_name": "replace", "cwd": ws,
                   "tool_input": {"file_path": p, "old_string": "a", "new_string": "b"}}),
        ),
        (
            "vscode",
            "editFiles",
            json!({"hookEventName": "PreToolUse", "tool_name": "editFiles", "cwd": ws,
                   "tool_input": {"files": [p]}}),
        ),
        (
            "vscode",
            "create_file",
            json!({"hookEventName": "PreToolUse", "tool_name": "create_file", "cwd": ws,
                   "tool_input": {"filePath": p, "content": "X=1\n"}}),
        ),
    ];
    calls
        .into_iter()
        .filter(|(client, _, i)| goes_on(client, &hook(client, i, home, ws)))
        .map(|(client, tool, _)| format!("{client} {tool}"))
        .collect()
}

/// Write `text` to `path` as an agent's file tool does when its client
/// goes on (parents made, in place), if any client would; returns those.
fn written_if_allowed(ws: &Path, home: &Path, path: &Path, text: &str) -> Vec<String> {
    let who = clients_writing(ws, home, path);
    if !who.is_empty() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .unwrap();
    }
    who
}

fn repo(ws: &Path) {
    assert!(git(ws, &["init", "-q"]).status.success());
}

/// F1: a virtual environment's activation script and interpreter, and the
/// script a workspace mise configuration sources: `skarn run` keeps them
/// read-only; the file tools wrote them and the user's next `source
/// .venv/bin/activate` ran the planted line.
#[test]
fn venv_programs_and_mise_named_scripts_are_refused_to_every_client() {
    if !host_has("bash", "--version") {
        skarn_test_support::skip!("bash is missing");
    }
    let t = TempDir::new("atk24j_f1");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    repo(&ws);
    std::fs::create_dir_all(ws.join(".venv/bin")).unwrap();
    std::fs::create_dir_all(ws.join("scripts")).unwrap();
    std::fs::write(ws.join(".venv/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    std::fs::write(ws.join(".venv/bin/activate"), "# activate\n").unwrap();
    std::fs::write(ws.join(".venv/bin/python3"), "#!/bin/sh\n").unwrap();
    std::fs::write(
        ws.join("mise.toml"),
        "[env]\n_.source = \"scripts/env.sh\"\n",
    )
    .unwrap();
    std::fs::write(ws.join("scripts/env.sh"), ": env\n").unwrap();
    // What `skarn run` does with the same files (read-only).
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "echo x >> .venv/bin/activate || echo x >> scripts/env.sh",
        ],
    );
    // Read-only during the run, or (the copy-on-write layer, which no
    // longer walks the workspace before the run: ADR 0259) refused when
    // the layer is applied: either way the host's files are unchanged.
    assert_eq!(
        std::fs::read_to_string(ws.join(".venv/bin/activate")).unwrap(),
        "# activate\n",
        "skarn run wrote it: {}",
        err(&o)
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("scripts/env.sh")).unwrap(),
        ": env\n",
        "skarn run wrote it: {}",
        err(&o)
    );
    let victim = t.path().join("by-activate");
    let plant = format!("touch {}\n", victim.display());
    for f in [".venv/bin/activate", ".venv/bin/python3", "scripts/env.sh"] {
        let who = written_if_allowed(&ws, &home, &ws.join(f), &plant);
        assert!(who.is_empty(), "{f} written by {who:?}");
    }
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!(". {}", ws.join(".venv/bin/activate").display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    assert!(
        !victim.exists(),
        "the host's `source activate` ran the agent's line"
    );
    // An ordinary file of the project stays writable by every client.
    std::fs::write(ws.join("notes.txt"), "a\n").unwrap();
    assert_eq!(clients_writing(&ws, &home, &ws.join("notes.txt")).len(), 8);
}

/// F11: a customize module outside site-packages (an editable install's
/// `.pth` puts `src` on python's path) and `.lfsconfig` below the top:
/// `skarn run` sets them aside, the file tools planted them.
#[test]
fn customize_modules_and_upward_names_are_refused_at_any_depth() {
    let t = TempDir::new("atk24j_f11");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    repo(&ws);
    std::fs::create_dir_all(ws.join("src/proj")).unwrap();
    for f in [
        "src/sitecustomize.py",
        "src/usercustomize.py",
        "lib/deep/sitecustomize/__init__.py",
        "sub/.lfsconfig",
        "sub/rust-toolchain.toml",
        "tools/.cargo/config.toml",
    ] {
        let who = written_if_allowed(&ws, &home, &ws.join(f), "import os\n");
        assert!(who.is_empty(), "{f} written by {who:?}");
        assert!(!ws.join(f).exists());
    }
    assert_eq!(
        clients_writing(&ws, &home, &ws.join("src/proj/custom.py")).len(),
        8
    );
}

/// F6: four writes make `src/` a git directory (`HEAD`, `config`,
/// `objects/`, `refs/`); host git run below `src/` then used its
/// configuration (`core.fsmonitor` ran). `skarn run` sets such a directory
/// aside; the file tools may not make one either, nor write inside one.
#[test]
fn a_directory_is_not_made_a_git_directory_by_the_file_tools() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is missing");
    }
    let t = TempDir::new("atk24j_f6");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    repo(&ws);
    std::fs::create_dir_all(ws.join("src/app")).unwrap();
    std::fs::write(ws.join("src/app/main.py"), "print(1)\n").unwrap();
    let victim = t.path().join("by-fsmonitor");
    let writes = [
        ("src/objects/.keep", String::new()),
        ("src/refs/.keep", String::new()),
        ("src/HEAD", "ref: refs/heads/main\n".to_string()),
        (
            "src/config",
            format!(
                "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = {}\n\t\
                 fsmonitor = \"touch {}; false\"\n",
                ws.display(),
                victim.display()
            ),
        ),
    ];
    let mut any = Vec::new();
    for (f, text) in &writes {
        any.extend(written_if_allowed(&ws, &home, &ws.join(f), text));
    }
    let o = Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(ws.join("src/app"))
        .env("HOME", &home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    assert!(!victim.exists(), "host git ran the planted fsmonitor");
    assert!(!ws.join("src/HEAD").exists(), "written by {any:?}");
    // An existing git directory's shape (a bare repository in the tree):
    // nothing inside it is written.
    std::fs::create_dir_all(ws.join("fixtures/r.git/objects")).unwrap();
    std::fs::create_dir_all(ws.join("fixtures/r.git/refs")).unwrap();
    std::fs::write(ws.join("fixtures/r.git/HEAD"), "ref: refs/heads/main\n").unwrap();
    for f in [
        "fixtures/r.git/config",
        "fixtures/r.git/hooks/post-checkout",
    ] {
        assert!(clients_writing(&ws, &home, &ws.join(f)).is_empty(), "{f}");
    }
}

/// F8: a hard link of `~/.bashrc` in a dotfiles repository: `skarn run`
/// keeps it read-only by inode, the file tools changed `~/.bashrc` through
/// it; a hard link of `~/.config/skarn/config.toml` let one write switch
/// the hook off.
#[cfg(unix)]
#[test]
fn another_name_of_a_home_file_is_judged_by_what_it_is() {
    let t = TempDir::new("atk24j_f8");
    let (ws, home) = (t.dir("dotfiles"), t.dir("home"));
    repo(&ws);
    std::fs::write(home.join(".bashrc"), "# bashrc\n").unwrap();
    std::fs::hard_link(home.join(".bashrc"), ws.join("bashrc")).unwrap();
    let who = written_if_allowed(&ws, &home, &ws.join("bashrc"), "touch /tmp/x\n");
    assert!(who.is_empty(), "written by {who:?}");
    assert_eq!(
        std::fs::read_to_string(home.join(".bashrc")).unwrap(),
        "# bashrc\n"
    );
    // skarn's own configuration under another name: the hook does not
    // read its [hook] section (a write there would turn the guard off);
    // every call is blocked, the Write of ~/.bashrc included.
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    let cfg = home.join(".config/skarn/config.toml");
    std::fs::write(&cfg, "[hook]\nguard_files = false\nfile_boundary = false\n").unwrap();
    std::fs::hard_link(&cfg, ws.join("skarn-config.toml")).unwrap();
    let i = json!({"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": ws,
                   "tool_input": {"file_path": home.join(".bashrc"), "content": "x"}});
    let o = hook("claude-code", &i, &home, &ws);
    assert!(!goes_on("claude-code", &o), "{o:?}");
    assert!(err(&o).contains("hard links"), "{}", err(&o));
}

/// F12: the project's `.env` is Gemini CLI's own environment file; Gemini's
/// write_file created one naming `BASH_ENV`, and the shell Gemini starts for
/// the next (confined) command sourced the agent's script on the host
/// first. Refused to Gemini, and to every client once Gemini CLI is set up
/// for the project; a project without Gemini keeps its `.env` writable.
#[test]
fn geminis_own_environment_file_is_refused() {
    let t = TempDir::new("atk24j_f12");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    repo(&ws);
    let w = |path: &Path| {
        json!({"hook_event_name": "BeforeTool", "tool_name": "write_file", "cwd": ws,
               "tool_input": {"file_path": path, "content": "x"}})
    };
    for p in [ws.join(".env"), ws.join("packages/api/.env")] {
        let o = hook("gemini-cli", &w(&p), &home, &ws);
        assert!(!goes_on("gemini-cli", &o), "{}: {o:?}", p.display());
    }
    // Another client in a project without Gemini CLI: judged by the
    // content the call leaves (atk22o F10): the writes of plain
    // assignments go on; the calls whose result the guard does not compute
    // (a patch, an edit that does not apply here) are judged by probes,
    // which an environment file's content rule refuses.
    assert_eq!(clients_writing(&ws, &home, &ws.join(".env")).len(), 2);
    // Gemini set up for the project: refused to every client; the host
    // shell with the file's variables did not run the agent's script.
    std::fs::create_dir_all(ws.join(".gemini")).unwrap();
    let victim = t.path().join("by-bash-env");
    std::fs::write(ws.join(".bashenv"), format!("touch {}\n", victim.display())).unwrap();
    let line = format!("BASH_ENV={}\n", ws.join(".bashenv").display());
    let who = written_if_allowed(&ws, &home, &ws.join(".env"), &line);
    assert!(who.is_empty(), "written by {who:?}");
    let env_text = std::fs::read_to_string(ws.join(".env")).unwrap_or_default();
    let mut c = Command::new("bash");
    c.args(["-c", "true"]);
    for l in env_text.lines() {
        if let Some((k, v)) = l.split_once('=') {
            c.env(k, v);
        }
    }
    assert!(c.status().unwrap().success());
    assert!(
        !victim.exists(),
        "the host shell ran the agent's BASH_ENV script"
    );
}

/// F3: a project hook the user accepted runs `scripts/lint.sh`, the
/// repository's `core.fsmonitor` runs `tools/fsmon.sh`, a `.mcp.json`
/// server runs `tools/m.sh`: the configuration was protected, the scripts
/// it names were not, so a confined command or a file tool rewrote them and
/// the client (or host git) ran the agent's code unconfined. Both layers
/// now keep them: `skarn run` read-only, every client's file tools refused.
#[test]
fn scripts_protected_configuration_runs_are_kept_in_both_layers() {
    if !host_has("git", "--version") {
        skarn_test_support::skip!("git is missing");
    }
    let t = TempDir::new("atk24j_f3");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    repo(&ws);
    for d in [".claude", "scripts", "tools"] {
        std::fs::create_dir_all(ws.join(d)).unwrap();
    }
    std::fs::write(
        ws.join(".claude/settings.json"),
        r#"{"hooks":{"PostToolUse":[{"matcher":"Write","hooks":[{"type":"command","command":"\"$CLAUDE_PROJECT_DIR\"/scripts/lint.sh"}]}]}}"#,
    )
    .unwrap();
    std::fs::write(
        ws.join(".mcp.json"),
        r#"{"mcpServers":{"x":{"command":"tools/m.sh"}}}"#,
    )
    .unwrap();
    // The user keeps the hook unconfined on purpose (ADR 0255): what it
    // names must then be kept from the agent.
    std::fs::create_dir_all(home.join(".config/skarn")).unwrap();
    std::fs::write(
        home.join(".config/skarn/config.toml"),
        "[hook]\ntrusted_hooks = ['\"$CLAUDE_PROJECT_DIR\"/scripts/lint.sh']\n",
    )
    .unwrap();
    assert!(
        git(&ws, &["config", "core.fsmonitor", "tools/fsmon.sh"])
            .status
            .success()
    );
    for f in ["scripts/lint.sh", "tools/fsmon.sh", "tools/m.sh"] {
        std::fs::write(ws.join(f), "#!/bin/sh\n: ok\n").unwrap();
    }
    let victim = t.path().join("unconfined");
    let plant = format!("touch {}\n", victim.display());
    // A confined command rewriting each (the agent's hooked Bash).
    for f in ["scripts/lint.sh", "tools/fsmon.sh", "tools/m.sh"] {
        let o = run_in(
            &ws,
            &home,
            &[],
            &["sh", "-c", &format!("printf '{}' >> {f}", plant.trim_end())],
        );
        assert_ne!(code(&o), 0, "skarn run wrote {f}: {}", err(&o));
        let who = written_if_allowed(&ws, &home, &ws.join(f), &plant);
        assert!(who.is_empty(), "{f} written by {who:?}");
    }
    // A missing script a hook names is not made either.
    std::fs::remove_file(ws.join("scripts/lint.sh")).unwrap();
    let who = written_if_allowed(&ws, &home, &ws.join("scripts/lint.sh"), &plant);
    assert!(
        who.is_empty(),
        "the missing hook script was made by {who:?}"
    );
    std::fs::write(ws.join("scripts/lint.sh"), "#!/bin/sh\n: ok\n").unwrap();
    // What the client and host git run next, outside any sandbox.
    let o = Command::new("sh")
        .args([
            "-c",
            "sh \"$CLAUDE_PROJECT_DIR\"/scripts/lint.sh; sh tools/m.sh",
        ])
        .current_dir(&ws)
        .env("CLAUDE_PROJECT_DIR", &ws)
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let _ = git(&ws, &["status", "--porcelain"]);
    assert!(!victim.exists(), "the host ran the agent's code");
    // The rest of the project stays writable (not the hook script's own
    // directory: python imports, and scripts source, their neighbours,
    // atk24k F7).
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/build.sh"), "x\n").unwrap();
    assert_eq!(
        clients_writing(&ws, &home, &ws.join("src/build.sh")).len(),
        8
    );
    assert!(clients_writing(&ws, &home, &ws.join("scripts/build.sh")).is_empty());
}
