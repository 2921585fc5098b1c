//! The proxy running in-process on loopback listeners, stopped by
//! [`Running::report`], which returns its report.

use std::net::TcpListener;
use std::sync::Arc;

use skarn_egress::{EgressReport, Limits, Listeners, Proxy, Resolver, Rules};

/// A proxy serving on a thread of its own.
pub struct Running {
    pub http: u16,
    pub socks: u16,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: Option<std::thread::JoinHandle<EgressReport>>,
}

impl Running {
    /// Stop the proxy; its report.
    pub fn report(mut self) -> EgressReport {
        let _ = self.stop.take().unwrap().send(());
        self.done.take().unwrap().join().unwrap()
    }
}

/// Start a proxy allowing `allow`, on a runtime of `workers` threads (0: a
/// current-thread runtime).
pub fn start_proxy(allow: &[&str], resolver: Resolver, limits: Limits, workers: usize) -> Running {
    start_proxy_with(allow, resolver, limits, workers, None)
}

/// [`start_proxy`] with secrets bound to hosts.
pub fn start_proxy_with(
    allow: &[&str],
    resolver: Resolver,
    limits: Limits,
    workers: usize,
    secrets: Option<skarn_egress::Interceptor>,
) -> Running {
    let rules = Rules::parse(allow, &[]).unwrap();
    let h = TcpListener::bind("127.0.0.1:0").unwrap();
    let s = TcpListener::bind("127.0.0.1:0").unwrap();
    let (http, socks) = (
        h.local_addr().unwrap().port(),
        s.local_addr().unwrap().port(),
    );
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let done = std::thread::spawn(move || {
        let rt = if workers == 0 {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
        } else {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(workers)
                .enable_all()
                .build()
                .unwrap()
        };
        let mut p = Proxy::new(rules, resolver, limits).with_log(None);
        if let Some(ic) = secrets {
            p = p.with_secrets(ic);
        }
        let p = Arc::new(p);
        let l = Listeners {
            http: Some(h),
            socks: Some(s),
        };
        rt.block_on(p.serve(l, async {
            let _ = rx.await;
        }))
        .unwrap()
    });
    Running {
        http,
        socks,
        stop: Some(tx),
        done: Some(done),
    }
}
