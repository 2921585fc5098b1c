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

#[derive(Debug, clap::Args)]
#[command(after_help = "\
Without --client: writes skarn.toml and prints the MCP server entry as JSON \
on stdout. With --client: creates skarn.toml if missing, merges skarn into \
the client's file(s) (backup: <file>.skarn-backup-<UTC time>) and prints a \
JSON summary on stdout; --print writes nothing and prints the merged file \
instead. Exit status: 0 done, 2 usage error or a file that cannot be merged.")]
pub struct Args {
    /// The skarn configuration to write, or to point the client at.
    #[arg(long, short = 'c', default_value = "skarn.toml")]
    pub config: PathBuf,

    /// Overwrite an existing skarn.toml (without --client).
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

fn absolute(p: &Path) -> anyhow::Result<PathBuf> {
    if let Ok(a) = std::fs::canonicalize(p) {
        return Ok(a);
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    Ok(skarn_sandbox::config::normalize(&cwd.join(p)))
}

fn starter(args: &Args) -> anyhow::Result<ExitCode> {
    let path = &args.config;
    if path.exists() && !args.force {
        bail!(
            "{} already exists (use --force to overwrite it)",
            path.display()
        );
    }
    std::fs::write(path, skarn_gateway::init::STARTER)
        .with_context(|| format!("cannot write {}", path.display()))?;
    let abs = absolute(path)?;
    eprintln!("skarn: wrote {}", abs.display());
    eprintln!(
        "skarn: the MCP server entry follows on stdout (Claude Code .mcp.json, Cursor \
         .cursor/mcp.json, ...); `skarn init --client NAME` merges it for you"
    );
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{}",
        skarn_gateway::init::client_snippets(&exe(), &abs)
    )?;
    Ok(ExitCode::SUCCESS)
}

fn client(args: &Args, client: Client) -> anyhow::Result<ExitCode> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .context("HOME is not set to an absolute path")?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let config = absolute(&args.config)?;
    if !config.exists() && args.http.is_none() {
        if args.print {
            eprintln!(
                "skarn: {} does not exist yet (`skarn init` writes it)",
                config.display()
            );
        } else {
            std::fs::write(&config, skarn_gateway::init::STARTER)
                .with_context(|| format!("cannot write {}", config.display()))?;
            eprintln!("skarn: wrote {}", config.display());
        }
    }
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
    let edits: Vec<(PathBuf, Edit)> =
        init_clients::plan(client, args.user, &home, &cwd, &exe(), &transport)
            .into_iter()
            .filter(|(_, e)| !(args.no_hook && e.is_hook() || args.hook_only && !e.is_hook()))
            .collect();
    if edits.is_empty() {
        bail!("nothing to do: --hook-only applies to Claude Code only");
    }
    // Merge in memory first: nothing is written unless every file merges.
    let mut results: Vec<(PathBuf, Option<String>, String)> = Vec::new();
    for (path, edit) in &edits {
        let old = match results.iter().find(|(p, _, _)| p == path) {
            Some((_, _, new)) => Some(new.clone()),
            None => read_existing(path)?,
        };
        let new = init_clients::apply(path, old.as_deref(), edit)?;
        match results.iter_mut().find(|(p, _, _)| p == path) {
            Some(r) => r.2 = new,
            None => results.push((path.clone(), old, new)),
        }
    }
    if args.print {
        let (path, _, new) = &results[0];
        eprintln!("skarn: {} would become (nothing written):", path.display());
        for (p, _, _) in &results[1..] {
            eprintln!("skarn: {} is also changed (see --hook-only)", p.display());
        }
        std::io::stdout().lock().write_all(new.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut summary = Vec::new();
    let stamp = utc_stamp();
    for (path, old, new) in &results {
        if old.as_deref() == Some(new.as_str()) {
            eprintln!("skarn: {} already set up", path.display());
            summary.push(serde_json::json!({"path": path, "changed": false, "backup": null}));
            continue;
        }
        let backup = match old {
            Some(_) => Some(backup(path, &stamp)?),
            None => None,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        std::fs::write(path, new).with_context(|| format!("cannot write {}", path.display()))?;
        match &backup {
            Some(b) => eprintln!("skarn: updated {} (backup {})", path.display(), b.display()),
            None => eprintln!("skarn: created {}", path.display()),
        }
        summary.push(serde_json::json!({"path": path, "changed": true, "backup": backup}));
    }
    let doc = serde_json::json!({
        "client": format!("{client:?}"),
        "config": if args.http.is_none() { Some(&config) } else { None },
        "url": args.http,
        "files": summary,
    });
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

fn read_existing(path: &Path) -> anyhow::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Copy `path` to `<path>.skarn-backup-<stamp>` (a free name) and return it.
fn backup(path: &Path, stamp: &str) -> anyhow::Result<PathBuf> {
    let base = format!("{}.skarn-backup-{stamp}", path.display());
    let mut b = PathBuf::from(&base);
    let mut n = 1;
    while b.exists() {
        n += 1;
        b = PathBuf::from(format!("{base}-{n}"));
    }
    std::fs::copy(path, &b).with_context(|| format!("cannot back up {}", path.display()))?;
    Ok(b)
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
