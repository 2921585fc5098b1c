//! What every agent's hook contract shares: the call's context, the plan
//! for one shell command, the workspace and the input's fields.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::{Map, Value};

use super::settings::Settings;
use super::shell;

/// What one call knows besides its input.
pub struct Ctx {
    pub settings: Settings,
    /// Absolute path of this skarn binary.
    pub exe: String,
    /// `--workspace`, if given.
    pub workspace: Option<PathBuf>,
}

/// What to do with one shell command.
pub(super) enum Plan {
    /// Already `skarn run ...`: leave it to the agent's own rules.
    Wrapped,
    /// Matches an `unsandboxed` pattern: runs as written, after asking.
    Unsandboxed(String),
    /// Run this instead.
    Confine(String),
}

pub(super) fn plan(cmd: &str, ws: &str, ctx: &Ctx) -> Plan {
    if shell::is_wrapped(cmd, &ctx.exe, ws) {
        return Plan::Wrapped;
    }
    if let Some(p) = ctx
        .settings
        .unsandboxed
        .iter()
        .find(|p| shell::matches(cmd, p))
    {
        return Plan::Unsandboxed(p.clone());
    }
    Plan::Confine(shell::confined(&ctx.exe, ws, cmd))
}

/// The workspace: `--workspace`, else the first set variable of `vars`,
/// else `fallback` (the input's cwd); it must be an absolute path.
pub(super) fn workspace(
    ctx: &Ctx,
    vars: &[&str],
    fallback: Option<&Value>,
) -> anyhow::Result<String> {
    let ws = ctx
        .workspace
        .as_ref()
        .map(|p| p.to_string_lossy().into_owned())
        .or_else(|| {
            vars.iter()
                .filter_map(std::env::var_os)
                .map(|v| v.to_string_lossy().into_owned())
                .find(|v| !v.is_empty())
        })
        .or_else(|| fallback.and_then(Value::as_str).map(str::to_owned))
        .context("no workspace: the input has no cwd and no project directory is set")?;
    if !ws.starts_with('/') {
        bail!("workspace {ws:?} is not an absolute path");
    }
    Ok(ws)
}

pub(super) fn str_field<'a>(v: &'a Value, key: &str, what: &str) -> anyhow::Result<&'a str> {
    match v.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => bail!("{what}.{key} is not a string"),
        None => bail!("{what} has no {key:?}"),
    }
}

pub(super) fn object<'a>(v: &'a Value, key: &str) -> anyhow::Result<&'a Map<String, Value>> {
    v.get(key)
        .with_context(|| format!("the input has no {key:?}"))?
        .as_object()
        .with_context(|| format!("{key} is not an object"))
}

pub(super) const CONFINED: &str =
    "skarn: runs confined by skarn run (the [run] policy of the workspace)";

pub(super) fn unsandboxed_reason(p: &str) -> String {
    format!("skarn: matches the unsandboxed pattern {p:?}: runs WITHOUT the sandbox")
}

/// Why no call may run while the client's configuration directory
/// variable is relative: the client resolves it against its own working
/// directory (the project, where the agent writes), skarn cannot tell
/// which, so neither the run nor the hook could keep it (atk24m F9).
pub(super) fn relative_dir(var: &str) -> Option<String> {
    let v = std::env::var_os(var)?;
    if v.is_empty() || Path::new(&v).is_absolute() {
        return None;
    }
    Some(format!(
        "skarn: ${var} is the relative path {}: the agent's client reads its settings and \
         hooks there, relative to its working directory, which skarn cannot keep from the \
         agent's commands. The user must set ${var} to an absolute path (or unset it) and \
         restart the agent. Until then every tool call is refused.",
        skarn_sandbox::protect::terminal_filter::one_line(&v.to_string_lossy())
    ))
}
