//! Turning what the engine saw into the run's result: thrown values
//! classified into error kinds (limits by their engine signature), stack
//! frames mapped to the user's lines, and the returned value converted to
//! JSON under the output cap.

use std::sync::atomic::Ordering;
use std::time::Instant;

use rquickjs::{Ctx, Value};
use serde_json::Value as Json;

use crate::convert::{ConvError, ToJson, string_arg};
use crate::human::fmt_bytes;
use crate::limits::Limits;
use crate::outcome::{ErrorKind, ExecError};
use crate::position::{SCRIPT_NAME, SourceMap};
use crate::shared::Shared;

pub(crate) fn internal(what: &str, e: impl std::fmt::Display) -> ExecError {
    ExecError::new(ErrorKind::Internal, format!("{what}: {e}"))
}

pub(crate) fn memory_error(limits: &Limits) -> ExecError {
    ExecError::new(
        ErrorKind::Memory,
        format!(
            "memory limit of {} exceeded",
            fmt_bytes(limits.memory_bytes)
        ),
    )
}

pub(crate) fn exception_text(ctx: &Ctx<'_>, e: rquickjs::Error) -> String {
    if e.is_exception() {
        let v = ctx.catch();
        if let Some(o) = v.as_object() {
            let m: Option<String> = o.get("message").ok();
            return m.unwrap_or_else(|| "exception".into());
        }
    }
    e.to_string()
}

/// Turn a failed engine call into the run's error.
pub(crate) fn failure(
    ctx: &Ctx<'_>,
    e: rquickjs::Error,
    shared: &Shared,
    map: &SourceMap,
) -> ExecError {
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
pub(crate) fn classify(
    ctx: &Ctx<'_>,
    exc: &Value<'_>,
    shared: &Shared,
    map: &SourceMap,
) -> ExecError {
    if let Some(err) = shared.take_abort() {
        return err;
    }
    if shared.cancel.load(Ordering::Relaxed) || Instant::now() >= shared.deadline {
        return shared.deadline_error("");
    }
    let mut err = js_error(ctx, exc, map);
    // Describing the value ran script code (`toJSON`, getters) that may have
    // looped until the deadline or the host ended the run.
    if let Some(err) = shared.take_abort() {
        return err;
    }
    if shared.cancel.load(Ordering::Relaxed) || Instant::now() >= shared.deadline {
        return shared.deadline_error("");
    }
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
pub(crate) fn js_error(ctx: &Ctx<'_>, exc: &Value<'_>, map: &SourceMap) -> ExecError {
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
pub(crate) fn parse_frame(frame: &str) -> Option<(String, u32, u32)> {
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
pub(crate) fn returned_value<'js>(
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
