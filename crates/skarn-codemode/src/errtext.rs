//! Reading a thrown error's text without running the script's code and
//! without copying more of it out of the engine than the report can carry.
//!
//! A thrown value is the script's own object: its `name`, `message` or
//! `stack` may be getters, its prototype chain may hold a proxy, its
//! strings may be tens of megabytes. The report reads only data properties
//! (own or inherited from ordinary objects, stopping at the first proxy)
//! plus the engine's own `Error.prototype.stack` getter, all without
//! calling script code, and reads a long string as a prefix cut inside the
//! engine with `String.prototype.slice` as it was before the script ran.

use std::mem::MaybeUninit;

use rquickjs::{Ctx, Function, Object, Value, qjs};

use crate::convert::{ConvError, js_string_len, string_of};

/// Deepest prototype chain walked for one property.
const MAX_PROTO_HOPS: usize = 16;

/// QuickJS's "no atom" (what `JS_NewAtom` returns when out of memory).
const JS_ATOM_NULL: qjs::JSAtom = 0;

/// The engine's own functions the report uses, captured from a context
/// before any script code ran in it (so later tampering changes nothing).
pub(crate) struct ErrorReader<'js> {
    /// `String.prototype.slice`.
    slice: Option<Function<'js>>,
    /// The getter of `Error.prototype.stack` (native: reads the stack the
    /// engine recorded, runs no script).
    stack_getter: Option<Value<'js>>,
}

/// A prefix of a JS string copied out, and how much of it was left behind.
pub(crate) struct Prefix {
    pub(crate) text: String,
    /// UTF-16 code units not copied (each is at least one UTF-8 byte).
    pub(crate) left_units: usize,
}

/// One property looked up without running code.
enum Own<'js> {
    Data(Value<'js>),
    Getter(Value<'js>),
    Absent,
    /// A proxy, or the lookup failed: nothing is read from it.
    Opaque,
}

impl<'js> ErrorReader<'js> {
    /// Capture the functions from `ctx`: call before the script's code runs.
    pub(crate) fn capture(ctx: &Ctx<'js>) -> Self {
        let slice = (|| -> rquickjs::Result<Function<'js>> {
            let string: Object<'js> = ctx.globals().get("String")?;
            let proto: Object<'js> = string.get("prototype")?;
            proto.get("slice")
        })()
        .ok();
        let stack_getter = (|| -> rquickjs::Result<Option<Value<'js>>> {
            let error: Object<'js> = ctx.globals().get("Error")?;
            let proto: Value<'js> = error.get("prototype")?;
            Ok(match own_property(ctx, &proto, c"stack") {
                Own::Getter(g) if g.is_function() => Some(g),
                _ => None,
            })
        })()
        .ok()
        .flatten();
        ErrorReader {
            slice,
            stack_getter,
        }
    }

    /// The value of `key` on `obj` as a plain lookup would find it, but only
    /// through data properties of ordinary objects (and the engine's own
    /// `stack` getter): `None` at a user getter, a proxy or a failure.
    pub(crate) fn property(
        &self,
        ctx: &Ctx<'js>,
        obj: &Value<'js>,
        key: &std::ffi::CStr,
    ) -> Option<Value<'js>> {
        let mut cur = obj.clone();
        for _ in 0..MAX_PROTO_HOPS {
            match own_property(ctx, &cur, key) {
                Own::Data(v) => return Some(v),
                Own::Getter(g) => {
                    let native = self.stack_getter.as_ref().is_some_and(|s| *s == g);
                    if !native {
                        return None;
                    }
                    let f = g.as_function()?;
                    return match f.call::<_, Value<'js>>((rquickjs::function::This(obj.clone()),)) {
                        Ok(v) => Some(v),
                        Err(_) => {
                            let _ = ctx.catch();
                            None
                        }
                    };
                }
                Own::Opaque => return None,
                Own::Absent => {}
            }
            let o = cur.as_object()?;
            cur = o.get_prototype()?.into_value();
        }
        None
    }

    /// Copy at most `max_units` UTF-16 code units of the string `v` out of
    /// the engine (cut inside the engine when it is longer). `Err` when the
    /// engine cannot allocate the prefix (the memory limit).
    pub(crate) fn prefix(&self, v: &Value<'js>, max_units: usize) -> Result<Prefix, ConvError> {
        let len = js_string_len(v);
        if len <= max_units {
            return Ok(Prefix {
                text: string_of(v)?,
                left_units: 0,
            });
        }
        let Some(slice) = &self.slice else {
            // Never copy a long string whole: report nothing of it.
            return Ok(Prefix {
                text: String::new(),
                left_units: len,
            });
        };
        let head: Value<'js> =
            slice.call((rquickjs::function::This(v.clone()), 0, max_units as f64))?;
        let mut text = string_of(&head)?;
        let mut left_units = len - max_units;
        // A cut between the halves of a surrogate pair leaves a lone half,
        // copied out as U+FFFD: drop it.
        if max_units > 0 && text.ends_with('\u{FFFD}') {
            text.pop();
            left_units += 1;
        }
        Ok(Prefix { text, left_units })
    }
}

/// Look `key` up among the own properties of `obj` without running code.
fn own_property<'js>(ctx: &Ctx<'js>, obj: &Value<'js>, key: &std::ffi::CStr) -> Own<'js> {
    if !obj.is_object() {
        return Own::Absent;
    }
    if obj.is_proxy() {
        return Own::Opaque;
    }
    let raw = ctx.as_raw().as_ptr();
    let mut desc = MaybeUninit::<qjs::JSPropertyDescriptor>::uninit();
    // SAFETY: `obj` is a live object of this context and not a proxy, so
    // JS_GetOwnProperty runs no script (only native exotic handlers). On a
    // return of 1 it fills `desc` with new references to value, getter and
    // setter, which are wrapped below and so freed exactly once; the atom
    // is freed after the lookup.
    let (r, desc) = unsafe {
        let atom = qjs::JS_NewAtom(raw, key.as_ptr());
        if atom == JS_ATOM_NULL {
            (-1, desc)
        } else {
            let r = qjs::JS_GetOwnProperty(raw, desc.as_mut_ptr(), obj.as_raw(), atom);
            qjs::JS_FreeAtom(raw, atom);
            (r, desc)
        }
    };
    if r < 0 {
        let _ = ctx.catch();
        return Own::Opaque;
    }
    if r == 0 {
        return Own::Absent;
    }
    // SAFETY: r == 1: JS_GetOwnProperty initialised every field (see above).
    let d = unsafe { desc.assume_init() };
    // SAFETY: each field is a new reference owned by us (see above).
    let (value, getter, _setter) = unsafe {
        (
            Value::from_raw(ctx.clone(), d.value),
            Value::from_raw(ctx.clone(), d.getter),
            Value::from_raw(ctx.clone(), d.setter),
        )
    };
    if d.flags & qjs::JS_PROP_GETSET as i32 != 0 {
        Own::Getter(getter)
    } else {
        Own::Data(value)
    }
}
