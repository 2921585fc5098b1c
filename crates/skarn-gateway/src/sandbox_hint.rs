//! The cause added when a sandboxed package runner fails to start: `npx`,
//! `uvx` and their kind fetch the package from the network when it is not
//! in the local cache, and the default policy denies the network.

use std::path::Path;

use skarn_sandbox::NetPolicy;

use crate::sandbox_config::SandboxConfig;

/// Commands that fetch packages on their first run.
const FETCHERS: &[&str] = &[
    "npx", "pnpx", "bunx", "uvx", "pipx", "yarn", "pnpm", "npm", "uv",
];

/// `; hint ...` for a failed start of `command` in `mode`, or empty.
pub fn fetch_hint(alias: &str, command: &str, cfg: &SandboxConfig, mode: &str) -> String {
    let base = Path::new(command)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !FETCHERS.contains(&base.as_str()) || !mode.starts_with("sandboxed") {
        return String::new();
    }
    match &cfg.net {
        NetPolicy::DenyAll | NetPolicy::AllowLoopback => format!(
            "; the sandbox denies the network and {base} fetches a package that is not in the \
             local cache: add `net = \"allow:registries\"` under [servers.{alias}.sandbox] ({}), \
             or install the package and run it directly",
            cfg.at
        ),
        NetPolicy::AllowHosts(l) if !l.allow.iter().any(|a| a == "registries") => format!(
            "; {base} may need the package registries: add `registries` to the allow list, e.g. \
             `{}` under [servers.{alias}.sandbox] ({})",
            cfg.net_line_allowing("registries"),
            cfg.at
        ),
        _ => String::new(),
    }
}

/// A server's last stderr line as relayed to the model: the sandbox
/// helper's advice to widen the policy (flags, `--report`) removed, the
/// fact kept (ADR 0095's rule for §5 of issue 24; ADR 0240).
pub fn fact_only(line: &str) -> String {
    skarn_sandbox::report::advice::fact_only(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints() {
        let cfg = SandboxConfig {
            at: "skarn.toml:3".into(),
            ..Default::default()
        };
        let h = fetch_hint("mem", "npx", &cfg, "sandboxed (net deny)");
        assert!(h.contains("net = \"allow:registries\""), "{h}");
        assert!(h.contains("[servers.mem.sandbox] (skarn.toml:3)"), "{h}");
        assert!(fetch_hint("mem", "npx", &cfg, "not sandboxed: x").is_empty());
        assert!(fetch_hint("mem", "/usr/bin/srv", &cfg, "sandboxed (net deny)").is_empty());
        let cfg = SandboxConfig {
            net: NetPolicy::parse("allow:a.test").unwrap(),
            ..cfg
        };
        let h = fetch_hint("mem", "uvx", &cfg, "sandboxed (net allow)");
        assert!(h.contains("allow:a.test,registries"), "{h}");
    }
}
