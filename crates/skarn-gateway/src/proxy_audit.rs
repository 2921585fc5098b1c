//! A sandboxed server's network proxy reports to the gateway on a pipe of
//! its own (atk27h F4): each use and refusal of a secret and each refused
//! destination, as [`skarn_egress::AuditRecord`] lines. The server does
//! not hold that pipe (the helper closes its copy once the proxy has it),
//! so what is read here is the proxy's word; the server's stderr, where a
//! hostile server can print anything, is only ever logged as its own
//! (debug level) and no longer read for refusals.
//!
//! Logged with the server's name: a secret sent at `info`, a secret
//! refused and a new refused host at `warn` (with the line that would
//! allow it); never a value (the proxy's records carry none).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use skarn_egress::AuditRecord;

/// The read end of a server's audit pipe.
pub struct AuditPipe(pub std::os::fd::OwnedFd);

/// Who reads a server's audit records, and where they go.
pub struct Watch {
    pub alias: String,
    pub cfg: crate::sandbox_config::SandboxConfig,
    pub state: Arc<crate::sandbox_state::SandboxState>,
    /// The server's last lines (its failure cause names what the proxy
    /// refused last).
    pub tail: Arc<Mutex<VecDeque<String>>>,
}

impl Watch {
    /// Log one record and keep its text in the tail.
    pub fn see(&self, rec: &AuditRecord) {
        let v = |s: &str| crate::text_safe::visible(s);
        let alias = &self.alias;
        match rec {
            AuditRecord::Secret {
                name,
                dest,
                method,
                path,
                refused: None,
            } => tracing::info!(
                server = %alias,
                secret = %v(name),
                host = %v(dest),
                decision = "sent",
                "secret {} sent to {} {} {}",
                v(name),
                v(dest),
                v(method),
                v(path)
            ),
            AuditRecord::Secret {
                name,
                dest,
                method,
                path,
                refused: Some(why),
            } => tracing::warn!(
                server = %alias,
                secret = %v(name),
                host = %v(dest),
                decision = "refused",
                "secret {} refused for {} {} {} ({})",
                v(name),
                v(dest),
                v(method),
                v(path),
                v(why)
            ),
            AuditRecord::Denied { dest, reason } => {
                let (host, reason) = (v(dest), v(reason));
                let pattern = crate::sandbox_state::pattern_for(&host);
                let allow = self.cfg.net_line_allowing(&pattern);
                if self.state.record(&host, &reason, allow.clone()) {
                    tracing::warn!(
                        server = %alias,
                        "network access to {host} denied ({reason}); to allow it, set in \
                         [servers.{alias}.sandbox] ({}): {allow}",
                        self.cfg.at
                    );
                }
            }
        }
        let mut t = self.tail.lock().unwrap_or_else(|e| e.into_inner());
        if t.len() >= 20 {
            t.pop_front();
        }
        t.push_back(crate::sync_util::short(v(&rec.text())));
    }
}

/// Read `pipe` until its end (the proxy and helper are gone), handing each
/// record to `watch`; a line that is no record is skipped.
pub fn spawn_reader(pipe: AuditPipe, watch: Watch) -> Option<tokio::task::JoinHandle<()>> {
    use tokio::io::AsyncBufReadExt;
    let rx = match tokio::net::unix::pipe::Receiver::from_owned_fd(pipe.0) {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(server = %watch.alias, "the network proxy's records cannot be read: {e}");
            return None;
        }
    };
    Some(tokio::spawn(async move {
        let mut r = tokio::io::BufReader::new(rx);
        let mut line: Vec<u8> = Vec::new();
        loop {
            let (n, done, eof) = match r.fill_buf().await {
                Ok([]) | Err(_) => (0, true, true),
                Ok(b) => {
                    let nl = b.iter().position(|&c| c == b'\n');
                    let take = nl.map_or(b.len(), |i| i + 1);
                    let room = (skarn_egress::audit::MAX_LINE + 1).saturating_sub(line.len());
                    line.extend_from_slice(&b[..take.min(room)]);
                    (take, nl.is_some(), false)
                }
            };
            r.consume(n);
            if done {
                if let Some(rec) = AuditRecord::parse(line.trim_ascii_end()) {
                    watch.see(&rec);
                }
                line.clear();
            }
            if eof {
                return;
            }
        }
    }))
}
