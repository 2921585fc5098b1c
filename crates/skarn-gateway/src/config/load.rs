//! Reading `skarn.toml`: the whole file parsed, each section checked, and
//! every error located at its line and column.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::gateway_section::GatewayConfig;
use super::server_table::{RawServer, ServerTransport, validate_server};
use super::{Config, ConfigError};

#[derive(Debug, Deserialize)]
struct RawFile {
    // Not `Spanned`: toml cannot span a table that only a dotted header
    // (`[gateway.limits]` without `[gateway]`) creates.
    #[serde(default)]
    gateway: Option<GatewayConfig>,
    #[serde(default)]
    servers: Option<BTreeMap<String, Spanned<RawServer>>>,
    /// The other top-level keys: `[run]`, `[secrets]`, `[hook]` belong to
    /// other readers; anything else is refused (a typo ignored in silence
    /// would be a setting the user believes in).
    #[serde(flatten)]
    other: BTreeMap<String, toml::Value>,
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
        Config::load_text(path).map(|(c, _)| c)
    }

    /// Read and validate `path`; also the text read (to check the user's
    /// trust in exactly what was parsed).
    pub fn load_text(path: &Path) -> Result<(Config, String), ConfigError> {
        // The reader `skarn run` uses: never blocking, at most 1 MiB, and a
        // live run's placeholder at this name is "absent", not an error.
        let err = |message: String| ConfigError {
            file: path.display().to_string(),
            line: 0,
            column: 0,
            message,
        };
        let text = match skarn_sandbox::policy::config_read::read_text(path) {
            Ok(Some(t)) => t,
            Ok(None)
                if skarn_sandbox::policy::config_read::run_placeholder_on_the_way(path)
                    .is_some() =>
            {
                return Err(err(
                    "no such file (a `skarn run` that is running there holds an empty \
                     placeholder in its place until it ends)"
                        .into(),
                ));
            }
            Ok(None) => return Err(err("no such file".into())),
            Err(skarn_sandbox::policy::config::ConfigError::Io { err: e, .. }) => {
                return Err(err(format!("cannot read the configuration: {e}")));
            }
            Err(e) => return Err(err(format!("cannot read the configuration: {e}"))),
        };
        let mut cfg = Config::parse(&text, &path.display().to_string())?;
        cfg.path = Some(path.to_path_buf());
        // Relative working directories are relative to the file.
        let base = path.parent().unwrap_or(Path::new("."));
        if let Some(w) = &mut cfg.gateway.workspace
            && w.is_relative()
        {
            *w = std::path::absolute(base.join(&*w)).unwrap_or_else(|_| base.join(&*w));
        }
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
        Ok((cfg, text))
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
        if let Some((name, (line, column))) =
            skarn_sandbox::policy::config::unknown_top_level(raw.other.into_keys(), text)
        {
            return Err(ConfigError {
                file: file.to_owned(),
                line,
                column,
                message: skarn_sandbox::policy::config::unknown_top_level_message(&name),
            });
        }
        let gateway_span = table_header_offset(text, "gateway");
        let gateway = raw.gateway.unwrap_or_default();
        gateway.check().map_err(|m| err_at(gateway_span, m))?;
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
