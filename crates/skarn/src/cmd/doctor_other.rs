//! `skarn doctor` on systems without a sandbox backend in this build
//! (everything but Linux, until the macOS and Windows backends are wired
//! in): it says plainly that `skarn run` enforces nothing here and refuses
//! to run, then what Code Mode isolation resolves to and the configured
//! servers' health. `--self-test` has nothing to attempt and fails.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde::Serialize;

use super::run_backend::NO_BACKEND;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the findings as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Really attempt escapes through the sandbox and report blocked/ESCAPED
    /// for each; exits 1 if anything escaped.
    #[arg(long)]
    pub self_test: bool,
    /// Gateway configuration whose MCP servers to start and report on
    /// (skipped when the default file does not exist).
    #[arg(long, short = 'c', env = "SKARN_CONFIG", default_value = "skarn.toml")]
    pub config: PathBuf,
}

#[derive(Debug, Serialize)]
struct Findings {
    /// No backend: `skarn run` refuses to run anything.
    backend: Option<&'static str>,
    os: &'static str,
    arch: &'static str,
    status: skarn_sandbox::Status,
    reason: &'static str,
    code_mode: skarn_worker::DoctorSummary,
    servers: Option<Vec<skarn_gateway::ServerHealth>>,
}

fn server_health(args: &Args) -> anyhow::Result<Option<Vec<skarn_gateway::ServerHealth>>> {
    let explicit = args.config != Path::new("skarn.toml");
    if !explicit && !args.config.exists() {
        return Ok(None);
    }
    if !args.config.exists() {
        anyhow::bail!("{}: no such configuration file", args.config.display());
    }
    Ok(Some(skarn_gateway::health_report(&args.config)?))
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.self_test {
        anyhow::bail!("--self-test: {NO_BACKEND}: there is no sandbox to attempt escapes from");
    }
    let f = Findings {
        backend: None,
        os: std::env::consts::OS,
        arch: std::env::consts::ARCH,
        status: skarn_sandbox::Status::NotEnforced,
        reason: NO_BACKEND,
        code_mode: skarn_worker::doctor_summary(),
        servers: server_health(&args)?,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&f)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("backend: none ({} {})", f.os, f.arch);
    println!("status of the default policy: {:?}", f.status);
    println!("{NO_BACKEND}: `skarn run` refuses to run commands here");
    print!("{}", f.code_mode.to_text());
    match &f.servers {
        None => println!(
            "mcp servers: none configured ({} not found)",
            args.config.display()
        ),
        Some(list) => {
            println!("mcp servers ({}):", args.config.display());
            for h in list {
                let cause = h
                    .cause
                    .as_deref()
                    .map(|c| format!(": {c}"))
                    .unwrap_or_default();
                println!(
                    "  {:<20} {:<6} {:<9} {} tools{cause}",
                    h.name, h.transport, h.status, h.tools
                );
                if !h.sandbox.is_empty() {
                    println!("  {:<20} {}", "", h.sandbox);
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
