//! `skarn hook AGENT`: a pre-tool-use command hook that makes an AI agent's
//! shell commands run under `skarn run`.
//!
//! The agent writes one JSON object on stdin; the hook answers on stdout in
//! that agent's format. Exit status: 0 with the answer (or no answer: the
//! call is not ours); **2** on malformed input or any internal error, with
//! the reason on stderr. Every agent here treats exit 2 as "block the
//! call", while other failures (exit 1, a crash) would let the original
//! command run unconfined, so the hook never exits otherwise: a panic is
//! caught and becomes exit 2 too. See docs/hook.md.

mod agents;
pub mod chain_guard;
pub mod claude_dirs;
mod claude_nested;
mod claude_peers;
mod claude_worktree;
pub mod client_hooks;
pub mod confine_hooks;
pub mod entry_shape;
mod file_boundary;
mod file_built;
mod file_content;
mod file_git;
mod file_host;
mod file_layer;
#[cfg(target_os = "linux")]
mod file_lease;
mod file_named;
mod file_paths;
mod file_record;
pub(crate) mod file_run_sets;
mod file_runs;
mod file_targets;
#[cfg(target_os = "linux")]
mod file_upper;
mod files;
pub mod frontmatter_hooks;
pub mod frontmatter_mcp;
mod frontmatter_yaml;
pub mod gemini_dotenv;
mod home_place;
mod installed;
pub mod mcp_servers;
pub mod mcp_shape;
pub mod other_handlers;
mod own_hook_files;
mod pattern_options;
mod plugin_dirs;
mod settings;
mod shell;
#[cfg(test)]
mod shell_vs_bash;
pub mod skill_shell;
mod unknown_tools;
pub mod vscode_agents;
mod vscode_tools;
mod walk_cache;
mod withheld;

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

pub use installed::{
    acknowledge, guard_command, guard_of, installed_command, installed_exe, is_installed_hook,
    is_own_hook, new_guard_token,
};
use settings::{Decision, Settings};
pub use shell::{quote, unquote_words};

/// Exit code that blocks the tool call in every supported agent.
pub const EXIT_BLOCK: u8 = 2;

/// Claude Code tools the hook is installed for: every one (attack
/// atk24s F3: an allow-list of names missed `Monitor`, `REPL`, `Workflow`
/// and `EnterWorktree`, which run code on the host, and would miss any
/// tool a later release adds). The hook decides per tool: the shells
/// (`PowerShell` refused), the file writing tools (see `files`), the tools
/// that read by path (whose paths lead Claude Code to nested `.claude`
/// directories: atk24o F3), the loaders of skills, commands and subagents
/// (atk24r F10), the known harmless ones and MCP tools pass, the others
/// are refused (`unknown_tools`). Running `skarn init` again replaces an
/// older install's narrow matcher; `skarn doctor` names one.
pub const CLAUDE_MATCHER: &str = "*";

/// Claude Code tools whose PostToolUse runs the hook: the file writing
/// tools, whose leases it drops (ADR 0244).
pub const CLAUDE_POST_MATCHER: &str = "Write|Edit|MultiEdit|NotebookEdit";

/// Gemini CLI tools the hook is installed for (`save_memory` writes
/// `~/.gemini/GEMINI.md`, which later sessions load).
pub const GEMINI_MATCHER: &str = "run_shell_command|write_file|replace|save_memory";

/// Largest hook input read (a tool call is far smaller).
const MAX_INPUT: u64 = 16 << 20;

/// The agents and how their contract is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Agent {
    /// Claude Code PreToolUse on Bash: rewrites the command (updatedInput).
    ClaudeCode,
    /// Gemini CLI BeforeTool on run_shell_command: rewrites the command
    /// (hookSpecificOutput.tool_input).
    GeminiCli,
    /// Codex PreToolUse on Bash: denies, the reason telling the model the
    /// confined command to run instead; with `[hook] codex_rewrite` it
    /// rewrites (updatedInput, applied by current releases; ADR 0272).
    Codex,
    /// Cursor beforeShellExecution: can only allow, ask or deny; denies with
    /// the confined command to run instead.
    Cursor,
    /// VS Code agent hooks, PreToolUse on run_in_terminal: rewrites the
    /// command (updatedInput), like Claude Code.
    Vscode,
    /// Windsurf Cascade pre_run_command: can only block (exit 2); the reason
    /// names the confined command to run instead.
    Windsurf,
}

#[derive(Debug, clap::Args)]
#[command(after_help = "\
Reads the agent's hook JSON on stdin and answers on stdout. Exit status: 0 \
answered (or not our call); 2 malformed input or internal error, reason on \
stderr (the agent then blocks the command; it never runs unconfined because \
of the hook). Config: [hook] in ~/.config/skarn/config.toml (decision, \
unsandboxed, guard_files); the command itself runs with the [run] policy of \
~/.config/skarn/config.toml and <workspace>/skarn.toml (which only narrows \
until `skarn trust`). File tools (Write, Edit, ...): writes to skarn's \
configuration, agent settings and persistence paths, and outside the \
workspace and the user's [run] write grants, are denied. Docs: \
docs/hook.md.")]
pub struct Args {
    /// Which agent's hook contract to speak.
    #[arg(value_enum)]
    pub agent: Agent,
    /// Permission given to a command the hook confined: allow (it runs
    /// confined, no prompt), ask (prompt), none (the agent's own rules)
    /// [default: allow, or [hook] decision]. Claude Code, VS Code and Cursor
    /// (wrapped commands) only.
    #[arg(long, value_enum)]
    pub decision: Option<Decision>,
    /// Leave commands matching PATTERN unsandboxed, and ask the user about
    /// them: whole leading words ("git push") or a prefix ending in "*"
    /// ("docker*"); simple commands only (repeatable; adds to [hook]
    /// unsandboxed).
    #[arg(long, value_name = "PATTERN")]
    pub unsandboxed: Vec<String>,
    /// Workspace of the confined command [default: $CLAUDE_PROJECT_DIR,
    /// $GEMINI_PROJECT_DIR or Cursor's first workspace root, else the
    /// input's cwd].
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Ignore ~/.config/skarn/config.toml's [hook] section.
    #[arg(long)]
    pub no_config: bool,
    /// Let the agent's file tools (Write, Edit, ...) write skarn's
    /// configuration, agent settings and persistence paths (default: those
    /// writes are refused; also [hook] guard_files = false).
    #[arg(long)]
    pub no_file_guard: bool,
    /// Let the agent's file tools write outside the workspace and the
    /// user's [run] write grants (default: refused, as `skarn run` keeps
    /// commands from writing there; also [hook] file_boundary = false).
    #[arg(long)]
    pub no_file_boundary: bool,
    /// Block the call (exit 2) if no answer is ready after this long, e.g.
    /// `20s` [default: 20s, or [hook] timeout]. Keep it below the agent's
    /// own hook timeout, past which the agent lets the call go ahead.
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout)]
    pub timeout: Option<std::time::Duration>,
}

fn parse_timeout(s: &str) -> Result<std::time::Duration, String> {
    skarn_units::parse_duration(s, skarn_units::DurationUnit::Secs).map_err(|e| e.to_string())
}

/// What the hook tells the agent.
pub enum Answer {
    /// Print this JSON, exit 0.
    Json(serde_json::Value),
    /// Print nothing, exit 0.
    Nothing,
    /// Print the reason on stderr, exit 2 (the agent blocks the call).
    Block(String),
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    std::panic::set_hook(Box::new(|info| {
        let _ = writeln!(
            std::io::stderr(),
            "skarn hook: internal error (the command is blocked): {info}"
        );
    }));
    start_watchdog(&args);
    let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| answer(&args)))
        .unwrap_or_else(|_| Ok(Answer::Block(String::new())))
        .unwrap_or_else(|e| Answer::Block(format!("skarn hook: {e:#}")));
    let answer = bounded(model_facing(answer));
    let code = match answer {
        Answer::Json(v) => {
            let mut out = std::io::stdout().lock();
            let line = serde_json::to_string(&v).unwrap_or_default();
            match writeln!(out, "{line}").and_then(|()| out.flush()) {
                Ok(()) if !line.is_empty() => 0,
                _ => EXIT_BLOCK,
            }
        }
        Answer::Nothing => 0,
        Answer::Block(msg) => {
            if !msg.is_empty() {
                let _ = writeln!(std::io::stderr(), "{msg}");
            }
            EXIT_BLOCK
        }
    };
    // The installed script trusts status 0 only with this (atk24k F5).
    let code = if code == 0 && !acknowledge() {
        EXIT_BLOCK
    } else {
        code
    };
    Ok(ExitCode::from(code))
}

/// Block the call (exit 2, a reason on stderr) once the hook's time limit
/// has passed, whatever it is doing (atk24h F12: a slow scan ran into the
/// agent's own timeout, which the agents treat as "go ahead").
fn start_watchdog(args: &Args) {
    let limit = args.timeout.unwrap_or_else(|| {
        Settings::load(config_path(args).as_deref(), None, &[])
            .map(|s| s.timeout)
            .unwrap_or(settings::DEFAULT_TIMEOUT)
    });
    std::thread::spawn(move || {
        std::thread::sleep(limit);
        let _ = writeln!(
            std::io::stderr(),
            "skarn hook: no answer within {}s ([hook] timeout), so this tool call is blocked",
            limit.as_secs_f64()
        );
        std::process::exit(i32::from(EXIT_BLOCK));
    });
}

/// `answer` as the model may read it: every client passes the hook's
/// reason to the model (Claude Code's and VS Code's
/// `permissionDecisionReason`, Gemini CLI's `reason`, Cursor's
/// `agent_message`, Codex's and Windsurf's stderr on exit 2), so advice
/// to widen the sandbox is cut from it (atk24i F1, ADR 0240); where the
/// client has a field the user reads (`systemMessage`), the whole text
/// goes there.
fn model_facing(answer: Answer) -> Answer {
    use skarn_sandbox::report::advice::fact_only;
    match answer {
        Answer::Block(m) => Answer::Block(fact_only(&m)),
        Answer::Json(mut v) => {
            let mut advice = None;
            for ptr in [
                "/hookSpecificOutput/permissionDecisionReason",
                "/reason",
                "/agent_message",
            ] {
                if let Some(serde_json::Value::String(t)) = v.pointer_mut(ptr) {
                    let fact = fact_only(t);
                    if fact != *t {
                        advice = Some(std::mem::replace(t, fact));
                    }
                }
            }
            // Claude Code, VS Code and Gemini CLI show `systemMessage` to
            // the user; Cursor's `user_message` is the user's already.
            if let (Some(full), Some(o)) = (advice, v.as_object_mut())
                && (o.contains_key("hookSpecificOutput") || o.contains_key("decision"))
            {
                o.insert("systemMessage".into(), full.into());
            }
            Answer::Json(v)
        }
        Answer::Nothing => Answer::Nothing,
    }
}

/// Largest answer the hook gives, in characters. Claude Code caps a
/// hook's output at 10,000 characters and replaces a longer one with a
/// preview, so a rewrite (`updatedInput`) in it would be lost and the
/// model's original command would run unconfined; the other clients'
/// limits are not documented, so the same bound applies to all.
pub const MAX_ANSWER: usize = 9_000;

/// `answer`, or a block when it would be longer than [`MAX_ANSWER`] (a
/// long or quote-heavy command, a large `description`): a block is the
/// only answer every client honours whatever its size limits.
fn bounded(answer: Answer) -> Answer {
    let long = match &answer {
        Answer::Json(v) => {
            serde_json::to_string(v).map_or(true, |l| l.chars().count() > MAX_ANSWER)
        }
        Answer::Block(m) => m.chars().count() > MAX_ANSWER,
        Answer::Nothing => false,
    };
    if !long {
        return answer;
    }
    Answer::Block(format!(
        "skarn hook: this command is too long to pass through the hook confined (the answer \
         would exceed {MAX_ANSWER} characters, past what the agent reads), so it is blocked. \
         Write the script to a file in the workspace and run that file instead."
    ))
}

/// The user's configuration file, unless `--no-config`.
fn config_path(args: &Args) -> Option<PathBuf> {
    (!args.no_config)
        .then(|| std::env::var_os("HOME").map(PathBuf::from))
        .flatten()
        .filter(|h| h.is_absolute())
        .map(|h| h.join(".config/skarn/config.toml"))
}

/// The hook commands the user keeps unconfined (`[hook] trusted_hooks`
/// of `~/.config/skarn/config.toml`; none when it cannot be read).
pub fn trusted_hooks() -> Vec<String> {
    let f = std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|h| h.is_absolute())
        .map(|h| h.join(".config/skarn/config.toml"));
    Settings::load(f.as_deref(), None, &[])
        .map(|s| s.trusted_hooks)
        .unwrap_or_default()
}

/// Drop the leases of a file tool's call that has written (Claude Code's
/// PostToolUse input `input`), as the hook does for that event.
pub fn release_written(input: &serde_json::Value) {
    #[cfg(target_os = "linux")]
    if let Some(h) = std::env::var_os("HOME").map(PathBuf::from)
        && h.is_absolute()
        && matches!(
            input
                .get("hook_event_name")
                .and_then(serde_json::Value::as_str),
            Some("PostToolUse" | "PostToolUseFailure")
        )
        && let Some(cwd) = input
            .get("cwd")
            .and_then(serde_json::Value::as_str)
            .filter(|c| c.starts_with('/'))
    {
        let tool_input = input.get("tool_input").unwrap_or(&serde_json::Value::Null);
        file_lease::release(
            tool_input,
            std::path::Path::new(cwd),
            &h,
            input.get("tool_use_id"),
        );
    }
    #[cfg(not(target_os = "linux"))]
    let _ = input;
}

fn answer(args: &Args) -> anyhow::Result<Answer> {
    let config = config_path(args);
    let mut settings = Settings::load(config.as_deref(), args.decision, &args.unsandboxed)?;
    if args.no_file_guard {
        settings.guard_files = false;
    }
    if args.no_file_boundary {
        settings.file_boundary = false;
    }
    let mut text = String::new();
    std::io::stdin()
        .take(MAX_INPUT)
        .read_to_string(&mut text)
        .map_err(|e| anyhow::anyhow!("cannot read the hook input: {e}"))?;
    let input: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("the hook input is not JSON: {e}"))?;
    if !input.is_object() {
        anyhow::bail!("the hook input is not a JSON object");
    }
    // A HOME that resolves into the workspace (atk24u F3).
    if let Some(h) = std::env::var_os("HOME").map(PathBuf::from) {
        let spaces: Vec<PathBuf> = [
            args.workspace.clone(),
            input.get("cwd").and_then(|c| c.as_str()).map(PathBuf::from),
            std::env::current_dir().ok(),
        ]
        .into_iter()
        .flatten()
        .collect();
        if let Some(why) = home_place::refusal(&h, &spaces) {
            return Ok(Answer::Block(why));
        }
    }
    let exe = std::env::current_exe()
        .map_err(|e| anyhow::anyhow!("cannot find the skarn binary: {e}"))?;
    let ctx = agents::Ctx {
        settings,
        exe: exe.to_string_lossy().into_owned(),
        workspace: args.workspace.clone(),
    };
    agents::answer(args.agent, &input, &ctx)
}
