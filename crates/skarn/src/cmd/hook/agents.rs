//! Each agent's hook contract: where the command and the working directory
//! are in its input, and how a rewrite, a question or a refusal is said.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::{Map, Value, json};

use super::settings::{Decision, Settings};
use super::unknown_tools::{CLAUDE_HARMLESS, GEMINI_HARMLESS, unknown_tool};
use super::withheld::allow_withheld;
use super::{Agent, Answer, shell};

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

/// The workspace: `--workspace`, else the first set variable of `vars`,
/// else `fallback` (the input's cwd); it must be an absolute path.
fn workspace(ctx: &Ctx, vars: &[&str], fallback: Option<&Value>) -> anyhow::Result<String> {
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

/// Why this file tool call must not run (`None`: not the hook's to refuse,
/// or the guard is off). `tool_input` must name at least one path (else
/// the call is malformed: refused); every path named is judged.
fn file_refusal(
    tool_input: &Value,
    tool: &str,
    cwd: Option<&Value>,
    ws: &str,
    ctx: &Ctx,
    call: Option<&Value>,
) -> anyhow::Result<Option<String>> {
    if !ctx.settings.guard_files {
        return Ok(None);
    }
    if !tool_input.is_object() {
        bail!("{tool}: the tool input is not an object");
    }
    let paths = match super::file_targets::targets(tool_input) {
        Ok(p) => p,
        Err(why) => return Ok(Some(super::files::reason(tool, &why))),
    };
    if paths.is_empty() {
        bail!("{tool}: the tool input names no file path");
    }
    let cwd = cwd
        .and_then(Value::as_str)
        .filter(|c| c.starts_with('/'))
        .unwrap_or(ws);
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    // A URI (`file:///...`, `vscode-remote://...`) names a file the way
    // the checks below do not read: refused, whatever it names (atk24e
    // F10).
    if let Some(uri) = paths.iter().find(|p| p.contains("://")) {
        return Ok(Some(super::files::reason(
            tool,
            &format!("{uri} is a URI; name the file by its absolute path"),
        )));
    }
    if let Some(why) = paths.iter().find_map(|path| {
        super::files::refusal(path, Path::new(cwd), Path::new(ws), home.as_deref())
    }) {
        return Ok(Some(super::files::reason(tool, &why)));
    }
    // Inside what the agent's commands could write (issue 24 item 6).
    if ctx.settings.file_boundary {
        let roots = match super::file_boundary::roots(Path::new(ws), home.as_deref()) {
            Ok(r) => r,
            Err(why) => return Ok(Some(super::files::reason(tool, &why))),
        };
        for path in &paths {
            let c = match super::file_paths::candidates(path, Path::new(cwd), home.as_deref()) {
                Ok(c) => c,
                Err(why) => return Ok(Some(super::files::reason(tool, &why))),
            };
            if let Some(why) = super::file_boundary::outside(&c, &roots, Path::new(ws)) {
                return Ok(Some(super::files::reason(tool, &why)));
            }
        }
    }
    // No sandboxed command may be alive where the write goes (attack 24
    // F2): it could swap a name for a link before the tool writes.
    #[cfg(target_os = "linux")]
    if let Some(h) = home.as_deref() {
        let abs: Vec<PathBuf> = paths
            .iter()
            .filter_map(|p| super::file_paths::candidates(p, Path::new(cwd), Some(h)).ok())
            .flatten()
            .collect();
        // A run starting before the tool writes must not change the path
        // either (atk24j F7, ADR 0244): the lease is recorded first, then
        // live runs are looked for. A run reads the leases again once its
        // own record exists, so one of the two always sees the other.
        let ttl = ctx.settings.edit_lease;
        if let Err(why) = super::file_lease::record(&paths, Path::new(cwd), h, call, ttl) {
            return Ok(Some(format!(
                "skarn: {tool} refused for now: {why}; without it a sandboxed command started \
                 before the write could swap a name on the way for a link."
            )));
        }
        if let Some(why) = super::file_runs::live_refusal(&abs, Path::new(ws), h) {
            super::file_lease::release_paths(&paths, Path::new(cwd), h, call);
            return Ok(Some(format!("skarn: {tool} refused for now: {why}.")));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = call;
    Ok(None)
}

const CONFINED: &str = "skarn: runs confined by skarn run (the [run] policy of the workspace)";

const POWERSHELL_REFUSED: &str = "skarn: the PowerShell tool cannot run confined; use the Bash \
     tool instead (its commands run under skarn run)";

fn unsandboxed_reason(p: &str) -> String {
    format!("skarn: matches the unsandboxed pattern {p:?}: runs WITHOUT the sandbox")
}

/// Claude Code's contract, also VS Code's agent hooks (same output, the
/// terminal tool is `run_in_terminal` there and matchers are ignored).
fn claude(input: &Value, ctx: &Ctx, shell_tool: &str, dir_vars: &[&str]) -> anyhow::Result<Answer> {
    let event = input
        .get("hook_event_name")
        .or_else(|| input.get("hookEventName"))
        .and_then(Value::as_str);
    if matches!(event, Some("PostToolUse" | "PostToolUseFailure"))
        && input
            .get("tool_name")
            .and_then(Value::as_str)
            .is_some_and(|t| super::file_targets::FILE_TOOLS.contains(&t))
    {
        // A file tool has written (what `init` installs PostToolUse for):
        // its leases are dropped (ADR 0244). Nothing is answered; any other
        // PostToolUse is refused below, like every other event.
        #[cfg(target_os = "linux")]
        if let Some(h) = std::env::var_os("HOME").map(PathBuf::from)
            && h.is_absolute()
        {
            let ws = workspace(ctx, dir_vars, input.get("cwd"))?;
            let cwd = input
                .get("cwd")
                .and_then(Value::as_str)
                .filter(|c| c.starts_with('/'))
                .unwrap_or(&ws);
            let tool_input = input.get("tool_input").unwrap_or(&Value::Null);
            super::file_lease::release(tool_input, Path::new(cwd), &h, input.get("tool_use_id"));
        }
        return Ok(Answer::Nothing);
    }
    if let Some(e) = event
        && e != "PreToolUse"
    {
        bail!("skarn hook handles PreToolUse (and a file tool's PostToolUse), not {e}");
    }
    let tool = str_field(input, "tool_name", "the input")?;
    if shell_tool == "Bash"
        && let Some(why) = relative_dir("CLAUDE_CONFIG_DIR")
    {
        return Ok(Answer::Json(json!({ "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": why,
        }})));
    }
    if shell_tool == "Bash" {
        // Claude Code's other hooks and status line run on the host in the
        // project: while one is neither wrapped in `skarn run` nor trusted
        // by the user, nothing is allowed (ADR 0255, atk24k F1).
        let ws = workspace(ctx, dir_vars, input.get("cwd"))?;
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute());
        let found = super::confine_hooks::unconfined(
            Path::new(&ws),
            home.as_deref(),
            &ctx.exe,
            &ctx.settings.trusted_hooks,
        );
        if let Some(why) = super::confine_hooks::refusal(&found) {
            return Ok(Answer::Json(json!({ "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": why,
            }})));
        }
        // A path the call touches makes Claude Code load the `.claude`
        // directories on its way up (atk24m F7): theirs are judged too.
        if let Some(why) = nested_refusal(input, Path::new(&ws), ctx) {
            return Ok(Answer::Json(json!({ "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": why,
            }})));
        }
    }
    if super::file_targets::FILE_TOOLS.contains(&tool) {
        let ws = workspace(ctx, dir_vars, input.get("cwd"))?;
        let tool_input = input.get("tool_input").unwrap_or(&Value::Null);
        // Claude Code drops the lease when the tool has run (PostToolUse,
        // PostToolUseFailure: what `init` installs); it must not end by
        // time while the user may still be approving the edit (atk24l
        // F2): the day-long bound is only the backstop.
        let claude_ctx;
        let ctx = if shell_tool == "Bash" {
            claude_ctx = Ctx {
                settings: Settings {
                    edit_lease: super::settings::MAX_EDIT_LEASE,
                    ..ctx.settings.clone()
                },
                exe: ctx.exe.clone(),
                workspace: ctx.workspace.clone(),
            };
            &claude_ctx
        } else {
            ctx
        };
        return Ok(
            match file_refusal(
                tool_input,
                tool,
                input.get("cwd"),
                &ws,
                ctx,
                input.get("tool_use_id"),
            )? {
                Some(why) => Answer::Json(json!({ "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": why,
                }})),
                None => Answer::Nothing,
            },
        );
    }
    if shell_tool == "Bash" && tool == "PowerShell" {
        // Claude Code's PowerShell tool (Windows) runs its command in
        // PowerShell, which `skarn run`'s wrapping does not speak: refused,
        // so the model uses the Bash tool, which is confined (atk24g F4).
        return Ok(Answer::Json(json!({ "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": POWERSHELL_REFUSED,
        }})));
    }
    if tool != shell_tool {
        // What `init`'s matcher sends beyond the tools handled above
        // (Claude Code's matcher may match inside a name: TodoWrite,
        // BashOutput) is known harmless; any other tool is refused, not
        // let through (issue 24: unknown tools fail closed).
        if shell_tool == "Bash"
            && let Some(why) = unknown_tool(tool, CLAUDE_HARMLESS, &ctx.settings)
        {
            return Ok(Answer::Json(json!({ "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": why,
            }})));
        }
        return Ok(Answer::Nothing);
    }
    let tool_input = object(input, "tool_input")?;
    let cmd = str_field(&input["tool_input"], "command", "tool_input")?;
    let ws = workspace(ctx, dir_vars, input.get("cwd"))?;
    let out = |decision: Option<&str>, reason: String, updated: Option<Value>| {
        let mut o = Map::new();
        o.insert("hookEventName".into(), "PreToolUse".into());
        if let Some(d) = decision {
            o.insert("permissionDecision".into(), d.into());
            o.insert("permissionDecisionReason".into(), reason.into());
        }
        if let Some(u) = updated {
            o.insert("updatedInput".into(), u);
        }
        Answer::Json(json!({ "hookSpecificOutput": o }))
    };
    Ok(match plan(cmd, &ws, ctx) {
        Plan::Wrapped => Answer::Nothing,
        Plan::Unsandboxed(p) => out(Some("ask"), unsandboxed_reason(&p), None),
        Plan::Confine(new)
            if shell_tool == "Bash"
                && ctx.settings.decision != Decision::None
                && !peers(&ws).is_empty() =>
        {
            // Another hook on Bash: Claude Code may keep an `allow` and drop
            // the rewrite (atk24j F10), so the model is told what to run.
            let n = peers(&ws).len();
            out(
                Some("deny"),
                format!(
                    "skarn: shell commands here must run confined, and {n} other hook(s) run \
                     on Bash beside skarn's, with which the agent may drop skarn's rewrite. \
                     Run exactly this instead: {new}"
                ),
                None,
            )
        }
        Plan::Confine(new) => {
            // updatedInput replaces the whole input: keep every other field.
            let mut updated = tool_input.clone();
            updated.insert("command".into(), new.into());
            let (decision, reason) = match ctx.settings.decision {
                // `allow` promises confinement: not if the policy may run
                // the command unconfined on a host that cannot confine it.
                Decision::Allow => match allow_withheld(&ws) {
                    Some(why) => (Some("ask"), why),
                    None => (Some("allow"), CONFINED.to_string()),
                },
                Decision::Ask => (Some("ask"), CONFINED.to_string()),
                Decision::None => (None, String::new()),
            };
            out(decision, reason, Some(Value::Object(updated)))
        }
    })
}

/// Other hooks Claude Code runs on Bash for the project `ws`.
fn peers(ws: &str) -> Vec<String> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    super::claude_peers::other_bash_hooks(Path::new(ws), home.as_deref())
}

/// VS Code's agent hooks: Claude Code's contract, and a refusal for its
/// tools that run code other than through `run_in_terminal`.
fn vscode(input: &Value, ctx: &Ctx) -> anyhow::Result<Answer> {
    let event = input
        .get("hook_event_name")
        .or_else(|| input.get("hookEventName"))
        .and_then(Value::as_str);
    if event.is_none_or(|e| e == "PreToolUse")
        && let Some(tool) = input.get("tool_name").and_then(Value::as_str)
    {
        let ws = workspace(ctx, &[], input.get("cwd")).ok();
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute());
        if let Some(why) = super::vscode_tools::refusal(
            tool,
            input,
            ws.as_deref(),
            ctx.settings.guard_files,
            home.as_deref(),
        ) {
            return Ok(Answer::Json(json!({ "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": why,
            }})));
        }
        // Every tool reaches the hook (VS Code ignores matchers): one it
        // does not know is refused, not let through (issue 24).
        if let Some(why) = super::vscode_tools::unknown(tool, &ctx.settings) {
            return Ok(Answer::Json(json!({ "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": why,
            }})));
        }
    }
    claude(input, ctx, "run_in_terminal", &[])
}

fn gemini(input: &Value, ctx: &Ctx) -> anyhow::Result<Answer> {
    if let Some(e) = input.get("hook_event_name").and_then(Value::as_str)
        && e != "BeforeTool"
    {
        bail!("skarn hook gemini-cli handles BeforeTool, not {e}");
    }
    let tool = str_field(input, "tool_name", "the input")?;
    if super::file_targets::FILE_TOOLS.contains(&tool) {
        let ws = workspace(ctx, &["GEMINI_PROJECT_DIR"], input.get("cwd"))?;
        let tool_input = input.get("tool_input").unwrap_or(&Value::Null);
        if let Some(why) = gemini_env(tool_input, input.get("cwd"), &ws, ctx) {
            return Ok(Answer::Json(json!({ "decision": "deny", "reason": why })));
        }
        return Ok(Answer::Json(
            match file_refusal(
                tool_input,
                tool,
                input.get("cwd"),
                &ws,
                ctx,
                input.get("tool_use_id"),
            )? {
                Some(why) => json!({ "decision": "deny", "reason": why }),
                None => json!({}),
            },
        ));
    }
    if tool == "save_memory" && ctx.settings.guard_files {
        // It appends the model's text to `~/.gemini/GEMINI.md`, which
        // every later session loads: the agent's own settings, judged as
        // a write there.
        let ws = workspace(ctx, &["GEMINI_PROJECT_DIR"], input.get("cwd"))?;
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute());
        let why = super::files::refusal(
            "~/.gemini/GEMINI.md",
            Path::new(&ws),
            Path::new(&ws),
            home.as_deref(),
        );
        return Ok(Answer::Json(match why {
            Some(why) => json!({ "decision": "deny", "reason": super::files::reason(tool, &why) }),
            None => json!({}),
        }));
    }
    if tool != "run_shell_command" {
        // Only what `init`'s matcher names reaches here; another tool the
        // matcher happens to match is refused (unknown tools fail closed).
        return Ok(Answer::Json(
            match unknown_tool(tool, GEMINI_HARMLESS, &ctx.settings) {
                Some(why) => json!({ "decision": "deny", "reason": why }),
                None => json!({}),
            },
        ));
    }
    object(input, "tool_input")?;
    let cmd = str_field(&input["tool_input"], "command", "tool_input")?;
    let ws = workspace(ctx, &["GEMINI_PROJECT_DIR"], input.get("cwd"))?;
    Ok(match plan(cmd, &ws, ctx) {
        Plan::Wrapped | Plan::Unsandboxed(_) => Answer::Json(json!({})),
        // tool_input merges with (and overrides) the model's arguments.
        Plan::Confine(new) => Answer::Json(json!({
            "hookSpecificOutput": {
                "hookEventName": "BeforeTool",
                "tool_input": { "command": new },
            }
        })),
    })
}

/// Gemini CLI's own `.env` among the paths a file tool names (see
/// `file_run_sets::gemini_env`), judged from its working directory and
/// the workspace.
fn gemini_env(tool_input: &Value, cwd: Option<&Value>, ws: &str, ctx: &Ctx) -> Option<String> {
    if !ctx.settings.guard_files {
        return None;
    }
    let cwd = cwd
        .and_then(Value::as_str)
        .filter(|c| c.starts_with('/'))
        .unwrap_or(ws);
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    let paths = super::file_targets::targets(tool_input).ok()?;
    paths.iter().find_map(|p| {
        let c = super::file_paths::candidates(p, Path::new(cwd), home.as_deref()).ok()?;
        c.iter().find_map(|c| {
            super::file_run_sets::gemini_env(c, Path::new(cwd))
                .or_else(|| super::file_run_sets::gemini_env(c, Path::new(ws)))
                .map(|why| super::files::reason("write_file", &why))
        })
    })
}

/// Codex's command: a string, or an argv array.
fn codex_command(input: &Value) -> anyhow::Result<String> {
    object(input, "tool_input")?;
    match input["tool_input"].get("command") {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|w| w.as_str().map(shell::quote))
            .collect::<Option<Vec<_>>>()
            .map(|v| v.join(" "))
            .context("tool_input.command holds a non-string"),
        Some(_) => bail!("tool_input.command is not a string"),
        None => bail!("tool_input has no \"command\""),
    }
}

/// Why a Claude Code call whose path (`file_path`, `path`,
/// `notebook_path`) lies below a nested `.claude` with unconfined hooks
/// may not run.
fn nested_refusal(input: &Value, ws: &Path, ctx: &Ctx) -> Option<String> {
    let ti = input.get("tool_input")?;
    let mut files = Vec::new();
    for k in ["file_path", "path", "notebook_path"] {
        if let Some(p) = ti.get(k).and_then(Value::as_str) {
            let p = match input.get("cwd").and_then(Value::as_str) {
                Some(c) if !p.starts_with('/') => Path::new(c).join(p),
                _ => PathBuf::from(p),
            };
            let p = std::fs::canonicalize(&p).unwrap_or(p);
            let ws = std::fs::canonicalize(ws).unwrap_or_else(|_| ws.to_path_buf());
            files.extend(super::claude_dirs::on_the_way(&ws, &p));
        }
    }
    let found = super::confine_hooks::unconfined_in(files, &ctx.exe, &ctx.settings.trusted_hooks);
    super::confine_hooks::refusal(&found)
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

fn codex(input: &Value, ctx: &Ctx) -> anyhow::Result<Answer> {
    let tool = str_field(input, "tool_name", "the input")?;
    if let Some(why) = relative_dir("CODEX_HOME") {
        return Ok(Answer::Block(why));
    }
    // Codex's other hooks and `notify` run on the host in the project:
    // while one is unconfined, nothing is allowed (ADR 0272).
    if let Some(why) = client_refusal("codex", &workspace(ctx, &[], input.get("cwd"))?, ctx) {
        return Ok(Answer::Block(why));
    }
    if tool == "apply_patch" {
        // A refusal (correct on every Codex release); its patch tool names its files
        // in the patch text.
        let ws = workspace(ctx, &[], input.get("cwd"))?;
        let tool_input = input.get("tool_input").unwrap_or(&Value::Null);
        return Ok(
            match file_refusal(
                tool_input,
                tool,
                input.get("cwd"),
                &ws,
                ctx,
                input.get("tool_use_id"),
            )? {
                Some(why) => Answer::Block(why),
                None => Answer::Nothing,
            },
        );
    }
    if tool != "Bash" {
        // A refusal: an unknown tool (one `init`'s
        // matcher does not name) is refused (fail closed).
        return Ok(match unknown_tool(tool, &[], &ctx.settings) {
            Some(why) => Answer::Block(why),
            None => Answer::Nothing,
        });
    }
    let cmd = codex_command(input)?;
    let ws = workspace(ctx, &[], input.get("cwd"))?;
    Ok(match plan(&cmd, &ws, ctx) {
        Plan::Wrapped | Plan::Unsandboxed(_) => Answer::Nothing,
        // Current Codex applies `updatedInput` with `allow` (the last
        // finished rewrite wins): used when the user says their Codex does
        // and no other PreToolUse hook could replace it (ADR 0272).
        Plan::Confine(new)
            if ctx.settings.codex_rewrite
                && ctx.settings.decision == Decision::Allow
                && allow_withheld(&ws).is_none()
                && super::client_hooks::codex_peers(
                    Path::new(&ws),
                    std::env::var_os("HOME")
                        .map(PathBuf::from)
                        .filter(|h| h.is_absolute())
                        .as_deref(),
                ) == 0 =>
        {
            let mut updated = input["tool_input"].as_object().cloned().unwrap_or_default();
            updated.insert("command".into(), new.into());
            Answer::Json(json!({ "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "permissionDecisionReason": CONFINED,
                "updatedInput": updated,
            }}))
        }
        // Otherwise a refusal: the reason goes to the model, which
        // re-issues the command confined (and that one passes).
        Plan::Confine(new) => Answer::Block(format!(
            "skarn: shell commands here must run confined. Run exactly this instead: {new}"
        )),
    })
}

/// Windsurf's workspace. Its hook input has no project root, and
/// `tool_info.cwd` is the directory the model chose for the command, so
/// it never decides what is writable: the workspace is `--workspace`, else
/// the directory Windsurf started the hook in (the opened workspace, not
/// the model's to choose). A command whose `cwd` lies outside it is
/// refused: which project the model meant cannot be told safely.
fn windsurf_workspace(info: &Value, ctx: &Ctx) -> anyhow::Result<Result<String, String>> {
    let ws = match &ctx.workspace {
        Some(w) => w.clone(),
        None => std::env::current_dir().context(
            "no workspace: --workspace is not given and the hook's directory is unknown",
        )?,
    };
    if !ws.is_absolute() {
        bail!("workspace {} is not an absolute path", ws.display());
    }
    let ws = ws.to_string_lossy().into_owned();
    if let Some(cwd) = info.get("cwd").and_then(Value::as_str) {
        let real = |p: &str| std::fs::canonicalize(p).unwrap_or_else(|_| PathBuf::from(p));
        let (c, w) = (real(cwd), real(&ws));
        if !cwd.starts_with('/') || !c.starts_with(&w) {
            return Ok(Err(format!(
                "skarn: this command's directory {} lies outside the workspace {} that Windsurf \
                 opened (the hook's own directory, or its --workspace), so it is blocked: run \
                 commands inside the workspace, or open that project in Windsurf",
                skarn_sandbox::protect::terminal_filter::one_line(cwd),
                skarn_sandbox::protect::terminal_filter::one_line(&ws)
            )));
        }
    }
    Ok(Ok(ws))
}

fn windsurf(input: &Value, ctx: &Ctx) -> anyhow::Result<Answer> {
    let event = input.get("agent_action_name").and_then(Value::as_str);
    let info = input
        .get("tool_info")
        .context("the input has no \"tool_info\"")?;
    if event == Some("pre_write_code") {
        // Cascade's own file writes: judged like Claude Code's Write.
        let ws = match windsurf_workspace(&json!({}), ctx)? {
            Ok(w) => w,
            Err(why) => return Ok(Answer::Block(why)),
        };
        if let Some(why) = client_refusal("windsurf", &ws, ctx) {
            return Ok(Answer::Block(why));
        }
        return Ok(
            match file_refusal(info, "pre_write_code", None, &ws, ctx, None)? {
                Some(why) => Answer::Block(why),
                None => Answer::Nothing,
            },
        );
    }
    if let Some(e) = event
        && e != "pre_run_command"
    {
        bail!("skarn hook windsurf handles pre_run_command and pre_write_code, not {e}");
    }
    let cmd = str_field(info, "command_line", "tool_info")?;
    let ws = match windsurf_workspace(info, ctx)? {
        Ok(w) => w,
        Err(why) => return Ok(Answer::Block(why)),
    };
    // Cascade's other hooks run on the host in the workspace (ADR 0272).
    if let Some(why) = client_refusal("windsurf", &ws, ctx) {
        return Ok(Answer::Block(why));
    }
    Ok(match plan(cmd, &ws, ctx) {
        Plan::Wrapped | Plan::Unsandboxed(_) => Answer::Nothing,
        // Cascade's pre-hooks can only block (exit 2); the reason is shown.
        Plan::Confine(new) => Answer::Block(format!(
            "skarn: shell commands here must run confined. Run exactly this instead: {new}"
        )),
    })
}

fn cursor(input: &Value, ctx: &Ctx) -> anyhow::Result<Answer> {
    if let Some(e) = input.get("hook_event_name").and_then(Value::as_str)
        && e != "beforeShellExecution"
    {
        bail!("skarn hook cursor handles beforeShellExecution, not {e}");
    }
    let cmd = str_field(input, "command", "the input")?;
    let root = input.get("workspace_roots").and_then(|r| r.get(0));
    let ws = workspace(ctx, &[], root.or(input.get("cwd")))?;
    Ok(Answer::Json(match plan(cmd, &ws, ctx) {
        Plan::Wrapped => match ctx.settings.decision {
            Decision::Allow => match allow_withheld(&ws) {
                Some(why) => json!({ "permission": "ask", "user_message": why }),
                None => json!({ "permission": "allow" }),
            },
            Decision::Ask => json!({ "permission": "ask" }),
            Decision::None => json!({}),
        },
        Plan::Unsandboxed(p) => json!({
            "permission": "ask",
            "user_message": unsandboxed_reason(&p),
        }),
        Plan::Confine(new) => json!({
            "permission": "deny",
            "user_message": "skarn: asked the agent to run this command confined",
            "agent_message": format!(
                "skarn: shell commands here must run confined. Run exactly this instead: {new}"
            ),
        }),
    }))
}
