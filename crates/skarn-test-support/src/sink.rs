//! [`CountingSink`]: a TCP upstream on loopback that reads every
//! connection to its end and counts what it really received (the outside
//! view of a proxy's byte limits).

use std::io::Read;
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Reads every accepted connection to its end, counting connections and
/// bytes. Its threads live until the test process ends.
pub struct CountingSink {
    /// The port it listens on (127.0.0.1).
    pub port: u16,
    accepted: Arc<AtomicU64>,
    closed: Arc<AtomicU64>,
    bytes: Arc<AtomicU64>,
}

impl CountingSink {
    /// Listen on an unused loopback port.
    pub fn start() -> CountingSink {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind the sink");
        let port = l.local_addr().expect("sink address").port();
        let counters = || Arc::new(AtomicU64::new(0));
        let (accepted, closed, bytes) = (counters(), counters(), counters());
        let (a, c, b) = (accepted.clone(), closed.clone(), bytes.clone());
        std::thread::spawn(move || {
            for mut s in l.incoming().flatten() {
                a.fetch_add(1, Ordering::SeqCst);
                let (c, b) = (c.clone(), b.clone());
                std::thread::spawn(move || {
                    let mut buf = [0u8; 16 * 1024];
                    while let Ok(n @ 1..) = s.read(&mut buf) {
                        b.fetch_add(n as u64, Ordering::SeqCst);
                    }
                    c.fetch_add(1, Ordering::SeqCst);
                });
            }
        });
        CountingSink {
            port,
            accepted,
            closed,
            bytes,
        }
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> u64 {
        self.accepted.load(Ordering::SeqCst)
    }

    /// Bytes received once `connections` connections have been accepted
    /// and every accepted connection has ended. The count is needed: the
    /// kernel completes a handshake before this sink's `accept` returns,
    /// so a proxy may have connected, and even finished, while `accepted`
    /// is still behind. (The 60-second bound guards against a hang; it is
    /// not a timing check.)
    pub fn settled_bytes(&self, connections: u64) -> u64 {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.accepted() < connections || self.closed.load(Ordering::SeqCst) < self.accepted()
        {
            assert!(
                Instant::now() < deadline,
                "upstream connections never arrived or never ended"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        self.bytes.load(Ordering::SeqCst)
    }
}
