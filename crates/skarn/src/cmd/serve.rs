//! `skarn serve`: the MCP gateway over stdio (default) or Streamable HTTP.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use skarn_gateway::{Config, Gateway, Isolation};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The gateway configuration (see `skarn init`).
    #[arg(long, short = 'c', env = "SKARN_CONFIG", default_value = "skarn.toml")]
    pub config: PathBuf,

    /// Serve Streamable HTTP on ADDR (IP:PORT, localhost:PORT, or PORT for 127.0.0.1:PORT)
    /// at path /mcp instead of stdio. Requests need the bearer token.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,

    /// Environment variable holding the HTTP bearer token; when it is unset
    /// a random token is generated and printed once on stderr.
    #[arg(long, value_name = "VAR", default_value = "SKARN_HTTP_TOKEN")]
    pub token_env: String,

    /// Where `execute` runs scripts: auto, worker or in_process
    /// (overrides [gateway] isolation).
    #[arg(long, value_name = "MODE", value_parser = parse_isolation)]
    pub isolation: Option<Isolation>,

    /// Confined workers kept ready for `execute` (overrides
    /// [gateway] worker_pool; 0 starts one per script).
    #[arg(long, value_name = "N")]
    pub worker_pool: Option<usize>,

    /// Also expose every downstream tool as <server>__<tool>
    /// (overrides [gateway] passthrough).
    #[arg(long)]
    pub passthrough: bool,

    /// With --http: connections served at once; half as many again may
    /// wait for their request head (overrides [gateway]
    /// http_max_connections, default 256; never more than a third of the
    /// descriptor limit).
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,

    /// With --http: how long a client may take to send a request's headers,
    /// a duration such as 10s, 500ms or 2m; a bare number is seconds
    /// (overrides [gateway] http_header_timeout, default 10s).
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout)]
    pub header_timeout: Option<f64>,

    /// With --http: how long a connection may stay silent both ways before
    /// it is closed, a duration such as 2m; a bare number is seconds
    /// (overrides [gateway] http_idle_timeout, default 2m).
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout)]
    pub idle_timeout: Option<f64>,
}

/// A timeout flag in the shared duration syntax (`skarn_units`), as seconds:
/// more than zero and at most a day.
fn parse_timeout(s: &str) -> Result<f64, String> {
    let d = skarn_units::parse_duration(s, skarn_units::DurationUnit::Secs)
        .map_err(|e| e.to_string())?;
    let v = d.as_secs_f64();
    if v > 0.0 && v <= 86_400.0 {
        Ok(v)
    } else {
        Err(format!("{s:?}: must be more than 0 and at most 1d"))
    }
}

fn parse_isolation(s: &str) -> Result<Isolation, String> {
    s.parse::<Isolation>().map_err(|e| e.to_string())
}

fn parse_addr(s: &str) -> anyhow::Result<SocketAddr> {
    if let Ok(port) = s.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(a);
    }
    // `localhost:PORT`: the IPv4 loopback, without asking a resolver.
    if let Some((host, port)) = s.rsplit_once(':')
        && host.eq_ignore_ascii_case("localhost")
        && let Ok(port) = port.parse::<u16>()
    {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    bail!("--http {s:?}: expected HOST:PORT (e.g. 127.0.0.1:8931 or localhost:8931) or PORT")
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let (mut config, warning) = Config::load_checked(&args.config).map_err(|e| {
        if skarn_sandbox::policy::config_read::run_placeholder_on_the_way(&args.config).is_some() {
            anyhow::anyhow!("{e}; create one with `skarn init` once that run has ended")
        } else if skarn_sandbox::policy::config_read::is_absent(&args.config) {
            anyhow::anyhow!("{e} (create one with `skarn init`)")
        } else {
            anyhow::anyhow!("{e}")
        }
    })?;
    // Every server's secrets checks read the user's secrets configuration:
    // one that does not parse stops the gateway here, with its error, not
    // a check that quietly finds no secrets (atk27l F13).
    let user_secrets = skarn_gateway::secret_vars::user_config().map_err(|e| anyhow::anyhow!(e))?;
    // A gateway with secrets configured holds their values (`from_env`
    // sources in its environment, resolved values): no core dump (atk27l
    // F12).
    #[cfg(target_os = "linux")]
    if user_secrets.is_some_and(|(_, c)| !c.secrets.is_empty()) {
        skarn_sandbox::secrets::no_core::forbid_core_dumps()
            .map_err(|e| anyhow::anyhow!("cannot turn off core dumps: {e}"))?;
    }
    #[cfg(not(target_os = "linux"))]
    let _ = user_secrets;
    if let Some(w) = warning {
        // A cloned repository's or the agent's file: its servers run, but
        // never with more than the default server sandbox (ADR 0065).
        eprintln!("skarn: warning: {w}");
    }
    if let Some(i) = args.isolation {
        config.gateway.isolation = i;
    }
    if args.passthrough {
        config.gateway.passthrough = true;
    }
    if let Some(n) = args.worker_pool {
        config.gateway.worker_pool = n;
    }
    if let Some(n) = args.max_connections {
        if n == 0 {
            bail!("--max-connections must be at least 1");
        }
        config.gateway.http_max_connections = n;
    }
    if let Some(v) = args.header_timeout {
        config.gateway.http_header_timeout = v;
    }
    if let Some(v) = args.idle_timeout {
        config.gateway.http_idle_timeout = v;
    }
    if config.gateway.isolation == Isolation::Worker {
        // Fail before serving rather than on the first execute.
        let avail = skarn_worker::availability();
        if !avail.available {
            bail!(
                "isolation = \"worker\" is unavailable on this host: {}",
                avail.reason
            );
        }
    }
    let addr = args.http.as_deref().map(parse_addr).transpose()?;
    // Detached descendants of downstream servers (setsid) are re-parented
    // to the gateway instead of init, so that shutdown can end them.
    if cfg!(target_os = "linux") && !skarn_gateway::children::become_subreaper() {
        tracing::warn!(
            "cannot become a child subreaper; detached downstream descendants may outlive the gateway"
        );
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = rt.block_on(async move {
        let gw = Gateway::new(config);
        gw.start();
        gw.prepare_executor();
        let r = match addr {
            None => serve_stdio(gw.clone()).await,
            Some(addr) => serve_http(gw.clone(), addr, &args.token_env).await,
        };
        gw.shutdown();
        r
    });
    rt.shutdown_timeout(std::time::Duration::from_millis(300));
    result.map(|()| ExitCode::SUCCESS)
}

/// Resolves on Ctrl-C (Windows has no SIGTERM or SIGHUP).
#[cfg(not(unix))]
async fn signalled() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Resolves when SIGINT, SIGTERM or SIGHUP arrives.
#[cfg(unix)]
async fn signalled() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).ok();
    let mut hup = signal(SignalKind::hangup()).ok();
    let mut int = signal(SignalKind::interrupt()).ok();
    async fn recv(s: &mut Option<tokio::signal::unix::Signal>) {
        match s {
            Some(s) => {
                s.recv().await;
            }
            None => std::future::pending().await,
        }
    }
    tokio::select! {
        _ = recv(&mut term) => {}
        _ = recv(&mut hup) => {}
        _ = recv(&mut int) => {}
    }
}

async fn serve_stdio(gw: std::sync::Arc<Gateway>) -> anyhow::Result<()> {
    tokio::select! {
        r = skarn_gateway::stdio::serve_stdio(gw) => r.context("stdio transport failed")?,
        _ = signalled() => {}
    }
    Ok(())
}

async fn serve_http(
    gw: std::sync::Arc<Gateway>,
    addr: SocketAddr,
    token_env: &str,
) -> anyhow::Result<()> {
    let token = match std::env::var(token_env) {
        Ok(t) if !t.trim().is_empty() => t.trim().to_owned(),
        Ok(_) => bail!("{token_env} is set but empty"),
        Err(_) => {
            let t = skarn_gateway::http::generate_token();
            eprintln!("skarn: bearer token (set {token_env} to choose your own): {t}");
            t
        }
    };
    if !addr.ip().is_loopback() {
        eprintln!(
            "skarn: warning: listening on non-loopback address {addr}; anyone who can reach it and holds the token can run tools"
        );
    }
    let listener =
        skarn_gateway::http::bind(addr).with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener.local_addr()?;
    eprintln!("skarn: serving MCP (Streamable HTTP) at http://{local}/mcp");
    let stop = tokio_util::sync::CancellationToken::new();
    let stopper = stop.clone();
    tokio::spawn(async move {
        signalled().await;
        stopper.cancel();
    });
    skarn_gateway::http::serve_http(gw, listener, token, stop)
        .await
        .context("HTTP server failed")
}

#[cfg(test)]
mod tests {
    use super::parse_timeout;

    #[test]
    fn timeouts_take_the_shared_duration_syntax() {
        assert_eq!(parse_timeout("2m"), Ok(120.0));
        assert_eq!(parse_timeout("500ms"), Ok(0.5));
        assert_eq!(parse_timeout("10"), Ok(10.0));
        assert_eq!(parse_timeout("1.5s"), Ok(1.5));
        assert!(parse_timeout("0").is_err());
        assert!(parse_timeout("2d").is_err());
        assert!(parse_timeout("soon").is_err());
        assert!(parse_timeout("-1s").is_err());
    }
}
