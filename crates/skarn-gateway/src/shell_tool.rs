//! The optional `run` tool (`[gateway] shell = true`): a shell command run
//! under `skarn run` with the workspace's policy, its output compressed
//! (every cut recoverable with `skarn recall`), so any MCP client gets a
//! confined, token-lean shell without hooks.
//!
//! The workspace (the one directory a command may write) is the user's:
//! `[gateway] workspace` of a trusted configuration, else the client's
//! declared roots (the user's open projects), else the configuration
//! file's directory. A call's `cwd`
//! only picks where the command starts inside it; a `cwd` outside (after
//! resolving links) is refused, so the caller cannot make
//! `~/.config/systemd/user` or `~/.bashrc.d` the writable workspace.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{CallToolResult, Tool};
use serde_json::{Map, Value, json};
use tokio::io::AsyncReadExt;

use crate::results::text_result;

/// Largest output read back from one command (the compressed text).
const MAX_OUTPUT: u64 = 1 << 20;

/// Tool name.
pub const NAME: &str = "run";

/// The tool's definition.
pub fn tool() -> Tool {
    serde_json::from_value(json!({
        "name": NAME,
        "description": "Run a shell command (sh -c) confined by the skarn sandbox: it writes only \
            inside the workspace the user configured (cwd may only move inside it), reads only system \
            directories, toolchains and the workspace (never ~/.ssh, ~/.aws or other secrets), \
            has no network, and its home is private and discarded. Output comes back compressed; \
            a recall id in it recovers every cut line (`skarn recall ID`). The sandbox policy is \
            the user's: if a command needs more, report what failed.",
        "inputSchema": {"type":"object","properties":{
            "command":{"type":"string","description":"The shell command"},
            "cwd":{"type":"string","description":"Absolute working directory inside the workspace (default: the workspace)"},
            "timeout":{"type":"string","description":"Wall-clock limit, e.g. \"90s\", \"10m\" (default 10m)"}
        },"required":["command"]},
    }))
    .expect("static tool definition")
}

fn arg<'a>(args: &'a Option<Map<String, Value>>, k: &str) -> Option<&'a Value> {
    args.as_ref().and_then(|a| a.get(k))
}

/// The `run` tool's workspaces, links resolved: `[gateway] workspace` (of
/// a trusted file), else the client's declared roots (`roots`, local
/// directories: the user's open projects), else the configuration's
/// directory, else the gateway's working directory.
pub fn workspaces(cfg: &crate::Config, roots: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let ws = match (&cfg.gateway.workspace, &cfg.path) {
        (Some(w), _) => w.clone(),
        (None, _) if !roots.is_empty() => return Ok(roots.to_vec()),
        (None, Some(p)) => {
            let dir = p.parent().unwrap_or(Path::new("."));
            if dir.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                dir.to_path_buf()
            }
        }
        (None, None) => PathBuf::from("."),
    };
    std::fs::canonicalize(&ws)
        .map(|w| vec![w])
        .map_err(|e| format!("the run tool's workspace {} is unusable: {e}", ws.display()))
}

/// Most roots taken from a client.
const MAX_ROOTS: usize = 64;

/// The client's roots that are local directories (`file:` URIs), canonical;
/// none when it offers no roots or does not answer within 10 s. (A
/// 2026-07-28 client asked through rounds is not asked: its roots are not
/// used; roots are deprecated from 2026-07-28 on, SEP-2577, and kept for
/// the clients that still declare them.)
#[allow(deprecated)]
pub async fn client_roots(peer: &rmcp::Peer<rmcp::RoleServer>) -> Vec<PathBuf> {
    if peer
        .peer_info()
        .is_none_or(|i| i.capabilities.roots.is_none())
    {
        return Vec::new();
    }
    let Ok(Ok(r)) = tokio::time::timeout(Duration::from_secs(10), peer.list_roots()).await else {
        return Vec::new();
    };
    r.roots
        .iter()
        .take(MAX_ROOTS)
        .filter_map(|root| url::Url::parse(&root.uri).ok())
        .filter(|u| u.scheme() == "file")
        .filter_map(|u| u.to_file_path().ok())
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .filter(|p| p.is_dir())
        .collect()
}

/// Where a call starts, and the workspace it writes: `cwd` resolved (links
/// followed), which must lie inside one of `workspaces` (the deepest that
/// holds it); the first workspace itself when `cwd` is absent.
fn start_dir(cwd: Option<&Value>, workspaces: &[PathBuf]) -> Result<(PathBuf, PathBuf), String> {
    let first = workspaces
        .first()
        .ok_or_else(|| "the run tool has no workspace".to_string())?;
    let s = match cwd {
        None | Some(Value::Null) => return Ok((first.clone(), first.clone())),
        Some(Value::String(s)) if Path::new(s).is_absolute() => s,
        Some(v) => return Err(format!("cwd must be an absolute path, not {v}")),
    };
    let real = std::fs::canonicalize(s)
        .ok()
        .filter(|p| p.is_dir())
        .ok_or_else(|| format!("cwd {s:?} is not an existing directory"))?;
    match workspaces
        .iter()
        .filter(|w| real.starts_with(w))
        .max_by_key(|w| w.components().count())
    {
        Some(w) => Ok((w.clone(), real)),
        None => Err(format!(
            "cwd {s:?} is outside the workspace {} (the user's choice, fixed by the \
             configuration or the client's roots): commands run inside it only",
            workspaces
                .iter()
                .map(|w| w.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Run one command; the result text starts with `exit N`.
/// `roots`: the client's (see [`client_roots`]).
pub async fn call(
    args: &Option<Map<String, Value>>,
    cfg: &crate::Config,
    roots: &[PathBuf],
) -> CallToolResult {
    let Some(cmd) = arg(args, "command").and_then(Value::as_str) else {
        return text_result("run needs a string argument `command`", None, true);
    };
    let wss = match workspaces(cfg, roots) {
        Ok(w) => w,
        Err(e) => return text_result(e, None, true),
    };
    let (ws, cwd) = match start_dir(arg(args, "cwd"), &wss) {
        Ok(d) => d,
        Err(e) => return text_result(e, None, true),
    };
    let timeout = match arg(args, "timeout") {
        None | Some(Value::Null) => Duration::from_secs(600),
        Some(v) => {
            let s = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => String::new(),
            };
            match skarn_units::parse_duration(&s, skarn_units::DurationUnit::Secs) {
                Ok(d) if d >= Duration::from_secs(1) => d,
                _ => {
                    return text_result(
                        format!("timeout must be a duration such as \"90s\" or \"10m\", not {v}"),
                        None,
                        true,
                    );
                }
            }
        }
    };
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return text_result(format!("cannot find the skarn binary: {e}"), None, true),
    };
    let mut c = tokio::process::Command::new(exe);
    c.args(["run", "--compress", "--workspace"])
        .arg(&ws)
        .arg("--timeout")
        .arg(format!("{}s", timeout.as_secs().max(1)))
        .args(["--", "sh", "-c", cmd])
        // The failure line then names configuration keys, not flags the
        // model cannot pass (ADR 0182).
        .env("SKARN_CALLER", "gateway")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Unix: a call dropped mid-run (the session ended) stops `skarn run`
    // with SIGTERM, never SIGKILL: it then ends its command and still
    // sets aside what the command planted (ADR 0095's sweep needs the
    // run to end on its own).
    #[cfg(not(unix))]
    c.kill_on_drop(true);
    // Linux: the gateway ending in any way (its runtime may not drop this
    // call before the process exits) sends the run SIGTERM as well.
    #[cfg(target_os = "linux")]
    // SAFETY: the closure runs in the forked child before exec and only
    // calls prctl(2), which is async-signal-safe; it touches no memory
    // shared with the parent.
    unsafe {
        c.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    c.current_dir(&cwd);
    // Forked from the gateway's lasting spawner thread: the death signal
    // above follows the forking thread, which tokio may retire.
    let mut child = match crate::spawner::on_spawner(move || c.spawn()) {
        Ok(ch) => ch,
        Err(e) => return text_result(format!("cannot start skarn run: {e}"), None, true),
    };
    #[cfg(unix)]
    let mut term = TermOnDrop(child.id());
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let so = child.stdout.take();
    let se = child.stderr.take();
    let read = async {
        if let Some(s) = so {
            let _ = s.take(MAX_OUTPUT).read_to_end(&mut out).await;
        }
    };
    let read_err = async {
        if let Some(s) = se {
            let _ = s.take(MAX_OUTPUT).read_to_end(&mut err).await;
        }
    };
    // The sandbox enforces the timeout itself; this bound only guards the
    // gateway against a helper that never exits.
    let waited = tokio::time::timeout(timeout + Duration::from_secs(30), async {
        tokio::join!(read, read_err);
        child.wait().await
    })
    .await;
    #[cfg(unix)]
    if waited.is_ok() {
        // Reaped: its pid may be reused from now on.
        term.0 = None;
    }
    let code = match waited {
        Ok(Ok(st)) => st.code().unwrap_or(128),
        Ok(Err(e)) => return text_result(format!("skarn run failed: {e}"), None, true),
        Err(_) => {
            let _ = child.start_kill();
            return text_result("skarn run did not end; it was killed", None, true);
        }
    };
    let mut text = format!("exit {code}\n");
    text.push_str(&String::from_utf8_lossy(&out));
    if !err.is_empty() {
        // `skarn run` leaves its advice to widen out for this caller
        // (SKARN_CALLER=gateway); cut again here, whatever printed it: the
        // model gets the facts, the user decides (issue 24 item 5).
        text.push_str(&skarn_sandbox::report::advice::fact_only(
            &String::from_utf8_lossy(&err),
        ));
    }
    // The output in the structured content too: Claude Code gives the
    // model a successful result's structured content instead of its text
    // (atk24o F9).
    let structured = json!({"exit_code": code, "output": text});
    text_result(text, Some(structured), code != 0)
}

/// Sends SIGTERM to a `skarn run` not yet reaped when dropped.
#[cfg(unix)]
struct TermOnDrop(Option<u32>);

#[cfg(unix)]
impl Drop for TermOnDrop {
    fn drop(&mut self) {
        if let Some(pid) = self.0.and_then(|p| i32::try_from(p).ok()) {
            // SAFETY: kill(2) takes plain integers; `pid` is our own child,
            // not yet reaped (so not reused), and SIGTERM only asks it to
            // end.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwd_stays_inside_the_workspace() {
        let t = skarn_test_support::TempDir::new("shell_tool");
        let ws = t.dir("ws");
        let sub = t.dir("ws/sub");
        let out = t.dir("out");
        let ws = std::fs::canonicalize(ws).unwrap();
        let v = |p: &Path| Value::String(p.display().to_string());
        let one = [ws.clone()];
        assert_eq!(start_dir(None, &one).unwrap(), (ws.clone(), ws.clone()));
        let sub = std::fs::canonicalize(&sub).unwrap();
        assert_eq!(
            start_dir(Some(&v(&sub)), &one).unwrap(),
            (ws.clone(), sub.clone())
        );
        assert!(start_dir(Some(&v(&out)), &one).is_err());
        assert!(start_dir(Some(&v(&ws.join("sub/../.."))), &one).is_err());
        assert!(start_dir(Some(&Value::String("rel".into())), &one).is_err());
        // Several roots: the one holding cwd is the workspace.
        let other = std::fs::canonicalize(t.dir("other")).unwrap();
        let two = [ws.clone(), other.clone()];
        assert_eq!(start_dir(Some(&v(&other)), &two).unwrap().0, other);
        assert!(start_dir(Some(&v(&out)), &two).is_err());
        #[cfg(unix)]
        {
            // A link inside the workspace leading out is judged by its target.
            std::os::unix::fs::symlink(&out, ws.join("link")).unwrap();
            assert!(start_dir(Some(&v(&ws.join("link"))), &one).is_err());
        }
    }
}
