//! Top-level command line: one subcommand per job, each defined in `cmd/`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::cmd;

/// Exit code for a usage, configuration or set-up error.
pub const EXIT_USAGE: u8 = 2;

#[derive(Debug, Parser)]
#[command(name = "skarn", version, about, propagate_version = true)]
pub struct Cli {
    /// Log filter for diagnostics on stderr (e.g. "info", "skarn=debug").
    #[arg(long, global = true, env = "SKARN_LOG", default_value = "warn")]
    pub log: String,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a command inside the kernel-enforced sandbox.
    Run(cmd::run::Args),
    /// Report what this host enforces (and optionally try real escapes).
    Doctor(cmd::doctor::Args),
    /// Run a Code Mode script (JS/TS) in the hermetic isolate.
    Exec(cmd::exec::Args),
    /// Serve the MCP gateway (stdio, or Streamable HTTP with --http).
    Serve(cmd::serve::Args),
    /// Write a starter skarn.toml, or set up an AI client (--client).
    Init(cmd::init::Args),
    /// Pre-tool-use hook for AI agents: run their shell commands under skarn run.
    Hook(cmd::hook::Args),
    /// Trust a workspace skarn.toml's exact content, so it may widen the sandbox.
    Trust(cmd::trust::Args),
    /// Compress captured command output for an agent, losing no diagnostic.
    Compress(cmd::compress::Args),
    /// Print the full raw output saved under a compression handle.
    Recall(cmd::recall::Args),
    /// Inspect and clear the workspaces' stores of fetched packages.
    #[cfg(target_os = "linux")]
    Cache(cmd::cache::Args),
    /// Clear a secret recorded as exposed (a sandboxed command probed for its value).
    #[cfg(target_os = "linux")]
    Secrets(cmd::secrets::Args),
    /// Print a shell completion script.
    Completions(cmd::completions::Args),
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(&cli.log);
    let failed = match &cli.command {
        Command::Run(a) => a.own_failure_exit,
        _ => None,
    }
    .unwrap_or(EXIT_USAGE);
    let result = match cli.command {
        Command::Run(a) => cmd::run::run(a),
        Command::Doctor(a) => cmd::doctor::run(a),
        Command::Exec(a) => cmd::exec::run(a),
        Command::Serve(a) => cmd::serve::run(a),
        Command::Init(a) => cmd::init::run(a),
        Command::Hook(a) => cmd::hook::run(a),
        Command::Trust(a) => cmd::trust::run(a),
        Command::Compress(a) => cmd::compress::run(a),
        Command::Recall(a) => cmd::recall::run(a),
        #[cfg(target_os = "linux")]
        Command::Cache(a) => cmd::cache::run(a),
        #[cfg(target_os = "linux")]
        Command::Secrets(a) => cmd::secrets::run(a),
        Command::Completions(a) => cmd::completions::run(a),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "skarn: error: {}",
                skarn_sandbox::protect::terminal_filter::one_line(&cmd::run::for_reader(&format!(
                    "{err:#}"
                )))
            );
            ExitCode::from(failed)
        }
    }
}

fn init_logging(filter: &str) {
    let filter = tracing_subscriber::EnvFilter::try_new(filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        // A log line that cannot be written (the client closed our stderr)
        // is dropped: tracing's own report of that would panic in
        // `eprintln!` and take `skarn serve` down with every session.
        .log_internal_errors(false)
        .try_init();
}
