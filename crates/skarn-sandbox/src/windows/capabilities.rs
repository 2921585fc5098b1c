//! Network access of the container, as capability SIDs: AppContainer
//! network isolation lets a process use the network only through the
//! capabilities in its token.

use serde::{Deserialize, Serialize};

use crate::policy::NetPolicy;

/// One capability granted to the container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capability {
    /// Capability name.
    pub name: String,
    /// Its well-known SID.
    pub sid: String,
}

/// `internetClient`: outgoing connections to the internet.
pub(crate) const INTERNET_CLIENT: (&str, &str) = ("internetClient", "S-1-15-3-1");
/// `internetClientServer`: incoming and outgoing internet connections.
pub(crate) const INTERNET_CLIENT_SERVER: (&str, &str) = ("internetClientServer", "S-1-15-3-2");
/// `privateNetworkClientServer`: home and work networks, both directions.
pub(crate) const PRIVATE_NETWORK: (&str, &str) = ("privateNetworkClientServer", "S-1-15-3-3");

/// Capabilities and report notes for a network policy. Every policy is
/// either enforced as asked or made stricter (never looser), and the note
/// says which.
pub(crate) fn for_net(net: &NetPolicy) -> (Vec<Capability>, Vec<String>) {
    let caps = |l: &[(&str, &str)]| {
        l.iter()
            .map(|(n, s)| Capability {
                name: (*n).into(),
                sid: (*s).into(),
            })
            .collect()
    };
    match net {
        NetPolicy::DenyAll => (
            Vec::new(),
            vec!["net deny: the container holds no network capability".into()],
        ),
        NetPolicy::AllowLoopback => (
            Vec::new(),
            vec![
                "net loopback: AppContainer cannot allow loopback only; treated as deny-all \
                 (127.0.0.1 is unreachable too)"
                    .into(),
            ],
        ),
        NetPolicy::AllowOutbound => (
            caps(&[INTERNET_CLIENT]),
            vec![
                "net outbound: capability internetClient (outgoing internet connections); \
                 local-network and loopback addresses stay unreachable, listening is refused"
                    .into(),
            ],
        ),
        NetPolicy::AllowAll => (
            caps(&[INTERNET_CLIENT, INTERNET_CLIENT_SERVER, PRIVATE_NETWORK]),
            vec![
                "net all: capabilities internetClient, internetClientServer, \
                 privateNetworkClientServer; loopback stays unreachable (AppContainer \
                 loopback isolation)"
                    .into(),
            ],
        ),
        NetPolicy::AllowHosts(_) => (
            Vec::new(),
            vec![
                "net allow:...: the allow-list proxy listens on loopback, which an AppContainer \
                 cannot reach; treated as deny-all on Windows"
                    .into(),
            ],
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deny_loopback_and_hosts_hold_no_capability() {
        for n in [
            NetPolicy::DenyAll,
            NetPolicy::AllowLoopback,
            NetPolicy::AllowHosts(Default::default()),
        ] {
            let (c, notes) = for_net(&n);
            assert!(c.is_empty(), "{n:?}");
            assert_eq!(notes.len(), 1);
        }
    }

    #[test]
    fn outbound_is_internet_client_only() {
        let (c, _) = for_net(&NetPolicy::AllowOutbound);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].sid, "S-1-15-3-1");
        let (c, _) = for_net(&NetPolicy::AllowAll);
        assert_eq!(c.len(), 3);
    }
}
