//! What the gateway knows about one server's sandbox: whether it is
//! confined (and if not, why) and which hosts its egress proxy refused,
//! each with the configuration line that would allow it.
//!
//! Refusals arrive as the proxy's records on its audit pipe
//! ([`crate::proxy_audit`]), which the server does not hold: a line the
//! server prints on its stderr adds nothing here (atk27h F4).

use std::sync::Mutex;

use crate::sync_util::lock;

use serde::Serialize;

/// Most distinct refused hosts kept per server.
const MAX_DENIALS: usize = 32;

/// One refused destination.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Denial {
    /// `host:port` as requested.
    pub host: String,
    /// Why (the proxy's reason).
    pub reason: String,
    /// How many times.
    pub count: u64,
    /// The line to put under `[servers.<alias>.sandbox]` to allow it.
    pub allow_line: String,
}

/// The sandbox part of a server's state.
#[derive(Debug, Default)]
pub struct SandboxState {
    /// `sandboxed (net deny)`, `not sandboxed: ...`, or empty for HTTP
    /// servers and servers not started yet.
    mode: Mutex<String>,
    denied: Mutex<Vec<Denial>>,
}

impl SandboxState {
    pub fn set_mode(&self, mode: impl Into<String>) {
        *lock(&self.mode) = mode.into();
    }

    /// `sandboxed (...)`, `not sandboxed: ...`, or empty.
    pub fn mode(&self) -> String {
        lock(&self.mode).clone()
    }

    /// Refused hosts so far.
    pub fn denials(&self) -> Vec<Denial> {
        lock(&self.denied).clone()
    }

    /// Record a refusal; true when the host is new (log it then).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub fn record(&self, host: &str, reason: &str, allow_line: String) -> bool {
        let mut d = lock(&self.denied);
        if let Some(e) = d.iter_mut().find(|e| e.host == host) {
            e.count += 1;
            e.reason = reason.to_owned();
            return false;
        }
        if d.len() >= MAX_DENIALS {
            return false;
        }
        d.push(Denial {
            host: host.to_owned(),
            reason: reason.to_owned(),
            count: 1,
            allow_line,
        });
        true
    }
}

/// The allow pattern for `host:port`: the host alone for ports 80 and 443
/// (a pattern without a port means those two), else `host:port`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub fn pattern_for(host_port: &str) -> String {
    match host_port.rsplit_once(':') {
        Some((h, "443" | "80")) => h.to_owned(),
        _ => host_port.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_records() {
        assert_eq!(pattern_for("evil.test:443"), "evil.test");
        assert_eq!(pattern_for("evil.test:8443"), "evil.test:8443");
        assert_eq!(pattern_for("[::1]:80"), "[::1]");
        let s = SandboxState::default();
        assert!(s.record("a:443", "r", "net = \"allow:a\"".into()));
        assert!(!s.record("a:443", "r", "x".into()));
        assert_eq!(s.denials()[0].count, 2);
    }
}
