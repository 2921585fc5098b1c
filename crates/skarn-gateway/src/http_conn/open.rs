//! The gateway's open HTTP connections, oldest first: those still being
//! read (pending: their head has not arrived, or no slot is free for them)
//! and those being served, with what it takes to close each.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

/// Whether a connection has carried a request with the right token. The
/// token check (`crate::http`) finds it in the request's extensions and
/// sets it, and so does the look at a new connection's head
/// (`super::head`); a connection never loses it.
#[derive(Debug, Clone, Default)]
pub struct ConnAuth(Arc<AtomicBool>);

impl ConnAuth {
    /// Note that this connection showed the token.
    pub fn authenticated(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
    pub(super) fn is_authenticated(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

struct Conn {
    auth: ConnAuth,
    close: CancellationToken,
    since: Instant,
    pending: bool,
}

#[derive(Default)]
pub(super) struct Open {
    next: u64,
    conns: BTreeMap<u64, Conn>,
}

/// What [`Open::evict`] did.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Evicted {
    /// Closed one connection (its slot comes back as its task ends).
    One,
    /// The oldest unauthenticated connection being served is within its
    /// grace: ask again after this long.
    Wait(Duration),
    /// Every connection being served has shown the token.
    None,
}

impl Open {
    /// A new connection, pending until [`Open::admit`].
    pub(super) fn add(&mut self, auth: ConnAuth, close: CancellationToken, now: Instant) -> u64 {
        let id = self.next;
        self.next += 1;
        self.conns.insert(
            id,
            Conn {
                auth,
                close,
                since: now,
                pending: true,
            },
        );
        id
    }

    /// Close the oldest pending connections that have not shown the token
    /// until at most `cap` are left. A client that has sent its request
    /// head with the token is never among them.
    pub(super) fn shed_pending(&mut self, cap: usize) {
        let waiting: Vec<u64> = self
            .conns
            .iter()
            .filter(|(_, c)| c.pending && !c.auth.is_authenticated())
            .map(|(id, _)| *id)
            .collect();
        for id in waiting.iter().take(waiting.len().saturating_sub(cap)) {
            if let Some(c) = self.conns.remove(id) {
                c.close.cancel();
            }
        }
    }

    /// The connection is served from now on.
    pub(super) fn admit(&mut self, id: u64, now: Instant) {
        if let Some(c) = self.conns.get_mut(&id) {
            c.pending = false;
            c.since = now;
        }
    }

    pub(super) fn remove(&mut self, id: u64) {
        self.conns.remove(&id);
    }

    /// Close the oldest connection being served that has not shown the
    /// token, once it has been served for `grace`.
    pub(super) fn evict(&mut self, now: Instant, grace: Duration) -> Evicted {
        let victim = self
            .conns
            .iter()
            .find(|(_, c)| !c.pending && !c.auth.is_authenticated())
            .map(|(id, c)| (*id, c.since));
        let Some((id, since)) = victim else {
            return Evicted::None;
        };
        let age = now.saturating_duration_since(since);
        if age < grace {
            return Evicted::Wait(grace - age);
        }
        match self.conns.remove(&id) {
            Some(c) => {
                c.close.cancel();
                Evicted::One
            }
            None => Evicted::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_unauthenticated_connections_past_their_grace_are_evicted() {
        let t0 = Instant::now();
        let grace = Duration::from_secs(1);
        let mut open = Open::default();
        let a = ConnAuth::default();
        a.authenticated();
        let (ca, cb) = (CancellationToken::new(), CancellationToken::new());
        let ia = open.add(a, ca.clone(), t0);
        open.admit(ia, t0);
        let ib = open.add(ConnAuth::default(), cb.clone(), t0);
        // Pending connections are not served: not evicted.
        assert_eq!(open.evict(t0, grace), Evicted::None);
        open.admit(ib, t0 + Duration::from_millis(500));
        assert_eq!(
            open.evict(t0 + Duration::from_millis(700), grace),
            Evicted::Wait(Duration::from_millis(800))
        );
        assert!(!cb.is_cancelled());
        assert_eq!(
            open.evict(t0 + Duration::from_millis(1500), grace),
            Evicted::One
        );
        assert!(cb.is_cancelled() && !ca.is_cancelled());
        assert_eq!(
            open.evict(t0 + Duration::from_secs(9), grace),
            Evicted::None
        );
        // With no grace (an authorized client waits), at once.
        let cc = CancellationToken::new();
        let ic = open.add(ConnAuth::default(), cc.clone(), t0);
        open.admit(ic, t0);
        assert_eq!(open.evict(t0, Duration::ZERO), Evicted::One);
        assert!(cc.is_cancelled());
    }

    #[test]
    fn the_oldest_pending_are_shed_but_never_one_that_showed_the_token() {
        let t0 = Instant::now();
        let mut open = Open::default();
        let closes: Vec<CancellationToken> = (0..5).map(|_| CancellationToken::new()).collect();
        let authorized = ConnAuth::default();
        authorized.authenticated();
        for (i, c) in closes.iter().enumerate() {
            let auth = if i == 0 {
                authorized.clone()
            } else {
                ConnAuth::default()
            };
            open.add(auth, c.clone(), t0);
        }
        open.shed_pending(2);
        let shed: Vec<bool> = closes.iter().map(|c| c.is_cancelled()).collect();
        assert_eq!(shed, [false, true, true, false, false]);
    }
}
