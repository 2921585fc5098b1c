//! The worker side:
//! `skarn __codemode-worker [--memory-bytes N] [--stack-bytes N] [--parent-pid P]
//! [--no-engine-warmup]`.
//!
//! Confines itself ([`crate::confine`]), makes the two threads a job needs
//! (the isolate thread and the reader of the parent's lines), says `ready`,
//! reads exactly one job, runs it like [`skarn_codemode::execute`] through
//! a [`PipeBridge`] whose host calls travel to the parent, sends `done` and
//! exits. It never runs a second job: the reader hands over one job and
//! after it accepts only replies.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures_channel::oneshot;
use serde_json::Value;
use skarn_codemode::{BridgeError, BridgeFuture, ToolBridge};

use crate::confine::ConfineOptions;
use crate::protocol::{FromWorker, HostCall, LineReader, ToWorker, encode, reply_cap};
#[cfg(target_os = "linux")]
use crate::selftest;

/// Cap on the job line (the script plus its limits).
pub const JOB_LINE_CAP: usize = 16 << 20;

/// Exit codes of the worker process (the parent reports them).
pub mod exit {
    /// The job ran and `done` was sent.
    pub const OK: u8 = 0;
    /// Bad command line.
    pub const USAGE: u8 = 2;
    /// Confinement failed; nothing ran.
    pub const CONFINE: u8 = 3;
    /// The parent sent something that is not a job, or closed the pipe.
    pub const PROTOCOL: u8 = 4;
}

/// The confinement options, and whether to warm the engine up before `ready`.
fn parse_args(args: impl Iterator<Item = OsString>) -> Result<(ConfineOptions, bool), String> {
    let mut warmup = true;
    let mut opts = ConfineOptions {
        memory_bytes: skarn_codemode::Limits::default().memory_bytes as u64,
        stack_bytes: skarn_codemode::Limits::default().stack_bytes as u64,
        parent_pid: None,
        skip_seccomp: false,
        network: crate::confine::Network::EmptyNamespace,
    };
    let mut args = args.map(|a| a.to_string_lossy().into_owned());
    while let Some(a) = args.next() {
        let mut value = |name: &str| -> Result<u64, String> {
            args.next()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("{name} needs a number"))
        };
        match a.as_str() {
            "--memory-bytes" => opts.memory_bytes = value("--memory-bytes")?,
            "--stack-bytes" => opts.stack_bytes = value("--stack-bytes")?,
            "--no-engine-warmup" => warmup = false,
            "--parent-pid" => opts.parent_pid = Some(value("--parent-pid")? as u32),
            // Test-only (debug builds): see `ConfineOptions::skip_seccomp`.
            "--selftest-skip-seccomp" if cfg!(debug_assertions) => opts.skip_seccomp = true,
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok((opts, warmup))
}

fn send(msg: &FromWorker) {
    let line = encode(msg);
    let mut out = std::io::stdout().lock();
    if out.write_all(&line).and_then(|_| out.flush()).is_err() {
        // The parent is gone: nobody wants our result.
        std::process::exit(i32::from(exit::PROTOCOL));
    }
}

/// Entry point of the hidden subcommand. `args` are the arguments after
/// `__codemode-worker`. Must be called before any other thread exists.
pub fn main(args: impl Iterator<Item = OsString>) -> ExitCode {
    let (opts, engine_warmup) = match parse_args(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skarn: error: __codemode-worker: {e}");
            return ExitCode::from(exit::USAGE);
        }
    };
    #[cfg(target_os = "macos")]
    let confined = crate::confine_macos::confine(&opts);
    #[cfg(not(target_os = "macos"))]
    let confined = crate::confine::confine(&opts);
    let report = match confined {
        Ok(r) => r,
        Err(e) => {
            send(&FromWorker::Fatal {
                message: format!("confinement failed at {e}"),
            });
            return ExitCode::from(exit::CONFINE);
        }
    };
    // The threads the job needs are made now, before `ready`, so none is
    // created on the job's path: the isolate thread (sized for the scripts
    // of a page or so; a deeper one gets a fresh thread) and the reader of
    // the parent's lines (the job, then the replies to host calls).
    let limits_of_size = skarn_codemode::Limits {
        memory_bytes: usize::try_from(opts.memory_bytes).unwrap_or(usize::MAX),
        stack_bytes: usize::try_from(opts.stack_bytes).unwrap_or(usize::MAX),
        ..skarn_codemode::Limits::default()
    };
    let isolate = skarn_codemode::IsolateThread::spawn(skarn_codemode::premade_isolate_stack(
        &limits_of_size,
    ))
    .ok();
    let run =
        |code: &str, bridge: Arc<dyn ToolBridge>, limits: &skarn_codemode::Limits| match &isolate {
            Some(t) => t.execute(code, bridge, limits),
            None => skarn_codemode::execute(code, bridge, limits),
        };
    if engine_warmup {
        // Fault in the engine's code pages, one-time state and the isolate
        // thread's stack with a constant script, so the job does not pay
        // for a cold process. Nothing of it survives: the job gets a fresh
        // isolate.
        let _ = run(
            "return 1",
            Arc::new(skarn_codemode::bridge::NoServers),
            &skarn_codemode::Limits::default(),
        );
    }
    let bridge = Arc::new(PipeBridge::default());
    let Some(jobs) = start_reader(bridge.pending.clone(), bridge.held.clone()) else {
        send(&FromWorker::Fatal {
            message: "could not start the reader thread".into(),
        });
        return ExitCode::from(exit::PROTOCOL);
    };
    send(&FromWorker::Ready {
        pid: std::process::id(),
        confinement: report,
    });

    let job = match jobs.recv() {
        Ok(Ok(job)) => job,
        Ok(Err(message)) => {
            send(&FromWorker::Fatal { message });
            return ExitCode::from(exit::PROTOCOL);
        }
        Err(_) => {
            send(&FromWorker::Fatal {
                message: "no job: the reader thread stopped".into(),
            });
            return ExitCode::from(exit::PROTOCOL);
        }
    };
    let (code, limits, selftest_spec) = match job {
        ToWorker::Job {
            code,
            limits,
            selftest,
        } => (code, limits, selftest),
        ToWorker::Reply { .. } => {
            send(&FromWorker::Fatal {
                message: "expected a job message, got a reply".into(),
            });
            return ExitCode::from(exit::PROTOCOL);
        }
    };

    if opts.skip_seccomp && selftest_spec.is_none() {
        send(&FromWorker::Fatal {
            message: "a worker without seccomp runs only the self-test".into(),
        });
        return ExitCode::from(exit::PROTOCOL);
    }
    if let Some(spec) = selftest_spec {
        #[cfg(target_os = "linux")]
        {
            let attempts = selftest::run(&spec);
            send(&FromWorker::Selftest { attempts });
            return ExitCode::from(exit::OK);
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = spec;
            send(&FromWorker::Fatal {
                message: "no confinement self-test for this OS in this build".into(),
            });
            return ExitCode::from(exit::PROTOCOL);
        }
    }

    let outcome = run(&code, bridge, &limits);
    send(&FromWorker::Done { outcome });
    // Exit at once: an abandoned isolate thread (stuck in native code) or
    // the reader thread must not keep the process alive.
    std::process::exit(i32::from(exit::OK));
}

/// Start the thread that reads the parent's lines: the job first (handed
/// back through the returned channel, or why there is none), then, for a
/// script, the replies to its host calls, each routed to the waiting call.
/// When the parent closes the pipe or sends anything else there is nothing
/// left to do but die.
fn start_reader(
    pending: Pending,
    held: Arc<AtomicUsize>,
) -> Option<std::sync::mpsc::Receiver<Result<ToWorker, String>>> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let mut input = LineReader::new(std::io::stdin(), JOB_LINE_CAP);
    std::thread::Builder::new()
        .name("skarn-worker-reader".into())
        .spawn(move || {
            let job = match input.read_line(None) {
                Ok(line) => crate::protocol::decode::<ToWorker>(&line)
                    .map_err(|e| format!("malformed job: {e}")),
                Err(e) => Err(format!("no job: {e}")),
            };
            let mut budget = 0usize;
            let replies_follow = match &job {
                Ok(ToWorker::Job {
                    limits,
                    selftest: None,
                    ..
                }) => {
                    // The parent never sends more than `reply_cap`; the
                    // slack covers the envelope around the result.
                    budget = reply_cap(limits).saturating_add(64 << 10);
                    input.set_cap(budget);
                    true
                }
                _ => false,
            };
            let _ = tx.send(job);
            if !replies_follow {
                return;
            }
            loop {
                let line = match input.read_line(None) {
                    Ok(l) => l,
                    Err(_) => std::process::exit(i32::from(exit::PROTOCOL)),
                };
                // Answers decoded but not yet taken by the script live
                // outside the engine's memory accounting, and the worker's
                // address-space limit leaves room for one of the largest
                // (`confine::address_space_limit`): past that an answer
                // becomes an error the script can catch, instead of the
                // worker aborting (atk25c F6: 64 answers of 8 MB awaited
                // at once).
                let n = line.len();
                let in_hand = held.load(Ordering::Relaxed);
                if in_hand > 0 && in_hand.saturating_add(n) > budget {
                    let Ok(ReplyId { id }) = crate::protocol::decode::<ReplyId>(&line) else {
                        std::process::exit(i32::from(exit::PROTOCOL));
                    };
                    drop(line);
                    let tx = pending.lock().ok().and_then(|mut p| p.remove(&id));
                    if let Some(tx) = tx {
                        let _ = tx.send((Err(over_budget(budget)), 0));
                    }
                    continue;
                }
                match crate::protocol::decode::<ToWorker>(&line) {
                    Ok(ToWorker::Reply { id, result }) => {
                        let tx = pending.lock().ok().and_then(|mut p| p.remove(&id));
                        if let Some(tx) = tx {
                            held.fetch_add(n, Ordering::Relaxed);
                            let _ = tx.send((result, n));
                        }
                    }
                    _ => std::process::exit(i32::from(exit::PROTOCOL)),
                }
            }
        })
        .ok()?;
    Some(rx)
}

/// An answer for the waiting call, with the bytes it counts against the
/// budget of answers in hand.
type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<(Result<Value, BridgeError>, usize)>>>>;

/// Just the id of a reply line (its result skipped without being built).
#[derive(serde::Deserialize)]
struct ReplyId {
    id: u64,
}

fn over_budget(budget: usize) -> BridgeError {
    BridgeError::Other {
        message: format!(
            "the answers this script awaits at once exceed {budget} bytes in hand; await fewer or smaller calls at a time"
        ),
    }
}

/// A [`ToolBridge`] whose every call is one `call` line to the parent and
/// whose future resolves when the matching `reply` line arrives.
#[derive(Default)]
pub struct PipeBridge {
    next_id: AtomicU64,
    pending: Pending,
    /// Bytes of answers decoded and not yet taken by the script.
    held: Arc<AtomicUsize>,
}

impl PipeBridge {
    fn request(&self, call: HostCall) -> BridgeFuture<'_, Value> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let (tx, rx) = oneshot::channel();
        if let Ok(mut p) = self.pending.lock() {
            p.insert(id, tx);
        }
        send(&FromWorker::Call { id, call });
        let held = self.held.clone();
        Box::pin(async move {
            match rx.await {
                Ok((result, n)) => {
                    held.fetch_sub(n, Ordering::Relaxed);
                    result
                }
                Err(_) => Err(BridgeError::Other {
                    message: "the worker lost its connection to the gateway".into(),
                }),
            }
        })
    }
}

impl ToolBridge for PipeBridge {
    fn call_tool(&self, server: &str, tool: &str, args: Value) -> BridgeFuture<'_, Value> {
        self.request(HostCall::CallTool {
            server: server.into(),
            tool: tool.into(),
            args,
        })
    }
    fn list_tools(&self) -> BridgeFuture<'_, Value> {
        self.request(HostCall::ListTools)
    }
    fn read_resource(&self, server: &str, uri: &str) -> BridgeFuture<'_, Value> {
        self.request(HostCall::ReadResource {
            server: server.into(),
            uri: uri.into(),
        })
    }
}
