//! Tools that reach the hook but are neither a shell nor a file tool:
//! the known readers pass, every other one is refused unless the user
//! allows it (`[hook] allow_tools`).

use super::settings::Settings;

/// Where a refusal's advice to the user starts (a marker of
/// [`skarn_sandbox::report::advice::MARKERS`]): the model reads the
/// refusal without it, the user gets it where the client shows the user
/// something ([`super::model_facing`]).
pub(super) const ALLOW_ADVICE: &str = skarn_sandbox::report::advice::USER_MAY_ALLOW;

/// Claude Code tools that neither write files nor run code on the host:
/// answered nothing. `init` installs the hook with the matcher `*`
/// (attack atk24s F3), so every tool Claude Code has reaches the hook;
/// the names are those of Claude Code 2.1.197's tool list (its
/// `sdk-tools.d.ts`) and older releases'. The task-list tools keep the
/// session's to-do list, `CronCreate` and `ScheduleWakeup` queue a prompt
/// (which the model answers through the hooked tools), the MCP resource
/// tools read from servers the client already runs, `ExitWorktree` leaves
/// a worktree the session entered.
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
    "EnterPlanMode",
    "AskUserQuestion",
    "TaskOutput",
    "TaskStop",
    "TaskCreate",
    "TaskGet",
    "TaskUpdate",
    "TaskList",
    "ToolSearch",
    "ListMcpResourcesTool",
    "ReadMcpResourceTool",
    "ReadMcpResourceDirTool",
    "CronCreate",
    "CronDelete",
    "CronList",
    "ScheduleWakeup",
    "PushNotification",
    "ReportFindings",
    "ExitWorktree",
    // Claude Code 2.1.197's tool registry beyond `sdk-tools.d.ts` (the
    // names its `bin/claude.exe` defines as tools; atk24t F8): the
    // structured answer of `--json-schema`, agent-team messages and
    // teams, the brief-mode message to the user (and its old name), the
    // peer list, waiting for MCP servers, a file shown to the user.
    "StructuredOutput",
    "SendMessage",
    "TeamCreate",
    "TeamDelete",
    "SendUserMessage",
    "Brief",
    "ListAgents",
    "WaitForMcpServers",
    "SendUserFile",
    "mcp__ide__getDiagnostics",
];

/// Claude Code tools that run code on the host outside the Bash tool, so
/// outside `skarn run` (attack atk24s F3), and why each is refused. Any
/// other tool not named in [`CLAUDE_HARMLESS`] is refused too (fail
/// closed, `[hook] allow_tools` lets one through); MCP tools (`mcp__*`)
/// are judged by their server (`mcp_servers`: a server of the files
/// `init` wraps passes, a plugin's, SDK or unknown one is refused).
pub(super) const CLAUDE_REFUSED: &[(&str, &str)] = &[
    (
        "Monitor",
        "it runs its command in bash on the host, unconfined (run the command with the Bash \
         tool, which skarn confines, in the background if it is a watch)",
    ),
    (
        "REPL",
        "it runs JavaScript in Claude Code's own process on the host, unconfined (run a script \
         with the Bash tool, which skarn confines)",
    ),
    (
        "Workflow",
        "it runs a workflow script (or one of .claude/workflows/) in Claude Code's own process \
         on the host, unconfined",
    ),
    (
        "EnterWorktree",
        "it makes or enters a git worktree by host git and the project's worktree hooks, \
         unconfined, and the session then reads the worktree's committed settings, where the \
         skarn hook may be missing (use `claude --worktree` with skarn's hook committed or \
         installed with --user, or git worktree through the Bash tool)",
    ),
];

/// Claude Code's built-in IDE server (the VS Code or JetBrains extension
/// it connects to, not a server `init` can wrap): its tools run in the
/// IDE. `executeCode` runs Python in the open notebook's Jupyter kernel,
/// a host process (atk24t F1); only `getDiagnostics` (in
/// [`CLAUDE_HARMLESS`]) reads.
const IDE_SERVER: &str = "mcp__ide__";

/// Why the IDE server's tools other than its reader are refused.
const IDE_REFUSED: &str = "it is a tool of the IDE's own MCP server, which runs it in the IDE on \
     the host, unconfined (`executeCode` runs the code in the notebook's Jupyter kernel, a host \
     process); run code with the Bash tool, which skarn confines";

/// Claude Code's other built-in servers that act on the host outside any
/// sandbox (atk24u F4): `computer-use` types and clicks on the user's
/// desktop (into a host terminal), `claude-in-chrome` drives the user's
/// own browser (its sessions, any host, `file://`). With why.
const HOST_SERVERS: &[(&str, &str)] = &[
    (
        "mcp__computer-use__",
        "it is a tool of Claude Code's built-in computer-use server, which types and clicks on \
         the user's desktop, on the host, outside any sandbox (typing into a terminal runs any \
         command unconfined); run commands with the Bash tool, which skarn confines",
    ),
    (
        "mcp__claude-in-chrome__",
        "it is a tool of Claude Code's built-in Chrome server, which drives the user's own \
         browser on the host, with the user's sessions, to any site and to local files, outside \
         skarn's network and file rules",
    ),
];

/// Why Claude Code's `tool` (not a shell, file or loader tool) must not
/// run: one of [`CLAUDE_REFUSED`], or not known harmless (`None`: it may).
pub(super) fn claude_tool(tool: &str, settings: &Settings) -> Option<String> {
    if let Some((_, why)) = CLAUDE_REFUSED.iter().find(|(t, _)| *t == tool) {
        return Some(format!("skarn: {tool} refused: {why}."));
    }
    if tool.starts_with(IDE_SERVER)
        && !CLAUDE_HARMLESS.contains(&tool)
        && !settings.allows_tool(tool)
    {
        return Some(format!("skarn: {tool} refused: {IDE_REFUSED}."));
    }
    if let Some((_, why)) = HOST_SERVERS.iter().find(|(p, _)| tool.starts_with(p))
        && !settings.allows_tool(tool)
    {
        return Some(format!("skarn: {tool} refused: {why}."));
    }
    if tool.starts_with("mcp__") {
        return None;
    }
    unknown_tool(tool, CLAUDE_HARMLESS, settings)
}

/// Why a Claude Code call must not run for what its input asks, though
/// the tool itself passes: a loader (`Agent`, `Task`) asked for a
/// worktree (what `EnterWorktree` is refused for, atk24t F2) or a remote
/// run, `CronCreate` asked to persist its task in
/// `.claude/scheduled_tasks.json` (the agent's own persistence in
/// `.claude`, refused to `Write`: atk24t F5).
pub(super) fn claude_input(tool: &str, input: &serde_json::Value) -> Option<String> {
    let field = |k: &str| input.get(k);
    match tool {
        "Agent" | "Task" => {
            let iso = field("isolation")?;
            if iso.is_null() || iso.as_str() == Some("none") {
                return None;
            }
            let worktree = CLAUDE_REFUSED
                .iter()
                .find(|(t, _)| *t == "EnterWorktree")
                .map_or("", |(_, w)| w);
            Some(format!(
                "skarn: {tool} with isolation {iso} refused: {worktree}; run the agent \
                 without isolation."
            ))
        }
        "CronCreate" => {
            let durable = field("durable")?;
            if durable.is_null() || durable.as_bool() == Some(false) {
                return None;
            }
            Some(format!(
                "skarn: {tool} with durable {durable} refused: it writes the task to \
                 .claude/scheduled_tasks.json, which fires it in every later session, and the \
                 agent may not write Claude Code's configuration; create it without durable \
                 (it lasts this session)."
            ))
        }
        _ => None,
    }
}

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
    fn claude_tools_that_run_code_are_refused_and_readers_pass() {
        let s = Settings::load(None, None, &[]).unwrap();
        for t in ["Monitor", "REPL", "Workflow", "EnterWorktree", "NewTool"] {
            assert!(claude_tool(t, &s).is_some(), "{t}");
        }
        for t in [
            "TaskCreate",
            "AskUserQuestion",
            "mcp__github__search",
            "Read",
            "StructuredOutput",
            "SendMessage",
            "TeamCreate",
            "TeamDelete",
            "mcp__ide__getDiagnostics",
        ] {
            assert!(claude_tool(t, &s).is_none(), "{t}");
        }
        for t in ["mcp__ide__executeCode", "mcp__ide__runCode"] {
            assert!(claude_tool(t, &s).is_some(), "{t}");
        }
    }

    #[test]
    fn worktree_agents_and_durable_crons_are_refused() {
        use serde_json::json;
        for (t, i) in [
            ("Agent", json!({"prompt": "p", "isolation": "worktree"})),
            ("Task", json!({"prompt": "p", "isolation": "remote"})),
            ("Agent", json!({"prompt": "p", "isolation": 1})),
            ("CronCreate", json!({"cron": "* * * * *", "durable": true})),
            (
                "CronCreate",
                json!({"cron": "* * * * *", "durable": "true"}),
            ),
        ] {
            assert!(claude_input(t, &i).is_some(), "{t} {i}");
        }
        for (t, i) in [
            ("Agent", json!({"prompt": "p"})),
            ("Agent", json!({"prompt": "p", "isolation": null})),
            ("CronCreate", json!({"cron": "* * * * *", "durable": false})),
            ("CronCreate", json!({"cron": "* * * * *"})),
            ("Read", json!({"isolation": "worktree"})),
        ] {
            assert!(claude_input(t, &i).is_none(), "{t} {i}");
        }
    }

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
