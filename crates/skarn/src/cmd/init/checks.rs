//! What `init` checks before adopting a project: the other files the
//! client reads, a switch that turns hooks off, an untrusted skarn.toml.

use std::path::{Path, PathBuf};

use anyhow::bail;

use super::Args;
use super::init_clients::Client;

/// The project files `client` reads hooks and settings from besides the
/// one `init` writes, each with the agent whose installed skarn hook is
/// not a finding there: Claude Code's `settings.local.json`; VS Code's
/// every `.github/hooks/*.json` and Claude Code's settings files, which
/// it collects hooks from too.
pub(super) fn also_read(client: Client, cwd: &Path) -> Vec<(PathBuf, &'static str)> {
    let claude = [
        cwd.join(".claude/settings.json"),
        cwd.join(".claude/settings.local.json"),
    ];
    match client {
        Client::ClaudeCode => vec![(claude[1].clone(), "claude-code")],
        Client::Vscode => {
            let mut v: Vec<(PathBuf, &'static str)> = Vec::new();
            if let Ok(rd) = std::fs::read_dir(cwd.join(".github/hooks")) {
                let mut files: Vec<PathBuf> = rd
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "json"))
                    .take(256)
                    .collect();
                files.sort();
                v.extend(files.into_iter().map(|p| (p, "vscode")));
            }
            v.extend(claude.into_iter().map(|p| (p, "claude-code")));
            v
        }
        _ => Vec::new(),
    }
}

/// Claude Code runs no hook at all when a settings file it reads says
/// `"disableAllHooks": true` (a cloned repository's `.claude/settings.json`
/// or `settings.local.json` may): the installed hook would then never
/// run, and every command would run unconfined. Refuse, naming the file.
pub(super) fn refuse_disabled_hooks(cwd: &Path, home: &Path) -> anyhow::Result<()> {
    for f in [
        cwd.join(".claude/settings.json"),
        cwd.join(".claude/settings.local.json"),
        home.join(".claude/settings.json"),
    ] {
        // Absent (or a live run's placeholder): nothing to refuse; an
        // unreadable file is an error (it may say exactly that).
        let Some(text) = skarn_sandbox::policy::config_read::read_text(&f)
            .map_err(|e| anyhow::anyhow!("{}", super::super::trust::one_line(&e.to_string())))?
        else {
            continue;
        };
        let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        if v.get("disableAllHooks")
            .and_then(serde_json::Value::as_bool)
            == Some(true)
        {
            bail!(
                "{} sets \"disableAllHooks\": true, so Claude Code would never run the skarn \
                 hook and its commands would run unconfined; remove that setting (check who \
                 put it there) and run `skarn init` again",
                f.display()
            );
        }
    }
    Ok(())
}

/// An existing configuration the client is about to be pointed at: show
/// what it would run and widen; refuse it unless it is trusted already or
/// `--trust-config` is given (then its text is returned, to be recorded
/// once everything else is written).
pub(super) fn adopt(config: &Path, args: &Args) -> anyhow::Result<Option<String>> {
    let text = super::super::trust::read_config(config)?;
    if super::super::trust::trusted(config, &text) {
        return Ok(None);
    }
    let lines = super::super::trust::widening(config, &text)?;
    if lines.is_empty() {
        return Ok(None);
    }
    let shown = super::super::trust::shown(config);
    eprintln!("skarn: {shown} (not written by this init, not trusted) would be adopted, and it:");
    for l in &lines {
        eprintln!("  {}", super::super::trust::one_line(l));
    }
    if args.print {
        return Ok(None);
    }
    if !args.trust_config {
        bail!(
            "{shown} is not trusted: check it, then re-run with --trust-config (or run `skarn \
             trust {shown}`); until then `skarn serve` runs its servers only under the default \
             sandbox and `skarn run` ignores its widening [run] settings"
        );
    }
    Ok(Some(text))
}
