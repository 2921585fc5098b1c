//! The state the two directions of one relayed connection share: when
//! traffic last passed, and the signal that one direction ended it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// What the two directions of one connection share: the time of the last
/// traffic and the signal that one of them ended the connection.
pub(crate) struct Link {
    start: Instant,
    last: AtomicU64,
    stop: AtomicBool,
    pub(crate) wake: Notify,
}

impl Link {
    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
    pub(crate) fn touch(&self) {
        self.last
            .store(self.start.elapsed().as_millis() as u64, Ordering::Relaxed);
    }
    pub(crate) fn idle_for(&self) -> Duration {
        let last = Duration::from_millis(self.last.load(Ordering::Relaxed));
        self.start.elapsed().saturating_sub(last)
    }
    pub(crate) fn end(&self) {
        self.stop.store(true, Ordering::Relaxed);
        // One permit for the other direction, kept if it is not waiting yet.
        self.wake.notify_one();
    }
}

impl Link {
    /// A link whose last traffic is now.
    pub(crate) fn new() -> Link {
        Link {
            start: Instant::now(),
            last: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            wake: Notify::new(),
        }
    }
}
