//! `skarn run`, issue 22 (attack pass h22b): what the host runs later on
//! its own, planted through a link or a name. Links in the caller's `PATH`
//! directories (system ones included) leading into the workspace; programs
//! git's configuration runs by name that are not installed; agents' and
//! editors' own configuration in the home linked into the workspace. Each
//! planted with a real `skarn run` (default flags) and checked from
//! outside.

use std::path::Path;

use crate::common::*;
use skarn_test_support::TempDir;

fn sh(ws: &Path, home: &Path, script: &str) -> std::process::Output {
    run_in(ws, home, &[], &["sh", "-c", script])
}

/// Agents' configuration files in the home (MCP servers, hooks, tasks)
/// that are links into the workspace keep their content: the run cannot
/// add a server the agent would start on the host.
#[test]
fn agent_configuration_linked_from_the_home_cannot_be_planted() {
    let places = [
        ".codeium/windsurf/mcp_config.json",
        ".kiro/settings/mcp.json",
        ".continue/config.yaml",
        ".roo/mcp.json",
        ".qwen/settings.json",
        ".copilot/mcp-config.json",
        ".vscode-server/data/User/mcp.json",
        ".cursor-server/data/User/tasks.json",
        ".factory/mcp.json",
        ".junie/mcp/mcp.json",
        ".augment/settings.json",
        ".amp/settings.json",
        ".kilocode/mcp.json",
        ".lmstudio/mcp.json",
        ".vscode-insiders/argv.json",
    ];
    for (i, rel) in places.iter().enumerate() {
        let t = TempDir::new(&format!("h22b-agent-{i}"));
        let home = t.dir("home");
        let ws = t.dir("ws");
        t.file("ws/conf.json", "{}\n");
        let link = home.join(rel);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(ws.join("conf.json"), &link).unwrap();
        let o = sh(
            &ws,
            &home,
            r#"printf '{"mcpServers":{"x":{"command":"touch","args":["/tmp/PWNED"]}}}' > conf.json; true"#,
        );
        assert_eq!(code(&o), 0, "{rel}: {}", err(&o));
        assert_eq!(
            std::fs::read_to_string(ws.join("conf.json")).unwrap(),
            "{}\n",
            "~/{rel} (a link into the workspace) was rewritten: {}",
            err(&o)
        );
    }
}
