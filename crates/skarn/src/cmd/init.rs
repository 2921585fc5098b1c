//! `skarn init`: write a commented starter skarn.toml; with `--client NAME`
//! also merge skarn into that AI client's configuration (MCP server entry,
//! and for Claude Code the Bash hook), keeping a backup of each file.
//!
//! Structured output (the JSON snippet, the merged file with `--print`, or a
//! JSON summary of what was written) goes to stdout; prose goes to stderr.

//!
//! The `--client` set-up is in `client`, the wrapping of the client's
//! other hooks and servers in `wrap`, the checks of what is adopted in
//! `checks`.

mod checks;
mod client;
mod guard;
mod wrap;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};

use super::init_clients::{self, Client};
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
        Some(c) => {
            judge_trusted();
            client::client(&args, c)
        }
    }
}

/// Say which of the user's trusted lines are not trusted (they run the
/// project's own code) and which run a program whose inputs skarn does
/// not know (atk24t F3, ADR 0328).
fn judge_trusted() {
    use skarn_sandbox::protect::trusted_lines;
    let Ok(here) = std::env::current_dir() else {
        return;
    };
    for l in trusted_lines::user_lines() {
        let j = trusted_lines::judge(&l, &here);
        if let Some(why) = j.refused {
            eprintln!(
                "skarn: [hook] trusted_hooks {l:?} is NOT trusted: {why}; the entry running it \
                 is wrapped in `skarn run` or refused like any unconfined one"
            );
        } else if !j.unknown.is_empty() {
            eprintln!(
                "skarn: warning: [hook] trusted_hooks {l:?} runs {} unconfined, and skarn does \
                 not know which project files it reads: a confined command may change what it \
                 runs",
                j.unknown.join(", ")
            );
        }
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
