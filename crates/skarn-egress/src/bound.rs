//! Whether a destination IS a host a secret is bound to, decided by its
//! addresses rather than by the name it was asked for (attack atk27d F1):
//! an alias, a CNAME, a wildcard-DNS name or an address the bound name's
//! lookup did not return all reach the same server, whose answers (a
//! value it stored) must not come back through a plain tunnel.

use std::net::IpAddr;

use crate::proxy::Proxy;
use crate::rules::Target;

/// At most this many names seen on the TLS-terminating path are kept
/// (the names pattern bindings matched, resolved like exact ones).
const MAX_SEEN: usize = 64;

/// The form addresses are compared in: an IPv4-mapped IPv6 address as
/// its IPv4 address.
fn canon(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        IpAddr::V4(_) => ip,
    }
}

/// This machine: every loopback address (127.0.0.0/8, ::1) and the
/// unspecified ones (a connection to 0.0.0.0 reaches the local host) are
/// one host, whichever of them a server listens on.
fn is_local(ip: IpAddr) -> bool {
    let ip = canon(ip);
    ip.is_loopback() || ip.is_unspecified()
}

/// Whether `a` and `b` reach the same host.
pub(crate) fn same_host(a: IpAddr, b: IpAddr) -> bool {
    canon(a) == canon(b) || (is_local(a) && is_local(b))
}

impl Proxy {
    /// Remember a name the TLS-terminating path served (a name a pattern
    /// binding matched is then resolved like an exact bound name).
    pub(crate) fn saw_bound_name(&self, t: &Target, port: u16) {
        let (Some(ic), Target::Name(n)) = (self.secrets.as_deref(), t) else {
            return;
        };
        let mut seen = ic.seen.lock().unwrap_or_else(|e| e.into_inner());
        if seen.len() < MAX_SEEN && !seen.iter().any(|(s, p)| s == n && *p == port) {
            seen.push((n.clone(), port));
        }
    }

    /// Whether `t:port`, which resolved to `addrs`, is a host a secret is
    /// bound to on that port: by its name or address as written, by one of
    /// its addresses falling in a bound address range, or by sharing an
    /// address with a bound name (every bound name resolved now, all its
    /// addresses; loopback counted as one host). A bound name that cannot
    /// be resolved counts as shared: unknown is not relayed raw.
    pub(crate) async fn shares_bound_host(&self, t: &Target, addrs: &[IpAddr], port: u16) -> bool {
        let Some(ic) = self.secrets.as_deref() else {
            return false;
        };
        if ic.bindings.binds(t, port) {
            return true;
        }
        let local: [IpAddr; 2] = [
            IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
            IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
        ];
        for a in addrs {
            let mut as_written = vec![*a, canon(*a)];
            if is_local(*a) {
                as_written.extend(local);
            }
            if as_written
                .iter()
                .any(|x| ic.bindings.binds(&Target::Ip(*x), port))
            {
                return true;
            }
        }
        let mut names = ic.bindings.exact_names(port);
        {
            let seen = ic.seen.lock().unwrap_or_else(|e| e.into_inner());
            names.extend(
                seen.iter()
                    .filter(|(_, p)| *p == port)
                    .map(|(n, _)| n.clone()),
            );
        }
        names.sort();
        names.dedup();
        for name in names {
            let r = tokio::time::timeout(self.limits.connect_timeout, self.resolver.lookup(&name));
            match r.await {
                Ok(Ok(bound)) => {
                    if bound
                        .iter()
                        .any(|b| addrs.iter().any(|a| same_host(*a, *b)))
                    {
                        return true;
                    }
                }
                _ => return true,
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_one_host_and_mapped_addresses_are_their_v4_form() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert!(same_host(ip("127.0.0.1"), ip("::1")));
        assert!(same_host(ip("127.0.0.2"), ip("0.0.0.0")));
        assert!(same_host(ip("::ffff:10.0.0.1"), ip("10.0.0.1")));
        assert!(!same_host(ip("10.0.0.1"), ip("10.0.0.2")));
        assert!(!same_host(ip("10.0.0.1"), ip("127.0.0.1")));
    }
}
