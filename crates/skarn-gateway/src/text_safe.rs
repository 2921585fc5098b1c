//! What downstream servers name and describe, made safe for the text the
//! gateway writes: control characters (newlines, ESC and so ANSI/OSC
//! sequences), line and paragraph separators, and invisible format
//! characters (bidi overrides such as U+202E, zero-width characters) are
//! shown as `\u{..}`, so a server cannot add lines to a one-result-per-line
//! answer, drive a terminal, or reorder what the user reads. The JSON forms
//! are left alone (JSON escapes control characters itself).
//!
//! Tool names are checked against the MCP rules (2025-11-25, "Tool names":
//! 1-128 characters, ASCII letters, digits, `_`, `-` and `.`; all SHOULDs):
//! a name with whitespace or one of the characters above, or longer than
//! 256 bytes, is refused (the tool is left out of the catalogue); other
//! departures from the rules are kept, since real servers use `/` or
//! somewhat longer names.

/// Characters shown escaped: every control character, U+2028/U+2029, and
/// the invisible format characters that reorder or hide text.
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2069}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
        )
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
    fn escapes_what_could_forge_or_hide() {
        assert_eq!(visible("plain - text"), "plain - text");
        assert_eq!(visible("a\r\nb"), "a\\u{d}\\u{a}b");
        assert_eq!(
            visible("\u{1b}[31mred\u{1b}]0;t\u{7}"),
            "\\u{1b}[31mred\\u{1b}]0;t\\u{7}"
        );
        assert_eq!(visible("abc\u{202e}fed"), "abc\\u{202e}fed");
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
