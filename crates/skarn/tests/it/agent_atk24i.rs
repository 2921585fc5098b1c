//! Issue 24, attack pass atk24i: the file guard asks the sources of truth
//! `skarn run` uses (its grant resolution, its venv check, its list of
//! places host programs run), so the two cannot differ. Each finding made
//! as the attack made it and judged from outside: the hook's exit status
//! and JSON as the agent reads them, the file outside not written, the
//! host program not running the planted file.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::common::*;
use skarn_test_support::TempDir;

/// `skarn hook ARGS` with `input`, in `dir`, `HOME=home` and `env` set
/// (the agent's environment, which the hook inherits).
fn hook_env(args: &[&str], input: &str, home: &Path, dir: &Path, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(exe());
    c.arg("hook")
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("GEMINI_PROJECT_DIR")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .env_remove("BASH_ENV")
        .env_remove("PYTHONSTARTUP")
        .env_remove("NODE_OPTIONS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut c = c.spawn().unwrap();
    let _ = c.stdin.take().unwrap().write_all(input.as_bytes());
    c.wait_with_output().unwrap()
}

/// Claude Code's `Write` of `path`: `Some(reason)` for a deny (exit 0,
/// `permissionDecision: "deny"`), `None` for no answer (the write goes
/// ahead). When allowed, the write is made, as Claude Code makes it.
fn claude_write(
    path: &Path,
    ws: &Path,
    home: &Path,
    env: &[(&str, &str)],
    body: &str,
) -> Option<String> {
    let i = json!({"session_id": "s", "transcript_path": home.join("t.jsonl"), "cwd": ws,
                   "permission_mode": "default", "hook_event_name": "PreToolUse",
                   "tool_name": "Write", "tool_input": {"file_path": path, "content": body}});
    let o = hook_env(&["claude-code"], &i.to_string(), home, ws, env);
    assert_eq!(code(&o), 0, "{path:?}: {o:?}");
    if o.stdout.is_empty() {
        if let Some(d) = path.parent() {
            let _ = std::fs::create_dir_all(d);
        }
        let _ = std::fs::write(path, body);
        return None;
    }
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny", "{v}");
    Some(
        v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .to_owned(),
    )
}

/// F2: a trusted `[run] write = ["build/cache"]`, and a confined command
/// makes `build` a link to a directory outside. `skarn run` refuses the
/// grant (a link a confined command could have planted); the guard's
/// boundary followed it, so the agent's Write, Codex's apply_patch and
/// Gemini's write_file reached the link's target.
#[test]
fn a_grant_turned_into_a_link_by_a_confined_command_is_no_root() {
    let t = TempDir::new("atk24i_f2");
    let (ws, home, victim) = (t.dir("ws"), t.dir("home"), t.dir("victim"));
    std::fs::create_dir_all(victim.join("cache")).unwrap();
    git(&ws, &["init", "-q"]);
    let cfg = t.file("ws/skarn.toml", "[run]\nwrite = [\"build/cache\"]\n");
    trust(&cfg, &home);
    let o = run_in(
        &ws,
        &home,
        &[],
        &["ln", "-s", victim.to_str().unwrap(), "build"],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    // A link the run made to a writable directory outside the grants is
    // set aside after the run (atk22g F8); made again by hand, the
    // planted link of the attack is there for what follows.
    if !ws.join("build").is_symlink() {
        std::os::unix::fs::symlink(&victim, ws.join("build")).unwrap();
    }
    // `skarn run` with the configuration refuses the grant.
    let o = Command::new(exe())
        .args(["run", "--workspace"])
        .arg(&ws)
        .args(["--", "true"])
        .env("HOME", &home)
        .env_remove("XDG_STATE_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_ne!(code(&o), 0, "skarn run took the linked grant: {}", err(&o));
    let evil = victim.join("cache/evil.sh");
    let w = claude_write(&evil, &ws, &home, &[], "id\n");
    assert!(!evil.exists(), "written outside: {w:?}");
    assert!(w.is_some_and(|w| w.contains("outside the workspace")));
    let w = claude_write(&ws.join("build/cache/x.sh"), &ws, &home, &[], "id\n");
    assert!(
        !victim.join("cache/x.sh").exists(),
        "written through the link: {w:?}"
    );
    // Codex's apply_patch (exit 2 is its refusal) and Gemini's write_file.
    let patch = format!(
        "*** Begin Patch\n*** Add File: {}\n+id\n*** End Patch\n",
        evil.display()
    );
    let i = json!({"hook_event_name": "PreToolUse", "tool_name": "apply_patch", "cwd": ws,
                   "tool_input": {"command": patch}});
    let o = hook_env(&["codex"], &i.to_string(), &home, &ws, &[]);
    assert_eq!(code(&o), 2, "{o:?}");
    let i = json!({"hook_event_name": "BeforeTool", "tool_name": "write_file", "cwd": ws,
                   "tool_input": {"file_path": evil, "content": "x"}});
    let o = hook_env(&["gemini-cli"], &i.to_string(), &home, &ws, &[]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    assert_eq!(v["decision"], "deny", "{o:?}");
    // A grant that is what it names is still a root.
    let ws2 = t.dir("ws2");
    let shared = t.dir("shared");
    git(&ws2, &["init", "-q"]);
    let cfg2 = t.file(
        "ws2/skarn.toml",
        format!("[run]\nwrite = [{:?}]\n", shared.display().to_string()),
    );
    trust(&cfg2, &home);
    assert_eq!(
        claude_write(&shared.join("ok.txt"), &ws2, &home, &[], "ok\n"),
        None
    );
    assert!(shared.join("ok.txt").exists());
}

/// F3: a venv's start-up files (`.pth`, `sitecustomize.py`, `pyvenv.cfg`),
/// which `skarn run` keeps read-only and sets aside, planted by the Write
/// tool: host python ran the planted line at its next start. Also in an
/// environment not made yet.
#[test]
fn a_venvs_start_up_files_cannot_be_planted_by_the_file_tools() {
    let t = TempDir::new("atk24i_f3");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let marker = t.path().join("ran");
    git(&ws, &["init", "-q"]);
    let made = Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(ws.join(".venv"))
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        skarn_test_support::skip!("python3 -m venv is not available on this host");
    }
    let lib = std::fs::read_dir(ws.join(".venv/lib"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let sp = lib.join("site-packages");
    let line = format!(
        "import os; open({:?}, 'w').close()\n",
        marker.display().to_string()
    );
    for f in [
        sp.join("evil.pth"),
        sp.join("sitecustomize.py"),
        sp.join("usercustomize.py"),
        sp.join("Evil.PTH"),
        ws.join(".venv/pyvenv.cfg"),
        ws.join("venv/lib/python3.12/site-packages/y.pth"),
        ws.join("env2/lib/python3.12/site-packages/sitecustomize/__init__.py"),
    ] {
        let body = if f.ends_with("pyvenv.cfg") {
            "home = /nonexistent\n"
        } else {
            &line
        };
        let w = claude_write(&f, &ws, &home, &[], body);
        assert!(
            w.as_deref().is_some_and(|w| w.contains("start-up")),
            "{f:?}: {w:?}"
        );
    }
    let o = Command::new(ws.join(".venv/bin/python"))
        .args(["-c", "pass"])
        .env("HOME", &home)
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    assert!(
        !marker.exists(),
        "host python ran the planted start-up line"
    );
    // Compiled Python, which `skarn run` removes or sets aside after a
    // run (python loads it in place of the source).
    for f in [
        ws.join("src/__pycache__/m.cpython-312.pyc"),
        ws.join("json.PYC"),
    ] {
        let w = claude_write(&f, &ws, &home, &[], "x");
        assert!(
            w.as_deref().is_some_and(|w| w.contains("compiled Python")),
            "{f:?}: {w:?}"
        );
        assert!(!f.exists(), "{f:?}");
    }
    // Plain files of the environment and of the project are not refused.
    assert_eq!(
        claude_write(&sp.join("mod.py"), &ws, &home, &[], "x = 1\n"),
        None
    );
    assert_eq!(
        claude_write(&ws.join("site.pth.txt"), &ws, &home, &[], "x\n"),
        None
    );
}

/// F9: files `skarn run` keeps read-only because host programs run them
/// got no deny: the file the caller's `BASH_ENV` names (the next host
/// bash ran it), `PYTHONSTARTUP`, a `yarnPath` outside `.yarn/releases`,
/// and programs the global git configuration names (git ran the planted
/// credential helper).
#[test]
fn files_host_programs_run_are_refused_as_skarn_run_keeps_them() {
    let t = TempDir::new("atk24i_f9");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    let marker = t.path().join("ran");
    git(&ws, &["init", "-q"]);
    let env_sh = t.file("ws/env.sh", ": ok\n");
    let startup = t.file("ws/startup.py", "pass\n");
    t.file("ws/.yarnrc.yml", "yarnPath: scripts/yarn.cjs\n");
    let yarn = t.file("ws/scripts/yarn.cjs", "console.log(1)\n");
    let cred = t.file("ws/cred.sh", "#!/bin/sh\n:\n");
    let pager = t.file("ws/pager.sh", "#!/bin/sh\ncat\n");
    t.file(
        "home/.gitconfig",
        format!(
            "[core]\n\tpager = {}\n[credential]\n\thelper = !{}\n",
            pager.display(),
            cred.display()
        ),
    );
    let env = [
        ("BASH_ENV", env_sh.to_str().unwrap()),
        ("PYTHONSTARTUP", startup.to_str().unwrap()),
    ];
    let plant = format!("#!/bin/sh\ntouch {}\n", marker.display());
    for f in [&env_sh, &startup, &yarn, &cred, &pager] {
        let w = claude_write(f, &ws, &home, &env, &plant);
        assert!(
            w.as_deref().is_some_and(|w| w.contains("host programs")),
            "{f:?}: {w:?}"
        );
    }
    // The host programs the files are for: none runs the plant.
    let _ = Command::new("bash")
        .args(["-c", "true"])
        .env("BASH_ENV", &env_sh)
        .env("HOME", &home)
        .output();
    assert!(!marker.exists(), "host bash ran the planted BASH_ENV file");
    if host_has("git", "--version") {
        let mut c = Command::new("git")
            .args(["credential", "fill"])
            .current_dir(&ws)
            .env("HOME", &home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let _ = c
            .stdin
            .take()
            .unwrap()
            .write_all(b"protocol=https\nhost=example.invalid\n\n");
        let _ = c.wait();
        assert!(
            !marker.exists(),
            "host git ran the planted credential helper"
        );
    }
    assert_eq!(std::fs::read_to_string(&yarn).unwrap(), "console.log(1)\n");
    // Without the variables, the same names are plain project files.
    assert_eq!(claude_write(&startup, &ws, &home, &[], "pass\n"), None);
}

/// F13: Sapling's `.sl/config` (its `[hooks]` run by any host `sl`
/// command) was protected by neither layer, unlike `.hg/hgrc`.
#[test]
fn sapling_config_is_protected_by_run_and_by_the_hook() {
    let t = TempDir::new("atk24i_f13");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    git(&ws, &["init", "-q"]);
    t.file("ws/.sl/config", "[paths]\n");
    t.dir("ws/sub/.sl");
    let o = run_in(
        &ws,
        &home,
        &[],
        &[
            "sh",
            "-c",
            "printf '[hooks]\\nprecommit = touch PWN\\n' >> .sl/config; \
             echo ../x > .sl/sharedpath; echo '[hooks]' > sub/.sl/config; true",
        ],
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(ws.join(".sl/config")).unwrap(),
        "[paths]\n",
        "{}",
        err(&o)
    );
    assert!(!ws.join(".sl/sharedpath").exists(), "{}", err(&o));
    assert!(
        !std::fs::read_to_string(ws.join("sub/.sl/config"))
            .unwrap_or_default()
            .contains("hooks"),
        "{}",
        err(&o)
    );
    for rel in [".sl/config", "sub/.sl/config", "new/.sl/hgrc"] {
        let f = ws.join(rel);
        let before = std::fs::read_to_string(&f).ok();
        let w = claude_write(&f, &ws, &home, &[], "[hooks]\nprecommit = touch PWN\n");
        assert!(
            w.as_deref().is_some_and(|w| w.contains(".sl directory")),
            "{rel}: {w:?}"
        );
        assert_eq!(std::fs::read_to_string(&f).ok(), before, "{rel}");
    }
}

/// F7: names a case-insensitive volume opens as a protected file
/// (`ſkarn.toml` is `skarn.toml` on NTFS, APFS and casefold volumes) were
/// compared lower-cased only and passed.
#[test]
fn names_are_case_folded_not_lower_cased() {
    let t = TempDir::new("atk24i_f7");
    let (ws, home) = (t.dir("ws"), t.dir("home"));
    git(&ws, &["init", "-q"]);
    for rel in [
        "\u{17f}karn.toml",
        ".v\u{17f}code/settings.json",
        ".hu\u{17f}ky/pre-commit",
        ".tool-ver\u{17f}ions",
        ".pre-commit-con\u{fb01}g.yaml",
        "ru\u{fb06}-toolchain.toml",
        ".mcp.j\u{17f}on",
    ] {
        let f = ws.join(rel);
        let w = claude_write(&f, &ws, &home, &[], "x\n");
        assert!(w.is_some(), "{rel}: allowed");
        assert!(!f.exists(), "{rel} written");
    }
    assert_eq!(
        claude_write(&ws.join("\u{17f}rc.rs"), &ws, &home, &[], "x\n"),
        None
    );
}
