//! The proxy's state and its one way out: rules, resolver, bounds,
//! counters and the refusal log, and [`Proxy::open_with`], which decides,
//! resolves, checks every address and connects from this namespace.
//! Serving connections is `server.rs`'s job.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpStream;

use crate::resolve::Resolver;
use crate::rules::{Denial, Rules, Target};
use crate::stats::Stats;

/// Bounds of one proxy.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Connections carried at once, HTTP and SOCKS5 together (more wait
    /// in the listening sockets' queues until one ends).
    pub max_connections: usize,
    /// Time to connect upstream (and to resolve).
    pub connect_timeout: Duration,
    /// A connection with no traffic either way this long is closed; also
    /// the time a client has to send its request head.
    pub idle_timeout: Duration,
    /// Bytes carried in total (both directions, all connections, the
    /// request head's trailing bytes included), taken before they are
    /// written: a chunk that would cross it is cut to fit and its
    /// connection closed; new connections are then refused.
    pub max_total_bytes: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 256,
            connect_timeout: Duration::from_secs(15),
            idle_timeout: Duration::from_secs(300),
            max_total_bytes: None,
        }
    }
}

/// Listening sockets to serve (already bound and listening).
#[derive(Debug, Default)]
pub struct Listeners {
    /// HTTP proxy (CONNECT and absolute-form plain HTTP).
    pub http: Option<std::net::TcpListener>,
    /// SOCKS5 proxy (no authentication, CONNECT only).
    pub socks: Option<std::net::TcpListener>,
}

/// Where refusals are written (one line each).
pub type DenialLog = Arc<dyn Fn(&str) + Send + Sync>;

/// A proxy: rules, resolver, bounds and counters.
pub struct Proxy {
    pub(crate) rules: Rules,
    pub(crate) resolver: Resolver,
    pub(crate) limits: Limits,
    pub(crate) stats: Arc<Stats>,
    pub(crate) secrets: Option<Arc<crate::intercept::Interceptor>>,
    pub(crate) log: Option<DenialLog>,
    pub(crate) audit: Option<crate::audit::AuditSink>,
}

pub(crate) type Shared = Proxy;

/// Why a destination could not be opened.
pub(crate) enum OpenError {
    Denied(Denial),
    Failed(String),
    /// A tunnel that would not be scrubbed, to a host a secret is bound
    /// to (by name, by address, or by sharing an address with it):
    /// nothing was connected.
    BoundHost,
}

impl Proxy {
    /// A proxy deciding with `rules`; refusals are written to stderr as
    /// `skarn: net: denied HOST:PORT (REASON)`.
    pub fn new(rules: Rules, resolver: Resolver, limits: Limits) -> Proxy {
        Proxy {
            rules,
            resolver,
            limits,
            stats: Arc::new(Stats::default()),
            secrets: None,
            log: Some(Arc::new(|l: &str| {
                use std::io::Write;
                let _ = writeln!(std::io::stderr(), "{l}");
            })),
            audit: None,
        }
    }

    /// Also send every use and refusal of a secret and every refused
    /// destination to `sink`, as records (atk27h F4: the gateway's audit
    /// channel, which the sandboxed program does not hold).
    pub fn with_audit(mut self, sink: Option<crate::audit::AuditSink>) -> Proxy {
        self.audit = sink;
        self
    }

    /// Replace (or, with `None`, silence) the refusal log.
    pub fn with_log(mut self, log: Option<DenialLog>) -> Proxy {
        self.log = log;
        self
    }

    /// Terminate TLS for the hosts `ic`'s secrets are bound to and put
    /// their values into the requests that may carry them.
    pub fn with_secrets(mut self, ic: crate::intercept::Interceptor) -> Proxy {
        self.secrets = Some(Arc::new(ic));
        self
    }

    /// Record (and log) one use or refusal of a secret: its name, the
    /// destination, method and path, never the value. Each key is logged
    /// once when used, every time when refused.
    pub(crate) fn secret_event(
        &self,
        name: &str,
        dest: &str,
        method: &str,
        path: &str,
        refused: Option<&str>,
    ) {
        let method = printable(method);
        let path: String = printable(path).chars().take(200).collect();
        let first = self.stats.secret(
            name,
            dest,
            &method,
            &path,
            refused.map(|w| w.chars().take(300).collect()),
        );
        if refused.is_none() && !first {
            return;
        }
        let rec = crate::audit::AuditRecord::Secret {
            name: name.to_owned(),
            dest: printable(dest),
            method,
            path,
            refused: refused.map(|w| w.chars().take(300).collect()),
        };
        if let Some(log) = &self.log {
            log(&rec.text());
        }
        if let Some(audit) = &self.audit {
            audit(&rec);
        }
    }

    /// The live counters.
    pub fn stats(&self) -> Arc<Stats> {
        self.stats.clone()
    }

    /// Record and log a refusal.
    pub(crate) fn deny(&self, target: &str, port: u16, d: &Denial) {
        let key = format!("{}:{port}", printable(target));
        let why: String = d.to_string().chars().take(300).collect();
        self.stats.denied(&key, &why);
        let rec = crate::audit::AuditRecord::Denied {
            dest: key,
            reason: why,
        };
        if let Some(log) = &self.log {
            log(&rec.text());
        }
        if let Some(audit) = &self.audit {
            audit(&rec);
        }
    }

    /// Refuse new connections once the byte bound is used up.
    fn check_budget(&self) -> Result<(), Denial> {
        match self.limits.max_total_bytes {
            Some(max) if self.stats.spent(Some(max)) => {
                self.stats.hit_limit();
                Err(Denial::ByteLimit(max))
            }
            _ => Ok(()),
        }
    }

    /// Decide, resolve, check every address, connect to a checked one.
    /// With `plain` (a tunnel whose answers are not
    /// scrubbed), a destination that is a host a secret is bound to, by
    /// any of its resolved addresses, is not connected
    /// ([`OpenError::BoundHost`]): the addresses checked are the ones
    /// connected to, so a name cannot resolve differently in between.
    pub(crate) async fn open_with(
        &self,
        t: &Target,
        port: u16,
        plain: bool,
    ) -> Result<(TcpStream, String), OpenError> {
        let shown = t.to_string();
        let refuse = |d: Denial| {
            self.deny(&shown, port, &d);
            OpenError::Denied(d)
        };
        self.rules.check_target(t, port).map_err(refuse)?;
        self.check_budget().map_err(refuse)?;
        let addrs: Vec<IpAddr> = match t {
            Target::Ip(ip) => vec![*ip],
            Target::Name(n) => {
                let r = tokio::time::timeout(self.limits.connect_timeout, self.resolver.lookup(n));
                match r.await {
                    Ok(Ok(a)) if !a.is_empty() => a,
                    Ok(Ok(_)) => return Err(OpenError::Failed("no address".into())),
                    Ok(Err(e)) => return Err(OpenError::Failed(format!("cannot resolve: {e}"))),
                    Err(_) => return Err(OpenError::Failed("resolving timed out".into())),
                }
            }
        };
        if plain && self.shares_bound_host(t, &addrs, port).await {
            return Err(OpenError::BoundHost);
        }
        let mut first_denial = None;
        let mut ok = Vec::new();
        for ip in addrs {
            match self.rules.check_addr(ip, port) {
                Ok(()) => ok.push(ip),
                Err(d) => {
                    first_denial.get_or_insert(d);
                }
            }
        }
        if ok.is_empty() {
            return Err(refuse(first_denial.unwrap_or(Denial::NotListed)));
        }
        let mut last = String::new();
        for ip in ok {
            let sa = SocketAddr::new(ip, port);
            match tokio::time::timeout(self.limits.connect_timeout, TcpStream::connect(sa)).await {
                Ok(Ok(s)) => {
                    // The budget may have run out while connecting.
                    self.check_budget().map_err(refuse)?;
                    let _ = s.set_nodelay(true);
                    let key = format!("{shown}:{port}");
                    self.stats.connected(&key);
                    return Ok((s, key));
                }
                Ok(Err(e)) => last = e.to_string(),
                Err(_) => last = "connect timed out".into(),
            }
        }
        Err(OpenError::Failed(last))
    }
}

/// A requested host as the sandboxed command sent it, made safe for a
/// terminal line: control and non-ASCII bytes become `?`, at most 255.
pub(crate) fn printable(s: &str) -> String {
    s.chars()
        .take(255)
        .map(|c| if c.is_ascii_graphic() { c } else { '?' })
        .collect()
}
