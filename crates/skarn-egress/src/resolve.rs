//! Name resolution on the unconfined side (the system resolver), with
//! optional fixed answers for tests.

use std::collections::HashMap;
use std::io;
use std::net::IpAddr;
use std::sync::Arc;

/// Resolves host names to addresses.
#[derive(Debug, Clone, Default)]
pub struct Resolver {
    overrides: Arc<HashMap<String, Vec<IpAddr>>>,
}

impl Resolver {
    /// The system resolver (`getaddrinfo` through tokio).
    pub fn system() -> Resolver {
        Resolver::default()
    }

    /// A resolver answering `name` with `addrs` and everything else from the
    /// system (for tests: an allowed name that points at a private address).
    pub fn with_override(mut self, name: &str, addrs: Vec<IpAddr>) -> Resolver {
        Arc::make_mut(&mut self.overrides).insert(name.to_ascii_lowercase(), addrs);
        self
    }

    /// All addresses of `name`, in the resolver's order, without duplicates.
    pub async fn lookup(&self, name: &str) -> io::Result<Vec<IpAddr>> {
        if let Some(a) = self.overrides.get(name) {
            return Ok(a.clone());
        }
        let mut out: Vec<IpAddr> = Vec::new();
        for sa in tokio::net::lookup_host((name, 0)).await? {
            if !out.contains(&sa.ip()) {
                out.push(sa.ip());
            }
        }
        Ok(out)
    }
}
