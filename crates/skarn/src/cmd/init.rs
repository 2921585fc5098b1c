//! `skarn init`: write a commented starter skarn.toml; with `--client NAME`
//! also merge skarn into that AI client's configuration (MCP server entry,
//! and for Claude Code the Bash hook), keeping a backup of each file.
//!
//! Structured output (the JSON snippet, the merged file with `--print`, or a
//! JSON summary of what was written) goes to stdout; prose goes to stderr.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};

use super::init_clients::{self, Client, Edit, Transport};
use super::init_files;

#[derive(Debug, clap::Args)]
#[command(after_help = "\
Without --client: writes skarn.toml and prints the MCP server entry as JSON \
on stdout (--force replaces an existing one, keeping a backup). With \
--client: creates skarn.toml if missing, merges skarn into the client's \
file(s) and prints a JSON summary on stdout; --print writes nothing and \
prints the merged file instead. Every file is checked and merged before \
any is written. Files are replaced through a temporary file renamed over \
them; an existing file is first copied to <file>.skarn-backup-<UTC time> \
next to it.

Symbolic links: project files (and skarn.toml in the project) may be links \
only to files inside the project; user-level files (--user, Codex, \
Windsurf) only to files inside your home (e.g. a dotfiles checkout there); \
a --config outside the project only to a file in its own directory. A link \
leading elsewhere, or to nothing, is refused with an error naming it and \
its target; the real file is the one changed and backed up.

While a `skarn run` is alive here, the names it reserves (its empty \
placeholders: skarn.toml, .mcp.json, .claude, ...) read as absent, and init \
refuses to write over one: run it again once that run has ended.

Exit status: 0 done, 2 usage error, a refused link, a file that cannot \
be merged, or a live run's placeholder in the way (then nothing is \
written).")]
pub struct Args {
    /// The skarn configuration to write, or to point the client at.
    #[arg(long, short = 'c', default_value = "skarn.toml")]
    pub config: PathBuf,

    /// Replace an existing skarn.toml, keeping a backup (without --client).
    #[arg(long)]
    pub force: bool,

    /// Set up this AI client.
    #[arg(long, value_enum, value_name = "NAME")]
    pub client: Option<Client>,

    /// Use the client's user-level files instead of the project's
    /// (Codex and Windsurf have user-level files only).
    #[arg(long, requires = "client")]
    pub user: bool,

    /// Write nothing: print the merged file on stdout (for Claude Code the
    /// MCP file, or the settings file with --hook-only).
    #[arg(long, requires = "client")]
    pub print: bool,

    /// Claude Code: do not add the Bash hook.
    #[arg(long, requires = "client", conflicts_with = "hook_only")]
    pub no_hook: bool,

    /// Claude Code: only add the Bash hook.
    #[arg(long, requires = "client")]
    pub hook_only: bool,

    /// Adopt an existing skarn.toml that widens the sandbox or starts
    /// servers (shown on stderr): records that its exact content is
    /// trusted, as `skarn trust` does. Without it, `init` refuses such a
    /// file it did not write.
    #[arg(long, requires = "client")]
    pub trust_config: bool,

    /// Merge into project files whose own entries run or allow things
    /// beside skarn (hooks, permission allow-rules, env overrides such as
    /// HOME, enableAllProjectMcpServers, disableAllHooks, other MCP
    /// servers: shown on stderr). Without it, `init` refuses such files.
    #[arg(long, requires = "client")]
    pub accept_project_settings: bool,

    /// Point the client at a running `skarn serve --http` instead of
    /// starting skarn itself: a URL (http://127.0.0.1:8931/mcp), HOST:PORT or
    /// PORT. The bearer token is read from --token-env by the client, never
    /// written to its file.
    #[arg(long, value_name = "URL", value_parser = init_clients::http_url)]
    pub http: Option<String>,

    /// Environment variable the client reads the HTTP bearer token from.
    #[arg(
        long,
        value_name = "VAR",
        default_value = "SKARN_HTTP_TOKEN",
        requires = "http"
    )]
    pub token_env: String,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.client {
        None => starter(&args),
        Some(c) => client(&args, c),
    }
}

fn exe() -> String {
    std::env::current_exe()
        .ok()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "skarn".into())
}

/// Refuse a skarn program that lies in the project (`target/debug/skarn`
/// of a source checkout, `./bin/skarn`): the agent's sandboxed commands
/// may write the project, and the hook and the MCP entry run the program
/// by that path, unconfined. (`skarn run` keeps the program itself
/// read-only, but a directory above it can be renamed and refilled.)
fn refuse_exe_in_project(cwd: &Path) -> anyhow::Result<()> {
    let Some(exe) = std::env::current_exe()
        .ok()
        .and_then(|e| std::fs::canonicalize(e).ok())
    else {
        return Ok(());
    };
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let project = cwd
        .ancestors()
        .find(|a| a.join(".git").exists())
        .unwrap_or(&cwd);
    if exe.starts_with(project) {
        bail!(
            "the skarn program {} lies in the project {}: the agent's sandboxed commands can \
             write there, and the installed hook would run whatever they leave at that path, \
             unconfined. Install skarn outside the project (e.g. `cargo install --path \
             crates/skarn`) and run `init` with that program",
            exe.display(),
            project.display()
        );
    }
    Ok(())
}

fn absolute(p: &Path) -> anyhow::Result<PathBuf> {
    if let Ok(a) = std::fs::canonicalize(p) {
        return Ok(a);
    }
    Ok(lexical(p, &cwd()?))
}

fn cwd() -> anyhow::Result<PathBuf> {
    std::env::current_dir().context("cannot read the current directory")
}

/// `p` made absolute against `cwd`, `.` and `..` removed, no link resolved.
fn lexical(p: &Path, cwd: &Path) -> PathBuf {
    skarn_sandbox::policy::config::normalize(&cwd.join(p))
}

/// The skarn configuration as a file `init` may write: it must stay in the
/// project when it is named inside it, else in its own directory.
fn config_target(config: &Path, cwd: &Path) -> anyhow::Result<init_files::Target> {
    let path = lexical(config, cwd);
    let base = if path.starts_with(cwd) {
        cwd.to_path_buf()
    } else {
        path.parent().unwrap_or(cwd).to_path_buf()
    };
    init_files::resolve(&path, &base)
}

fn starter(args: &Args) -> anyhow::Result<ExitCode> {
    let target = config_target(&args.config, &cwd()?)?;
    if !skarn_sandbox::policy::config_read::is_absent(&target.real) && !args.force {
        bail!(
            "{} already exists (use --force to overwrite it; a backup is kept)",
            target.path.display()
        );
    }
    let backup = init_files::write(&target, skarn_gateway::init::STARTER, &utc_stamp())?;
    let abs = &target.real;
    match backup {
        Some(b) => eprintln!("skarn: wrote {} (backup {})", abs.display(), b.display()),
        None => eprintln!("skarn: wrote {}", abs.display()),
    }
    eprintln!(
        "skarn: the MCP server entry follows on stdout (Claude Code .mcp.json, Cursor \
         .cursor/mcp.json, ...); `skarn init --client NAME` merges it for you"
    );
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", skarn_gateway::init::client_snippets(&exe(), abs))?;
    Ok(ExitCode::SUCCESS)
}

/// One file to write: where, what was there, what goes there.
struct Change {
    target: init_files::Target,
    old: Option<String>,
    new: String,
}

fn client(args: &Args, client: Client) -> anyhow::Result<ExitCode> {
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
                found.extend(super::init_project::findings(&c.target.path, old, &agent));
            }
        }
        // The other project files the client reads hooks and settings
        // from besides the one `init` edits (attack atk24l F4).
        for (other, as_agent) in also_read(client, &cwd) {
            if !changes.iter().any(|c| c.target.path == other)
                && let Ok(Some(text)) = skarn_sandbox::policy::config::read_text(&other)
            {
                found.extend(super::init_project::findings(&other, &text, as_agent));
            }
        }
        super::init_project::confirm(&found, args.print, args.accept_project_settings)?;
    }
    if client == Client::ClaudeCode {
        wrap_hooks(&mut changes, args.user, &cwd, &home, base)?;
    }
    if matches!(client, Client::Codex | Client::Windsurf) {
        wrap_client_hooks(&mut changes, client, &cwd, &home, args)?;
    }
    // The other MCP servers of the files merged into run inside `skarn
    // run` (ADR 0273).
    {
        let exe = exe();
        let trusted = super::hook::trusted_hooks();
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
                _ if json_servers => match super::mcp_wrap::wrap_json(&c.new, &exe, &trusted) {
                    Some((new, said)) => {
                        c.new = new;
                        said
                    }
                    None => Vec::new(),
                },
                Some("config.toml") if client == Client::Codex => {
                    let (new, said) = super::mcp_wrap::wrap_toml(&c.new, &exe, &trusted)?;
                    c.new = new;
                    said
                }
                _ => Vec::new(),
            };
            super::mcp_wrap::say(&c.target.path, &said);
        }
    }
    if client == Client::GeminiCli && edits.iter().any(|(_, e)| e.is_hook()) {
        let written: Vec<(PathBuf, String)> = changes
            .iter()
            .map(|c| (c.target.real.clone(), c.new.clone()))
            .collect();
        for l in super::gemini_hooks::check_after_init(&cwd, &home, &written)? {
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
        let store = super::trust::record(&config, text)?;
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
        eprintln!("skarn: {}", super::codex_trust::APPROVE);
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
        eprintln!("{}", super::init_gemini_trust::note(&cwd, &home));
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

/// Claude Code's other hooks and status line, in the settings files
/// merged into, the project's local settings and the skills' and
/// subagents' frontmatter, are wrapped to run inside `skarn run` (ADR 0255).
fn wrap_hooks(
    changes: &mut Vec<Change>,
    user: bool,
    cwd: &Path,
    home: &Path,
    base: &Path,
) -> anyhow::Result<()> {
    let exe = exe();
    let trusted = super::hook::trusted_hooks();
    let settings = |p: &Path| {
        p.file_name()
            .is_some_and(|n| n == "settings.json" || n == "settings.local.json")
    };
    for c in changes.iter_mut().filter(|c| settings(&c.target.path)) {
        let said = super::init_hooks::wrap_json(&mut c.new, &exe, &trusted)?;
        super::init_hooks::say(&c.target.path, &said);
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
        let said = super::init_hooks::wrap_json(&mut new, &exe, &trusted)?;
        if !said.is_empty() {
            super::init_hooks::say(&f, &said);
            changes.push(Change {
                target,
                old: Some(old),
                new,
            });
        }
    }
    // The project's skills, subagents and commands, the nested
    // directories' too (atk24m F7; ADR 0288).
    let files = if user {
        super::hook::confine_hooks::claude_dir(Some(home))
            .map(|d| super::hook::frontmatter_hooks::files(&d))
            .unwrap_or_default()
    } else {
        super::hook::claude_dirs::project_files(cwd)
            .into_iter()
            .filter(|f| !f.is_dir())
            .collect()
    };
    for (f, new, said) in super::init_hooks::wrap_frontmatter(files, &exe, &trusted)? {
        let target = init_files::resolve(&f, base)?;
        let old = init_files::read(&target)?;
        super::init_hooks::say(&f, &said);
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
fn wrap_client_hooks(
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
    let trusted = super::hook::trusted_hooks();
    let files = super::init_hooks::client_files(agent, cwd, home);
    // What a cloned repository's files make the client do (atk24l).
    let mut found = Vec::new();
    for f in files.iter().filter(|f| f.starts_with(cwd) && cwd != home) {
        let Ok(Some(text)) = skarn_sandbox::policy::config::read_text(f) else {
            continue;
        };
        if f.extension().is_some_and(|e| e == "toml") {
            found.extend(super::hook::client_hooks::codex_project_findings(
                f, &text, &exe, &trusted,
            ));
        } else {
            found.extend(super::init_project::findings(f, &text, agent));
        }
    }
    super::init_project::confirm(&found, args.print, args.accept_project_settings)?;
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
        let (new, said) = super::init_hooks::wrap_client_file(f, &text, agent, &exe, &trusted)?;
        if said.is_empty() {
            continue;
        }
        any = true;
        let hooks: Vec<String> = said
            .iter()
            .filter(|s| !s.starts_with("MCP server "))
            .cloned()
            .collect();
        super::init_hooks::say(f, &hooks);
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
        let all = super::hook::client_hooks::files(agent, cwd, Some(home));
        super::init_hooks::refuse_codex_hooks_off(&all, &written)?;
    }
    super::init_hooks::say_codex_approval(agent, any);
    Ok(())
}

/// The project files `client` reads hooks and settings from besides the
/// one `init` writes, each with the agent whose installed skarn hook is
/// not a finding there: Claude Code's `settings.local.json`; VS Code's
/// every `.github/hooks/*.json` and Claude Code's settings files, which
/// it collects hooks from too.
fn also_read(client: Client, cwd: &Path) -> Vec<(PathBuf, &'static str)> {
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
fn refuse_disabled_hooks(cwd: &Path, home: &Path) -> anyhow::Result<()> {
    for f in [
        cwd.join(".claude/settings.json"),
        cwd.join(".claude/settings.local.json"),
        home.join(".claude/settings.json"),
    ] {
        // Absent (or a live run's placeholder): nothing to refuse; an
        // unreadable file is an error (it may say exactly that).
        let Some(text) = skarn_sandbox::policy::config_read::read_text(&f)
            .map_err(|e| anyhow::anyhow!("{}", super::trust::one_line(&e.to_string())))?
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
fn adopt(config: &Path, args: &Args) -> anyhow::Result<Option<String>> {
    let text = super::trust::read_config(config)?;
    if super::trust::trusted(config, &text) {
        return Ok(None);
    }
    let lines = super::trust::widening(config, &text)?;
    if lines.is_empty() {
        return Ok(None);
    }
    let shown = super::trust::shown(config);
    eprintln!("skarn: {shown} (not written by this init, not trusted) would be adopted, and it:");
    for l in &lines {
        eprintln!("  {}", super::trust::one_line(l));
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

/// The current UTC time as `YYYYMMDDTHHMMSSZ`.
fn utc_stamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}
