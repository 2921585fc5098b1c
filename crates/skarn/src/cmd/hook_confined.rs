//! `skarn __hook-confined COMMAND`: how a wrapped hook of the agent runs
//! (ADR 0255). The client starts it on the host with the hook's input on
//! stdin; it runs `/bin/sh -c COMMAND` under `skarn run` with the project
//! as the workspace (`$CLAUDE_PROJECT_DIR`, else the input's `cwd`, else
//! the current directory), passes the input on, and exits with the
//! command's status, so a formatter still formats the file the agent
//! wrote while the code it loads cannot write outside the workspace.
//! After a file tool's write it first drops that call's leases (ADR 0244),
//! which would otherwise hold the file read-only from this very run.
//!
//! The command's stdout, the answer the client reads, passes through
//! [`crate::cmd::hook_answer::narrow`]: a confined hook may refuse or ask,
//! never allow or rewrite the agent's call (ADR 0282). When skarn itself
//! refuses (the workspace is the home directory, ...), the status is 1,
//! a non-blocking error, not skarn's usual 2 (attack atk24m F10). Once
//! the command has run, it acknowledges on the descriptor
//! `$SKARN_HOOK_ACK` names, as skarn's own hook does: the wrapped form's
//! script blocks (exit 2) without it, so a hook whose skarn moved or is
//! gone blocks instead of failing open (atk24n F12).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{ExitCode, Stdio};

/// The most hook input passed on, and the most answer read.
const MAX_INPUT: u64 = 16 << 20;

/// Status when the wrapped command cannot be started: not 2, which would
/// block the agent's call for a hook that is not skarn's.
const EXIT_FAILED: u8 = 1;

pub fn main() -> ExitCode {
    let args: Vec<_> = std::env::args_os().skip(2).collect();
    // A command, and the arguments the client adds (Codex's `notify`
    // appends its event as JSON, ADR 0272): they reach the command as
    // `$1...`, and then nothing is read from stdin.
    let Some((cmd, extra)) = args.split_first() else {
        eprintln!(
            "skarn: {} takes one command",
            crate::cmd::hook::confine_hooks::ENTRY
        );
        return ExitCode::from(EXIT_FAILED);
    };
    let mut input = Vec::new();
    if extra.is_empty()
        && let Err(e) = std::io::stdin().take(MAX_INPUT).read_to_end(&mut input)
    {
        eprintln!("skarn: cannot read the hook input: {e}");
        return ExitCode::from(EXIT_FAILED);
    }
    let json: Option<serde_json::Value> = match extra.last() {
        Some(a) => serde_json::from_str(&a.to_string_lossy()).ok(),
        None => serde_json::from_slice(&input).ok(),
    };
    if let Some(v) = &json {
        crate::cmd::hook::release_written(v);
    }
    let ws = ["CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .chain(
            json.as_ref()
                .and_then(|v| v.get("cwd"))
                .and_then(serde_json::Value::as_str)
                .map(PathBuf::from),
        )
        .chain(std::env::current_dir().ok())
        .find(|p| p.is_absolute());
    let Some(ws) = ws else {
        eprintln!("skarn: no project directory for the hook");
        return ExitCode::from(EXIT_FAILED);
    };
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("skarn: cannot find the skarn binary: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    let child = std::process::Command::new(exe)
        .arg("run")
        .arg("--own-failure-exit")
        .arg(EXIT_FAILED.to_string())
        .arg("--workspace")
        .arg(&ws)
        .args(["--", "/bin/sh", "-c"])
        .arg(cmd)
        .arg("sh")
        .args(extra)
        .env_remove("SKARN_HOOK_ACK")
        .stdin(if extra.is_empty() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            eprintln!("skarn: cannot start skarn run: {e}");
            return ExitCode::from(EXIT_FAILED);
        }
    };
    if let Some(mut stdin) = child.stdin.take() {
        // The command may not read it all: a closed pipe is not an error.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
    }
    let mut out = Vec::new();
    let read = child.stdout.take().map(|mut o| {
        let r = (&mut o).take(MAX_INPUT + 1).read_to_end(&mut out);
        // Drain the rest so the command is not stopped by a full pipe.
        let _ = std::io::copy(&mut o, &mut std::io::sink());
        r
    });
    let status = child.wait();
    if matches!(read, Some(Err(_))) || out.len() as u64 > MAX_INPUT {
        eprintln!("skarn: the hook's answer was not read whole: dropped");
        out.clear();
    }
    // A status line or file completion (its input names no hook event)
    // prints text the client shows, not a decision.
    let shown = json
        .as_ref()
        .is_some_and(|v| v.is_object() && v.get("hook_event_name").is_none());
    let (answer, dropped) = if shown {
        (out, Vec::new())
    } else {
        crate::cmd::hook_answer::narrow(&out)
    };
    if !dropped.is_empty() {
        eprintln!(
            "skarn: dropped from a confined hook's answer (it may refuse or ask, not allow or \
             change the agent's call): {}",
            dropped.join(", ")
        );
    }
    let _ = std::io::stdout().write_all(&answer);
    let _ = std::io::stdout().flush();
    match status {
        Ok(s) => {
            // The wrapped form's script passes the status on only with
            // this acknowledgement: without it skarn did not run (atk24n
            // F12), and the line blocks.
            if !crate::cmd::hook::acknowledge() {
                return ExitCode::from(crate::cmd::hook::EXIT_BLOCK);
            }
            ExitCode::from(
                s.code()
                    .and_then(|c| u8::try_from(c).ok())
                    .unwrap_or(EXIT_FAILED),
            )
        }
        Err(e) => {
            eprintln!("skarn: {e}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}
