//! TypeScript signatures from JSON Schemas, for `read_tool_docs`.

use std::cell::Cell;

use serde_json::{Map, Value};

const MAX_DEPTH: usize = 6;

/// Most bytes one signature may have. A schema is downstream data: `$ref`s
/// into `allOf`/`anyOf` fan-outs expand exponentially with depth (a 9 KB
/// schema can ask for hundreds of megabytes), so every expansion is
/// charged against a budget and the signature fails past it.
pub const MAX_SIGNATURE_BYTES: usize = 64 << 10;

/// Most bytes of text (every intermediate piece counted) and schema nodes
/// one signature may produce while it is built: bounds the time and memory
/// of a walk whose pieces are later dropped (`dedup`, `unknown` leaves).
const WORK_BUDGET: usize = 1 << 20;

/// A schema whose TypeScript signature would be too large.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "its schema expands to a TypeScript signature over {max} bytes, or needs more work than \
     its budget allows to become one (nested $ref/allOf/anyOf fan-out, huge type, enum or \
     required arrays); the tool can still be called"
)]
pub struct TooLarge {
    pub max: usize,
}

fn ident_ok(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

fn key(name: &str) -> String {
    if ident_ok(name) {
        name.to_owned()
    } else {
        serde_json::to_string(name).unwrap_or_else(|_| "\"?\"".into())
    }
}

/// The TypeScript type of `schema`; local `$ref`s (`#/$defs/…`,
/// `#/definitions/…`, any JSON pointer into the schema) are resolved.
pub fn ts_type(schema: &Value) -> Result<String, TooLarge> {
    match schema {
        Value::Object(o) => ts_type_of(o),
        other => Walk {
            root: &Map::new(),
            spent: Cell::new(0),
        }
        .ty(other, 0),
    }
}

/// [`ts_type`] of a schema object, read in place (a tool's schema is not
/// copied to be documented).
pub fn ts_type_of(schema: &Map<String, Value>) -> Result<String, TooLarge> {
    let walk = Walk {
        root: schema,
        spent: Cell::new(0),
    };
    let t = walk.ty_object(schema, 0)?;
    if t.len() > MAX_SIGNATURE_BYTES {
        return Err(TooLarge {
            max: MAX_SIGNATURE_BYTES,
        });
    }
    Ok(t)
}

/// `v` as JSON text, or `None` when that text would be over `max` bytes:
/// the writing stops there, so a huge value costs at most `max` bytes of
/// work and memory.
pub(crate) fn json_capped<T: serde::Serialize + ?Sized>(v: &T, max: usize) -> Option<String> {
    struct Capped {
        buf: Vec<u8>,
        max: usize,
    }
    impl std::io::Write for Capped {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            if self.buf.len() + b.len() > self.max {
                return Err(std::io::ErrorKind::FileTooLarge.into());
            }
            self.buf.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut w = Capped {
        buf: Vec::new(),
        max,
    };
    serde_json::to_writer(&mut w, v).ok()?;
    String::from_utf8(w.buf).ok()
}

/// `$ref` followed inside `root` (JSON pointer after `#`), when local.
fn resolve<'a>(root: &'a Map<String, Value>, r: &str) -> Option<Target<'a>> {
    let pointer = r.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(Target::Root);
    }
    let decoded: Vec<String> = pointer
        .strip_prefix('/')?
        .split('/')
        .map(|p| percent_decode(p).replace("~1", "/").replace("~0", "~"))
        .collect();
    let (first, rest) = decoded.split_first()?;
    let mut v = root.get(first)?;
    for p in rest {
        v = match v {
            Value::Object(o) => o.get(p)?,
            Value::Array(a) => a.get(p.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(Target::Value(v))
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Some(v) = std::str::from_utf8(&b[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Where a `$ref` points: the root object, or a value inside it.
enum Target<'a> {
    Root,
    Value(&'a Value),
}

/// One walk over a schema (the root is where `$ref`s point into).
struct Walk<'a> {
    root: &'a Map<String, Value>,
    /// Work done so far (bytes produced plus nodes visited).
    spent: Cell<usize>,
}

impl Walk<'_> {
    /// Charge `n` units of work; past the budget the walk stops.
    fn charge(&self, n: usize) -> Result<(), TooLarge> {
        let spent = self.spent.get().saturating_add(n);
        self.spent.set(spent);
        if spent > WORK_BUDGET {
            Err(TooLarge {
                max: MAX_SIGNATURE_BYTES,
            })
        } else {
            Ok(())
        }
    }

    fn ty(&self, schema: &Value, depth: usize) -> Result<String, TooLarge> {
        self.charge(1)?;
        let t = self.ty_inner(schema, depth)?;
        self.charge(t.len())?;
        Ok(t)
    }

    fn ty_inner(&self, schema: &Value, depth: usize) -> Result<String, TooLarge> {
        if depth > MAX_DEPTH {
            return Ok("unknown".into());
        }
        match schema {
            Value::Object(o) => self.object_schema(o, o.get("type"), depth),
            Value::Bool(false) => Ok("never".into()),
            _ => Ok("unknown".into()),
        }
    }

    /// [`Walk::ty`] of a schema object (charged the same way).
    fn ty_object(&self, o: &Map<String, Value>, depth: usize) -> Result<String, TooLarge> {
        self.charge(1)?;
        let t = self.object_schema(o, o.get("type"), depth)?;
        self.charge(t.len())?;
        Ok(t)
    }

    /// JSON text of a value the signature shows (`const`, `enum`), charged
    /// by its length and never written past what is left of the budget.
    fn json(&self, v: &Value) -> Result<String, TooLarge> {
        let left = WORK_BUDGET.saturating_sub(self.spent.get());
        let text = json_capped(v, left).ok_or(TooLarge {
            max: MAX_SIGNATURE_BYTES,
        })?;
        self.charge(text.len())?;
        Ok(text)
    }

    /// The type of schema object `o` read as having type `ty` (its own
    /// `type`, or one entry of a `type` array: the object is never copied
    /// per entry).
    fn object_schema(
        &self,
        o: &Map<String, Value>,
        ty: Option<&Value>,
        depth: usize,
    ) -> Result<String, TooLarge> {
        if depth > MAX_DEPTH {
            return Ok("unknown".into());
        }
        // `$ref` (with siblings ignored, as in draft 7): each hop counts as a
        // level, so a cycle ends in `unknown`. Decoding the pointer is
        // charged by its length.
        if let Some(r) = o.get("$ref").and_then(Value::as_str) {
            self.charge(r.len())?;
            return match resolve(self.root, r) {
                Some(Target::Value(target)) => self.ty(target, depth + 1),
                Some(Target::Root) => {
                    self.charge(1)?;
                    let t = self.object_schema(self.root, self.root.get("type"), depth + 1)?;
                    self.charge(t.len())?;
                    Ok(t)
                }
                None => Ok("unknown".into()),
            };
        }
        if let Some(c) = o.get("const") {
            return self.json(c);
        }
        if let Some(Value::Array(e)) = o.get("enum") {
            let mut parts: Vec<String> = Vec::new();
            for v in e {
                self.charge(3)?;
                parts.push(self.json(v)?);
            }
            if !parts.is_empty() {
                return Ok(parts.join(" | "));
            }
        }
        for k in ["anyOf", "oneOf"] {
            if let Some(Value::Array(alts)) = o.get(k) {
                let mut parts = Vec::new();
                for a in alts {
                    parts.push(self.ty(a, depth + 1)?);
                }
                parts.dedup();
                return Ok(parts.join(" | "));
            }
        }
        if let Some(Value::Array(all)) = o.get("allOf") {
            let mut parts = Vec::new();
            for a in all {
                parts.push(self.ty(a, depth + 1)?);
            }
            return Ok(parts.join(" & "));
        }
        Ok(match ty {
            Some(Value::Array(ts)) => {
                let mut parts: Vec<String> = Vec::new();
                for t in ts {
                    // A nested array is not a type name.
                    let t = if t.is_array() { &Value::Null } else { t };
                    self.charge(1)?;
                    let part = self.object_schema(o, Some(t), depth + 1)?;
                    self.charge(part.len() + 3)?;
                    if !parts.contains(&part) {
                        parts.push(part);
                    }
                }
                parts.join(" | ")
            }
            Some(Value::String(t)) => match t.as_str() {
                "string" => "string".into(),
                "number" | "integer" => "number".into(),
                "boolean" => "boolean".into(),
                "null" => "null".into(),
                "array" => {
                    let item = match o.get("items") {
                        Some(i) => self.ty(i, depth + 1)?,
                        None => "unknown".into(),
                    };
                    if item.contains(' ') {
                        format!("Array<{item}>")
                    } else {
                        format!("{item}[]")
                    }
                }
                "object" => self.object(o, depth)?,
                _ => "unknown".into(),
            },
            _ if o.contains_key("properties") => self.object(o, depth)?,
            _ => "unknown".into(),
        })
    }

    fn object(&self, o: &Map<String, Value>, depth: usize) -> Result<String, TooLarge> {
        let props = o.get("properties").and_then(Value::as_object);
        // Looked up once per property: a set, built at a charge per entry.
        let mut required = std::collections::HashSet::new();
        if let Some(r) = o.get("required").and_then(Value::as_array) {
            for name in r {
                // Every entry, a string or not, is charged.
                let name = name.as_str().unwrap_or_default();
                self.charge(1 + name.len())?;
                required.insert(name);
            }
        }
        let mut fields = Vec::new();
        if let Some(props) = props {
            for (name, s) in props {
                let opt = if required.contains(name.as_str()) {
                    ""
                } else {
                    "?"
                };
                let k = key(name);
                self.charge(k.len() + 4)?;
                fields.push(format!("{k}{opt}: {}", self.ty(s, depth + 1)?));
            }
        }
        match o.get("additionalProperties") {
            Some(Value::Bool(false)) | None => {}
            Some(Value::Bool(true)) => fields.push("[key: string]: unknown".into()),
            Some(s) => fields.push(format!("[key: string]: {}", self.ty(s, depth + 1)?)),
        }
        Ok(if fields.is_empty() {
            "{}".into()
        } else {
            format!("{{ {} }}", fields.join("; "))
        })
    }
}

/// A declaration showing how a script calls the tool and what it resolves
/// to (the `outputSchema`'s type, else the mapping of `crate::results`).
/// Fails when either schema expands past [`MAX_SIGNATURE_BYTES`].
pub fn signature(
    server: &str,
    tool: &str,
    input: &Map<String, Value>,
    output: Option<&Map<String, Value>>,
) -> Result<String, TooLarge> {
    let args = ts_type_of(input)?;
    let ret = crate::results::tool_value_ts(output.map(ts_type_of).transpose()?);
    let s = serde_json::to_string(server).unwrap_or_default();
    let t = serde_json::to_string(tool).unwrap_or_default();
    Ok(format!(
        "await skarn.callTool({s}, {t}, args: {args}): Promise<{ret}>"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn object_with_required_optional_enum_and_array() {
        let s = json!({"type":"object","properties":{
            "channel":{"type":"string"},
            "count":{"type":"integer"},
            "mode":{"enum":["a","b"]},
            "tags":{"type":"array","items":{"type":"string"}},
            "x-y":{"type":["string","null"]}
        },"required":["channel"]});
        assert_eq!(
            ts_type(&s).unwrap(),
            "{ channel: string; count?: number; mode?: \"a\" | \"b\"; tags?: string[]; \"x-y\"?: string | null }"
        );
        assert_eq!(
            signature("slack", "post", s.as_object().unwrap(), None)
                .unwrap()
                .split(',')
                .next()
                .unwrap(),
            "await skarn.callTool(\"slack\""
        );
    }

    #[test]
    fn refs_are_resolved_and_cycles_end() {
        let s = json!({
            "type": "object",
            "properties": {
                "user": {"$ref": "#/$defs/User"},
                "tags": {"type": "array", "items": {"$ref": "#/definitions/Tag"}},
                "self": {"$ref": "#"},
                "far": {"$ref": "https://example.com/x.json"}
            },
            "required": ["user"],
            "$defs": {"User": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}},
            "definitions": {"Tag": {"enum": ["a", "b"]}}
        });
        let t = ts_type(&s).unwrap();
        assert!(t.contains("user: { id: number }"), "{t}");
        assert!(t.contains("tags?: Array<\"a\" | \"b\">"), "{t}");
        assert!(t.contains("far?: unknown"), "{t}");
        let out = json!({"type": "object", "properties": {"sum": {"$ref": "#/$defs/n"}}, "$defs": {"n": {"type": "number"}}});
        let sig = signature("m", "add", &Map::new(), out.as_object()).unwrap();
        assert!(sig.ends_with("Promise<{ sum?: number }>"), "{sig}");
        assert!(
            signature("m", "add", &Map::new(), None)
                .unwrap()
                .contains("image")
        );
    }

    #[test]
    fn deep_and_odd_schemas_do_not_blow_up() {
        let mut s = json!({"type":"string"});
        for _ in 0..50 {
            s = json!({"type":"array","items":s});
        }
        assert!(ts_type(&s).unwrap().contains("unknown"));
        assert_eq!(ts_type(&json!(true)).unwrap(), "unknown");
        assert_eq!(ts_type(&json!({})).unwrap(), "unknown");
    }

    /// `$ref` to an `allOf` of `fan` refs to the next level, `levels` deep:
    /// `fan^levels` copies of the leaf once expanded.
    pub(crate) fn bomb(fan: usize, levels: usize) -> Value {
        let mut defs = serde_json::Map::new();
        for l in 0..levels {
            let next = format!("#/$defs/l{}", l + 1);
            let all: Vec<Value> = (0..fan).map(|_| json!({"$ref": next})).collect();
            defs.insert(format!("l{l}"), json!({"allOf": all}));
        }
        defs.insert(
            format!("l{levels}"),
            json!({"type": "object", "properties": {
                "first_property": {"type": "string"}, "second_property": {"type": "number"},
                "third_property": {"type": "boolean"}, "fourth_property": {"type": "string"},
            }}),
        );
        json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/l0"}}, "$defs": defs})
    }

    #[test]
    fn schema_bombs_fail_with_a_cause_within_the_budget() {
        for (fan, levels) in [(40, 2), (60, 2), (200, 2), (1000, 3)] {
            let s = bomb(fan, levels);
            let e = ts_type(&s).expect_err("over the budget");
            assert!(e.to_string().contains("TypeScript signature over"), "{e}");
            assert!(signature("m", "t", &Map::new(), s.as_object()).is_err());
        }
        // A wide but honest schema still gets its signature.
        let mut props = serde_json::Map::new();
        for i in 0..500 {
            props.insert(format!("p{i}"), json!({"type": "string"}));
        }
        let wide = json!({"type": "object", "properties": props});
        assert!(ts_type(&wide).unwrap().len() > 5000);
    }

    #[test]
    fn every_step_of_the_walk_is_charged() {
        // A `type` array: each entry is charged (it used to copy the
        // schema object per entry, uncharged).
        let types: Vec<Value> = (0..300_000).map(|_| json!("null")).collect();
        assert!(ts_type(&json!({"type": "object", "properties": {"x": {"type": types}}})).is_err());
        // `required` entries, strings or not, against many properties.
        let props: Map<String, Value> = (0..1000)
            .map(|i| (format!("p{i}"), json!({"type": "string"})))
            .collect();
        for entry in [json!("zzzz"), json!(1)] {
            let required = vec![entry; 1_100_000];
            let s = json!({"type": "object", "properties": props, "required": required});
            assert!(ts_type(&s).is_err());
        }
        // A `$ref` pointer of two million characters (percent-encoded) is
        // charged by its length before it is decoded.
        let r = format!("#/{}", "%41".repeat(700_000));
        assert!(ts_type(&json!({"$ref": r})).is_err());
        // A huge `const` is written only up to the budget.
        assert!(ts_type(&json!({"const": "c".repeat(2 << 20)})).is_err());
        // Honest uses of the same features are unaffected.
        assert_eq!(
            ts_type(&json!({"type": ["string", "null", "string"]})).unwrap(),
            "string | null"
        );
        let s = json!({"type": "object", "properties": {"a/b": {"$ref": "#/$defs/x%20y"}},
                       "required": ["a/b", 7], "$defs": {"x y": {"const": 3}}});
        assert_eq!(ts_type(&s).unwrap(), "{ \"a/b\": 3 }");
    }
}
