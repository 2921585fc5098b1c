//! Checks on what a script hands to a host call, before anything reaches
//! the bridge: tool arguments (converted under the size caps, measured as
//! the escaped JSON the bridge receives), names, and the array guard's bound.

use std::sync::atomic::Ordering;

use rquickjs::Value;
use serde_json::Value as Json;

use crate::bounds::MAX_ARGS_BYTES;
use crate::bridge::BridgeError;
use crate::convert::{ConvError, ToJson};
use crate::human::fmt_bytes;
use crate::shared::Shared;

/// Bytes of one array slot in QuickJS (a `JSValue`): no array under the
/// memory limit can hold more elements than the limit divided by this.
const SLOT_BYTES: usize = 16;

/// The longest `length` the generic `Array.prototype` built-ins accept
/// (array_guard.js): what the memory limit could hold as a dense array, at
/// least 65 536.
pub(crate) fn array_length_bound(limits: &crate::limits::Limits) -> usize {
    (limits.memory_bytes / SLOT_BYTES).max(1 << 16)
}

/// Longest server name, tool name or resource URI a script may pass (UTF-8
/// bytes): host-call messages stay far below the worker's line cap.
pub(crate) const MAX_NAME_BYTES: usize = 64 << 10;

pub(crate) fn name_too_long(names: &[(&str, &str)]) -> Option<String> {
    names
        .iter()
        .find(|(_, v)| v.len() > MAX_NAME_BYTES)
        .map(|(what, v)| {
            format!(
                "the {what} is {} bytes long, at most {} allowed",
                v.len(),
                fmt_bytes(MAX_NAME_BYTES)
            )
        })
}

/// The same check on names still inside the engine, judged before they are
/// copied out (a UTF-16 unit is at least one UTF-8 byte, so a string longer
/// than the limit in units is too long in bytes): a script cannot make the
/// host copy a name of many megabytes only to refuse it.
pub(crate) fn js_name_too_long(names: &[(&str, &Value<'_>)]) -> Option<String> {
    names.iter().find_map(|(what, v)| {
        let units = crate::convert::js_string_len(v);
        (units > MAX_NAME_BYTES).then(|| {
            format!(
                "the {what} is at least {units} bytes long, at most {} allowed",
                fmt_bytes(MAX_NAME_BYTES)
            )
        })
    })
}

fn in_flight_message(shared: &Shared) -> String {
    format!(
        "more than {} of tool arguments in flight at once",
        fmt_bytes(shared.limits.memory_bytes)
    )
}

/// Tool arguments as JSON plus their size, or the catchable error the call
/// rejects with (`Err` only for an exception or interrupt of the engine).
pub(crate) fn tool_args(
    shared: &Shared,
    args: Option<Value<'_>>,
) -> rquickjs::Result<Result<(Json, usize), BridgeError>> {
    let invalid = |message: String| Ok(Err(BridgeError::InvalidArguments { message }));
    let (args, arg_bytes) = match args {
        None => (Json::Object(Default::default()), 2),
        Some(v) if v.is_undefined() || v.is_null() => (Json::Object(Default::default()), 2),
        Some(v) => {
            let stop = || shared.should_interrupt();
            // Never build more than what may still be in flight: a refused
            // call costs no copy.
            let left = shared
                .limits
                .memory_bytes
                .saturating_sub(shared.args_in_flight.load(Ordering::Relaxed));
            let mut w = ToJson::new(MAX_ARGS_BYTES.min(left), &stop);
            match w.top(&v) {
                Ok(j @ Json::Object(_)) => (j, w.used()),
                Ok(_) => return invalid("tool arguments must be an object".into()),
                Err(ConvError::Js(e)) => return Err(e),
                Err(ConvError::TooLarge) if left < MAX_ARGS_BYTES => {
                    return invalid(in_flight_message(shared));
                }
                Err(ConvError::TooLarge) => {
                    return invalid(format!(
                        "tool arguments are larger than {}",
                        fmt_bytes(MAX_ARGS_BYTES)
                    ));
                }
                Err(ConvError::Unsupported(m)) => return invalid(m.replacen("$", "args", 1)),
            }
        }
    };
    let in_flight = shared.args_in_flight.load(Ordering::Relaxed);
    if in_flight.saturating_add(arg_bytes) > shared.limits.memory_bytes {
        return invalid(in_flight_message(shared));
    }
    Ok(Ok((args, arg_bytes)))
}
