//! The optional `run` tool (`[gateway] shell = true`): a shell command run
//! under `skarn run` with the workspace's policy, its output compressed
//! (every cut recoverable with `skarn recall`), so any MCP client gets a
//! confined, token-lean shell without hooks.
//!
//! The workspace (the one directory a command may write) is the user's,
//! fixed when the gateway starts: `[gateway] workspace` of a trusted
//! configuration, else the configuration file's directory. A call's `cwd`
//! only picks where the command starts inside it; a `cwd` outside (after
//! resolving links) is refused, so the caller cannot make
//! `~/.config/systemd/user` or `~/.bashrc.d` the writable workspace.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{CallToolResult, Tool};
use serde_json::{Map, Value, json};
use tokio::io::AsyncReadExt;

use crate::server::text_result;

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

/// The `run` tool's workspace for `cfg`, links resolved: `[gateway]
/// workspace`, else the configuration's directory, else the gateway's
/// working directory.
pub fn workspace(cfg: &crate::Config) -> Result<PathBuf, String> {
    let ws = match (&cfg.gateway.workspace, &cfg.path) {
        (Some(w), _) => w.clone(),
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
        .map_err(|e| format!("the run tool's workspace {} is unusable: {e}", ws.display()))
}

/// Where a call starts: `cwd` resolved (links followed), which must lie
/// inside `ws`; the workspace itself when `cwd` is absent.
fn start_dir(cwd: Option<&Value>, ws: &Path) -> Result<PathBuf, String> {
    let s = match cwd {
        None | Some(Value::Null) => return Ok(ws.to_path_buf()),
        Some(Value::String(s)) if Path::new(s).is_absolute() => s,
        Some(v) => return Err(format!("cwd must be an absolute path, not {v}")),
    };
    let real = std::fs::canonicalize(s)
        .ok()
        .filter(|p| p.is_dir())
        .ok_or_else(|| format!("cwd {s:?} is not an existing directory"))?;
    if !real.starts_with(ws) {
        return Err(format!(
            "cwd {s:?} is outside the workspace {} (the user's choice, fixed by the \
             configuration): commands run inside it only",
            ws.display()
        ));
    }
    Ok(real)
}

/// Run one command; the result text starts with `exit N`.
pub async fn call(args: &Option<Map<String, Value>>, cfg: &crate::Config) -> CallToolResult {
    let Some(cmd) = arg(args, "command").and_then(Value::as_str) else {
        return text_result("run needs a string argument `command`", None, true);
    };
    let ws = match workspace(cfg) {
        Ok(w) => w,
        Err(e) => return text_result(e, None, true),
    };
    let cwd = match start_dir(arg(args, "cwd"), &ws) {
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
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    c.current_dir(&cwd);
    let mut child = match c.spawn() {
        Ok(ch) => ch,
        Err(e) => return text_result(format!("cannot start skarn run: {e}"), None, true),
    };
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
    let code = match waited {
        Ok(Ok(st)) => st.code().unwrap_or(128),
        Ok(Err(e)) => return text_result(format!("skarn run failed: {e}"), None, true),
        Err(_) => return text_result("skarn run did not end; it was killed", None, true),
    };
    let mut text = format!("exit {code}\n");
    text.push_str(&String::from_utf8_lossy(&out));
    if !err.is_empty() {
        text.push_str(&String::from_utf8_lossy(&err));
    }
    text_result(text, Some(json!({"exit_code": code})), code != 0)
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
        assert_eq!(start_dir(None, &ws).unwrap(), ws);
        assert_eq!(
            start_dir(Some(&v(&sub)), &ws).unwrap(),
            std::fs::canonicalize(&sub).unwrap()
        );
        assert!(start_dir(Some(&v(&out)), &ws).is_err());
        assert!(start_dir(Some(&v(&ws.join("sub/../.."))), &ws).is_err());
        assert!(start_dir(Some(&Value::String("rel".into())), &ws).is_err());
        #[cfg(unix)]
        {
            // A link inside the workspace leading out is judged by its target.
            std::os::unix::fs::symlink(&out, ws.join("link")).unwrap();
            assert!(start_dir(Some(&v(&ws.join("link"))), &ws).is_err());
        }
    }
}
