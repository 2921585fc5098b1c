//! The host side of the isolate: the native functions the prelude turns
//! into `skarn.callTool`, `skarn.listTools`, `skarn.readResource` and
//! `skarn.log`. Host calls are checked, counted against the budget and
//! queued here; the driver in `engine` hands them to the `ToolBridge`.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use rquickjs::function::{Opt, Rest};
use rquickjs::{Ctx, Function, Object, Promise, Value, qjs};
use serde_json::Value as Json;

use crate::bridge::BridgeError;
use crate::convert::{self, ConvError, ToJson, string_arg};
use crate::outcome::{ErrorKind, ExecError};
use crate::shared::Shared;

/// A host call made by the script, waiting to be handed to the bridge.
pub(crate) enum HostCall {
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

pub(crate) struct Request<'js> {
    pub(crate) call: HostCall,
    pub(crate) resolve: Function<'js>,
    pub(crate) reject: Function<'js>,
    /// An `Error` created at the call site: its stack points at the user's
    /// line, and it becomes the rejection if the call fails.
    pub(crate) site: rquickjs::Exception<'js>,
}

/// Host-side state reachable from the native functions given to the prelude.
pub(crate) struct Host<'js> {
    pub(crate) queue: Rc<RefCell<VecDeque<Request<'js>>>>,
    pub(crate) shared: Arc<Shared>,
}

impl<'js> Host<'js> {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Host {
            queue: Rc::new(RefCell::new(VecDeque::new())),
            shared,
        }
    }

    /// Drop every JS reference held on the host side (before the context goes).
    pub(crate) fn clear(&self) {
        self.queue.borrow_mut().clear();
    }

    pub(crate) fn object(&self, ctx: &Ctx<'js>) -> rquickjs::Result<Object<'js>> {
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
                    if let Some(m) =
                        crate::args::js_name_too_long(&[("server", &server), ("tool", &tool)])
                    {
                        return rejected_bridge(
                            &ctx,
                            &BridgeError::InvalidArguments { message: m },
                        );
                    }
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
                    if let Some(m) =
                        crate::args::name_too_long(&[("server", &server), ("tool", &tool)])
                    {
                        return rejected_bridge(
                            &ctx,
                            &BridgeError::InvalidArguments { message: m },
                        );
                    }
                    let (args, arg_bytes) = match crate::args::tool_args(&shared, args.0) {
                        Ok(Ok(a)) => a,
                        Ok(Err(e)) => return rejected_bridge(&ctx, &e),
                        Err(e) => return Err(e),
                    };
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
                    if let Some(m) =
                        crate::args::js_name_too_long(&[("server", &server), ("uri", &uri)])
                    {
                        return rejected_bridge(
                            &ctx,
                            &BridgeError::InvalidArguments { message: m },
                        );
                    }
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
                    if let Some(m) =
                        crate::args::name_too_long(&[("server", &server), ("uri", &uri)])
                    {
                        return rejected_bridge(
                            &ctx,
                            &BridgeError::InvalidArguments { message: m },
                        );
                    }
                    enqueue(&ctx, &q, &shared, HostCall::Read { server, uri })
                },
            )?,
        )?;

        // For the array guard (array_guard.js): is `v` a genuine Array (not
        // a proxy, not an array-like), and the longest array-like a
        // generic built-in may walk without polling the interrupt.
        host.set(
            "plainArray",
            Function::new(ctx.clone(), |v: Value<'js>| v.is_array())?,
        )?;
        host.set(
            "maxLength",
            crate::args::array_length_bound(&self.shared.limits) as f64,
        )?;

        // For the native-loop guard (native_guard.js): its script loops do
        // native work between their backward jumps, so they end the run
        // themselves, uncatchably, once the deadline has passed.
        let shared = self.shared.clone();
        host.set(
            "poll",
            Function::new(ctx.clone(), move |ctx: Ctx<'js>| -> rquickjs::Result<()> {
                if !shared.should_interrupt() {
                    return Ok(());
                }
                let err = shared
                    .take_abort()
                    .unwrap_or_else(|| shared.deadline_error(""));
                shared.set_abort(err.clone());
                Err(throw_uncatchable(&ctx, &err.message))
            })?,
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

/// Count the call against the budget and queue it; the returned promise
/// settles when the bridge answers.
pub(crate) fn enqueue<'js>(
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
pub(crate) fn throw_uncatchable(ctx: &Ctx<'_>, message: &str) -> rquickjs::Error {
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

pub(crate) fn rejected<'js>(ctx: &Ctx<'js>, message: &str) -> rquickjs::Result<Promise<'js>> {
    let (promise, _resolve, reject) = ctx.promise()?;
    let err = type_error(ctx, message)?;
    reject.call::<_, ()>((err,))?;
    Ok(promise)
}

pub(crate) fn rejected_bridge<'js>(
    ctx: &Ctx<'js>,
    err: &BridgeError,
) -> rquickjs::Result<Promise<'js>> {
    let (promise, _resolve, reject) = ctx.promise()?;
    reject.call::<_, ()>((bridge_error(ctx, err)?,))?;
    Ok(promise)
}

pub(crate) fn type_error<'js>(ctx: &Ctx<'js>, message: &str) -> rquickjs::Result<Value<'js>> {
    let ctor: Function<'js> = ctx.globals().get("TypeError")?;
    ctor.call((message,))
}

/// The JS error a script sees for a failed host call: an `Error` whose
/// message is the bridge error's text and whose `code` is its kind.
pub(crate) fn bridge_error<'js>(ctx: &Ctx<'js>, err: &BridgeError) -> rquickjs::Result<Value<'js>> {
    let e = rquickjs::Exception::from_message(ctx.clone(), &err.to_string())?;
    bridge_error_on(e, err)
}

/// Fill `e` (usually the call-site error) with the bridge error's message and code.
pub(crate) fn bridge_error_on<'js>(
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
pub(crate) fn log_values<'js>(shared: &Shared, values: &[Value<'js>]) -> rquickjs::Result<()> {
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
        // Count what is known without building it: the strings' lengths.
        let known: usize = values
            .iter()
            .filter(|v| v.is_string())
            .map(convert::js_string_len)
            .sum();
        logs.drop_line(known.saturating_sub(room));
        return Ok(());
    }
    shared.log_line(line);
    Ok(())
}
