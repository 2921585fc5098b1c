//! One `[servers.<alias>]` table: how the gateway reaches a downstream
//! server, as written and as validated.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::gateway_section::GatewayConfig;
use super::{ConfigError, secs};

/// How the gateway reaches a downstream server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    /// A child process speaking MCP on its stdin/stdout.
    Stdio,
    /// Streamable HTTP.
    Http,
}

/// `auth = { bearer_env = "VAR" }`: the bearer token comes from `$VAR`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Auth {
    pub bearer_env: String,
}

/// One value of a stdio server's `env` table: a literal string, or
/// `{ from_env = "VAR" }` to pass the gateway's own `$VAR` to this server
/// only.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum EnvValue {
    Literal(String),
    FromEnv(FromEnv),
    StateFile(StateFile),
    Secret(SecretRef),
}

/// `{ secret = "github" }`: a placeholder for the user's secret `github`
/// (`[secrets.github]` in ~/.config/skarn/config.toml); the server's egress
/// proxy puts the value into its requests to the secret's hosts (issue 27).
/// Needs the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretRef {
    pub secret: String,
}

/// `{ state_file = "memory.jsonl" }`: the absolute path of that file in
/// the server's private state directory (issue 12).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateFile {
    pub state_file: String,
}

/// `{ from_env = "VAR" }`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FromEnv {
    pub from_env: String,
}

/// One `[servers.<alias>]` table as written.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawServer {
    transport: Option<TransportKind>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, EnvValue>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    auth: Option<Auth>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default = "yes")]
    enabled: bool,
    #[serde(default, deserialize_with = "skarn_units::opt_secs_f64")]
    timeout: Option<f64>,
    #[serde(default, deserialize_with = "skarn_units::opt_secs_f64")]
    start_timeout: Option<f64>,
    #[serde(default)]
    start_attempts: Option<u32>,
    #[serde(default = "yes")]
    prefix: bool,
    pub(super) sandbox: Option<Spanned<crate::sandbox_config::RawSandbox>>,
    /// http: reach a loopback or private address (refused otherwise).
    #[serde(default)]
    allow_private: bool,
}

fn yes() -> bool {
    true
}

/// How to reach one server.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerTransport {
    Stdio {
        command: String,
        args: Vec<String>,
        /// Exactly what the server gets on top of the minimal base
        /// environment (see `crate::child_env`).
        env: BTreeMap<String, EnvValue>,
        cwd: Option<PathBuf>,
        /// Its confinement (`[servers.<alias>.sandbox]`).
        sandbox: Box<crate::sandbox_config::SandboxConfig>,
    },
    Http {
        url: String,
        auth: Option<Auth>,
        headers: BTreeMap<String, String>,
        /// Whether the URL may name a loopback or private address.
        allow_private: bool,
    },
}

/// One validated downstream server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    pub alias: String,
    pub transport: ServerTransport,
    pub enabled: bool,
    /// Per-call timeout.
    pub call_timeout: Duration,
    /// Start (connect + initialize + first listing) timeout.
    pub start_timeout: Duration,
    /// Consecutive failed attempts before the server is given up.
    pub start_attempts: u32,
    /// How long a silent `server/discover` is waited for (stdio).
    pub discover_timeout: Duration,
    /// Caps on each of its listings.
    pub list_caps: crate::listing::ListCaps,
    /// Offer its tools and prompts as `<alias><sep><name>` (the default);
    /// `prefix = false` offers them under their own names, as long as no
    /// other name already takes them.
    pub prefix: bool,
}

pub(super) fn validate_server(
    alias: &str,
    raw: RawServer,
    sandbox: Result<crate::sandbox_config::SandboxConfig, String>,
    gateway: &GatewayConfig,
    err: impl Fn(String) -> ConfigError,
) -> Result<ServerConfig, ConfigError> {
    let here = format!("[servers.{alias}]");
    if alias.is_empty()
        || !alias
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(err(format!(
            "{here}: a server alias may only contain ASCII letters, digits, '_' and '-'"
        )));
    }
    if alias.contains(gateway.namespace_separator.as_str()) {
        return Err(err(format!(
            "{here}: the alias contains the namespace separator {:?}",
            gateway.namespace_separator
        )));
    }
    let kind = match (raw.transport, &raw.command, &raw.url) {
        (Some(k), _, _) => k,
        (None, Some(_), None) => TransportKind::Stdio,
        (None, None, Some(_)) => TransportKind::Http,
        (None, Some(_), Some(_)) => {
            return Err(err(format!(
                "{here}: both `command` and `url` are set; keep one (or set `transport`)"
            )));
        }
        (None, None, None) => {
            return Err(err(format!(
                "{here}: set `command` (a stdio server) or `url` (a Streamable HTTP server)"
            )));
        }
    };
    let transport = match kind {
        TransportKind::Stdio => {
            let Some(command) = raw.command.filter(|c| !c.trim().is_empty()) else {
                return Err(err(format!("{here}: a stdio server needs `command`")));
            };
            if raw.url.is_some()
                || raw.auth.is_some()
                || !raw.headers.is_empty()
                || raw.allow_private
            {
                return Err(err(format!(
                    "{here}: `url`, `auth`, `headers` and `allow_private` apply only to transport = \"http\""
                )));
            }
            for (k, v) in &raw.env {
                let bad = |n: &str| n.is_empty() || n.contains('=') || n.contains('\0');
                if bad(k) {
                    return Err(err(format!("{here}: env name {k:?} is not valid")));
                }
                if let EnvValue::StateFile(f) = v
                    && (f.state_file.is_empty()
                        || f.state_file.starts_with('/')
                        || f.state_file.contains('\0')
                        || f.state_file.split('/').any(|c| c == ".."))
                {
                    return Err(err(format!(
                        "{here}: env.{k}: state_file must be a relative path without `..`"
                    )));
                }
                if let EnvValue::FromEnv(f) = v
                    && bad(&f.from_env)
                {
                    return Err(err(format!(
                        "{here}: env.{k}: from_env {:?} is not a valid variable name",
                        f.from_env
                    )));
                }
            }
            ServerTransport::Stdio {
                command,
                args: raw.args,
                env: raw.env,
                cwd: raw.cwd,
                sandbox: Box::new(sandbox.unwrap_or_else(|at| {
                    crate::sandbox_config::SandboxConfig {
                        at,
                        ..Default::default()
                    }
                })),
            }
        }
        TransportKind::Http => {
            let Some(url) = raw.url else {
                return Err(err(format!("{here}: an http server needs `url`")));
            };
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(err(format!(
                    "{here}: url must start with http:// or https://"
                )));
            }
            if raw.command.is_some()
                || !raw.args.is_empty()
                || !raw.env.is_empty()
                || raw.cwd.is_some()
                || sandbox.is_ok()
            {
                return Err(err(format!(
                    "{here}: `command`, `args`, `env`, `cwd` and `sandbox` apply only to transport = \"stdio\""
                )));
            }
            for (k, v) in &raw.headers {
                if axum::http::HeaderName::from_bytes(k.as_bytes()).is_err()
                    || axum::http::HeaderValue::from_str(v).is_err()
                {
                    return Err(err(format!(
                        "{here}: header {k:?} is not a valid HTTP header"
                    )));
                }
            }
            ServerTransport::Http {
                url,
                auth: raw.auth,
                headers: raw.headers,
                allow_private: raw.allow_private,
            }
        }
    };
    let call_timeout = secs(raw.timeout.unwrap_or(gateway.call_timeout), "timeout")
        .map_err(|m| err(format!("{here}: {m}")))?;
    let start_timeout = secs(
        raw.start_timeout.unwrap_or(gateway.start_timeout),
        "start_timeout",
    )
    .map_err(|m| err(format!("{here}: {m}")))?;
    let start_attempts = raw.start_attempts.unwrap_or(gateway.start_attempts);
    if start_attempts == 0 {
        return Err(err(format!("{here}: start_attempts must be at least 1")));
    }
    Ok(ServerConfig {
        alias: alias.to_owned(),
        transport,
        enabled: raw.enabled,
        call_timeout,
        start_timeout,
        start_attempts,
        discover_timeout: Duration::from_secs_f64(gateway.discover_timeout),
        list_caps: crate::listing::ListCaps {
            pages: gateway.max_list_pages,
            items: gateway.max_list_items,
            bytes: gateway.max_list_bytes,
        },
        prefix: raw.prefix,
    })
}
