//! The `mcp servers` section of `skarn doctor`, the same on every system:
//! each configured server's health, tool count, confinement and the hosts
//! its sandbox denied (with the config line that would allow each).

use std::path::Path;

use skarn_gateway::ServerHealth;

/// Print the section for the servers of `config` (`None`: no such file).
pub fn print(config: &Path, servers: Option<&[ServerHealth]>) {
    let Some(list) = servers else {
        println!(
            "mcp servers: none configured ({} not found)",
            config.display()
        );
        return;
    };
    println!("mcp servers ({}):", config.display());
    for h in list {
        let cause = h
            .cause
            .as_deref()
            .map(|c| format!(": {c}"))
            .unwrap_or_default();
        println!(
            "  {:<20} {:<6} {:<9} {} tools{cause}",
            h.name, h.transport, h.status, h.tools
        );
        if !h.sandbox.is_empty() {
            println!("  {:<20} {}", "", h.sandbox);
        }
        for d in &h.net_denied {
            println!(
                "  {:<20} denied {} ({}); to allow: [servers.{}.sandbox] {}",
                "", d.host, d.reason, h.name, d.allow_line
            );
        }
    }
}
