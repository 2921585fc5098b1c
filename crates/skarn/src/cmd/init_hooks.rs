//! `skarn init` makes Claude Code's other hooks and status line run inside
//! `skarn run` (ADR 0255): in every settings file it merges into, the
//! project's `settings.local.json`, and the skills' and subagents'
//! frontmatter of the directory it sets up, each hook command that is not
//! skarn's own and not in `[hook] trusted_hooks` is wrapped (the hook
//! refuses every tool call while one is left).

use std::path::{Path, PathBuf};

use crate::cmd::hook::{client_hooks, confine_hooks, frontmatter_hooks};

/// Wrap the unconfined hooks of the settings text `text` (JSON); what
/// changed, one line each (nothing when `text` is not JSON).
pub fn wrap_json(text: &mut String, exe: &str, trusted: &[String]) -> anyhow::Result<Vec<String>> {
    wrap_json_as(text, "claude-code", exe, trusted)
}

/// [`wrap_json`] for the client `agent` (whose installed skarn hook is
/// left as it is).
fn wrap_json_as(
    text: &mut String,
    agent: &str,
    exe: &str,
    trusted: &[String],
) -> anyhow::Result<Vec<String>> {
    let Ok(mut v) = serde_json::from_str::<serde_json::Value>(text) else {
        return Ok(Vec::new());
    };
    let said = confine_hooks::wrap_settings(&mut v, agent, exe, trusted);
    if !said.is_empty() {
        *text = serde_json::to_string_pretty(&v)? + "\n";
    }
    Ok(said)
}

/// The skill, subagent and command files among `files` whose hooks must
/// be wrapped: (file, new text, what changed). A hook command in
/// a form skarn cannot rewrite stops `init`, naming it.
pub fn wrap_frontmatter(
    files: Vec<PathBuf>,
    exe: &str,
    trusted: &[String],
) -> anyhow::Result<Vec<(PathBuf, String, Vec<String>)>> {
    let mut out = Vec::new();
    for f in files {
        let Ok(Some(text)) = skarn_sandbox::policy::config::read_text(&f) else {
            continue;
        };
        // A subagent's inline MCP server is not rewritten (atk24o F11).
        let servers = crate::cmd::hook::frontmatter_mcp::unconfined(&text, exe, trusted);
        if let Some(s) = servers.first() {
            anyhow::bail!(
                "{}: {s} would run outside skarn's sandbox when the subagent runs (Claude Code \
                 starts it on the host): move it to the project's .mcp.json and name it in \
                 `mcpServers:` (`skarn init` wraps it there), or list its command line word \
                 for word in [hook] trusted_hooks of ~/.config/skarn/config.toml to keep it \
                 unconfined",
                f.display()
            );
        }
        // Nor are its shell lines (atk24o F10).
        if let Some(s) = crate::cmd::hook::skill_shell::unconfined(&text, trusted).first() {
            anyhow::bail!(
                "{}: {s}: set \"{}\": true in ~/.claude/settings.json (and let no project \
                 settings file set it false), or list the line's command word for word in \
                 [hook] trusted_hooks of ~/.config/skarn/config.toml to keep it unconfined",
                f.display(),
                crate::cmd::hook::skill_shell::KEY
            );
        }
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

/// Codex's or Windsurf's hook file `path` (text `text`) with every
/// unconfined hook command (and Codex's `notify`) wrapped (ADR 0272):
/// the new text and what changed.
pub fn wrap_client_file(
    path: &Path,
    text: &str,
    agent: &str,
    exe: &str,
    trusted: &[String],
) -> anyhow::Result<(String, Vec<String>)> {
    if path.extension().is_some_and(|e| e == "toml") {
        let bad = |e: &dyn std::fmt::Display| {
            anyhow::anyhow!(
                "{}: not valid TOML ({e}); its hooks cannot be wrapped",
                path.display()
            )
        };
        let (new, mut said) = client_hooks::wrap_toml(text, exe, trusted).map_err(|e| bad(&e))?;
        // Its MCP servers too (ADR 0273).
        let (new, servers) =
            crate::cmd::mcp_wrap::wrap_toml(&new, exe, trusted).map_err(|e| bad(&e))?;
        crate::cmd::mcp_wrap::say(path, &servers);
        said.extend(servers.into_iter().map(|s| format!("MCP server {s}")));
        return Ok((new, said));
    }
    let mut new = text.to_string();
    let said = wrap_json_as(&mut new, agent, exe, trusted)?;
    Ok((new, said))
}

/// The files of `agent` (`codex`, `windsurf`) that `init` run in `cwd`
/// wraps: the user's, and the project's in `cwd` (a parent project
/// directory's `.codex/` is named by the hook, for `init` run there).
pub fn client_files(agent: &str, cwd: &Path, home: &Path) -> Vec<PathBuf> {
    client_hooks::files(agent, cwd, Some(home))
        .into_iter()
        .filter(|f| {
            let dir = f.parent().and_then(Path::parent);
            !f.starts_with(cwd) || dir == Some(cwd)
        })
        .collect()
}

/// Refuse a Codex configuration that switches hooks off (`[features]
/// hooks = false`): Codex would never run skarn's hook, and every command
/// would run unconfined.
pub fn refuse_codex_hooks_off(
    files: &[PathBuf],
    written: &[(PathBuf, String)],
) -> anyhow::Result<()> {
    for f in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "toml"))
    {
        let text = match written.iter().find(|(p, _)| p == f) {
            Some((_, t)) => Some(t.clone()),
            None => skarn_sandbox::policy::config::read_text(f).ok().flatten(),
        };
        if text.is_some_and(|t| client_hooks::hooks_off(&t)) {
            anyhow::bail!(
                "{} sets [features] hooks = false, so Codex would never run the skarn hook and \
                 its commands would run unconfined; remove that setting (check who put it \
                 there) and run `skarn init` again",
                f.display()
            );
        }
    }
    Ok(())
}

/// Tell the user that Codex runs a changed hook only after approval.
pub fn say_codex_approval(agent: &str, any: bool) {
    if agent == "codex" && any {
        eprintln!(
            "skarn: Codex runs a changed hook only after you approve it again (/hooks in codex)"
        );
    }
}
