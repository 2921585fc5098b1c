//! `skarn init` makes Claude Code's other hooks and status line run inside
//! `skarn run` (ADR 0255): in every settings file it merges into, the
//! project's `settings.local.json`, and the skills' and subagents'
//! frontmatter of the directory it sets up, each hook command that is not
//! skarn's own and not in `[hook] trusted_hooks` is wrapped (the hook
//! refuses every tool call while one is left).

use std::path::{Path, PathBuf};

use crate::cmd::hook::{confine_hooks, frontmatter_hooks};

/// Wrap the unconfined hooks of the settings text `text` (JSON); what
/// changed, one line each (nothing when `text` is not JSON).
pub fn wrap_json(text: &mut String, exe: &str, trusted: &[String]) -> anyhow::Result<Vec<String>> {
    let Ok(mut v) = serde_json::from_str::<serde_json::Value>(text) else {
        return Ok(Vec::new());
    };
    let said = confine_hooks::wrap_settings(&mut v, "claude-code", exe, trusted);
    if !said.is_empty() {
        *text = serde_json::to_string_pretty(&v)? + "\n";
    }
    Ok(said)
}

/// The skill and subagent files under the Claude Code directory `dir` whose
/// hooks must be wrapped: (file, new text, what changed). A hook command in
/// a form skarn cannot rewrite stops `init`, naming it.
pub fn wrap_frontmatter(
    dir: &Path,
    exe: &str,
    trusted: &[String],
) -> anyhow::Result<Vec<(PathBuf, String, Vec<String>)>> {
    let mut out = Vec::new();
    for f in frontmatter_hooks::files(dir) {
        let Ok(Some(text)) = skarn_sandbox::policy::config::read_text(&f) else {
            continue;
        };
        match frontmatter_hooks::wrap_text(&text, "claude-code", exe, trusted) {
            Ok((new, said)) if !said.is_empty() => out.push((f, new, said)),
            Ok(_) => {}
            Err(line) => anyhow::bail!(
                "{}: a hook command skarn cannot rewrite to run confined ({line}): write it \
                 as one line (`command: \"...\"`), or list it word for word in [hook] \
                 trusted_hooks of ~/.config/skarn/config.toml to keep it unconfined",
                f.display()
            ),
        }
    }
    Ok(out)
}

/// Tell the user what was wrapped in `path`.
pub fn say(path: &Path, said: &[String]) {
    for c in said {
        eprintln!(
            "skarn: {}: the hook `{c}` now runs inside skarn run (the project is its \
             workspace; ADR 0255); to keep it unconfined, list it word for word in [hook] \
             trusted_hooks of ~/.config/skarn/config.toml",
            skarn_sandbox::protect::terminal_filter::one_line(&path.display().to_string())
        );
    }
}
