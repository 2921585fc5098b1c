//! Result mapping (docs/gateway.md, "What scripts receive"): how MCP
//! results become script values, and how content blocks a script returns
//! become MCP content again.
//!
//! One rule for `skarn.callTool` and `skarn.readResource`:
//! 1. `structuredContent`, when the tool sent it (typed by its
//!    `outputSchema`): that value;
//! 2. nothing: `null`;
//! 3. only text (text blocks, or text resource items): the texts joined with
//!    a newline, parsed as JSON when the whole parses, else the string;
//! 4. anything else (an image, audio, an embedded resource, a link, a blob):
//!    an array of every block (or resource item) exactly as MCP sends it,
//!    even when there is only one.

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::{Map, Value};

/// The value a script receives for a tool result.
pub fn tool_value(r: &CallToolResult) -> Value {
    if let Some(v) = &r.structured_content {
        return v.clone();
    }
    let texts: Option<Vec<&str>> = r
        .content
        .iter()
        .map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    match texts {
        Some(t) => text_value(&t),
        None => Value::Array(
            r.content
                .iter()
                .map(|c| serde_json::to_value(c).unwrap_or(Value::Null))
                .collect(),
        ),
    }
}

/// The value a script receives for `readResource`.
pub fn resource_value(contents: &[ResourceContents]) -> Value {
    let texts: Option<Vec<&str>> = contents
        .iter()
        .map(|c| match c {
            ResourceContents::TextResourceContents { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    match texts {
        Some(t) => text_value(&t),
        None => serde_json::to_value(contents).unwrap_or(Value::Null),
    }
}

fn text_value(texts: &[&str]) -> Value {
    if texts.is_empty() {
        return Value::Null;
    }
    let joined = texts.join("\n");
    serde_json::from_str(&joined).unwrap_or(Value::String(joined))
}

/// The TypeScript shape of rule 4, for `read_tool_docs`.
pub const CONTENT_TS: &str = "Array<{ type: \"text\"; text: string } | { type: \"image\" | \"audio\"; data: string; mimeType: string } | { type: \"resource\"; resource: { uri: string; mimeType?: string; text?: string; blob?: string } } | { type: \"resource_link\"; uri: string; name: string }>";

/// The TypeScript type of what `callTool` resolves to, given the tool's
/// output type (from its `outputSchema`), if any.
pub fn tool_value_ts(output: Option<String>) -> String {
    output.unwrap_or_else(|| format!("unknown /* JSON or text */ | null | {CONTENT_TS}"))
}

/// Content blocks a script returned: a content block or an array of them
/// (at least one not text), or an array of resource items with a `blob`,
/// handed back as MCP content instead of JSON text.
pub fn returned_content(v: &Value) -> Option<Vec<ContentBlock>> {
    let items: Vec<&Value> = match v {
        Value::Array(a) if !a.is_empty() => a.iter().collect(),
        Value::Object(_) => vec![v],
        _ => return None,
    };
    let blocks: Option<Vec<ContentBlock>> = items.iter().map(|i| as_block(i)).collect();
    let blocks = blocks?;
    blocks
        .iter()
        .any(|b| !matches!(b, ContentBlock::Text(_)))
        .then_some(blocks)
}

fn as_block(v: &Value) -> Option<ContentBlock> {
    let o = v.as_object()?;
    match o.get("type").and_then(Value::as_str) {
        Some("text" | "image" | "audio" | "resource" | "resource_link") => {
            serde_json::from_value(v.clone()).ok()
        }
        None if o.contains_key("uri") && o.contains_key("blob") => {
            let r: ResourceContents = serde_json::from_value(v.clone()).ok()?;
            Some(ContentBlock::resource(r))
        }
        _ => None,
    }
}

/// `v` with every base64 payload (`data`, `blob`) replaced by a short note,
/// for the structured copy of a result whose payloads went out as content.
pub fn without_payloads(v: &Value) -> Value {
    match v {
        Value::Array(a) => Value::Array(a.iter().map(without_payloads).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| match (k.as_str(), x) {
                    ("data" | "blob", Value::String(s)) => (
                        k.clone(),
                        Value::String(format!("<{} bytes of base64, sent as content>", s.len())),
                    ),
                    _ => (k.clone(), without_payloads(x)),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A tool result of one text block (and structured content).
pub(crate) fn text_result(
    text: impl Into<String>,
    structured: Option<Value>,
    is_error: bool,
) -> CallToolResult {
    let mut r = if is_error {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    r.structured_content = structured;
    r
}

/// A string argument of a tool call.
pub(crate) fn arg_str<'a>(args: &'a Option<Map<String, Value>>, key: &str) -> Option<&'a str> {
    args.as_ref()?.get(key)?.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(content: Vec<ContentBlock>, structured: Option<Value>) -> CallToolResult {
        let mut r = CallToolResult::success(content);
        r.structured_content = structured;
        r
    }

    #[test]
    fn one_rule_for_every_shape() {
        let img = ContentBlock::image("aGk=", "image/png");
        assert_eq!(tool_value(&result(vec![], None)), Value::Null);
        assert_eq!(
            tool_value(&result(vec![ContentBlock::text("{\"a\":1}")], None)),
            json!({"a": 1})
        );
        assert_eq!(
            tool_value(&result(
                vec![ContentBlock::text("x"), ContentBlock::text("y")],
                None
            )),
            json!("x\ny")
        );
        let one = tool_value(&result(vec![img.clone()], None));
        assert_eq!(
            one,
            json!([{"type": "image", "data": "aGk=", "mimeType": "image/png"}])
        );
        let mixed = tool_value(&result(vec![ContentBlock::text("t"), img], None));
        assert_eq!(mixed.as_array().map(Vec::len), Some(2));
        assert_eq!(
            tool_value(&result(
                vec![ContentBlock::text("t")],
                Some(json!({"s": 1}))
            )),
            json!({"s": 1})
        );
    }

    #[test]
    fn returned_images_and_blobs_become_content() {
        let v = json!([{"type": "image", "data": "aGk=", "mimeType": "image/png"}, {"type": "text", "text": "t"}]);
        let blocks = returned_content(&v).unwrap();
        assert!(matches!(blocks[0], ContentBlock::Image(_)));
        assert!(returned_content(&json!({"type": "text", "text": "only text"})).is_none());
        assert!(returned_content(&json!({"a": 1})).is_none());
        let r = json!([{"uri": "file:///x", "mimeType": "image/png", "blob": "aGk="}]);
        assert!(matches!(
            returned_content(&r).unwrap()[0],
            ContentBlock::Resource(_)
        ));
        assert_eq!(
            without_payloads(&v)[0]["data"],
            json!("<4 bytes of base64, sent as content>")
        );
    }
}
