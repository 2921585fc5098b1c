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

use std::cell::RefCell;
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::task::{Poll, Wake, Waker};
use std::time::{Duration, Instant};

use rquickjs::context::intrinsic;
use rquickjs::function::{Opt, Rest};
use rquickjs::module::WriteOptions;
use rquickjs::promise::PromiseState;
use rquickjs::{Context, Ctx, Function, Module, Object, Promise, Runtime, Value, qjs};
use serde_json::Value as Json;

use crate::alloc::LimitedAllocator;
use crate::bridge::{BridgeError, BridgeFuture, ToolBridge};
use crate::convert::{self, ConvError, ToJson};
use crate::limits::Limits;
use crate::logs::LogSink;
use crate::outcome::{ErrorKind, ExecError};
use crate::position::SourceMap;
use crate::prepare::Prepared;

/// The module name under which the user's script is compiled (it appears
/// in raw engine stack frames, which are translated before reporting).
const SCRIPT_NAME: &str = "script";
const PRELUDE_NAME: &str = "skarn:prelude";
const PRELUDE_SRC: &str = include_str!("prelude.js");

/// Smallest memory limit applied, whatever `Limits::memory_bytes` says.
pub const MIN_MEMORY_BYTES: usize = 1 << 20;

/// Smallest native stack limit applied, whatever `Limits::stack_bytes` says.
pub const MIN_STACK_BYTES: usize = 64 << 10;

/// Largest native stack limit applied (the isolate thread must really have it).
pub const MAX_STACK_BYTES: usize = 256 << 20;

/// Largest tool-call argument object accepted from a script (JSON bytes).
pub const MAX_ARGS_BYTES: usize = 8 << 20;

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

/// State shared between the isolate thread and the caller of `execute`.
pub(crate) struct Shared {
    pub logs: Mutex<LogSink>,
    pub tool_calls: AtomicU32,
    /// Set by the caller when it gives up on the run.
    pub cancel: AtomicBool,
    /// Set by a host function that ends the run (e.g. the tool-call budget).
    abort: Mutex<Option<ExecError>>,
    aborted: AtomicBool,
    pub deadline: Instant,
    pub limits: Limits,
    /// Set by the allocator when the memory limit refused an allocation.
    pub oom: Arc<AtomicBool>,
    /// JSON bytes of tool arguments handed to the bridge and not answered
    /// yet: capped at the memory limit, so host-side copies stay bounded.
    args_in_flight: AtomicUsize,
}

impl Shared {
    pub(crate) fn new(limits: &Limits, start: Instant) -> Self {
        Shared {
            logs: Mutex::new(LogSink::new(limits.max_log_lines, limits.max_log_bytes)),
            tool_calls: AtomicU32::new(0),
            cancel: AtomicBool::new(false),
            abort: Mutex::new(None),
            aborted: AtomicBool::new(false),
            // A deadline too far to represent is as good as ten years.
            deadline: start
                .checked_add(limits.deadline)
                .unwrap_or_else(|| start + Duration::from_secs(10 * 365 * 86_400)),
            limits: limits.clone(),
            oom: Arc::new(AtomicBool::new(false)),
            args_in_flight: AtomicUsize::new(0),
        }
    }

    fn should_interrupt(&self) -> bool {
        self.aborted.load(Ordering::Relaxed)
            || self.cancel.load(Ordering::Relaxed)
            || Instant::now() >= self.deadline
    }

    fn set_abort(&self, err: ExecError) {
        let mut slot = self.abort.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(err);
        }
        self.aborted.store(true, Ordering::Relaxed);
    }

    fn take_abort(&self) -> Option<ExecError> {
        if !self.aborted.load(Ordering::Relaxed) {
            return None;
        }
        self.abort.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) fn deadline_error(&self, what: &str) -> ExecError {
        ExecError::new(
            ErrorKind::Deadline,
            format!(
                "deadline of {} exceeded{what}",
                fmt_duration(self.limits.deadline)
            ),
        )
    }

    fn log_line(&self, line: String) {
        self.logs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(line);
    }
}

pub(crate) fn fmt_duration(d: Duration) -> String {
    if d.as_millis() % 1000 == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

fn internal(what: &str, e: impl std::fmt::Display) -> ExecError {
    ExecError::new(ErrorKind::Internal, format!("{what}: {e}"))
}

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
    let alloc = LimitedAllocator::new(limit.clone(), shared.oom.clone());
    let rt = Runtime::new_with_alloc(alloc).map_err(|_| memory_error(limits))?;
    // 0 would mean "no check" to QuickJS: never allow less than MIN_STACK_BYTES.
    rt.set_max_stack_size(limits.stack_bytes.clamp(MIN_STACK_BYTES, MAX_STACK_BYTES));
    {
        let s = shared.clone();
        rt.set_interrupt_handler(Some(Box::new(move || s.should_interrupt())));
    }

    let (prelude_bc, script_bc) = compile(&rt, prep)?;

    let ctx = Context::custom::<RunIntrinsics>(&rt).map_err(|_| memory_error(limits))?;
    limit.store(limits.memory_bytes.max(MIN_MEMORY_BYTES), Ordering::Relaxed);
    let out = ctx.with(|ctx| {
        let host = Host::new(shared.clone());
        let res = drive(
            &ctx,
            &host,
            &prelude_bc,
            &script_bc,
            bridge,
            shared,
            &prep.map,
        );
        host.clear();
        res
    });
    drop(ctx);
    drop(rt);
    out
}

/// Compile the prelude (cached per process) and the script to bytecode in a
/// throwaway context that has the eval intrinsic.
fn compile(rt: &Runtime, prep: &Prepared) -> Result<(Arc<Vec<u8>>, Vec<u8>), ExecError> {
    static PRELUDE_BC: OnceLock<Arc<Vec<u8>>> = OnceLock::new();
    // The wrapper keeps the user's code on lines 2.. of the module.
    let source = format!("export default async function () {{\n{}\n}}\n", prep.js);
    let cctx = Context::custom::<(intrinsic::Eval, intrinsic::RegExpCompiler)>(rt)
        .map_err(|e| internal("cannot create the compile context", e))?;
    cctx.with(|ctx| {
        let prelude = match PRELUDE_BC.get() {
            Some(bc) => bc.clone(),
            None => {
                let m = Module::declare(ctx.clone(), PRELUDE_NAME, PRELUDE_SRC)
                    .map_err(|e| internal("prelude does not compile", exception_text(&ctx, e)))?;
                let bc = m
                    .write(WriteOptions::default())
                    .map_err(|e| internal("prelude bytecode", e))?;
                PRELUDE_BC.get_or_init(|| Arc::new(bc)).clone()
            }
        };
        let m = Module::declare(ctx.clone(), SCRIPT_NAME, source).map_err(|e| {
            let exc = ctx.catch();
            let mut err = js_error(&ctx, &exc, &prep.map);
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

fn exception_text(ctx: &Ctx<'_>, e: rquickjs::Error) -> String {
    if e.is_exception() {
        let v = ctx.catch();
        if let Some(o) = v.as_object() {
            let m: Option<String> = o.get("message").ok();
            return m.unwrap_or_else(|| "exception".into());
        }
    }
    e.to_string()
}

fn memory_error(limits: &Limits) -> ExecError {
    ExecError::new(
        ErrorKind::Memory,
        format!(
            "memory limit of {} exceeded",
            fmt_bytes(limits.memory_bytes)
        ),
    )
}

pub(crate) fn fmt_bytes(n: usize) -> String {
    if n >= 1 << 20 && n % (1 << 20) == 0 {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n % (1 << 10) == 0 {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} bytes")
    }
}

/// A host call made by the script, waiting to be handed to the bridge.
enum HostCall {
    Tool {
        server: String,
        tool: String,
        args: Json,
        arg_bytes: usize,
    },
    List,
    Read {
        server: String,
        uri: String,
    },
}

struct Request<'js> {
    call: HostCall,
    resolve: Function<'js>,
    reject: Function<'js>,
    /// An `Error` created at the call site: its stack points at the user's
    /// line, and it becomes the rejection if the call fails.
    site: rquickjs::Exception<'js>,
}

/// Host-side state reachable from the native functions given to the prelude.
struct Host<'js> {
    queue: Rc<RefCell<VecDeque<Request<'js>>>>,
    shared: Arc<Shared>,
}

impl<'js> Host<'js> {
    fn new(shared: Arc<Shared>) -> Self {
        Host {
            queue: Rc::new(RefCell::new(VecDeque::new())),
            shared,
        }
    }

    /// Drop every JS reference held on the host side (before the context goes).
    fn clear(&self) {
        self.queue.borrow_mut().clear();
    }

    fn object(&self, ctx: &Ctx<'js>) -> rquickjs::Result<Object<'js>> {
        let host = Object::new(ctx.clone())?;

        let q = self.queue.clone();
        let shared = self.shared.clone();
        host.set(
            "call",
            Function::new(
                ctx.clone(),
                move |ctx: Ctx<'js>,
                      server: Value<'js>,
                      tool: Value<'js>,
                      args: Opt<Value<'js>>| {
                    let server = match string_arg(&server) {
                        Some(s) => s,
                        None => {
                            return rejected(
                                &ctx,
                                "skarn.callTool(server, tool, args): server must be a string",
                            );
                        }
                    };
                    let tool = match string_arg(&tool) {
                        Some(s) => s,
                        None => {
                            return rejected(
                                &ctx,
                                "skarn.callTool(server, tool, args): tool must be a string",
                            );
                        }
                    };
                    let mut arg_bytes = 2;
                    let args = match args.0 {
                        None => Json::Object(Default::default()),
                        Some(v) if v.is_undefined() || v.is_null() => {
                            Json::Object(Default::default())
                        }
                        Some(v) => {
                            let stop = || shared.should_interrupt();
                            let mut w = ToJson::new(MAX_ARGS_BYTES, &stop);
                            let converted = w.top(&v);
                            arg_bytes = w.used();
                            match converted {
                                Ok(j @ Json::Object(_)) => j,
                                Ok(_) => {
                                    return rejected_bridge(
                                        &ctx,
                                        &BridgeError::InvalidArguments {
                                            message: "tool arguments must be an object".into(),
                                        },
                                    );
                                }
                                Err(ConvError::Js(e)) => return Err(e),
                                Err(ConvError::TooLarge) => {
                                    return rejected_bridge(
                                        &ctx,
                                        &BridgeError::InvalidArguments {
                                            message: format!(
                                                "tool arguments are larger than {}",
                                                fmt_bytes(MAX_ARGS_BYTES)
                                            ),
                                        },
                                    );
                                }
                                Err(ConvError::Unsupported(m)) => {
                                    return rejected_bridge(
                                        &ctx,
                                        &BridgeError::InvalidArguments {
                                            message: m.replacen("$", "args", 1),
                                        },
                                    );
                                }
                            }
                        }
                    };
                    let in_flight = shared.args_in_flight.load(Ordering::Relaxed);
                    if in_flight.saturating_add(arg_bytes) > shared.limits.memory_bytes {
                        return rejected_bridge(
                            &ctx,
                            &BridgeError::InvalidArguments {
                                message: format!(
                                    "more than {} of tool arguments in flight at once",
                                    fmt_bytes(shared.limits.memory_bytes)
                                ),
                            },
                        );
                    }
                    let p = enqueue(
                        &ctx,
                        &q,
                        &shared,
                        HostCall::Tool {
                            server,
                            tool,
                            args,
                            arg_bytes,
                        },
                    )?;
                    shared
                        .args_in_flight
                        .fetch_add(arg_bytes, Ordering::Relaxed);
                    Ok(p)
                },
            )?,
        )?;

        let q = self.queue.clone();
        let shared = self.shared.clone();
        host.set(
            "list",
            Function::new(ctx.clone(), move |ctx: Ctx<'js>| {
                enqueue(&ctx, &q, &shared, HostCall::List)
            })?,
        )?;

        let q = self.queue.clone();
        let shared = self.shared.clone();
        host.set(
            "read",
            Function::new(
                ctx.clone(),
                move |ctx: Ctx<'js>, server: Value<'js>, uri: Value<'js>| {
                    let Some(server) = string_arg(&server) else {
                        return rejected(
                            &ctx,
                            "skarn.readResource(server, uri): server must be a string",
                        );
                    };
                    let Some(uri) = string_arg(&uri) else {
                        return rejected(
                            &ctx,
                            "skarn.readResource(server, uri): uri must be a string",
                        );
                    };
                    enqueue(&ctx, &q, &shared, HostCall::Read { server, uri })
                },
            )?,
        )?;

        let shared = self.shared.clone();
        host.set(
            "log",
            Function::new(
                ctx.clone(),
                move |values: Rest<Value<'js>>| -> rquickjs::Result<()> {
                    log_values(&shared, &values.0)
                },
            )?,
        )?;
        Ok(host)
    }
}

fn string_arg(v: &Value<'_>) -> Option<String> {
    if v.is_string() {
        convert::string_of(v).ok()
    } else {
        None
    }
}

/// Count the call against the budget and queue it; the returned promise
/// settles when the bridge answers.
fn enqueue<'js>(
    ctx: &Ctx<'js>,
    q: &Rc<RefCell<VecDeque<Request<'js>>>>,
    shared: &Shared,
    call: HostCall,
) -> rquickjs::Result<Promise<'js>> {
    let max = shared.limits.max_tool_calls;
    let used = shared.tool_calls.load(Ordering::Relaxed);
    if used >= max {
        let err = ExecError::new(
            ErrorKind::ToolCalls,
            format!("tool-call budget of {max} exhausted"),
        );
        shared.set_abort(err.clone());
        return Err(throw_uncatchable(ctx, &err.message));
    }
    shared.tool_calls.store(used + 1, Ordering::Relaxed);
    let (promise, resolve, reject) = ctx.promise()?;
    let site = rquickjs::Exception::from_message(ctx.clone(), "")?;
    q.borrow_mut().push_back(Request {
        call,
        resolve,
        reject,
        site,
    });
    Ok(promise)
}

/// Throw an error the script cannot catch (the run is ending).
fn throw_uncatchable(ctx: &Ctx<'_>, message: &str) -> rquickjs::Error {
    match rquickjs::Exception::from_message(ctx.clone(), message) {
        Ok(e) => {
            let v = e.into_value();
            // SAFETY: `v` is a live Error object of this context; the call only
            // flips its uncatchable flag.
            unsafe { qjs::JS_SetUncatchableError(ctx.as_raw().as_ptr(), v.as_raw()) };
            ctx.throw(v)
        }
        Err(e) => e,
    }
}

fn rejected<'js>(ctx: &Ctx<'js>, message: &str) -> rquickjs::Result<Promise<'js>> {
    let (promise, _resolve, reject) = ctx.promise()?;
    let err = type_error(ctx, message)?;
    reject.call::<_, ()>((err,))?;
    Ok(promise)
}

fn rejected_bridge<'js>(ctx: &Ctx<'js>, err: &BridgeError) -> rquickjs::Result<Promise<'js>> {
    let (promise, _resolve, reject) = ctx.promise()?;
    reject.call::<_, ()>((bridge_error(ctx, err)?,))?;
    Ok(promise)
}

fn type_error<'js>(ctx: &Ctx<'js>, message: &str) -> rquickjs::Result<Value<'js>> {
    let ctor: Function<'js> = ctx.globals().get("TypeError")?;
    ctor.call((message,))
}

/// The JS error a script sees for a failed host call: an `Error` whose
/// message is the bridge error's text and whose `code` is its kind.
fn bridge_error<'js>(ctx: &Ctx<'js>, err: &BridgeError) -> rquickjs::Result<Value<'js>> {
    let e = rquickjs::Exception::from_message(ctx.clone(), &err.to_string())?;
    bridge_error_on(e, err)
}

/// Fill `e` (usually the call-site error) with the bridge error's message and code.
fn bridge_error_on<'js>(
    e: rquickjs::Exception<'js>,
    err: &BridgeError,
) -> rquickjs::Result<Value<'js>> {
    e.as_object().set("message", err.to_string())?;
    let code = match err {
        BridgeError::NoSuchServer { .. } => "no_such_server",
        BridgeError::NoSuchTool { .. } => "no_such_tool",
        BridgeError::ServerUnavailable { .. } => "server_unavailable",
        BridgeError::ToolFailed { .. } => "tool_failed",
        BridgeError::Timeout { .. } => "timeout",
        BridgeError::InvalidArguments { .. } => "invalid_arguments",
        BridgeError::Other { .. } => "other",
    };
    e.as_object().set("code", code)?;
    Ok(e.into_value())
}

/// Format `skarn.log` arguments as one line, bounded by the log byte cap.
fn log_values<'js>(shared: &Shared, values: &[Value<'js>]) -> rquickjs::Result<()> {
    let room = shared
        .logs
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .remaining_bytes();
    let mut line = String::new();
    let mut over = false;
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            line.push(' ');
        }
        let left = room.saturating_sub(line.len());
        if v.is_string() {
            let n = convert::js_string_len(v);
            if n > left.saturating_add(1) {
                over = true;
                line.push_str(
                    &convert::string_of(v)
                        .map(|s| s.chars().take(left).collect::<String>())
                        .unwrap_or_default(),
                );
                break;
            }
            line.push_str(&convert::string_of(v).unwrap_or_default());
            continue;
        }
        let text = match v.type_of() {
            rquickjs::Type::Undefined | rquickjs::Type::Uninitialized => "undefined".to_owned(),
            rquickjs::Type::Function | rquickjs::Type::Constructor => "[function]".to_owned(),
            rquickjs::Type::Symbol => "[symbol]".to_owned(),
            rquickjs::Type::BigInt => v
                .as_big_int()
                .and_then(|b| b.clone().to_i64().ok())
                .map(|n| format!("{n}n"))
                .unwrap_or_else(|| "[bigint]".to_owned()),
            _ => {
                let stop = || shared.should_interrupt();
                let mut w = ToJson::new(left.saturating_add(1), &stop);
                match w.top(v) {
                    Ok(j) => j.to_string(),
                    Err(ConvError::TooLarge) => {
                        over = true;
                        break;
                    }
                    Err(ConvError::Unsupported(m)) => format!("[unloggable: {m}]"),
                    Err(ConvError::Js(e)) => return Err(e),
                }
            }
        };
        line.push_str(&text);
    }
    if over {
        // The rest of this line does not fit: keep what does, count the rest.
        let mut logs = shared.logs.lock().unwrap_or_else(|p| p.into_inner());
        if room > 0 && !line.is_empty() {
            logs.push(line);
        }
        logs.drop_line(0);
        return Ok(());
    }
    shared.log_line(line);
    Ok(())
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
    let fail = |ctx: &Ctx<'js>, e: rquickjs::Error| -> ExecError { failure(ctx, e, shared, map) };

    let globals = ctx.globals();
    for name in REMOVED_GLOBALS {
        globals.remove(*name).map_err(|e| fail(ctx, e))?;
    }

    // The prelude: defines the frozen global `skarn`.
    // SAFETY: the bytes were produced by `Module::write` of this same engine
    // build in this process (see `compile`).
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
            Some(v) => classify(ctx, &v, shared, map),
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
                return returned_value(ctx, &v, shared, map);
            }
            PromiseState::Rejected => {
                let _ = promise.result::<Value<'js>>();
                let exc = ctx.catch();
                return Err(classify(ctx, &exc, shared, map));
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

/// Turn a failed engine call into the run's error.
fn failure(ctx: &Ctx<'_>, e: rquickjs::Error, shared: &Shared, map: &SourceMap) -> ExecError {
    if let Some(err) = shared.take_abort() {
        let _ = ctx.catch();
        return err;
    }
    if shared.cancel.load(Ordering::Relaxed) || Instant::now() >= shared.deadline {
        let _ = ctx.catch();
        return shared.deadline_error("");
    }
    match e {
        rquickjs::Error::Exception => {
            let exc = ctx.catch();
            classify(ctx, &exc, shared, map)
        }
        rquickjs::Error::Allocation => memory_error(&shared.limits),
        _ if shared.oom.load(Ordering::Relaxed) => {
            let _ = ctx.catch();
            memory_error(&shared.limits)
        }
        other => internal("engine error", other),
    }
}

/// Classify a thrown value: limit errors by their engine message, the rest
/// are the script's own runtime errors.
fn classify(ctx: &Ctx<'_>, exc: &Value<'_>, shared: &Shared, map: &SourceMap) -> ExecError {
    if let Some(err) = shared.take_abort() {
        return err;
    }
    if shared.cancel.load(Ordering::Relaxed) || Instant::now() >= shared.deadline {
        return shared.deadline_error("");
    }
    let mut err = js_error(ctx, exc, map);
    let raw = err.message.as_str();
    if raw.starts_with("InternalError: out of memory") || shared.oom.load(Ordering::Relaxed) {
        let mut m = memory_error(&shared.limits);
        m.line = err.line;
        m.column = err.column;
        return m;
    }
    if raw.starts_with("RangeError: Maximum call stack size exceeded")
        || raw.starts_with("InternalError: stack overflow")
    {
        err.kind = ErrorKind::Stack;
        err.message = format!(
            "native stack limit of {} exceeded ({raw})",
            fmt_bytes(shared.limits.stack_bytes)
        );
        return err;
    }
    if raw.starts_with("InternalError: interrupted") {
        return shared.deadline_error("");
    }
    err
}

/// Describe a thrown JS value, with its position mapped to the user's text.
fn js_error(ctx: &Ctx<'_>, exc: &Value<'_>, map: &SourceMap) -> ExecError {
    let mut err = ExecError::new(ErrorKind::Runtime, String::new());
    if let Some(obj) = exc.as_object().filter(|_| exc.is_error()) {
        let name: String = obj
            .get::<_, Value>("name")
            .ok()
            .and_then(|v| string_arg(&v))
            .unwrap_or_else(|| "Error".into());
        let message: String = obj
            .get::<_, Value>("message")
            .ok()
            .and_then(|v| string_arg(&v))
            .unwrap_or_default();
        err.message = if message.is_empty() {
            name
        } else {
            format!("{name}: {message}")
        };
        let stack: String = obj
            .get::<_, Value>("stack")
            .ok()
            .and_then(|v| string_arg(&v))
            .unwrap_or_default();
        for frame in stack
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("at "))
        {
            if let Some((func, line, col)) = parse_frame(frame) {
                if line < 2 {
                    continue;
                }
                let Some((l, c)) = map.original(line - 1, col) else {
                    continue;
                };
                if err.line.is_none() {
                    err.line = Some(l);
                    err.column = Some(c);
                }
                let func = if func.is_empty() || func == "<anonymous>" || func == "default" {
                    "<script>".to_owned()
                } else {
                    func
                };
                err.details.push(format!("at {func} ({l}:{c})"));
            }
        }
        if err.line.is_none() {
            // Syntax errors carry their position as "script:L:C" frames or
            // in the message; nothing else is reported.
            err.details.clear();
        }
    } else {
        let stop = || false;
        let mut w = ToJson::new(4096, &stop);
        let shown = match w.top(exc) {
            Ok(j) => j.to_string(),
            Err(_) => exc.type_of().as_str().to_owned(),
        };
        let _ = ctx;
        err.message = format!("uncaught exception: {shown}");
    }
    err
}

/// Parse "at name (script:L:C)" or "at script:L:C"; frames of other files
/// (the prelude, natives) give `None`.
fn parse_frame(frame: &str) -> Option<(String, u32, u32)> {
    let rest = frame.strip_prefix("at ")?;
    let (func, loc) = match rest.rfind(" (") {
        Some(i) if rest.ends_with(')') => (&rest[..i], &rest[i + 2..rest.len() - 1]),
        _ => ("", rest),
    };
    let mut parts = loc.rsplitn(3, ':');
    let col: u32 = parts.next()?.parse().ok()?;
    let line: u32 = parts.next()?.parse().ok()?;
    let file = parts.next()?;
    if file != SCRIPT_NAME {
        return None;
    }
    Some((func.to_owned(), line, col))
}

/// Convert the returned value under the output cap.
fn returned_value<'js>(
    ctx: &Ctx<'js>,
    v: &Value<'js>,
    shared: &Shared,
    map: &SourceMap,
) -> Result<Json, ExecError> {
    let cap = shared.limits.max_output_bytes;
    let stop = || shared.should_interrupt();
    let mut w = ToJson::new(cap, &stop);
    let too_large = || {
        ExecError::new(
            ErrorKind::Output,
            format!(
                "the returned value is larger than the output cap of {}",
                fmt_bytes(cap)
            ),
        )
    };
    match w.top(v) {
        Ok(j) => {
            // The walk counts conservatively; check the exact size too.
            let exact = serde_json::to_vec(&j)
                .map(|b| b.len())
                .unwrap_or(usize::MAX);
            if exact > cap {
                return Err(too_large());
            }
            let _ = w.used();
            Ok(j)
        }
        Err(ConvError::TooLarge) => Err(too_large()),
        Err(ConvError::Unsupported(m)) => Err(ExecError::new(
            ErrorKind::Runtime,
            format!("the returned value cannot be converted to JSON: {m}"),
        )),
        Err(ConvError::Js(e)) => Err(failure(ctx, e, shared, map)),
    }
}
