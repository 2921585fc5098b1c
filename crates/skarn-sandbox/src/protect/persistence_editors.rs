//! Persistence paths of agents and editors: folder settings that start
//! commands when the folder is opened (part of
//! [`crate::protect::persistence::ENTRIES`]; data only).

use crate::protect::persistence_entries::Reserve::{Always, IfAny, Never};
use crate::protect::persistence_entries::{Entry, e};
use crate::protect::persistence_families::BAZEL;

pub(crate) const PART: &[Entry] = &[
    e(
        "HEAD",
        Always,
        "with objects/ and refs/ beside it, git takes the workspace itself for a bare \
         repository (and runs its config) when .git is missing or spoiled",
    ),
    e(
        ".gitmodules",
        Always,
        "submodule URLs and update commands used by later git commands",
    ),
    // Agents and editors that run commands configured in the folder.
    e(".claude", Always, "agent hooks and MCP servers run on open"),
    e(".cursor", Always, "editor rules, hooks and MCP servers"),
    e(
        ".gemini",
        Always,
        "agent settings start MCP servers and hooks",
    ),
    e(".codex", Always, "agent configuration with commands"),
    e(".opencode", Always, "agent plugins and commands"),
    e("opencode.json", Always, "agent MCP servers and commands"),
    e(
        "opencode.jsonc",
        Always,
        "agent MCP servers and commands (opencode.json's JSONC form)",
    ),
    e(".zed", Always, "editor tasks and language-server commands"),
    e(
        ".vscode",
        Always,
        "editor tasks, launch configs and settings",
    ),
    e(".idea", Always, "IDE run configurations and tool paths"),
    e(
        ".devcontainer",
        Always,
        "container definitions with host-side commands",
    ),
    e(
        ".devcontainer.json",
        Always,
        "container definition at the top (initializeCommand runs on the host)",
    ),
    e(".mcp.json", Always, "MCP servers started by agents on open"),
    e(".kiro", Always, "agent hooks, steering and MCP servers"),
    e(".qwen", Always, "agent settings start MCP servers"),
    e(".kilocode", Always, "agent MCP servers and rules"),
    e(".clinerules", Always, "agent hooks and rules"),
    e(
        ".windsurf",
        Always,
        "agent rules, workflows and MCP servers",
    ),
    e(".factory", Always, "agent MCP servers and hooks"),
    e(".junie", Always, "agent MCP servers"),
    e(".amp", Always, "agent settings and MCP servers"),
    e(".goose", Always, "agent extensions (commands)"),
    e(".trae", Always, "agent rules and MCP servers"),
    e(".augment", Always, "agent settings and MCP servers"),
    e(".openhands", Always, "agent setup scripts"),
    e(
        ".mvn",
        Always,
        "Maven JVM options, extensions and wrapper run by IDE import",
    ),
    e(
        "tools/bazel",
        IfAny(BAZEL),
        "bazel and bazelisk run this wrapper for every command",
    ),
    e(
        "gradle/wrapper/gradle-wrapper.properties",
        Never,
        "the Gradle distribution IDE import downloads and runs",
    ),
    e(".roo", Always, "agent rules, modes and MCP servers"),
    e(".amazonq", Always, "agent MCP servers and rules"),
    e(".continue", Always, "agent MCP servers and commands"),
    e(
        "crush.json",
        Always,
        "agent MCP servers and language servers",
    ),
    e(
        ".crush.json",
        Always,
        "agent MCP servers and language servers",
    ),
    e(
        ".aider.conf.yml",
        Always,
        "agent settings: lint and test commands it runs",
    ),
    e(".helix", Always, "editor language servers and formatters"),
    e(".nvim.lua", Always, "run by Neovim on open with 'exrc'"),
    e(".nvimrc", Always, "run by Neovim on open with 'exrc'"),
    e(".exrc", Always, "run by Vim and Neovim on open with 'exrc'"),
    e(
        ".pdbrc",
        Always,
        "run by Python's debugger (pdb, breakpoint()) started in this directory",
    ),
    e(
        ".vimrc",
        Always,
        "run by Vim on open with 'exrc' (before .exrc)",
    ),
];
