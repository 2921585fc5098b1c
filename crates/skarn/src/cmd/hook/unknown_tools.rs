//! Tools that reach the hook but are neither a shell nor a file tool:
//! the known readers pass, every other one is refused unless the user
//! allows it (`[hook] allow_tools`).

use super::settings::Settings;

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

/// Why a tool that reached the hook but is neither handled nor in
/// `harmless` must not run (`None`: harmless, or the user allowed it with
/// `[hook] allow_tools`).
pub(super) fn unknown_tool(tool: &str, harmless: &[&str], settings: &Settings) -> Option<String> {
    if harmless.contains(&tool) || settings.allows_tool(tool) {
        return None;
    }
    Some(format!(
        "skarn: {tool} refused: the skarn hook does not know this tool, and it may write files \
         or run code unconfined. If it neither writes files nor runs code, the user may allow \
         it: allow_tools = [\"{tool}\"] under [hook] in ~/.config/skarn/config.toml."
    ))
}
