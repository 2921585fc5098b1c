//! What the gateway knows about one server's sandbox: whether it is
//! confined (and if not, why) and which hosts its egress proxy refused,
//! each with the configuration line that would allow it.
//!
//! Refusals arrive on the server's stderr as the proxy's
//! `skarn: net: denied HOST:PORT (REASON)` lines (the proxy shares the
//! helper's stderr). A server can print such a line itself: that only
//! adds a false entry to its own state, never grants anything.

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

/// Parse the proxy's refusal line: `(host:port, reason)`.
pub fn parse_denial(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim().strip_prefix("skarn: net: denied ")?;
    let (host, reason) = match rest.split_once(" (") {
        Some((h, r)) => (h, r.strip_suffix(')').unwrap_or(r)),
        None => (rest, ""),
    };
    (!host.is_empty()).then_some((host, reason))
}

/// The allow pattern for `host:port`: the host alone for ports 80 and 443
/// (a pattern without a port means those two), else `host:port`.
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
        assert_eq!(
            parse_denial("skarn: net: denied evil.test:443 (not in the allow list)"),
            Some(("evil.test:443", "not in the allow list"))
        );
        assert_eq!(parse_denial("hello"), None);
        assert_eq!(pattern_for("evil.test:443"), "evil.test");
        assert_eq!(pattern_for("evil.test:8443"), "evil.test:8443");
        assert_eq!(pattern_for("[::1]:80"), "[::1]");
        let s = SandboxState::default();
        assert!(s.record("a:443", "r", "net = \"allow:a\"".into()));
        assert!(!s.record("a:443", "r", "x".into()));
        assert_eq!(s.denials()[0].count, 2);
    }
}
