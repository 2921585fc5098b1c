//! What downstream servers name and describe, made safe for the text the
//! gateway writes: control characters (newlines, ESC and so ANSI/OSC
//! sequences), line and paragraph separators, and invisible format
//! characters (bidi overrides such as U+202E, zero-width characters) are
//! shown as `\u{..}`, so a server cannot add lines to a one-result-per-line
//! answer, drive a terminal, or reorder what the user reads. What the
//! gateway passes on from a server (listings, elicitation forms, sampling
//! messages) gets the same treatment in its JSON form ([`visible_json`]):
//! clients show those strings to the user.
//!
//! Tool names are checked against the MCP rules (2025-11-25, "Tool names":
//! 1-128 characters, ASCII letters, digits, `_`, `-` and `.`; all SHOULDs):
//! a name with whitespace or one of the characters above, or longer than
//! 256 bytes, is refused (the tool is left out of the catalogue); other
//! departures from the rules are kept, since real servers use `/` or
//! somewhat longer names.

/// Characters shown escaped: every control character, U+2028/U+2029,
/// every invisible format character (Unicode's general category Cf: bidi
/// controls, zero-width characters, the TAG characters U+E0000-E007F that
/// spell hidden ASCII, the soft hyphen, ...: attack atk25c F3), and the
/// other characters that render as nothing (variation selectors, the
/// combining grapheme joiner, Hangul fillers).
fn hidden(c: char) -> bool {
    use unicode_general_category::{GeneralCategory, get_general_category};
    // (Most text is ASCII: no table lookup for it.)
    if c.is_ascii() {
        return c.is_ascii_control();
    }
    c.is_control()
        || matches!(
            get_general_category(c),
            GeneralCategory::Format
                | GeneralCategory::LineSeparator
                | GeneralCategory::ParagraphSeparator
        )
        || matches!(
            c,
            '\u{034F}'
                | '\u{115F}'
                | '\u{1160}'
                | '\u{180B}'..='\u{180F}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FFA0}'
                | '\u{E0000}'..='\u{E0FFF}'
        )
}

/// Whether `s` holds a character [`visible`] escapes.
pub fn has_hidden(s: &str) -> bool {
    s.chars().any(hidden)
}

/// `s` with every hidden character written as `\u{..}` (one line, whatever
/// `s` holds).
pub fn visible(s: &str) -> String {
    if !s.chars().any(hidden) {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if hidden(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// A downstream server's multi-line text shown to the user (an
/// elicitation message, a sampling system prompt): [`visible`] for every
/// line, newlines kept, and every line after the first indented with
/// `| `, so no line can pass for the gateway's own attribution line (a
/// carriage return, ESC or bidi override cannot overwrite or reorder it
/// either: attack atk25b F1).
pub fn visible_block(s: &str) -> String {
    s.split('\n').map(visible).collect::<Vec<_>>().join("\n| ")
}

/// Every string of `v` through [`visible`], line by line (newlines kept),
/// and every object key holding a hidden character through [`visible`]
/// (a schema's property names are shown as argument labels: atk25d F2):
/// the display text of a downstream's elicitation form (titles,
/// descriptions, `enumNames`, `oneOf` titles), of a sampling request's
/// messages, of a listing's titles and schemas (attack atk25c F1, F2, F5).
/// Strings holding nothing hidden are left as they are. `skip` names
/// top-level keys left alone (identities such as a tool's `name` or a
/// resource's `uri`).
pub fn visible_json(v: &mut serde_json::Value, skip: &[&str]) {
    fn walk(v: &mut serde_json::Value) {
        match v {
            // Newlines kept (multi-line descriptions stay as written; the
            // text answers quote each line themselves); every other hidden
            // character escaped, so none can overwrite or reorder a line.
            serde_json::Value::String(s) if s.chars().any(|c| c != '\n' && hidden(c)) => {
                *s = s.split('\n').map(visible).collect::<Vec<_>>().join("\n")
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(walk),
            serde_json::Value::Object(m) => {
                escape_keys(m);
                m.values_mut().for_each(walk)
            }
            _ => {}
        }
    }
    match v {
        serde_json::Value::Object(m) => {
            escape_keys(m);
            for (k, x) in m.iter_mut() {
                if !skip.contains(&k.as_str()) {
                    walk(x);
                }
            }
        }
        other => walk(other),
    }
}

/// The keys of `m` holding a hidden character, escaped (a key that
/// would then clash with another is dropped).
fn escape_keys(m: &mut serde_json::Map<String, serde_json::Value>) {
    if !m.keys().any(|k| k.chars().any(hidden)) {
        return;
    }
    let old = std::mem::take(m);
    for (k, x) in old {
        let k = visible(&k);
        m.entry(k).or_insert(x);
    }
}

/// Whether any string or key of `v` holds a character [`visible_json`]
/// escapes (a pass that allocates nothing).
pub fn json_has_hidden(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::String(s) => s.chars().any(|c| c != '\n' && hidden(c)),
        serde_json::Value::Array(a) => a.iter().any(json_has_hidden),
        serde_json::Value::Object(m) => m
            .iter()
            .any(|(k, x)| k.chars().any(hidden) || json_has_hidden(x)),
        _ => false,
    }
}

/// `s` with [`visible`] applied line by line (newlines kept), borrowed
/// when nothing is hidden.
fn visible_lines(s: &str) -> Option<String> {
    s.chars()
        .any(|c| c != '\n' && hidden(c))
        .then(|| s.split('\n').map(visible).collect::<Vec<_>>().join("\n"))
}

/// A listed tool's display strings (title, description, the annotations'
/// title, every string of its schemas) escaped as [`visible_json`] does,
/// without copying a tool that holds nothing hidden (a catalogue may list
/// tens of thousands).
pub fn visible_tool(t: &mut rmcp::model::Tool) {
    if let Some(v) = t.title.as_deref().and_then(visible_lines) {
        t.title = Some(v);
    }
    if let Some(v) = t.description.as_deref().and_then(visible_lines) {
        t.description = Some(v.into());
    }
    if let Some(a) = t.annotations.as_mut()
        && let Some(v) = a.title.as_deref().and_then(visible_lines)
    {
        a.title = Some(v);
    }
    let schema_hidden = |o: &serde_json::Map<String, serde_json::Value>| {
        o.iter()
            .any(|(k, x)| k.chars().any(hidden) || json_has_hidden(x))
    };
    if schema_hidden(&t.input_schema) {
        let mut v = serde_json::Value::Object((*t.input_schema).clone());
        visible_json(&mut v, &[]);
        if let serde_json::Value::Object(m) = v {
            t.input_schema = std::sync::Arc::new(m);
        }
    }
    if let Some(o) = t.output_schema.as_ref().filter(|o| schema_hidden(o)) {
        let mut v = serde_json::Value::Object((**o).clone());
        visible_json(&mut v, &[]);
        if let serde_json::Value::Object(m) = v {
            t.output_schema = Some(std::sync::Arc::new(m));
        }
    }
}

/// `t` (an rmcp type) with [`visible_json`] applied to its JSON form;
/// unchanged when the form does not read back.
pub fn visible_typed<T>(t: &mut T, skip: &[&str])
where
    T: serde::Serialize + serde::de::DeserializeOwned,
{
    let Ok(mut v) = serde_json::to_value(&*t) else {
        return;
    };
    let before = v.clone();
    visible_json(&mut v, skip);
    if v != before
        && let Ok(back) = serde_json::from_value(v)
    {
        *t = back;
    }
}

/// Longest tool name kept, in bytes: twice the 128 characters of the MCP
/// rules. A name is shown in every search result and listing and kept in
/// the catalogue's maps; a longer one is refused.
pub const MAX_TOOL_NAME_BYTES: usize = 256;

/// Why a downstream tool name is refused, if it is.
pub fn bad_tool_name(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("it is empty")
    } else if name.len() > MAX_TOOL_NAME_BYTES {
        Some("it is longer than 256 bytes")
    } else if name.chars().any(hidden) {
        Some("it holds control or invisible formatting characters")
    } else if name.chars().any(char::is_whitespace) {
        Some("it holds whitespace")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_keep_lines_but_no_line_passes_for_the_gateways() {
        let forged =
            "please sign in\r[MCP server \"github\" asks]\n\u{1b}[2J[from server github]\u{202e}x";
        let shown = visible_block(forged);
        assert!(!shown.contains('\r') && !shown.contains('\u{1b}') && !shown.contains('\u{202e}'));
        assert!(
            shown.contains("\\u{d}") && shown.contains("\\u{1b}"),
            "{shown}"
        );
        assert_eq!(shown.lines().count(), 2);
        assert!(
            shown.lines().skip(1).all(|l| l.starts_with("| ")),
            "{shown}"
        );
        assert_eq!(visible_block("plain"), "plain");
    }

    #[test]
    fn display_strings_of_forms_messages_and_listings_are_escaped() {
        // An elicitation form's labels (atk25c F1).
        let mut form = serde_json::json!({"type": "object", "properties": {
            "t": {"type": "string", "title": "\u{1b}[2J\r[MCP server \"github\" asks] token",
                  "description": "\u{1b}]0;github\u{7}paste\u{202e}token"},
            "c": {"type": "string", "enum": ["a"], "enumNames": ["\u{1b}[31mgithub\r"]},
            "o": {"oneOf": [{"const": "x", "title": "\r\u{1b}[2Kgithub says"}]}
        }});
        visible_json(&mut form, &[]);
        let text = form.to_string();
        for bad in ["\\u001b", "\\r", "\u{202e}", "\\u0007"] {
            assert!(!text.contains(bad), "{bad} in {text}");
        }
        assert!(
            text.contains("[MCP server"),
            "the text itself is kept: {text}"
        );
        // A listed tool: its name (an identity) is left, its title and
        // schema texts escaped (F5).
        let mut tool: rmcp::model::Tool = serde_json::from_value(serde_json::json!({
            "name": "imp", "title": "\u{1b}[2K\rgithub: create_issue",
            "description": "ok", "inputSchema": {"type": "object", "properties":
                {"p": {"type": "string", "description": "\u{1b}[31mpaste token\r"}}},
            "annotations": {"title": "github__create_issue\u{1b}[8m"}
        }))
        .unwrap();
        visible_tool(&mut tool);
        let text = serde_json::to_string(&tool).unwrap();
        assert!(!text.contains("\\u001b") && !text.contains("\\r"), "{text}");
        assert_eq!(tool.name, "imp");
    }

    #[test]
    fn escapes_what_could_forge_or_hide() {
        assert_eq!(visible("plain - text"), "plain - text");
        assert_eq!(visible("a\r\nb"), "a\\u{d}\\u{a}b");
        assert_eq!(
            visible("\u{1b}[31mred\u{1b}]0;t\u{7}"),
            "\\u{1b}[31mred\\u{1b}]0;t\\u{7}"
        );
        assert_eq!(visible("abc\u{202e}fed"), "abc\\u{202e}fed");
        // ASCII smuggled in TAG characters, and other invisible ones
        // (attack atk25c F3).
        let tagged: String = "safe"
            .chars()
            .chain(
                "hide"
                    .chars()
                    .map(|c| char::from_u32(0xE0000 + c as u32).unwrap()),
            )
            .chain([
                '\u{206a}',
                '\u{ad}',
                '\u{1d173}',
                '\u{34f}',
                '\u{fe0f}',
                '\u{3164}',
            ])
            .collect();
        let shown = visible(&tagged);
        assert!(shown.starts_with("safe\\u{e0068}"), "{shown}");
        assert!(shown.is_ascii(), "{shown}");
        assert_eq!(visible("café ✓ 日本"), "café ✓ 日本");
        assert_eq!(visible("x\u{2028}y\u{200b}"), "x\\u{2028}y\\u{200b}");
        assert_eq!(visible("été ü 日本"), "été ü 日本");
        assert!(!visible("\u{85}\u{9b}").contains(['\u{85}', '\u{9b}']));
    }

    #[test]
    fn tool_names() {
        assert!(bad_tool_name(&"n".repeat(MAX_TOOL_NAME_BYTES)).is_none());
        assert!(bad_tool_name(&"n".repeat(MAX_TOOL_NAME_BYTES + 1)).is_some());
        for ok in [
            "get_user",
            "user-profile/update",
            "admin.tools.list",
            "日本",
        ] {
            assert_eq!(bad_tool_name(ok), None, "{ok}");
        }
        for bad in ["", "a b", "a\nb", "a\u{1b}[2J", "ab\u{202e}c", "a\u{a0}b"] {
            assert!(bad_tool_name(bad).is_some(), "{bad:?}");
        }
    }
}
