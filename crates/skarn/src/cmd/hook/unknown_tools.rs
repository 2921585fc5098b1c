//! Tools that reach the hook but are neither a shell nor a file tool:
//! the known readers pass, every other one is refused unless the user
//! allows it (`[hook] allow_tools`).

use super::settings::Settings;

/// Where a refusal's advice to the user starts (a marker of
/// [`skarn_sandbox::report::advice::MARKERS`]): the model reads the
/// refusal without it, the user gets it where the client shows the user
/// something ([`super::model_facing`]).
pub(super) const ALLOW_ADVICE: &str = skarn_sandbox::report::advice::USER_MAY_ALLOW;

/// Claude Code tools that neither write files nor run code (a matcher
/// may match inside a name: `Write` in `TodoWrite`, `Bash` in
/// `BashOutput`; a user's wider matcher sends the readers).
pub(super) const CLAUDE_HARMLESS: &[&str] = &[
    "TodoWrite",
    "TodoRead",
    "BashOutput",
    "KillBash",
    "KillShell",
    "Read",
    "Glob",
    "Grep",
    "LS",
    "NotebookRead",
    "WebFetch",
    "WebSearch",
    "ExitPlanMode",
];

/// Claude Code tools that load a skill, slash command or subagent: they
/// pass only once the refusal for unconfined skills, commands and
/// subagents (checked on every call first) found nothing (atk24r F10).
pub(super) const CLAUDE_LOADERS: &[&str] = &["Skill", "SlashCommand", "Agent", "Task"];

/// Gemini CLI tools that neither write files nor run code.
pub(super) const GEMINI_HARMLESS: &[&str] = &[
    "read_file",
    "read_many_files",
    "list_directory",
    "glob",
    "search_file_content",
    "google_web_search",
    "web_fetch",
    "write_todos",
];

/// The skarn gateway's own tools (`skarn serve`): `search` and
/// `read_tool_docs` read the catalogue, `execute` runs Code Mode in the
/// gateway's worker sandbox and calls servers through the gateway's
/// policy, `run` runs its command under `skarn run` in the gateway's fixed
/// workspace. The gateway confines them itself, so the hook lets them
/// through without `[hook] allow_tools`.
const GATEWAY_TOOLS: &[&str] = &["search", "read_tool_docs", "execute", "run"];

/// Whether `tool` is one of [`GATEWAY_TOOLS`] as a client names the tools
/// of the MCP server `skarn` (the name `init` gives the entry and the name
/// the gateway announces): VS Code and Gemini CLI `mcp_skarn_<tool>`,
/// Claude Code `mcp__skarn__<tool>`. Another server announcing itself as
/// `skarn` gets the same names in VS Code; such a server already runs
/// unconfined as VS Code started it (docs/hook.md).
pub(super) fn gateway_tool(tool: &str) -> bool {
    ["mcp_skarn_", "mcp__skarn__"]
        .iter()
        .filter_map(|p| tool.strip_prefix(p))
        .any(|t| GATEWAY_TOOLS.contains(&t))
}

/// Why a tool that reached the hook but is neither handled nor in
/// `harmless` must not run (`None`: harmless, or the user allowed it with
/// `[hook] allow_tools`).
pub(super) fn unknown_tool(tool: &str, harmless: &[&str], settings: &Settings) -> Option<String> {
    if harmless.contains(&tool) || gateway_tool(tool) || settings.allows_tool(tool) {
        return None;
    }
    Some(format!(
        "skarn: {tool} refused: the skarn hook does not know this tool, and it may write files \
         or run code unconfined{ALLOW_ADVICE} if it neither writes files nor runs code: \
         allow_tools = [\"{tool}\"] under [hook] in ~/.config/skarn/config.toml"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_gateways_own_tools_pass_by_name() {
        for t in [
            "mcp_skarn_search",
            "mcp_skarn_read_tool_docs",
            "mcp_skarn_execute",
            "mcp_skarn_run",
            "mcp__skarn__run",
        ] {
            assert!(gateway_tool(t), "{t}");
        }
        for t in [
            "mcp_skarn_write_file",
            "mcp_skarn2_run",
            "mcp_skarnx_run",
            "mcp_fs_run",
            "run",
            "mcp__skarn__run2",
            "mcp_skarn_",
        ] {
            assert!(!gateway_tool(t), "{t}");
        }
    }
}
