//! Layer 2: the hermetic isolate (the boundary).
//!
//! One fresh QuickJS-NG runtime per script, with the memory and native stack
//! limits set and an interrupt handler that ends execution (uncatchably) at
//! the deadline or when the host aborts the run.
//!
//! No string ever becomes code at run time: the prelude and the script are
//! compiled to bytecode in a throwaway context that has the eval intrinsic,
//! and the bytecode is loaded into the execution context, which is built
//! without it. There `eval`, `Function`, and the async, generator and
//! async-generator function constructors all throw, however they are
//! reached. The execution context has no module loader, no filesystem,
//! network, timers or `std`/`os` bindings: its only way out is the host
//! object handed to the prelude, which forwards to the [`ToolBridge`].

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Poll, Wake, Waker};
use std::time::{Duration, Instant};

use rquickjs::context::intrinsic;
use rquickjs::module::WriteOptions;
use rquickjs::promise::PromiseState;
use rquickjs::{Context, Ctx, Function, Module, Promise, Runtime, Value, qjs};
use serde_json::Value as Json;

use crate::alloc::LimitedAllocator;
use crate::bounds::{MAX_STACK_BYTES, MIN_MEMORY_BYTES, MIN_STACK_BYTES};
use crate::bridge::{BridgeError, BridgeFuture, ToolBridge};
use crate::convert;
use crate::depth::{MAX_RESULT_DEPTH, json_depth, result_too_deep};
use crate::errtext::ErrorReader;
use crate::host::{Host, HostCall, Request, bridge_error_on};
use crate::outcome::{ErrorKind, ExecError};
use crate::position::{SCRIPT_NAME, SourceMap};
use crate::prelude_bc::prelude_bytecode;
use crate::prepare::Prepared;
use crate::report::{classify, failure, internal, js_error, memory_error, returned_value};
use crate::shared::Shared;

/// Intrinsics of the execution context: everything a data-wrangling script
/// needs, minus `Eval` (string-to-code) and `Performance` (a timer).
type RunIntrinsics = (
    intrinsic::Date,
    intrinsic::RegExpCompiler,
    intrinsic::RegExp,
    intrinsic::Json,
    intrinsic::Proxy,
    intrinsic::MapSet,
    intrinsic::TypedArrays,
    intrinsic::Promise,
    intrinsic::WeakRef,
);

/// Globals deleted from the execution context before the prelude runs.
const REMOVED_GLOBALS: &[&str] = &["SharedArrayBuffer", "Atomics", "WebAssembly"];

/// Compile and run a prepared script on the current thread.
pub(crate) fn run(
    prep: &Prepared,
    bridge: &dyn ToolBridge,
    shared: &Arc<Shared>,
) -> Result<Json, ExecError> {
    let limits = &shared.limits;
    // No limit while the runtime and contexts are set up (QuickJS does not
    // survive running out of memory in there); the limit applies from the
    // moment the script's context exists.
    let limit = Arc::new(AtomicUsize::new(usize::MAX));
    let armed = Arc::new(AtomicBool::new(false));
    let alloc = LimitedAllocator::new(
        limit.clone(),
        shared.oom.clone(),
        shared.expired.clone(),
        armed.clone(),
    );
    let rt = Runtime::new_with_alloc(alloc).map_err(|_| memory_error(limits))?;
    // 0 would mean "no check" to QuickJS: never allow less than MIN_STACK_BYTES.
    rt.set_max_stack_size(limits.stack_bytes.clamp(MIN_STACK_BYTES, MAX_STACK_BYTES));
    {
        let s = shared.clone();
        rt.set_interrupt_handler(Some(Box::new(move || s.should_interrupt())));
    }

    let (prelude_bc, script_bc) = compile(&rt, prep, limits)?;

    let ctx = Context::custom::<RunIntrinsics>(&rt).map_err(|_| memory_error(limits))?;
    limit.store(limits.memory_bytes.max(MIN_MEMORY_BYTES), Ordering::Relaxed);
    armed.store(true, Ordering::Relaxed);
    let out = ctx.with(|ctx| {
        let host = Host::new(shared.clone());
        let res = drive(
            &ctx, &host, prelude_bc, &script_bc, bridge, shared, &prep.map,
        );
        host.clear();
        res
    });
    // Past the deadline, refusals end the script's native work; tearing the
    // runtime down must not meet them.
    armed.store(false, Ordering::Relaxed);
    drop(ctx);
    drop(rt);
    out
}

/// Take the prelude's bytecode (embedded at build time, else compiled once
/// per process: prelude_bc.rs) and compile the script to bytecode in a
/// throwaway context that has the eval intrinsic.
fn compile(
    rt: &Runtime,
    prep: &Prepared,
    limits: &crate::limits::Limits,
) -> Result<(&'static [u8], Vec<u8>), ExecError> {
    // The wrapper keeps the user's code on lines 2.. of the module.
    let source = format!("export default async function () {{\n{}\n}}\n", prep.js);
    let cctx = Context::custom::<(intrinsic::Eval, intrinsic::RegExpCompiler)>(rt)
        .map_err(|e| internal("cannot create the compile context", e))?;
    cctx.with(|ctx| {
        let prelude = prelude_bytecode(&ctx)?;
        let m = Module::declare(ctx.clone(), SCRIPT_NAME, source).map_err(|e| {
            let exc = ctx.catch();
            // No script code ran in this context: its functions are the engine's.
            let rd = ErrorReader::capture(&ctx);
            let mut err = js_error(&ctx, &exc, &prep.map, &rd, limits.error_bytes(), limits);
            if err.kind == ErrorKind::Runtime {
                err.kind = ErrorKind::Syntax;
            }
            let _ = e;
            err
        })?;
        let bc = m
            .write(WriteOptions {
                strip_source: true,
                ..WriteOptions::default()
            })
            .map_err(|e| internal("script bytecode", e))?;
        Ok((prelude, bc))
    })
}

/// Wakes the driver thread when a bridge future can make progress.
struct Notify {
    woken: Mutex<bool>,
    cv: Condvar,
}

impl Wake for Notify {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        *self.woken.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.cv.notify_all();
    }
}

struct Inflight<'b, 'js> {
    fut: BridgeFuture<'b, Json>,
    arg_bytes: usize,
    /// "server.tool", "listTools", "server resource uri" (for errors).
    what: String,
    resolve: Function<'js>,
    reject: Function<'js>,
    site: rquickjs::Exception<'js>,
}

/// Run the prelude and the script, then drive microtasks and host calls
/// until the script's promise settles, a limit is hit, or it can never settle.
fn drive<'js>(
    ctx: &Ctx<'js>,
    host: &Host<'js>,
    prelude_bc: &[u8],
    script_bc: &[u8],
    bridge: &dyn ToolBridge,
    shared: &Shared,
    map: &SourceMap,
) -> Result<Json, ExecError> {
    // Captured before any script code runs (the prelude is the engine's).
    let rd = ErrorReader::capture(ctx);
    let fail =
        |ctx: &Ctx<'js>, e: rquickjs::Error| -> ExecError { failure(ctx, e, shared, map, &rd) };

    let globals = ctx.globals();
    for name in REMOVED_GLOBALS {
        globals.remove(*name).map_err(|e| fail(ctx, e))?;
    }

    // The prelude: defines the frozen global `skarn`.
    // SAFETY: the bytes were produced by `Module::write` of this same engine:
    // in this process, or by build.rs with the same engine version, target,
    // source and options, embedded in this binary and checked to load in the
    // compile context (see prelude_bc.rs).
    let prelude = unsafe { Module::load(ctx.clone(), prelude_bc) }.map_err(|e| fail(ctx, e))?;
    let (prelude, p) = prelude.eval().map_err(|e| fail(ctx, e))?;
    run_jobs(ctx, shared).map_err(|e| fail(ctx, e))?;
    if p.state() == PromiseState::Rejected {
        return Err(internal("prelude failed", "rejected"));
    }
    let init: Function<'js> = prelude.get("default").map_err(|e| fail(ctx, e))?;
    let host_obj = host.object(ctx).map_err(|e| fail(ctx, e))?;
    init.call::<_, ()>((host_obj,)).map_err(|e| fail(ctx, e))?;

    // The script module: its default export is the user's async function.
    // SAFETY: as above, bytes from `Module::write` in `compile`.
    let script = unsafe { Module::load(ctx.clone(), script_bc) }.map_err(|e| fail(ctx, e))?;
    let (script, p) = script.eval().map_err(|e| fail(ctx, e))?;
    run_jobs(ctx, shared).map_err(|e| fail(ctx, e))?;
    if p.state() == PromiseState::Rejected {
        let exc = p
            .result::<Value>()
            .and_then(|r| r.err())
            .map(|_| ctx.catch());
        return Err(match exc {
            Some(v) => classify(ctx, &v, shared, map, &rd),
            None => internal("script module failed", "rejected"),
        });
    }
    let main: Function<'js> = script.get("default").map_err(|e| fail(ctx, e))?;
    let promise: Promise<'js> = main.call(()).map_err(|e| fail(ctx, e))?;

    let notify = Arc::new(Notify {
        woken: Mutex::new(false),
        cv: Condvar::new(),
    });
    let waker = Waker::from(notify.clone());
    let mut inflight: Vec<Inflight<'_, 'js>> = Vec::new();

    loop {
        run_jobs(ctx, shared).map_err(|e| fail(ctx, e))?;
        if let Some(err) = shared.take_abort() {
            return Err(err);
        }
        match promise.state() {
            PromiseState::Resolved => {
                let v: Value<'js> = promise
                    .result::<Value<'js>>()
                    .unwrap_or_else(|| Ok(Value::new_undefined(ctx.clone())))
                    .map_err(|e| fail(ctx, e))?;
                return returned_value(ctx, &v, shared, map, &rd);
            }
            PromiseState::Rejected => {
                let _ = promise.result::<Value<'js>>();
                let exc = ctx.catch();
                return Err(classify(ctx, &exc, shared, map, &rd));
            }
            PromiseState::Pending => {}
        }

        // Hand new host calls to the bridge.
        let new: Vec<Request<'js>> = host.queue.borrow_mut().drain(..).collect();
        for req in new {
            let arg_bytes = match &req.call {
                HostCall::Tool { arg_bytes, .. } => *arg_bytes,
                _ => 0,
            };
            let what = match &req.call {
                HostCall::Tool { server, tool, .. } => format!("{server}.{tool}"),
                HostCall::List => "listTools".to_string(),
                HostCall::Read { server, uri } => format!("{server} resource {uri}"),
            };
            let fut = catch_unwind(AssertUnwindSafe(|| match req.call {
                HostCall::Tool {
                    server, tool, args, ..
                } => bridge.call_tool(&server, &tool, args),
                HostCall::List => bridge.list_tools(),
                HostCall::Read { server, uri } => bridge.read_resource(&server, &uri),
            }))
            .unwrap_or_else(|_| {
                Box::pin(async {
                    Err(BridgeError::Other {
                        message: "the tool bridge panicked".into(),
                    })
                })
            });
            inflight.push(Inflight {
                fut,
                arg_bytes,
                what,
                resolve: req.resolve,
                reject: req.reject,
                site: req.site,
            });
        }

        // Poll every call in flight: they run concurrently.
        *notify.woken.lock().unwrap_or_else(|p| p.into_inner()) = false;
        let mut cx = std::task::Context::from_waker(&waker);
        let mut progressed = false;
        let mut i = 0;
        while i < inflight.len() {
            let polled = catch_unwind(AssertUnwindSafe(|| inflight[i].fut.as_mut().poll(&mut cx)));
            let ready = match polled {
                Ok(Poll::Pending) => None,
                Ok(Poll::Ready(r)) => Some(r),
                Err(_) => Some(Err(BridgeError::Other {
                    message: "the tool bridge panicked".into(),
                })),
            };
            match ready {
                None => i += 1,
                Some(r) => {
                    let call = inflight.swap_remove(i);
                    shared.args_in_flight.fetch_sub(
                        call.arg_bytes
                            .min(shared.args_in_flight.load(Ordering::Relaxed)),
                        Ordering::Relaxed,
                    );
                    settle(ctx, call, r).map_err(|e| fail(ctx, e))?;
                    progressed = true;
                }
            }
        }
        if progressed {
            continue;
        }
        if inflight.is_empty() {
            return Err(ExecError::new(
                ErrorKind::Deadline,
                "the script waits on nothing: its promise can never settle (no host call or job is pending)",
            ));
        }

        // Sleep until a bridge future wakes us or the deadline passes.
        let mut woken = notify.woken.lock().unwrap_or_else(|p| p.into_inner());
        while !*woken {
            let now = Instant::now();
            if now >= shared.deadline || shared.cancel.load(Ordering::Relaxed) {
                return Err(shared.deadline_error(&format!(
                    " while waiting on {} host call(s)",
                    inflight.len()
                )));
            }
            let wait = (shared.deadline - now).min(Duration::from_millis(100));
            woken = notify
                .cv
                .wait_timeout(woken, wait)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

fn settle<'js>(
    ctx: &Ctx<'js>,
    call: Inflight<'_, 'js>,
    r: Result<Json, BridgeError>,
) -> rquickjs::Result<()> {
    let r = match r {
        Ok(j) if json_depth(&j) > MAX_RESULT_DEPTH => Err(result_too_deep(&call.what)),
        r => r,
    };
    match r {
        Ok(j) => match convert::to_js(ctx, &j) {
            Ok(v) => call.resolve.call::<_, ()>((v,)),
            Err(e) if e.is_exception() => {
                let exc = ctx.catch();
                call.reject.call::<_, ()>((exc,))
            }
            Err(e) => Err(e),
        },
        Err(e) => {
            let v = bridge_error_on(call.site, &e)?;
            call.reject.call::<_, ()>((v,))
        }
    }
}

/// Run queued microtasks until none is left. An exception escaping a job
/// (only uncatchable ones do: interrupts, the host aborting) is returned.
fn run_jobs(ctx: &Ctx<'_>, shared: &Shared) -> rquickjs::Result<()> {
    loop {
        if shared.should_interrupt() {
            return Err(rquickjs::Error::Exception);
        }
        let mut job_ctx = std::mem::MaybeUninit::<*mut qjs::JSContext>::uninit();
        // SAFETY: the runtime pointer comes from a live context; the call
        // writes the context the job ran in, which is ours (the only context
        // left in this runtime).
        let r = unsafe {
            let rt = qjs::JS_GetRuntime(ctx.as_raw().as_ptr());
            qjs::JS_ExecutePendingJob(rt, job_ctx.as_mut_ptr())
        };
        if r == 0 {
            return Ok(());
        }
        if r < 0 {
            return Err(rquickjs::Error::Exception);
        }
    }
}
