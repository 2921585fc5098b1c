//! Claude Code's hook contract, also VS Code's agent hooks (same output).

use std::path::{Path, PathBuf};

use anyhow::bail;
use serde_json::{Map, Value, json};

use super::super::Answer;
use super::super::settings::{Decision, Settings};
use super::super::unknown_tools::{CLAUDE_LOADERS, claude_input, claude_tool};
use super::super::withheld::allow_withheld;
use super::file_call::file_refusal;
use super::{
    CONFINED, Ctx, POWERSHELL_REFUSED, Plan, object, plan, project, relative_dir, str_field,
    unsandboxed_reason, workspace,
};

/// Claude Code's contract, also VS Code's agent hooks (same output, the
/// terminal tool is `run_in_terminal` there and matchers are ignored).
pub(super) fn claude(
    input: &Value,
    ctx: &Ctx,
    shell_tool: &str,
    dir_vars: &[&str],
) -> anyhow::Result<Answer> {
    let event = input
        .get("hook_event_name")
        .or_else(|| input.get("hookEventName"))
        .and_then(Value::as_str);
    if matches!(event, Some("PostToolUse" | "PostToolUseFailure"))
        && input
            .get("tool_name")
            .and_then(Value::as_str)
            .is_some_and(|t| super::super::file_targets::FILE_TOOLS.contains(&t))
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
            super::super::file_lease::release(
                tool_input,
                Path::new(cwd),
                &h,
                input.get("tool_use_id"),
            );
        }
        return Ok(Answer::Nothing);
    }
    if shell_tool == "Bash" && event == Some("UserPromptSubmit") {
        // The user-level prompt guard (ADR 0342): no prompt while the
        // settings alter skarn's hook chain.
        let ws = workspace(ctx, dir_vars, input.get("cwd"))?;
        let project = project(ctx, dir_vars, input.get("cwd"))?;
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute());
        let dirs = super::super::claude_worktree::settings_dirs(&ws, &project);
        return Ok(
            match super::super::chain_guard::refusal(
                &dirs,
                home.as_deref(),
                &ctx.exe,
                &ctx.settings.trusted_hooks,
            ) {
                Some(why) => Answer::Block(why),
                None => Answer::Nothing,
            },
        );
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
        // In one of Claude Code's worktrees: the worktree's files and the
        // project's both (atk24o F7).
        let project = project(ctx, dir_vars, input.get("cwd"))?;
        let mut found = Vec::new();
        // Once when the call is in the project itself (every Read, Glob,
        // Grep and LS reaches here: each walk counts).
        // (And a linked worktree's main checkout: atk24r F5.)
        for dir in &super::super::claude_worktree::settings_dirs(&ws, &project) {
            for f in super::super::confine_hooks::unconfined(
                Path::new(dir),
                home.as_deref(),
                &ctx.exe,
                &ctx.settings.trusted_hooks,
            ) {
                if !found.contains(&f) {
                    found.push(f);
                }
            }
        }
        if let Some(why) = super::super::confine_hooks::refusal(&found) {
            return Ok(Answer::Json(json!({ "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": why,
            }})));
        }
        // A path the call touches makes Claude Code load the `.claude`
        // directories on its way up (atk24m F7): theirs are judged too.
        // As Claude Code forms the path, and resolved (atk24s F1).
        if let Some(why) = super::super::claude_nested::refusal(
            input,
            Path::new(&ws),
            &ctx.exe,
            &ctx.settings.trusted_hooks,
            home.as_deref(),
        ) {
            return Ok(Answer::Json(json!({ "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": why,
            }})));
        }
    }
    if shell_tool != "Bash" {
        // VS Code: its custom agents' hooks (atk24r F8) and its hook
        // files (atk24t F6).
        let ws = workspace(ctx, dir_vars, input.get("cwd"))?;
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|h| h.is_absolute());
        let found = super::super::confine_hooks::unconfined_in(
            super::super::vscode_agents::files(Path::new(&ws), home.as_deref()),
            &ctx.exe,
            &ctx.settings.trusted_hooks,
        );
        if let Some(why) =
            super::super::confine_hooks::refusal_for(&found, "vscode").or_else(|| {
                super::super::own_hook_files::refusal(
                    "vscode",
                    Path::new(&ws),
                    home.as_deref(),
                    &ctx.exe,
                    &ctx.settings.trusted_hooks,
                )
            })
        {
            return Ok(Answer::Json(json!({ "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": why,
            }})));
        }
    }
    if super::super::file_targets::FILE_TOOLS.contains(&tool) {
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
                    edit_lease: super::super::settings::MAX_EDIT_LEASE,
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
        // `init`'s matcher `*` sends every tool (atk24s F3): the known
        // harmless ones and MCP tools pass, the ones that run code on the
        // host are refused, any other is refused, not let through (issue
        // 24: unknown tools fail closed). A skill, command or subagent
        // loader: the refusal above judged every one the client may load
        // (links followed) and found none unconfined.
        let tool_input = input.get("tool_input").unwrap_or(&Value::Null);
        if shell_tool == "Bash"
            && let Some(why) = claude_input(tool, tool_input)
                .or_else(|| {
                    (!CLAUDE_LOADERS.contains(&tool))
                        .then(|| claude_tool(tool, &ctx.settings))
                        .flatten()
                })
                .or_else(|| mcp_refusal(tool, ctx, dir_vars, input.get("cwd")))
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
                && !peers(&ws, ctx, dir_vars, input.get("cwd")).is_empty() =>
        {
            // Another hook on Bash: Claude Code may keep an `allow` and drop
            // the rewrite (atk24j F10), so the model is told what to run.
            let n = peers(&ws, ctx, dir_vars, input.get("cwd")).len();
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

/// Why Claude Code's MCP tool `tool` must not run: its server is a
/// plugin's, or defined in no file the hook reads (`mcp_servers`).
fn mcp_refusal(tool: &str, ctx: &Ctx, dir_vars: &[&str], cwd: Option<&Value>) -> Option<String> {
    if !tool.starts_with("mcp__") {
        return None;
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    // No project known: only the user's and managed files (fail closed).
    let dirs: Vec<PathBuf> = match (workspace(ctx, dir_vars, cwd), project(ctx, dir_vars, cwd)) {
        (Ok(ws), Ok(project)) => super::super::claude_worktree::settings_dirs(&ws, &project)
            .into_iter()
            .map(PathBuf::from)
            .collect(),
        _ => Vec::new(),
    };
    super::super::mcp_servers::refusal(tool, &dirs, home.as_deref(), &ctx.settings)
}

/// Other hooks Claude Code runs on Bash for a call in the workspace `ws`:
/// those of every settings directory that applies to it (the worktree's,
/// the project's, the main checkout's: atk24r F5).
fn peers(ws: &str, ctx: &Ctx, dir_vars: &[&str], cwd: Option<&Value>) -> Vec<String> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute());
    let project = project(ctx, dir_vars, cwd).unwrap_or_else(|_| ws.to_string());
    let mut out = Vec::new();
    for d in super::super::claude_worktree::settings_dirs(ws, &project) {
        for h in super::super::claude_peers::other_bash_hooks(Path::new(&d), home.as_deref()) {
            if !out.contains(&h) {
                out.push(h);
            }
        }
    }
    out
}

/// VS Code's agent hooks: Claude Code's contract, and a refusal for its
/// tools that run code other than through `run_in_terminal`.
pub(super) fn vscode(input: &Value, ctx: &Ctx) -> anyhow::Result<Answer> {
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
        if let Some(why) = super::super::vscode_tools::refusal(
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
        if let Some(why) = super::super::vscode_tools::unknown(tool, &ctx.settings) {
            return Ok(Answer::Json(json!({ "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": why,
            }})));
        }
    }
    claude(input, ctx, "run_in_terminal", &[])
}
