//! Gemini CLI's, Codex's, Windsurf's and Cursor's hook contracts.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use super::super::settings::Decision;
use super::super::unknown_tools::{GEMINI_HARMLESS, unknown_tool};
use super::super::withheld::allow_withheld;
use super::super::{Answer, shell};
use super::file_call::file_refusal;
use super::{
    CONFINED, Ctx, Plan, client_refusal, object, plan, relative_dir, str_field, unsandboxed_reason,
    workspace,
};

pub(super) fn gemini(input: &Value, ctx: &Ctx) -> anyhow::Result<Answer> {
    if let Some(e) = input.get("hook_event_name").and_then(Value::as_str)
        && e != "BeforeTool"
    {
        bail!("skarn hook gemini-cli handles BeforeTool, not {e}");
    }
    let tool = str_field(input, "tool_name", "the input")?;
    // The project's `.env` Gemini CLI loaded into this hook and the host
    // shell (atk24r F6): every call refused while it steers host code.
    {
        let ws = workspace(ctx, &["GEMINI_PROJECT_DIR"], input.get("cwd"))?;
        let cwd = input
            .get("cwd")
            .and_then(Value::as_str)
            .filter(|c| c.starts_with('/'))
            .unwrap_or(&ws);
        if let Some(why) = super::super::gemini_dotenv::refusal(Path::new(cwd)) {
            return Ok(Answer::Json(json!({ "decision": "deny", "reason": why })));
        }
        // Gemini CLI's own hooks run on the host (atk24t F6): while one
        // is neither wrapped nor trusted, nothing is allowed.
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute());
        if let Some(why) = super::super::own_hook_files::refusal(
            "gemini-cli",
            Path::new(&ws),
            home.as_deref(),
            &ctx.exe,
            &ctx.settings.trusted_hooks,
        ) {
            return Ok(Answer::Json(json!({ "decision": "deny", "reason": why })));
        }
    }
    if super::super::file_targets::FILE_TOOLS.contains(&tool) {
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
        let why = super::super::files::refusal(
            "~/.gemini/GEMINI.md",
            Path::new(&ws),
            Path::new(&ws),
            home.as_deref(),
        );
        return Ok(Answer::Json(match why {
            Some(why) => {
                json!({ "decision": "deny", "reason": super::super::files::reason(tool, &why) })
            }
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
    let paths = super::super::file_targets::targets(tool_input).ok()?;
    paths.iter().find_map(|p| {
        let c = super::super::file_paths::candidates(p, Path::new(cwd), home.as_deref()).ok()?;
        c.iter().find_map(|c| {
            super::super::file_run_sets::gemini_env(c, Path::new(cwd))
                .or_else(|| super::super::file_run_sets::gemini_env(c, Path::new(ws)))
                .map(|why| super::super::files::reason("write_file", &why))
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

pub(super) fn codex(input: &Value, ctx: &Ctx) -> anyhow::Result<Answer> {
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
                && super::super::client_hooks::codex_peers(
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

pub(super) fn windsurf(input: &Value, ctx: &Ctx) -> anyhow::Result<Answer> {
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

pub(super) fn cursor(input: &Value, ctx: &Ctx) -> anyhow::Result<Answer> {
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
