//! `skarn doctor` on Windows: whether the AppContainer backend works on
//! this host, what `skarn run` enforces here (the report of a typical
//! project), what Code Mode isolation resolves to, and the configured
//! servers' health. Escape self-tests are not available on Windows yet.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::bail;
use serde::Serialize;
use skarn_sandbox::Policy;
use skarn_sandbox::report::ReportFormat;
use skarn_sandbox::windows::{WindowsHostFacts, plan};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the findings as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Really attempt escapes through the sandbox (not available on Windows yet).
    #[arg(long)]
    pub self_test: bool,
    /// Gateway configuration whose MCP servers to start and report on
    /// (skipped when the default file does not exist).
    #[arg(long, short = 'c', env = "SKARN_CONFIG", default_value = "skarn.toml")]
    pub config: PathBuf,
}

#[derive(Debug, Serialize)]
struct Check {
    name: String,
    ok: bool,
    detail: String,
}

#[derive(Debug, Serialize)]
struct Findings {
    backend: &'static str,
    checks: Vec<Check>,
    report: skarn_sandbox::RestrictionReport,
    code_mode: skarn_worker::DoctorSummary,
    servers: Option<Vec<skarn_gateway::ServerHealth>>,
}

fn server_health(args: &Args) -> anyhow::Result<Option<Vec<skarn_gateway::ServerHealth>>> {
    let explicit = args.config != Path::new("skarn.toml");
    if !explicit && skarn_sandbox::policy::config_read::is_absent(&args.config) {
        return Ok(None);
    }
    if skarn_sandbox::policy::config_read::is_absent(&args.config) {
        bail!("{}: no such configuration file", args.config.display());
    }
    Ok(Some(skarn_gateway::health_report_checked(&args.config)?))
}

/// What Code Mode does on Windows.
const CODE_MODE: &str = "in-process isolate only: a process cannot move itself into an \
                         AppContainer, so isolation = auto runs scripts in-process and \
                         isolation = worker is refused";

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.self_test {
        bail!(
            "skarn doctor --self-test is not available on Windows yet (the Windows escape \
             tests are the test suite's windows_run tests)"
        );
    }
    let checks: Vec<Check> = skarn_sandbox::windows::doctor_checks()
        .into_iter()
        .map(|(name, r)| Check {
            name,
            ok: r.is_ok(),
            detail: r.unwrap_or_else(|e| e),
        })
        .collect();
    let ws = std::env::temp_dir().join("skarn-doctor-project");
    let policy = Policy::new(&ws);
    let facts = WindowsHostFacts::probe(&policy);
    let p = plan(&policy, &facts, &["cmd".into()], &[], ReportFormat::None)?;
    let f = Findings {
        backend: "appcontainer",
        checks,
        report: p.report,
        code_mode: skarn_worker::doctor_summary(),
        servers: server_health(&args)?,
    };
    let ok = f.checks.iter().all(|c| c.ok);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&f)?);
    } else {
        println!("skarn doctor: backend appcontainer (Windows)");
        for c in &f.checks {
            let mark = if c.ok { "ok    " } else { "FAILED" };
            println!("  {mark} {}: {}", c.name, c.detail);
        }
        println!("What skarn run enforces for a project in {}:", ws.display());
        print!("{}", f.report.render_text());
        println!("Code Mode on Windows: {CODE_MODE}");
        print!("{}", f.code_mode.to_text());
        super::doctor_servers::print(&args.config, f.servers.as_deref());
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
