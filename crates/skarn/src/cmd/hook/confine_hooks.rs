//! The client's other hooks and status line run confined (ADR 0255, attack
//! atk24k F1). Claude Code runs every hook command and its status line on
//! the host, in the project directory, with the project's paths on stdin:
//! a formatter (`npx prettier --write`, a global prettier reading
//! `prettier.config.js`), `npm run lint`, `make`, `cargo fmt` run code the
//! agent's confined commands may write. skarn cannot list every file such
//! a program loads, so no command is judged safe by what it looks like:
//! every hook command other than skarn's own is either wrapped, so that it
//! runs inside `skarn run` with the project as its workspace
//! ([`wrap`]: `'SKARN' __hook-confined 'COMMAND'`), or listed word for word
//! in the user's `[hook] trusted_hooks` (explicit trust keeps it
//! unconfined). `skarn init` wraps what it finds in the files it merges
//! into; the hook refuses every tool call while a file Claude Code reads
//! holds a command that is neither ([`unconfined`]).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::shell::{quote, unquote_words};

/// The hidden entry of the skarn binary that runs a wrapped hook.
pub const ENTRY: &str = "__hook-confined";

/// Most findings named in a refusal.
const MAX_SHOWN: usize = 3;

/// `cmd` as a wrapped hook run by `exe`. It fails closed like skarn's own
/// hook (atk24n F12): once `exe` cannot run (moved or removed by an
/// upgrade: the shell's 127, a crash, an empty file) the line exits 2,
/// which every client reads as "block", with a repair message, instead of
/// the 127 the clients take for a non-blocking error, which turned a
/// user's blocking guard off. The command's own status passes through
/// once skarn has run it ([`GUARD_SCRIPT`]'s acknowledgement). Like
/// skarn's own hook it is one `/bin/sh -c` call with a constant script
/// (read alike by POSIX shells and fish), the binary, the command and the
/// message its arguments.
pub fn wrap(exe: &str, cmd: &str) -> String {
    format!(
        "/bin/sh -c '{GUARD_SCRIPT}' {GUARD_NAME} {} {} {}",
        quote(exe),
        quote(cmd),
        quote(&guard_message(exe))
    )
}

/// `$0` of [`wrap`]'s script.
const GUARD_NAME: &str = "skarn-hook-confined";

/// The script of [`wrap`]: `$1 __hook-confined $2 [$4...]`; its status
/// when skarn acknowledged on descriptor 3 that it ran the command, else
/// `$3` on stderr and exit 2. No `'` and no `\\` in it.
const GUARD_SCRIPT: &str = "exec 4>&1; e=$1; c=$2; g=$3; shift 3; m=$( { SKARN_HOOK_ACK=3 \"$e\" \
     __hook-confined \"$c\" \"$@\" 3>&1 1>&4 4>&-; echo \" $?\"; } ); s=${m##* }; \
     [ \"${m%% *}\" = skarn-hook-ok ] && exit \"$s\"; printf \"%s (exit %s)\\n\" \"$g\" \"$s\" >&2; exit 2";

fn guard_message(exe: &str) -> String {
    format!(
        "skarn: cannot run {exe} (moved or removed, e.g. by an upgrade?), which runs this hook \
         confined, so the hook blocks. Repair: run `skarn init --client <agent>` again with the \
         skarn you now have (it wraps the hook anew), or remove the hook from the agent settings."
    )
}

/// The binary and the original command of a wrapped hook: [`wrap`]'s
/// form exactly, or the bare `'SKARN' __hook-confined 'COMMAND'` of
/// earlier versions (still Codex's `notify` argv, which is spawned
/// without a shell and cannot block anything).
pub fn unwrap(cmd: &str) -> Option<(String, String)> {
    if let Some(rest) = cmd.strip_prefix(&format!("/bin/sh -c '{GUARD_SCRIPT}' {GUARD_NAME} ")) {
        let w = unquote_words(rest)?;
        let [exe, orig, _] = <[String; 3]>::try_from(w).ok()?;
        return (wrap(&exe, &orig) == cmd).then_some((exe, orig));
    }
    let mut w = unquote_words(cmd)?;
    if w.len() != 3 || w[1] != ENTRY {
        return None;
    }
    let orig = w.pop()?;
    let _ = w.pop();
    Some((w.pop()?, orig))
}

/// Whether `cmd` is [`wrap`]'s fail-closed form (not the bare one).
pub fn is_guarded(cmd: &str) -> bool {
    cmd.starts_with(&format!("/bin/sh -c '{GUARD_SCRIPT}' {GUARD_NAME} ")) && unwrap(cmd).is_some()
}

/// What a hook command is, for the skarn binary `exe`.
#[derive(Debug, PartialEq, Eq)]
pub enum Kind {
    /// skarn's own hook (`skarn init` installed it).
    Skarn,
    /// Wrapped by this skarn: runs inside `skarn run`.
    Confined,
    /// Listed in `[hook] trusted_hooks`: runs unconfined by the user's word.
    Trusted,
    /// Runs on the host, unconfined.
    Unconfined,
}

/// Whether the program path `named` (as a hook or an MCP entry names it)
/// runs this skarn, the binary the kernel says runs now (`exe`): exactly
/// that path (what `init` writes), or its canonical form. `named` itself
/// is never resolved in skarn's process (atk24n F1, F3): a relative path
/// (resolved against another directory by the client), `/proc/self/exe`,
/// `/dev/fd/N` or a link the repository ships mean another program in
/// the client's shell, and a link the agent may rewrite can change what
/// it means after the judgement.
pub fn is_this_skarn(named: &str, exe: &str) -> bool {
    if exe.is_empty() || !Path::new(named).is_absolute() {
        return false;
    }
    if named == exe {
        return true;
    }
    std::fs::canonicalize(exe).is_ok_and(|c| c.as_os_str() == std::ffi::OsStr::new(named))
}

/// What `cmd` (a hook for `agent`) is. A wrapped command names the binary
/// that runs it: only this skarn's counts (a cloned repository's
/// `'/tmp/x' __hook-confined ...` runs `/tmp/x`).
pub fn judge(cmd: &str, agent: &str, exe: &str, trusted: &[String]) -> Kind {
    // skarn's own only when it runs this skarn: the installed form with
    // another binary (`'sh' hook claude-code` runs the workspace's `hook`)
    // is any other command (atk24m F1).
    if super::installed_exe(cmd, agent).is_some_and(|b| is_this_skarn(&b, exe)) {
        return Kind::Skarn;
    }
    if let Some((bin, _)) = unwrap(cmd)
        && is_this_skarn(&bin, exe)
    {
        return Kind::Confined;
    }
    if trusted.iter().any(|t| t == cmd) {
        return Kind::Trusted;
    }
    Kind::Unconfined
}

/// The command line an entry with a string `command` runs: the shell
/// form as it is; the exec form (`command` + `args`, spawned without a
/// shell, attack atk24m F14) as one shell line of the quoted words, so it
/// is judged, listed and wrapped whole. `args` that are not all strings
/// are kept as their JSON text (judged unconfined).
pub fn full_command(m: &Map<String, Value>) -> Option<String> {
    let Value::String(cmd) = m.get("command")? else {
        return None;
    };
    Some(match m.get("args") {
        None | Some(Value::Null) => cmd.clone(),
        Some(Value::Array(a)) if a.iter().all(Value::is_string) => std::iter::once(cmd.as_str())
            .chain(a.iter().filter_map(Value::as_str))
            .map(quote)
            .collect::<Vec<_>>()
            .join(" "),
        Some(other) => format!("{} {other}", quote(cmd)),
    })
}

/// Settings keys whose `command` Claude Code runs (attack atk24m F4):
/// the status line, the agent panel's line per subagent, the `@` file
/// completion. Any other `{"type": "command", "command": ...}` object
/// outside `env` counts too (a key a later release adds).
const COMMAND_OBJECTS: &[&str] = &["statusLine", "subagentStatusLine", "fileSuggestion"];

/// Where in a Claude Code settings value an entry runs a command (JSON
/// pointers): each object with a string `command` under `hooks` (any
/// event, any nesting), the [`COMMAND_OBJECTS`], and any other object
/// typed `command`. An entry's other values are looked through too: the
/// client ignores keys it does not know, so a matcher group carrying a
/// decoy `command` of its own still runs the handlers in its `hooks`
/// (attack atk24o F1).
pub(super) fn command_sites(v: &Value) -> Vec<String> {
    fn walk(v: &Value, any: bool, at: &str, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                let site = matches!(m.get("command"), Some(Value::String(_)))
                    && (any || m.get("type").and_then(Value::as_str) == Some("command"));
                if site {
                    out.push(at.to_string());
                }
                for (k, x) in m {
                    if !(site && (k == "command" || k == "args")) {
                        walk(x, any, &format!("{at}/{}", pointer_key(k)), out);
                    }
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    walk(x, any, &format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Value::Object(m) = v {
        for (k, x) in m {
            let at = format!("/{}", pointer_key(k));
            match k.as_str() {
                "env" => {}
                "hooks" => walk(x, true, &at, &mut out),
                _ if COMMAND_OBJECTS.contains(&k.as_str()) => {
                    if let Value::Object(o) = x
                        && matches!(o.get("command"), Some(Value::String(_)))
                    {
                        out.push(at.clone());
                    }
                    walk(x, false, &at, &mut out);
                }
                _ => walk(x, false, &at, &mut out),
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// `k` as one step of a JSON pointer.
fn pointer_key(k: &str) -> String {
    k.replace('~', "~0").replace('/', "~1")
}

/// Wrap every unconfined command of the settings value `v`, re-wrap those
/// another skarn binary wrapped; the lines say what changed. An exec-form
/// entry becomes the shell form of its whole command line.
pub fn wrap_settings(v: &mut Value, agent: &str, exe: &str, trusted: &[String]) -> Vec<String> {
    let mut said = Vec::new();
    for at in command_sites(v) {
        let Some(Value::Object(m)) = v.pointer_mut(&at) else {
            continue;
        };
        let Some(full) = full_command(m) else {
            continue;
        };
        if let Some(new) = wrapped(&full, agent, exe, trusted) {
            said.push(skarn_sandbox::protect::terminal_filter::one_line(&full));
            m.insert("command".into(), Value::String(new));
            m.remove("args");
        }
    }
    said
}

/// The wrapped form of `cmd`, when it must change.
pub fn wrapped(cmd: &str, agent: &str, exe: &str, trusted: &[String]) -> Option<String> {
    match judge(cmd, agent, exe, trusted) {
        Kind::Skarn | Kind::Trusted => None,
        // This skarn's bare form of earlier versions: made fail-closed.
        Kind::Confined if !is_guarded(cmd) => unwrap(cmd).map(|(_, orig)| wrap(exe, &orig)),
        Kind::Confined => None,
        Kind::Unconfined => Some(match unwrap(cmd) {
            // Wrapped by a skarn since moved: the original, wrapped again.
            Some((_, orig)) => wrap(exe, &orig),
            None => wrap(exe, cmd),
        }),
    }
}

/// The unconfined commands of the settings text `text`; text that is not
/// JSON counts as one (what it runs is unknown).
pub fn unconfined_in_settings(
    text: &str,
    agent: &str,
    exe: &str,
    trusted: &[String],
) -> Vec<String> {
    let Ok(v) = serde_json::from_str::<Value>(text) else {
        return vec!["(not plain JSON: its hooks cannot be read)".into()];
    };
    // Handlers that run or send what skarn cannot wrap (atk24n F7, F8).
    let others = super::other_handlers::untrusted(&v, trusted);
    let sites = command_sites(&v);
    // The entries' other fields (atk24u F3, F5).
    let shapes = super::entry_shape::faults(&v, &sites, agent, exe, trusted);
    sites
        .into_iter()
        .filter_map(|at| {
            v.pointer(&at)
                .and_then(Value::as_object)
                .and_then(full_command)
        })
        .filter(|c| judge(c, agent, exe, trusted) == Kind::Unconfined)
        .chain(others)
        .chain(shapes)
        .collect()
}

/// Claude Code's configuration directory (`$CLAUDE_CONFIG_DIR`, else
/// `~/.claude`).
pub fn claude_dir(home: Option<&Path>) -> Option<PathBuf> {
    std::env::var_os("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home.map(|h| h.join(".claude")))
}

/// The files whose hooks Claude Code runs in the project `ws` that the user
/// (or `skarn init`) can change: the project's shared and local settings,
/// the user's, the session's `--settings`, and the skills', subagents' and
/// commands' frontmatter of the project (nested directories too), of the
/// `--add-dir` directories and of the user's.
pub fn files(ws: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut out = vec![
        ws.join(".claude/settings.json"),
        ws.join(".claude/settings.local.json"),
    ];
    let user = claude_dir(home);
    if let Some(u) = &user {
        out.push(u.join("settings.json"));
    }
    // The session's `--settings` files (its command line; ADR 0287).
    out.extend(super::claude_dirs::session_settings());
    // The project's skills, subagents and commands, the nested
    // directories' (atk24m F7) and the `--add-dir` ones' (F15).
    out.extend(super::claude_dirs::project_files(ws));
    for d in super::claude_dirs::added() {
        out.extend(super::frontmatter_hooks::files(&d));
    }
    if let Some(u) = &user {
        out.extend(super::frontmatter_hooks::files(u));
    }
    out
}

/// The hook commands in the files Claude Code reads for `ws` that run
/// unconfined, one line each (`file: command`).
pub fn unconfined(ws: &Path, home: Option<&Path>, exe: &str, trusted: &[String]) -> Vec<String> {
    unconfined_in(files(ws, home), exe, trusted)
}

/// [`unconfined`] for the hook files `files`.
pub fn unconfined_in(files: Vec<PathBuf>, exe: &str, trusted: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for f in files {
        let text = match skarn_sandbox::policy::config::read_text(&f) {
            Ok(Some(t)) => t,
            Ok(None) => continue,
            // The client may read what skarn cannot (one non-UTF-8 byte, a
            // large file): its hooks are unknown, so unconfined (atk24m F13).
            Err(_) if f.is_dir() => {
                out.push(skarn_sandbox::protect::terminal_filter::one_line(&format!(
                    "{}: (more skill, subagent or command files, or deeper ones, than skarn \
                     looks at: their hooks count as unconfined)",
                    f.display()
                )));
                continue;
            }
            Err(e) => {
                out.push(unreadable(&f, &e.to_string()));
                continue;
            }
        };
        let found = if f.extension().is_some_and(|e| e == "md") {
            super::frontmatter_hooks::unconfined(&text, "claude-code", exe, trusted)
        } else {
            unconfined_in_settings(&text, "claude-code", exe, trusted)
        };
        out.extend(found.into_iter().map(|c| {
            format!(
                "{}: {}",
                f.display(),
                skarn_sandbox::protect::terminal_filter::one_line(&c)
            )
        }));
    }
    out
}

/// The finding for a hook file skarn cannot read.
pub fn unreadable(f: &Path, why: &str) -> String {
    skarn_sandbox::protect::terminal_filter::one_line(&format!(
        "{}: (cannot be read as plain UTF-8 text of a bounded size: {why}; its hooks count as \
         unconfined until it is fixed)",
        f.display()
    ))
}

/// The refusal while `found` (from [`unconfined`]) is not empty.
pub fn refusal(found: &[String]) -> Option<String> {
    refusal_for(found, "claude-code")
}

/// [`refusal`] for the client `agent` (`init --client AGENT` repairs it).
pub fn refusal_for(found: &[String], agent: &str) -> Option<String> {
    if found.is_empty() {
        return None;
    }
    let shown: Vec<&str> = found.iter().take(MAX_SHOWN).map(String::as_str).collect();
    let more = found.len().saturating_sub(MAX_SHOWN);
    // `init` wraps commands; a handler of another type (`http`,
    // `mcp_tool`) it cannot confine, and the text says so (atk24n F11).
    let handlers = found
        .iter()
        .filter(|f| super::other_handlers::is_line(f))
        .count();
    let confines = if handlers == 0 {
        "confines them".to_string()
    } else {
        format!(
            "confines the command hooks, but not the {handlers} that are not commands (http, \
             mcp_tool, ...: they send the calls where no sandbox applies), which must be \
             removed from the agent's settings"
        )
    };
    Some(format!(
        "skarn: {} hook command(s) of this agent run outside skarn's sandbox, in the project, \
         where the code they load may be the agent's ({}{}); every tool call is refused until \
         they run inside skarn run{}: `skarn init --client {agent}`{} {confines}, or list \
         each exact command in [hook] trusted_hooks of ~/.config/skarn/config.toml to keep it \
         unconfined.",
        found.len(),
        shown.join("; "),
        if more > 0 {
            format!("; and {more} more")
        } else {
            String::new()
        },
        // What the user does is advice to widen: the model gets the fact
        // only (atk24m F18, ADR 0240).
        skarn_sandbox::report::advice::USER_MAY_CONFINE,
        if agent == "claude-code" {
            " (with --user for the user's settings)"
        } else {
            ""
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_round_trips_and_judges_by_the_binary() {
        let cmd = "jq -r '.tool_input.file_path' | xargs npx prettier --write";
        let w = wrap("/opt/sk arn", cmd);
        assert_eq!(
            unwrap(&w),
            Some(("/opt/sk arn".to_string(), cmd.to_string()))
        );
        assert_eq!(judge(&w, "claude-code", "/opt/sk arn", &[]), Kind::Confined);
        assert_eq!(judge(&w, "claude-code", "/tmp/x", &[]), Kind::Unconfined);
        assert_eq!(
            judge(cmd, "claude-code", "/x", &[cmd.into()]),
            Kind::Trusted
        );
        assert_eq!(judge(cmd, "claude-code", "/x", &[]), Kind::Unconfined);
        let mut v: Value = serde_json::json!({
            "hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [
                {"type": "command", "command": cmd},
                {"type": "command", "command": wrap("/old/skarn", "make fmt")}]}]},
            "statusLine": {"type": "command", "command": "npx ccstatusline"},
            "env": {"command": "not a hook"}});
        let said = wrap_settings(&mut v, "claude-code", "/new/skarn", &[]);
        assert_eq!(said.len(), 3, "{said:?}");
        assert_eq!(
            v.pointer("/hooks/PostToolUse/0/hooks/1/command"),
            Some(&Value::String(wrap("/new/skarn", "make fmt")))
        );
        assert_eq!(
            v.pointer("/statusLine/command"),
            Some(&Value::String(wrap("/new/skarn", "npx ccstatusline")))
        );
        assert_eq!(v.pointer("/env/command"), Some(&Value::from("not a hook")));
        let text = v.to_string();
        assert!(unconfined_in_settings(&text, "claude-code", "/new/skarn", &[]).is_empty());
        assert_eq!(
            unconfined_in_settings(&text, "claude-code", "/other", &[]).len(),
            3
        );
    }
}
