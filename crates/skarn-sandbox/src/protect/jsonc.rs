//! JSON with comments and trailing commas (VS Code's settings), read as
//! VS Code reads it.

/// A JSON document with comments and trailing commas (VS Code's
/// settings), parsed.
pub(crate) fn jsonc_value(text: &str) -> Option<serde_json::Value> {
    serde_json::from_str(text)
        .or_else(|_| serde_json::from_str(&jsonc(&jsonc(text, false), true)))
        .ok()
}

/// JSON with comments and trailing commas (VS Code's settings) as JSON:
/// `//` and `/* */` comments outside strings dropped (`commas`: a comma
/// before `}` or `]` dropped instead).
pub(crate) fn jsonc(text: &str, commas: bool) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let (mut i, mut in_str) = (0, false);
    while i < b.len() {
        let c = b[i];
        if in_str {
            out.push(c);
            if c == '\\' && i + 1 < b.len() {
                out.push(b[i + 1]);
                i += 1;
            } else if c == '"' {
                in_str = false;
            }
        } else if c == '"' {
            in_str = true;
            out.push(c);
        } else if c == '/' && b.get(i + 1) == Some(&'/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
            continue;
        } else if c == '/' && b.get(i + 1) == Some(&'*') {
            i += 2;
            while i < b.len() && !(b[i] == '*' && b.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i += 2;
            continue;
        } else if c == ',' && commas {
            let next = b[i + 1..].iter().find(|c| !c.is_whitespace());
            if !matches!(next, Some('}' | ']')) {
                out.push(c);
            }
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}
