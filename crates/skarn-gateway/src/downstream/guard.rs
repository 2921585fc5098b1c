//! Bounds on what one downstream connection can make the gateway hold,
//! enforced in a wrapper around its transport (stdio or HTTP), the one
//! place that sees every message both ways:
//!
//! - requests the server sends (ping included, which rmcp answers by
//!   itself), at most `server_requests_per_second` in any one-second
//!   window;
//! - messages to the server waiting to be written (rmcp writes each one in
//!   its own task, so a server that does not read makes them pile up), at
//!   most `max_pending_server_writes`.
//!
//! Past either the server is cut off: one line on stderr, its process
//! group killed (which also fails the pending writes), its input no
//! longer read (so rmcp's service ends), and the cause kept in the
//! [`Tripwire`] for its health and its callers.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rmcp::RoleClient;
use rmcp::model::{JsonRpcMessage, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use crate::config::GatewayConfig;

/// What every cause of a cut-off starts with.
pub const CUT_OFF: &str = "cut off by the gateway";

/// The bounds, from `[gateway]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GuardLimits {
    /// `server_requests_per_second`.
    pub requests_per_second: u32,
    /// `max_pending_server_writes`.
    pub pending_writes: usize,
}

impl Default for GuardLimits {
    fn default() -> Self {
        GuardLimits::from_config(&GatewayConfig::default())
    }
}

impl GuardLimits {
    pub fn from_config(g: &GatewayConfig) -> GuardLimits {
        GuardLimits {
            requests_per_second: g.server_requests_per_second,
            pending_writes: g.max_pending_server_writes,
        }
    }
}

/// Shared by a guarded transport and its connection: the writes pending
/// and, once cut off, why.
#[derive(Debug)]
pub struct Tripwire {
    pending: AtomicUsize,
    cause: OnceLock<String>,
    /// Progress notifications received from the server, in wire order
    /// (rmcp hands each to a task of its own, which runs later).
    progress_in: AtomicU64,
    /// Progress notifications the connection's handler has dealt with.
    progress_done: AtomicU64,
    /// The lowest count a waiter in [`Tripwire::progress_settled`] waits
    /// for (`u64::MAX`: none), so that the handler wakes waiters only
    /// when one can be done, not for every notification of a flood.
    progress_want: AtomicU64,
    /// Told when `progress_done` reaches `progress_want`.
    progress_told: tokio::sync::Notify,
}

impl Default for Tripwire {
    fn default() -> Self {
        Tripwire {
            pending: AtomicUsize::new(0),
            cause: OnceLock::new(),
            progress_in: AtomicU64::new(0),
            progress_done: AtomicU64::new(0),
            progress_want: AtomicU64::new(u64::MAX),
            progress_told: tokio::sync::Notify::new(),
        }
    }
}

impl Tripwire {
    /// Progress notifications received so far: when an answer arrives,
    /// every progress the server sent before it is counted here.
    pub fn progress_received(&self) -> u64 {
        self.progress_in.load(Ordering::Acquire)
    }

    /// The handler has dealt with one more progress notification.
    pub fn progress_handled(&self) {
        // SeqCst pairs with the waiter's: either it sees this count or
        // this sees its want.
        let done = self.progress_done.fetch_add(1, Ordering::SeqCst) + 1;
        if done >= self.progress_want.load(Ordering::SeqCst) {
            self.progress_want.store(u64::MAX, Ordering::SeqCst);
            self.progress_told.notify_waiters();
        }
    }

    /// Wait until `received` progress notifications have been handled, at
    /// most until `deadline`; true when they have.
    pub async fn progress_settled(&self, received: u64, deadline: tokio::time::Instant) -> bool {
        loop {
            let told = self.progress_told.notified();
            tokio::pin!(told);
            // Registered before looking, so one handled in between is not
            // missed.
            told.as_mut().enable();
            self.progress_want.fetch_min(received, Ordering::SeqCst);
            if self.progress_done.load(Ordering::SeqCst) >= received {
                return true;
            }
            if tokio::time::timeout_at(deadline, told).await.is_err() {
                return false;
            }
        }
    }

    /// Why the connection was cut off, if it was.
    pub fn cause(&self) -> Option<&str> {
        self.cause.get().map(String::as_str)
    }
}

/// Counts one write as pending until dropped (written, failed or
/// abandoned).
struct Pending(Arc<Tripwire>);

impl Drop for Pending {
    fn drop(&mut self) {
        self.0.pending.fetch_sub(1, Ordering::AcqRel);
    }
}

/// What to do when the server is cut off (kill its process group).
pub type OnTrip = Box<dyn FnOnce() + Send>;

/// A transport with the bounds above.
pub struct Guarded<T> {
    inner: T,
    alias: String,
    limits: GuardLimits,
    wire: Arc<Tripwire>,
    on_trip: Option<OnTrip>,
    window: Option<Instant>,
    requests: u32,
}

impl<T> Guarded<T> {
    /// `inner` guarded, reporting to `wire` (made before the connection's
    /// handler, which counts the progress it handles there too).
    pub fn new(
        inner: T,
        alias: &str,
        limits: GuardLimits,
        on_trip: Option<OnTrip>,
        wire: Arc<Tripwire>,
    ) -> Guarded<T> {
        Guarded {
            inner,
            alias: alias.to_owned(),
            limits,
            wire,
            on_trip,
            window: None,
            requests: 0,
        }
    }

    /// Cut the server off (once): keep the cause, say so on stderr, run
    /// `on_trip`.
    fn trip(&mut self, why: String) {
        let cause = format!("{CUT_OFF}: {why}");
        if self.wire.cause.set(cause.clone()).is_ok() {
            tracing::warn!(server = %self.alias, "{cause}");
            if let Some(f) = self.on_trip.take() {
                f();
            }
        }
    }

    /// Count one request from the server received at `now`; false when it
    /// is over the budget.
    fn admit_request(&mut self, now: Instant) -> bool {
        if self
            .window
            .is_none_or(|w| now.saturating_duration_since(w) >= Duration::from_secs(1))
        {
            self.window = Some(now);
            self.requests = 0;
        }
        self.requests += 1;
        self.requests <= self.limits.requests_per_second
    }
}

impl<T> Transport<RoleClient> for Guarded<T>
where
    T: Transport<RoleClient>,
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let n = self.wire.pending.fetch_add(1, Ordering::AcqRel) + 1;
        let pending = Pending(self.wire.clone());
        if n > self.limits.pending_writes {
            self.trip(format!(
                "more than {} messages to it were waiting to be written because it does not read them (gateway.max_pending_server_writes = {})",
                self.limits.pending_writes, self.limits.pending_writes
            ));
        }
        let send = self.inner.send(item);
        async move {
            let _pending = pending;
            send.await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        if self.wire.cause().is_some() {
            return None;
        }
        let m = self.inner.receive().await?;
        if matches!(m, JsonRpcMessage::Request(_)) && !self.admit_request(Instant::now()) {
            self.trip(format!(
                "it sent more than {} requests in one second (gateway.server_requests_per_second = {})",
                self.limits.requests_per_second, self.limits.requests_per_second
            ));
            return None;
        }
        if let JsonRpcMessage::Notification(n) = &m
            && matches!(n.notification, ServerNotification::ProgressNotification(_))
        {
            self.wire.progress_in.fetch_add(1, Ordering::AcqRel);
        }
        Some(m)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_budget_is_per_one_second_window() {
        let limits = GuardLimits {
            requests_per_second: 3,
            pending_writes: 8,
        };
        let mut g = Guarded::new((), "s", limits, None, Arc::default());
        let t = Instant::now();
        assert!((0..3).all(|_| g.admit_request(t)));
        assert!(!g.admit_request(t + Duration::from_millis(999)));
        assert!(g.admit_request(t + Duration::from_secs(1)));
    }

    #[test]
    fn trip_keeps_the_first_cause_and_runs_on_trip_once() {
        let runs = Arc::new(AtomicUsize::new(0));
        let r = runs.clone();
        let on_trip: OnTrip = Box::new(move || {
            r.fetch_add(1, Ordering::AcqRel);
        });
        let wire = Arc::new(Tripwire::default());
        let mut g = Guarded::new((), "s", GuardLimits::default(), Some(on_trip), wire.clone());
        g.trip("first".into());
        g.trip("second".into());
        assert_eq!(wire.cause(), Some("cut off by the gateway: first"));
        assert_eq!(runs.load(Ordering::Acquire), 1);
    }

    /// The wait is for a count, not a quiet period: handling that starts
    /// late (here 300 ms, longer than the 100 ms the first version of this
    /// wait allowed) is still waited for.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn settling_waits_for_every_received_progress_to_be_handled() {
        let wire = Arc::new(Tripwire::default());
        wire.progress_in.store(3, Ordering::Release);
        let late = {
            let wire = wire.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(300)).await;
                for _ in 0..3 {
                    wire.progress_handled();
                }
            })
        };
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        assert!(
            wire.progress_settled(wire.progress_received(), deadline)
                .await
        );
        assert_eq!(wire.progress_done.load(Ordering::Acquire), 3);
        late.await.unwrap();
        // Never handled: the bound ends the wait, with false.
        let soon = tokio::time::Instant::now() + Duration::from_millis(50);
        assert!(!wire.progress_settled(4, soon).await);
    }
}
