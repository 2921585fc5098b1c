//! Attack atk24i F10: `skarn init --client gemini-cli` installed the hook
//! but never turned Gemini CLI's hooks system on (off by default before
//! Gemini CLI 0.27), and a settings file's disabled list could name the
//! hook: every shell command then ran unconfined while `init` reported the
//! hook installed. Judged on the settings files Gemini CLI reads (its own
//! keys, read from its source: `hooksConfig.enabled`,
//! `hooksConfig.disabled`) and on init's exit code.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::common::*;
use skarn_test_support::TempDir;

/// `skarn ARGS` in `dir` with `home`, Gemini's system files under `home`.
fn skarn(args: &[&str], dir: &Path, home: &Path) -> Output {
    Command::new(exe())
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env_remove("GEMINI_CLI_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .env(
            "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
            home.join("etc/settings.json"),
        )
        .env(
            "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
            home.join("etc/system-defaults.json"),
        )
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn settings(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn project(t: &TempDir) -> (std::path::PathBuf, std::path::PathBuf) {
    let (p, home) = (t.dir("p"), t.dir("home"));
    std::fs::create_dir_all(p.join(".git")).unwrap();
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    std::fs::create_dir_all(home.join("etc")).unwrap();
    (p, home)
}

#[test]
fn init_turns_geminis_hooks_system_on_and_names_the_hook() {
    let t = TempDir::new("gemini_hooks_on");
    let (p, home) = project(&t);
    let o = skarn(&["init", "--client", "gemini-cli"], &p, &home);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let v = settings(&p.join(".gemini/settings.json"));
    assert_eq!(v["hooksConfig"]["enabled"], true, "{v}");
    let h = &v["hooks"]["BeforeTool"][0]["hooks"][0];
    assert_eq!(h["name"], "skarn", "{v}");
    assert!(h["command"].as_str().unwrap().contains("hook"), "{v}");
    // Again: nothing new to list or accept, the same file.
    let o = skarn(&["init", "--client", "gemini-cli"], &p, &home);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert!(err(&o).contains("already set up"), "{}", err(&o));
    // doctor says where the hook is and that the system is on.
    let o = skarn(&["doctor"], &p, &home);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("gemini hook: hooks system: on (hooksConfig.enabled in"),
        "{out}"
    );
    assert!(!out.contains("gemini hook: warning"), "{out}");
}

#[test]
fn init_refuses_while_another_gemini_file_keeps_the_hook_off() {
    let t = TempDir::new("gemini_hooks_off");
    let (p, home) = project(&t);
    let cases = [
        // The user's disabled list names the hook (by its name).
        (
            home.join(".gemini/settings.json"),
            r#"{"hooksConfig": {"disabled": ["other", "skarn"]}}"#,
        ),
        // The system file overrides the project's switch.
        (
            home.join("etc/settings.json"),
            "{ // admin\n \"hooksConfig\": {\"enabled\": false}}",
        ),
    ];
    for (file, text) in &cases {
        std::fs::write(file, text).unwrap();
        let o = skarn(&["init", "--client", "gemini-cli"], &p, &home);
        assert_eq!(code(&o), 2, "{}: {}", file.display(), err(&o));
        assert!(
            err(&o).contains("would not run the skarn hook")
                && err(&o).contains(&file.display().to_string()),
            "{}",
            err(&o)
        );
        assert!(
            !p.join(".gemini/settings.json").exists(),
            "written though refused"
        );
        std::fs::remove_file(file).unwrap();
    }
    let o = skarn(&["init", "--client", "gemini-cli"], &p, &home);
    assert_eq!(code(&o), 0, "{}", err(&o));
    // Disabled afterwards (`/hooks disable skarn` writes this): doctor says so.
    std::fs::write(
        home.join(".gemini/settings.json"),
        r#"{"hooksConfig": {"disabled": ["skarn"]}}"#,
    )
    .unwrap();
    let out = String::from_utf8_lossy(&skarn(&["doctor"], &p, &home).stdout).into_owned();
    assert!(
        out.contains("gemini hook: warning:") && out.contains("names skarn's hook"),
        "{out}"
    );
}

/// A cloned repository's `.gemini/settings.json` that switches hooks off
/// or disables skarn's hook is listed like Claude Code's
/// `disableAllHooks` (init stops unless the user accepts the project's
/// settings); once accepted, the file init writes has the hook on.
#[test]
fn a_projects_switches_are_listed_and_turned_back_on() {
    let t = TempDir::new("gemini_hooks_proj");
    let (p, home) = project(&t);
    std::fs::create_dir_all(p.join(".gemini")).unwrap();
    std::fs::write(
        p.join(".gemini/settings.json"),
        r#"{"hooksConfig": {"enabled": false, "disabled": ["skarn", "fmt"]},
            "tools": {"enableHooks": false}}"#,
    )
    .unwrap();
    let o = skarn(&["init", "--client", "gemini-cli"], &p, &home);
    assert_eq!(code(&o), 2, "{}", err(&o));
    let e = err(&o);
    assert!(
        e.contains("hooksConfig.enabled is false")
            && e.contains("hooksConfig.disabled names skarn's hook")
            && e.contains("tools.enableHooks is false"),
        "{e}"
    );
    let o = skarn(
        &[
            "init",
            "--client",
            "gemini-cli",
            "--accept-project-settings",
        ],
        &p,
        &home,
    );
    assert_eq!(code(&o), 0, "{}", err(&o));
    let v = settings(&p.join(".gemini/settings.json"));
    assert_eq!(v["hooksConfig"]["enabled"], true, "{v}");
    assert_eq!(
        v["hooksConfig"]["disabled"],
        serde_json::json!(["fmt"]),
        "{v}"
    );
    // What Gemini CLI before 0.28 reads is switched on too.
    assert_eq!(v["tools"]["enableHooks"], true, "{v}");
}

/// atk24j F5: a project's Gemini CLI settings that run commands of their
/// own (`tools.discoveryCommand`, `tools.callCommand`) are listed, and
/// init stops until the user accepts them.
#[test]
fn a_projects_tool_discovery_commands_are_listed() {
    let t = TempDir::new("gemini_discovery");
    let (p, home) = project(&t);
    std::fs::create_dir_all(p.join(".gemini")).unwrap();
    std::fs::write(
        p.join(".gemini/settings.json"),
        r#"{"tools": {"discoveryCommand": "tools/discover.sh"}}"#,
    )
    .unwrap();
    let o = skarn(&["init", "--client", "gemini-cli"], &p, &home);
    assert_eq!(code(&o), 2, "{}", err(&o));
    assert!(
        err(&o).contains("tools.discoveryCommand runs tools/discover.sh"),
        "{}",
        err(&o)
    );
}
