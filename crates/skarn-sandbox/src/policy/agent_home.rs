//! Agents' and editors' own configuration in the home that starts
//! commands on its own (MCP servers, hooks, tasks, language servers), as
//! data: each entry says why it is listed (attack pass h22b G). They join
//! [`super::HOME_PERSISTENCE_PATHS`], so every backend treats them as the
//! home's start-up places: a link there into a writable grant leads to a
//! protected (read-only) target, a workspace inside one is refused, and a
//! home held by a writable grant keeps them read-only.
//!
//! Places holding large trees that host programs do not run from on their
//! own (an editor server's `extensions`, caches) are named by their
//! settings directory only, so that the bounded walk of the home is spent
//! on what is run.

/// One home place, relative to the home.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HomeEntry {
    /// Path relative to the home.
    pub path: &'static str,
    /// What the host runs from it.
    pub reason: &'static str,
}

const fn e(path: &'static str, reason: &'static str) -> HomeEntry {
    HomeEntry { path, reason }
}

/// Every listed agent and editor place of the home.
pub const AGENT_HOME: &[HomeEntry] = &[
    e(
        ".codeium",
        "Windsurf's and Codeium's MCP servers (windsurf/mcp_config.json) start on open",
    ),
    e(".windsurf", "Windsurf's MCP servers and workflows"),
    e(
        ".kiro",
        "Kiro's MCP servers (settings/mcp.json) and hooks start on open",
    ),
    e(
        ".continue",
        "Continue's config.yaml starts MCP servers and runs commands",
    ),
    e(".roo", "Roo Code's MCP servers and modes"),
    e(
        ".qwen",
        "Qwen Code's settings.json starts MCP servers and hooks",
    ),
    e(
        ".copilot",
        "the Copilot CLI's mcp-config.json starts MCP servers",
    ),
    e(".factory", "Factory's droid MCP servers and hooks"),
    e(".junie", "Junie's MCP servers (mcp/mcp.json)"),
    e(".augment", "Augment's settings start MCP servers"),
    e(".amp", "Amp's settings start MCP servers and tools"),
    e(".kilocode", "Kilo Code's MCP servers"),
    e(".lmstudio", "LM Studio's mcp.json starts MCP servers"),
    e(".cline", "Cline's MCP servers and hooks"),
    e(".goose", "goose's extensions are commands it starts"),
    e(".opencode", "opencode's plugins and MCP servers"),
    e(".opencode.json", "opencode's MCP servers and commands"),
    e(".crush.json", "Crush's MCP and language servers"),
    e(".aider.conf.yml", "aider's lint and test commands"),
    e(".aider.conf.yaml", "aider's lint and test commands"),
    e(".trae", "Trae's MCP servers and rules"),
    e(".aws/amazonq", "Amazon Q's mcp.json starts MCP servers"),
    e(
        ".vscode-insiders",
        "VS Code Insiders' argv.json and extension settings",
    ),
    e(".vscode-oss", "VSCodium's argv.json and extension settings"),
    e(
        ".cursor-server/data/User",
        "Cursor's remote settings and tasks",
    ),
    e(
        ".cursor-server/data/Machine",
        "Cursor's remote machine settings (tool paths it runs)",
    ),
    e(
        ".vscode-server/data/User",
        "VS Code's remote settings, mcp.json and tasks.json",
    ),
    e(
        ".vscode-server/data/Machine",
        "VS Code's remote machine settings (tool paths it runs)",
    ),
    e(
        ".vscode-server-insiders/data/User",
        "VS Code Insiders' remote settings, mcp.json and tasks.json",
    ),
    e(
        ".windsurf-server/data/User",
        "Windsurf's remote settings and tasks",
    ),
    e(".claude-code-router", "a Claude Code proxy's commands"),
    e(".zed_server", "Zed's remote server settings"),
];

/// The number of [`AGENT_HOME`] entries (the length of the combined list).
pub const COUNT: usize = AGENT_HOME.len();

/// `base` followed by the paths of [`AGENT_HOME`] (for a `const` list).
pub const fn with_agent_paths<const N: usize>(base: &[&'static str]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < base.len() && i < N {
        out[i] = base[i];
        i += 1;
    }
    let mut j = 0;
    while j < AGENT_HOME.len() && i + j < N {
        out[i + j] = AGENT_HOME[j].path;
        j += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_listed_with_a_reason_and_in_the_home_places() {
        for en in AGENT_HOME {
            assert!(!en.reason.is_empty() && !en.path.starts_with('/'), "{en:?}");
            assert!(
                crate::policy::HOME_PERSISTENCE_PATHS.contains(&en.path),
                "{}",
                en.path
            );
        }
        assert!(!crate::policy::HOME_PERSISTENCE_PATHS.contains(&""));
    }
}
