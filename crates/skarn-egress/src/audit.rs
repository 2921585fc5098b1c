//! The proxy's audit records (atk27h F4): each use and refusal of a
//! secret and each refused destination, as one JSON line on a channel of
//! its own, for a caller (the gateway) that must tell the proxy's word
//! from what the sandboxed program prints on its own stderr. Never the
//! value: a record holds the secret's name, the destination, the method
//! and the path (as [`crate::proxy`] made them printable) and the reason.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// One record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AuditRecord {
    /// A secret was put into a request (`refused: None`; once per secret,
    /// destination, method and path), or a request carrying its
    /// placeholder was refused (every time, with why).
    Secret {
        name: String,
        dest: String,
        method: String,
        path: String,
        refused: Option<String>,
    },
    /// A destination the rules refuse (`host:port`, why).
    Denied { dest: String, reason: String },
}

/// Longest line [`AuditRecord::parse`] takes (a record is far shorter:
/// its fields are cut by the proxy).
pub const MAX_LINE: usize = 4096;

impl AuditRecord {
    /// The record as one line (no line break inside: JSON escapes them)
    /// of at most [`MAX_LINE`] bytes: a longer one has each field cut.
    pub fn to_line(&self) -> String {
        let mut s = serde_json::to_string(self).unwrap_or_default();
        if s.len() >= MAX_LINE {
            s = serde_json::to_string(&self.cut(64)).unwrap_or_default();
        }
        s.push('\n');
        s
    }

    /// Each field cut to `n` characters.
    fn cut(&self, n: usize) -> AuditRecord {
        let c = |s: &String| -> String { s.chars().take(n).collect() };
        match self {
            AuditRecord::Secret {
                name,
                dest,
                method,
                path,
                refused,
            } => AuditRecord::Secret {
                name: c(name),
                dest: c(dest),
                method: c(method),
                path: c(path),
                refused: refused.as_ref().map(c),
            },
            AuditRecord::Denied { dest, reason } => AuditRecord::Denied {
                dest: c(dest),
                reason: c(reason),
            },
        }
    }

    /// A line written by [`AuditRecord::to_line`]; `None` for anything
    /// else.
    pub fn parse(line: &[u8]) -> Option<AuditRecord> {
        if line.len() > MAX_LINE {
            return None;
        }
        serde_json::from_slice(line).ok()
    }

    /// The record as the proxy's stderr line reads (`skarn: secret: ...`,
    /// `skarn: net: denied ...`).
    pub fn text(&self) -> String {
        match self {
            AuditRecord::Secret {
                name,
                dest,
                method,
                path,
                refused: Some(why),
            } => format!("skarn: secret: refused {name} for {dest} {method} {path} ({why})"),
            AuditRecord::Secret {
                name,
                dest,
                method,
                path,
                refused: None,
            } => format!("skarn: secret: {name} sent to {dest} {method} {path}"),
            AuditRecord::Denied { dest, reason } => {
                format!("skarn: net: denied {dest} ({reason})")
            }
        }
    }
}

/// Where records go (called from the proxy's tasks; must not block long).
pub type AuditSink = Arc<dyn Fn(&AuditRecord) + Send + Sync>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_as_one_line() {
        let r = AuditRecord::Secret {
            name: "gh".into(),
            dest: "api.example:443".into(),
            method: "GET".into(),
            path: "/a\nb".into(),
            refused: Some("why\r\n".into()),
        };
        let l = r.to_line();
        assert_eq!(l.matches('\n').count(), 1);
        assert_eq!(AuditRecord::parse(l.trim_end().as_bytes()), Some(r.clone()));
        assert!(
            r.text()
                .starts_with("skarn: secret: refused gh for api.example:443 GET")
        );
        assert_eq!(
            AuditRecord::parse(b"skarn: secret: gh sent to x GET /"),
            None
        );
        assert_eq!(AuditRecord::parse(&vec![b' '; MAX_LINE + 1]), None);
        let long = AuditRecord::Denied {
            dest: "\u{1}".repeat(2000),
            reason: "\"".repeat(3000),
        };
        let l = long.to_line();
        assert!(l.len() <= MAX_LINE, "{}", l.len());
        assert!(AuditRecord::parse(l.trim_end().as_bytes()).is_some());
    }
}
