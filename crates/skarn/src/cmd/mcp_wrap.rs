//! MCP servers a client lists that skarn does not run (ADR 0273). A
//! client starts each local (stdio) server it lists on the host, with the
//! user's rights, in the project: a cloned repository's `.mcp.json` or
//! `.codex/config.toml` entry, or a server that loads project files
//! (`npx` reading the project's `.npmrc`, a Python server importing from
//! the working directory), runs the agent's code unconfined. `skarn init`
//! wraps each one in `skarn run` (`SKARN run --timeout 0 [--allow-env
//! NAME]... -- COMMAND ARGS...`: the directory the client starts it in is
//! its workspace, no network unless the user adds `--net`), and `skarn
//! doctor` names the ones left. skarn's own entry (`skarn serve`) and a
//! server already under `skarn run` by this skarn count as wrapped; a
//! server whose command line (its argv, shell-quoted) is listed word for
//! word in `[hook] trusted_hooks` stays unconfined by the user's word.
//! Remote servers (`url`) run nothing locally.

use std::path::Path;

use serde_json::{Map, Value};

use crate::cmd::hook::confine_hooks;

pub use crate::cmd::hook::mcp_shape::{confined, line};

/// The arguments of `command args` wrapped in `skarn run`, passing the
/// environment names the client sets for it.
pub fn wrapped_args(command: &str, args: &[String], env: &[String]) -> Vec<String> {
    let mut out: Vec<String> = vec!["run".into(), "--timeout".into(), "0".into()];
    for n in env {
        out.push("--allow-env".into());
        out.push(n.clone());
    }
    out.push("--".into());
    out.push(command.into());
    out.extend(args.iter().cloned());
    out
}

/// A remote server's `headersHelper` (a shell command line) run inside
/// `skarn run` by this skarn: its stdout (the headers) passes through.
fn wrap_helper(helper: &str, exe: &str) -> String {
    let words = [exe, "run", "--timeout", "0", "--", "/bin/sh", "-c", helper];
    words
        .iter()
        .map(|w| crate::cmd::hook::quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `helper` is [`wrap_helper`]'s form by this skarn, or trusted.
fn helper_confined(helper: &str, exe: &str, trusted: &[String]) -> bool {
    if trusted.iter().any(|t| t == helper) {
        return true;
    }
    let Some(w) = crate::cmd::hook::unquote_words(helper) else {
        return false;
    };
    w.len() == 8
        && confine_hooks::is_this_skarn(&w[0], exe)
        && w[1..7] == ["run", "--timeout", "0", "--", "/bin/sh", "-c"]
}

/// `command args` run through `env NAME=VALUE...` when `moved` is not
/// empty.
fn with_env(
    command: String,
    args: Vec<String>,
    moved: &[(String, String)],
) -> (String, Vec<String>) {
    let mut p = crate::cmd::mcp_env::prefix(moved);
    if p.is_empty() {
        return (command, args);
    }
    let first = p.remove(0);
    p.push(command);
    p.extend(args);
    (first, p)
}

/// Why an entry's `cwd` may not pick its workspace: outside the project
/// (the directory `init` or `doctor` runs in; ADR 0306).
fn far_cwd(cwd: &str) -> Option<String> {
    let Ok(project) = std::env::current_dir() else {
        return Some("the project's directory is unknown".into());
    };
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    crate::cmd::mcp_cwd::outside(cwd, &project, home.as_deref())
}

fn strings(v: Option<&Value>) -> Option<Vec<String>> {
    match v {
        None => Some(Vec::new()),
        Some(Value::Array(a)) => a.iter().map(|x| x.as_str().map(str::to_owned)).collect(),
        Some(_) => None,
    }
}

/// Every `mcpServers` object of a client's JSON file: at the top and, in
/// Claude Code's `~/.claude.json`, under each `projects.<dir>`.
fn server_maps(v: &mut Value) -> Vec<&mut Map<String, Value>> {
    let mut out = Vec::new();
    let Value::Object(root) = v else {
        return out;
    };
    for (k, x) in root.iter_mut() {
        match (k.as_str(), x) {
            // VS Code's `mcp.json` names them `servers`.
            ("mcpServers" | "servers", Value::Object(m)) => out.push(m),
            ("projects", Value::Object(ps)) => {
                for p in ps.values_mut() {
                    if let Some(Value::Object(m)) = p.get_mut("mcpServers") {
                        out.push(m);
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Wrap every unconfined local server of a client's JSON text; the new
/// text and one line per server (`None`: not JSON, nothing changed).
pub fn wrap_json(text: &str, exe: &str, trusted: &[String]) -> Option<(String, Vec<String>)> {
    let mut v: Value = serde_json::from_str(text).ok()?;
    let mut said = Vec::new();
    for m in server_maps(&mut v) {
        for (name, s) in m.iter_mut() {
            let Some(obj) = s.as_object_mut() else {
                continue;
            };
            // Keys the client applies to the host process (`envFile`):
            // dropped, wrapped or not (atk24r F2).
            said.extend(crate::cmd::mcp_keys::drop_unknown(name, obj));
            let Some(cmd) = obj
                .get("command")
                .and_then(Value::as_str)
                .map(str::to_owned)
            else {
                // Remote (url): its `headersHelper` is a shell command the
                // client runs on the host before connecting (atk24n F9).
                if let Some(h) = obj.get("headersHelper").and_then(Value::as_str)
                    && !helper_confined(h, exe, trusted)
                {
                    said.push(format!("{name} headersHelper ({h})"));
                    let new = wrap_helper(h, exe);
                    obj.insert("headersHelper".into(), new.into());
                }
                continue;
            };
            let Some(args) = strings(obj.get("args")) else {
                continue;
            };
            let env: Vec<String> = obj
                .get("env")
                .and_then(Value::as_object)
                .map(|e| e.keys().cloned().collect())
                .unwrap_or_default();
            // A `cwd` outside the project is not the server's workspace
            // (atk24o F12): dropped, the client starts it in the project.
            let cwd = obj.get("cwd").map(|c| c.as_str().unwrap_or("?").to_owned());
            let far = cwd.as_deref().and_then(far_cwd);
            if let Some(why) = &far {
                obj.remove("cwd");
                said.push(format!("{name} cwd dropped ({why})"));
            }
            if confined(&cmd, &args, &env, exe, trusted) {
                continue;
            }
            said.push(match cwd.filter(|_| far.is_none()) {
                Some(c) => format!("{name} ({}) in cwd {c}", line(&cmd, &args)),
                None => format!("{name} ({})", line(&cmd, &args)),
            });
            // Host-relevant names move inside the sandbox (atk24n F6).
            let mut moved = Vec::new();
            if let Some(Value::Object(e)) = obj.get_mut("env") {
                for k in env.iter().filter(|k| crate::cmd::mcp_env::host_relevant(k)) {
                    if let Some(v) = e.remove(k) {
                        let v = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                        moved.push((k.clone(), v));
                    }
                }
            }
            let kept: Vec<String> = env
                .into_iter()
                .filter(|k| !crate::cmd::mcp_env::host_relevant(k))
                .collect();
            let (cmd, args) = with_env(cmd, args, &moved);
            obj.insert("command".into(), exe.into());
            obj.insert("args".into(), wrapped_args(&cmd, &args, &kept).into());
        }
    }
    if said.is_empty() {
        return Some((text.to_string(), said));
    }
    Some((serde_json::to_string_pretty(&v).ok()? + "\n", said))
}

/// Wrap every unconfined local server of a Codex `config.toml`
/// (`[mcp_servers.<name>]`, layout kept).
pub fn wrap_toml(
    text: &str,
    exe: &str,
    trusted: &[String],
) -> anyhow::Result<(String, Vec<String>)> {
    let mut doc: toml_edit::DocumentMut = text.parse()?;
    let mut said = Vec::new();
    if let Some(servers) = doc
        .get_mut("mcp_servers")
        .and_then(|i| i.as_table_like_mut())
    {
        for (name, item) in servers.iter_mut() {
            let Some(t) = item.as_table_like_mut() else {
                continue;
            };
            let Some(cmd) = t.get("command").and_then(|c| c.as_str()).map(str::to_owned) else {
                continue;
            };
            let args: Option<Vec<String>> = match t.get("args") {
                None => Some(Vec::new()),
                Some(a) => a
                    .as_array()
                    .and_then(|a| a.iter().map(|x| x.as_str().map(str::to_owned)).collect()),
            };
            let Some(args) = args else { continue };
            let env: Vec<String> = t
                .get("env")
                .and_then(|e| e.as_table_like())
                .map(|e| e.iter().map(|(k, _)| k.to_string()).collect())
                .unwrap_or_default();
            let cwd = t.get("cwd").map(|c| c.as_str().unwrap_or("?").to_owned());
            let far = cwd.as_deref().and_then(far_cwd);
            if let Some(why) = &far {
                t.remove("cwd");
                said.push(format!("{} cwd dropped ({why})", name.get()));
            }
            if confined(&cmd, &args, &env, exe, trusted) {
                continue;
            }
            said.push(match cwd.filter(|_| far.is_none()) {
                Some(c) => format!("{} ({}) in cwd {c}", name.get(), line(&cmd, &args)),
                None => format!("{} ({})", name.get(), line(&cmd, &args)),
            });
            // Host-relevant names move inside the sandbox (atk24n F6).
            let mut moved = Vec::new();
            if let Some(e) = t.get_mut("env").and_then(|e| e.as_table_like_mut()) {
                for k in env.iter().filter(|k| crate::cmd::mcp_env::host_relevant(k)) {
                    if let Some(v) = e.remove(k) {
                        let v = v
                            .as_str()
                            .map_or_else(|| v.to_string().trim().to_string(), str::to_owned);
                        moved.push((k.clone(), v));
                    }
                }
            }
            let kept: Vec<String> = env
                .into_iter()
                .filter(|k| !crate::cmd::mcp_env::host_relevant(k))
                .collect();
            let (cmd, args) = with_env(cmd, args, &moved);
            t.insert("command", toml_edit::value(exe));
            let mut a = toml_edit::Array::new();
            for x in wrapped_args(&cmd, &args, &kept) {
                a.push(x);
            }
            t.insert("args", toml_edit::value(a));
        }
    }
    Ok((doc.to_string(), said))
}

/// The unconfined local servers `path` lists, one line each.
pub fn unwrapped(path: &Path, text: &str, exe: &str, trusted: &[String]) -> Vec<String> {
    let said = if path.extension().is_some_and(|e| e == "toml") {
        wrap_toml(text, exe, trusted)
            .map(|(_, s)| s)
            .unwrap_or_default()
    } else {
        wrap_json(text, exe, trusted)
            .map(|(_, s)| s)
            .unwrap_or_default()
    };
    said.into_iter()
        .map(|s| {
            skarn_sandbox::protect::terminal_filter::one_line(&format!("{}: {s}", path.display()))
        })
        .collect()
}

/// Tell the user what now runs inside `skarn run`.
pub fn say(path: &Path, said: &[String]) {
    for s in said {
        eprintln!(
            "skarn: {}: the MCP server {} now runs inside skarn run (the directory the client \
             starts it in is its workspace, no network; ADR 0273): add `--net outbound` (or \
             `--net HOST`) before `--` in its args if it needs the network; to keep it \
             unconfined, list its command line word for word in [hook] trusted_hooks",
            skarn_sandbox::protect::terminal_filter::one_line(&path.display().to_string()),
            skarn_sandbox::protect::terminal_filter::one_line(s)
        );
    }
}

#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
/// The MCP files of the clients for the project `cwd` (see `doctor`):
/// Claude Code's `.mcp.json` and `~/.claude.json`, Cursor's and Gemini
/// CLI's project and user files, Windsurf's, VS Code's project
/// `mcp.json`, Codex's user and project `config.toml`.
pub fn files(cwd: &Path, home: &Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![
        cwd.join(".mcp.json"),
        home.join(".claude.json"),
        cwd.join(".cursor/mcp.json"),
        home.join(".cursor/mcp.json"),
        cwd.join(".gemini/settings.json"),
        home.join(".gemini/settings.json"),
        home.join(".codeium/windsurf/mcp_config.json"),
        cwd.join(".vscode/mcp.json"),
    ];
    if let Some(c) = crate::cmd::hook::client_hooks::codex_home(Some(home)) {
        out.push(c.join("config.toml"));
    }
    out.push(cwd.join(".codex/config.toml"));
    out
}

#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
/// `doctor`'s lines: every unconfined local server of those files.
pub fn doctor_lines(cwd: &Path, home: &Path) -> Vec<String> {
    let exe = std::env::current_exe()
        .map(|e| e.display().to_string())
        .unwrap_or_default();
    let trusted = crate::cmd::hook::trusted_hooks();
    let mut out = Vec::new();
    for f in files(cwd, home) {
        if let Ok(Some(t)) = skarn_sandbox::policy::config::read_text(&f) {
            out.extend(unwrapped(&f, &t, &exe, &trusted));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_servers_are_wrapped_and_skarns_own_left() {
        let json = r#"{"mcpServers": {
            "docs": {"command": "npx", "args": ["-y", "docs-server"], "env": {"TOKEN": "x"}},
            "remote": {"type": "http", "url": "https://example.invalid/mcp"},
            "skarn": {"command": "/s/skarn", "args": ["serve", "--config", "/p/skarn.toml"]}}}"#;
        let (new, said) = wrap_json(json, "/s/skarn", &[]).unwrap();
        assert_eq!(said.len(), 1, "{said:?}");
        let v: Value = serde_json::from_str(&new).unwrap();
        assert_eq!(v["mcpServers"]["docs"]["command"], "/s/skarn");
        assert_eq!(
            v["mcpServers"]["docs"]["args"],
            serde_json::json!([
                "run",
                "--timeout",
                "0",
                "--allow-env",
                "TOKEN",
                "--",
                "npx",
                "-y",
                "docs-server"
            ])
        );
        assert!(wrap_json(&new, "/s/skarn", &[]).unwrap().1.is_empty());
        let trusted = vec![line("npx", &["-y".into(), "docs-server".into()])];
        assert!(wrap_json(json, "/s/skarn", &trusted).unwrap().1.is_empty());
        let toml = "[mcp_servers.docs]\ncommand = \"npx\"\nargs = [\"-y\", \"d\"]\n\
                    [mcp_servers.docs.env]\nTOKEN = \"x\"\n";
        let (new, said) = wrap_toml(toml, "/s/skarn", &[]).unwrap();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(new.contains("\"--allow-env\", \"TOKEN\""), "{new}");
        assert!(
            wrap_toml(&new, "/s/skarn", &[]).unwrap().1.is_empty(),
            "{new}"
        );
    }
}
