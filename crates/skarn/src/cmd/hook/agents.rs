//! Each agent's hook contract: where the command and the working directory
//! are in its input, and how a rewrite, a question or a refusal is said.

//!
//! Claude Code's and VS Code's contract are in `claude`, the others in
//! `others`, the file tools' judgement shared by all in `file_call`.

mod claude;
mod file_call;
mod others;

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::{Map, Value};

use super::settings::Settings;
use super::{Agent, Answer, shell};
use claude::{claude, vscode};
use others::{codex, cursor, gemini, windsurf};

/// What one call knows besides its input.
pub struct Ctx {
    pub settings: Settings,
    /// Absolute path of this skarn binary.
    pub exe: String,
    /// `--workspace`, if given.
    pub workspace: Option<PathBuf>,
}

/// What to do with one shell command.
enum Plan {
    /// Already `skarn run ...`: leave it to the agent's own rules.
    Wrapped,
    /// Matches an `unsandboxed` pattern: runs as written, after asking.
    Unsandboxed(String),
    /// Run this instead.
    Confine(String),
}

fn plan(cmd: &str, ws: &str, ctx: &Ctx) -> Plan {
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

/// The workspace: [`project`], narrowed to the Claude Code worktree of it
/// the call's directory (`fallback`) lies in.
fn workspace(ctx: &Ctx, vars: &[&str], fallback: Option<&Value>) -> anyhow::Result<String> {
    let ws = project(ctx, vars, fallback)?;
    // A call in one of Claude Code's worktrees of the project works there
    // (atk24o F7): narrower than the project, with its own protections.
    Ok(super::claude_worktree::workspace(
        &ws,
        fallback.and_then(Value::as_str),
    ))
}

/// The project: `--workspace`, else the first set variable of `vars`,
/// else `fallback` (the input's cwd); it must be an absolute path.
fn project(ctx: &Ctx, vars: &[&str], fallback: Option<&Value>) -> anyhow::Result<String> {
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

fn str_field<'a>(v: &'a Value, key: &str, what: &str) -> anyhow::Result<&'a str> {
    match v.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => bail!("{what}.{key} is not a string"),
        None => bail!("{what} has no {key:?}"),
    }
}

fn object<'a>(v: &'a Value, key: &str) -> anyhow::Result<&'a Map<String, Value>> {
    v.get(key)
        .with_context(|| format!("the input has no {key:?}"))?
        .as_object()
        .with_context(|| format!("{key} is not an object"))
}

pub fn answer(agent: Agent, input: &Value, ctx: &Ctx) -> anyhow::Result<Answer> {
    match agent {
        Agent::ClaudeCode => claude(input, ctx, "Bash", &["CLAUDE_PROJECT_DIR"]),
        Agent::Vscode => vscode(input, ctx),
        Agent::Windsurf => windsurf(input, ctx),
        Agent::GeminiCli => gemini(input, ctx),
        Agent::Codex => codex(input, ctx),
        Agent::Cursor => cursor(input, ctx),
    }
}

const CONFINED: &str = "skarn: runs confined by skarn run (the [run] policy of the workspace)";

const POWERSHELL_REFUSED: &str = "skarn: the PowerShell tool cannot run confined; use the Bash \
     tool instead (its commands run under skarn run)";

fn unsandboxed_reason(p: &str) -> String {
    format!("skarn: matches the unsandboxed pattern {p:?}: runs WITHOUT the sandbox")
}

/// Why no call may run while the client's configuration directory
/// variable is relative: the client resolves it against its own working
/// directory (the project, where the agent writes), skarn cannot tell
/// which, so neither the run nor the hook could keep it (atk24m F9).
fn relative_dir(var: &str) -> Option<String> {
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

/// Why no call may run while `agent`'s own hooks (Codex, Windsurf) hold a
/// command neither wrapped by this skarn nor trusted (ADR 0272).
fn client_refusal(agent: &str, ws: &str, ctx: &Ctx) -> Option<String> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    let found = super::client_hooks::unconfined(
        agent,
        Path::new(ws),
        home.as_deref(),
        &ctx.exe,
        &ctx.settings.trusted_hooks,
    );
    super::confine_hooks::refusal_for(&found, agent)
}
