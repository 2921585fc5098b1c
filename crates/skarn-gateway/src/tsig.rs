//! TypeScript signatures from JSON Schemas, for `read_tool_docs`.

use serde_json::{Map, Value};

const MAX_DEPTH: usize = 6;

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
pub fn ts_type(schema: &Value) -> String {
    Walk { root: schema }.ty(schema, 0)
}

/// `$ref` followed inside `root` (JSON pointer after `#`), when local.
fn resolve<'a>(root: &'a Value, r: &str) -> Option<&'a Value> {
    let pointer = r.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    let decoded: String = pointer
        .split('/')
        .map(|p| percent_decode(p).replace("~1", "/").replace("~0", "~"))
        .collect::<Vec<_>>()
        .join("/");
    root.pointer(&decoded)
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16)
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

/// One walk over a schema (the root is where `$ref`s point into).
struct Walk<'a> {
    root: &'a Value,
}

impl Walk<'_> {
    fn ty(&self, schema: &Value, depth: usize) -> String {
        if depth > MAX_DEPTH {
            return "unknown".into();
        }
        // `$ref` (with siblings ignored, as in draft 7): each hop counts as a
        // level, so a cycle ends in `unknown`.
        if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            return match resolve(self.root, r) {
                Some(target) => self.ty(target, depth + 1),
                None => "unknown".into(),
            };
        }
        let Some(o) = schema.as_object() else {
            return if schema == &Value::Bool(false) {
                "never".into()
            } else {
                "unknown".into()
            };
        };
        if let Some(c) = o.get("const") {
            return serde_json::to_string(c).unwrap_or_else(|_| "unknown".into());
        }
        if let Some(Value::Array(e)) = o.get("enum") {
            let parts: Vec<String> = e
                .iter()
                .map(|v| serde_json::to_string(v).unwrap_or_default())
                .collect();
            if !parts.is_empty() {
                return parts.join(" | ");
            }
        }
        for k in ["anyOf", "oneOf"] {
            if let Some(Value::Array(alts)) = o.get(k) {
                let mut parts: Vec<String> = alts.iter().map(|a| self.ty(a, depth + 1)).collect();
                parts.dedup();
                return parts.join(" | ");
            }
        }
        if let Some(Value::Array(all)) = o.get("allOf") {
            return all
                .iter()
                .map(|a| self.ty(a, depth + 1))
                .collect::<Vec<_>>()
                .join(" & ");
        }
        match o.get("type") {
            Some(Value::Array(ts)) => ts
                .iter()
                .map(|t| {
                    let mut sub = o.clone();
                    sub.insert("type".into(), t.clone());
                    self.ty(&Value::Object(sub), depth + 1)
                })
                .collect::<Vec<_>>()
                .join(" | "),
            Some(Value::String(t)) => match t.as_str() {
                "string" => "string".into(),
                "number" | "integer" => "number".into(),
                "boolean" => "boolean".into(),
                "null" => "null".into(),
                "array" => {
                    let item = o
                        .get("items")
                        .map_or("unknown".into(), |i| self.ty(i, depth + 1));
                    if item.contains(' ') {
                        format!("Array<{item}>")
                    } else {
                        format!("{item}[]")
                    }
                }
                "object" => self.object(o, depth),
                _ => "unknown".into(),
            },
            _ if o.contains_key("properties") => self.object(o, depth),
            _ => "unknown".into(),
        }
    }

    fn object(&self, o: &Map<String, Value>, depth: usize) -> String {
        let props = o.get("properties").and_then(Value::as_object);
        let required: Vec<&str> = o
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut fields = Vec::new();
        if let Some(props) = props {
            for (name, s) in props {
                let opt = if required.contains(&name.as_str()) {
                    ""
                } else {
                    "?"
                };
                fields.push(format!("{}{opt}: {}", key(name), self.ty(s, depth + 1)));
            }
        }
        match o.get("additionalProperties") {
            Some(Value::Bool(false)) | None => {}
            Some(Value::Bool(true)) => fields.push("[key: string]: unknown".into()),
            Some(s) => fields.push(format!("[key: string]: {}", self.ty(s, depth + 1))),
        }
        if fields.is_empty() {
            "{}".into()
        } else {
            format!("{{ {} }}", fields.join("; "))
        }
    }
}

/// A declaration showing how a script calls the tool and what it resolves
/// to (the `outputSchema`'s type, else the mapping of `crate::results`).
pub fn signature(server: &str, tool: &str, input: &Value, output: Option<&Value>) -> String {
    let args = ts_type(input);
    let ret = crate::results::tool_value_ts(output.map(ts_type));
    let s = serde_json::to_string(server).unwrap_or_default();
    let t = serde_json::to_string(tool).unwrap_or_default();
    format!("await skarn.callTool({s}, {t}, args: {args}): Promise<{ret}>")
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
            ts_type(&s),
            "{ channel: string; count?: number; mode?: \"a\" | \"b\"; tags?: string[]; \"x-y\"?: string | null }"
        );
        assert_eq!(
            signature("slack", "post", &s, None)
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
        let t = ts_type(&s);
        assert!(t.contains("user: { id: number }"), "{t}");
        assert!(t.contains("tags?: Array<\"a\" | \"b\">"), "{t}");
        assert!(t.contains("far?: unknown"), "{t}");
        let out = json!({"type": "object", "properties": {"sum": {"$ref": "#/$defs/n"}}, "$defs": {"n": {"type": "number"}}});
        let sig = signature("m", "add", &json!({}), Some(&out));
        assert!(sig.ends_with("Promise<{ sum?: number }>"), "{sig}");
        assert!(signature("m", "add", &json!({}), None).contains("image"));
    }

    #[test]
    fn deep_and_odd_schemas_do_not_blow_up() {
        let mut s = json!({"type":"string"});
        for _ in 0..50 {
            s = json!({"type":"array","items":s});
        }
        assert!(ts_type(&s).contains("unknown"));
        assert_eq!(ts_type(&json!(true)), "unknown");
        assert_eq!(ts_type(&json!({})), "unknown");
    }
}
