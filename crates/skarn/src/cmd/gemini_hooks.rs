//! Whether Gemini CLI runs skarn's hook at all (attack atk24i F10). Gemini
//! CLI runs no hook unless its hooks system is on, and skips a hook named
//! in its disabled list. Read from Gemini CLI's own source (settings
//! schema, `config.ts`, `hookRegistry.ts`):
//!
//! - `hooksConfig.enabled` (0.26 on; default `false` in 0.26, `true` from
//!   0.27) switches the system; 0.21-0.27 also read `tools.enableHooks`,
//!   0.24-0.25 `hooks.enabled` (both gone from 0.28).
//! - `hooksConfig.disabled` (0.26 on; `hooks.disabled` before) lists hooks
//!   by their `name`, else their `command`; the lists of every settings
//!   file add up.
//! - The files, lowest first: system defaults
//!   (`$GEMINI_CLI_SYSTEM_DEFAULTS_PATH`, else `system-defaults.json` beside
//!   the system file), the user's (`$GEMINI_CLI_HOME`, else the home, then
//!   `.gemini/settings.json`), the project's (`.gemini/settings.json`, in a
//!   trusted folder: `init_gemini_trust`), the system file
//!   (`$GEMINI_CLI_SYSTEM_SETTINGS_PATH`, else
//!   `/etc/gemini-cli/settings.json`), which overrides the rest. Comments
//!   are allowed (Gemini strips them).
//!
//! `init --client gemini-cli` writes `hooksConfig.enabled: true` with the
//! hook (named [`HOOK_NAME`]) and refuses when another file would still
//! keep the hook from running; `doctor` says the state.

use std::path::{Path, PathBuf};

use serde_json::Value;
use skarn_sandbox::protect::terminal_filter::one_line;

/// The `name` of the hook `init` writes: what Gemini's disabled list and
/// its `/hooks disable` name it by.
pub const HOOK_NAME: &str = "skarn";

/// One of Gemini CLI's settings files, lowest precedence first.
pub struct File {
    pub path: PathBuf,
    /// Its text (`None`: absent).
    pub text: Option<String>,
}

/// Gemini CLI's settings files for a project in `cwd`, lowest first
/// (system defaults, user, project, system).
pub fn files(cwd: &Path, home: &Path) -> Vec<File> {
    let var = |k: &str| {
        std::env::var_os(k)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let system = var("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
        .unwrap_or_else(|| PathBuf::from("/etc/gemini-cli/settings.json"));
    let defaults = var("GEMINI_CLI_SYSTEM_DEFAULTS_PATH").unwrap_or_else(|| {
        system
            .parent()
            .unwrap_or(Path::new("/"))
            .join("system-defaults.json")
    });
    let user = var("GEMINI_CLI_HOME")
        .unwrap_or_else(|| home.to_path_buf())
        .join(".gemini/settings.json");
    let mut paths = vec![defaults, user.clone()];
    let project = cwd.join(".gemini/settings.json");
    // Gemini reads no project file in the home directory itself.
    if project != user {
        paths.push(project);
    }
    paths.push(system);
    paths
        .into_iter()
        .map(|path| {
            let text = skarn_sandbox::policy::config::read_text(&path)
                .ok()
                .flatten();
            File { path, text }
        })
        .collect()
}

/// `text` without `//` and `/* */` comments outside strings (as Gemini
/// strips them), parsed; `None` when it is not JSON then.
fn parse(text: &str) -> Option<Value> {
    let (mut out, mut chars) = (String::with_capacity(text.len()), text.chars().peekable());
    let mut in_str = false;
    while let Some(c) = chars.next() {
        if in_str {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_str = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for c in chars.by_ref() {
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    serde_json::from_str(&out).ok()
}

/// Whether a disabled-list entry names skarn's hook (its name, or the
/// command an earlier `init` wrote without a name).
fn names_skarn(entry: &Value) -> bool {
    entry
        .as_str()
        .is_some_and(|e| e == HOOK_NAME || crate::cmd::hook::is_installed_hook(e, "gemini-cli"))
}

/// What keeps Gemini CLI from running skarn's hook, given its settings
/// `files` (lowest first): `(current, legacy)`, one line each naming the
/// file and key. `current`: what today's Gemini CLI reads; `legacy`: what
/// only releases before 0.28 read.
pub fn blockers(files: &[File]) -> (Vec<String>, Vec<String>) {
    let (mut current, mut legacy) = (Vec::new(), Vec::new());
    let mut enabled: Option<(bool, &Path)> = None;
    let mut tools_enable: Option<(bool, &Path)> = None;
    for f in files {
        let Some(text) = &f.text else { continue };
        let shown = one_line(&f.path.display().to_string());
        let Some(v) = parse(text) else {
            current.push(format!(
                "{shown} is not JSON skarn can read: whether it turns hooks off is unknown"
            ));
            continue;
        };
        if let Some(b) = v.pointer("/hooksConfig/enabled").and_then(Value::as_bool) {
            enabled = Some((b, &f.path));
        }
        if let Some(b) = v.pointer("/tools/enableHooks").and_then(Value::as_bool) {
            tools_enable = Some((b, &f.path));
        }
        for (ptr, list) in [
            ("/hooksConfig/disabled", &mut current),
            ("/hooks/disabled", &mut legacy),
        ] {
            if let Some(Value::Array(a)) = v.pointer(ptr)
                && a.iter().any(names_skarn)
            {
                let key = ptr.trim_start_matches('/').replace('/', ".");
                list.push(format!(
                    "{shown}: {key} names skarn's hook, so Gemini CLI does not run it"
                ));
            }
        }
        if v.pointer("/hooks/enabled").and_then(Value::as_bool) == Some(false) {
            legacy.push(format!(
                "{shown}: hooks.enabled is false (Gemini CLI 0.24-0.25 then run no hook)"
            ));
        }
    }
    if let Some((false, p)) = enabled {
        current.push(format!(
            "{}: hooksConfig.enabled is false, so Gemini CLI runs no hook at all",
            one_line(&p.display().to_string())
        ));
    }
    if let Some((false, p)) = tools_enable {
        legacy.push(format!(
            "{}: tools.enableHooks is false (Gemini CLI before 0.28 then runs no hook)",
            one_line(&p.display().to_string())
        ));
    }
    (current, legacy)
}

/// The keys of one settings file `v` that keep Gemini CLI from running
/// skarn's hook, one line each (listed by `init` like Claude Code's
/// `disableAllHooks`; `init` then turns them back on in the file it
/// writes).
pub fn switches_off(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for (ptr, key) in [
        ("/hooksConfig/enabled", "hooksConfig.enabled"),
        ("/tools/enableHooks", "tools.enableHooks"),
        ("/hooks/enabled", "hooks.enabled"),
    ] {
        if v.pointer(ptr).and_then(Value::as_bool) == Some(false) {
            out.push(format!("{key} is false (Gemini CLI runs no hook)"));
        }
    }
    for (ptr, key) in [
        ("/hooksConfig/disabled", "hooksConfig.disabled"),
        ("/hooks/disabled", "hooks.disabled"),
    ] {
        if let Some(Value::Array(a)) = v.pointer(ptr)
            && a.iter().any(names_skarn)
        {
            out.push(format!("{key} names skarn's hook (Gemini CLI skips it)"));
        }
    }
    out
}

/// Refuse what would still keep Gemini CLI from running the hook once
/// `init` has written `written` (real path, new text) in the project `cwd`
/// (or the user's files): Ok with the lines that matter only to releases
/// before 0.28 (said as warnings).
pub fn check_after_init(
    cwd: &Path,
    home: &Path,
    written: &[(PathBuf, String)],
) -> anyhow::Result<Vec<String>> {
    let mut fs = files(cwd, home);
    for f in &mut fs {
        let real = std::fs::canonicalize(&f.path).unwrap_or_else(|_| f.path.clone());
        if let Some((_, text)) = written.iter().find(|(p, _)| *p == real || *p == f.path) {
            f.text = Some(text.clone());
        }
    }
    let (current, legacy) = blockers(&fs);
    if !current.is_empty() {
        anyhow::bail!(
            "Gemini CLI would not run the skarn hook, and its shell commands would run \
             unconfined: {}. Remove that setting (check who put it there; a system file is \
             your administrator's) and run `skarn init --client gemini-cli` again",
            current.join("; ")
        );
    }
    Ok(legacy)
}

/// What `skarn doctor` says about Gemini CLI for the project `cwd`: where
/// skarn's hook is installed, whether the hooks system is on and which
/// file says so, and each setting that keeps the hook from running
/// (`warning: ` lines). Nothing when no settings file holds the hook.
#[cfg(target_os = "linux")]
pub fn doctor_lines(cwd: &Path, home: &Path) -> Vec<String> {
    let fs = files(cwd, home);
    let installed: Vec<String> = fs
        .iter()
        .filter(|f| {
            f.text.as_deref().and_then(parse).is_some_and(|v| {
                v.pointer("/hooks/BeforeTool")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|g| g.get("hooks").and_then(Value::as_array))
                    .flatten()
                    .filter_map(|h| h.get("command").and_then(Value::as_str))
                    .any(|c| crate::cmd::hook::is_installed_hook(c, "gemini-cli"))
            })
        })
        .map(|f| one_line(&f.path.display().to_string()))
        .collect();
    if installed.is_empty() {
        return Vec::new();
    }
    let mut out = vec![format!("skarn's hook is in {}", installed.join(", "))];
    let switch = fs.iter().rev().find_map(|f| {
        let v = parse(f.text.as_deref()?)?;
        let b = v.pointer("/hooksConfig/enabled")?.as_bool()?;
        Some((b, one_line(&f.path.display().to_string())))
    });
    let (current, legacy) = blockers(&fs);
    match switch {
        Some((true, p)) => out.push(format!("hooks system: on (hooksConfig.enabled in {p})")),
        Some((false, _)) => {}
        None => out.push(
            "hooks system: on by Gemini CLI's default (0.27 on; 0.26 needs hooksConfig.enabled: \
             true, which `skarn init --client gemini-cli` writes)"
                .into(),
        ),
    }
    out.extend(current.into_iter().map(|l| format!("warning: {l}")));
    out.extend(
        legacy
            .into_iter()
            .map(|l| format!("warning (older Gemini CLI only): {l}")),
    );
    out
}

/// `path`'s Gemini settings `root` with the hooks system on and skarn's
/// hook out of its disabled lists (what `init` writes with the hook).
pub fn turn_on(root: &mut serde_json::Map<String, Value>) {
    let cfg = root
        .entry("hooksConfig")
        .or_insert_with(|| Value::Object(Default::default()));
    if !cfg.is_object() {
        *cfg = Value::Object(Default::default());
    }
    if let Some(cfg) = cfg.as_object_mut() {
        cfg.insert("enabled".into(), Value::Bool(true));
        if let Some(Value::Array(a)) = cfg.get_mut("disabled") {
            a.retain(|e| !names_skarn(e));
        }
    }
    if let Some(Value::Array(a)) = root.get_mut("hooks").and_then(|h| h.get_mut("disabled")) {
        a.retain(|e| !names_skarn(e));
    }
    // The older switches, where the file has them off (never added: today's
    // Gemini CLI warns about keys it does not know).
    for (table, key) in [("tools", "enableHooks"), ("hooks", "enabled")] {
        if let Some(b) = root.get_mut(table).and_then(|t| t.get_mut(key))
            && *b == Value::Bool(false)
        {
            *b = Value::Bool(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(path: &str, text: &str) -> File {
        File {
            path: PathBuf::from(path),
            text: Some(text.into()),
        }
    }

    #[test]
    fn the_last_switch_wins_and_disabled_lists_add_up() {
        let user = f(
            "/h/.gemini/settings.json",
            r#"{"hooksConfig": {"enabled": false}}"#,
        );
        let proj = f(
            "/p/.gemini/settings.json",
            "{ // mine\n \"hooksConfig\": {\"enabled\": true /* on */}}",
        );
        assert!(blockers(&[user, proj]).0.is_empty());
        let user = f(
            "/h/.gemini/settings.json",
            r#"{"hooksConfig": {"enabled": true}}"#,
        );
        let sys = f(
            "/etc/gemini-cli/settings.json",
            r#"{"hooksConfig": {"enabled": false}}"#,
        );
        let (c, _) = blockers(&[user, sys]);
        assert_eq!(c.len(), 1, "{c:?}");
        assert!(c[0].starts_with("/etc/gemini-cli/settings.json"), "{c:?}");
        let proj = f(
            "/p/.gemini/settings.json",
            r#"{"hooksConfig": {"disabled": ["x", "skarn"]}, "tools": {"enableHooks": false},
                "hooks": {"disabled": ["skarn"]}}"#,
        );
        let (c, l) = blockers(&[proj]);
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(l.len(), 2, "{l:?}");
        assert!(
            blockers(&[f("/x", "{\"a\": \"// not a comment\"}")])
                .0
                .is_empty()
        );
    }

    #[test]
    fn turning_on_keeps_the_rest() {
        let mut v: Value = serde_json::from_str(
            r#"{"hooksConfig": {"enabled": false, "disabled": ["other", "skarn"],
                "notifications": false}}"#,
        )
        .unwrap();
        turn_on(v.as_object_mut().unwrap());
        assert_eq!(
            v,
            serde_json::json!({"hooksConfig": {"enabled": true, "disabled": ["other"],
                               "notifications": false}})
        );
    }
}
