//! `skarn doctor` off Linux. On macOS: what the Seatbelt backend enforces
//! ([`skarn_sandbox::macos::doctor`]). On systems without a sandbox backend
//! in this build (Windows, until its backend is wired in): it says plainly that `skarn run` enforces nothing here and refuses
//! to run, then what Code Mode isolation resolves to and the configured
//! servers' health. `--self-test` has nothing to attempt and fails.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[cfg(not(target_os = "macos"))]
use serde::Serialize;

#[cfg(not(target_os = "macos"))]
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

#[cfg(not(target_os = "macos"))]
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
    if !explicit && skarn_sandbox::policy::config_read::is_absent(&args.config) {
        return Ok(None);
    }
    if skarn_sandbox::policy::config_read::is_absent(&args.config) {
        anyhow::bail!("{}: no such configuration file", args.config.display());
    }
    Ok(Some(skarn_gateway::health_report_checked(&args.config)?))
}

/// `skarn doctor` on macOS: what Seatbelt enforces, the Code Mode
/// worker's confinement and the servers' health. The escape self-test is
/// Linux's for now (the macOS escape tests are `tests/it/macos_run.rs`).
#[cfg(target_os = "macos")]
fn run_macos(args: &Args) -> anyhow::Result<ExitCode> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let d = skarn_sandbox::macos::doctor::doctor(
        Path::new(skarn_sandbox::macos::SANDBOX_EXEC).exists(),
        home.as_deref(),
        &std::env::temp_dir(),
    );
    let code_mode = skarn_worker::doctor_summary();
    let servers = server_health(args)?;
    if args.json {
        let v = serde_json::json!({ "findings": d, "code_mode": code_mode, "servers": servers });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}{}", d.to_text(), code_mode.to_text());
        super::doctor_servers::print(&args.config, servers.as_deref());
    }
    if args.self_test {
        eprintln!(
            "skarn: doctor --self-test is not implemented on macOS yet; the escape tests are \
             crates/skarn/tests/it/macos_run.rs"
        );
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    #[cfg(target_os = "macos")]
    return run_macos(&args);
    #[cfg(not(target_os = "macos"))]
    run_no_backend(args)
}

#[cfg(not(target_os = "macos"))]
fn run_no_backend(args: Args) -> anyhow::Result<ExitCode> {
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
    super::doctor_servers::print(&args.config, f.servers.as_deref());
    Ok(ExitCode::SUCCESS)
}
