//! `skarn init`: a commented starter `skarn.toml` and the client snippets.

use std::path::Path;

/// The starter configuration. It parses as-is (every server is commented
/// out but the example, which is disabled).
pub const STARTER: &str = r#"# skarn.toml: the downstream MCP servers behind `skarn serve`.
# Docs: docs/gateway.md. Other tools' sections (e.g. [run]) may live here too.

[gateway]
# Also expose every downstream tool as <server>__<tool> (costs context tokens).
passthrough = false
# Between the server name and the tool name in namespaced names.
namespace_separator = "__"
# Where `execute` runs scripts: "auto" (a confined worker process where the
# kernel allows it, else in-process), "worker" or "in_process".
isolation = "auto"
# Warm confined workers kept ready, and scripts allowed to run at once.
worker_pool = 2
max_concurrent_executes = 8
# How long a server may take to start, and any one call to take
# (durations: "30s", "2m", "500ms"; a bare number is seconds).
start_timeout = "30s"
call_timeout = "60s"
# Caps on each downstream listing (tools/list etc., all pages); a server
# that goes past one is failed with the cause.
max_list_pages = 100
max_list_items = 10000
max_list_bytes = 16777216
# `skarn serve --http` only: seconds to send a request's headers, seconds a
# silent connection stays open, and connections served at once.
http_header_timeout = 10
http_idle_timeout = 120
http_max_connections = 256
# Host names (or host:port) a load balancer in front of the gateway puts in
# the Host header; loopback names are always accepted.
http_allowed_hosts = []

[gateway.limits]
# Per-script limits of `execute` (sizes: "64M", "512K"; a bare number is MiB).
memory = "64M"            # JS heap
timeout = "30s"           # wall time
max_tool_calls = 256

# One table per downstream server. The alias ("files" below) prefixes its
# tools: files__read_file.

# A local server started as a child process (stdio):
[servers.example]
command = "skarn-example-server"
args = []
# A stdio server's environment is minimal (PATH, HOME, USER, LOGNAME, SHELL,
# LANG, LANGUAGE, LC_*, TZ, TERM, TMPDIR, XDG_*) plus exactly what `env`
# names: a literal value, or { from_env = "VAR" } to pass the gateway's own
# $VAR to this server only. Nothing else of your shell reaches it.
# env = { LOG_LEVEL = "warn", API_TOKEN = { from_env = "EXAMPLE_API_TOKEN" } }
# cwd = "."
enabled = false           # set to true once the command exists
# timeout = "60s"         # per call (default: gateway.call_timeout)
# start_timeout = "30s"

# Every stdio server runs in its own kernel sandbox (docs/gateway.md,
# "Sandboxed servers"): it reads the system directories and its own
# installation, writes only its private state directory (its HOME, kept in
# ~/.local/state/skarn-servers/<alias>), never reads ~/.ssh and other
# secrets, and has no network unless `net` allows hosts.
[servers.example.sandbox]
enabled = true            # false: run it unconfined (not recommended)
read = []                 # extra read-only paths, e.g. ["~/notes"]
write = []                # extra read-write paths
exec = []                 # extra read+execute paths
net = "deny"              # deny | allow:HOST,HOST | outbound | all
# memory = "1G"           # per-process data limit
# max_procs = 256
# max_file_size = "1G"

# A package run by npx fetches it on first use: allow the registries your
# npm configuration names (through skarn's egress proxy, nothing else).
# [servers.memory]
# command = "npx"
# args = ["-y", "@modelcontextprotocol/server-memory"]
# [servers.memory.sandbox]
# net = "allow:registries"

# A filesystem server sees only the directory you grant it:
# [servers.files]
# command = "mcp-server-filesystem"
# args = ["/srv/data"]
# [servers.files.sandbox]
# write = ["/srv/data"]

# A remote server over Streamable HTTP (loopback and private addresses are
# refused unless `allow_private = true`):
# [servers.remote]
# url = "https://mcp.example.com/mcp"
# auth = { bearer_env = "REMOTE_MCP_TOKEN" }   # token read from this variable
# headers = { "X-Team" = "platform" }
# allow_private = false
"#;

/// The MCP server entry pointing at `config`, as one JSON document
/// (`{"mcpServers": {"skarn": ...}}`, the shape of Claude Code's `.mcp.json`
/// and Cursor's `.cursor/mcp.json`).
pub fn client_snippets(skarn: &str, config: &Path) -> String {
    let entry = serde_json::json!({
        "mcpServers": {
            "skarn": {
                "command": skarn,
                "args": ["serve", "--config", config.display().to_string()],
            }
        }
    });
    serde_json::to_string_pretty(&entry).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn starter_parses() {
        let c = crate::Config::parse(super::STARTER, "skarn.toml").unwrap();
        assert_eq!(c.servers.len(), 1);
        assert!(!c.servers[0].enabled);
        let crate::config::ServerTransport::Stdio { sandbox, .. } = &c.servers[0].transport else {
            panic!("stdio expected")
        };
        assert_eq!(sandbox.enabled, Some(true));
        assert_eq!(sandbox.net, skarn_sandbox::NetPolicy::DenyAll);
    }
}
