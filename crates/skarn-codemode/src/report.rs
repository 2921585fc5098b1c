//! Turning what the engine saw into the run's result: thrown values
//! classified into error kinds (limits by their engine signature), stack
//! frames mapped to the user's lines, and the returned value converted to
//! JSON under the output cap.

use std::sync::atomic::Ordering;
use std::time::Instant;

use rquickjs::{Ctx, Value};
use serde_json::Value as Json;

use crate::bounds::MAX_ERROR_FRAMES;
use crate::convert::{ConvError, ToJson};
use crate::errcap::EarlierCuts;
use crate::errtext::{ErrorReader, Prefix};
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
pub(crate) fn failure<'js>(
    ctx: &Ctx<'js>,
    e: rquickjs::Error,
    shared: &Shared,
    map: &SourceMap,
    rd: &ErrorReader<'js>,
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
            classify(ctx, &exc, shared, map, rd)
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
pub(crate) fn classify<'js>(
    ctx: &Ctx<'js>,
    exc: &Value<'js>,
    shared: &Shared,
    map: &SourceMap,
    rd: &ErrorReader<'js>,
) -> ExecError {
    if let Some(err) = shared.take_abort() {
        return err;
    }
    if shared.cancel.load(Ordering::Relaxed) || Instant::now() >= shared.deadline {
        return shared.deadline_error("");
    }
    let cap = shared.limits.error_bytes();
    let mut err = js_error(ctx, exc, map, rd, cap, &shared.limits);
    // Describing a thrown value that is not an `Error` ran script code
    // (`toJSON`, getters) that may have looped until the deadline or the
    // host ended the run.
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
        err.bound(cap);
        return err;
    }
    if raw.starts_with("InternalError: interrupted") {
        return shared.deadline_error("");
    }
    err
}

/// Describe a thrown JS value, with its position mapped to the user's text,
/// in at most `cap` bytes of text (see [`Limits::error_bytes`]).
///
/// An `Error`'s `name`, `message` and `stack` are read without running the
/// script's code ([`ErrorReader`]) and only as much of each as fits is
/// copied out of the engine; a memory failure while doing so gives the
/// memory error.
pub(crate) fn js_error<'js>(
    ctx: &Ctx<'js>,
    exc: &Value<'js>,
    map: &SourceMap,
    rd: &ErrorReader<'js>,
    cap: usize,
    limits: &Limits,
) -> ExecError {
    match read_error(ctx, exc, map, rd, cap) {
        Ok(e) => e,
        Err(_) => {
            let _ = ctx.catch();
            memory_error(limits)
        }
    }
}

fn read_error<'js>(
    ctx: &Ctx<'js>,
    exc: &Value<'js>,
    map: &SourceMap,
    rd: &ErrorReader<'js>,
    cap: usize,
) -> Result<ExecError, ConvError> {
    let mut err = ExecError::new(ErrorKind::Runtime, String::new());
    if !exc.is_error() {
        let stop = || false;
        let mut w = ToJson::new(cap.min(4096), &stop);
        let shown = match w.top(exc) {
            Ok(j) => j.to_string(),
            Err(_) => {
                let _ = ctx.catch();
                exc.type_of().as_str().to_owned()
            }
        };
        err.message = format!("uncaught exception: {shown}");
        err.bound(cap);
        return Ok(err);
    }
    let mut cuts = EarlierCuts::default();
    // Each piece is read up to the whole cap: anything cut here lies past
    // the point where `fit` cuts the joined message.
    let text = |key: &std::ffi::CStr| -> Result<Option<Prefix>, ConvError> {
        match rd.property(ctx, exc, key) {
            Some(v) if v.is_string() => rd.prefix(&v, cap).map(Some),
            _ => Ok(None),
        }
    };
    let name = text(c"name")?.unwrap_or(Prefix {
        text: "Error".into(),
        left_units: 0,
    });
    let message = text(c"message")?.unwrap_or(Prefix {
        text: String::new(),
        left_units: 0,
    });
    cuts.message_units = (name.left_units as u64).saturating_add(message.left_units as u64);
    err.message = if message.text.is_empty() && message.left_units == 0 {
        name.text
    } else {
        format!("{}: {}", name.text, message.text)
    };
    if let Some(stack) = text(c"stack")? {
        let mut lines: Vec<&str> = stack.text.lines().collect();
        if stack.left_units > 0 {
            // The last line read may be a frame cut short.
            lines.pop();
            cuts.stack_units = stack.left_units as u64;
        }
        for frame in lines
            .iter()
            .map(|l| l.trim())
            .filter(|l| l.starts_with("at "))
        {
            let Some((func, line, col)) = parse_frame(frame) else {
                continue;
            };
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
            if err.details.len() >= MAX_ERROR_FRAMES {
                cuts.frames += 1;
                continue;
            }
            let func = if func.is_empty() || func == "<anonymous>" || func == "default" {
                "<script>"
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
        cuts.frames = 0;
        cuts.stack_units = 0;
    }
    crate::errcap::fit(&mut err, cap, cuts);
    Ok(err)
}

/// Parse "at name (script:L:C)" or "at script:L:C"; frames of other files
/// (the prelude, natives) give `None`.
pub(crate) fn parse_frame(frame: &str) -> Option<(&str, u32, u32)> {
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
    Some((func, line, col))
}

/// Convert the returned value under the output cap.
pub(crate) fn returned_value<'js>(
    ctx: &Ctx<'js>,
    v: &Value<'js>,
    shared: &Shared,
    map: &SourceMap,
    rd: &ErrorReader<'js>,
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
        Err(ConvError::Js(e)) => Err(failure(ctx, e, shared, map, rd)),
    }
}
