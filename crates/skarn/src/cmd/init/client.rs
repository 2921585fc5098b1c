//! `skarn init --client NAME`: every file resolved, checked and merged in
//! memory, then written (each with a backup), and a JSON summary printed.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};

use super::checks::{adopt, also_read, refuse_disabled_hooks};
use super::init_clients::{self, Client, Edit, Transport};
use super::init_files;
use super::wrap::{wrap_client_hooks, wrap_hooks, wrap_servers, wrap_vscode_agents};
use super::{Args, Change, absolute, config_target, cwd, exe, refuse_exe_in_project, utc_stamp};

pub(super) fn client(args: &Args, client: Client) -> anyhow::Result<ExitCode> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .context("HOME is not set to an absolute path")?;
    let cwd = cwd()?;
    refuse_exe_in_project(&cwd)?;
    // Everything is resolved, checked and merged in memory first: nothing
    // is written unless every file can be.
    let mut starter = None;
    let mut config = absolute(&args.config)?;
    if skarn_sandbox::policy::config_read::is_absent(&config) && args.http.is_none() {
        let t = config_target(&args.config, &cwd)?;
        if args.print {
            eprintln!(
                "skarn: {} does not exist yet (`skarn init` writes it)",
                t.path.display()
            );
        } else {
            config = t.real.clone();
            starter = Some(t);
        }
    }
    let adopt = if starter.is_none() && args.http.is_none() && !args.hook_only && config.is_file() {
        adopt(&config, args)?
    } else {
        None
    };
    if args.user && matches!(client, Client::Codex | Client::Windsurf) {
        eprintln!("skarn: this client has user-level configuration only");
    }
    let transport = match &args.http {
        Some(url) => Transport::Http {
            url: url.clone(),
            token_env: args.token_env.clone(),
        },
        None => Transport::Stdio {
            config: config.clone(),
        },
    };
    // User-level files must stay in the home, project files in the project.
    let base = if args.user || matches!(client, Client::Codex | Client::Windsurf) {
        &home
    } else {
        &cwd
    };
    let edits: Vec<(PathBuf, Edit)> =
        init_clients::plan(client, args.user, &home, &cwd, &exe(), &transport)
            .into_iter()
            .filter(|(_, e)| !(args.no_hook && e.is_hook() || args.hook_only && !e.is_hook()))
            .collect();
    if edits.is_empty() {
        bail!("nothing to do: --hook-only applies to Claude Code only");
    }
    if client == Client::ClaudeCode && edits.iter().any(|(_, e)| e.is_hook()) {
        refuse_disabled_hooks(&cwd, &home)?;
    }
    let mut changes: Vec<Change> = Vec::new();
    for (path, edit) in &edits {
        let target = init_files::resolve(path, base)?;
        let at = changes.iter().position(|c| c.target.real == target.real);
        let old = match at {
            Some(i) => Some(changes[i].new.clone()),
            None => init_files::read(&target)?,
        };
        let new = init_clients::apply(path, old.as_deref(), edit)?;
        match at {
            Some(i) => changes[i].new = new,
            None => changes.push(Change { target, old, new }),
        }
    }
    if !(args.user || matches!(client, Client::Codex | Client::Windsurf)) {
        let agent = clap::ValueEnum::to_possible_value(&client)
            .map(|v| v.get_name().to_string())
            .unwrap_or_default();
        let mut found = Vec::new();
        for c in &changes {
            if let Some(old) = &c.old {
                found.extend(super::super::init_project::findings(
                    &c.target.path,
                    old,
                    &agent,
                ));
            }
        }
        // The other project files the client reads hooks and settings
        // from besides the one `init` edits (attack atk24l F4).
        for (other, as_agent) in also_read(client, &cwd) {
            if !changes.iter().any(|c| c.target.path == other)
                && let Ok(Some(text)) = skarn_sandbox::policy::config::read_text(&other)
            {
                found.extend(super::super::init_project::findings(
                    &other, &text, as_agent,
                ));
            }
        }
        if client == Client::ClaudeCode {
            found.extend(super::wrap::parent_servers(&cwd));
        }
        super::super::init_project::confirm(&found, args.print, args.accept_project_settings)?;
    }
    if client == Client::ClaudeCode {
        wrap_hooks(&mut changes, args.user, &cwd, &home, base)?;
    }
    if client == Client::Vscode && edits.iter().any(|(_, e)| e.is_hook()) {
        wrap_vscode_agents(&mut changes, args.user, &cwd, &home)?;
    }
    if client == Client::GeminiCli && !args.user && edits.iter().any(|(_, e)| e.is_hook()) {
        // A project `.env` Gemini CLI loads into every process it starts,
        // this hook's included (atk24r F6).
        if let Some(why) = super::super::hook::gemini_dotenv::refusal(&cwd) {
            bail!(
                "{why}. `skarn init` does not install the hook while it is there: Gemini CLI \
                 would load those variables into the hook process itself, whose dynamic loader \
                 runs a preloaded library before skarn can refuse anything"
            );
        }
    }
    if matches!(client, Client::Codex | Client::Windsurf) {
        wrap_client_hooks(&mut changes, client, &cwd, &home, args)?;
    }
    wrap_servers(&mut changes, client)?;
    if client == Client::ClaudeCode && edits.iter().any(|(_, e)| e.is_hook()) {
        // The prompt guard in the user's own settings (ADR 0342).
        super::guard::add_guard(&mut changes, &home)?;
    }
    if client == Client::GeminiCli && edits.iter().any(|(_, e)| e.is_hook()) {
        let written: Vec<(PathBuf, String)> = changes
            .iter()
            .map(|c| (c.target.real.clone(), c.new.clone()))
            .collect();
        for l in super::super::gemini_hooks::check_after_init(&cwd, &home, &written)? {
            eprintln!("skarn: warning: {l}");
        }
    }
    if args.print {
        let first = &changes[0];
        eprintln!(
            "skarn: {} would become (nothing written):",
            first.target.path.display()
        );
        for c in &changes[1..] {
            eprintln!(
                "skarn: {} is also changed (see --hook-only)",
                c.target.path.display()
            );
        }
        std::io::stdout().lock().write_all(first.new.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    // A live run's placeholder on any file to write: stop before the first.
    for t in starter.iter().chain(
        changes
            .iter()
            .filter(|c| c.old.as_deref() != Some(c.new.as_str()))
            .map(|c| &c.target),
    ) {
        init_files::refuse_placeholder(t)?;
    }
    let stamp = utc_stamp();
    if let Some(text) = &adopt {
        let store = super::super::trust::record(&config, text)?;
        eprintln!(
            "skarn: trusted this content of {} (recorded in {})",
            config.display(),
            store.display()
        );
    }
    if let Some(t) = &starter {
        init_files::write(t, skarn_gateway::init::STARTER, &stamp)?;
        eprintln!("skarn: wrote {}", t.real.display());
    }
    let mut summary = Vec::new();
    for Change { target, old, new } in &changes {
        let path = &target.path;
        if old.as_deref() == Some(new.as_str()) {
            eprintln!("skarn: {} already set up", path.display());
            summary.push(serde_json::json!({"path": path, "changed": false, "backup": null}));
            continue;
        }
        let backup = init_files::write(target, new, &stamp)?;
        let shown = if target.via_link() {
            format!(
                "{} (the link's target {})",
                path.display(),
                target.real.display()
            )
        } else {
            path.display().to_string()
        };
        match &backup {
            Some(b) => eprintln!("skarn: updated {shown} (backup {})", b.display()),
            None => eprintln!("skarn: created {shown}"),
        }
        summary.push(serde_json::json!({"path": path, "changed": true, "backup": backup}));
    }
    if client == Client::Codex {
        // Codex does not run the hook until the user approves it (F12).
        eprintln!("skarn: {}", super::super::codex_trust::APPROVE);
    }
    let doc = serde_json::json!({
        // The name the user types (`claude-code`), not the Rust variant.
        "client": clap::ValueEnum::to_possible_value(&client).map(|v| v.get_name().to_owned()),
        "config": if args.http.is_none() { Some(&config) } else { None },
        "url": args.http,
        "files": summary,
    });
    // Gemini CLI skips a project's settings, the hook with them, in a
    // folder it does not trust (issue 24 item 3).
    if client == Client::GeminiCli && !args.user && edits.iter().any(|(_, e)| e.is_hook()) {
        eprintln!("{}", super::super::init_gemini_trust::note(&cwd, &home));
    }
    // A `claude --worktree` session reads the committed settings (attack
    // atk24s H1).
    if client == Client::ClaudeCode
        && !args.user
        && edits.iter().any(|(_, e)| e.is_hook())
        && let Some(n) = super::super::doctor_claude::worktree_note(&cwd)
    {
        eprintln!("{n}");
    }
    if let Some(url) = &args.http {
        eprintln!(
            "skarn: the client connects to {url}; start `skarn serve --http ...` with the same \
             token in ${} (the client reads it from its environment)",
            args.token_env
        );
    }
    writeln!(std::io::stdout().lock(), "{doc}")?;
    Ok(ExitCode::SUCCESS)
}
