//! The one thread that forks stdio downstream servers.
//!
//! A stdio child is asked to die with the gateway (`PR_SET_PDEATHSIG`),
//! but Linux sends that signal when the *thread* that forked the child
//! exits, not the process. Servers used to be forked from whatever tokio
//! thread started them (inside `block_in_place`, which hands that thread
//! to the blocking pool); the pool retires a thread after 10 s idle, and
//! with it every server that thread had forked got SIGKILL: a server that
//! took longer than that to become ready and be used (a slow host, a
//! loaded machine, a large listing) "crashed" about 10 s after its start,
//! and so did every other server forked by the same thread.
//!
//! Forking from a thread that lives as long as the gateway keeps the
//! death signal for what it is meant for (the gateway itself dying).

use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};

type Job = Box<dyn FnOnce() + Send>;

static SPAWNER: OnceLock<Option<Mutex<mpsc::Sender<Job>>>> = OnceLock::new();

/// The spawner's queue; `None` when its thread cannot be made.
fn queue() -> Option<&'static Mutex<mpsc::Sender<Job>>> {
    SPAWNER
        .get_or_init(|| {
            let (tx, rx) = mpsc::channel::<Job>();
            std::thread::Builder::new()
                .name("skarn-spawner".into())
                .spawn(move || {
                    // Never returns while the gateway holds the sender (a
                    // static): the thread lives as long as the process.
                    while let Ok(job) = rx.recv() {
                        job();
                    }
                })
                .ok()
                .map(|_| Mutex::new(tx))
        })
        .as_ref()
}

/// Run `f` (which forks the child) on the spawner thread, inside the
/// caller's tokio runtime when there is one, and wait for its result.
/// Where the thread cannot be made, or is gone, `f` runs here (the old
/// behaviour: the child then dies with this thread).
pub(crate) fn on_spawner<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let Some(q) = queue() else {
        tracing::warn!("no spawner thread: a server may die when the thread that started it ends");
        return f();
    };
    let rt = tokio::runtime::Handle::try_current().ok();
    let (tx, rx) = mpsc::sync_channel::<T>(1);
    let f = std::sync::Arc::new(Mutex::new(Some(f)));
    let job_f = f.clone();
    let job: Job = Box::new(move || {
        let _entered = rt.as_ref().map(|h| h.enter());
        let f = job_f.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(f) = f {
            let _ = tx.send(f());
        }
    });
    let sent = q
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send(job)
        .is_ok();
    if sent && let Ok(v) = rx.recv() {
        return v;
    }
    // The job did not run (thread gone): run it here.
    let f = f.lock().unwrap_or_else(|e| e.into_inner()).take();
    match f {
        Some(f) => f(),
        None => unreachable_after_run(),
    }
}

/// The job took `f` but sent nothing back: it panicked on the spawner
/// thread (which is then gone); the panic is passed on here.
fn unreachable_after_run() -> ! {
    panic!("the spawner thread panicked while starting a server")
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs_on_one_lasting_thread() {
        let a = super::on_spawner(|| std::thread::current().id());
        let b = std::thread::spawn(|| super::on_spawner(|| std::thread::current().id()))
            .join()
            .unwrap();
        assert_eq!(a, b);
        assert_ne!(a, std::thread::current().id());
    }
}
