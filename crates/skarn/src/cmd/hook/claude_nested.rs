//! The nested `.claude` directories a Claude Code tool call leads the
//! client to (atk24m F7, atk24o F3), judged by the path as Claude Code
//! forms it (attack atk24s F1): the client trims blanks off a tool's
//! path, takes `~` and `~/` as the home, makes it absolute against the
//! session's directory and cleans it by name, without resolving links,
//! and then looks for `.claude/skills` on that path's way up. The hook
//! took the path as written and resolved links first, so `" <path>"`,
//! `~/../ws/...` or a link in the path (`deep/b/lnk/main.rs`, with `lnk`
//! leading elsewhere) reached a nested skill past the walk's bounds
//! unjudged, and a Grep with a leading blank skipped the whole-tree
//! refusal. Now every form is judged: as written, as the client forms it,
//! and each resolved.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Whether `c` is one of the blanks the client's trim removes (its
/// whitespace and line terminators; `U+0085` too, which Rust counts:
/// trimming more only adds a form to judge).
fn blank(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}'
}

/// The paths `path` (a tool call's) may name: as written against `cwd`,
/// as Claude Code forms it, and each of those resolved (links followed).
/// `Err`: a path the hook cannot form as the client does (a NUL, a link
/// loop): the call is refused.
pub fn forms(path: &str, cwd: Option<&Path>, home: Option<&Path>) -> Result<Vec<PathBuf>, String> {
    if path.contains('\0') {
        return Err(format!(
            "skarn: the path {path:?} holds a NUL character, which the hook cannot read as \
             Claude Code does; name the file plainly"
        ));
    }
    let against = |p: &Path| match cwd {
        Some(c) if !p.is_absolute() => c.join(p),
        _ => p.to_path_buf(),
    };
    let t = path.trim_matches(blank);
    let client = match (t.strip_prefix('~'), home) {
        (Some(""), Some(h)) => h.to_path_buf(),
        (Some(rest), Some(h)) if rest.starts_with('/') => h.join(rest.trim_start_matches('/')),
        _ => against(Path::new(t)),
    };
    let mut out = vec![
        against(Path::new(path)),
        skarn_sandbox::policy::config::normalize(&client),
    ];
    for p in out.clone() {
        match super::file_paths::resolved(&p) {
            Ok(Some(r)) => out.push(r),
            Ok(None) => {}
            Err(why) => return Err(format!("skarn: {why}")),
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Why a Claude Code call whose path (`file_path`, `path`,
/// `notebook_path`, a Glob's pattern, a Grep's or Glob's searched tree)
/// lies below a nested `.claude` with unconfined hooks may not run, in
/// the project `ws`.
pub fn refusal(
    input: &Value,
    ws: &Path,
    exe: &str,
    trusted: &[String],
    home: Option<&Path>,
) -> Option<String> {
    let ti = input.get("tool_input")?;
    let tool = input.get("tool_name").and_then(Value::as_str);
    let mut named: Vec<String> = ["file_path", "path", "notebook_path"]
        .iter()
        .filter_map(|k| ti.get(*k).and_then(Value::as_str).map(str::to_owned))
        .collect();
    // Glob's pattern: the directories it names before its first wildcard,
    // below its `path` (atk24o F3: Glob and Grep lead Claude Code to
    // nested directories too).
    if tool == Some("Glob")
        && let Some(pat) = ti.get("pattern").and_then(Value::as_str)
    {
        let lit: Vec<&str> = pat
            .split('/')
            .take_while(|c| !c.contains(['*', '?', '[', '{']))
            .collect();
        let lit = lit.join("/");
        let base = ti.get("path").and_then(Value::as_str).unwrap_or(".");
        named.push(if lit.trim_start_matches(blank).starts_with('/') {
            lit
        } else {
            format!("{}/{lit}", base.trim_end_matches(blank))
        });
    }
    // Grep searches its `path` (the working directory without one), Glob
    // below its pattern's directory: what either lists may lie anywhere
    // below, so the whole tree it searches is judged (fail closed).
    let search = match tool {
        Some("Grep") => Some(
            ti.get("path")
                .and_then(Value::as_str)
                .unwrap_or(".")
                .to_string(),
        ),
        Some("Glob") => named.last().cloned(),
        _ => None,
    };
    let cwd = input
        .get("cwd")
        .and_then(Value::as_str)
        .map(Path::new)
        .filter(|c| c.is_absolute());
    // The project as named and as resolved: the client's lexical path is
    // compared with the one, the resolved forms with the other.
    let mut tops = vec![ws.to_path_buf()];
    if let Ok(r) = std::fs::canonicalize(ws)
        && r != ws
    {
        tops.push(r);
    }
    let mut files = Vec::new();
    for p in &named {
        let forms = match forms(p, cwd, home) {
            Ok(f) => f,
            Err(why) => return Some(why),
        };
        for f in &forms {
            for top in &tops {
                files.extend(super::claude_dirs::on_the_way(top, f));
            }
        }
    }
    if let Some(root) = search {
        let forms = match forms(&root, cwd, home) {
            Ok(f) => f,
            Err(why) => return Some(why),
        };
        for f in &forms {
            for top in &tops {
                match super::claude_dirs::searched(top, f) {
                    Ok(found) => files.extend(found),
                    Err(why) => return Some(why),
                }
            }
        }
    }
    files.sort();
    files.dedup();
    let found = super::confine_hooks::unconfined_in(files, exe, trusted);
    super::confine_hooks::refusal(&found)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn the_client_s_forms_of_a_path_are_judged() {
        let t = skarn_test_support::TempDir::new("claude-nested-forms");
        let ws = t.dir("ws");
        let h = t.dir("home");
        t.dir("ws/src");
        std::os::unix::fs::symlink(ws.join("src"), ws.join("lnk")).unwrap();
        let f = |p: &str| forms(p, Some(&ws), Some(&h)).unwrap();
        let w = std::fs::canonicalize(&ws).unwrap();
        assert!(f(&format!(" {}/a\t", ws.display())).contains(&ws.join("a")));
        assert!(f("~/../ws/a").contains(&t.path().join("ws/a")));
        assert!(f("~").contains(&h));
        assert!(f("~x/a").contains(&ws.join("~x/a")));
        let l = f(&format!("{}/lnk/main.rs", ws.display()));
        assert!(l.contains(&ws.join("lnk/main.rs")), "{l:?}");
        assert!(l.contains(&w.join("src/main.rs")), "{l:?}");
        assert!(forms("a\0b", Some(&ws), Some(&h)).is_err());
    }
}
