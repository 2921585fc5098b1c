//! What every downstream server of one gateway shares: the start slots
//! (scheduled by [`crate::downstream::starting`]), the relay back to the clients, the
//! per-connection bounds and the configuration file.

use std::sync::Arc;

use tokio::sync::{Semaphore, SemaphorePermit};

use crate::relay::Relay;

/// What every downstream server of one gateway shares.
#[derive(Debug)]
pub struct Shared {
    slots: Semaphore,
    stopped: std::sync::atomic::AtomicBool,
    /// The way back to the connected clients (sampling, elicitation, roots,
    /// logs, progress, resource updates).
    pub relay: Arc<Relay>,
    /// Bounds on what each server's connection may make the gateway hold.
    pub guard: crate::downstream::guard::GuardLimits,
    /// The configuration file (keys each server's state directory).
    pub config_file: Option<std::path::PathBuf>,
}

impl Shared {
    /// `parallel` servers may start at once (at least one).
    pub fn new(parallel: usize, relay: Arc<Relay>) -> Shared {
        Shared {
            slots: Semaphore::new(parallel.max(1)),
            stopped: Default::default(),
            relay,
            guard: Default::default(),
            config_file: None,
        }
    }

    /// Declared in this configuration file.
    pub fn with_config_file(mut self, file: Option<std::path::PathBuf>) -> Shared {
        self.config_file = file.map(|f| std::fs::canonicalize(&f).unwrap_or(f));
        self
    }

    /// With these per-connection bounds.
    pub fn with_guard(mut self, guard: crate::downstream::guard::GuardLimits) -> Shared {
        self.guard = guard;
        self
    }

    /// One start slot per core: starting a server is mostly CPU (an
    /// interpreter loading its modules), so more at once only makes every
    /// one of them slower and risks their start timeouts.
    pub fn by_cores(relay: Arc<Relay>) -> Shared {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Shared::new(cores, relay)
    }

    pub(crate) async fn start_slot(&self) -> Option<SemaphorePermit<'_>> {
        self.slots.acquire().await.ok()
    }

    /// The gateway is shutting down: no more starts or retries.
    pub fn stop(&self) {
        self.stopped
            .store(true, std::sync::atomic::Ordering::Release);
        self.slots.close();
    }

    pub fn stopped(&self) -> bool {
        self.stopped.load(std::sync::atomic::Ordering::Acquire)
    }
}
