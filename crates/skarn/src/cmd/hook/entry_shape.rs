//! A hook entry is judged whole, not by its command alone (attack atk24u
//! F3, F5). The clients read fields beside `command` that change when or
//! how it runs: Claude Code's `async` (the call goes ahead without the
//! answer), `if` (the hook runs for matching calls only), `shell`
//! (PowerShell reads the line otherwise), VS Code's `env` (`LD_PRELOAD`
//! of a repository file runs in the host hook process; `HOME` moves the
//! user's configuration), `cwd`, `timeout` (a tiny one kills the hook:
//! a non-blocking error) and the `linux`/`osx`/`windows` commands run in
//! place of `command`. skarn's own entry counts as installed only in the
//! shape `init` writes; any other shape makes the hook refuse every call
//! (it cannot refuse the calls it is not asked about) and `skarn doctor`
//! report it; `init` writes it anew. A wrapped or trusted entry carrying
//! `env`, `cwd`, a `shell` other than bash or an OS command counts as
//! unconfined: what runs is no longer what was wrapped or trusted.

use serde_json::{Map, Value};

use super::confine_hooks::{Kind, full_command, judge};

/// The keys of skarn's own entry as `init` writes them, for any client.
const OWN_KEYS: &[&str] = &[
    "type",
    "command",
    "timeout",
    "onFailure",
    "name",
    "show_output",
];

/// Keys that change what a wrapped or trusted entry runs, or where.
const HOW_KEYS: &[&str] = &["env", "cwd", "shell", "linux", "osx", "windows"];

/// Fewest seconds a `timeout` on skarn's own entry may give it (`init`
/// writes 60, or 60000 milliseconds for Gemini CLI).
const MIN_TIMEOUT: f64 = 30.0;

/// The clients whose installed hook form marks skarn's own entry.
const AGENTS: &[&str] = &[
    "claude-code",
    "vscode",
    "gemini-cli",
    "codex",
    "cursor",
    "windsurf",
];

fn is_own(cmd: &str) -> bool {
    AGENTS
        .iter()
        .any(|a| super::installed::is_installed_hook(cmd, a))
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    skarn_sandbox::protect::terminal_filter::one_line(&s.chars().take(120).collect::<String>())
}

/// What is wrong with the shape of skarn's own entry `m` (`None`: the
/// shape `init` writes).
fn own_fault(m: &Map<String, Value>) -> Option<String> {
    let mut bad: Vec<String> = Vec::new();
    for (k, x) in m {
        let ok = match k.as_str() {
            "type" => x.as_str() == Some("command"),
            "timeout" => x.as_f64().is_some_and(|t| t >= MIN_TIMEOUT),
            "onFailure" => x.as_str() == Some("block"),
            "name" | "show_output" | "command" => true,
            _ => false,
        };
        if !ok || !OWN_KEYS.contains(&k.as_str()) {
            bad.push(format!(
                "{}: {}",
                skarn_sandbox::protect::terminal_filter::one_line(k),
                short(x)
            ));
        }
    }
    (!bad.is_empty()).then(|| {
        format!(
            "(skarn's own hook entry carries {}, which init does not write: the client may run \
             it otherwise, later or not at all, so the hook is off for some calls; run `skarn \
             init` for this client again to write it anew)",
            bad.join(", ")
        )
    })
}

/// What changes how a wrapped or trusted entry `m` runs.
fn how_fault(m: &Map<String, Value>, cmd: &str) -> Option<String> {
    let bad: Vec<String> = HOW_KEYS
        .iter()
        .filter_map(|k| m.get(*k).map(|x| (*k, x)))
        .filter(|(k, x)| !(*k == "shell" && x.as_str() == Some("bash")))
        .map(|(k, x)| format!("{k}: {}", short(x)))
        .collect();
    (!bad.is_empty()).then(|| {
        format!(
            "(the hook entry of {} carries {}: it runs otherwise than what was wrapped or \
             trusted, on the host; remove it)",
            skarn_sandbox::protect::terminal_filter::one_line(cmd),
            bad.join(", ")
        )
    })
}

/// The settings' `env` (Claude Code starts every hook with it) naming a
/// variable that makes the loader or the shell run a file before skarn
/// does: `LD_PRELOAD=./tools/x.so` runs repository code in the host hook
/// process on every call.
fn loader_env(v: &Value) -> Vec<String> {
    let Some(Value::Object(env)) = v.get("env") else {
        return Vec::new();
    };
    env.iter()
        .filter(|(k, _)| {
            k.starts_with("LD_")
                || k.starts_with("DYLD_")
                || k.as_str() == "BASH_ENV"
                || k.as_str() == "ENV"
                // Claude Code runs every hook line, skarn's own and its
                // prompt guard included, and every Bash command as this
                // program's argument (g24).
                || k.as_str() == "CLAUDE_CODE_SHELL_PREFIX"
        })
        .map(|(k, x)| {
            format!(
                "(env sets {}={}: the loader or shell of every hook, skarn's own included, runs \
                 the file it names on the host; remove it)",
                skarn_sandbox::protect::terminal_filter::one_line(k),
                short(x)
            )
        })
        .collect()
}

/// The faults of the entries at `sites` (JSON pointers into `v`) whose
/// command is skarn's own, wrapped or trusted (unconfined ones are
/// reported as such already).
pub fn faults(
    v: &Value,
    sites: &[String],
    agent: &str,
    exe: &str,
    trusted: &[String],
) -> Vec<String> {
    let mut out = loader_env(v);
    for at in sites {
        let Some(m) = v.pointer(at).and_then(Value::as_object) else {
            continue;
        };
        let Some(cmd) = full_command(m) else {
            continue;
        };
        if is_own(&cmd) {
            out.extend(own_fault(m));
            continue;
        }
        let kind = match judge(&cmd, agent, exe, trusted) {
            Kind::Unconfined => judge(&cmd, "claude-code", exe, trusted),
            k => k,
        };
        if kind != Kind::Unconfined {
            out.extend(how_fault(m, &cmd));
        }
    }
    out
}

/// `skarn doctor`'s lines for the project `cwd`: the faults of the
/// entries in Claude Code's project and user settings and in VS Code's
/// project hook files.
#[cfg(target_os = "linux")]
pub fn doctor(cwd: &std::path::Path) -> Vec<String> {
    let home = std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .filter(|h| h.is_absolute());
    let mut files = vec![
        (cwd.join(".claude/settings.json"), "claude-code"),
        (cwd.join(".claude/settings.local.json"), "claude-code"),
    ];
    if let Some(c) = super::confine_hooks::claude_dir(home.as_deref()) {
        files.push((c.join("settings.json"), "claude-code"));
    }
    if let Ok(rd) = std::fs::read_dir(cwd.join(".github/hooks")) {
        let mut found: Vec<_> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .take(256)
            .collect();
        found.sort();
        files.extend(found.into_iter().map(|p| (p, "vscode")));
    }
    let exe = std::env::current_exe()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_default();
    let trusted = super::trusted_hooks();
    let mut out = Vec::new();
    for (f, agent) in files {
        let Ok(Some(text)) = skarn_sandbox::policy::config::read_text(&f) else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let sites = super::confine_hooks::command_sites(&v);
        out.extend(
            faults(&v, &sites, agent, &exe, &trusted)
                .into_iter()
                .map(|l| {
                    skarn_sandbox::protect::terminal_filter::one_line(&format!(
                        "{}: {l}",
                        f.display()
                    ))
                }),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_entry_shape_and_wrapped_env() {
        let own = super::super::installed::installed_command("/sk", "claude-code");
        let wrapped = super::super::confine_hooks::wrap("/sk", "make fmt");
        let v = serde_json::json!({"hooks": [
            {"type": "command", "command": own, "timeout": 60, "onFailure": "block"},
            {"type": "command", "command": own, "timeout": 60, "async": true},
            {"type": "command", "command": own, "if": "Bash(git status)"},
            {"type": "command", "command": own, "timeout": 0.01},
            {"type": "command", "command": wrapped, "env": {"LD_PRELOAD": "./x.so"}},
            {"type": "command", "command": wrapped, "shell": "bash"},
        ], "env": {"CLAUDE_CODE_SHELL_PREFIX": "./x.sh"}});
        let sites: Vec<String> = (0..6).map(|i| format!("/hooks/{i}")).collect();
        let f = faults(&v, &sites, "claude-code", "/sk", &[]);
        assert_eq!(f.len(), 5, "{f:?}");
        assert!(f[0].contains("CLAUDE_CODE_SHELL_PREFIX"), "{f:?}");
        assert!(f[1].contains("async") && f[2].contains("if") && f[3].contains("timeout"));
        assert!(f[4].contains("LD_PRELOAD"), "{f:?}");
    }
}
