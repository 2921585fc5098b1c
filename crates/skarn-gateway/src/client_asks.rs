//! Bounds on what downstream servers ask of the client (sampling,
//! elicitation and roots requests): per server, at most a few waiting for the client
//! at once and at most so many a minute; further ones are refused at once
//! with an error that says why. The timeout of each request lives in the
//! relay (it needs the SDK's request handle).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::config::GatewayConfig;
use crate::sync_util::lock;

/// The limits, from `[gateway]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AskLimits {
    /// `max_client_requests_in_flight`.
    pub in_flight: usize,
    /// `client_requests_per_minute`.
    pub per_minute: u32,
    /// `client_request_timeout`.
    pub timeout: Duration,
    /// `client_requests_from_idle_servers`.
    pub from_idle: bool,
}

impl Default for AskLimits {
    fn default() -> Self {
        AskLimits::from_config(&GatewayConfig::default())
    }
}

impl AskLimits {
    pub fn from_config(g: &GatewayConfig) -> AskLimits {
        AskLimits {
            in_flight: g.max_client_requests_in_flight,
            per_minute: g.client_requests_per_minute,
            timeout: Duration::from_secs_f64(g.client_request_timeout),
            from_idle: g.client_requests_from_idle_servers,
        }
    }
}

#[derive(Debug, Default)]
struct Server {
    in_flight: usize,
    window: Option<Instant>,
    sent: u32,
}

/// Why a request was refused (the message goes to the server).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error(
        "the gateway refused this {what} request: this server already has {n} requests (sampling, elicitation, roots) waiting for the client (gateway.max_client_requests_in_flight = {n})"
    )]
    InFlight { what: &'static str, n: usize },
    #[error(
        "the gateway refused this {what} request: this server sent more than {n} requests for the client (sampling, elicitation, roots) in the last minute (gateway.client_requests_per_minute = {n})"
    )]
    Rate { what: &'static str, n: u32 },
}

/// The counts of every server.
#[derive(Debug, Default)]
pub struct AskGate {
    limits: AskLimits,
    servers: Arc<Mutex<HashMap<usize, Server>>>,
}

/// One admitted request: its server's in-flight count drops when this does.
#[derive(Debug)]
pub struct AskPermit {
    server: usize,
    servers: Arc<Mutex<HashMap<usize, Server>>>,
}

impl Drop for AskPermit {
    fn drop(&mut self) {
        if let Some(s) = lock(&self.servers).get_mut(&self.server) {
            s.in_flight = s.in_flight.saturating_sub(1);
        }
    }
}

impl AskGate {
    pub fn new(limits: AskLimits) -> AskGate {
        AskGate {
            limits,
            servers: Arc::default(),
        }
    }

    pub fn limits(&self) -> AskLimits {
        self.limits
    }

    /// Admit one `what` request of `server` at `now`, or say why not. A
    /// refused request does not count against the rate.
    pub fn admit(
        &self,
        server: usize,
        what: &'static str,
        now: Instant,
    ) -> Result<AskPermit, Refused> {
        let mut all = lock(&self.servers);
        let s = all.entry(server).or_default();
        if s.in_flight >= self.limits.in_flight {
            return Err(Refused::InFlight {
                what,
                n: self.limits.in_flight,
            });
        }
        if s.window
            .is_none_or(|w| now.saturating_duration_since(w) >= Duration::from_secs(60))
        {
            s.window = Some(now);
            s.sent = 0;
        }
        if s.sent >= self.limits.per_minute {
            return Err(Refused::Rate {
                what,
                n: self.limits.per_minute,
            });
        }
        s.sent += 1;
        s.in_flight += 1;
        Ok(AskPermit {
            server,
            servers: self.servers.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(in_flight: usize, per_minute: u32) -> AskGate {
        AskGate::new(AskLimits {
            in_flight,
            per_minute,
            timeout: Duration::from_secs(1),
            from_idle: false,
        })
    }

    #[test]
    fn in_flight_is_capped_per_server_and_freed_by_drop() {
        let g = gate(2, 100);
        let t = Instant::now();
        let a = g.admit(0, "sampling", t).unwrap();
        let _b = g.admit(0, "sampling", t).unwrap();
        let e = g.admit(0, "elicitation", t).unwrap_err();
        assert_eq!(
            e,
            Refused::InFlight {
                what: "elicitation",
                n: 2
            }
        );
        assert!(e.to_string().contains("max_client_requests_in_flight"));
        // Another server has its own count.
        let _c = g.admit(1, "sampling", t).unwrap();
        drop(a);
        g.admit(0, "sampling", t).unwrap();
    }

    #[test]
    fn rate_per_minute_window() {
        let g = gate(100, 3);
        let t = Instant::now();
        for _ in 0..3 {
            drop(g.admit(0, "sampling", t).unwrap());
        }
        let e = g
            .admit(0, "sampling", t + Duration::from_secs(59))
            .unwrap_err();
        assert!(matches!(e, Refused::Rate { n: 3, .. }), "{e}");
        assert!(e.to_string().contains("client_requests_per_minute"));
        // Refusals do not count; a new minute starts over.
        drop(g.admit(0, "sampling", t + Duration::from_secs(60)).unwrap());
        drop(g.admit(1, "sampling", t).unwrap());
    }
}
