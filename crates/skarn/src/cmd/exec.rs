//! `skarn exec`: run one Code Mode script from the command line.
//!
//! Prints the returned value as JSON on stdout and the `skarn.log` lines on
//! stderr (or, with `--json`, one JSON object on stdout). Exit codes:
//! 0 success, 1 the script threw, 2 usage error, 3 script rejected (syntax
//! or validator: it never ran), 4 a limit was hit, 5 internal engine error.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use skarn_codemode::{ErrorKind, ExecOutcome, Limits, ToolBridge, bridge::NoServers};
use skarn_worker::Isolation;

/// Exit code: the script threw (runtime error, unconvertible return value).
pub const EXIT_SCRIPT_ERROR: u8 = 1;
/// Exit code: the script was rejected before running (syntax or validator).
pub const EXIT_REJECTED: u8 = 3;
/// Exit code: a limit was hit (memory, stack, deadline, tool calls, output).
pub const EXIT_LIMIT: u8 = 4;
/// Exit code: the engine itself failed.
pub const EXIT_INTERNAL: u8 = 5;

#[derive(Debug, clap::Args)]
#[command(after_help = "\
Exit codes: 0 success, 1 the script threw, 2 usage error, 3 script rejected \
(syntax or validator; it never ran), 4 a limit was hit (memory, stack, \
deadline, tool calls, output), 5 internal engine error.")]
pub struct Args {
    /// The script (JavaScript or TypeScript; the body of an async function).
    /// One of --code or --file is required.
    #[arg(long, conflicts_with = "file")]
    pub code: Option<String>,

    /// Read the script from a file ("-" for standard input).
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,

    /// Wall-clock deadline, e.g. "30s", "500ms", "2m" (a bare number is
    /// seconds) [default: 30s, or the configuration's gateway.limits].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<Duration>,

    /// Heap limit of the isolate, e.g. "64M", "512K", "1G" (a bare number is
    /// MiB) [default: 64M, or the configuration's gateway.limits].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub memory: Option<usize>,

    /// Native stack limit of the isolate, e.g. "1M", "256K" (a bare number is
    /// MiB) [default: 1M, or the configuration's gateway.limits].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub stack: Option<usize>,

    /// Maximum number of host calls (tool calls, listTools, readResource)
    /// [default: 256, or the configuration's gateway.limits].
    #[arg(long, value_name = "N")]
    pub max_tool_calls: Option<u32>,

    /// Maximum size of the returned value as JSON, e.g. "1M", "200K" (a bare
    /// number is MiB) [default: 1M, or the configuration's gateway.limits].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_output: Option<usize>,

    /// Maximum number of log lines kept (the rest are counted in a marker
    /// line) [default: 1000, or the configuration's gateway.limits].
    #[arg(long, value_name = "N")]
    pub max_log_lines: Option<usize>,

    /// Maximum total size of log lines kept, e.g. "256K" (a bare number is
    /// bytes here: the flag's name says so) [default: 256K, or the
    /// configuration's gateway.limits].
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub max_log_bytes: Option<usize>,

    /// Gateway configuration (skarn.toml) whose MCP servers the script's
    /// tool calls reach. Without it there are no servers.
    #[arg(long, short = 'c', value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Where the script runs: auto (without --config: this process, after it
    /// confines itself as a worker does; with servers: a confined worker
    /// process; where the OS sandbox is unavailable: in this process), worker (an error where
    /// unavailable) or in_process [default: auto, or the configuration's
    /// gateway.isolation].
    #[arg(long, value_name = "MODE", value_parser = parse_isolation)]
    pub isolation: Option<Isolation>,

    /// Print one JSON object {ok, value, error, logs, tool_calls, elapsed_ms,
    /// isolation} on stdout.
    #[arg(long)]
    pub json: bool,
}

fn parse_isolation(s: &str) -> Result<Isolation, String> {
    s.parse::<Isolation>().map_err(|e| e.to_string())
}

impl Args {
    /// The flags given, over `base` (the configuration's limits or the
    /// defaults).
    fn limits(&self, base: Limits) -> Limits {
        Limits {
            memory_bytes: self.memory.unwrap_or(base.memory_bytes),
            stack_bytes: self.stack.unwrap_or(base.stack_bytes),
            deadline: self.timeout.unwrap_or(base.deadline),
            max_tool_calls: self.max_tool_calls.unwrap_or(base.max_tool_calls),
            max_output_bytes: self.max_output.unwrap_or(base.max_output_bytes),
            max_log_lines: self.max_log_lines.unwrap_or(base.max_log_lines),
            max_log_bytes: self.max_log_bytes.unwrap_or(base.max_log_bytes),
        }
    }

    fn script(&self) -> anyhow::Result<String> {
        if let Some(code) = &self.code {
            return Ok(code.clone());
        }
        let Some(path) = &self.file else {
            bail!(
                "no script: give it with --code CODE, --file FILE or --file - (standard input); \
                 see skarn exec --help"
            );
        };
        let mut bytes = Vec::new();
        if path.as_os_str() == "-" {
            std::io::stdin()
                .take(skarn_codemode::MAX_SCRIPT_BYTES as u64 + 1)
                .read_to_end(&mut bytes)
                .context("cannot read the script from standard input")?;
        } else {
            std::fs::File::open(path)
                .and_then(|f| {
                    f.take(skarn_codemode::MAX_SCRIPT_BYTES as u64 + 1)
                        .read_to_end(&mut bytes)
                })
                .with_context(|| format!("cannot read {}", path.display()))?;
        }
        String::from_utf8(bytes).context("the script is not valid UTF-8")
    }
}

/// The bridge scripts talk to, and the gateway handle that keeps its
/// servers alive. Without a gateway configuration there are no servers:
/// every tool call fails with a catchable "no server named X".
pub fn build_bridge(
    args: &Args,
) -> anyhow::Result<(Arc<dyn ToolBridge>, Option<skarn_gateway::GatewayHandle>)> {
    match &args.config {
        None => Ok((Arc::new(NoServers), None)),
        Some(path) => {
            if skarn_sandbox::policy::config_read::is_absent(path) {
                bail!("{}: no such configuration file", path.display());
            }
            let (bridge, handle) = skarn_gateway::bridge_from_checked_config(path)?;
            Ok((bridge, Some(handle)))
        }
    }
}

/// The configuration's `[gateway]` section, when `--config` names a file.
fn gateway_config(args: &Args) -> anyhow::Result<Option<skarn_gateway::config::GatewayConfig>> {
    match &args.config {
        Some(path) if !skarn_sandbox::policy::config_read::is_absent(path) => {
            Ok(Some(skarn_gateway::Config::load(path)?.gateway))
        }
        _ => Ok(None),
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let gw = gateway_config(&args)?;
    // The flag, else the configuration's, else auto.
    let requested = args
        .isolation
        .or(gw.as_ref().map(|g| g.isolation))
        .unwrap_or(Isolation::Auto);
    let limits = args.limits(gw.map(|g| g.limits).unwrap_or_default());
    if limits.memory_bytes < 1 << 20 {
        bail!("--memory must be at least 1M");
    }
    if limits.stack_bytes < 64 << 10 {
        bail!("--stack must be at least 64K");
    }
    if limits.stack_bytes > skarn_codemode::MAX_STACK_BYTES {
        bail!(
            "--stack must be at most {}M",
            skarn_codemode::MAX_STACK_BYTES >> 20
        );
    }
    if limits.deadline.is_zero() {
        bail!("--timeout must be positive");
    }
    let code = args.script()?;
    if requested == Isolation::Auto
        && args.config.is_none()
        && let Some(code) = self_confined(&code, &limits, args.json)?
    {
        return Ok(code);
    }
    // One script per process: no warm pool, a single cold worker.
    let mut pool = skarn_worker::PoolConfig::new(skarn_worker::WorkerCommand::current_exe());
    pool.warm = 0;
    let executor = skarn_worker::Executor::new(requested, pool)
        .map_err(|e| anyhow::anyhow!("--isolation {}: {e}", requested.as_str()))?;
    let (bridge, _gateway) = build_bridge(&args)?;
    let run = executor.execute(&code, bridge, &limits);
    if run.isolation == skarn_worker::IsolationUsed::InProcess {
        eprintln!(
            "skarn: note: the script ran in-process, without the confined worker process: {}",
            executor.reason()
        );
    }
    print_outcome(&run.outcome, run.isolation, args.json)?;
    Ok(ExitCode::from(exit_code(&run.outcome)))
}

/// With nothing to bridge, confine this process as the worker would
/// confine itself and run the script here (see `exec_confined`, Linux
/// only). `None` when that is not possible here: the caller starts a
/// worker instead.
#[cfg(not(target_os = "linux"))]
fn self_confined(_code: &str, _limits: &Limits, _json: bool) -> anyhow::Result<Option<ExitCode>> {
    Ok(None)
}

/// See above (Linux).
#[cfg(target_os = "linux")]
fn self_confined(code: &str, limits: &Limits, json: bool) -> anyhow::Result<Option<ExitCode>> {
    if super::exec_confined::unavailable().is_some() {
        return Ok(None);
    }
    match super::exec_confined::run(code, limits) {
        Ok(super::exec_confined::Ran::Script(outcome)) => {
            print_outcome(&outcome, skarn_worker::IsolationUsed::SelfConfined, json)?;
            Ok(Some(ExitCode::from(exit_code(&outcome))))
        }
        Ok(super::exec_confined::Ran::Selftest(attempts)) => {
            println!("{}", serde_json::to_string(&attempts)?);
            Ok(Some(ExitCode::SUCCESS))
        }
        Err(e) => {
            eprintln!("skarn: note: {e}; starting a worker instead");
            Ok(None)
        }
    }
}

/// The exit code for an outcome.
pub fn exit_code(outcome: &ExecOutcome) -> u8 {
    match &outcome.result {
        Ok(_) => 0,
        Err(e) => match e.kind {
            ErrorKind::Rejected | ErrorKind::Syntax => EXIT_REJECTED,
            ErrorKind::Runtime => EXIT_SCRIPT_ERROR,
            ErrorKind::Internal => EXIT_INTERNAL,
            k if k.is_limit() => EXIT_LIMIT,
            _ => EXIT_INTERNAL,
        },
    }
}

fn print_outcome(
    outcome: &ExecOutcome,
    isolation: skarn_worker::IsolationUsed,
    json: bool,
) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        let (value, error) = match &outcome.result {
            Ok(v) => (v.clone(), serde_json::Value::Null),
            Err(e) => (serde_json::Value::Null, serde_json::to_value(e)?),
        };
        let doc = serde_json::json!({
            "ok": outcome.result.is_ok(),
            "value": value,
            "error": error,
            "logs": outcome.logs,
            "tool_calls": outcome.tool_calls,
            "elapsed_ms": outcome.elapsed_ms,
            "isolation": isolation.as_str(),
        });
        serde_json::to_writer(&mut out, &doc)?;
        writeln!(out)?;
        return Ok(());
    }
    {
        // Best effort: a closed stderr must not cost the returned value.
        let mut err = std::io::stderr().lock();
        for line in &outcome.logs {
            let _ = writeln!(err, "{line}");
        }
        if let Err(e) = &outcome.result {
            let _ = match e.kind {
                ErrorKind::Rejected | ErrorKind::Syntax => writeln!(err, "skarn: {e}"),
                k => writeln!(err, "skarn: {}: {e}", kind_name(k)),
            };
        }
    }
    if let Ok(v) = &outcome.result {
        serde_json::to_writer(&mut out, v)?;
        writeln!(out)?;
    }
    Ok(())
}

fn kind_name(k: ErrorKind) -> &'static str {
    match k {
        ErrorKind::Rejected => "rejected",
        ErrorKind::Syntax => "syntax error",
        ErrorKind::Runtime => "script error",
        ErrorKind::Memory => "memory limit",
        ErrorKind::Stack => "stack limit",
        ErrorKind::Deadline => "deadline",
        ErrorKind::ToolCalls => "tool-call budget",
        ErrorKind::Output => "output cap",
        ErrorKind::Internal => "internal error",
    }
}

/// "30s", "500ms", "2m", "1.5s", or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    skarn_units::parse_duration(s, skarn_units::DurationUnit::Secs).map_err(|e| e.to_string())
}

/// "64M", "512K", "1G", "64MiB", or a bare number of MiB.
pub fn parse_size(s: &str) -> Result<usize, String> {
    let b = skarn_units::parse_size(s, skarn_units::SizeUnit::MiB).map_err(|e| e.to_string())?;
    usize::try_from(b).map_err(|_| format!("size {s:?} out of range"))
}

/// Like [`parse_size`], but a bare number is bytes.
pub fn parse_bytes(s: &str) -> Result<usize, String> {
    let b = skarn_units::parse_size(s, skarn_units::SizeUnit::Bytes).map_err(|e| e.to_string())?;
    usize::try_from(b).map_err(|_| format!("size {s:?} out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_durations() {
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("512k"), Ok(512 << 10));
        assert_eq!(parse_size("100"), Ok(100 << 20));
        assert_eq!(parse_bytes("100"), Ok(100));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("99999999G").is_err());
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("soon").is_err());
    }
}
