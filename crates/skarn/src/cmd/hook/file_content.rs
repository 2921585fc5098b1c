//! The content a file tool call will leave in one file (attack atk22o
//! F10): the layer's rules compare the new content with the host's
//! (protected keys of `package.json` and `pyproject.toml`, a package's
//! version in `node_modules`, environment files), so the file guard judges
//! the file as the tool will leave it, not as it is. Write-like tools give
//! the content; Edit-like tools are applied to the host file as the
//! client applies them. Tools whose result is not computed here (notebook
//! cells, patches, insertions), and an edit that does not apply exactly
//! (the client fails it, or matches more loosely: quotes, line ends), are
//! judged by probes: the file emptied, the file with the call's text
//! added, the call's text alone; any refusal refuses.

use std::path::Path;

use serde_json::Value;

/// What the call leaves in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Proposed {
    /// This content.
    Bytes(Vec<u8>),
    /// Not computed here: the probes of [`Proposed::probes`].
    Unknown(Vec<u8>),
    /// The call cannot apply (the client fails it): refused.
    Fails(String),
}

impl Proposed {
    /// The contents to judge (the host's file `host`, for the probes).
    #[cfg(target_os = "linux")]
    pub fn probes(&self, host: &Path) -> Vec<Vec<u8>> {
        match self {
            Proposed::Bytes(b) => vec![b.clone()],
            Proposed::Unknown(text) => {
                let mut added = std::fs::read(host).unwrap_or_default();
                added.push(b'\n');
                added.extend_from_slice(text);
                vec![Vec::new(), added, text.clone()]
            }
            Proposed::Fails(_) => Vec::new(),
        }
    }
}

/// Most bytes judged (a larger result is refused: the guard would not
/// read it whole).
const MAX_CONTENT: usize = 8 << 20;

fn s<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| v.get(*k).and_then(Value::as_str))
}

/// Every string of `v`, joined (the probe text of an unknown tool).
fn all_text(v: &Value, out: &mut String) {
    match v {
        Value::String(t) => {
            out.push_str(t);
            out.push('\n');
        }
        Value::Array(a) => a.iter().for_each(|x| all_text(x, out)),
        Value::Object(o) => o.values().for_each(|x| all_text(x, out)),
        _ => {}
    }
}

/// One replacement as the clients apply it: every occurrence when `all`
/// (or `expected` > 1 for Gemini CLI), else exactly one.
fn replace(
    text: &str,
    old: &str,
    new: &str,
    all: bool,
    expected: Option<u64>,
) -> Result<String, String> {
    if old.is_empty() {
        return if text.is_empty() {
            Ok(new.to_owned())
        } else {
            Err("an edit with an empty old string of a file that is not empty".into())
        };
    }
    let n = text.matches(old).count() as u64;
    let ok = match expected {
        Some(e) => n == e,
        None => n == 1 || (all && n > 0),
    };
    if !ok {
        return Err(format!(
            "the text to replace occurs {n} times in the file: the edit does not apply"
        ));
    }
    Ok(text.replace(old, new))
}

/// The edits of `input` that name `target` (VS Code's multi-replace names
/// a file per replacement), as (old, new, all, expected).
fn edits<'a>(
    tool: &str,
    input: &'a Value,
    same: &dyn Fn(&str) -> bool,
) -> Vec<(&'a str, &'a str, bool, Option<u64>)> {
    let one = |e: &'a Value| {
        Some((
            s(e, &["old_string", "oldString"])?,
            s(e, &["new_string", "newString"])?,
            e.get("replace_all").and_then(Value::as_bool) == Some(true),
            e.get("expected_replacements").and_then(Value::as_u64),
        ))
    };
    match tool {
        "MultiEdit" => input
            .get("edits")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|e| one(e).unwrap_or(("", "", false, None)))
                    .collect()
            })
            .unwrap_or_default(),
        "multi_replace_string_in_file" | "copilot_multiReplaceString" => input
            .get("replacements")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter(|e| s(e, &["filePath", "file_path"]).is_some_and(same))
                    .map(|e| one(e).unwrap_or(("", "", false, None)))
                    .collect()
            })
            .unwrap_or_default(),
        _ => one(input).into_iter().collect(),
    }
}

/// What the call `tool` with `input` leaves in the file named `path`
/// (`host`: that file on the host, absolute), `None` when the tool writes
/// no file content (a directory made).
pub fn proposed(tool: &str, input: &Value, path: &str, host: &Path) -> Option<Proposed> {
    const WRITES: &[&str] = &["Write", "write_file", "create_file", "copilot_createFile"];
    const EDITS: &[&str] = &[
        "Edit",
        "MultiEdit",
        "replace",
        "replace_string_in_file",
        "copilot_replaceString",
        "multi_replace_string_in_file",
        "copilot_multiReplaceString",
    ];
    if matches!(
        tool,
        "create_directory" | "copilot_createDirectory" | "save_memory"
    ) {
        return None;
    }
    if WRITES.contains(&tool) {
        return Some(match s(input, &["content"]) {
            Some(c) if c.len() <= MAX_CONTENT => Proposed::Bytes(c.as_bytes().to_vec()),
            Some(_) => Proposed::Fails("the content is larger than the guard reads".into()),
            None => Proposed::Fails("the call gives no content".into()),
        });
    }
    if EDITS.contains(&tool) {
        let same = |p: &str| p == path;
        let list = edits(tool, input, &same);
        if list.is_empty() {
            return Some(unknown(input));
        }
        let mut text = match std::fs::read(host) {
            Ok(b) if b.len() <= MAX_CONTENT => match String::from_utf8(b) {
                Ok(t) => t,
                Err(_) => return Some(Proposed::Fails("the file is not text".into())),
            },
            Ok(_) => {
                return Some(Proposed::Fails(
                    "the file is larger than the guard reads".into(),
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(_) => return Some(Proposed::Fails("the file cannot be read".into())),
        };
        for (old, new, all, expected) in list {
            match replace(&text, old, new, all, expected) {
                Ok(t) if t.len() <= MAX_CONTENT => text = t,
                Ok(_) => {
                    return Some(Proposed::Fails(
                        "the result is larger than the guard reads".into(),
                    ));
                }
                // The client fails such an edit (nothing written), or
                // matches more loosely than this (quotes, line ends): the
                // probes judge it.
                Err(_) => return Some(unknown(input)),
            }
        }
        return Some(Proposed::Bytes(text.into_bytes()));
    }
    Some(unknown(input))
}

/// The probes of a call whose result is not computed here.
fn unknown(input: &Value) -> Proposed {
    let mut text = String::new();
    all_text(input, &mut text);
    text.truncate(MAX_CONTENT);
    Proposed::Unknown(text.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn edits_apply_as_the_client_does() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("package.json");
        std::fs::write(&f, "{\n  \"version\": \"1.0.0\"\n}\n").unwrap();
        let p = f.to_str().unwrap();
        let e = json!({"file_path": p, "old_string": "\"1.0.0\"", "new_string": "\"1.0.0\", \"prettier\": \"./x.cjs\""});
        assert_eq!(
            proposed("Edit", &e, p, &f),
            Some(Proposed::Bytes(
                b"{\n  \"version\": \"1.0.0\", \"prettier\": \"./x.cjs\"\n}\n".to_vec()
            ))
        );
        let miss = json!({"file_path": p, "old_string": "nope", "new_string": "x"});
        assert!(matches!(
            proposed("Edit", &miss, p, &f),
            Some(Proposed::Unknown(_))
        ));
        let multi = json!({"file_path": p, "edits": [
            {"old_string": "1.0.0", "new_string": "2.0.0"},
            {"old_string": "2.0.0", "new_string": "3.0.0"}]});
        assert_eq!(
            proposed("MultiEdit", &multi, p, &f),
            Some(Proposed::Bytes(
                b"{\n  \"version\": \"3.0.0\"\n}\n".to_vec()
            ))
        );
        let w = json!({"file_path": p, "content": "x"});
        assert_eq!(
            proposed("Write", &w, p, &f),
            Some(Proposed::Bytes(b"x".to_vec()))
        );
        let nb = json!({"notebook_path": p, "new_source": "y"});
        assert!(matches!(
            proposed("NotebookEdit", &nb, p, &f),
            Some(Proposed::Unknown(_))
        ));
    }
}
