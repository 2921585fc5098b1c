//! The `mcp servers` section of `skarn doctor`, the same on every system:
//! each configured server's health, tool count, confinement and the hosts
//! its sandbox denied (with the config line that would allow each).

use std::path::Path;

use skarn_gateway::ServerHealth;
use skarn_sandbox::protect::terminal_filter::one_line as esc;

/// Print the section for the servers of `config` (`None`: no such file).
pub fn print(config: &Path, servers: Option<&[ServerHealth]>) {
    let Some(list) = servers else {
        println!(
            "mcp servers: none configured ({} not found)",
            esc(&config.display().to_string())
        );
        return;
    };
    println!("mcp servers ({}):", esc(&config.display().to_string()));
    for h in list {
        let cause = h
            .cause
            .as_deref()
            .map(|c| format!(": {}", esc(c)))
            .unwrap_or_default();
        println!(
            "  {:<20} {:<6} {:<9} {} tools{cause}",
            esc(&h.name),
            h.transport,
            h.status,
            h.tools
        );
        if !h.sandbox.is_empty() {
            println!("  {:<20} {}", "", esc(&h.sandbox));
        }
        for d in &h.net_denied {
            println!(
                "  {:<20} denied {} ({}); to allow: [servers.{}.sandbox] {}",
                "",
                esc(&d.host),
                esc(&d.reason),
                esc(&h.name),
                esc(&d.allow_line)
            );
        }
    }
}
