//! The paths a file tool call writes, from each client's tool input:
//! Claude Code and Gemini CLI (`file_path`, `notebook_path`,
//! `absolute_path`, `path`), VS Code's agent tools (`filePath`,
//! `dirPath`, `replacements[].filePath`, an `apply_patch` text), Codex's
//! `apply_patch` (the patch text) and Windsurf's `pre_write_code`
//! (`file_path`). A patch names its files on `*** Add File:`,
//! `*** Update File:`, `*** Delete File:` and `*** Move to:` lines (the
//! format both apply_patch tools read).

use serde_json::Value;

/// Most paths judged for one call (a patch naming more is refused).
pub const MAX_TARGETS: usize = 256;

/// Keys that name one path.
const PATH_KEYS: &[&str] = &[
    "file_path",
    "notebook_path",
    "absolute_path",
    "path",
    "filePath",
    "dirPath",
];

/// Keys that may hold a patch text.
const PATCH_KEYS: &[&str] = &["input", "patch", "command"];

/// File-writing tools whose targets the hook judges: Claude Code's
/// (also named so in VS Code's Claude-format hooks), Gemini CLI's, VS
/// Code's agent tools and Codex's `apply_patch` (their paths: [`targets`]).
pub const FILE_TOOLS: &[&str] = &[
    "Write",
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "write_file",
    "replace",
    "create_file",
    "create_directory",
    "replace_string_in_file",
    "multi_replace_string_in_file",
    "insert_edit_into_file",
    "edit_notebook_file",
    "apply_patch",
    // VS Code: the hooks reference's `editFiles` (`files[]`), its
    // placeholder id, and the Copilot extension's contributed ids.
    "editFiles",
    "edit_files",
    "copilot_editFiles",
    "copilot_createFile",
    "copilot_createDirectory",
    "copilot_replaceString",
    "copilot_multiReplaceString",
    "copilot_insertEdit",
    "copilot_editNotebook",
    "copilot_applyPatch",
];

/// The paths named on a patch's file lines.
fn patch_paths(text: &str) -> Vec<String> {
    const MARKS: &[&str] = &[
        "*** Add File:",
        "*** Update File:",
        "*** Delete File:",
        "*** Move to:",
    ];
    text.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            MARKS
                .iter()
                .find_map(|m| l.strip_prefix(m))
                .map(|p| p.trim().to_owned())
        })
        .filter(|p| !p.is_empty())
        .collect()
}

/// Every path `tool_input` names (empty: none found, a malformed call
/// for a file tool). `Err` when it names more than [`MAX_TARGETS`].
pub fn targets(tool_input: &Value) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = PATH_KEYS
        .iter()
        .filter_map(|k| tool_input.get(*k).and_then(Value::as_str))
        .map(str::to_owned)
        .collect();
    if let Some(Value::Array(rs)) = tool_input.get("replacements") {
        out.extend(
            rs.iter()
                .filter_map(|r| r.get("filePath").and_then(Value::as_str))
                .map(str::to_owned),
        );
    }
    // VS Code's `editFiles`: `files` holds paths, or objects naming one.
    if let Some(Value::Array(fs)) = tool_input.get("files") {
        for f in fs {
            match f {
                Value::String(p) => out.push(p.clone()),
                Value::Object(o) => {
                    let named: Vec<String> = PATH_KEYS
                        .iter()
                        .chain(["uri"].iter())
                        .filter_map(|k| o.get(*k).and_then(Value::as_str))
                        .map(str::to_owned)
                        .collect();
                    if named.is_empty() {
                        return Err("an entry of files names no path the hook can read".into());
                    }
                    out.extend(named);
                }
                _ => return Err("an entry of files is neither a path nor an object".into()),
            }
        }
    }
    for k in PATCH_KEYS {
        if let Some(t) = tool_input.get(*k).and_then(Value::as_str) {
            out.extend(patch_paths(t));
        }
    }
    if out.len() > MAX_TARGETS {
        return Err(format!(
            "the call names {} files, more than the {MAX_TARGETS} the hook judges",
            out.len()
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_client_shape_names_its_paths() {
        assert_eq!(targets(&json!({"file_path": "a"})).unwrap(), ["a"]);
        assert_eq!(targets(&json!({"filePath": "/w/b"})).unwrap(), ["/w/b"]);
        assert_eq!(
            targets(&json!({"replacements": [{"filePath": "c"}, {"filePath": "d"}]})).unwrap(),
            ["c", "d"]
        );
        let patch = "*** Begin Patch\n*** Update File: src/x.rs\n@@\n-a\n+b\n*** Move to: \
                     .git/hooks/pre-commit\n*** Add File: skarn.toml\n+x\n*** End Patch\n";
        assert_eq!(
            targets(&json!({"input": patch})).unwrap(),
            ["src/x.rs", ".git/hooks/pre-commit", "skarn.toml"]
        );
        assert_eq!(
            targets(&json!({"command": patch})).unwrap().len(),
            3,
            "Codex puts the patch in command"
        );
        assert!(targets(&json!({"content": "x"})).unwrap().is_empty());
        assert_eq!(
            targets(&json!({"files": ["src/a.ts", {"filePath": "/w/b"}]})).unwrap(),
            ["src/a.ts", "/w/b"]
        );
        assert!(targets(&json!({"files": [1]})).is_err());
        let many: String = (0..300).map(|i| format!("*** Add File: f{i}\n")).collect();
        assert!(targets(&json!({"input": many})).is_err());
    }
}
