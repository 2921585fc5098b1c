//! `skarn init`: write a commented starter skarn.toml and print the MCP
//! client snippets for Claude Code and Cursor.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where to write the starter configuration.
    #[arg(long, short = 'c', default_value = "skarn.toml")]
    pub config: PathBuf,

    /// Overwrite an existing file.
    #[arg(long)]
    pub force: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let path = &args.config;
    if path.exists() && !args.force {
        bail!(
            "{} already exists (use --force to overwrite it)",
            path.display()
        );
    }
    std::fs::write(path, skarn_gateway::init::STARTER)
        .with_context(|| format!("cannot write {}", path.display()))?;
    let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
    let exe = std::env::current_exe()
        .ok()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "skarn".into());
    eprintln!("skarn: wrote {}", abs.display());
    let mut out = std::io::stdout().lock();
    write!(out, "{}", skarn_gateway::init::client_snippets(&exe, &abs))?;
    Ok(ExitCode::SUCCESS)
}
