//! Conversions between JavaScript values in the isolate and JSON on the host.
//!
//! JS -> JSON walks the value itself (no `JSON.stringify` first) and counts
//! the bytes of JSON it would produce, stopping as soon as the count passes
//! the cap: a script returning a 10 GB string or a billion-element array-like
//! costs at most the cap on the host. Conversions follow `JSON.stringify`
//! except where it would silently lose data:
//! - `undefined` at the top level becomes `null`; as an object property it is
//!   omitted; in an array it becomes `null` (as in JSON).
//! - `NaN` and `±Infinity` become `null` (as in JSON).
//! - A `toJSON` method is honoured (so a `Date` becomes its ISO string).
//! - An `Error` becomes `{"name": ..., "message": ...}`.
//! - `BigInt`, functions and symbols anywhere are errors naming the path
//!   (`JSON.stringify` throws on BigInt and drops the others silently).
//! - A cycle is an error naming the path; nesting deeper than
//!   [`MAX_DEPTH`] levels is an error.
//! - Other objects (Map, Set, class instances...) give their own enumerable
//!   string-keyed properties, as in JSON.

use rquickjs::{Array, Ctx, Object, Type, Value};
use serde_json::{Map, Number, Value as Json};

/// Deepest nesting converted either way.
pub const MAX_DEPTH: usize = 256;

#[derive(Debug)]
pub(crate) enum ConvError {
    /// The JSON would be larger than the cap.
    TooLarge,
    /// A value with no JSON form (message says what and where).
    Unsupported(String),
    /// A getter or `toJSON` threw (the exception is pending on the context).
    Js(rquickjs::Error),
}

impl From<rquickjs::Error> for ConvError {
    fn from(e: rquickjs::Error) -> Self {
        ConvError::Js(e)
    }
}

/// Bounded JS -> JSON walker.
pub(crate) struct ToJson<'s, 'js> {
    cap: usize,
    used: usize,
    steps: u64,
    stack: Vec<Value<'js>>,
    stop: &'s dyn Fn() -> bool,
}

impl<'s, 'js> ToJson<'s, 'js> {
    /// `stop` is polled now and then; when it returns true the walk ends
    /// with `ConvError::Js` and the caller reports the reason itself.
    pub(crate) fn new(cap: usize, stop: &'s dyn Fn() -> bool) -> Self {
        ToJson {
            cap,
            used: 0,
            steps: 0,
            stack: Vec::new(),
            stop,
        }
    }

    /// Bytes counted so far.
    pub(crate) fn used(&self) -> usize {
        self.used
    }

    fn spend(&mut self, n: usize) -> Result<(), ConvError> {
        self.used = self.used.saturating_add(n);
        if self.used > self.cap {
            return Err(ConvError::TooLarge);
        }
        self.steps += 1;
        if self.steps.is_multiple_of(1024) && (self.stop)() {
            return Err(ConvError::Js(rquickjs::Error::Exception));
        }
        Ok(())
    }

    /// Convert a top-level value (`undefined` becomes `null`).
    pub(crate) fn top(&mut self, v: &Value<'js>) -> Result<Json, ConvError> {
        Ok(self.value(v, "", "$")?.unwrap_or_else(|| {
            self.used += 4;
            Json::Null
        }))
    }

    /// `None` means "omit" (undefined, as in JSON).
    fn value(&mut self, v: &Value<'js>, key: &str, path: &str) -> Result<Option<Json>, ConvError> {
        match v.type_of() {
            Type::Uninitialized | Type::Undefined => Ok(None),
            Type::Null => {
                self.spend(4)?;
                Ok(Some(Json::Null))
            }
            Type::Bool => {
                self.spend(5)?;
                Ok(Some(Json::Bool(v.as_bool().unwrap_or(false))))
            }
            Type::Int => {
                self.spend(11)?;
                Ok(Some(Json::from(v.as_int().unwrap_or(0))))
            }
            Type::Float => {
                let f = v.as_float().unwrap_or(f64::NAN);
                self.spend(24)?;
                Ok(Some(number(f)))
            }
            Type::String => {
                // Check the length before copying the string out.
                self.spend(js_string_len(v) + 2)?;
                let s = string_of(v)?;
                // Count what the string takes as JSON text: escapes included
                // (a control character becomes six bytes).
                self.spend(escaped_len(&s).saturating_sub(js_string_len(v)))?;
                Ok(Some(Json::String(s)))
            }
            Type::BigInt => Err(ConvError::Unsupported(format!(
                "a BigInt at {path} has no JSON form (convert it with String(x) or Number(x))"
            ))),
            Type::Symbol => Err(ConvError::Unsupported(format!(
                "a Symbol at {path} has no JSON form"
            ))),
            Type::Function | Type::Constructor => Err(ConvError::Unsupported(format!(
                "a function at {path} has no JSON form"
            ))),
            Type::Module | Type::Unknown => Err(ConvError::Unsupported(format!(
                "the value at {path} has no JSON form"
            ))),
            Type::Array | Type::Object | Type::Promise | Type::Exception | Type::Proxy => {
                self.object(v, key, path).map(Some)
            }
        }
    }

    fn object(&mut self, v: &Value<'js>, key: &str, path: &str) -> Result<Json, ConvError> {
        let Some(obj) = v.as_object() else {
            return Err(ConvError::Unsupported(format!(
                "the value at {path} has no JSON form"
            )));
        };
        if self.stack.iter().any(|s| s == v) {
            return Err(ConvError::Unsupported(format!(
                "the value at {path} refers to itself (a cycle has no JSON form)"
            )));
        }
        if self.stack.len() >= MAX_DEPTH {
            return Err(ConvError::Unsupported(format!(
                "the value at {path} is nested deeper than {MAX_DEPTH} levels"
            )));
        }
        // toJSON (Date and user objects) first, as JSON.stringify does.
        let to_json: Value<'js> = obj.get("toJSON")?;
        if let Some(f) = to_json.as_function() {
            let replaced: Value<'js> = f.call((rquickjs::function::This(v.clone()), key))?;
            self.stack.push(v.clone());
            let out = self.value(&replaced, key, path);
            self.stack.pop();
            return Ok(out?.unwrap_or(Json::Null));
        }
        self.stack.push(v.clone());
        let out = if v.is_error() {
            self.error(obj)
        } else if let Some(arr) = obj.as_array() {
            self.array(arr, path)
        } else {
            self.plain(obj, path)
        };
        self.stack.pop();
        out
    }

    fn error(&mut self, obj: &Object<'js>) -> Result<Json, ConvError> {
        let mut map = Map::new();
        for k in ["name", "message"] {
            let val: Value<'js> = obj.get(k)?;
            if val.is_string() {
                // Check the length before copying the string out.
                self.spend(js_string_len(&val) + k.len() + 6)?;
                let s = string_of(&val)?;
                self.spend(escaped_len(&s).saturating_sub(js_string_len(&val)))?;
                map.insert(k.to_owned(), Json::String(s));
            }
        }
        self.spend(2)?;
        Ok(Json::Object(map))
    }

    fn array(&mut self, arr: &Array<'js>, path: &str) -> Result<Json, ConvError> {
        self.spend(2)?;
        // Read `length` as a number: it may exceed what `Array::len` accepts.
        let len: f64 = arr.as_object().get("length")?;
        let len = if len.is_finite() && len > 0.0 {
            len as u64
        } else {
            0
        };
        let mut out = Vec::new();
        for i in 0..len {
            let i = i as usize;
            let item: Value<'js> = arr.get(i)?;
            let sub = format!("{path}[{i}]");
            let j = self.value(&item, &i.to_string(), &sub)?;
            self.spend(1)?;
            out.push(j.unwrap_or_else(|| {
                self.used += 4;
                Json::Null
            }));
        }
        Ok(Json::Array(out))
    }

    fn plain(&mut self, obj: &Object<'js>, path: &str) -> Result<Json, ConvError> {
        self.spend(2)?;
        let mut map = Map::new();
        let keys: Vec<String> = obj.keys::<String>().collect::<rquickjs::Result<_>>()?;
        for k in keys {
            let item: Value<'js> = obj.get(k.as_str())?;
            let sub = format!("{path}.{k}");
            if let Some(j) = self.value(&item, &k, &sub)? {
                self.spend(k.len() + 4)?;
                map.insert(k, j);
            }
        }
        Ok(Json::Object(map))
    }
}

fn number(f: f64) -> Json {
    if !f.is_finite() {
        return Json::Null;
    }
    if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
        // -0 prints as 0 in JSON too.
        return Json::from(f as i64);
    }
    Number::from_f64(f).map(Json::Number).unwrap_or(Json::Null)
}

/// Length in UTF-16 code units of a JS string value (0 for non-strings),
/// read without copying the string out of the engine.
pub(crate) fn js_string_len(v: &Value<'_>) -> usize {
    if !v.is_string() {
        return 0;
    }
    let ctx = v.ctx();
    // SAFETY: `v` is a live string value of this context; JS_GetPropertyStr
    // returns a new reference that we free below; "length" of a primitive
    // string is a plain number and runs no script.
    unsafe {
        let len =
            rquickjs::qjs::JS_GetPropertyStr(ctx.as_raw().as_ptr(), v.as_raw(), c"length".as_ptr());
        let mut out: f64 = 0.0;
        rquickjs::qjs::JS_ToFloat64(ctx.as_raw().as_ptr(), &mut out, len);
        rquickjs::qjs::JS_FreeValue(ctx.as_raw().as_ptr(), len);
        out.max(0.0) as usize
    }
}

/// Bytes of `s` inside a JSON string literal (quotes excluded), as
/// serde_json writes it. Eight bytes at a time: only words holding a byte
/// that needs escaping are looked at byte by byte (strings can be large).
pub(crate) fn escaped_len(s: &str) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let extra = |b: u8| match b {
        b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 1,
        0..=0x1f => 5,
        _ => 0,
    };
    let bytes = s.as_bytes();
    let mut total = bytes.len();
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let v = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        let q = v ^ (ONES * u64::from(b'"'));
        let b = v ^ (ONES * u64::from(b'\\'));
        // A byte below 0x20, a quote or a backslash somewhere in the word.
        let special = (v.wrapping_sub(ONES * 0x20) & !v
            | q.wrapping_sub(ONES) & !q
            | b.wrapping_sub(ONES) & !b)
            & HIGH;
        if special != 0 {
            total += w.iter().map(|&b| extra(b)).sum::<usize>();
        }
    }
    total + words.remainder().iter().map(|&b| extra(b)).sum::<usize>()
}

/// A JS string as Rust text; lone surrogates become U+FFFD.
pub(crate) fn string_of(v: &Value<'_>) -> Result<String, ConvError> {
    if !v.is_string() {
        return Ok(String::new());
    }
    let ctx = v.ctx();
    // SAFETY: `v` is a live string of this context. JS_ToCStringLen returns
    // a buffer owned by the engine of `len` bytes (or null on OOM), which we
    // copy and release with JS_FreeCString before returning.
    unsafe {
        let raw = ctx.as_raw().as_ptr();
        let mut len: usize = 0;
        let ptr = rquickjs::qjs::JS_ToCStringLen(raw, &mut len as *mut usize as *mut _, v.as_raw());
        if ptr.is_null() {
            return Err(ConvError::Js(rquickjs::Error::Exception));
        }
        let bytes = std::slice::from_raw_parts(ptr as *const u8, len);
        let s = utf8_from_wtf8(bytes);
        rquickjs::qjs::JS_FreeCString(raw, ptr);
        Ok(s)
    }
}

/// The engine hands out lone surrogates as 3-byte WTF-8 sequences: each
/// becomes one U+FFFD (not three, as plain lossy decoding would give).
fn utf8_from_wtf8(bytes: &[u8]) -> String {
    if let Ok(s) = std::str::from_utf8(bytes) {
        return s.to_owned();
    }
    let mut fixed = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == 0xED && i + 2 < bytes.len() && (0xA0..=0xBF).contains(&bytes[i + 1]) {
            fixed.extend_from_slice("\u{FFFD}".as_bytes());
            i += 3;
        } else {
            fixed.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&fixed).into_owned()
}

/// JSON -> JS through the engine's own `JSON.parse`, so that keys such as
/// `__proto__` become plain own properties exactly as in JSON.
pub(crate) fn to_js<'js>(ctx: &Ctx<'js>, j: &Json) -> rquickjs::Result<Value<'js>> {
    let text = serde_json::to_string(j)
        .map_err(|e| rquickjs::Error::new_from_js_message("host value", "JSON", e.to_string()))?;
    ctx.json_parse(text)
}

/// The Rust string of `v` when it is a JS string (a script's argument),
/// else `None`.
pub(crate) fn string_arg(v: &Value<'_>) -> Option<String> {
    if v.is_string() {
        string_of(v).ok()
    } else {
        None
    }
}

#[cfg(test)]
mod escaped_tests {
    #[test]
    fn escaped_len_matches_serde() {
        let cases = [
            String::new(),
            "plain ascii text that is longer than eight".into(),
            "\u{1}\u{1f}\"\\\n\r\t\u{8}\u{c}x".into(),
            "é漢字🎉\u{7f}".repeat(5),
            "\u{1}".repeat(17),
            "a\"b\\c\u{0}d".repeat(9),
            "~~~~~~~~ !!!!!!!!".repeat(3),
        ];
        for s in &cases {
            let want = serde_json::to_string(s).unwrap().len() - 2;
            assert_eq!(super::escaped_len(s), want, "{s:?}");
        }
    }
}
