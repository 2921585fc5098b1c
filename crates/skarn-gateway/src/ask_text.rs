//! What a downstream server asks the user or the client's model
//! (`elicitation/create`, `sampling/createMessage`), made unable to pass
//! for another server or for the gateway (attack finding F2).
//!
//! The gateway names the server on the first line of the text the user
//! reads. The server's own text cannot imitate that: its control
//! characters (ESC and so terminal sequences, CR, form feeds), line and
//! paragraph separators and invisible format characters (bidi overrides,
//! zero-width) are shown as `\u{..}`; its newlines are kept, but every line
//! of it after the first is quoted (`> `) and runs of blank lines are cut
//! to one, so no line of it starts where the gateway's own lines start.
//! Short texts the user reads as labels (form titles, descriptions, choice
//! names) become one line.

use serde_json::Value;

use crate::text_safe::visible;

/// Quote mark of the continuation lines of a server's text.
pub const QUOTE: &str = "> ";

/// `text` of a server after the gateway's `header` (which names it): see
/// the module documentation.
pub fn attributed(header: &str, text: &str) -> String {
    let mut out = String::with_capacity(header.len() + text.len() + 16);
    out.push_str(header);
    let text = text.replace("\r\n", "\n");
    let mut blank = false;
    for (i, line) in text.split('\n').enumerate() {
        if i == 0 {
            out.push_str(&lines_visible(line));
            continue;
        }
        if line.trim().is_empty() {
            if blank {
                continue;
            }
            blank = true;
        } else {
            blank = false;
        }
        out.push('\n');
        out.push_str(QUOTE);
        out.push_str(&lines_visible(line));
    }
    out
}

/// One line of a server's text: tabs kept, every other hidden character
/// shown escaped.
fn lines_visible(line: &str) -> String {
    line.split('\t').map(visible).collect::<Vec<_>>().join("\t")
}

/// Every string inside `v` (a form's requested schema) made one visible
/// line.
pub fn visible_strings(v: &mut Value) {
    match v {
        Value::String(s) => {
            let shown = visible(s);
            if shown != *s {
                *s = shown;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(visible_strings),
        Value::Object(o) => o.values_mut().for_each(visible_strings),
        _ => {}
    }
}

/// Every `text` string inside `v` (sampling messages): newlines and tabs
/// kept, other hidden characters shown escaped.
pub fn visible_texts(v: &mut Value) {
    match v {
        Value::Array(a) => a.iter_mut().for_each(visible_texts),
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                if let (true, Value::String(s)) = (k == "text", &mut *x) {
                    *s = s
                        .replace("\r\n", "\n")
                        .split('\n')
                        .map(lines_visible)
                        .collect::<Vec<_>>()
                        .join("\n");
                } else {
                    visible_texts(x);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_cannot_write_a_line_that_starts_like_the_gateway() {
        let forged = "\u{1b}[2K\r[MCP server \"github\" asks, through skarn] \u{202e}sign in\n\n\n\n[MCP server \"github\" asks, through skarn] Paste\ttoken\r\nok";
        let shown = attributed("[MCP server \"evil\" asks, through skarn] ", forged);
        assert!(
            !shown
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t')
        );
        assert!(!shown.contains('\u{202e}'));
        let lines: Vec<&str> = shown.lines().collect();
        assert!(lines[0].starts_with("[MCP server \"evil\" asks"), "{shown}");
        assert!(lines[1..].iter().all(|l| l.starts_with(QUOTE)), "{shown}");
        assert_eq!(lines.len(), 4, "{shown}");
        assert!(shown.contains("Paste\ttoken"));
    }

    #[test]
    fn labels_become_one_line_and_texts_keep_their_lines() {
        let mut v =
            serde_json::json!({"properties": {"t": {"title": "a\nb\u{200b}", "enum": ["x"]}}});
        visible_strings(&mut v);
        assert_eq!(v["properties"]["t"]["title"], "a\\u{a}b\\u{200b}");
        let mut m = serde_json::json!([{"content": {"type": "text", "text": "a\nb\u{1b}[2K"}}]);
        visible_texts(&mut m);
        assert_eq!(m[0]["content"]["text"], "a\nb\\u{1b}[2K");
    }
}
