//! Gemini CLI and trusted folders (issue 24 item 3). With
//! `security.folderTrust.enabled` in the user's `~/.gemini/settings.json`
//! (off by default), Gemini CLI ignores a project's `.gemini/settings.json`
//! in a folder the user has not trusted, and so the skarn hook `init`
//! writes there: every shell command would run unconfined. Gemini's
//! record of trust is `~/.gemini/trustedFolders.json` (or
//! `$GEMINI_CLI_TRUSTED_FOLDERS_PATH`): a path with `TRUST_FOLDER` trusts
//! it and what lies below, `TRUST_PARENT` its parent directory and below,
//! `DO_NOT_TRUST` none. `init` says which case holds and what to do.

use std::path::{Path, PathBuf};

use serde_json::Value;

fn json(p: &Path) -> Option<Value> {
    let text = skarn_sandbox::policy::config::read_text(p).ok()??;
    serde_json::from_str(&text).ok()
}

/// Whether Gemini's trust record trusts `dir` (`None`: no record says).
fn trusted(dir: &Path, home: &Path) -> Option<bool> {
    let file = std::env::var_os("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| home.join(".gemini/trustedFolders.json"));
    let rules = json(&file)?;
    let rules = rules.as_object()?;
    // The longest matching rule decides.
    let mut best: Option<(usize, bool)> = None;
    for (path, level) in rules {
        let p = Path::new(path);
        let (root, trust) = match level.as_str() {
            Some("TRUST_FOLDER") => (p, true),
            Some("TRUST_PARENT") => (p.parent().unwrap_or(p), true),
            Some("DO_NOT_TRUST") => (p, false),
            _ => continue,
        };
        if dir.starts_with(root) && best.is_none_or(|(n, _)| root.as_os_str().len() >= n) {
            best = Some((root.as_os_str().len(), trust));
        }
    }
    best.map(|(_, t)| t)
}

/// What `init --client gemini-cli` (project files, with the hook) must tell
/// the user about `cwd`.
pub fn note(cwd: &Path, home: &Path) -> String {
    let settings = home.join(".gemini/settings.json");
    // A file that is there but not plain JSON (Gemini accepts comments):
    // whether folder trust is on is unknown, and said so.
    let there = std::fs::symlink_metadata(&settings).is_ok();
    let on = match json(&settings) {
        Some(v) => v
            .pointer("/security/folderTrust/enabled")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        None => there,
    };
    let fix = format!(
        "trust the folder (in Gemini CLI: /permissions, then \"Trust folder\"), or install the \
         hook for every folder instead: skarn init --client gemini-cli --user (it writes {}, \
         which Gemini CLI always loads)",
        settings.display()
    );
    let dir = cwd.display();
    if !on {
        return format!(
            "skarn: note: Gemini CLI loads {dir}/.gemini/settings.json, and so the hook, only in \
             a folder it trusts once security.folderTrust.enabled is true in {} (off now, so \
             every folder is trusted). If you turn it on: {fix}",
            settings.display()
        );
    }
    match trusted(cwd, home) {
        Some(true) => format!(
            "skarn: note: Gemini CLI has folder trust on and trusts {dir}: it loads the hook. \
             Should you stop trusting it, the hook stops running; then {fix}"
        ),
        _ => format!(
            "skarn: WARNING: Gemini CLI has folder trust on (security.folderTrust.enabled in {}) \
             and does not trust {dir}: it ignores {dir}/.gemini/settings.json, so the skarn hook \
             written there does NOT run and shell commands run unconfined. To fix it, {fix}",
            settings.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_case_is_said() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        let proj = t.path().join("work/proj");
        std::fs::create_dir_all(home.join(".gemini")).unwrap();
        std::fs::create_dir_all(&proj).unwrap();
        assert!(note(&proj, &home).contains("off now"));
        std::fs::write(
            home.join(".gemini/settings.json"),
            r#"{"security": {"folderTrust": {"enabled": true}}}"#,
        )
        .unwrap();
        assert!(note(&proj, &home).contains("does NOT run"));
        let rules = home.join(".gemini/trustedFolders.json");
        std::fs::write(
            &rules,
            format!(
                r#"{{"{}": "TRUST_PARENT"}}"#,
                t.path().join("work/x").display()
            ),
        )
        .unwrap();
        assert!(
            note(&proj, &home).contains("trusts"),
            "{}",
            note(&proj, &home)
        );
        std::fs::write(
            &rules,
            format!(
                r#"{{"{}": "TRUST_FOLDER", "{}": "DO_NOT_TRUST"}}"#,
                t.path().join("work").display(),
                proj.display()
            ),
        )
        .unwrap();
        assert!(note(&proj, &home).contains("does NOT run"));
    }
}
