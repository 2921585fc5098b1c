//! Per-host counters, turned into an [`EgressReport`] at the end.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

/// Traffic to one allowed destination (`host:port`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostUsage {
    /// `host:port` as requested.
    pub host: String,
    /// Connections made.
    pub connections: u64,
    /// Bytes sent by the command.
    pub bytes_out: u64,
    /// Bytes received by the command.
    pub bytes_in: u64,
}

/// Refusals for one requested destination.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostDenial {
    /// `host:port` as requested.
    pub host: String,
    /// How many requests were refused.
    pub count: u64,
    /// The reason of the last refusal.
    pub reason: String,
}

/// Uses and refusals of one secret for one destination, method and path.
/// Never holds the value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecretUse {
    /// The secret's configured name.
    pub secret: String,
    /// `host:port`.
    pub host: String,
    /// HTTP method.
    pub method: String,
    /// URL path (no query).
    pub path: String,
    /// Requests it was put into.
    pub sent: u64,
    /// Requests refused because they carried it where it may not go.
    pub refused: u64,
    /// The reason of the last refusal.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

/// What the proxy carried and refused during one run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EgressReport {
    /// Allowed destinations with their traffic.
    pub allowed: Vec<HostUsage>,
    /// Refused destinations.
    pub denied: Vec<HostDenial>,
    /// Whether the total-bytes bound cut a connection or refused one.
    #[serde(default)]
    pub byte_limit_hit: bool,
    /// Secrets put into requests or refused (bound secrets only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<SecretUse>,
}

/// Distinct hosts counted one by one in each table; the rest are folded
/// into [`OTHER_HOSTS`], so a command asking for endless distinct names
/// cannot grow the proxy's memory (which lies outside the run's limits).
pub const MAX_HOSTS: usize = 512;

/// The key of the folded entry.
pub const OTHER_HOSTS: &str = "(other hosts)";

/// `key` itself when it is counted already or there is room, else the
/// folded entry.
fn bounded_key<'a, V>(m: &BTreeMap<String, V>, key: &'a str) -> &'a str {
    if m.contains_key(key) || m.len() < MAX_HOSTS {
        key
    } else {
        OTHER_HOSTS
    }
}

/// Live counters shared by the proxy's connections.
#[derive(Debug, Default)]
pub struct Stats {
    allowed: Mutex<BTreeMap<String, HostUsage>>,
    denied: Mutex<BTreeMap<String, HostDenial>>,
    total: AtomicU64,
    limit_hit: AtomicU64,
    secrets: Mutex<BTreeMap<String, SecretUse>>,
}

impl Stats {
    pub(crate) fn connected(&self, key: &str) {
        let mut m = self.allowed.lock().unwrap_or_else(|e| e.into_inner());
        let key = bounded_key(&m, key);
        let e = m.entry(key.to_string()).or_default();
        e.host = key.to_string();
        e.connections += 1;
    }

    /// Take up to `want` bytes from the budget of `max` bytes in total
    /// (`None`: no bound); returns how many may be forwarded. The check and
    /// the count are one atomic step, so connections racing for the last
    /// bytes never carry more than `max` between them.
    pub(crate) fn take(&self, want: u64, max: Option<u64>) -> u64 {
        let Some(max) = max else {
            self.total.fetch_add(want, Ordering::Relaxed);
            return want;
        };
        let mut used = self.total.load(Ordering::Relaxed);
        loop {
            let grant = want.min(max.saturating_sub(used));
            if grant == 0 {
                return 0;
            }
            match self.total.compare_exchange_weak(
                used,
                used + grant,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return grant,
                Err(now) => used = now,
            }
        }
    }

    /// Whether nothing is left of a budget of `max` bytes.
    pub(crate) fn spent(&self, max: Option<u64>) -> bool {
        max.is_some_and(|m| self.total_bytes() >= m)
    }

    /// Count bytes already taken with [`Stats::take`] for `key`.
    pub(crate) fn bytes(&self, key: &str, out: u64, inn: u64) {
        let mut m = self.allowed.lock().unwrap_or_else(|e| e.into_inner());
        let key = bounded_key(&m, key);
        if let Some(e) = m.get_mut(key) {
            e.bytes_out += out;
            e.bytes_in += inn;
        }
    }

    pub(crate) fn denied(&self, key: &str, reason: &str) {
        let mut m = self.denied.lock().unwrap_or_else(|e| e.into_inner());
        let key = bounded_key(&m, key);
        let e = m.entry(key.to_string()).or_default();
        e.host = key.to_string();
        e.count += 1;
        e.reason = reason.to_string();
    }

    /// Count a use (`refused` = None) or refusal of a secret; whether the
    /// entry is new.
    pub(crate) fn secret(
        &self,
        name: &str,
        host: &str,
        method: &str,
        path: &str,
        refused: Option<String>,
    ) -> bool {
        let mut m = self.secrets.lock().unwrap_or_else(|e| e.into_inner());
        let full = format!("{name}\n{host}\n{method}\n{path}");
        let key = bounded_key(&m, &full).to_string();
        let new = !m.contains_key(&key);
        let e = m.entry(key.clone()).or_default();
        if key == OTHER_HOSTS {
            e.secret = OTHER_HOSTS.into();
        } else {
            e.secret = name.into();
            e.host = host.into();
            e.method = method.into();
            e.path = path.into();
        }
        match refused {
            Some(why) => {
                e.refused += 1;
                e.reason = why;
            }
            None => e.sent += 1,
        }
        new
    }

    /// Bytes carried so far, both directions.
    pub fn total_bytes(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    pub(crate) fn hit_limit(&self) {
        self.limit_hit.store(1, Ordering::Relaxed);
    }

    /// A snapshot.
    pub fn report(&self) -> EgressReport {
        EgressReport {
            allowed: self
                .allowed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .values()
                .cloned()
                .collect(),
            denied: self
                .denied
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .values()
                .cloned()
                .collect(),
            byte_limit_hit: self.limit_hit.load(Ordering::Relaxed) != 0,
            secrets: self
                .secrets
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .values()
                .cloned()
                .collect(),
        }
    }
}

#[cfg(test)]
mod bound_tests {
    use super::*;

    #[test]
    fn the_budget_is_never_exceeded_across_threads() {
        let s = Stats::default();
        let max = Some(1_000_003);
        let granted: u64 = std::thread::scope(|sc| {
            let hs: Vec<_> = (0..8)
                .map(|_| sc.spawn(|| (0..10_000).map(|_| s.take(64, max)).sum::<u64>()))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(granted, 1_000_003);
        assert_eq!(s.total_bytes(), 1_000_003);
        assert!(s.spent(max));
        assert_eq!(s.take(1, max), 0);
        assert_eq!(s.take(5, None), 5);
    }

    #[test]
    fn distinct_hosts_are_bounded() {
        let s = Stats::default();
        for i in 0..10_000 {
            s.denied(&format!("h{i}.test:443"), "not in the allow list");
        }
        let r = s.report();
        assert_eq!(r.denied.len(), MAX_HOSTS + 1);
        let other = r.denied.iter().find(|d| d.host == OTHER_HOSTS).unwrap();
        assert_eq!(other.count, 10_000 - MAX_HOSTS as u64);
    }
}
