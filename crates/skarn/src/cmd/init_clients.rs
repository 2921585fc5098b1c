//! `skarn init --client NAME`: the files each AI client reads, and merging
//! skarn's entries into them without losing anything already there (JSON
//! key order kept; TOML comments and layout kept by toml_edit).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// The clients `skarn init --client` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    /// `.mcp.json` (project) or `~/.claude.json` (--user), plus the Bash hook
    /// in `.claude/settings.json` or `~/.claude/settings.json`.
    ClaudeCode,
    /// `.cursor/mcp.json` or `~/.cursor/mcp.json` (`mcpServers`).
    Cursor,
    /// `~/.codex/config.toml` (`[mcp_servers.skarn]`).
    Codex,
    /// `~/.codeium/windsurf/mcp_config.json` (`mcpServers`).
    Windsurf,
    /// `.vscode/mcp.json` or the user profile's `mcp.json` (`servers`).
    Vscode,
    /// `.gemini/settings.json` or `~/.gemini/settings.json` (`mcpServers`).
    GeminiCli,
}

/// One change to one file.
#[derive(Debug, Clone)]
pub enum Edit {
    /// `root[key].skarn = entry` in a JSON file; `input` is added to the
    /// top-level `inputs` array unless one with its `id` is there (VS Code).
    McpJson {
        key: &'static str,
        entry: Value,
        input: Option<Value>,
    },
    /// `[mcp_servers.skarn]` in a TOML file, replaced by these keys.
    McpToml {
        keys: Vec<(&'static str, TomlValue)>,
    },
    /// A command hook in a JSON file: under `hooks.<event>`, `entry` replaces
    /// every earlier skarn entry (one whose text holds `hook <agent>`).
    /// `version`: a top-level `"version"` the file needs (Cursor).
    JsonHook {
        event: &'static str,
        agent: &'static str,
        entry: Value,
        version: Option<u64>,
    },
    /// Gemini CLI's hooks system on (`hooksConfig.enabled`) and skarn's
    /// hook out of its disabled lists (`cmd::gemini_hooks`).
    GeminiHooksOn,
    /// Codex's `[[hooks.PreToolUse]]` with `matcher` and one command hook.
    TomlHook {
        matcher: &'static str,
        command: String,
    },
}

/// A TOML value skarn writes.
#[derive(Debug, Clone, PartialEq)]
pub enum TomlValue {
    Str(String),
    List(Vec<String>),
}

/// How the client reaches `skarn serve`.
#[derive(Debug, Clone)]
pub enum Transport {
    /// The client starts `<exe> serve --config <config>`.
    Stdio { config: PathBuf },
    /// The client connects to `url`, with the bearer token from `$token_env`.
    Http { url: String, token_env: String },
}

/// The MCP URL for `--http`: a URL as given, or `PORT` / `HOST:PORT`
/// (then `http://HOST:PORT/mcp`, host 127.0.0.1 by default).
pub fn http_url(s: &str) -> Result<String, String> {
    let s = s.trim();
    if s.starts_with("http://") || s.starts_with("https://") {
        return Ok(s.to_owned());
    }
    if let Ok(port) = s.parse::<u16>() {
        return Ok(format!("http://127.0.0.1:{port}/mcp"));
    }
    match s.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok() => {
            Ok(format!("http://{s}/mcp"))
        }
        _ => Err(format!(
            "{s:?}: expected a URL (http://127.0.0.1:8931/mcp), HOST:PORT or PORT"
        )),
    }
}

/// Whether the edit is the hook (for --no-hook / --hook-only).
impl Edit {
    pub fn is_hook(&self) -> bool {
        matches!(
            self,
            Edit::JsonHook { .. } | Edit::TomlHook { .. } | Edit::GeminiHooksOn
        )
    }
}

/// Where things go for `client`: (file, edit), in order.
pub fn plan(
    client: Client,
    user: bool,
    home: &Path,
    cwd: &Path,
    exe: &str,
    transport: &Transport,
) -> Vec<(PathBuf, Edit)> {
    let mcp = |key| Edit::McpJson {
        key,
        entry: json_entry(client, exe, transport),
        input: vscode_input(client, transport),
    };
    let at = |project: &str, user_path: &str| {
        if user {
            home.join(user_path)
        } else {
            cwd.join(project)
        }
    };
    let hook = |agent: &str| super::hook::installed_command(exe, agent);
    // Where the client reads its user files when its variable names a
    // directory (atk24j F9): Claude Code `$CLAUDE_CONFIG_DIR`, Codex
    // `$CODEX_HOME`.
    let claude_user = |file: &str, default: &str| match client_dir("CLAUDE_CONFIG_DIR") {
        Some(d) if user => d.join(file),
        _ => at(default, default),
    };
    let codex = client_dir("CODEX_HOME").unwrap_or_else(|| home.join(".codex"));
    match client {
        Client::ClaudeCode => vec![
            (
                if user {
                    claude_user(".claude.json", ".claude.json")
                } else {
                    at(".mcp.json", ".claude.json")
                },
                mcp("mcpServers"),
            ),
            (
                claude_user("settings.json", ".claude/settings.json"),
                Edit::JsonHook {
                    event: "PreToolUse",
                    agent: "claude-code",
                    entry: json!({
                        "matcher": super::hook::CLAUDE_MATCHER,
                        // Seconds; past it Claude Code lets the call go
                        // ahead unless `onFailure` says "block" (Claude Code
                        // 2.1.295 on: a hook that cannot start, times out or
                        // exits otherwise blocks the call; older versions
                        // ignore the key), so the hook's own limit stays
                        // below it (attack atk24i F5).
                        "hooks": [{ "type": "command", "command": hook("claude-code"),
                                    "timeout": AGENT_TIMEOUT_SECS, "onFailure": "block" }],
                    }),
                    version: None,
                },
            ),
            (
                // After a file tool has written: the lease that held its
                // path from sandboxed runs is dropped (ADR 0244).
                claude_user("settings.json", ".claude/settings.json"),
                Edit::JsonHook {
                    event: "PostToolUse",
                    agent: "claude-code",
                    entry: json!({
                        "matcher": super::hook::CLAUDE_POST_MATCHER,
                        "hooks": [{ "type": "command", "command": hook("claude-code"),
                                    "timeout": AGENT_TIMEOUT_SECS }],
                    }),
                    version: None,
                },
            ),
            (
                // After a file tool has failed: the same (atk24l F2: the
                // lease no longer ends by time for Claude Code).
                claude_user("settings.json", ".claude/settings.json"),
                Edit::JsonHook {
                    event: "PostToolUseFailure",
                    agent: "claude-code",
                    entry: json!({
                        "matcher": super::hook::CLAUDE_POST_MATCHER,
                        "hooks": [{ "type": "command", "command": hook("claude-code"),
                                    "timeout": AGENT_TIMEOUT_SECS }],
                    }),
                    version: None,
                },
            ),
        ],
        Client::Cursor => vec![
            (
                at(".cursor/mcp.json", ".cursor/mcp.json"),
                mcp("mcpServers"),
            ),
            (
                at(".cursor/hooks.json", ".cursor/hooks.json"),
                Edit::JsonHook {
                    event: "beforeShellExecution",
                    agent: "cursor",
                    entry: json!({ "command": hook("cursor") }),
                    version: Some(1),
                },
            ),
        ],
        Client::Codex => vec![
            (
                codex.join("config.toml"),
                Edit::McpToml {
                    keys: toml_keys(exe, transport),
                },
            ),
            (
                codex.join("config.toml"),
                Edit::TomlHook {
                    matcher: "^(Bash|apply_patch)$",
                    command: hook("codex"),
                },
            ),
        ],
        Client::Windsurf => vec![
            (
                home.join(".codeium/windsurf/mcp_config.json"),
                mcp("mcpServers"),
            ),
            (
                home.join(".codeium/windsurf/hooks.json"),
                Edit::JsonHook {
                    event: "pre_run_command",
                    agent: "windsurf",
                    entry: json!({ "command": hook("windsurf"), "show_output": true }),
                    version: None,
                },
            ),
            (
                home.join(".codeium/windsurf/hooks.json"),
                Edit::JsonHook {
                    event: "pre_write_code",
                    agent: "windsurf",
                    entry: json!({ "command": hook("windsurf"), "show_output": true }),
                    version: None,
                },
            ),
        ],
        Client::Vscode => vec![
            (
                at(".vscode/mcp.json", ".config/Code/User/mcp.json"),
                mcp("servers"),
            ),
            (
                at(".github/hooks/skarn.json", ".copilot/hooks/skarn.json"),
                Edit::JsonHook {
                    event: "PreToolUse",
                    agent: "vscode",
                    entry: json!({ "type": "command", "command": hook("vscode") }),
                    version: None,
                },
            ),
        ],
        Client::GeminiCli => vec![
            (
                at(".gemini/settings.json", ".gemini/settings.json"),
                mcp("mcpServers"),
            ),
            (
                at(".gemini/settings.json", ".gemini/settings.json"),
                Edit::JsonHook {
                    event: "BeforeTool",
                    agent: "gemini-cli",
                    entry: json!({
                        "matcher": super::hook::GEMINI_MATCHER,
                        // Milliseconds, as Gemini CLI reads it; the name is
                        // what its disabled list and `/hooks` use.
                        "hooks": [{ "type": "command", "name": super::gemini_hooks::HOOK_NAME,
                                    "command": hook("gemini-cli"),
                                    "timeout": AGENT_TIMEOUT_SECS * 1000 }],
                    }),
                    version: None,
                },
            ),
            // Gemini CLI runs no hook while its hooks system is off (off by
            // default before 0.27): on, in the file holding the hook.
            (
                at(".gemini/settings.json", ".gemini/settings.json"),
                Edit::GeminiHooksOn,
            ),
        ],
    }
}

/// The directory the environment variable `var` names (absolute only).
pub fn client_dir(var: &str) -> Option<PathBuf> {
    crate::cmd::hook::file_run_sets::client_dir(var)
}

/// The agent's own time limit for the hook that `init` writes where the
/// agent's settings have one (Claude Code, Gemini CLI): three times the
/// hook's own default limit (`[hook] timeout`, 20 s), which blocks.
pub(crate) const AGENT_TIMEOUT_SECS: u64 = 60;

/// The id of VS Code's password prompt for the bearer token.
const VSCODE_INPUT: &str = "skarn-http-token";

/// The server entry in each client's own JSON shape. Over HTTP the token is
/// never written: each client reads it from the environment with its own
/// documented syntax (VS Code prompts for it once and keeps it secret).
fn json_entry(client: Client, exe: &str, transport: &Transport) -> Value {
    match transport {
        Transport::Stdio { config } => {
            let args = json!(["serve", "--config", config.display().to_string()]);
            match client {
                Client::Vscode => json!({ "type": "stdio", "command": exe, "args": args }),
                _ => json!({ "command": exe, "args": args }),
            }
        }
        Transport::Http { url, token_env } => {
            let bearer = |v: String| json!({ "Authorization": format!("Bearer {v}") });
            match client {
                Client::ClaudeCode => json!({
                    "type": "http", "url": url, "headers": bearer(format!("${{{token_env}}}")),
                }),
                Client::Cursor => json!({
                    "url": url, "headers": bearer(format!("${{env:{token_env}}}")),
                }),
                Client::Windsurf => json!({
                    "serverUrl": url, "headers": bearer(format!("${{env:{token_env}}}")),
                }),
                Client::Vscode => json!({
                    "type": "http", "url": url, "headers": bearer(format!("${{input:{VSCODE_INPUT}}}")),
                }),
                Client::GeminiCli => json!({
                    "httpUrl": url, "headers": bearer(format!("${{{token_env}}}")),
                }),
                Client::Codex => Value::Null,
            }
        }
    }
}

fn vscode_input(client: Client, transport: &Transport) -> Option<Value> {
    match (client, transport) {
        (Client::Vscode, Transport::Http { token_env, .. }) => Some(json!({
            "type": "promptString",
            "id": VSCODE_INPUT,
            "description": format!("skarn serve --http bearer token (${token_env})"),
            "password": true,
        })),
        _ => None,
    }
}

fn toml_keys(exe: &str, transport: &Transport) -> Vec<(&'static str, TomlValue)> {
    match transport {
        Transport::Stdio { config } => vec![
            ("command", TomlValue::Str(exe.into())),
            (
                "args",
                TomlValue::List(vec![
                    "serve".into(),
                    "--config".into(),
                    config.display().to_string(),
                ]),
            ),
        ],
        Transport::Http { url, token_env } => vec![
            ("url", TomlValue::Str(url.clone())),
            ("bearer_token_env_var", TomlValue::Str(token_env.clone())),
        ],
    }
}

pub use merge::apply;

mod merge;

#[cfg(test)]
mod tests;
