//! `skarn.toml`: the `[gateway]` section and one `[servers.<alias>]` table
//! per downstream MCP server.
//!
//! Other top-level sections (e.g. `[run]`, owned by the sandbox) are ignored
//! here; unknown keys *inside* `[gateway]` or a server table are errors.
//! Every error names the file, line and column.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use skarn_codemode::Limits;
use toml::Spanned;

/// Where `execute` runs scripts (`auto`, `worker`, `in_process`): the
/// Code Mode worker's setting, re-exported.
pub use skarn_worker::Isolation;

/// The `[gateway]` section.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GatewayConfig {
    /// Also expose every downstream tool under its namespaced name.
    pub passthrough: bool,
    /// Between the server alias and the tool name (default `__`).
    pub namespace_separator: String,
    /// Where scripts run.
    pub isolation: Isolation,
    /// Pre-started confined workers kept ready (0: start one per script).
    pub worker_pool: usize,
    /// Scripts run at the same time (default 8); further `execute` calls
    /// wait their turn, so a burst cannot start unbounded workers.
    pub max_concurrent_executes: usize,
    /// Offer a `run` tool: a shell command confined by `skarn run` with
    /// compressed output (default false).
    pub shell: bool,
    /// Limits for each `execute` (`[gateway.limits]`, see `limits.rs`).
    #[serde(deserialize_with = "crate::limits::deserialize")]
    pub limits: Limits,
    /// Seconds a downstream server may take to start (default 30); written
    /// as a duration (`30`, `"30s"`, `"1m"`).
    #[serde(deserialize_with = "skarn_units::secs_f64")]
    pub start_timeout: f64,
    /// Seconds any one downstream call may take (default 60); a duration.
    #[serde(deserialize_with = "skarn_units::secs_f64")]
    pub call_timeout: f64,
    /// Pages, items and bytes one downstream listing may have (defaults
    /// 100 / 10 000 / 16 MiB); past a cap the server is failed.
    pub max_list_pages: usize,
    pub max_list_items: usize,
    pub max_list_bytes: usize,
    /// `--http`: seconds a client may take to send a request's headers
    /// (default 10).
    pub http_header_timeout: f64,
    /// `--http`: seconds a connection may stay without any traffic either
    /// way before it is closed (default 120).
    pub http_idle_timeout: f64,
    /// `--http`: connections served at once (default 256, and never more
    /// than half the descriptor limit); more wait to be accepted.
    pub http_max_connections: usize,
}

impl Default for GatewayConfig {
    fn default() -> Self {
        GatewayConfig {
            passthrough: false,
            namespace_separator: "__".into(),
            isolation: Isolation::Auto,
            worker_pool: skarn_worker::DEFAULT_WARM,
            max_concurrent_executes: 8,
            shell: false,
            limits: Limits::default(),
            start_timeout: 30.0,
            call_timeout: 60.0,
            max_list_pages: 100,
            max_list_items: 10_000,
            max_list_bytes: 16 << 20,
            http_header_timeout: 10.0,
            http_idle_timeout: 120.0,
            http_max_connections: 256,
        }
    }
}

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
struct RawServer {
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
    #[serde(default = "yes")]
    prefix: bool,
    sandbox: Option<Spanned<crate::sandbox_config::RawSandbox>>,
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
    /// Caps on each of its listings.
    pub list_caps: crate::listing::ListCaps,
    /// Offer its tools and prompts as `<alias><sep><name>` (the default);
    /// `prefix = false` offers them under their own names, as long as no
    /// other name already takes them.
    pub prefix: bool,
}

/// The whole file, validated.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Config {
    /// The file it came from (`None` when built in memory).
    pub path: Option<PathBuf>,
    pub gateway: GatewayConfig,
    /// Sorted by alias.
    pub servers: Vec<ServerConfig>,
}

#[derive(Debug, Deserialize)]
struct RawFile {
    // Not `Spanned`: toml cannot span a table that only a dotted header
    // (`[gateway.limits]` without `[gateway]`) creates.
    #[serde(default)]
    gateway: Option<GatewayConfig>,
    #[serde(default)]
    servers: Option<BTreeMap<String, Spanned<RawServer>>>,
}

/// A configuration error, located in its file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(
                f,
                "{}:{}:{}: {}",
                self.file, self.line, self.column, self.message
            )
        }
    }
}

/// Byte offset of the first `[name]` or `[name.…]` table header (0 when
/// there is none), for error positions.
fn table_header_offset(text: &str, name: &str) -> usize {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix('[').map(str::trim_start)
            && let Some(after) = rest.strip_prefix(name)
            && after.trim_start().starts_with([']', '.'])
        {
            return offset + (line.len() - t.len());
        }
        offset += line.len();
    }
    0
}

/// 1-based line and column of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map_or(before.chars().count(), |nl| {
        before[nl + 1..].chars().count()
    }) + 1;
    (line, col)
}

impl Config {
    /// Read and validate `path`.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: path.display().to_string(),
            line: 0,
            column: 0,
            message: format!("cannot read the configuration: {e}"),
        })?;
        let mut cfg = Config::parse(&text, &path.display().to_string())?;
        cfg.path = Some(path.to_path_buf());
        // Relative working directories are relative to the file.
        let base = path.parent().unwrap_or(Path::new("."));
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute());
        for s in &mut cfg.servers {
            if let ServerTransport::Stdio { cwd, sandbox, .. } = &mut s.transport {
                if let Some(cwd) = cwd
                    && cwd.is_relative()
                {
                    *cwd = base.join(&*cwd);
                }
                let abs_base = std::path::absolute(base).unwrap_or_else(|_| base.to_path_buf());
                sandbox.resolve_paths(&abs_base, home.as_deref());
            }
        }
        Ok(cfg)
    }

    /// Parse and validate `text`; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Config, ConfigError> {
        let err_at = |offset: usize, message: String| {
            let (line, column) = line_col(text, offset);
            ConfigError {
                file: file.to_owned(),
                line,
                column,
                message,
            }
        };
        let raw: RawFile = toml::from_str(text).map_err(|e| {
            let offset = e.span().map_or(0, |s| s.start);
            let msg = e.message().trim().to_owned();
            if e.span().is_some() {
                err_at(offset, msg)
            } else {
                ConfigError {
                    file: file.to_owned(),
                    line: 0,
                    column: 0,
                    message: msg,
                }
            }
        })?;
        let gateway_span = table_header_offset(text, "gateway");
        let gateway = raw.gateway.unwrap_or_default();
        let sep = &gateway.namespace_separator;
        if sep.is_empty() || sep.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(err_at(
                gateway_span,
                "namespace_separator must be a non-empty string without whitespace".into(),
            ));
        }
        for (what, v) in [
            ("start_timeout", gateway.start_timeout),
            ("call_timeout", gateway.call_timeout),
            ("http_header_timeout", gateway.http_header_timeout),
            ("http_idle_timeout", gateway.http_idle_timeout),
        ] {
            if !(v.is_finite() && v > 0.0 && v <= 86_400.0) {
                return Err(err_at(
                    gateway_span,
                    format!(
                        "{what} must be a duration between 0 and 24h (e.g. 30, \"30s\", \"2m\")"
                    ),
                ));
            }
        }
        if !(1..=256).contains(&gateway.max_concurrent_executes) {
            return Err(err_at(
                gateway_span,
                "max_concurrent_executes must be between 1 and 256".into(),
            ));
        }
        for (what, v) in [
            ("max_list_pages", gateway.max_list_pages),
            ("max_list_items", gateway.max_list_items),
            ("max_list_bytes", gateway.max_list_bytes),
            ("http_max_connections", gateway.http_max_connections),
        ] {
            if v == 0 {
                return Err(err_at(gateway_span, format!("{what} must be at least 1")));
            }
        }
        if gateway.worker_pool > 64 {
            return Err(err_at(
                gateway_span,
                "worker_pool must be at most 64".into(),
            ));
        }
        let mut servers = Vec::new();
        for (alias, spanned) in raw.servers.unwrap_or_default() {
            let at = spanned.span().start;
            let mut raw = spanned.into_inner();
            let sandbox = match raw.sandbox.take() {
                Some(sb) => {
                    let sb_at = sb.span().start;
                    let (line, _) = line_col(text, sb_at);
                    let cfg =
                        crate::sandbox_config::validate(sb.into_inner(), format!("{file}:{line}"))
                            .map_err(|m| {
                                err_at(sb_at, format!("[servers.{alias}.sandbox]: {m}"))
                            })?;
                    Some(cfg)
                }
                None => None,
            };
            let (line, _) = line_col(text, at);
            let sandbox = sandbox.ok_or(format!("{file}:{line}"));
            servers.push(validate_server(&alias, raw, sandbox, &gateway, |m| {
                err_at(at, m)
            })?);
        }
        Ok(Config {
            path: None,
            gateway,
            servers,
        })
    }

    /// The config's file name for messages.
    pub fn display_path(&self) -> String {
        self.path
            .as_ref()
            .map_or_else(|| "<memory>".into(), |p| p.display().to_string())
    }
}

fn secs(v: f64, what: &str) -> Result<Duration, String> {
    if v.is_finite() && v > 0.0 && v <= 86_400.0 {
        Ok(Duration::from_secs_f64(v))
    } else {
        Err(format!(
            "{what} must be a duration between 0 and 24h (e.g. 30, \"30s\", \"2m\")"
        ))
    }
}

fn validate_server(
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
    Ok(ServerConfig {
        alias: alias.to_owned(),
        transport,
        enabled: raw.enabled,
        call_timeout,
        start_timeout,
        list_caps: crate::listing::ListCaps {
            pages: gateway.max_list_pages,
            items: gateway.max_list_items,
            bytes: gateway.max_list_bytes,
        },
        prefix: raw.prefix,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_table_without_a_gateway_table() {
        let c = Config::parse("[gateway.limits]\ndeadline = \"1500ms\"\n", "f").unwrap();
        assert_eq!(c.gateway.limits.deadline, Duration::from_millis(1500));
        assert_eq!(c.gateway.worker_pool, GatewayConfig::default().worker_pool);
        let e = Config::parse("x = 1\n[gateway.limits]\nnope = 1\n", "f").unwrap_err();
        assert!(e.message.contains("nope"), "{e}");
        let e = Config::parse(
            "\n[gateway.limits]\n[gateway]\nnamespace_separator = \" \"\n",
            "f",
        )
        .unwrap_err();
        assert_eq!(e.line, 2, "{e}");
    }

    #[test]
    fn parses_full_file_and_ignores_foreign_sections() {
        let text = r#"
[run]
whatever = 1

[gateway]
passthrough = true
limits = { deadline = "5000ms" }

[servers.files]
command = "mcp-files"
args = ["--root", "."]

[servers.remote]
url = "https://example.invalid/mcp"
auth = { bearer_env = "TOKEN" }
headers = { "X-Team" = "a" }
timeout = 5
"#;
        let c = Config::parse(text, "skarn.toml").unwrap();
        assert!(c.gateway.passthrough);
        assert_eq!(c.gateway.limits.deadline, Duration::from_secs(5));
        assert_eq!(c.servers.len(), 2);
        assert_eq!(c.servers[1].call_timeout, Duration::from_secs(5));
        assert!(matches!(
            c.servers[0].transport,
            ServerTransport::Stdio { .. }
        ));
    }

    #[test]
    fn unknown_key_in_server_has_location() {
        let text = "[servers.a]\ncommand = \"x\"\ncomand = \"y\"\n";
        let e = Config::parse(text, "skarn.toml").unwrap_err();
        assert_eq!((e.line, e.column), (3, 1), "{e}");
        assert!(e.to_string().starts_with("skarn.toml:3:1: "), "{e}");
        assert!(e.message.contains("comand"), "{e}");
    }

    #[test]
    fn unknown_key_in_gateway_and_bad_types() {
        let e = Config::parse("[gateway]\npassthru = true\n", "f").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        let e = Config::parse("[gateway]\npassthrough = \"yes\"\n", "f").unwrap_err();
        assert_eq!((e.line, e.column), (2, 15), "{e}");
        let e = Config::parse("[gateway]\nlimits = { heap = 1 }\n", "f").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
    }

    #[test]
    fn semantic_errors_point_at_the_table() {
        let e = Config::parse("\n\n[servers.a]\nargs = []\n", "f").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        assert!(e.message.contains("command"), "{e}");
        let e = Config::parse("[servers.\"a b\"]\ncommand = \"x\"\n", "f").unwrap_err();
        assert!(e.message.contains("alias"), "{e}");
        let e = Config::parse("[servers.a__b]\ncommand = \"x\"\n", "f").unwrap_err();
        assert!(e.message.contains("separator"), "{e}");
        let e = Config::parse("[servers.a]\nurl = \"ftp://x\"\n", "f").unwrap_err();
        assert!(e.message.contains("http://"), "{e}");
        let e = Config::parse("[servers.a]\ncommand = \"x\"\ntimeout = -1\n", "f").unwrap_err();
        assert!(e.message.contains("-1"), "{e}");
        let e =
            Config::parse("[servers.a]\ncommand = \"x\"\ntimeout = \"soon\"\n", "f").unwrap_err();
        assert_eq!((e.line, e.column), (3, 11), "{e}");
        let c = Config::parse(
            "[gateway]\ncall_timeout = \"2m\"\nstart_timeout = 5\n[servers.a]\ncommand = \"x\"\nstart_timeout = \"500ms\"\n",
            "f",
        )
        .unwrap();
        assert_eq!(c.gateway.call_timeout, 120.0);
        assert_eq!(c.servers[0].call_timeout, Duration::from_secs(120));
        assert_eq!(c.servers[0].start_timeout, Duration::from_millis(500));
        let e = Config::parse("[gateway]\nisolation = \"sandboxed\"\n", "f").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        let e = Config::parse("[gateway]\nmax_concurrent_executes = 0\n", "f").unwrap_err();
        assert!(e.message.contains("max_concurrent_executes"), "{e}");
        let c = Config::parse("[gateway]\nmax_concurrent_executes = 3\n", "f").unwrap();
        assert_eq!(c.gateway.max_concurrent_executes, 3);
        let e = Config::parse("[gateway]\nworker_pool = 1000\n", "f").unwrap_err();
        assert!(e.message.contains("worker_pool"), "{e}");
        let c = Config::parse("[gateway]\nisolation = \"worker\"\nworker_pool = 0\n", "f").unwrap();
        assert_eq!(c.gateway.isolation, Isolation::Worker);
    }

    #[test]
    fn env_literal_and_from_env() {
        let text =
            "[servers.a]\ncommand = \"x\"\nenv = { A = \"lit\", B = { from_env = \"GH\" } }\n";
        let c = Config::parse(text, "f").unwrap();
        let ServerTransport::Stdio { env, .. } = &c.servers[0].transport else {
            panic!("stdio expected")
        };
        assert_eq!(env["A"], EnvValue::Literal("lit".into()));
        assert_eq!(
            env["B"],
            EnvValue::FromEnv(FromEnv {
                from_env: "GH".into()
            })
        );
        let e = Config::parse(
            "[servers.a]\ncommand = \"x\"\nenv = { B = { from = \"GH\" } }\n",
            "f",
        )
        .unwrap_err();
        assert_eq!(e.line, 3, "{e}");
    }

    #[test]
    fn limits_table_without_gateway_header() {
        let c = Config::parse("[gateway.limits]\nmax_tool_calls = 5\n", "f").unwrap();
        assert_eq!(c.gateway.limits.max_tool_calls, 5);
        let e = Config::parse("x = 1\n\n[gateway]\nnamespace_separator = \"\"\n", "f").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        assert_eq!(e.line, 3, "{e}");
    }

    #[test]
    fn sandbox_table_and_its_errors() {
        let text = "[servers.a]\ncommand = \"x\"\n\n[servers.a.sandbox]\nnet = \"allow:a.test\"\nwrite = [\"out\"]\nmemory = \"512M\"\n";
        let c = Config::parse(text, "skarn.toml").unwrap();
        let ServerTransport::Stdio { sandbox, .. } = &c.servers[0].transport else {
            panic!("stdio expected")
        };
        assert_eq!(sandbox.at, "skarn.toml:4");
        assert_eq!(sandbox.memory_mb, Some(512));
        let e = Config::parse(
            "[servers.a]\ncommand = \"x\"\n[servers.a.sandbox]\nnet = \"maybe\"\n",
            "f",
        )
        .unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        assert!(
            e.message.contains("[servers.a.sandbox]: sandbox.net"),
            "{e}"
        );
        let e = Config::parse(
            "[servers.a]\ncommand = \"x\"\n[servers.a.sandbox]\nreed = []\n",
            "f",
        )
        .unwrap_err();
        assert_eq!(e.line, 4, "{e}");
        let e = Config::parse(
            "[servers.a]\nurl = \"http://h/mcp\"\n[servers.a.sandbox]\n",
            "f",
        )
        .unwrap_err();
        assert!(e.message.contains("sandbox"), "{e}");
        let e =
            Config::parse("[servers.a]\ncommand = \"x\"\nallow_private = true\n", "f").unwrap_err();
        assert!(e.message.contains("allow_private"), "{e}");
        let e = Config::parse(
            "[servers.a]\ncommand = \"x\"\nenv = { F = { state_file = \"../x\" } }\n",
            "f",
        )
        .unwrap_err();
        assert!(e.message.contains("state_file"), "{e}");
    }

    #[test]
    fn syntax_error_has_location() {
        let e = Config::parse("[gateway\n", "f").unwrap_err();
        assert_eq!(e.line, 1, "{e}");
    }
}
