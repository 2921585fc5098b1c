//! Telling package tools that they are offline. Under `--net deny` nothing
//! is reachable, and a tool that does not know it retries: `npx -y TOOL`
//! spent 71 s and cargo 11 s before failing. Each tool's own documented
//! offline setting makes it answer at once, from its cache when it can,
//! with its own message when it cannot. `--net loopback` is left alone: a
//! command may serve its own registry there (a test of a publisher, say).
//!
//! Data: the variable, its value, and which tool reads it.

use crate::policy::NetPolicy;

/// (variable, value, tool): each tool's documented way to work offline.
pub(crate) const OFFLINE_ENV: &[(&str, &str, &str)] = &[
    // npm, npx and pnpm: cache only (`--offline`).
    ("npm_config_offline", "true", "npm"),
    // Yarn 2+ (`enableOfflineMode`).
    ("YARN_ENABLE_OFFLINE_MODE", "1", "yarn"),
    // cargo (`--offline`): resolve and build from what is already fetched.
    ("CARGO_NET_OFFLINE", "true", "cargo"),
    // pip (`--no-index`): only local paths and `--find-links`.
    ("PIP_NO_INDEX", "1", "pip"),
    // uv (`--offline`).
    ("UV_OFFLINE", "1", "uv"),
    // Go: no module proxy, no toolchain download.
    ("GOPROXY", "off", "go"),
    ("GOTOOLCHAIN", "local", "go"),
    // Hugging Face libraries: local cache only.
    ("HF_HUB_OFFLINE", "1", "huggingface"),
];

/// Whether `net` leaves no network at all.
pub(crate) fn is_offline(net: &NetPolicy) -> bool {
    matches!(net, NetPolicy::DenyAll)
}

/// The offline variables for `net` (none when something outside is
/// reachable), set over whatever the caller passed.
pub fn offline_env(net: &NetPolicy) -> Vec<(String, String)> {
    if !is_offline(net) {
        return Vec::new();
    }
    OFFLINE_ENV
        .iter()
        .map(|(k, v, _)| ((*k).to_string(), (*v).to_string()))
        .collect()
}

/// The report note saying which tools were told.
pub(crate) fn offline_note() -> String {
    let mut tools: Vec<&str> = OFFLINE_ENV.iter().map(|(_, _, t)| *t).collect();
    tools.dedup();
    format!(
        "net: no network, so package tools are told they are offline through their own \
         settings ({}: {}), to fail at once instead of retrying",
        tools.join(", "),
        OFFLINE_ENV
            .iter()
            .map(|(k, v, _)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_policy_without_network_is_offline() {
        assert!(!offline_env(&NetPolicy::DenyAll).is_empty());
        assert!(offline_env(&NetPolicy::AllowLoopback).is_empty());
        assert!(offline_env(&NetPolicy::AllowOutbound).is_empty());
        assert!(offline_env(&NetPolicy::AllowAll).is_empty());
    }
}
