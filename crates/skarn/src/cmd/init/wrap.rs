//! What runs beside skarn in the files `init` merges into (the client's
//! other hooks, its status line, its other MCP servers) is wrapped to run
//! inside `skarn run`.

use std::path::{Path, PathBuf};

use super::init_clients::Client;
use super::init_files;
use super::{Args, Change, exe};

/// Claude Code's other hooks and status line, in the settings files
/// merged into, the project's local settings and the skills' and
/// subagents' frontmatter, are wrapped to run inside `skarn run` (ADR 0255).
pub(super) fn wrap_hooks(
    changes: &mut Vec<Change>,
    user: bool,
    cwd: &Path,
    home: &Path,
    base: &Path,
) -> anyhow::Result<()> {
    let exe = exe();
    let trusted = super::super::hook::trusted_hooks();
    let settings = |p: &Path| {
        p.file_name()
            .is_some_and(|n| n == "settings.json" || n == "settings.local.json")
    };
    for c in changes.iter_mut().filter(|c| settings(&c.target.path)) {
        let said = super::super::init_hooks::wrap_json(&mut c.new, &exe, &trusted)?;
        super::super::init_hooks::say(&c.target.path, &said);
    }
    let mut more = Vec::new();
    if !user {
        more.push(cwd.join(".claude/settings.local.json"));
    }
    for f in more {
        if changes.iter().any(|c| c.target.path == f) {
            continue;
        }
        let target = init_files::resolve(&f, base)?;
        let Some(old) = init_files::read(&target)? else {
            continue;
        };
        let mut new = old.clone();
        let said = super::super::init_hooks::wrap_json(&mut new, &exe, &trusted)?;
        if !said.is_empty() {
            super::super::init_hooks::say(&f, &said);
            changes.push(Change {
                target,
                old: Some(old),
                new,
            });
        }
    }
    // The project's skills, subagents and commands, the nested
    // directories' and those above the project up to the repository's
    // top (atk24m F7, atk24s F4; ADR 0288).
    let files = if user {
        super::super::hook::confine_hooks::claude_dir(Some(home))
            .map(|d| super::super::hook::frontmatter_hooks::files(&d))
            .unwrap_or_default()
    } else {
        super::super::hook::claude_dirs::project_files(cwd)
            .into_iter()
            .filter(|f| !f.is_dir())
            .collect()
    };
    for (f, new, said) in super::super::init_hooks::wrap_frontmatter(files, &exe, &trusted)? {
        let target = init_files::resolve(&f, base)?;
        let old = init_files::read(&target)?;
        super::super::init_hooks::say(&f, &said);
        changes.push(Change { target, old, new });
    }
    Ok(())
}

/// Claude Code started in `cwd` merges the `.mcp.json` of every
/// directory above it, up to `/` (attack atk24s F4: a monorepo's top
/// `.mcp.json` when `init` ran in a package): each server there that
/// skarn does not run, one line for `init`'s list of what runs beside
/// skarn (it stops without `--accept-project-settings`); `init` run in
/// that directory wraps it.
pub(super) fn parent_servers(cwd: &Path) -> Vec<String> {
    let (exe, trusted) = (exe(), super::super::hook::trusted_hooks());
    let mut out = Vec::new();
    let mut d = cwd.parent();
    while let Some(x) = d {
        let f = x.join(".mcp.json");
        if let Ok(Some(text)) = skarn_sandbox::policy::config::read_text(&f)
            && let Some((_, said)) = super::super::mcp_wrap::wrap_json(&text, &exe, &trusted)
        {
            for s in said {
                out.push(skarn_sandbox::protect::terminal_filter::one_line(&format!(
                    "{}: MCP server {s}, which Claude Code started here also starts, outside \
                     skarn's sandbox (run `skarn init --client claude-code` in {} to wrap it)",
                    f.display(),
                    x.display()
                )));
            }
        }
        d = x.parent();
    }
    out
}

/// VS Code's custom agents' frontmatter hooks (`.github/agents`, the
/// folders `chat.agentFilesLocations` names, the user profile's agents:
/// atk24r F8, atk24s F5) are listed and wrapped to run inside `skarn run`,
/// as Claude Code's subagents' are; with `--user` only the profile's. A
/// folder skarn cannot read whole (a location setting it cannot read,
/// more files than it looks at) stops `init`, naming it.
pub(super) fn wrap_vscode_agents(
    changes: &mut Vec<Change>,
    user: bool,
    cwd: &Path,
    home: &Path,
) -> anyhow::Result<()> {
    let exe = exe();
    let trusted = super::super::hook::trusted_hooks();
    let mut files = Vec::new();
    for f in super::super::hook::vscode_agents::files(cwd, Some(home)) {
        let mine = f.starts_with(home) && !f.starts_with(cwd);
        if user != mine {
            continue;
        }
        if f.is_dir() {
            anyhow::bail!(
                "{}: VS Code loads custom agents from here, but skarn cannot read them all (a location setting it cannot read, or more files than it looks at): their hooks would run unconfined; fix the setting or split the folder",
                f.display()
            );
        }
        files.push(f);
    }
    for (f, new, said) in super::super::init_hooks::wrap_frontmatter(files, &exe, &trusted)? {
        let base = f
            .parent()
            .map_or_else(|| cwd.to_path_buf(), Path::to_path_buf);
        let target = init_files::resolve(&f, &base)?;
        let old = init_files::read(&target)?;
        super::super::init_hooks::say(&f, &said);
        changes.push(Change { target, old, new });
    }
    Ok(())
}

/// Codex's and Windsurf's own hooks (and Codex's `notify`), in the user's
/// files and the project's in `cwd`, are wrapped to run inside `skarn
/// run` (ADR 0272); what a project's `.codex/config.toml` or
/// `.windsurf/hooks.json` sets is shown first and needs
/// `--accept-project-settings`; a Codex configuration switching hooks off
/// is refused.
pub(super) fn wrap_client_hooks(
    changes: &mut Vec<Change>,
    client: Client,
    cwd: &Path,
    home: &Path,
    args: &Args,
) -> anyhow::Result<()> {
    let agent = if client == Client::Codex {
        "codex"
    } else {
        "windsurf"
    };
    let exe = exe();
    let trusted = super::super::hook::trusted_hooks();
    let files = super::super::init_hooks::client_files(agent, cwd, home);
    // What a cloned repository's files make the client do (atk24l).
    let mut found = Vec::new();
    for f in files.iter().filter(|f| f.starts_with(cwd) && cwd != home) {
        let Ok(Some(text)) = skarn_sandbox::policy::config::read_text(f) else {
            continue;
        };
        if f.extension().is_some_and(|e| e == "toml") {
            found.extend(super::super::hook::client_hooks::codex_project_findings(
                f, &text, &exe, &trusted,
            ));
        } else {
            found.extend(super::super::init_project::findings(f, &text, agent));
        }
    }
    super::super::init_project::confirm(&found, args.print, args.accept_project_settings)?;
    let mut any = false;
    for f in &files {
        let at = changes.iter().position(|c| c.target.path == *f);
        let (target, old, text) = match at {
            Some(i) => (None, None, changes[i].new.clone()),
            None => {
                let base = if f.starts_with(cwd) {
                    cwd.to_path_buf()
                } else {
                    f.parent()
                        .map_or_else(|| home.to_path_buf(), Path::to_path_buf)
                };
                let Ok(t) = init_files::resolve(f, &base) else {
                    continue;
                };
                let Some(old) = init_files::read(&t)? else {
                    continue;
                };
                (Some(t), Some(old.clone()), old)
            }
        };
        let (new, said) =
            super::super::init_hooks::wrap_client_file(f, &text, agent, &exe, &trusted)?;
        if said.is_empty() {
            continue;
        }
        any = true;
        let hooks: Vec<String> = said
            .iter()
            .filter(|s| !s.starts_with("MCP server "))
            .cloned()
            .collect();
        super::super::init_hooks::say(f, &hooks);
        match (at, target) {
            (Some(i), _) => changes[i].new = new,
            (None, Some(target)) => changes.push(Change { target, old, new }),
            (None, None) => {}
        }
    }
    if client == Client::Codex {
        let written: Vec<(PathBuf, String)> = changes
            .iter()
            .map(|c| (c.target.path.clone(), c.new.clone()))
            .collect();
        let all = super::super::hook::client_hooks::files(agent, cwd, Some(home));
        super::super::init_hooks::refuse_codex_hooks_off(&all, &written)?;
    }
    super::super::init_hooks::say_codex_approval(agent, any);
    Ok(())
}

/// The other MCP servers of the files merged into run inside `skarn run`
/// (ADR 0273).
pub(super) fn wrap_servers(changes: &mut [Change], client: Client) -> anyhow::Result<()> {
    let exe = exe();
    let trusted = super::super::hook::trusted_hooks();
    for c in changes.iter_mut() {
        let name = c.target.path.file_name().and_then(|n| n.to_str());
        // Each client's JSON file of MCP servers (Cursor's, Gemini
        // CLI's, Windsurf's and VS Code's too: ADR 0273).
        let json_servers = match client {
            Client::ClaudeCode => matches!(name, Some(".mcp.json" | ".claude.json")),
            Client::Cursor | Client::Vscode => name == Some("mcp.json"),
            Client::Windsurf => name == Some("mcp_config.json"),
            Client::GeminiCli => name == Some("settings.json"),
            Client::Codex => false,
        };
        let said = match name {
            _ if json_servers => match super::super::mcp_wrap::wrap_json(&c.new, &exe, &trusted) {
                Some((new, said)) => {
                    c.new = new;
                    said
                }
                None => Vec::new(),
            },
            Some("config.toml") if client == Client::Codex => {
                let (new, said) = super::super::mcp_wrap::wrap_toml(&c.new, &exe, &trusted)?;
                c.new = new;
                said
            }
            _ => Vec::new(),
        };
        super::super::mcp_wrap::say(&c.target.path, &said);
    }
    Ok(())
}
